/* The CUDA symbol fallback's trampolines (see cuda/internal.h and
 * docs/DESIGN.md, "CUDA without CUPTI"), and our dlsym.
 *
 * One exported trampoline per entry point in OPP_CUDA_RT_SYMS and
 * OPP_CUDA_DRV_SYMS (build/gen/cuda_api.h): `mov $id, %r11d; jmp common`.
 * The common path never changes the arguments, the stack arguments or the
 * stack the callee sees:
 *   - not recording (CUPTI records, the thread is off or inside opprof):
 *     jmp to the real function;
 *   - recording: save the argument registers, let opp_cuda_enter (symbols.c)
 *     open the call and swap the return address for opp_cuda_ret (the
 *     original goes on a per-thread shadow stack), restore, jmp to the real
 *     function. opp_cuda_ret saves the return registers, lets
 *     opp_cuda_leave publish the call with its status and hand back the
 *     original return address, restores, and returns there.
 *
 * x86-64 SysV only. Elsewhere this file is empty: no trampolines and no
 * dlsym hook are built, CUDA API calls are then seen through CUPTI only. */
#if defined(__x86_64__) && defined(__linux__) && !defined(__SANITIZE_THREAD__)

#include "tables/funcs.h"

/* Ids as tables/funcs.h numbers them: the library tables, then one per
 * runtime cbid, then one per driver cbid. symbols.c asserts that the same
 * count is its OPP_FN_LIB_COUNT. */
#define OPP_CNT(...) +1
        .set OPP_TR_LIB_COUNT, 0 OPP_ALL_FUNCS(OPP_CNT)

        .text

#ifdef OPP_HAVE_CUDA
        .set OPP_TR_RT_BASE, OPP_TR_LIB_COUNT
        .set OPP_TR_DRV_BASE, OPP_TR_LIB_COUNT + OPP_CUDA_RT_COUNT

/* r11d = id. Only r10 and r11 (scratch, no arguments in them) are used
 * before the real function runs. */
        .p2align 4
        .type opp_cuda_common, @function
opp_cuda_common:
        .cfi_startproc
        cmpl $0, opp_cuda_via_cupti(%rip)
        jne .Lforward
        movq opp_tls@gottpoff(%rip), %r10
        cmpq $0, %fs:(%r10)              /* opp_tls.ring: attached, recording */
        jne .Lenter
        cmpb $0, %fs:8(%r10)             /* opp_tls.state: OPP_T_NEW may attach */
        jne .Lforward                    /* OPP_T_OFF: ours, or the thread is done */
.Lenter:
        /* Entry: rsp = 8 mod 16. 200 more bytes make it 16-aligned for the call. */
        subq $200, %rsp
        .cfi_adjust_cfa_offset 200
        movq %rdi, 0(%rsp)
        movq %rsi, 8(%rsp)
        movq %rdx, 16(%rsp)
        movq %rcx, 24(%rsp)
        movq %r8, 32(%rsp)
        movq %r9, 40(%rsp)
        movq %rax, 48(%rsp)              /* vector register count of variadic calls */
        movups %xmm0, 64(%rsp)
        movups %xmm1, 80(%rsp)
        movups %xmm2, 96(%rsp)
        movups %xmm3, 112(%rsp)
        movups %xmm4, 128(%rsp)
        movups %xmm5, 144(%rsp)
        movups %xmm6, 160(%rsp)
        movups %xmm7, 176(%rsp)
        movl %r11d, %edi                 /* id */
        leaq 200(%rsp), %rsi             /* the return address slot */
        call opp_cuda_enter              /* -> where to go (never NULL) */
        movq %rax, %r11
        movq 0(%rsp), %rdi
        movq 8(%rsp), %rsi
        movq 16(%rsp), %rdx
        movq 24(%rsp), %rcx
        movq 32(%rsp), %r8
        movq 40(%rsp), %r9
        movq 48(%rsp), %rax
        movups 64(%rsp), %xmm0
        movups 80(%rsp), %xmm1
        movups 96(%rsp), %xmm2
        movups 112(%rsp), %xmm3
        movups 128(%rsp), %xmm4
        movups 144(%rsp), %xmm5
        movups 160(%rsp), %xmm6
        movups 176(%rsp), %xmm7
        addq $200, %rsp
        .cfi_adjust_cfa_offset -200
        jmp *%r11
.Lforward:
        leaq opp_real_fn(%rip), %r10
        movq (%r10,%r11,8), %r10
        testq %r10, %r10
        jz .Lenter                       /* not resolved yet: the C side finds it */
        jmp *%r10
        .cfi_endproc
        .size opp_cuda_common, . - opp_cuda_common

/* Where a recorded call returns. rsp = 0 mod 16 here (the caller's rsp
 * after its call), and stays as the caller expects it after the jmp back.
 * The unwinder stops here: the caller's return address is on the shadow
 * stack, not in this frame. */
        .p2align 4
        .type opp_cuda_ret_unwind, @function
opp_cuda_ret_unwind:
        .cfi_startproc
        .cfi_undefined rip
        nop     /* unwinders look up return address - 1: let that be in here */
        .globl opp_cuda_ret
        .hidden opp_cuda_ret
        .type opp_cuda_ret, @function
opp_cuda_ret:
        subq $64, %rsp
        movq %rax, 0(%rsp)
        movq %rdx, 8(%rsp)
        movups %xmm0, 16(%rsp)
        movups %xmm1, 32(%rsp)
        movq %rax, %rdi
        call opp_cuda_leave              /* -> the original return address */
        movq %rax, %r11
        movq 0(%rsp), %rax
        movq 8(%rsp), %rdx
        movups 16(%rsp), %xmm0
        movups 32(%rsp), %xmm1
        addq $64, %rsp
        /* A jmp, not a ret: the real function's ret to us already missed the
         * return stack buffer; a ret here would miss again and leave it one
         * off for the caller's own returns (measured: 5.7 ns a call more). */
        jmp *%r11
        .cfi_endproc
        .size opp_cuda_ret, . - opp_cuda_ret
        .size opp_cuda_ret_unwind, . - opp_cuda_ret_unwind

/* One trampoline: the exported name (except the cuGetProcAddress pair,
 * which symbols.c wraps in C) and a hidden alias symbols.c can take the address
 * of without going through the GOT. */
        .macro OPP_TRAMP sym, base, cbid
        .p2align 4
        .globl opp_tr_\sym
        .hidden opp_tr_\sym
        .type opp_tr_\sym, @function
        .ifnc \sym,cuGetProcAddress
        .ifnc \sym,cuGetProcAddress_v2
        .globl \sym
        .type \sym, @function
\sym:
        .endif
        .endif
opp_tr_\sym:
        movl $(\base + \cbid), %r11d
        jmp opp_cuda_common
        .size opp_tr_\sym, . - opp_tr_\sym
        .ifnc \sym,cuGetProcAddress
        .ifnc \sym,cuGetProcAddress_v2
        .size \sym, . - \sym
        .endif
        .endif
        .endm

#define OPP_TR_RT(cbid, sym) OPP_TRAMP sym, OPP_TR_RT_BASE, cbid;
#define OPP_TR_DRV(cbid, sym) OPP_TRAMP sym, OPP_TR_DRV_BASE, cbid;
        OPP_CUDA_RT_SYMS(OPP_TR_RT)
        OPP_CUDA_DRV_SYMS(OPP_TR_DRV)
#endif /* OPP_HAVE_CUDA */

/* dlsym: opp_dlsym_route (symbols.c) picks the function that answers, from
 * (handle, name, our caller's return address): the real dlsym, reached
 * with a tail jump so that the return address it sees is still the
 * caller's (RTLD_NEXT and the caller's namespace depend on it), or
 * opp_dlsym_wrapped for the entry points we intercept. */
        .p2align 4
        .globl dlsym
        .type dlsym, @function
dlsym:
        .cfi_startproc
        pushq %rdi
        .cfi_adjust_cfa_offset 8
        pushq %rsi
        .cfi_adjust_cfa_offset 8
        movq 16(%rsp), %rdx              /* the caller's return address */
        subq $8, %rsp                    /* 16-aligned for the call */
        .cfi_adjust_cfa_offset 8
        call opp_dlsym_route
        addq $8, %rsp
        .cfi_adjust_cfa_offset -8
        popq %rsi
        .cfi_adjust_cfa_offset -8
        popq %rdi
        .cfi_adjust_cfa_offset -8
        jmp *%rax
        .cfi_endproc
        .size dlsym, . - dlsym

#endif /* x86-64 */

        .section .note.GNU-stack, "", %progbits
