/* PyTorch's own operators (preload/torch): aten ops, autograd nodes,
 * record_function labels and optimizer steps through a RecordFunction
 * callback that the torch shim (shim/shim.cpp, built against torch's
 * headers) registers; nn.Module layers through global module hooks that a
 * few lines of Python install (python/). Each becomes an operator of kind
 * TORCH in the thread's tree, named by torch's name, with its inputs'
 * shapes; the library calls inside nest below it.
 *
 * This file: the per-thread stack of open ops, the shim's loading
 * (opprof_torch_attach, which the Python side calls once `import torch`
 * has finished) and its callbacks turned off while nothing records, the
 * exports Python's module hooks call, and the Python frames that go into
 * code stacks. The interpreter's path is set up by pypath.c. */
#include <dlfcn.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"
#include "gpu.h" /* OPP_NAME_STR_MAX */
#include "torch_rules.h"
#include "utf8.h"
#include "torch/shim/shim.h"
#include "torch/torch.h"

#define NARGS OPP_MAX_ARGS
#define STACK_INLINE 128u /* ops open per thread held in its state; deeper ones on the heap */
#define PYCACHE 256u   /* Python frames named per thread, direct-mapped */
#define NAMECACHE 1024u /* op names' string ids per thread, direct-mapped by address */
#define NAME_KEPT 84u  /* bytes of a name the cache holds (longer ones: looked up each time) */
#define MAIL 16u       /* ends of a thread's ops that other threads saw, not yet closed */
/* at::RecordFunction::runStartCallbacks(), mangled */
#define RUN_START_CALLBACKS "_ZN2at14RecordFunction17runStartCallbacksEv"
/* The values of an op recorded without inputs (lean, a label, a layer):
 * its columns and the external correlation id. */
#define LEAN_NARGS (OPP_COL_TORCH_FIRST + 1u)

struct open_op {
    const void *key; /* the RecordFunction; NULL: an nn.Module range */
    struct opp_frame f;
    uint8_t recorded; /* f is open in the thread's ring */
    uint8_t ended;    /* ended out of order: recorded, waits for those above it */
    uint8_t nargs;
    uint8_t step; /* OPPROF_STEP=torch: its end marks a step (OPP_STEP_TORCH_*) */
    uint64_t a[NARGS];
};

/* An op name's string id, cached by the name's address. torch's names
 * mostly live as long as their operator, but a label's or an autograd
 * node's may be a temporary whose address the next name reuses: the
 * entry holds the bytes too, and a hit compares them. */
struct name_id {
    const char *p;
    uint32_t id;
    char s[NAME_KEPT];
};

/* Per thread that runs torch ops, allocated at its first (a program
 * without torch pays 8 bytes of TLS): the open ops, the string ids of the
 * op names it saw and of the Python frames seen (OPPROF_STACKS); torch's
 * number of the thread and the ends of its ops that came on another
 * thread (a TorchScript function whose wait resumed on an inter-op
 * thread), which it closes at its next op, under threads_lock. */
struct tstate {
    struct tstate *next; /* every thread's, from threads */
    uint64_t torch_tid;  /* RecordFunction::threadId; 0 before its first op */
    uint32_t nmail;      /* entries of mail (read unlocked by its thread) */
    struct {
        const void *key;
        uint64_t end;
    } mail[MAIL];
    uint32_t depth;    /* entries of s in use; above cap, deeper ones not recorded */
    uint32_t cap;      /* entries s holds: 0 before the thread's first op */
    struct open_op *s; /* in, or on the heap once deeper (grown in push) */
    struct open_op in[STACK_INLINE];
    struct name_id names[NAMECACHE];
    struct {
        const void *code, *file, *func;
        int addr;
        uint32_t id;
    } py[PYCACHE];
};
static __thread struct tstate *torch_thread __attribute__((tls_model("initial-exec")));
static pthread_key_t tkey;
static int attached; /* the shim's callbacks are registered; tkey exists */
static struct tstate *threads; /* every thread's state, under threads_lock */
static pthread_mutex_t threads_lock = PTHREAD_MUTEX_INITIALIZER;

static opp_torch_shim_enable_t shim_enable;
static opp_torch_shim_pyframes_t pyframes; /* set while Python frames go into code stacks */
static opp_torch_shim_pyline_t pyline;
static opp_torch_shim_pystr_t pystr;
static pthread_mutex_t enable_lock = PTHREAD_MUTEX_INITIALIZER;
int opp_torch_paused_off; /* `opprof ctl stop` seen: torch's callbacks off until it ends */
int opp_torch_lean;       /* OPPROF_TORCH=lean */

/* At the thread's exit (a later op of its own makes a new one). */
static void tstate_free(void *p)
{
    struct tstate *t = p;
    pthread_mutex_lock(&threads_lock);
    for (struct tstate **q = &threads; *q; q = &(*q)->next)
        if (*q == t) {
            *q = t->next;
            break;
        }
    pthread_mutex_unlock(&threads_lock);
    torch_thread = NULL;
    if (t->s != t->in)
        free(t->s);
    free(t);
}

/* Whether this thread's ops are the program's (not our threads', not
 * made inside our code). A thread holding its parent's ring (its fork ran
 * no atfork handler) forgets the parent's ops and names first. */
static inline int program_thread(void)
{
    opp_thread_check();
    return opp_tls.state != OPP_T_OFF;
}

static struct tstate *mine(void)
{
    if (OPP_LIKELY(torch_thread != NULL))
        return torch_thread;
    if (!__atomic_load_n(&attached, __ATOMIC_ACQUIRE))
        return NULL;
    struct tstate *t = calloc(1, sizeof *t);
    if (t && pthread_setspecific(tkey, t)) {
        free(t);
        t = NULL;
    }
    if (t) {
        pthread_mutex_lock(&threads_lock);
        t->next = threads;
        threads = t;
        pthread_mutex_unlock(&threads_lock);
    }
    return torch_thread = t;
}

/* ---- the stack of open ops ---- */

/* An nn.Module's forward (its key the module, or NULL), not an op. */
static int is_module(const struct open_op *o)
{
    return o->a[OPP_COL_TORCH_SCOPE] == OPP_TORCH_SCOPE_MODULE;
}

/* Whether the end of an op marks a step: OPPROF_STEP=torch, an optimizer
 * step inside no other (a wrapping optimizer steps its inner one);
 * torch:forward, an nn.Module forward inside no other. */
static uint8_t step_kind(int module, unsigned scope, const char *name)
{
    uint8_t kind;
    if (!module) {
        if (opp_step_torch != OPP_STEP_TORCH_OPTIMIZER || !name ||
            !opp_optimizer_step((int)scope, name))
            return OPP_STEP_TORCH_NONE;
        kind = OPP_STEP_TORCH_OPTIMIZER;
    } else {
        if (opp_step_torch != OPP_STEP_TORCH_FORWARD)
            return OPP_STEP_TORCH_NONE;
        kind = OPP_STEP_TORCH_FORWARD;
    }
    for (uint32_t i = 0; i < torch_thread->depth && i < torch_thread->cap; i++)
        if (!torch_thread->s[i].ended && torch_thread->s[i].step == kind)
            return OPP_STEP_TORCH_NONE;
    return kind;
}

/* Room for one more open op, the thread at the depth its stack holds:
 * the stack first set to its inline entries, then grown on the heap. */
static __attribute__((noinline, cold)) int stack_room(struct tstate *t)
{
    static int said;
    if (t->depth > t->cap) /* deeper than a stack that could not grow */
        return 0;
    if (!t->cap) {
        t->s = t->in;
        t->cap = STACK_INLINE;
        return 1;
    }
    struct open_op *s = opp_stack_grow(t->s, t->cap, t->in, sizeof *s, &said,
                                       "torch operators nested deeper than ");
    if (!s)
        return 0;
    t->s = s;
    t->cap *= 2;
    return 1;
}

/* Fill an op's columns and open it on this thread (its begin taken last,
 * so the encoding is not the op's time). Returns its index. Inlined, like
 * close_top and name_id: each runs once per torch op. */
OPP_HOT uint32_t push(const void *key, uint32_t name, unsigned scope, const uint64_t *in,
                      unsigned n, unsigned ninputs, uint8_t step)
{
    if (OPP_UNLIKELY(torch_thread->depth >= torch_thread->cap) && !stack_room(torch_thread))
        return torch_thread->depth++; /* not recorded (said once); popped by its leave */
    struct open_op *o = &torch_thread->s[torch_thread->depth];
    o->key = key;
    o->step = step;
    o->ended = 0;
    unsigned room = opp_stacks_n ? OPP_TORCH_IN_MAX - 1 : OPP_TORCH_IN_MAX; /* the stack id's */
    if (n > room)
        n = room;
    o->a[OPP_COL_TORCH_NAME] = name;
    o->a[OPP_COL_TORCH_SCOPE] = scope;
    o->a[OPP_COL_TORCH_COUNT] = ninputs;
    if (n)
        memcpy(o->a + OPP_COL_TORCH_FIRST, in, n * sizeof *in);
    o->nargs = (uint8_t)(OPP_COL_TORCH_FIRST + n);
    o->recorded = (uint8_t)opp_enter(&o->f, OPP_FN_torch_op);
    if (o->recorded)
        opp_enter_named(&o->f, name, 0); /* the name, and no external correlation id */
    /* the external correlation id, last: kernels launched inside are the op's */
    o->a[o->nargs++] = o->recorded && opp_extcorr_on ? opp_extcorr_push() : 0;
    return torch_thread->depth++;
}

/* Close the top op, ended at end (0: now); then the ones below it that
 * ended out of order, whose external correlation ids were pushed before
 * its (CUPTI's stack). */
OPP_HOT void close_top_at(uint64_t end)
{
    struct open_op *o = &torch_thread->s[torch_thread->depth - 1];
    uint8_t step = o->step;
    if (o->recorded) {
        if (o->a[o->nargs - 1])
            opp_extcorr_pop();
        if (end)
            opp_leave_at(&o->f, end, o->a, o->nargs);
        else if (o->nargs == LEAN_NARGS) /* a constant count: the record's layout folds */
            opp_leave(&o->f, o->a, LEAN_NARGS);
        else
            opp_leave(&o->f, o->a, o->nargs);
    }
    torch_thread->depth--;
    while (torch_thread->depth && torch_thread->s[torch_thread->depth - 1].ended) {
        o = &torch_thread->s[torch_thread->depth - 1];
        if (o->recorded) {
            if (o->a[o->nargs - 1])
                opp_extcorr_pop();
            o->f.r->depth = o->f.depth;
        }
        torch_thread->depth--;
    }
    if (step != OPP_STEP_TORCH_NONE)
        opp_step_mark();
}

OPP_HOT void close_top(void)
{
    close_top_at(0);
}

/* An op below the top ended at t (a label exited out of order): recorded
 * now, the thread's depth left to those still open above it. */
static void end_early_at(struct open_op *o, uint64_t t)
{
    if (o->recorded) {
        if (o->f.stack)
            opp_publish_stack(o->f.r, &o->f, t, o->a, o->nargs, OPP_PUB_RECORD);
        else
            opp_publish(o->f.r, o->f.fn, o->f.depth, o->f.begin, t, o->a, o->nargs);
    }
    o->ended = 1;
    if (o->step != OPP_STEP_TORCH_NONE)
        opp_step_mark();
}

static void end_early(struct open_op *o)
{
    end_early_at(o, opp_now());
}

/* The string id of an op's name: from the thread's cache when the same
 * bytes were seen at the same address (a strncmp of the name, not a hash
 * and a lookup in the process's table). */
OPP_HOT uint32_t name_id(const char *name)
{
    uintptr_t a = (uintptr_t)name;
    struct name_id *e = &torch_thread->names[((a >> 3) ^ (a >> 13)) % NAMECACHE];
    if (OPP_LIKELY(e->p == name) && !strncmp(name, e->s, NAME_KEPT))
        return e->id;
    size_t n = strnlen(name, OPP_NAME_STR_MAX);
    uint32_t id = opp_str_id(name, n);
    if (id && n < NAME_KEPT) {
        memcpy(e->s, name, n + 1);
        e->p = name;
        e->id = id;
    }
    return id;
}

static void callbacks_set(void);
static void read_mail(void);

/* Ends of this thread's ops that came on other threads, closed first. */
OPP_HOT void check_mail(void)
{
    if (OPP_UNLIKELY(__atomic_load_n(&torch_thread->nmail, __ATOMIC_ACQUIRE)))
        read_mail();
}

static void op_enter(const void *key, const char *name, unsigned scope, const uint64_t *in,
                     unsigned n, unsigned ninputs, uint64_t thread)
{
    if (!program_thread() || !mine()) /* our own threads, or inside our code */
        return;
    if (OPP_UNLIKELY(__atomic_load_n(&torch_thread->torch_tid, __ATOMIC_RELAXED) != thread))
        __atomic_store_n(&torch_thread->torch_tid, thread, __ATOMIC_RELAXED);
    check_mail();
    uint8_t step = opp_step_torch ? step_kind(0, scope, name) : OPP_STEP_TORCH_NONE;
    const struct opp_ring_hdr *r = opp_tls.ring;
    int paused = r && atomic_load_explicit(&r->paused, memory_order_relaxed);
    if (OPP_UNLIKELY(paused != __atomic_load_n(&opp_torch_paused_off, __ATOMIC_RELAXED))) {
        __atomic_store_n(&opp_torch_paused_off, paused, __ATOMIC_RELAXED);
        callbacks_set();
    }
    if (OPP_UNLIKELY(!opp_capture_open())) {
        if (step) /* nothing to record, a step to mark */
            push(key, 0, scope, NULL, 0, 0, step);
        return;
    }
    push(key, name ? name_id(name) : 0, scope, in, n, ninputs, step);
}

/* An end with the thread deeper than its stack could grow: one of the
 * ops not recorded ends (1), as ends come innermost first. */
static int pop_uncounted(void)
{
    if (torch_thread->depth <= torch_thread->cap)
        return 0;
    torch_thread->depth--;
    return 1;
}

/* The innermost entry still open with this key, of an op (module 0) or of
 * a module's forward (1); UINT32_MAX when none. */
static uint32_t innermost_open(const void *key, int module)
{
    for (uint32_t i = torch_thread->depth; i-- > 0;)
        if (torch_thread->s[i].key == key && !torch_thread->s[i].ended &&
            is_module(&torch_thread->s[i]) == module)
            return i;
    return UINT32_MAX;
}

/* The op key that began on torch's thread `thread` ended here, at t: told
 * to that thread, which closes it at its next op (its records are its
 * own to write). */
static void post_end(const void *key, uint64_t thread, uint64_t t)
{
    pthread_mutex_lock(&threads_lock);
    for (struct tstate *o = threads; o; o = o->next)
        if (__atomic_load_n(&o->torch_tid, __ATOMIC_RELAXED) == thread) {
            if (o->nmail < MAIL) {
                o->mail[o->nmail].key = key;
                o->mail[o->nmail].end = t;
                __atomic_store_n(&o->nmail, o->nmail + 1, __ATOMIC_RELEASE);
            }
            break;
        }
    pthread_mutex_unlock(&threads_lock);
}

/* Close the ops whose ends other threads posted, each at its time. */
static __attribute__((noinline, cold)) void read_mail(void)
{
    struct tstate *t = torch_thread;
    pthread_mutex_lock(&threads_lock);
    uint32_t n = t->nmail;
    __typeof__(t->mail[0]) mail[MAIL];
    memcpy(mail, t->mail, n * sizeof *mail);
    __atomic_store_n(&t->nmail, 0, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&threads_lock);
    for (uint32_t k = 0; k < n; k++) {
        if (t->depth > t->cap)
            return; /* ops not recorded above: they end first */
        uint32_t i = innermost_open(mail[k].key, 0);
        if (i == UINT32_MAX)
            continue;
        if (i + 1 == t->depth)
            close_top_at(mail[k].end);
        else
            end_early_at(&t->s[i], mail[k].end);
    }
}

static void op_leave(const void *key, uint64_t thread)
{
    if (!program_thread() || !torch_thread || pop_uncounted())
        return;
    check_mail();
    uint32_t i = innermost_open(key, 0);
    if (i == UINT32_MAX) {
        /* began on another thread (told to it), before we attached, or
         * while nothing recorded */
        if (thread != __atomic_load_n(&torch_thread->torch_tid, __ATOMIC_RELAXED))
            post_end(key, thread, opp_now());
        return;
    }
    if (i + 1 == torch_thread->depth)
        close_top();
    else
        end_early(&torch_thread->s[i]);
}

void opp_torch_unpaused(void)
{
    if (__atomic_load_n(&opp_torch_paused_off, __ATOMIC_RELAXED)) {
        __atomic_store_n(&opp_torch_paused_off, 0, __ATOMIC_RELAXED);
        callbacks_set();
    }
}

static void module_pre(const void *mod, uint32_t name, int always_call);
static void module_post(const void *mod);
static uint32_t torch_forks; /* opp_torch_api.forks */
static struct opp_torch_api api = {OPP_TORCH_API_VERSION, op_enter,    op_leave, 1, module_pre,
                                   module_post,           &torch_forks};

/* Nothing records (a closed capture window, or `opprof ctl stop`, which
 * the first op after it sees in its ring): the callback for every op goes
 * off, so ops cost what they cost without us. The one for labels alone
 * stays while paused (its next label sees the pause end; so does the next
 * allocation) and with OPPROF_STEP=torch (the optimizer steps open the
 * next window). Serialized: the timer, the step marker and any thread may
 * call it. */
static void callbacks_set(void)
{
    pthread_mutex_lock(&enable_lock);
    int paused = __atomic_load_n(&opp_torch_paused_off, __ATOMIC_RELAXED);
    int on = __atomic_load_n(&opp_capturing, __ATOMIC_RELAXED) && !paused;
    if (shim_enable)
        shim_enable(on ? OPP_TORCH_ALL
                       : opp_step_torch || paused ? OPP_TORCH_LABELS : OPP_TORCH_NONE);
    pthread_mutex_unlock(&enable_lock);
}

/* ---- Python frames in code stacks (OPPROF_STACKS) ---- */

/* The calling thread's Python frames as OPP_STACK_PY words, innermost
 * first: each named "file(line): function" (torch's with_stack format)
 * once per thread and place, through a small cache (keyed by the code
 * object, its file and function strings, and the instruction: its line
 * and its names' UTF-8 are made only on a miss). */
static int python_frames(uint64_t *out, int max)
{
    struct tstate *t = mine();
    if (!t || max <= 0)
        return 0;
    struct opp_pyframe f[OPP_GPU_FIELDS_MAX];
    int n = pyframes(f, max < (int)OPP_GPU_FIELDS_MAX ? max : (int)OPP_GPU_FIELDS_MAX);
    int k = 0;
    for (int i = 0; i < n; i++) {
        unsigned h = (unsigned)(((uintptr_t)f[i].code >> 4) ^ (uintptr_t)f[i].addr * 2654435761u) %
                     PYCACHE;
        if (t->py[h].code != f[i].code || t->py[h].addr != f[i].addr || !t->py[h].id ||
            t->py[h].file != f[i].file || t->py[h].func != f[i].func) {
            char file[OPP_NAME_MAX * 2], func[OPP_NAME_MAX], buf[OPP_NAME_MAX * 2];
            pystr(f[i].file, file, sizeof file);
            pystr(f[i].func, func, sizeof func);
            int len =
                snprintf(buf, sizeof buf, "%s(%d): %s", file, pyline(f[i].code, f[i].addr), func);
            size_t cut = opp_utf8_whole(buf, len < (int)sizeof buf ? (size_t)len : sizeof buf - 1);
            const char *py = strrchr(file, '/');
            uint32_t id = py && !strcmp(py, "/_opprof_torch.py") /* our module hooks: not shown */
                              ? UINT32_MAX
                              : opp_str_id(buf, cut);
            if (!id)
                continue;
            t->py[h].code = f[i].code;
            t->py[h].file = f[i].file;
            t->py[h].func = f[i].func;
            t->py[h].addr = f[i].addr;
            t->py[h].id = id;
        }
        if (t->py[h].id != UINT32_MAX)
            out[k++] = OPP_STACK_PY | t->py[h].id;
    }
    return k;
}

/* Where torch calls into the shim at an op's start: the function that
 * runs RecordFunction's start callbacks (an exported member of
 * libtorch_cpu, found through the shim's dependencies). Code stacks leave
 * it out with the frames inside it and the frame that called it, so an
 * op's stack begins where the op was called. */
static void stack_entry(void *shim)
{
    void *p = dlsym(shim, RUN_START_CALLBACKS);
    Dl_info di;
    const ElfW(Sym) *sym = NULL;
    if (!p || !dladdr1(p, &di, (void **)&sym, RTLD_DL_SYMENT) || !sym || !sym->st_size) {
        opp_agent_say("OPPROF_STACKS: torch's at::RecordFunction::runStartCallbacks not found; "
                      "torch ops' stacks begin inside torch's RecordFunction",
                      NULL, NULL);
        return;
    }
    opp_stack_entry_lo = (uintptr_t)p;
    opp_stack_entry_hi = (uintptr_t)p + sym->st_size;
}

/* ---- what Python calls (ctypes; python/_opprof_torch.py) ---- */

static void say_failed(const char *a, const char *b)
{
    opp_agent_say("torch operators not recorded: ", a ? a : b, "; library calls only");
    if (opp_step_torch)
        opp_schedule_off("OPPROF_STEP=torch: no torch steps without torch's operators");
}

/* Load the shim at path and register its callbacks: 0, or -1 after one
 * line on stderr (the program goes on; opprof keeps its library view).
 * path NULL: the Python side could not have one (it said why). */
OPP_EXPORT int opprof_torch_attach(const char *path)
{
    if (attached)
        return 0;
    if (!path) {
        if (opp_step_torch)
            opp_schedule_off("OPPROF_STEP=torch: no torch steps without torch's operators");
        return -1;
    }
    static int have_key;
    if (!have_key && pthread_key_create(&tkey, tstate_free)) {
        say_failed("no thread key left", NULL);
        return -1;
    }
    have_key = 1;
    char why[300] = "";
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    opp_torch_shim_init_t init = h ? (opp_torch_shim_init_t)dlsym(h, "opp_torch_shim_init") : NULL;
    if (!init) {
        say_failed(h ? NULL : dlerror(), "the shim has no entry point");
        if (h)
            dlclose(h);
        return -1;
    }
    const char *shapes = getenv("OPPROF_TORCH_SHAPES");
    /* lean, or shapes 0: names only, torch boxes no inputs */
    api.inputs = !opp_torch_lean && !(shapes && !strcmp(shapes, "0"));
    if (init(&api, why, sizeof why)) {
        say_failed(why, NULL);
        return -1;
    }
    shim_enable = (opp_torch_shim_enable_t)dlsym(h, "opp_torch_shim_enable");
    /* libtorch_cpu calls BLAS: its scope built now, not in the first GEMM */
    opp_resolve_scope(dlsym(h, RUN_START_CALLBACKS));
    if (opp_stacks_n) {
        opp_object_range((const void *)init, &opp_stack_skip_lo, &opp_stack_skip_hi);
        stack_entry(h);
        opp_torch_shim_pyframes_t pf =
            (opp_torch_shim_pyframes_t)dlsym(h, "opp_torch_shim_pyframes");
        opp_torch_shim_pyline_t pl = (opp_torch_shim_pyline_t)dlsym(h, "opp_torch_shim_pyline");
        opp_torch_shim_pystr_t ps = (opp_torch_shim_pystr_t)dlsym(h, "opp_torch_shim_pystr");
        struct opp_pyframe probe[1];
        if (pf && pl && ps && pf(probe, 1) >= 0) {
            pyframes = pf;
            pyline = pl;
            pystr = ps;
            __atomic_store_n(&opp_stack_extra, python_frames, __ATOMIC_RELEASE);
        } else {
            opp_agent_say("OPPROF_STACKS: no Python frames (the torch shim was built without "
                          "this Python's headers: install python3-dev)",
                          NULL, NULL);
        }
    }
    __atomic_store_n(&attached, 1, __ATOMIC_RELEASE);
    __atomic_store_n(&opp_capture_changed, callbacks_set, __ATOMIC_RELEASE);
    callbacks_set();
    return 0;
}

/* The string id of a module's name, given once per module. */
OPP_EXPORT uint32_t opprof_torch_name(const char *name)
{
    return name ? opp_str_id(name, strnlen(name, OPP_NAME_STR_MAX)) : 0;
}

/* An nn.Module's forward (the module, NULL from Python's hooks) begins
 * on this thread: its index, UINT32_MAX when not recorded. */
static uint32_t module_enter(const void *mod, uint32_t name)
{
    if (!program_thread() || !mine())
        return UINT32_MAX;
    uint8_t step = opp_step_torch ? step_kind(1, 0, NULL) : OPP_STEP_TORCH_NONE;
    if (!step && !opp_capture_open())
        return UINT32_MAX;
    return push(mod, opp_capture_open() ? name : 0, OPP_TORCH_SCOPE_MODULE, NULL, 0, 0, step);
}

/* The forward at index idx ended: it and whatever it left open (ops, and
 * modules whose forward raised: their post hooks did not run). */
static void module_leave(uint32_t idx)
{
    if (!program_thread() || !torch_thread || idx == UINT32_MAX)
        return;
    while (torch_thread->depth > idx) {
        if (torch_thread->depth > torch_thread->cap)
            torch_thread->depth--;
        else
            close_top();
    }
}

/* The shim's C module hooks (shim/modhooks.c): the forwards open on this
 * thread are found by their module. Before torch 2.1 (always_call 0) a
 * forward that raised never ran its post hook: a module seen open again
 * is taken for one that raised, its range (and what it left open) ending
 * here, as a module that calls itself would be. */
static void module_pre(const void *mod, uint32_t name, int always_call)
{
    if (!program_thread() || !mine())
        return;
    check_mail();
    if (!always_call)
        for (uint32_t i = 0; i < torch_thread->depth && i < torch_thread->cap; i++)
            if (torch_thread->s[i].key == mod && !torch_thread->s[i].ended &&
                is_module(&torch_thread->s[i])) {
                module_leave(i);
                break;
            }
    module_enter(mod, name);
}

static void module_post(const void *mod)
{
    if (!program_thread() || !torch_thread || pop_uncounted())
        return;
    check_mail();
    module_leave(innermost_open(mod, 1));
}

/* The same for Python's hooks (python/_opprof_torch.py, through ctypes),
 * where the shim has no C hooks: the index to give the end. */
OPP_EXPORT uint32_t opprof_torch_module_enter(uint32_t name) { return module_enter(NULL, name); }
OPP_EXPORT void opprof_torch_module_leave(uint32_t idx) { module_leave(idx); }

/* ---- the feature ---- */

/* OPPROF_TORCH: 0 (no torch operators: pypath.c leaves Python alone),
 * lean, or full (the default). */
static void torch_start(const char *self_path)
{
    const char *tier = getenv("OPPROF_TORCH");
    if (tier && !strcmp(tier, "lean"))
        opp_torch_lean = 1;
    else if (tier && *tier && strcmp(tier, "0") && strcmp(tier, "full") && strcmp(tier, "1"))
        opp_agent_say("OPPROF_TORCH=", tier, " ignored (0, lean or full): full");
    opp_torch_python_path(self_path);
}

/* In a fork child, on the forking thread: the ops it had open were
 * recorded in the parent's ring; their ends are not this process's to
 * record. Its string ids start over, so the op names and Python frames
 * are forgotten. */
static void torch_forked(void)
{
    if (!torch_thread)
        return;
    for (uint32_t i = 0; i < torch_thread->depth && i < torch_thread->cap; i++)
        torch_thread->s[i].recorded = 0;
    memset(torch_thread->names, 0, sizeof torch_thread->names);
    memset(torch_thread->py, 0, sizeof torch_thread->py);
}

/* In a fork child: its string ids start over, the modules' names too. */
static void torch_process_forked(void)
{
    __atomic_add_fetch(&torch_forks, 1, __ATOMIC_RELAXED);
    /* the other threads did not come along (their states stay unfreed,
     * out of the list), and one may have held the lock */
    pthread_mutex_init(&threads_lock, NULL);
    threads = torch_thread;
    if (torch_thread) {
        torch_thread->next = NULL;
        torch_thread->nmail = 0;
    }
}

/* At exit, on the exiting thread: the ends other threads posted to it
 * after its last op (a TorchScript function's, on an inter-op thread). */
static void torch_stop(void)
{
    if (torch_thread)
        check_mail();
}

const struct opp_feature opp_feature_torch = {.name = "torch",
                                              .start = torch_start,
                                              .forked = torch_process_forked,
                                              .thread_forked = torch_forked,
                                              .stop = torch_stop};
