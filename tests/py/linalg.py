"""numpy's linear algebra on 300 x 300 matrices, as an unmodified script:
float64 matmul and numpy.linalg, complex matmul, solve, eigvalsh and svd.
Prints a digest of every result, so that runs with
and without the preload can be compared (tests/e2e/test_blas.c)."""
import sys

import numpy as np

rng = np.random.default_rng(7)
n = 300
b = rng.standard_normal((n, n))
spd = b @ b.T + n * np.eye(n)  # cblas_dsyrk
z = b + 1j * rng.standard_normal((n, n))
zz = z @ z  # cblas_zgemm
zz2 = z @ z.conj().T  # cblas_zgemm (numpy has no herk path)
zzt = z @ z.T  # cblas_zsyrk
bf = b.astype(np.float32)
fsq = bf @ bf.T  # cblas_ssyrk: float scalars passed by value
rhs = rng.standard_normal((n, 3))
x = np.linalg.solve(spd, rhs)  # dgesv_
inv = np.linalg.inv(spd)  # dgesv_ against the identity
chol = np.linalg.cholesky(spd)  # dpotrf_
det = np.linalg.det(b / 4)  # dgetrf_
w, v = np.linalg.eigh(spd)  # dsyevd_ (query, then the call)
s = np.linalg.svd(b, compute_uv=False)  # dgesdd_ (query, then the call)
q, r = np.linalg.qr(b)  # dgeqrf_, dorgqr_ (each query, then the call)
ls = np.linalg.lstsq(b, rhs, rcond=None)[0]  # dgelsd_ (query, then the call)
zx = np.linalg.solve(z, z[:, :2])  # zgesv_
zw = np.linalg.eigvalsh(zz2)  # zheevd_ (query, then the call)
zs = np.linalg.svd(z, compute_uv=False)  # zgesdd_ (query, then the call)
for name, val in [("zz", zz), ("zz2", zz2), ("zzt", zzt), ("fsq", fsq), ("x", x), ("inv", inv), ("chol", chol), ("det", det),
                  ("w", w), ("s", s), ("r", r), ("ls", ls), ("zx", zx), ("zw", zw), ("zs", zs)]:
    print(name, repr(np.round(np.sum(np.abs(val)), 6)))
sys.stdout.flush()
