/* PyTorch's own operators (preload/torch): aten ops, autograd nodes,
 * record_function labels and optimizer steps through a RecordFunction
 * callback that the torch shim (shim.cpp, built against torch's headers)
 * registers; nn.Module layers through global module hooks that a few lines
 * of Python install (python/sitecustomize.py). Each becomes an operator of
 * kind TORCH in the thread's tree, named by torch's name, with its inputs'
 * shapes; the library calls inside nest below it.
 *
 * Nothing of torch is loaded here: in a Python interpreter the start puts
 * our Python folder first on PYTHONPATH; its sitecustomize waits for
 * `import torch`, then calls opprof_torch_attach() with the shim that fits
 * the torch it found, which this file dlopens. Recording off (a closed
 * capture window) disables the callback, so torch skips it. */
#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/internal.h"
#include "gpu.h" /* OPP_NAME_STR_MAX */
#include "torch/shim/shim.h"
#include "torch/torch.h"

#define NARGS OPP_MAX_ARGS
#define STACK_MAX 128u /* ops open per thread that are recorded; deeper ones are counted */

struct open_op {
    const void *key; /* the RecordFunction; NULL: an nn.Module range */
    struct opp_frame f;
    uint8_t recorded; /* f is open in the thread's ring */
    uint8_t nargs;
    uint8_t step; /* OPPROF_STEP=torch: its end marks a step (STEP_*) */
    uint64_t a[NARGS];
};

#define PYCACHE 256u /* Python frames named per thread, direct-mapped */

/* Per thread that runs torch ops, allocated at its first (a program
 * without torch pays 8 bytes of TLS): the open ops, and the string ids of
 * the Python frames seen (OPPROF_STACKS). */
struct tstate {
    uint32_t depth;
    struct open_op s[STACK_MAX];
    struct {
        const void *code;
        int line;
        uint32_t id;
    } py[PYCACHE];
};
static __thread struct tstate *T __attribute__((tls_model("initial-exec")));
static pthread_key_t tkey;

/* At the thread's exit (a later op of its own makes a new one). */
static void tstate_free(void *p)
{
    T = NULL;
    free(p);
}

static struct tstate *mine(void)
{
    if (OPP_LIKELY(T != NULL))
        return T;
    struct tstate *t = calloc(1, sizeof *t);
    if (t && pthread_setspecific(tkey, t)) {
        free(t);
        t = NULL;
    }
    return T = t;
}

enum { STEP_NONE, STEP_OPTIMIZER, STEP_FORWARD };
#define OPTIMIZER_STEP "Optimizer.step#"

static opp_torch_shim_enable_t shim_enable;
static opp_torch_shim_pyframes_t pyframes; /* set while Python frames go into code stacks */
static int attached;
static char self_dir[PATH_MAX];

/* Fill an op's columns and open it on this thread (its begin taken last,
 * so the encoding is not the op's time). */
/* Whether the end of an op marks a step: OPPROF_STEP=torch, an optimizer
 * step; torch:forward, an nn.Module forward inside no other. */
static uint8_t step_kind(const void *key, const char *name)
{
    if (key)
        return opp_step_torch == OPP_STEP_TORCH_OPTIMIZER && name &&
                       !strncmp(name, OPTIMIZER_STEP, sizeof OPTIMIZER_STEP - 1)
                   ? STEP_OPTIMIZER
                   : STEP_NONE;
    if (opp_step_torch != OPP_STEP_TORCH_FORWARD)
        return STEP_NONE;
    for (uint32_t i = 0; i < T->depth && i < STACK_MAX; i++)
        if (!T->s[i].key)
            return STEP_NONE; /* a module inside another */
    return STEP_FORWARD;
}

static void push(const void *key, uint32_t name, unsigned scope, const uint64_t *in, unsigned n,
                 unsigned ninputs, uint8_t step)
{
    if (T->depth >= STACK_MAX) {
        T->depth++; /* popped by its leave; counted with the thread's dropped records */
        struct opp_ring_hdr *r = opp_tls.ring;
        if (r)
            atomic_store_explicit(&r->dropped,
                                  atomic_load_explicit(&r->dropped, memory_order_relaxed) + 1,
                                  memory_order_relaxed);
        return;
    }
    struct open_op *o = &T->s[T->depth++];
    o->key = key;
    o->step = step;
    if (n > OPP_TORCH_IN_MAX)
        n = OPP_TORCH_IN_MAX;
    o->a[OPP_COL_TORCH_NAME] = name;
    o->a[OPP_COL_TORCH_SCOPE] = scope;
    o->a[OPP_COL_TORCH_COUNT] = ninputs;
    memcpy(o->a + OPP_COL_TORCH_FIRST, in, n * sizeof *in);
    o->nargs = (uint8_t)(OPP_COL_TORCH_FIRST + n);
    o->recorded = (uint8_t)opp_enter(&o->f, OPP_FN_torch_op);
    /* the external correlation id, last: kernels launched inside are the op's */
    o->a[o->nargs++] = o->recorded && opp_extcorr_on ? opp_extcorr_push() : 0;
}

static void pop_at(uint32_t i)
{
    struct open_op *o = &T->s[i];
    if (o->recorded) {
        if (o->a[o->nargs - 1])
            opp_extcorr_pop();
        opp_leave(&o->f, o->a, o->nargs);
    }
    uint8_t step = o->step;
    T->depth--;
    if (i < T->depth) /* ended out of order: the ones above move down */
        memmove(&T->s[i], &T->s[i + 1], (T->depth - i) * sizeof *o);
    if (step != STEP_NONE)
        opp_step_mark();
}

static void callbacks_set(void);
int opp_torch_paused_off; /* `opprof ctl stop` seen: torch's callbacks off until it ends */

static void op_enter(const void *key, const char *name, unsigned scope, const uint64_t *in,
                     unsigned n, unsigned ninputs)
{
    if (opp_tls.state == OPP_T_OFF || !mine()) /* our own threads, or inside our code */
        return;
    uint8_t step = opp_step_torch ? step_kind(key, name) : STEP_NONE;
    if (OPP_UNLIKELY(!opp_capture_open())) {
        const struct opp_ring_hdr *r = opp_tls.ring;
        int paused = r && atomic_load_explicit(&r->paused, memory_order_relaxed);
        if (paused != __atomic_load_n(&opp_torch_paused_off, __ATOMIC_RELAXED)) {
            __atomic_store_n(&opp_torch_paused_off, paused, __ATOMIC_RELAXED);
            callbacks_set();
        }
        if (!step)
            return; /* nothing to record, no step to mark */
        push(key, 0, scope, NULL, 0, 0, step);
        return;
    }
    uint32_t id = name ? opp_str_id(name, strnlen(name, OPP_NAME_STR_MAX)) : 0;
    push(key, id, scope, in, n, ninputs, step);
}

/* After an allocation (torch/memory.c): `opprof ctl start` ended a pause
 * that turned torch's callbacks off; they come back. */
void opp_torch_unpaused(void)
{
    if (__atomic_load_n(&opp_torch_paused_off, __ATOMIC_RELAXED)) {
        __atomic_store_n(&opp_torch_paused_off, 0, __ATOMIC_RELAXED);
        callbacks_set();
    }
}

static void op_leave(const void *key)
{
    if (opp_tls.state == OPP_T_OFF || !T)
        return;
    if (T->depth > STACK_MAX) { /* one of the uncounted deep ones */
        T->depth--;
        return;
    }
    for (uint32_t i = T->depth; i-- > 0;)
        if (T->s[i].key == key) {
            pop_at(i);
            return;
        }
    /* began on another thread or before we attached: nothing open here */
}

static struct opp_torch_api api = {OPP_TORCH_API_VERSION, op_enter, op_leave, 1};

/* Nothing records (a closed capture window, or `opprof ctl stop`, which
 * the first op after it sees in its ring): torch's callbacks go off, so
 * ops cost what they cost without us; with OPPROF_STEP=torch a callback
 * for labels alone stays, to see the optimizer steps that open the next
 * window. The next allocation sees a pause end. */
static void callbacks_set(void)
{
    int on = __atomic_load_n(&opp_capturing, __ATOMIC_RELAXED) &&
             !__atomic_load_n(&opp_torch_paused_off, __ATOMIC_RELAXED);
    if (shim_enable)
        shim_enable(on ? OPP_TORCH_ALL : opp_step_torch ? OPP_TORCH_LABELS : OPP_TORCH_NONE);
}

static void capture_changed(int on)
{
    (void)on;
    callbacks_set();
}

/* ---- Python frames in code stacks (OPPROF_STACKS) ---- */

/* The calling thread's Python frames as OPP_STACK_PY words, innermost
 * first: each named "file(line): function" (torch's with_stack format)
 * once per thread and place, through a small cache. */
static int python_frames(uint64_t *out, int max)
{
    struct tstate *t = mine();
    if (!t || max <= 0)
        return 0;
    struct opp_pyframe f[OPP_GPU_FIELDS_MAX];
    int n = pyframes(f, max < (int)OPP_GPU_FIELDS_MAX ? max : (int)OPP_GPU_FIELDS_MAX);
    int k = 0;
    for (int i = 0; i < n; i++) {
        unsigned h = (unsigned)(((uintptr_t)f[i].code >> 4) ^ (uintptr_t)f[i].line * 2654435761u) %
                     PYCACHE;
        if (t->py[h].code != f[i].code || t->py[h].line != f[i].line || !t->py[h].id) {
            char buf[OPP_NAME_MAX * 2];
            int len = snprintf(buf, sizeof buf, "%s(%d): %s", f[i].file, f[i].line, f[i].func);
            const char *py = strrchr(f[i].file, '/');
            uint32_t id = py && !strcmp(py, "/_opprof_torch.py") /* our module hooks: not shown */
                              ? UINT32_MAX
                              : opp_str_id(buf, len < (int)sizeof buf ? (size_t)len : sizeof buf - 1);
            if (!id)
                continue;
            t->py[h].code = f[i].code;
            t->py[h].line = f[i].line;
            t->py[h].id = id;
        }
        if (t->py[h].id != UINT32_MAX)
            out[k++] = OPP_STACK_PY | t->py[h].id;
    }
    return k;
}

/* ---- what Python calls (ctypes; python/sitecustomize.py) ---- */

/* Load the shim at path and register its callback: 0, or -1 after one
 * line on stderr (the program goes on; opprof keeps its library view). */
OPP_EXPORT int opprof_torch_attach(const char *path)
{
    if (attached)
        return 0;
    static int have_key;
    if (!have_key && pthread_key_create(&tkey, tstate_free)) {
        opp_agent_say("torch operators not recorded: ", "no thread key left", "; library calls only");
        return -1;
    }
    have_key = 1;
    char why[300] = "";
    void *h = path ? dlopen(path, RTLD_NOW | RTLD_LOCAL) : NULL;
    opp_torch_shim_init_t init = h ? (opp_torch_shim_init_t)dlsym(h, "opp_torch_shim_init") : NULL;
    if (!init) {
        const char *e = path ? dlerror() : "no shim for this torch";
        opp_agent_say("torch operators not recorded: ", e ? e : "the shim has no entry point",
                      "; library calls only");
        if (h)
            dlclose(h);
        return -1;
    }
    const char *shapes = getenv("OPPROF_TORCH_SHAPES");
    api.inputs = !(shapes && !strcmp(shapes, "0")); /* 0: names only, torch boxes no inputs */
    if (init(&api, why, sizeof why)) {
        opp_agent_say("torch operators not recorded: ", why, "; library calls only");
        return -1;
    }
    shim_enable = (opp_torch_shim_enable_t)dlsym(h, "opp_torch_shim_enable");
    if (opp_stacks_n) {
        opp_torch_shim_pyframes_t pf = (opp_torch_shim_pyframes_t)dlsym(h, "opp_torch_shim_pyframes");
        struct opp_pyframe probe[1];
        if (pf && pf(probe, 1) >= 0) {
            pyframes = pf;
            opp_object_range((const void *)pf, &opp_stack_skip_lo, &opp_stack_skip_hi);
            __atomic_store_n(&opp_stack_extra, python_frames, __ATOMIC_RELEASE);
        } else {
            opp_agent_say("OPPROF_STACKS: no Python frames (the torch shim was built without "
                          "Python's headers: install python3-dev)", NULL, NULL);
        }
    }
    attached = 1;
    __atomic_store_n(&opp_capture_changed, capture_changed, __ATOMIC_RELEASE);
    capture_changed(__atomic_load_n(&opp_capturing, __ATOMIC_RELAXED));
    return 0;
}

/* The string id of a module's name, given once per module. */
OPP_EXPORT uint32_t opprof_torch_name(const char *name)
{
    return name ? opp_str_id(name, strnlen(name, OPP_NAME_STR_MAX)) : 0;
}

/* An nn.Module's forward begins / ends on this thread. */
OPP_EXPORT void opprof_torch_module_enter(uint32_t name)
{
    if (opp_tls.state != OPP_T_OFF && mine())
        push(NULL, name, OPP_TORCH_SCOPE_MODULE, NULL, 0, 0,
             opp_step_torch ? step_kind(NULL, NULL) : STEP_NONE);
}

OPP_EXPORT void opprof_torch_module_leave(void)
{
    if (opp_tls.state == OPP_T_OFF || !T)
        return;
    if (T->depth > STACK_MAX) {
        T->depth--;
        return;
    }
    /* the innermost open module: ops a forward left open (an exception
     * skips torch's end callbacks too) are closed with it */
    for (uint32_t i = T->depth; i-- > 0;)
        if (!T->s[i].key) {
            while (T->depth > i + 1)
                pop_at(T->depth - 1);
            pop_at(i);
            return;
        }
}

/* The folder sitecustomize.py lives in, beside libopprof.so. */
OPP_EXPORT const char *opprof_torch_dir(void) { return self_dir; }

/* ---- the feature ---- */

/* A Python interpreter (by its executable's name) gets our folder first on
 * PYTHONPATH; sitecustomize.py takes it off again. */
static int is_python(void)
{
    char exe[PATH_MAX];
    ssize_t k = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (k <= 0)
        return 0;
    exe[k] = 0;
    const char *b = strrchr(exe, '/');
    return !strncmp(b ? b + 1 : exe, "python", 6);
}

static void torch_start(const char *self_path)
{
    const char *off = getenv("OPPROF_TORCH");
    if ((off && !strcmp(off, "0")) || !self_path || !is_python())
        return;
    const char *slash = strrchr(self_path, '/');
    size_t n = slash ? (size_t)(slash - self_path) : 0;
    if (n + sizeof "/python" > sizeof self_dir)
        return;
    memcpy(self_dir, self_path, n);
    memcpy(self_dir + n, "/python", sizeof "/python");
    const char *old = getenv("PYTHONPATH");
    size_t want = strlen(self_dir) + 2 + (old ? strlen(old) : 0);
    char *v = malloc(want);
    if (!v)
        return;
    snprintf(v, want, old && *old ? "%s:%s" : "%s", self_dir, old ? old : "");
    setenv("OPPROF_PYTHONPATH", old ? old : "", 1); /* what sitecustomize.py puts back */
    if (!old)
        setenv("OPPROF_PYTHONPATH_UNSET", "1", 1);
    setenv("PYTHONPATH", v, 1);
    free(v);
}

/* In a fork child: the ops the forking thread had open were recorded in
 * the parent's ring; their ends are not this process's to record. */
static void torch_forked(void)
{
    for (uint32_t i = 0; T && i < T->depth && i < STACK_MAX; i++)
        T->s[i].recorded = 0;
}

const struct opp_feature opp_feature_torch = {"torch", torch_start, torch_forked, NULL};
