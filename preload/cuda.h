/* CUDA API timing by symbol interposition: the fallback for when CUPTI
 * cannot serve (no GPU, no usable driver, or another subscriber holds it).
 *
 * preload/cuda_tramp.S exports one trampoline per entry point that
 * libcudart.so and libcuda.so export with a CUPTI callback id, and our own
 * dlsym; preload/cuda.c holds the C side (entering and leaving a recorded
 * call, the dlsym and cuGetProcAddress hooks). docs/DESIGN.md, "CUDA without
 * CUPTI", says why and what it cannot see. x86-64 only: elsewhere none of it
 * is built and only opp_cuda_via_cupti exists. */
#ifndef OPP_CUDA_H
#define OPP_CUDA_H

#include <stdatomic.h>

#if defined(__x86_64__) && defined(__linux__)
#define OPP_CUDA_TRAMP 1 /* the trampolines and the dlsym hook are built */
#endif

/* Non-zero while CUPTI's callbacks record CUDA API calls (the CUPTI client
 * sets it once its subscription works): the trampolines then forward
 * without recording, so no call is recorded twice. Default 0. */
extern _Atomic int opp_cuda_via_cupti;

#endif
