"""numpy's BLAS and LAPACK entry points that tests/py/linalg.py leaves out,
each reached once on small matrices (4 x 4, 5 x 3, batches of 2): the
general eigensolvers, the complex LAPACK drivers, the QR modes, the
batched gufunc loops, matrix-vector and vector products, and float32 and
complex64 arrays (numpy.linalg computes them in double; matmul does not).
Prints a digest of every result, so that runs with and without the preload
can be compared (tests/e2e/test_blas.c)."""
import sys

import numpy as np

rng = np.random.default_rng(11)
L = np.linalg


def mat(*shape, dtype=np.float64):
    m = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        m = m + 1j * rng.standard_normal(shape)
    return m.astype(dtype)


def hpd(n, dtype):
    m = mat(n, n, dtype=dtype)
    return m + m.conj().T + 10 * n * np.eye(n, dtype=dtype)  # no BLAS in the set-up


a, r, z = mat(4, 4), mat(5, 3), mat(4, 4, dtype=np.complex128)
results = [
    ("eig", L.eig(a)[0]),  # dgeev_ (query, then the call)
    ("eigvals_c64", L.eigvals(mat(4, 4, dtype=np.complex64))),  # zgeev_ (query, call)
    ("slogdet_3d_f32", L.slogdet(mat(2, 4, 4, dtype=np.float32))[1]),  # dgetrf_ x2
    ("det_c", L.det(z)),  # zgetrf_
    ("cholesky_c", L.cholesky(hpd(4, np.complex128))),  # zpotrf_
    ("lstsq_c", L.lstsq(mat(5, 3, dtype=np.complex128), mat(5, 2, dtype=np.complex128), rcond=None)[0]),  # zgelsd_ (query, call)
    ("svd_full", L.svd(r)[0]),  # dgesdd_ (query, call)
    ("qr_complete_c", L.qr(mat(5, 3, dtype=np.complex128), mode="complete")[0]),  # zgeqrf_, zungqr_ (each query, call)
    ("qr_r", L.qr(r, mode="r")),  # dgeqrf_ (query, call), no dorgqr_
    ("inv_3d", L.inv(mat(2, 4, 4))),  # dgesv_ x2
    ("tensorsolve", L.tensorsolve(mat(2, 3, 6), mat(2, 3))),  # dgesv_
    ("pinv", L.pinv(r)),  # dgesdd_ (query, call), cblas_dgemm
    ("norm_fro", L.norm(a)),  # cblas_ddot
    ("matrix_power_f32", L.matrix_power(mat(4, 4, dtype=np.float32), 3)),  # cblas_sgemm x2
    ("multi_dot", L.multi_dot([mat(3, 4), a, mat(4, 2)])),  # cblas_dgemm x2
    ("matmul_3d_c64", mat(2, 4, 4, dtype=np.complex64) @ mat(2, 4, 3, dtype=np.complex64)),  # cblas_cgemm x2
    ("matvec", a @ mat(4)),  # cblas_dgemv
    ("matvec_c", z @ mat(4, dtype=np.complex128)),  # cblas_zgemv
    ("vdot_c", np.vdot(z[0], z[1])),  # cblas_zdotc_sub
    ("dot_c", np.dot(z[0], z[1])),  # cblas_zdotu_sub
    ("einsum", np.einsum("ij,jk->ik", a, mat(4, 3), optimize=True)),  # cblas_dgemm
]
for name, val in results:
    print(name, repr(np.round(np.sum(np.abs(val)), 6)))
sys.stdout.flush()
