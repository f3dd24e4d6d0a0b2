/* The program's jumps (longjmp and its aliases), passed on to libc's: a
 * signal handler that interrupted one of our records and jumps out of it
 * leaves it for good: the call it recorded stays in flight (recorded as
 * left), or the record is counted as dropped, and the mark that a publish
 * is under way goes with it (publish.h's opp_publish_left). Left set,
 * every later call of the thread would be taken for a handler's and
 * dropped. Where the jump's stack pointer can be read (glibc on x86-64),
 * the calls in flight below it are left too, however deep the thread's
 * next call is (thread.h's opp_thread_jumping), and our rare paths it
 * jumps out of are undone (base.h's opp_unwind). */
#include "core/thread.h"

#include <dlfcn.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>

typedef void (*jump_fn)(struct __jmp_buf_tag *, int);

enum { J_LONGJMP, J__LONGJMP, J_SIGLONGJMP, J_CHK, J_N };
static const char *const jump_names[J_N] = {"longjmp", "_longjmp", "siglongjmp", "__longjmp_chk"};
static jump_fn jumps[J_N];

/* libc's, looked up at our start (a handler must not call dlsym) or at
 * a jump made before it (another library's constructor). */
static jump_fn real_jump(int i)
{
    jump_fn f = __atomic_load_n(&jumps[i], __ATOMIC_RELAXED);
    if (!f) {
        f = (jump_fn)dlsym(RTLD_NEXT, jump_names[i]);
        if (!f) /* every glibc has the first three; the last since 2.11 */
            f = (jump_fn)dlsym(RTLD_NEXT, "siglongjmp");
        if (!f)
            abort(); /* no jump to make: the program cannot go on either way */
        __atomic_store_n(&jumps[i], f, __ATOMIC_RELAXED);
    }
    return f;
}

/* The stack pointer a jump to env restores, 0 when it cannot be read:
 * glibc on x86-64 keeps it mangled (PTR_MANGLE: xor with the thread's
 * pointer guard at %fs:0x30, then rotated left 17 bits). */
static int sp_readable; /* checked once on a jump buffer of our own */
static uintptr_t jump_sp(const struct __jmp_buf_tag *env)
{
#if defined(__x86_64__) && defined(__GLIBC__)
    uintptr_t v = (uintptr_t)env->__jmpbuf[6], guard; /* JB_RSP */
    __asm__("mov %%fs:0x30, %0" : "=r"(guard));
    return ((v >> 17) | (v << 47)) ^ guard;
#else
    (void)env;
    return 0;
#endif
}

void opp_jump_init(void)
{
    for (int i = 0; i < J_N; i++)
        real_jump(i);
    /* setjmp saves this function's stack pointer: at most a frame below
     * its frame pointer, when the layout is the one jump_sp reads */
    jmp_buf own;
    if (!_setjmp(own)) {
        uintptr_t sp = jump_sp(own), fp = (uintptr_t)__builtin_frame_address(0);
        sp_readable = sp && sp <= fp && fp - sp < 65536;
    }
}

/* The paths of ours the jump to sp, made from cur, leaves (their guards'
 * frames below it, on the same stack: opp_jump_leaves), undone innermost
 * first. */
static void unwind(uintptr_t sp, uintptr_t cur)
{
    struct opp_unwind *u;
    while ((u = opp_unwinds) && opp_jump_leaves((uintptr_t)u, sp, cur)) {
        opp_unwinds = u->next;
        atomic_signal_fence(memory_order_seq_cst);
        u->undo(u);
    }
}

/* A jump while opp_tls.publishing is set, or while a path of ours is
 * registered, comes from a handler that interrupted it (our code jumps
 * nowhere): it leaves it, unless it stays within the handler, which then
 * returns into it. */
#define OPP_JUMP(i, name)                                                                          \
    void name(struct __jmp_buf_tag env[1], int val);                                               \
    OPP_EXPORT __attribute__((noreturn)) void name(struct __jmp_buf_tag env[1], int val)           \
    {                                                                                              \
        uintptr_t sp_ = sp_readable ? jump_sp(env) : 0;                                            \
        uintptr_t cur_ = (uintptr_t)__builtin_frame_address(0);                                    \
        opp_publish_left(sp_, cur_);                                                               \
        if (sp_) {                                                                                 \
            unwind(sp_, cur_);                                                                     \
            opp_tls.jumping = 1;                                                                   \
            opp_thread_jumping(sp_, cur_);                                                         \
            opp_tls.jumping = 0;                                                                   \
        }                                                                                          \
        real_jump(i)(env, val);                                                                    \
        abort(); /* libc's never returns */                                                        \
    }

OPP_JUMP(J_LONGJMP, longjmp)
OPP_JUMP(J__LONGJMP, _longjmp)
OPP_JUMP(J_SIGLONGJMP, siglongjmp)
OPP_JUMP(J_CHK, __longjmp_chk)
