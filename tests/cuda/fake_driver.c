/* A fake CUDA driver (soname libcuda.so.1) for tests/cuda/drv_calls.c: the
 * toolkit's stub answers every call with 34 and hands out no function
 * pointers, so it cannot show what cuGetProcAddress does to them. These
 * few entry points keep the driver's real signatures (cuda.h) and answer
 * with values computed from every argument, so a trampoline that touched an
 * argument, a stack argument, errno or the return value shows. */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

EXPORT int cuInit(unsigned flags) { return flags == 0 ? 0 : 1; /* 1: CUDA_ERROR_INVALID_VALUE */ }

/* Reports the errno it was called with as the "version", and leaves 77. */
EXPORT int cuDriverGetVersion(int *version)
{
    *version = errno;
    errno = 77;
    return 0;
}

EXPORT int cuMemAlloc_v2(unsigned long long *dptr, size_t bytes)
{
    if (bytes > (1u << 20))
        return 2; /* CUDA_ERROR_OUT_OF_MEMORY */
    *dptr = 0x10000 + bytes;
    return 0;
}

/* 11 arguments: the last five are on the stack. */
static int launch_sum(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                      unsigned bz, unsigned shmem, void *stream, void **params, void **extra)
{
    uint64_t s = (uintptr_t)f % 7 + gx * 3 + gy * 5 + gz * 7 + bx * 11 + by * 13 + bz * 17 +
                 shmem * 19 + (uintptr_t)stream * 23 + (params ? *(int *)params[0] : 0) * 29 +
                 (extra ? 31 : 0);
    return (int)(s % 900) + 100;
}

EXPORT int cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                          unsigned bz, unsigned shmem, void *stream, void **params, void **extra)
{
    return launch_sum(f, gx, gy, gz, bx, by, bz, shmem, stream, params, extra);
}

EXPORT int cuLaunchKernel_ptsz(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                               unsigned by, unsigned bz, unsigned shmem, void *stream, void **params,
                               void **extra)
{
    return 1000 + launch_sum(f, gx, gy, gz, bx, by, bz, shmem, stream, params, extra);
}

/* Runs the function at once, inside the call: calls nest through it. */
EXPORT int cuLaunchHostFunc(void *stream, void (*fn)(void *), void *data)
{
    fn(data);
    return 0;
}

/* Not an exported symbol: cuGetProcAddress hands it out for
 * cuCtxSynchronize, as a real driver may hand out internal functions. */
static int __attribute__((noinline)) internal_ctx_synchronize(void) { return 5; }

static void *lookup(const char *symbol, int version, uint64_t flags)
{
    if (!strcmp(symbol, "cuInit"))
        return (void *)cuInit;
    if (!strcmp(symbol, "cuDriverGetVersion"))
        return (void *)cuDriverGetVersion;
    if (!strcmp(symbol, "cuMemAlloc"))
        return version >= 3020 ? (void *)cuMemAlloc_v2 : NULL;
    if (!strcmp(symbol, "cuLaunchKernel")) /* 2: CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM */
        return flags & 2 ? (void *)cuLaunchKernel_ptsz : (void *)cuLaunchKernel;
    if (!strcmp(symbol, "cuLaunchHostFunc"))
        return (void *)cuLaunchHostFunc;
    if (!strcmp(symbol, "cuCtxSynchronize"))
        return (void *)internal_ctx_synchronize;
    return NULL;
}

EXPORT int cuGetProcAddress_v2(const char *symbol, void **pfn, int version, uint64_t flags,
                               int *status)
{
    *pfn = lookup(symbol, version, flags);
    if (status)
        *status = *pfn ? 0 : 1; /* CU_GET_PROC_ADDRESS_SUCCESS / _SYMBOL_NOT_FOUND */
    return *pfn ? 0 : 500;      /* CUDA_ERROR_NOT_FOUND */
}

EXPORT int cuGetProcAddress(const char *symbol, void **pfn, int version, uint64_t flags)
{
    return cuGetProcAddress_v2(symbol, pfn, version, flags, NULL);
}
