/* LAPACK: the drivers and computational routines numpy.linalg calls
 * (those its _umath_linalg imports) in s/d/c/z, rows and signature classes
 * as every table (funcs.h). Each records TENSORS: its sub (FLOPs by LAWN
 * 41 where the routine has a formula: gesv, getrf, potrf, geqrf,
 * orgqr/ungqr; none for the iterative eigen, SVD and least-squares
 * drivers) and its operands' shapes. A workspace query (lwork, or for
 * ?syevd/?heevd any of its work sizes, = -1) records sub
 * OPP_SUB_LWORK_QUERY instead, which the report names "<routine>
 * (workspace query)". Every argument by pointer, then the hidden lengths
 * of the character arguments. Wrappers: libs/lapack.c. */
#define OPP_LAPACK_FUNCS(X, L)                                                                     \
    X(L, sgesv_, TENSORS, 0, F32, LAPACK_GESV)                                                     \
    X(L, dgesv_, TENSORS, 0, F64, LAPACK_GESV)                                                     \
    X(L, cgesv_, TENSORS, 0, C64, LAPACK_GESV)                                                     \
    X(L, zgesv_, TENSORS, 0, C128, LAPACK_GESV)                                                    \
    X(L, sgetrf_, TENSORS, 0, F32, LAPACK_GETRF)                                                   \
    X(L, dgetrf_, TENSORS, 0, F64, LAPACK_GETRF)                                                   \
    X(L, cgetrf_, TENSORS, 0, C64, LAPACK_GETRF)                                                   \
    X(L, zgetrf_, TENSORS, 0, C128, LAPACK_GETRF)                                                  \
    X(L, spotrf_, TENSORS, 0, F32, LAPACK_POTRF)                                                   \
    X(L, dpotrf_, TENSORS, 0, F64, LAPACK_POTRF)                                                   \
    X(L, cpotrf_, TENSORS, 0, C64, LAPACK_POTRF)                                                   \
    X(L, zpotrf_, TENSORS, 0, C128, LAPACK_POTRF)                                                  \
    X(L, ssyevd_, TENSORS, 0, F32, LAPACK_SYEVD)                                                   \
    X(L, dsyevd_, TENSORS, 0, F64, LAPACK_SYEVD)                                                   \
    X(L, cheevd_, TENSORS, 0, C64, LAPACK_HEEVD)                                                   \
    X(L, zheevd_, TENSORS, 0, C128, LAPACK_HEEVD)                                                  \
    X(L, sgesdd_, TENSORS, 0, F32, LAPACK_GESDD_R)                                                 \
    X(L, dgesdd_, TENSORS, 0, F64, LAPACK_GESDD_R)                                                 \
    X(L, cgesdd_, TENSORS, 0, C64, LAPACK_GESDD_C)                                                 \
    X(L, zgesdd_, TENSORS, 0, C128, LAPACK_GESDD_C)                                                \
    X(L, sgeev_, TENSORS, 0, F32, LAPACK_GEEV_R)                                                   \
    X(L, dgeev_, TENSORS, 0, F64, LAPACK_GEEV_R)                                                   \
    X(L, cgeev_, TENSORS, 0, C64, LAPACK_GEEV_C)                                                   \
    X(L, zgeev_, TENSORS, 0, C128, LAPACK_GEEV_C)                                                  \
    X(L, sgelsd_, TENSORS, 0, F32, LAPACK_GELSD_R)                                                 \
    X(L, dgelsd_, TENSORS, 0, F64, LAPACK_GELSD_R)                                                 \
    X(L, cgelsd_, TENSORS, 0, C64, LAPACK_GELSD_C)                                                 \
    X(L, zgelsd_, TENSORS, 0, C128, LAPACK_GELSD_C)                                                \
    X(L, sgeqrf_, TENSORS, 0, F32, LAPACK_GEQRF)                                                   \
    X(L, dgeqrf_, TENSORS, 0, F64, LAPACK_GEQRF)                                                   \
    X(L, cgeqrf_, TENSORS, 0, C64, LAPACK_GEQRF)                                                   \
    X(L, zgeqrf_, TENSORS, 0, C128, LAPACK_GEQRF)                                                  \
    X(L, sorgqr_, TENSORS, 0, F32, LAPACK_ORGQR)                                                   \
    X(L, dorgqr_, TENSORS, 0, F64, LAPACK_ORGQR)                                                   \
    X(L, cungqr_, TENSORS, 0, C64, LAPACK_ORGQR)                                                   \
    X(L, zungqr_, TENSORS, 0, C128, LAPACK_ORGQR)

/* A X = B: A [n, n], B [n, nrhs]. */
#define LAPACK_GESV(name)                                                                          \
    OPP_WRAP_VOID(name,                                                                            \
                  (const int *n, const int *nrhs, void *a, const int *lda, int *ipiv, void *b,     \
                   const int *ldb, int *info),                                                     \
                  (n, nrhs, a, lda, ipiv, b, ldb, info),                                           \
                  (OPP_SUB_GESV, 0, 2, OPP_MAT(opp_pdim(n), opp_pdim(n)),                          \
                   OPP_MAT(opp_pdim(n), opp_pdim(nrhs))))
#define LAPACK_GETRF(name)                                                                         \
    OPP_WRAP_VOID(name,                                                                            \
                  (const int *m, const int *n, void *a, const int *lda, int *ipiv, int *info),     \
                  (m, n, a, lda, ipiv, info),                                                      \
                  (OPP_SUB_GETRF, 0, 1, OPP_MAT(opp_pdim(m), opp_pdim(n))))
#define LAPACK_POTRF(name)                                                                         \
    OPP_WRAP_VOID(name,                                                                            \
                  (const char *uplo, const int *n, void *a, const int *lda, int *info, size_t lu), \
                  (uplo, n, a, lda, info, lu),                                                     \
                  (OPP_SUB_POTRF, 0, 1, OPP_MAT(opp_pdim(n), opp_pdim(n))))
/* Eigenvalues (and vectors) of a symmetric (hermitian) A [n, n]. */
#define LAPACK_SYEVD(name)                                                                         \
    OPP_WRAP_VOID(name,                                                                            \
                  (const char *jobz, const char *uplo, const int *n, void *a, const int *lda,      \
                   void *w, void *work, const int *lwork, int *iwork, const int *liwork,           \
                   int *info, size_t lj, size_t lu),                                               \
                  (jobz, uplo, n, a, lda, w, work, lwork, iwork, liwork, info, lj, lu),            \
                  (opp_lwork_sub(opp_pval(lwork) == -1 || opp_pval(liwork) == -1, OPP_SUB_NONE),   \
                   0, 1, OPP_MAT(opp_pdim(n), opp_pdim(n))))
#define LAPACK_HEEVD(name)                                                                         \
    OPP_WRAP_VOID(name,                                                                            \
                  (const char *jobz, const char *uplo, const int *n, void *a, const int *lda,      \
                   void *w, void *work, const int *lwork, void *rwork, const int *lrwork,          \
                   int *iwork, const int *liwork, int *info, size_t lj, size_t lu),                \
                  (jobz, uplo, n, a, lda, w, work, lwork, rwork, lrwork, iwork, liwork, info, lj,  \
                   lu),                                                                            \
                  (opp_lwork_sub(opp_pval(lwork) == -1 || opp_pval(lrwork) == -1 ||                \
                                     opp_pval(liwork) == -1,                                       \
                                 OPP_SUB_NONE),                                                    \
                   0, 1, OPP_MAT(opp_pdim(n), opp_pdim(n))))
/* SVD of A [m, n] (divide and conquer); complex ones take rwork. */
#define LAPACK_GESDD_R(name)                                                                       \
    OPP_WRAP_VOID(name,                                                                            \
                  (const char *jobz, const int *m, const int *n, void *a, const int *lda, void *s, \
                   void *u, const int *ldu, void *vt, const int *ldvt, void *work,                 \
                   const int *lwork, int *iwork, int *info, size_t lj),                            \
                  (jobz, m, n, a, lda, s, u, ldu, vt, ldvt, work, lwork, iwork, info, lj),         \
                  (opp_lwork_sub(opp_pval(lwork) == -1, OPP_SUB_NONE), 0, 1,                       \
                   OPP_MAT(opp_pdim(m), opp_pdim(n))))
#define LAPACK_GESDD_C(name)                                                                       \
    OPP_WRAP_VOID(name,                                                                            \
                  (const char *jobz, const int *m, const int *n, void *a, const int *lda, void *s, \
                   void *u, const int *ldu, void *vt, const int *ldvt, void *work,                 \
                   const int *lwork, void *rwork, int *iwork, int *info, size_t lj),               \
                  (jobz, m, n, a, lda, s, u, ldu, vt, ldvt, work, lwork, rwork, iwork, info, lj),  \
                  (opp_lwork_sub(opp_pval(lwork) == -1, OPP_SUB_NONE), 0, 1,                       \
                   OPP_MAT(opp_pdim(m), opp_pdim(n))))
/* Eigenvalues (and vectors) of a general A [n, n]. */
#define LAPACK_GEEV_R(name)                                                                        \
    OPP_WRAP_VOID(name,                                                                            \
                  (const char *jvl, const char *jvr, const int *n, void *a, const int *lda,        \
                   void *wr, void *wi, void *vl, const int *ldvl, void *vr, const int *ldvr,       \
                   void *work, const int *lwork, int *info, size_t l1, size_t l2),                 \
                  (jvl, jvr, n, a, lda, wr, wi, vl, ldvl, vr, ldvr, work, lwork, info, l1, l2),    \
                  (opp_lwork_sub(opp_pval(lwork) == -1, OPP_SUB_NONE), 0, 1,                       \
                   OPP_MAT(opp_pdim(n), opp_pdim(n))))
#define LAPACK_GEEV_C(name)                                                                        \
    OPP_WRAP_VOID(name,                                                                            \
                  (const char *jvl, const char *jvr, const int *n, void *a, const int *lda,        \
                   void *w, void *vl, const int *ldvl, void *vr, const int *ldvr, void *work,      \
                   const int *lwork, void *rwork, int *info, size_t l1, size_t l2),                \
                  (jvl, jvr, n, a, lda, w, vl, ldvl, vr, ldvr, work, lwork, rwork, info, l1, l2),  \
                  (opp_lwork_sub(opp_pval(lwork) == -1, OPP_SUB_NONE), 0, 1,                       \
                   OPP_MAT(opp_pdim(n), opp_pdim(n))))
/* Least squares min |A X - B|: A [m, n], B [m, nrhs]. */
#define LAPACK_GELSD_R(name)                                                                       \
    OPP_WRAP_VOID(name,                                                                            \
                  (const int *m, const int *n, const int *nrhs, void *a, const int *lda, void *b,  \
                   const int *ldb, void *s, const void *rcond, int *rank, void *work,              \
                   const int *lwork, int *iwork, int *info),                                       \
                  (m, n, nrhs, a, lda, b, ldb, s, rcond, rank, work, lwork, iwork, info),          \
                  (opp_lwork_sub(opp_pval(lwork) == -1, OPP_SUB_NONE), 0, 2,                       \
                   OPP_MAT(opp_pdim(m), opp_pdim(n)), OPP_MAT(opp_pdim(m), opp_pdim(nrhs))))
#define LAPACK_GELSD_C(name)                                                                       \
    OPP_WRAP_VOID(name,                                                                            \
                  (const int *m, const int *n, const int *nrhs, void *a, const int *lda, void *b,  \
                   const int *ldb, void *s, const void *rcond, int *rank, void *work,              \
                   const int *lwork, void *rwork, int *iwork, int *info),                          \
                  (m, n, nrhs, a, lda, b, ldb, s, rcond, rank, work, lwork, rwork, iwork, info),   \
                  (opp_lwork_sub(opp_pval(lwork) == -1, OPP_SUB_NONE), 0, 2,                       \
                   OPP_MAT(opp_pdim(m), opp_pdim(n)), OPP_MAT(opp_pdim(m), opp_pdim(nrhs))))
/* QR of A [m, n]. */
#define LAPACK_GEQRF(name)                                                                         \
    OPP_WRAP_VOID(name,                                                                            \
                  (const int *m, const int *n, void *a, const int *lda, void *tau, void *work,     \
                   const int *lwork, int *info),                                                   \
                  (m, n, a, lda, tau, work, lwork, info),                                          \
                  (opp_lwork_sub(opp_pval(lwork) == -1, OPP_SUB_GEQRF), 0, 1,                      \
                   OPP_MAT(opp_pdim(m), opp_pdim(n))))
/* Q [m, n] from k elementary reflectors (tau [k]). */
#define LAPACK_ORGQR(name)                                                                         \
    OPP_WRAP_VOID(name,                                                                            \
                  (const int *m, const int *n, const int *k, void *a, const int *lda,              \
                   const void *tau, void *work, const int *lwork, int *info),                      \
                  (m, n, k, a, lda, tau, work, lwork, info),                                       \
                  (opp_lwork_sub(opp_pval(lwork) == -1, OPP_SUB_ORGQR), 0, 2,                      \
                   OPP_MAT(opp_pdim(m), opp_pdim(n)), OPP_VEC(opp_pdim(k))))
