/* Helpers shared by the GPU library tables (cuBLAS, cuBLASLt, cuDNN, NCCL,
 * cuFFT): CUDA's type codes as opprof dtypes, and the TENSORS argument
 * layout built from a few dims. Only compiled with the CUDA toolkit. */
#ifndef OPP_GPULIBS_H
#define OPP_GPULIBS_H

#include <pthread.h>
#include <stdint.h>

#include "core/internal.h"
#include "format.h"

/* cudaDataType_t (library_types.h) to enum opp_dtype; 0 when unknown. */
static inline uint64_t opp_cuda_dtype(int t)
{
    switch (t) {
    case 0: return OPP_DT_F32;    /* CUDA_R_32F */
    case 1: return OPP_DT_F64;    /* CUDA_R_64F */
    case 2: return OPP_DT_F16;    /* CUDA_R_16F */
    case 3: return OPP_DT_I8;     /* CUDA_R_8I */
    case 4: return OPP_DT_C64;    /* CUDA_C_32F */
    case 5: return OPP_DT_C128;   /* CUDA_C_64F */
    case 6: return OPP_DT_C32;    /* CUDA_C_16F */
    case 8: return OPP_DT_U8;     /* CUDA_R_8U */
    case 10: return OPP_DT_I32;   /* CUDA_R_32I */
    case 14: return OPP_DT_BF16;  /* CUDA_R_16BF */
    case 24: return OPP_DT_I64;   /* CUDA_R_64I */
    case 28: return OPP_DT_F8E4M3; /* CUDA_R_8F_E4M3 */
    case 29: return OPP_DT_F8E5M2; /* CUDA_R_8F_E5M2 */
    default: return OPP_DT_NONE;
    }
}

/* cublasComputeType_t (cuBLAS, cuBLASLt) to enum opp_dtype: the type the
 * products are accumulated in (TF32 for the fast-TF32 mode). */
static inline uint64_t opp_cublas_compute(int t)
{
    switch (t) {
    case 64: case 65: return OPP_DT_F16;           /* 16F */
    case 68: case 69: case 74: case 75: case 78: return OPP_DT_F32; /* 32F and fast modes */
    case 77: return OPP_DT_TF32;                   /* 32F_FAST_TF32 */
    case 70: case 71: case 79: return OPP_DT_F64;  /* 64F */
    case 72: case 73: return OPP_DT_I32;           /* 32I */
    default: return opp_cuda_dtype(t);             /* legacy: a cudaDataType */
    }
}

/* cublasOperation_t (0 N, 1 T, 2 C) as the 'N'/'T'/'C' of GEMM/GEMV. */
static inline uint64_t opp_cublas_op(int op)
{
    return op == 0 ? 'N' : op == 1 ? 'T' : op == 2 ? 'C' : '?';
}

/* cudnnDataType_t to enum opp_dtype; 0 when unknown (cudnn.c). */
uint64_t opp_cudnn_dtype(int t);

/* A bounded map from a library's descriptor pointer to what its setters
 * were told (fixed-size values, open addressing, one mutex): descriptor
 * calls are not per-element hot calls. Full: new keys are not kept. */
struct opp_pmap {
    pthread_mutex_t lock;
    size_t vsize;
    unsigned cap; /* a power of two */
    uintptr_t *keys; /* 0 free, 1 deleted */
    unsigned char *vals;
};
#define OPP_PMAP(name, T, N)                                                                       \
    static uintptr_t name##_keys[N];                                                               \
    static T name##_vals[N];                                                                       \
    static struct opp_pmap name = {PTHREAD_MUTEX_INITIALIZER, sizeof(T), N, name##_keys,           \
                                   (unsigned char *)name##_vals}
/* The value of key, with the map locked (opp_pmap_unlock after), or NULL
 * (unlocked) when absent; create: a zeroed value for a new key. */
void *opp_pmap_lock(struct opp_pmap *m, const void *key, int create);
void opp_pmap_unlock(struct opp_pmap *m);
/* Copy key's value to out: 0, or -1 (out zeroed) when absent. */
int opp_pmap_get(struct opp_pmap *m, const void *key, void *out);
void opp_pmap_del(struct opp_pmap *m, const void *key);

/* A symbol of an already loaded library (dlopen RTLD_NOLOAD), for the
 * getters the tables call to read descriptors; NULL when not loaded. */
void *opp_lib_sym(const char *soname, const char *name);

#endif
