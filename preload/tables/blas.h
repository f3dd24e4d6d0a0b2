/* CPU BLAS: one row per entry point, X(L, name, kind, flags, dtype,
 * signature class, class arguments) as every table (funcs.h), then the
 * classes: the prototype and which arguments are recorded. Levels 1, 2 and
 * 3, through CBLAS (numpy) and the Fortran interface (PyTorch, LAPACK
 * itself). Class arguments: T the element type (void for complex), then
 * the types of the scalars passed by value (a complex one by pointer).
 * GEMM, GEMV, DOT, AXPY and SCAL have kinds of their own; the rest record
 * TENSORS with a BLAS sub (format.h) whose shapes give the FLOPs.
 * What the library exports and is deliberately not interposed is
 * OPP_BLAS_LEFT_OUT, below; the unit suite blas_exports fails on any other
 * export missing from the rows. Wrappers: libs/blas.c. */
#define OPP_BLAS_FUNCS(X, L)                                                                       \
    X(L, cblas_sgemm, GEMM, 0, F32, CBLAS_GEMM, float)                                             \
    X(L, cblas_dgemm, GEMM, 0, F64, CBLAS_GEMM, double)                                            \
    X(L, cblas_cgemm, GEMM, 0, C64, CBLAS_GEMM_Z, void)                                            \
    X(L, cblas_zgemm, GEMM, 0, C128, CBLAS_GEMM_Z, void)                                           \
    X(L, cblas_cgemm3m, GEMM, 0, C64, CBLAS_GEMM_Z, void)                                          \
    X(L, cblas_zgemm3m, GEMM, 0, C128, CBLAS_GEMM_Z, void)                                         \
    X(L, cblas_ssymm, TENSORS, 0, F32, CBLAS_SYMM, float, float)                                   \
    X(L, cblas_dsymm, TENSORS, 0, F64, CBLAS_SYMM, double, double)                                 \
    X(L, cblas_csymm, TENSORS, 0, C64, CBLAS_SYMM, void, const void *)                             \
    X(L, cblas_zsymm, TENSORS, 0, C128, CBLAS_SYMM, void, const void *)                            \
    X(L, cblas_chemm, TENSORS, 0, C64, CBLAS_SYMM, void, const void *)                             \
    X(L, cblas_zhemm, TENSORS, 0, C128, CBLAS_SYMM, void, const void *)                            \
    X(L, cblas_ssyrk, TENSORS, 0, F32, CBLAS_SYRK, float, float, float)                            \
    X(L, cblas_dsyrk, TENSORS, 0, F64, CBLAS_SYRK, double, double, double)                         \
    X(L, cblas_csyrk, TENSORS, 0, C64, CBLAS_SYRK, void, const void *, const void *)               \
    X(L, cblas_zsyrk, TENSORS, 0, C128, CBLAS_SYRK, void, const void *, const void *)              \
    X(L, cblas_cherk, TENSORS, 0, C64, CBLAS_SYRK, void, float, float)                             \
    X(L, cblas_zherk, TENSORS, 0, C128, CBLAS_SYRK, void, double, double)                          \
    X(L, cblas_ssyr2k, TENSORS, 0, F32, CBLAS_SYR2K, float, float, float)                          \
    X(L, cblas_dsyr2k, TENSORS, 0, F64, CBLAS_SYR2K, double, double, double)                       \
    X(L, cblas_csyr2k, TENSORS, 0, C64, CBLAS_SYR2K, void, const void *, const void *)             \
    X(L, cblas_zsyr2k, TENSORS, 0, C128, CBLAS_SYR2K, void, const void *, const void *)            \
    X(L, cblas_cher2k, TENSORS, 0, C64, CBLAS_SYR2K, void, const void *, float)                    \
    X(L, cblas_zher2k, TENSORS, 0, C128, CBLAS_SYR2K, void, const void *, double)                  \
    X(L, cblas_strmm, TENSORS, 0, F32, CBLAS_TRMM, float, float)                                   \
    X(L, cblas_dtrmm, TENSORS, 0, F64, CBLAS_TRMM, double, double)                                 \
    X(L, cblas_ctrmm, TENSORS, 0, C64, CBLAS_TRMM, void, const void *)                             \
    X(L, cblas_ztrmm, TENSORS, 0, C128, CBLAS_TRMM, void, const void *)                            \
    X(L, cblas_strsm, TENSORS, 0, F32, CBLAS_TRMM, float, float)                                   \
    X(L, cblas_dtrsm, TENSORS, 0, F64, CBLAS_TRMM, double, double)                                 \
    X(L, cblas_ctrsm, TENSORS, 0, C64, CBLAS_TRMM, void, const void *)                             \
    X(L, cblas_ztrsm, TENSORS, 0, C128, CBLAS_TRMM, void, const void *)                            \
    X(L, cblas_sgemv, GEMV, 0, F32, CBLAS_GEMV, float)                                             \
    X(L, cblas_dgemv, GEMV, 0, F64, CBLAS_GEMV, double)                                            \
    X(L, cblas_cgemv, GEMV, 0, C64, CBLAS_GEMV_Z, void)                                            \
    X(L, cblas_zgemv, GEMV, 0, C128, CBLAS_GEMV_Z, void)                                           \
    X(L, cblas_sgbmv, TENSORS, 0, F32, CBLAS_GBMV, float, float)                                   \
    X(L, cblas_dgbmv, TENSORS, 0, F64, CBLAS_GBMV, double, double)                                 \
    X(L, cblas_cgbmv, TENSORS, 0, C64, CBLAS_GBMV, void, const void *)                             \
    X(L, cblas_zgbmv, TENSORS, 0, C128, CBLAS_GBMV, void, const void *)                            \
    X(L, cblas_ssymv, TENSORS, 0, F32, CBLAS_SYMV, float, float)                                   \
    X(L, cblas_dsymv, TENSORS, 0, F64, CBLAS_SYMV, double, double)                                 \
    X(L, cblas_chemv, TENSORS, 0, C64, CBLAS_SYMV, void, const void *)                             \
    X(L, cblas_zhemv, TENSORS, 0, C128, CBLAS_SYMV, void, const void *)                            \
    X(L, cblas_ssbmv, TENSORS, 0, F32, CBLAS_SBMV, float, float)                                   \
    X(L, cblas_dsbmv, TENSORS, 0, F64, CBLAS_SBMV, double, double)                                 \
    X(L, cblas_chbmv, TENSORS, 0, C64, CBLAS_SBMV, void, const void *)                             \
    X(L, cblas_zhbmv, TENSORS, 0, C128, CBLAS_SBMV, void, const void *)                            \
    X(L, cblas_sspmv, TENSORS, 0, F32, CBLAS_SPMV, float, float)                                   \
    X(L, cblas_dspmv, TENSORS, 0, F64, CBLAS_SPMV, double, double)                                 \
    X(L, cblas_chpmv, TENSORS, 0, C64, CBLAS_SPMV, void, const void *)                             \
    X(L, cblas_zhpmv, TENSORS, 0, C128, CBLAS_SPMV, void, const void *)                            \
    X(L, cblas_strmv, TENSORS, 0, F32, CBLAS_TRMV, float)                                          \
    X(L, cblas_dtrmv, TENSORS, 0, F64, CBLAS_TRMV, double)                                         \
    X(L, cblas_ctrmv, TENSORS, 0, C64, CBLAS_TRMV, void)                                           \
    X(L, cblas_ztrmv, TENSORS, 0, C128, CBLAS_TRMV, void)                                          \
    X(L, cblas_strsv, TENSORS, 0, F32, CBLAS_TRMV, float)                                          \
    X(L, cblas_dtrsv, TENSORS, 0, F64, CBLAS_TRMV, double)                                         \
    X(L, cblas_ctrsv, TENSORS, 0, C64, CBLAS_TRMV, void)                                           \
    X(L, cblas_ztrsv, TENSORS, 0, C128, CBLAS_TRMV, void)                                          \
    X(L, cblas_stbmv, TENSORS, 0, F32, CBLAS_TBMV, float)                                          \
    X(L, cblas_dtbmv, TENSORS, 0, F64, CBLAS_TBMV, double)                                         \
    X(L, cblas_ctbmv, TENSORS, 0, C64, CBLAS_TBMV, void)                                           \
    X(L, cblas_ztbmv, TENSORS, 0, C128, CBLAS_TBMV, void)                                          \
    X(L, cblas_stbsv, TENSORS, 0, F32, CBLAS_TBMV, float)                                          \
    X(L, cblas_dtbsv, TENSORS, 0, F64, CBLAS_TBMV, double)                                         \
    X(L, cblas_ctbsv, TENSORS, 0, C64, CBLAS_TBMV, void)                                           \
    X(L, cblas_ztbsv, TENSORS, 0, C128, CBLAS_TBMV, void)                                          \
    X(L, cblas_stpmv, TENSORS, 0, F32, CBLAS_TPMV, float)                                          \
    X(L, cblas_dtpmv, TENSORS, 0, F64, CBLAS_TPMV, double)                                         \
    X(L, cblas_ctpmv, TENSORS, 0, C64, CBLAS_TPMV, void)                                           \
    X(L, cblas_ztpmv, TENSORS, 0, C128, CBLAS_TPMV, void)                                          \
    X(L, cblas_stpsv, TENSORS, 0, F32, CBLAS_TPMV, float)                                          \
    X(L, cblas_dtpsv, TENSORS, 0, F64, CBLAS_TPMV, double)                                         \
    X(L, cblas_ctpsv, TENSORS, 0, C64, CBLAS_TPMV, void)                                           \
    X(L, cblas_ztpsv, TENSORS, 0, C128, CBLAS_TPMV, void)                                          \
    X(L, cblas_sger, TENSORS, 0, F32, CBLAS_GER, float, float)                                     \
    X(L, cblas_dger, TENSORS, 0, F64, CBLAS_GER, double, double)                                   \
    X(L, cblas_cgeru, TENSORS, 0, C64, CBLAS_GER, void, const void *)                              \
    X(L, cblas_cgerc, TENSORS, 0, C64, CBLAS_GER, void, const void *)                              \
    X(L, cblas_zgeru, TENSORS, 0, C128, CBLAS_GER, void, const void *)                             \
    X(L, cblas_zgerc, TENSORS, 0, C128, CBLAS_GER, void, const void *)                             \
    X(L, cblas_ssyr, TENSORS, 0, F32, CBLAS_SYR, float, float)                                     \
    X(L, cblas_dsyr, TENSORS, 0, F64, CBLAS_SYR, double, double)                                   \
    X(L, cblas_cher, TENSORS, 0, C64, CBLAS_SYR, void, float)                                      \
    X(L, cblas_zher, TENSORS, 0, C128, CBLAS_SYR, void, double)                                    \
    X(L, cblas_sspr, TENSORS, 0, F32, CBLAS_SPR, float, float)                                     \
    X(L, cblas_dspr, TENSORS, 0, F64, CBLAS_SPR, double, double)                                   \
    X(L, cblas_chpr, TENSORS, 0, C64, CBLAS_SPR, void, float)                                      \
    X(L, cblas_zhpr, TENSORS, 0, C128, CBLAS_SPR, void, double)                                    \
    X(L, cblas_ssyr2, TENSORS, 0, F32, CBLAS_SYR2, float, float)                                   \
    X(L, cblas_dsyr2, TENSORS, 0, F64, CBLAS_SYR2, double, double)                                 \
    X(L, cblas_cher2, TENSORS, 0, C64, CBLAS_SYR2, void, const void *)                             \
    X(L, cblas_zher2, TENSORS, 0, C128, CBLAS_SYR2, void, const void *)                            \
    X(L, cblas_sspr2, TENSORS, 0, F32, CBLAS_SPR2, float, float)                                   \
    X(L, cblas_dspr2, TENSORS, 0, F64, CBLAS_SPR2, double, double)                                 \
    X(L, cblas_chpr2, TENSORS, 0, C64, CBLAS_SPR2, void, const void *)                             \
    X(L, cblas_zhpr2, TENSORS, 0, C128, CBLAS_SPR2, void, const void *)                            \
    X(L, cblas_sdot, DOT, 0, F32, CBLAS_DOT, float, float)                                         \
    X(L, cblas_ddot, DOT, 0, F64, CBLAS_DOT, double, double)                                       \
    X(L, cblas_dsdot, DOT, 0, F32, CBLAS_DOT, double, float)                                       \
    X(L, cblas_sdsdot, DOT, 0, F32, CBLAS_SDSDOT)                                                  \
    X(L, cblas_cdotu, DOT, 0, C64, CBLAS_DOT, float _Complex, void)                                \
    X(L, cblas_cdotc, DOT, 0, C64, CBLAS_DOT, float _Complex, void)                                \
    X(L, cblas_zdotu, DOT, 0, C128, CBLAS_DOT, double _Complex, void)                              \
    X(L, cblas_zdotc, DOT, 0, C128, CBLAS_DOT, double _Complex, void)                              \
    X(L, cblas_cdotu_sub, DOT, 0, C64, CBLAS_DOT_Z, void)                                          \
    X(L, cblas_cdotc_sub, DOT, 0, C64, CBLAS_DOT_Z, void)                                          \
    X(L, cblas_zdotu_sub, DOT, 0, C128, CBLAS_DOT_Z, void)                                         \
    X(L, cblas_zdotc_sub, DOT, 0, C128, CBLAS_DOT_Z, void)                                         \
    X(L, cblas_saxpy, AXPY, 0, F32, CBLAS_AXPY, float)                                             \
    X(L, cblas_daxpy, AXPY, 0, F64, CBLAS_AXPY, double)                                            \
    X(L, cblas_caxpy, AXPY, 0, C64, CBLAS_AXPY_Z, void)                                            \
    X(L, cblas_zaxpy, AXPY, 0, C128, CBLAS_AXPY_Z, void)                                           \
    X(L, cblas_sscal, SCAL, 0, F32, CBLAS_SCAL, float)                                             \
    X(L, cblas_dscal, SCAL, 0, F64, CBLAS_SCAL, double)                                            \
    X(L, cblas_cscal, SCAL, 0, C64, CBLAS_SCAL_Z, void)                                            \
    X(L, cblas_zscal, SCAL, 0, C128, CBLAS_SCAL_Z, void)                                           \
    X(L, cblas_csscal, TENSORS, 0, C64, CBLAS_RSCAL, float)                                        \
    X(L, cblas_zdscal, TENSORS, 0, C128, CBLAS_RSCAL, double)                                      \
    X(L, cblas_snrm2, TENSORS, 0, F32, CBLAS_VEC1, float, float, NRM2)                             \
    X(L, cblas_dnrm2, TENSORS, 0, F64, CBLAS_VEC1, double, double, NRM2)                           \
    X(L, cblas_scnrm2, TENSORS, 0, C64, CBLAS_VEC1, float, void, NRM2)                             \
    X(L, cblas_dznrm2, TENSORS, 0, C128, CBLAS_VEC1, double, void, NRM2)                           \
    X(L, cblas_sasum, TENSORS, 0, F32, CBLAS_VEC1, float, float, ASUM)                             \
    X(L, cblas_dasum, TENSORS, 0, F64, CBLAS_VEC1, double, double, ASUM)                           \
    X(L, cblas_scasum, TENSORS, 0, C64, CBLAS_VEC1, float, void, ASUM)                             \
    X(L, cblas_dzasum, TENSORS, 0, C128, CBLAS_VEC1, double, void, ASUM)                           \
    X(L, cblas_isamax, TENSORS, 0, F32, CBLAS_VEC1, size_t, float, NONE)                           \
    X(L, cblas_idamax, TENSORS, 0, F64, CBLAS_VEC1, size_t, double, NONE)                          \
    X(L, cblas_icamax, TENSORS, 0, C64, CBLAS_VEC1, size_t, void, NONE)                            \
    X(L, cblas_izamax, TENSORS, 0, C128, CBLAS_VEC1, size_t, void, NONE)                           \
    X(L, cblas_isamin, TENSORS, 0, F32, CBLAS_VEC1, size_t, float, NONE)                           \
    X(L, cblas_idamin, TENSORS, 0, F64, CBLAS_VEC1, size_t, double, NONE)                          \
    X(L, cblas_icamin, TENSORS, 0, C64, CBLAS_VEC1, size_t, void, NONE)                            \
    X(L, cblas_izamin, TENSORS, 0, C128, CBLAS_VEC1, size_t, void, NONE)                           \
    X(L, cblas_scopy, TENSORS, 0, F32, CBLAS_VEC2, float)                                          \
    X(L, cblas_dcopy, TENSORS, 0, F64, CBLAS_VEC2, double)                                         \
    X(L, cblas_ccopy, TENSORS, 0, C64, CBLAS_VEC2, void)                                           \
    X(L, cblas_zcopy, TENSORS, 0, C128, CBLAS_VEC2, void)                                          \
    X(L, cblas_sswap, TENSORS, 0, F32, CBLAS_VEC2, float)                                          \
    X(L, cblas_dswap, TENSORS, 0, F64, CBLAS_VEC2, double)                                         \
    X(L, cblas_cswap, TENSORS, 0, C64, CBLAS_VEC2, void)                                           \
    X(L, cblas_zswap, TENSORS, 0, C128, CBLAS_VEC2, void)                                          \
    X(L, cblas_srot, TENSORS, 0, F32, CBLAS_ROT, float, float)                                     \
    X(L, cblas_drot, TENSORS, 0, F64, CBLAS_ROT, double, double)                                   \
    X(L, cblas_csrot, TENSORS, 0, C64, CBLAS_ROT, void, float)                                     \
    X(L, cblas_zdrot, TENSORS, 0, C128, CBLAS_ROT, void, double)                                   \
    X(L, cblas_srotm, TENSORS, 0, F32, CBLAS_ROTM, float)                                          \
    X(L, cblas_drotm, TENSORS, 0, F64, CBLAS_ROTM, double)                                         \
    X(L, sgemm_, GEMM, 0, F32, F77_GEMM, float)                                                    \
    X(L, dgemm_, GEMM, 0, F64, F77_GEMM, double)                                                   \
    X(L, cgemm_, GEMM, 0, C64, F77_GEMM, void)                                                     \
    X(L, zgemm_, GEMM, 0, C128, F77_GEMM, void)                                                    \
    X(L, cgemm3m_, GEMM, 0, C64, F77_GEMM, void)                                                   \
    X(L, zgemm3m_, GEMM, 0, C128, F77_GEMM, void)                                                  \
    X(L, ssymm_, TENSORS, 0, F32, F77_SYMM)                                                        \
    X(L, dsymm_, TENSORS, 0, F64, F77_SYMM)                                                        \
    X(L, csymm_, TENSORS, 0, C64, F77_SYMM)                                                        \
    X(L, zsymm_, TENSORS, 0, C128, F77_SYMM)                                                       \
    X(L, chemm_, TENSORS, 0, C64, F77_SYMM)                                                        \
    X(L, zhemm_, TENSORS, 0, C128, F77_SYMM)                                                       \
    X(L, ssyrk_, TENSORS, 0, F32, F77_SYRK)                                                        \
    X(L, dsyrk_, TENSORS, 0, F64, F77_SYRK)                                                        \
    X(L, csyrk_, TENSORS, 0, C64, F77_SYRK)                                                        \
    X(L, zsyrk_, TENSORS, 0, C128, F77_SYRK)                                                       \
    X(L, cherk_, TENSORS, 0, C64, F77_SYRK)                                                        \
    X(L, zherk_, TENSORS, 0, C128, F77_SYRK)                                                       \
    X(L, ssyr2k_, TENSORS, 0, F32, F77_SYR2K)                                                      \
    X(L, dsyr2k_, TENSORS, 0, F64, F77_SYR2K)                                                      \
    X(L, csyr2k_, TENSORS, 0, C64, F77_SYR2K)                                                      \
    X(L, zsyr2k_, TENSORS, 0, C128, F77_SYR2K)                                                     \
    X(L, cher2k_, TENSORS, 0, C64, F77_SYR2K)                                                      \
    X(L, zher2k_, TENSORS, 0, C128, F77_SYR2K)                                                     \
    X(L, strmm_, TENSORS, 0, F32, F77_TRMM)                                                        \
    X(L, dtrmm_, TENSORS, 0, F64, F77_TRMM)                                                        \
    X(L, ctrmm_, TENSORS, 0, C64, F77_TRMM)                                                        \
    X(L, ztrmm_, TENSORS, 0, C128, F77_TRMM)                                                       \
    X(L, strsm_, TENSORS, 0, F32, F77_TRMM)                                                        \
    X(L, dtrsm_, TENSORS, 0, F64, F77_TRMM)                                                        \
    X(L, ctrsm_, TENSORS, 0, C64, F77_TRMM)                                                        \
    X(L, ztrsm_, TENSORS, 0, C128, F77_TRMM)                                                       \
    X(L, sgemv_, GEMV, 0, F32, F77_GEMV, float)                                                    \
    X(L, dgemv_, GEMV, 0, F64, F77_GEMV, double)                                                   \
    X(L, cgemv_, GEMV, 0, C64, F77_GEMV, void)                                                     \
    X(L, zgemv_, GEMV, 0, C128, F77_GEMV, void)                                                    \
    X(L, sgbmv_, TENSORS, 0, F32, F77_GBMV)                                                        \
    X(L, dgbmv_, TENSORS, 0, F64, F77_GBMV)                                                        \
    X(L, cgbmv_, TENSORS, 0, C64, F77_GBMV)                                                        \
    X(L, zgbmv_, TENSORS, 0, C128, F77_GBMV)                                                       \
    X(L, ssymv_, TENSORS, 0, F32, F77_SYMV)                                                        \
    X(L, dsymv_, TENSORS, 0, F64, F77_SYMV)                                                        \
    X(L, chemv_, TENSORS, 0, C64, F77_SYMV)                                                        \
    X(L, zhemv_, TENSORS, 0, C128, F77_SYMV)                                                       \
    X(L, ssbmv_, TENSORS, 0, F32, F77_SBMV)                                                        \
    X(L, dsbmv_, TENSORS, 0, F64, F77_SBMV)                                                        \
    X(L, chbmv_, TENSORS, 0, C64, F77_SBMV)                                                        \
    X(L, zhbmv_, TENSORS, 0, C128, F77_SBMV)                                                       \
    X(L, sspmv_, TENSORS, 0, F32, F77_SPMV)                                                        \
    X(L, dspmv_, TENSORS, 0, F64, F77_SPMV)                                                        \
    X(L, chpmv_, TENSORS, 0, C64, F77_SPMV)                                                        \
    X(L, zhpmv_, TENSORS, 0, C128, F77_SPMV)                                                       \
    X(L, strmv_, TENSORS, 0, F32, F77_TRMV)                                                        \
    X(L, dtrmv_, TENSORS, 0, F64, F77_TRMV)                                                        \
    X(L, ctrmv_, TENSORS, 0, C64, F77_TRMV)                                                        \
    X(L, ztrmv_, TENSORS, 0, C128, F77_TRMV)                                                       \
    X(L, strsv_, TENSORS, 0, F32, F77_TRMV)                                                        \
    X(L, dtrsv_, TENSORS, 0, F64, F77_TRMV)                                                        \
    X(L, ctrsv_, TENSORS, 0, C64, F77_TRMV)                                                        \
    X(L, ztrsv_, TENSORS, 0, C128, F77_TRMV)                                                       \
    X(L, stbmv_, TENSORS, 0, F32, F77_TBMV)                                                        \
    X(L, dtbmv_, TENSORS, 0, F64, F77_TBMV)                                                        \
    X(L, ctbmv_, TENSORS, 0, C64, F77_TBMV)                                                        \
    X(L, ztbmv_, TENSORS, 0, C128, F77_TBMV)                                                       \
    X(L, stbsv_, TENSORS, 0, F32, F77_TBMV)                                                        \
    X(L, dtbsv_, TENSORS, 0, F64, F77_TBMV)                                                        \
    X(L, ctbsv_, TENSORS, 0, C64, F77_TBMV)                                                        \
    X(L, ztbsv_, TENSORS, 0, C128, F77_TBMV)                                                       \
    X(L, stpmv_, TENSORS, 0, F32, F77_TPMV)                                                        \
    X(L, dtpmv_, TENSORS, 0, F64, F77_TPMV)                                                        \
    X(L, ctpmv_, TENSORS, 0, C64, F77_TPMV)                                                        \
    X(L, ztpmv_, TENSORS, 0, C128, F77_TPMV)                                                       \
    X(L, stpsv_, TENSORS, 0, F32, F77_TPMV)                                                        \
    X(L, dtpsv_, TENSORS, 0, F64, F77_TPMV)                                                        \
    X(L, ctpsv_, TENSORS, 0, C64, F77_TPMV)                                                        \
    X(L, ztpsv_, TENSORS, 0, C128, F77_TPMV)                                                       \
    X(L, sger_, TENSORS, 0, F32, F77_GER)                                                          \
    X(L, dger_, TENSORS, 0, F64, F77_GER)                                                          \
    X(L, cgeru_, TENSORS, 0, C64, F77_GER)                                                         \
    X(L, cgerc_, TENSORS, 0, C64, F77_GER)                                                         \
    X(L, zgeru_, TENSORS, 0, C128, F77_GER)                                                        \
    X(L, zgerc_, TENSORS, 0, C128, F77_GER)                                                        \
    X(L, ssyr_, TENSORS, 0, F32, F77_SYR)                                                          \
    X(L, dsyr_, TENSORS, 0, F64, F77_SYR)                                                          \
    X(L, cher_, TENSORS, 0, C64, F77_SYR)                                                          \
    X(L, zher_, TENSORS, 0, C128, F77_SYR)                                                         \
    X(L, sspr_, TENSORS, 0, F32, F77_SPR)                                                          \
    X(L, dspr_, TENSORS, 0, F64, F77_SPR)                                                          \
    X(L, chpr_, TENSORS, 0, C64, F77_SPR)                                                          \
    X(L, zhpr_, TENSORS, 0, C128, F77_SPR)                                                         \
    X(L, ssyr2_, TENSORS, 0, F32, F77_SYR2)                                                        \
    X(L, dsyr2_, TENSORS, 0, F64, F77_SYR2)                                                        \
    X(L, cher2_, TENSORS, 0, C64, F77_SYR2)                                                        \
    X(L, zher2_, TENSORS, 0, C128, F77_SYR2)                                                       \
    X(L, sspr2_, TENSORS, 0, F32, F77_SPR2)                                                        \
    X(L, dspr2_, TENSORS, 0, F64, F77_SPR2)                                                        \
    X(L, chpr2_, TENSORS, 0, C64, F77_SPR2)                                                        \
    X(L, zhpr2_, TENSORS, 0, C128, F77_SPR2)                                                       \
    X(L, sdot_, DOT, 0, F32, F77_DOT, float)                                                       \
    X(L, ddot_, DOT, 0, F64, F77_DOT, double)                                                      \
    X(L, dsdot_, DOT, 0, F32, F77_DOT, double)                                                     \
    X(L, sdsdot_, DOT, 0, F32, F77_SDSDOT)                                                         \
    X(L, cdotu_, DOT, 0, C64, F77_DOT, float _Complex)                                             \
    X(L, cdotc_, DOT, 0, C64, F77_DOT, float _Complex)                                             \
    X(L, zdotu_, DOT, 0, C128, F77_DOT, double _Complex)                                           \
    X(L, zdotc_, DOT, 0, C128, F77_DOT, double _Complex)                                           \
    X(L, saxpy_, AXPY, 0, F32, F77_AXPY)                                                           \
    X(L, daxpy_, AXPY, 0, F64, F77_AXPY)                                                           \
    X(L, caxpy_, AXPY, 0, C64, F77_AXPY)                                                           \
    X(L, zaxpy_, AXPY, 0, C128, F77_AXPY)                                                          \
    X(L, sscal_, SCAL, 0, F32, F77_SCAL)                                                           \
    X(L, dscal_, SCAL, 0, F64, F77_SCAL)                                                           \
    X(L, cscal_, SCAL, 0, C64, F77_SCAL)                                                           \
    X(L, zscal_, SCAL, 0, C128, F77_SCAL)                                                          \
    X(L, csscal_, TENSORS, 0, C64, F77_RSCAL)                                                      \
    X(L, zdscal_, TENSORS, 0, C128, F77_RSCAL)                                                     \
    X(L, snrm2_, TENSORS, 0, F32, F77_VEC1, float, NRM2)                                           \
    X(L, dnrm2_, TENSORS, 0, F64, F77_VEC1, double, NRM2)                                          \
    X(L, scnrm2_, TENSORS, 0, C64, F77_VEC1, float, NRM2)                                          \
    X(L, dznrm2_, TENSORS, 0, C128, F77_VEC1, double, NRM2)                                        \
    X(L, sasum_, TENSORS, 0, F32, F77_VEC1, float, ASUM)                                           \
    X(L, dasum_, TENSORS, 0, F64, F77_VEC1, double, ASUM)                                          \
    X(L, scasum_, TENSORS, 0, C64, F77_VEC1, float, ASUM)                                          \
    X(L, dzasum_, TENSORS, 0, C128, F77_VEC1, double, ASUM)                                        \
    X(L, isamax_, TENSORS, 0, F32, F77_VEC1, int, NONE)                                            \
    X(L, idamax_, TENSORS, 0, F64, F77_VEC1, int, NONE)                                            \
    X(L, icamax_, TENSORS, 0, C64, F77_VEC1, int, NONE)                                            \
    X(L, izamax_, TENSORS, 0, C128, F77_VEC1, int, NONE)                                           \
    X(L, isamin_, TENSORS, 0, F32, F77_VEC1, int, NONE)                                            \
    X(L, idamin_, TENSORS, 0, F64, F77_VEC1, int, NONE)                                            \
    X(L, icamin_, TENSORS, 0, C64, F77_VEC1, int, NONE)                                            \
    X(L, izamin_, TENSORS, 0, C128, F77_VEC1, int, NONE)                                           \
    X(L, scopy_, TENSORS, 0, F32, F77_VEC2)                                                        \
    X(L, dcopy_, TENSORS, 0, F64, F77_VEC2)                                                        \
    X(L, ccopy_, TENSORS, 0, C64, F77_VEC2)                                                        \
    X(L, zcopy_, TENSORS, 0, C128, F77_VEC2)                                                       \
    X(L, sswap_, TENSORS, 0, F32, F77_VEC2)                                                        \
    X(L, dswap_, TENSORS, 0, F64, F77_VEC2)                                                        \
    X(L, cswap_, TENSORS, 0, C64, F77_VEC2)                                                        \
    X(L, zswap_, TENSORS, 0, C128, F77_VEC2)                                                       \
    X(L, srot_, TENSORS, 0, F32, F77_ROT)                                                          \
    X(L, drot_, TENSORS, 0, F64, F77_ROT)                                                          \
    X(L, csrot_, TENSORS, 0, C64, F77_ROT)                                                         \
    X(L, zdrot_, TENSORS, 0, C128, F77_ROT)                                                        \
    X(L, srotm_, TENSORS, 0, F32, F77_ROTM)                                                        \
    X(L, drotm_, TENSORS, 0, F64, F77_ROTM)

/* Exports deliberately not interposed, Z("names", "why"): OpenBLAS's own
 * extensions, which reference BLAS lacks and numpy, scipy and PyTorch do
 * not call; scalar set-up with no vector operand; error handling. */
#define OPP_BLAS_LEFT_OUT(Z)                                                                       \
    Z("saxpby_ daxpby_ caxpby_ zaxpby_ cblas_saxpby cblas_daxpby cblas_caxpby cblas_zaxpby "       \
      "caxpyc_ zaxpyc_",                                                                           \
      "extension: y = alpha x + beta y, y += alpha conj(x)")                                       \
    Z("sgeadd_ dgeadd_ cgeadd_ zgeadd_ cblas_sgeadd cblas_dgeadd cblas_cgeadd cblas_zgeadd "       \
      "simatcopy_ dimatcopy_ cimatcopy_ zimatcopy_ somatcopy_ domatcopy_ comatcopy_ zomatcopy_ "   \
      "cblas_simatcopy cblas_dimatcopy cblas_cimatcopy cblas_zimatcopy cblas_somatcopy "           \
      "cblas_domatcopy cblas_comatcopy cblas_zomatcopy",                                           \
      "extension: matrix add, copy and transpose")                                                 \
    Z("ssum_ dsum_ scsum_ dzsum_ cblas_ssum cblas_dsum cblas_scsum cblas_dzsum "                   \
      "samax_ damax_ scamax_ dzamax_ samin_ damin_ scamin_ dzamin_ smax_ dmax_ smin_ dmin_ "       \
      "ismax_ idmax_ ismin_ idmin_ cblas_ismax cblas_idmax cblas_icmax cblas_izmax cblas_ismin "   \
      "cblas_idmin cblas_icmin cblas_izmin",                                                       \
      "extension: sums, extreme values and their indices without absolute values")                 \
    Z("csbmv_ zsbmv_ cspr2_ zspr2_ csyr2_ zsyr2_",                                                 \
      "extension: complex symmetric (not hermitian) level 2")                                      \
    Z("srotg_ drotg_ crotg_ zrotg_ srotmg_ drotmg_ cblas_srotg cblas_drotg cblas_crotg "           \
      "cblas_zrotg cblas_srotmg cblas_drotmg scabs1_ dcabs1_",                                     \
      "scalar set-up, no vector operand")                                                          \
    Z("lsame_ xerbla_ __xerbla cblas_xerbla", "character comparison and error handling")

/* ---- signature classes: the prototype once, what is recorded ---- */

/* C = op(A) op(B): records M, N, K and both transposes. */
#define CBLAS_GEMM(name, T)                                                                        \
    OPP_WRAP_VOID(name,                                                                            \
                  (int o, int ta, int tb, int m, int n, int k, T alpha, const T *a, int lda,       \
                   const T *b, int ldb, T beta, T *c, int ldc),                                    \
                  (o, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc),                       \
                  (opp_dim(m), opp_dim(n), opp_dim(k),                                             \
                   opp_trans_code(ta) | opp_trans_code(tb) << 8))
#define CBLAS_GEMM_Z(name, T)                                                                      \
    OPP_WRAP_VOID(name,                                                                            \
                  (int o, int ta, int tb, int m, int n, int k, const void *alpha, const void *a,   \
                   int lda, const void *b, int ldb, const void *beta, void *c, int ldc),           \
                  (o, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc),                       \
                  (opp_dim(m), opp_dim(n), opp_dim(k),                                             \
                   opp_trans_code(ta) | opp_trans_code(tb) << 8))
/* C [m, n] = A B or B A with A symmetric (hermitian) [ka, ka]. */
#define CBLAS_SYMM(name, T, A)                                                                     \
    OPP_WRAP_VOID(name,                                                                            \
                  (int o, int side, int uplo, int m, int n, A alpha, const T *a, int lda,          \
                   const T *b, int ldb, A beta, T *c, int ldc),                                    \
                  (o, side, uplo, m, n, alpha, a, lda, b, ldb, beta, c, ldc),                      \
                  (OPP_SUB_SYMM, 0, 3, OPP_MAT(opp_side_dim(side, m, n), opp_side_dim(side, m, n)),\
                   OPP_MAT(opp_dim(m), opp_dim(n)), OPP_MAT(opp_dim(m), opp_dim(n))))
/* C [n, n] = op(A) op(A)^T, op(A) [n, k]; herk's scalars are real. */
#define CBLAS_SYRK(name, T, A, B)                                                                  \
    OPP_WRAP_VOID(name,                                                                            \
                  (int o, int uplo, int t, int n, int k, A alpha, const T *a, int lda, B beta,     \
                   T *c, int ldc),                                                                 \
                  (o, uplo, t, n, k, alpha, a, lda, beta, c, ldc),                                 \
                  (OPP_SUB_SYRK, 0, 2, OPP_MAT(opp_dim(n), opp_dim(k)),                            \
                   OPP_MAT(opp_dim(n), opp_dim(n))))
#define CBLAS_SYR2K(name, T, A, B)                                                                 \
    OPP_WRAP_VOID(name,                                                                            \
                  (int o, int uplo, int t, int n, int k, A alpha, const T *a, int lda,             \
                   const T *b, int ldb, B beta, T *c, int ldc),                                    \
                  (o, uplo, t, n, k, alpha, a, lda, b, ldb, beta, c, ldc),                         \
                  (OPP_SUB_SYR2K, 0, 3, OPP_MAT(opp_dim(n), opp_dim(k)),                           \
                   OPP_MAT(opp_dim(n), opp_dim(k)), OPP_MAT(opp_dim(n), opp_dim(n))))
/* B [m, n] = op(A) B or B op(A), or the solve, A triangular [ka, ka]. */
#define CBLAS_TRMM(name, T, A)                                                                     \
    OPP_WRAP_VOID(name,                                                                            \
                  (int o, int side, int uplo, int ta, int diag, int m, int n, A alpha,             \
                   const T *a, int lda, T *b, int ldb),                                            \
                  (o, side, uplo, ta, diag, m, n, alpha, a, lda, b, ldb),                          \
                  (OPP_SUB_TRMM, 0, 2, OPP_MAT(opp_side_dim(side, m, n), opp_side_dim(side, m, n)),\
                   OPP_MAT(opp_dim(m), opp_dim(n))))
#define CBLAS_GEMV(name, T)                                                                        \
    OPP_WRAP_VOID(name,                                                                            \
                  (int o, int ta, int m, int n, T alpha, const T *a, int lda, const T *x,          \
                   int incx, T beta, T *y, int incy),                                              \
                  (o, ta, m, n, alpha, a, lda, x, incx, beta, y, incy),                            \
                  (opp_dim(m), opp_dim(n), opp_trans_code(ta)))
#define CBLAS_GEMV_Z(name, T)                                                                      \
    OPP_WRAP_VOID(name,                                                                            \
                  (int o, int ta, int m, int n, const void *alpha, const void *a, int lda,         \
                   const void *x, int incx, const void *beta, void *y, int incy),                  \
                  (o, ta, m, n, alpha, a, lda, x, incx, beta, y, incy),                            \
                  (opp_dim(m), opp_dim(n), opp_trans_code(ta)))
/* Banded: A's band storage [kl + ku + 1, n], x and y by trans (no FLOPs). */
#define CBLAS_GBMV(name, T, A)                                                                     \
    OPP_WRAP_VOID(name,                                                                            \
                  (int o, int ta, int m, int n, int kl, int ku, A alpha, const T *a, int lda,      \
                   const T *x, int incx, A beta, T *y, int incy),                                  \
                  (o, ta, m, n, kl, ku, alpha, a, lda, x, incx, beta, y, incy),                    \
                  (OPP_SUB_NONE, 0, 3, OPP_MAT(opp_dim(kl) + opp_dim(ku) + 1, opp_dim(n)),         \
                   OPP_VEC(opp_trans_dim(ta, m, n)), OPP_VEC(opp_trans_dim(ta, n, m))))
/* y = A x, A symmetric (hermitian) [n, n]: full, banded (band storage
 * [k + 1, n], no FLOPs) or packed. */
#define CBLAS_SYMV(name, T, A)                                                                     \
    OPP_WRAP_VOID(name,                                                                            \
                  (int o, int uplo, int n, A alpha, const T *a, int lda, const T *x, int incx,     \
                   A beta, T *y, int incy),                                                        \
                  (o, uplo, n, alpha, a, lda, x, incx, beta, y, incy),                             \
                  (OPP_SUB_SYMV, 0, 3, OPP_MAT(opp_dim(n), opp_dim(n)), OPP_VEC(opp_dim(n)),       \
                   OPP_VEC(opp_dim(n))))
#define CBLAS_SBMV(name, T, A)                                                                     \
    OPP_WRAP_VOID(name,                                                                            \
                  (int o, int uplo, int n, int k, A alpha, const T *a, int lda, const T *x,        \
                   int incx, A beta, T *y, int incy),                                              \
                  (o, uplo, n, k, alpha, a, lda, x, incx, beta, y, incy),                          \
                  (OPP_SUB_NONE, 0, 3, OPP_MAT(opp_dim(k) + 1, opp_dim(n)), OPP_VEC(opp_dim(n)),   \
                   OPP_VEC(opp_dim(n))))
#define CBLAS_SPMV(name, T, A)                                                                     \
    OPP_WRAP_VOID(name,                                                                            \
                  (int o, int uplo, int n, A alpha, const T *ap, const T *x, int incx, A beta,     \
                   T *y, int incy),                                                                \
                  (o, uplo, n, alpha, ap, x, incx, beta, y, incy),                                 \
                  (OPP_SUB_SYMV, 0, 3, OPP_MAT(opp_dim(n), opp_dim(n)), OPP_VEC(opp_dim(n)),       \
                   OPP_VEC(opp_dim(n))))
/* x = op(A) x or the solve, A triangular [n, n]: full, banded, packed. */
#define CBLAS_TRMV(name, T)                                                                        \
    OPP_WRAP_VOID(name,                                                                            \
                  (int o, int uplo, int ta, int diag, int n, const T *a, int lda, T *x, int incx), \
                  (o, uplo, ta, diag, n, a, lda, x, incx),                                         \
                  (OPP_SUB_TRMV, 0, 2, OPP_MAT(opp_dim(n), opp_dim(n)), OPP_VEC(opp_dim(n))))
#define CBLAS_TBMV(name, T)                                                                        \
    OPP_WRAP_VOID(name,                                                                            \
                  (int o, int uplo, int ta, int diag, int n, int k, const T *a, int lda, T *x,     \
                   int incx),                                                                      \
                  (o, uplo, ta, diag, n, k, a, lda, x, incx),                                      \
                  (OPP_SUB_NONE, 0, 2, OPP_MAT(opp_dim(k) + 1, opp_dim(n)), OPP_VEC(opp_dim(n))))
#define CBLAS_TPMV(name, T)                                                                        \
    OPP_WRAP_VOID(name, (int o, int uplo, int ta, int diag, int n, const T *ap, T *x, int incx),   \
                  (o, uplo, ta, diag, n, ap, x, incx),                                             \
                  (OPP_SUB_TRMV, 0, 2, OPP_MAT(opp_dim(n), opp_dim(n)), OPP_VEC(opp_dim(n))))
/* A [m, n] += x y^T (y^H for gerc). */
#define CBLAS_GER(name, T, A)                                                                      \
    OPP_WRAP_VOID(name,                                                                            \
                  (int o, int m, int n, A alpha, const T *x, int incx, const T *y, int incy, T *a, \
                   int lda),                                                                       \
                  (o, m, n, alpha, x, incx, y, incy, a, lda),                                      \
                  (OPP_SUB_GER, 0, 3, OPP_VEC(opp_dim(m)), OPP_VEC(opp_dim(n)),                    \
                   OPP_MAT(opp_dim(m), opp_dim(n))))
/* A [n, n] += x x^T (syr, her: real alpha), full or packed. */
#define CBLAS_SYR(name, T, A)                                                                      \
    OPP_WRAP_VOID(name,                                                                            \
                  (int o, int uplo, int n, A alpha, const T *x, int incx, T *a, int lda),          \
                  (o, uplo, n, alpha, x, incx, a, lda),                                            \
                  (OPP_SUB_SYR, 0, 2, OPP_VEC(opp_dim(n)), OPP_MAT(opp_dim(n), opp_dim(n))))
#define CBLAS_SPR(name, T, A)                                                                      \
    OPP_WRAP_VOID(name, (int o, int uplo, int n, A alpha, const T *x, int incx, T *ap),            \
                  (o, uplo, n, alpha, x, incx, ap),                                                \
                  (OPP_SUB_SYR, 0, 2, OPP_VEC(opp_dim(n)), OPP_MAT(opp_dim(n), opp_dim(n))))
#define CBLAS_SYR2(name, T, A)                                                                     \
    OPP_WRAP_VOID(name,                                                                            \
                  (int o, int uplo, int n, A alpha, const T *x, int incx, const T *y, int incy,    \
                   T *a, int lda),                                                                 \
                  (o, uplo, n, alpha, x, incx, y, incy, a, lda),                                   \
                  (OPP_SUB_SYR2, 0, 3, OPP_VEC(opp_dim(n)), OPP_VEC(opp_dim(n)),                   \
                   OPP_MAT(opp_dim(n), opp_dim(n))))
#define CBLAS_SPR2(name, T, A)                                                                     \
    OPP_WRAP_VOID(name,                                                                            \
                  (int o, int uplo, int n, A alpha, const T *x, int incx, const T *y, int incy,    \
                   T *ap),                                                                         \
                  (o, uplo, n, alpha, x, incx, y, incy, ap),                                       \
                  (OPP_SUB_SYR2, 0, 3, OPP_VEC(opp_dim(n)), OPP_VEC(opp_dim(n)),                   \
                   OPP_MAT(opp_dim(n), opp_dim(n))))
/* R: the returned type (a complex dot returns its value, as C99 _Complex). */
#define CBLAS_DOT(name, R, T)                                                                      \
    OPP_WRAP_RET(R, name, (int n, const T *x, int incx, const T *y, int incy),                     \
                 (n, x, incx, y, incy), (opp_dim(n)))
#define CBLAS_SDSDOT(name)                                                                         \
    OPP_WRAP_RET(float, name,                                                                      \
                 (int n, float sb, const float *x, int incx, const float *y, int incy),            \
                 (n, sb, x, incx, y, incy), (opp_dim(n)))
#define CBLAS_DOT_Z(name, T)                                                                       \
    OPP_WRAP_VOID(name, (int n, const void *x, int incx, const void *y, int incy, void *res),      \
                  (n, x, incx, y, incy, res), (opp_dim(n)))
#define CBLAS_AXPY(name, T)                                                                        \
    OPP_WRAP_VOID(name, (int n, T alpha, const T *x, int incx, T *y, int incy),                    \
                  (n, alpha, x, incx, y, incy), (opp_dim(n)))
#define CBLAS_AXPY_Z(name, T)                                                                      \
    OPP_WRAP_VOID(name, (int n, const void *alpha, const void *x, int incx, void *y, int incy),    \
                  (n, alpha, x, incx, y, incy), (opp_dim(n)))
#define CBLAS_SCAL(name, T)                                                                        \
    OPP_WRAP_VOID(name, (int n, T alpha, T *x, int incx), (n, alpha, x, incx), (opp_dim(n)))
#define CBLAS_SCAL_Z(name, T)                                                                      \
    OPP_WRAP_VOID(name, (int n, const void *alpha, void *x, int incx), (n, alpha, x, incx),        \
                  (opp_dim(n)))
/* A complex x scaled by a real alpha. */
#define CBLAS_RSCAL(name, A)                                                                       \
    OPP_WRAP_VOID(name, (int n, A alpha, void *x, int incx), (n, alpha, x, incx),                  \
                  (OPP_SUB_RSCAL, 0, 1, OPP_VEC(opp_dim(n))))
/* A reduction of one vector (nrm2, asum, i?amax, i?amin) returning R. */
#define CBLAS_VEC1(name, R, T, sub)                                                                \
    OPP_WRAP_RET(R, name, (int n, const T *x, int incx), (n, x, incx),                             \
                 (OPP_SUB_##sub, 0, 1, OPP_VEC(opp_dim(n))))
/* copy, swap: no FLOPs. */
#define CBLAS_VEC2(name, T)                                                                        \
    OPP_WRAP_VOID(name, (int n, T *x, int incx, T *y, int incy), (n, x, incx, y, incy),            \
                  (OPP_SUB_NONE, 0, 2, OPP_VEC(opp_dim(n)), OPP_VEC(opp_dim(n))))
/* Plane rotations; c and s are real. */
#define CBLAS_ROT(name, T, C)                                                                      \
    OPP_WRAP_VOID(name, (int n, T *x, int incx, T *y, int incy, C c, C s),                         \
                  (n, x, incx, y, incy, c, s),                                                     \
                  (OPP_SUB_ROT, 0, 2, OPP_VEC(opp_dim(n)), OPP_VEC(opp_dim(n))))
#define CBLAS_ROTM(name, T)                                                                        \
    OPP_WRAP_VOID(name, (int n, T *x, int incx, T *y, int incy, const T *p),                       \
                  (n, x, incx, y, incy, p),                                                        \
                  (OPP_SUB_ROT, 0, 2, OPP_VEC(opp_dim(n)), OPP_VEC(opp_dim(n))))

/* Fortran BLAS: every argument by pointer (scalars as const void *: real
 * or complex alike), plus the hidden lengths of the character arguments
 * that gfortran callers pass; forwarded untouched. */
#define F77_GEMM(name, T)                                                                          \
    OPP_WRAP_VOID(name,                                                                            \
                  (const char *ta, const char *tb, const int *m, const int *n, const int *k,       \
                   const T *alpha, const T *a, const int *lda, const T *b, const int *ldb,         \
                   const T *beta, T *c, const int *ldc, size_t la, size_t lb),                     \
                  (ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, la, lb),                  \
                  (opp_pdim(m), opp_pdim(n), opp_pdim(k),                                          \
                   (ta ? opp_trans_code(*ta) : '?') | (tb ? opp_trans_code(*tb) : '?') << 8))
#define F77_SYMM(name)                                                                             \
    OPP_WRAP_VOID(name,                                                                            \
                  (const char *side, const char *uplo, const int *m, const int *n,                \
                   const void *alpha, const void *a, const int *lda, const void *b,                \
                   const int *ldb, const void *beta, void *c, const int *ldc, size_t ls,           \
                   size_t lu),                                                                     \
                  (side, uplo, m, n, alpha, a, lda, b, ldb, beta, c, ldc, ls, lu),                 \
                  (OPP_SUB_SYMM, 0, 3,                                                             \
                   OPP_MAT(opp_side_dim(opp_pchar(side), opp_pval(m), opp_pval(n)),                \
                           opp_side_dim(opp_pchar(side), opp_pval(m), opp_pval(n))),               \
                   OPP_MAT(opp_pdim(m), opp_pdim(n)), OPP_MAT(opp_pdim(m), opp_pdim(n))))
#define F77_SYRK(name)                                                                             \
    OPP_WRAP_VOID(name,                                                                            \
                  (const char *uplo, const char *t, const int *n, const int *k,                    \
                   const void *alpha, const void *a, const int *lda, const void *beta, void *c,    \
                   const int *ldc, size_t lu, size_t lt),                                          \
                  (uplo, t, n, k, alpha, a, lda, beta, c, ldc, lu, lt),                            \
                  (OPP_SUB_SYRK, 0, 2, OPP_MAT(opp_pdim(n), opp_pdim(k)),                          \
                   OPP_MAT(opp_pdim(n), opp_pdim(n))))
#define F77_SYR2K(name)                                                                            \
    OPP_WRAP_VOID(name,                                                                            \
                  (const char *uplo, const char *t, const int *n, const int *k,                    \
                   const void *alpha, const void *a, const int *lda, const void *b,                \
                   const int *ldb, const void *beta, void *c, const int *ldc, size_t lu,           \
                   size_t lt),                                                                     \
                  (uplo, t, n, k, alpha, a, lda, b, ldb, beta, c, ldc, lu, lt),                    \
                  (OPP_SUB_SYR2K, 0, 3, OPP_MAT(opp_pdim(n), opp_pdim(k)),                         \
                   OPP_MAT(opp_pdim(n), opp_pdim(k)), OPP_MAT(opp_pdim(n), opp_pdim(n))))
#define F77_TRMM(name)                                                                             \
    OPP_WRAP_VOID(name,                                                                            \
                  (const char *side, const char *uplo, const char *ta, const char *diag,           \
                   const int *m, const int *n, const void *alpha, const void *a, const int *lda,   \
                   void *b, const int *ldb, size_t ls, size_t lu, size_t lt, size_t ld),           \
                  (side, uplo, ta, diag, m, n, alpha, a, lda, b, ldb, ls, lu, lt, ld),             \
                  (OPP_SUB_TRMM, 0, 2,                                                             \
                   OPP_MAT(opp_side_dim(opp_pchar(side), opp_pval(m), opp_pval(n)),                \
                           opp_side_dim(opp_pchar(side), opp_pval(m), opp_pval(n))),               \
                   OPP_MAT(opp_pdim(m), opp_pdim(n))))
#define F77_GEMV(name, T)                                                                          \
    OPP_WRAP_VOID(name,                                                                            \
                  (const char *t, const int *m, const int *n, const T *alpha, const T *a,          \
                   const int *lda, const T *x, const int *incx, const T *beta, T *y,               \
                   const int *incy, size_t lt),                                                    \
                  (t, m, n, alpha, a, lda, x, incx, beta, y, incy, lt),                            \
                  (opp_pdim(m), opp_pdim(n), t ? opp_trans_code(*t) : '?'))
#define F77_GBMV(name)                                                                             \
    OPP_WRAP_VOID(name,                                                                            \
                  (const char *t, const int *m, const int *n, const int *kl, const int *ku,        \
                   const void *alpha, const void *a, const int *lda, const void *x,                \
                   const int *incx, const void *beta, void *y, const int *incy, size_t lt),        \
                  (t, m, n, kl, ku, alpha, a, lda, x, incx, beta, y, incy, lt),                    \
                  (OPP_SUB_NONE, 0, 3, OPP_MAT(opp_pdim(kl) + opp_pdim(ku) + 1, opp_pdim(n)),      \
                   OPP_VEC(opp_trans_dim(opp_pchar(t), opp_pval(m), opp_pval(n))),                 \
                   OPP_VEC(opp_trans_dim(opp_pchar(t), opp_pval(n), opp_pval(m)))))
#define F77_SYMV(name)                                                                             \
    OPP_WRAP_VOID(name,                                                                            \
                  (const char *uplo, const int *n, const void *alpha, const void *a,               \
                   const int *lda, const void *x, const int *incx, const void *beta, void *y,      \
                   const int *incy, size_t lu),                                                    \
                  (uplo, n, alpha, a, lda, x, incx, beta, y, incy, lu),                            \
                  (OPP_SUB_SYMV, 0, 3, OPP_MAT(opp_pdim(n), opp_pdim(n)), OPP_VEC(opp_pdim(n)),    \
                   OPP_VEC(opp_pdim(n))))
#define F77_SBMV(name)                                                                             \
    OPP_WRAP_VOID(name,                                                                            \
                  (const char *uplo, const int *n, const int *k, const void *alpha,                \
                   const void *a, const int *lda, const void *x, const int *incx,                  \
                   const void *beta, void *y, const int *incy, size_t lu),                         \
                  (uplo, n, k, alpha, a, lda, x, incx, beta, y, incy, lu),                         \
                  (OPP_SUB_NONE, 0, 3, OPP_MAT(opp_pdim(k) + 1, opp_pdim(n)),                      \
                   OPP_VEC(opp_pdim(n)), OPP_VEC(opp_pdim(n))))
#define F77_SPMV(name)                                                                             \
    OPP_WRAP_VOID(name,                                                                            \
                  (const char *uplo, const int *n, const void *alpha, const void *ap,              \
                   const void *x, const int *incx, const void *beta, void *y, const int *incy,     \
                   size_t lu),                                                                     \
                  (uplo, n, alpha, ap, x, incx, beta, y, incy, lu),                                \
                  (OPP_SUB_SYMV, 0, 3, OPP_MAT(opp_pdim(n), opp_pdim(n)), OPP_VEC(opp_pdim(n)),    \
                   OPP_VEC(opp_pdim(n))))
#define F77_TRMV(name)                                                                             \
    OPP_WRAP_VOID(name,                                                                            \
                  (const char *uplo, const char *t, const char *diag, const int *n,                \
                   const void *a, const int *lda, void *x, const int *incx, size_t lu, size_t lt,  \
                   size_t ld),                                                                     \
                  (uplo, t, diag, n, a, lda, x, incx, lu, lt, ld),                                 \
                  (OPP_SUB_TRMV, 0, 2, OPP_MAT(opp_pdim(n), opp_pdim(n)), OPP_VEC(opp_pdim(n))))
#define F77_TBMV(name)                                                                             \
    OPP_WRAP_VOID(name,                                                                            \
                  (const char *uplo, const char *t, const char *diag, const int *n, const int *k,  \
                   const void *a, const int *lda, void *x, const int *incx, size_t lu, size_t lt,  \
                   size_t ld),                                                                     \
                  (uplo, t, diag, n, k, a, lda, x, incx, lu, lt, ld),                              \
                  (OPP_SUB_NONE, 0, 2, OPP_MAT(opp_pdim(k) + 1, opp_pdim(n)),                      \
                   OPP_VEC(opp_pdim(n))))
#define F77_TPMV(name)                                                                             \
    OPP_WRAP_VOID(name,                                                                            \
                  (const char *uplo, const char *t, const char *diag, const int *n,                \
                   const void *ap, void *x, const int *incx, size_t lu, size_t lt, size_t ld),     \
                  (uplo, t, diag, n, ap, x, incx, lu, lt, ld),                                     \
                  (OPP_SUB_TRMV, 0, 2, OPP_MAT(opp_pdim(n), opp_pdim(n)), OPP_VEC(opp_pdim(n))))
#define F77_GER(name)                                                                              \
    OPP_WRAP_VOID(name,                                                                            \
                  (const int *m, const int *n, const void *alpha, const void *x, const int *incx,  \
                   const void *y, const int *incy, void *a, const int *lda),                       \
                  (m, n, alpha, x, incx, y, incy, a, lda),                                         \
                  (OPP_SUB_GER, 0, 3, OPP_VEC(opp_pdim(m)), OPP_VEC(opp_pdim(n)),                  \
                   OPP_MAT(opp_pdim(m), opp_pdim(n))))
#define F77_SYR(name)                                                                              \
    OPP_WRAP_VOID(name,                                                                            \
                  (const char *uplo, const int *n, const void *alpha, const void *x,               \
                   const int *incx, void *a, const int *lda, size_t lu),                           \
                  (uplo, n, alpha, x, incx, a, lda, lu),                                           \
                  (OPP_SUB_SYR, 0, 2, OPP_VEC(opp_pdim(n)), OPP_MAT(opp_pdim(n), opp_pdim(n))))
#define F77_SPR(name)                                                                              \
    OPP_WRAP_VOID(name,                                                                            \
                  (const char *uplo, const int *n, const void *alpha, const void *x,               \
                   const int *incx, void *ap, size_t lu),                                          \
                  (uplo, n, alpha, x, incx, ap, lu),                                               \
                  (OPP_SUB_SYR, 0, 2, OPP_VEC(opp_pdim(n)), OPP_MAT(opp_pdim(n), opp_pdim(n))))
#define F77_SYR2(name)                                                                             \
    OPP_WRAP_VOID(name,                                                                            \
                  (const char *uplo, const int *n, const void *alpha, const void *x,               \
                   const int *incx, const void *y, const int *incy, void *a, const int *lda,       \
                   size_t lu),                                                                     \
                  (uplo, n, alpha, x, incx, y, incy, a, lda, lu),                                  \
                  (OPP_SUB_SYR2, 0, 3, OPP_VEC(opp_pdim(n)), OPP_VEC(opp_pdim(n)),                 \
                   OPP_MAT(opp_pdim(n), opp_pdim(n))))
#define F77_SPR2(name)                                                                             \
    OPP_WRAP_VOID(name,                                                                            \
                  (const char *uplo, const int *n, const void *alpha, const void *x,               \
                   const int *incx, const void *y, const int *incy, void *ap, size_t lu),          \
                  (uplo, n, alpha, x, incx, y, incy, ap, lu),                                      \
                  (OPP_SUB_SYR2, 0, 3, OPP_VEC(opp_pdim(n)), OPP_VEC(opp_pdim(n)),                 \
                   OPP_MAT(opp_pdim(n), opp_pdim(n))))
/* Functions: R the returned type (gfortran returns a COMPLEX as C99's). */
#define F77_DOT(name, R)                                                                           \
    OPP_WRAP_RET(R, name,                                                                          \
                 (const int *n, const void *x, const int *incx, const void *y, const int *incy),   \
                 (n, x, incx, y, incy), (opp_pdim(n)))
#define F77_SDSDOT(name)                                                                           \
    OPP_WRAP_RET(float, name,                                                                      \
                 (const int *n, const float *sb, const void *x, const int *incx, const void *y,    \
                  const int *incy),                                                                \
                 (n, sb, x, incx, y, incy), (opp_pdim(n)))
#define F77_AXPY(name)                                                                             \
    OPP_WRAP_VOID(name,                                                                            \
                  (const int *n, const void *alpha, const void *x, const int *incx, void *y,       \
                   const int *incy),                                                               \
                  (n, alpha, x, incx, y, incy), (opp_pdim(n)))
#define F77_SCAL(name)                                                                             \
    OPP_WRAP_VOID(name, (const int *n, const void *alpha, void *x, const int *incx),               \
                  (n, alpha, x, incx), (opp_pdim(n)))
#define F77_RSCAL(name)                                                                            \
    OPP_WRAP_VOID(name, (const int *n, const void *alpha, void *x, const int *incx),               \
                  (n, alpha, x, incx), (OPP_SUB_RSCAL, 0, 1, OPP_VEC(opp_pdim(n))))
#define F77_VEC1(name, R, sub)                                                                     \
    OPP_WRAP_RET(R, name, (const int *n, const void *x, const int *incx), (n, x, incx),            \
                 (OPP_SUB_##sub, 0, 1, OPP_VEC(opp_pdim(n))))
#define F77_VEC2(name)                                                                             \
    OPP_WRAP_VOID(name, (const int *n, void *x, const int *incx, void *y, const int *incy),        \
                  (n, x, incx, y, incy),                                                           \
                  (OPP_SUB_NONE, 0, 2, OPP_VEC(opp_pdim(n)), OPP_VEC(opp_pdim(n))))
#define F77_ROT(name)                                                                              \
    OPP_WRAP_VOID(name,                                                                            \
                  (const int *n, void *x, const int *incx, void *y, const int *incy,               \
                   const void *c, const void *s),                                                  \
                  (n, x, incx, y, incy, c, s),                                                     \
                  (OPP_SUB_ROT, 0, 2, OPP_VEC(opp_pdim(n)), OPP_VEC(opp_pdim(n))))
#define F77_ROTM(name)                                                                             \
    OPP_WRAP_VOID(name,                                                                            \
                  (const int *n, void *x, const int *incx, void *y, const int *incy,               \
                   const void *p),                                                                 \
                  (n, x, incx, y, incy, p),                                                        \
                  (OPP_SUB_ROT, 0, 2, OPP_VEC(opp_pdim(n)), OPP_VEC(opp_pdim(n))))
