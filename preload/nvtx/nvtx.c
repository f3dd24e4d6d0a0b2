/* NVTX annotations: libopprof.so is the process's NVTX injection library
 * (InitializeInjectionNvtx2, found through NVTX_INJECTION64_PATH, which its
 * start sets). Ranges become operators of kind NVTX in the thread's
 * tree, like torch.profiler's record_function: push/pop through
 * opp_enter/opp_leave, start/end ranges and marks through opp_record_at.
 * Arguments: message id, domain id (0: default), category, payload,
 * payload type (string ids, core/internal.h). Only built with the CUDA toolkit's headers. */
#include "core/internal.h"

#ifdef OPP_HAVE_CUDA

#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <wchar.h>

#define NVTX_NO_IMPL /* types and the injection interface only */
#include <nvtx3/nvToolsExt.h>

#include "gpu.h"

#define NARGS OPP_COL_NVTX_COLS
/* Push/pop ranges open per thread in its TLS; deeper ones on the heap.
 * Few: the static TLS of a preloaded library comes out of every thread's
 * stack, and a thread made with a small one must keep room for its own. */
#define STACK_INLINE 16u
#define OPEN_MAX (1u << 12) /* start/end ranges in flight in the process */
#define WBUF 1024           /* bytes of UTF-8 kept of a wide-char string */

/* ---- per-thread push/pop stack ---- */

struct pushed {
    struct opp_frame f;
    uint64_t a[NARGS];
    uint32_t domain;
    uint8_t recorded; /* f is open in the thread's ring */
    uint8_t ended;    /* popped while ranges of other domains above it were open */
    uint8_t step;     /* it began a step (OPPROF_STEP=nvtx:NAME) */
};

static __thread struct {
    uint32_t depth;    /* entries in s */
    uint32_t cap;      /* entries s holds: 0 before the thread's first push */
    uint32_t overflow; /* pushes beyond a stack that could not grow, not yet popped */
    struct pushed *s;  /* in, or on the heap while the thread is deeper */
    struct pushed in[STACK_INLINE];
} nvtx_stack __attribute__((tls_model("initial-exec")));

/* ---- start/end ranges: any thread may end them ---- */

struct open_range {
    _Atomic uint64_t id; /* 0: free, BUSY: being filled */
    _Atomic uint64_t begin;
    _Atomic uint64_t a[NARGS];
};
#define BUSY UINT64_MAX
static struct open_range opened[OPEN_MAX];
static _Atomic uint64_t next_range;

/* ---- strings ---- */

static uint32_t ascii_id(const char *s) { return s ? opp_str_id(s, strnlen(s, OPP_NAME_STR_MAX)) : 0; }

/* wchar_t (UTF-32 on Linux) to UTF-8; invalid code points become U+FFFD. */
static size_t to_utf8(const wchar_t *w, char *out, size_t cap)
{
    size_t n = 0;
    for (; *w; w++) {
        uint32_t c = (uint32_t)*w;
        char b[4];
        size_t k;
        if (c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
            c = 0xfffd;
        if (c < 0x80) {
            b[0] = (char)c;
            k = 1;
        } else if (c < 0x800) {
            b[0] = (char)(0xc0 | c >> 6);
            b[1] = (char)(0x80 | (c & 0x3f));
            k = 2;
        } else if (c < 0x10000) {
            b[0] = (char)(0xe0 | c >> 12);
            b[1] = (char)(0x80 | (c >> 6 & 0x3f));
            b[2] = (char)(0x80 | (c & 0x3f));
            k = 3;
        } else {
            b[0] = (char)(0xf0 | c >> 18);
            b[1] = (char)(0x80 | (c >> 12 & 0x3f));
            b[2] = (char)(0x80 | (c >> 6 & 0x3f));
            b[3] = (char)(0x80 | (c & 0x3f));
            k = 4;
        }
        if (n + k > cap)
            break;
        memcpy(out + n, b, k);
        n += k;
    }
    return n;
}

static uint32_t wide_id(const wchar_t *w)
{
    if (!w)
        return 0;
    char buf[WBUF];
    return opp_str_id(buf, to_utf8(w, buf, sizeof buf));
}

/* Handles we give out are string ids: no allocation, nothing to free. */
static uint32_t handle_id(const void *h)
{
    uintptr_t v = (uintptr_t)h;
    return v >= OPP_STR_PRELOAD && v <= UINT32_MAX ? (uint32_t)v : 0;
}

/* Whether this thread records at all (attaching it if new). A thread
 * holding its parent's ring (its fork ran no atfork handler) forgets the
 * parent's ranges first. */
static int recording(void)
{
    opp_thread_check();
    return opp_tls.ring || opp_tls.state == OPP_T_NEW;
}

/* A range's columns: its message and domain, no category or payload. */
static void args_msg(uint64_t *a, uint32_t domain, uint32_t msg)
{
    a[OPP_COL_NVTX_MSG] = msg;
    a[OPP_COL_NVTX_DOMAIN] = domain;
    a[OPP_COL_NVTX_CATEGORY] = a[OPP_COL_NVTX_PAYLOAD] = a[OPP_COL_NVTX_PAYLOAD_TYPE] = 0;
}

static void args_ascii(uint64_t *a, uint32_t domain, const char *msg)
{
    args_msg(a, domain, ascii_id(msg));
}

static void args_wide(uint64_t *a, uint32_t domain, const wchar_t *msg)
{
    args_msg(a, domain, wide_id(msg));
}

/* The fields of an attribute struct that its size says are there. */
#define HAS(attr, field)                                                                           \
    ((attr)->size >= offsetof(nvtxEventAttributes_t, field) + sizeof((attr)->field))

static void args_attr(uint64_t *a, uint32_t domain, const nvtxEventAttributes_t *e)
{
    args_msg(a, domain, 0);
    if (!e)
        return;
    if (HAS(e, category))
        a[OPP_COL_NVTX_CATEGORY] = e->category;
    if (HAS(e, payload)) {
        switch (e->payloadType) {
        case NVTX_PAYLOAD_TYPE_UNSIGNED_INT64:
        case NVTX_PAYLOAD_TYPE_INT64:
        case NVTX_PAYLOAD_TYPE_DOUBLE:
            a[OPP_COL_NVTX_PAYLOAD] = e->payload.ullValue;
            break;
        case NVTX_PAYLOAD_TYPE_UNSIGNED_INT32:
            a[OPP_COL_NVTX_PAYLOAD] = e->payload.uiValue;
            break;
        case NVTX_PAYLOAD_TYPE_INT32:
            a[OPP_COL_NVTX_PAYLOAD] = (uint64_t)(int64_t)e->payload.iValue;
            break;
        case NVTX_PAYLOAD_TYPE_FLOAT: {
            double d = e->payload.fValue; /* recorded as a double's bits */
            memcpy(&a[OPP_COL_NVTX_PAYLOAD], &d, sizeof d);
            break;
        }
        default:
            break; /* unknown or extended payloads: not recorded */
        }
        if (a[OPP_COL_NVTX_PAYLOAD] || (e->payloadType >= 1 && e->payloadType <= 6))
            a[OPP_COL_NVTX_PAYLOAD_TYPE] = e->payloadType == NVTX_PAYLOAD_TYPE_FLOAT ? NVTX_PAYLOAD_TYPE_DOUBLE
                                                             : (uint64_t)e->payloadType;
    }
    if (HAS(e, message)) {
        switch (e->messageType) {
        case NVTX_MESSAGE_TYPE_ASCII:
            a[OPP_COL_NVTX_MSG] = ascii_id(e->message.ascii);
            break;
        case NVTX_MESSAGE_TYPE_UNICODE:
            a[OPP_COL_NVTX_MSG] = wide_id(e->message.unicode);
            break;
        case NVTX_MESSAGE_TYPE_REGISTERED:
            a[OPP_COL_NVTX_MSG] = handle_id(e->message.registered);
            break;
        default:
            break;
        }
    }
}

/* ---- push/pop ---- */

/* A thread that ends deeper than its inline entries: its heap stack
 * freed (given to the key when it grew), the thread's ranges gone. */
static pthread_key_t heap_key;
static int have_heap_key;

static void heap_free(void *p)
{
    free(p);
    nvtx_stack.s = nvtx_stack.in;
    nvtx_stack.cap = STACK_INLINE;
    nvtx_stack.depth = nvtx_stack.overflow = 0;
}

static void heap_key_make(void)
{
    have_heap_key = pthread_key_create(&heap_key, heap_free) == 0;
}

/* Room for one more range, the thread at the depth its stack holds: the
 * stack first set to its inline entries, then grown on the heap. */
static __attribute__((noinline, cold)) int stack_room(void)
{
    static int said;
    if (nvtx_stack.overflow) /* deeper than a stack that could not grow */
        return 0;
    if (!nvtx_stack.cap) {
        nvtx_stack.s = nvtx_stack.in;
        nvtx_stack.cap = STACK_INLINE;
        return 1;
    }
    struct pushed *s = opp_stack_grow(nvtx_stack.s, nvtx_stack.cap, nvtx_stack.in, sizeof *s, &said,
                                      "NVTX ranges nested deeper than ");
    if (!s)
        return 0;
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, heap_key_make);
    if (have_heap_key)
        pthread_setspecific(heap_key, s);
    nvtx_stack.s = s;
    nvtx_stack.cap *= 2;
    return 1;
}

/* Back to the inline entries once the thread's ranges are all popped. */
static __attribute__((noinline, cold)) void stack_shrink(void)
{
    if (have_heap_key)
        pthread_setspecific(heap_key, NULL);
    free(nvtx_stack.s);
    nvtx_stack.s = nvtx_stack.in;
    nvtx_stack.cap = STACK_INLINE;
}

/* a: NULL when the thread does not record. Returns the new range's level. */
static int push(const uint64_t *a, uint32_t domain)
{
    uint32_t d = nvtx_stack.depth;
    if (OPP_UNLIKELY(d >= nvtx_stack.cap) && !stack_room()) {
        nvtx_stack.overflow++;
        return (int)(d + nvtx_stack.overflow - 1);
    }
    struct pushed *p = &nvtx_stack.s[d];
    p->domain = domain;
    p->ended = 0;
    p->step = OPP_UNLIKELY(opp_step_msg) && a && (uint32_t)a[OPP_COL_NVTX_MSG] == opp_step_msg;
    if (p->step)
        opp_step_mark(); /* a step begins with this range (OPPROF_STEP=nvtx:NAME) */
    p->recorded = a ? (uint8_t)opp_enter(&p->f, OPP_FN_nvtx_range) : 0;
    if (p->recorded) {
        memcpy(p->a, a, sizeof p->a);
        opp_enter_named(&p->f, a[OPP_COL_NVTX_MSG], a[OPP_COL_NVTX_DOMAIN]);
    }
    nvtx_stack.depth = d + 1;
    return (int)d;
}

/* Whether p's frame is still good: the ring is gone once the thread is
 * ending (its key destructor ran) or in the child of fork(). */
static int live(const struct pushed *p) { return p->recorded && p->f.r == opp_tls.ring; }

/* Ends the innermost range of the domain (each domain nests on its own);
 * returns its level, or -1 when there is none. */
static int pop(uint32_t domain)
{
    opp_thread_check();
    if (nvtx_stack.overflow) {
        nvtx_stack.overflow--;
        return (int)(nvtx_stack.depth + nvtx_stack.overflow);
    }
    uint32_t d = nvtx_stack.depth;
    while (d > 0 && (nvtx_stack.s[d - 1].domain != domain || nvtx_stack.s[d - 1].ended))
        d--;
    if (d == 0)
        return -1;
    struct pushed *p = &nvtx_stack.s[d - 1];
    if (p->step)
        opp_step_range_end(opp_now());
    if (d < nvtx_stack.depth) {
        /* Ranges of other domains pushed after it are still open: record
         * it now, keep its place (the thread's depth unwinds past it when
         * they end). */
        if (live(p))
            opp_record_at(OPP_FN_nvtx_range, p->f.begin, opp_now(), p->a, NARGS);
        p->ended = 1;
        return (int)(d - 1);
    }
    if (live(p))
        opp_leave(&p->f, p->a, NARGS);
    nvtx_stack.depth = --d;
    int level = (int)d;
    /* Ranges ended out of order below it: now the thread's depth returns
     * to where it was when they began. */
    while (d > 0 && nvtx_stack.s[d - 1].ended) {
        p = &nvtx_stack.s[--d];
        if (live(p)) {
            OPP_BARRIER();
            p->f.r->depth = p->f.depth;
        }
        nvtx_stack.depth = d;
    }
    if (OPP_UNLIKELY(nvtx_stack.cap > STACK_INLINE) && !nvtx_stack.depth)
        stack_shrink();
    return level;
}

/* ---- start/end ---- */

static nvtxRangeId_t start(const uint64_t *a)
{
    uint64_t id = atomic_fetch_add_explicit(&next_range, 1, memory_order_relaxed) + 1;
    if (!a)
        return id;
    if (OPP_UNLIKELY(opp_step_msg) && (uint32_t)a[OPP_COL_NVTX_MSG] == opp_step_msg)
        opp_step_mark();
    if (!opp_capture_open())
        return id; /* outside a capture window: not recorded when it ends */
    struct open_range *o = &opened[id & (OPEN_MAX - 1)];
    uint64_t free_ = 0;
    /* A slot still held by a range never ended: this one is not recorded. */
    if (!atomic_compare_exchange_strong(&o->id, &free_, BUSY))
        return id;
    atomic_store_explicit(&o->begin, opp_now(), memory_order_relaxed);
    for (int i = 0; i < NARGS; i++)
        atomic_store_explicit(&o->a[i], a[i], memory_order_relaxed);
    atomic_store_explicit(&o->id, id, memory_order_release);
    return id;
}

/* Recorded on the thread that ends it: a ring has one writer, its thread. */
static void end(nvtxRangeId_t id)
{
    if (id == 0 || id == BUSY)
        return;
    opp_fork_check(); /* a child whose fork ran no atfork handler: the ranges are its parent's */
    struct open_range *o = &opened[id & (OPEN_MAX - 1)];
    if (atomic_load_explicit(&o->id, memory_order_acquire) != id)
        return; /* never started, already ended, or not recorded */
    uint64_t t = opp_now();
    uint64_t begin = atomic_load_explicit(&o->begin, memory_order_relaxed);
    uint64_t a[NARGS];
    for (int i = 0; i < NARGS; i++)
        a[i] = atomic_load_explicit(&o->a[i], memory_order_relaxed);
    uint64_t want = id;
    if (!atomic_compare_exchange_strong(&o->id, &want, 0))
        return; /* another thread ended it first */
    if (OPP_UNLIKELY(opp_step_msg) && (uint32_t)a[OPP_COL_NVTX_MSG] == opp_step_msg)
        opp_step_range_end(t);
    opp_record_at(OPP_FN_nvtx_range, begin, t > begin ? t : begin, a, NARGS);
}

static void mark(const uint64_t *a)
{
    if (!opp_capture_open())
        return; /* outside a capture window */
    uint64_t t = opp_now();
    opp_record_at(OPP_FN_nvtx_mark, t, t, a, NARGS);
}

/* ---- the callbacks ---- */

#define WITH_ARGS(fill)                                                                            \
    uint64_t a_[NARGS];                                                                            \
    const uint64_t *a = NULL;                                                                      \
    if (recording()) {                                                                             \
        fill;                                                                                      \
        a = a_;                                                                                    \
    }

static void NVTX_API cb_mark_ex(const nvtxEventAttributes_t *e)
{
    WITH_ARGS(args_attr(a_, 0, e));
    if (a)
        mark(a);
}
static void NVTX_API cb_mark_a(const char *s)
{
    WITH_ARGS(args_ascii(a_, 0, s));
    if (a)
        mark(a);
}
static void NVTX_API cb_mark_w(const wchar_t *s)
{
    WITH_ARGS(args_wide(a_, 0, s));
    if (a)
        mark(a);
}
static nvtxRangeId_t NVTX_API cb_start_ex(const nvtxEventAttributes_t *e)
{
    WITH_ARGS(args_attr(a_, 0, e));
    return start(a);
}
static nvtxRangeId_t NVTX_API cb_start_a(const char *s)
{
    WITH_ARGS(args_ascii(a_, 0, s));
    return start(a);
}
static nvtxRangeId_t NVTX_API cb_start_w(const wchar_t *s)
{
    WITH_ARGS(args_wide(a_, 0, s));
    return start(a);
}
static void NVTX_API cb_end(nvtxRangeId_t id) { end(id); }
static int NVTX_API cb_push_ex(const nvtxEventAttributes_t *e)
{
    WITH_ARGS(args_attr(a_, 0, e));
    return push(a, 0);
}
static int NVTX_API cb_push_a(const char *s)
{
    WITH_ARGS(args_ascii(a_, 0, s));
    return push(a, 0);
}
static int NVTX_API cb_push_w(const wchar_t *s)
{
    WITH_ARGS(args_wide(a_, 0, s));
    return push(a, 0);
}
static int NVTX_API cb_pop(void) { return pop(0); }
static void NVTX_API cb_name_category_a(uint32_t c, const char *s) {}
static void NVTX_API cb_name_category_w(uint32_t c, const wchar_t *s) {}

/* The report shows the name of the thread's ring (as pthread_setname_np
 * does, at most 15 bytes, cut at a character boundary). Only the calling
 * thread can be named: another thread's id is ignored. */
static void name_thread(uint32_t tid, const char *s, size_t n)
{
    if (!s || !recording() || tid != (uint32_t)syscall(SYS_gettid))
        return;
    struct opp_ring_hdr *r = opp_thread_ring();
    if (r)
        opp_thread_rename(r, s, n);
}
static void NVTX_API cb_name_thread_a(uint32_t tid, const char *s)
{
    name_thread(tid, s, s ? strnlen(s, 64) : 0);
}
static void NVTX_API cb_name_thread_w(uint32_t tid, const wchar_t *s)
{
    char buf[64];
    if (s)
        name_thread(tid, buf, to_utf8(s, buf, sizeof buf));
}

static void NVTX_API cb_dom_mark_ex(nvtxDomainHandle_t d, const nvtxEventAttributes_t *e)
{
    WITH_ARGS(args_attr(a_, handle_id(d), e));
    if (a)
        mark(a);
}
static nvtxRangeId_t NVTX_API cb_dom_start_ex(nvtxDomainHandle_t d, const nvtxEventAttributes_t *e)
{
    WITH_ARGS(args_attr(a_, handle_id(d), e));
    return start(a);
}
static void NVTX_API cb_dom_end(nvtxDomainHandle_t d, nvtxRangeId_t id) { end(id); }
static int NVTX_API cb_dom_push_ex(nvtxDomainHandle_t d, const nvtxEventAttributes_t *e)
{
    WITH_ARGS(args_attr(a_, handle_id(d), e));
    return push(a, handle_id(d));
}
static int NVTX_API cb_dom_pop(nvtxDomainHandle_t d) { return pop(handle_id(d)); }
static nvtxStringHandle_t NVTX_API cb_register_a(nvtxDomainHandle_t d, const char *s)
{
    return (nvtxStringHandle_t)(uintptr_t)ascii_id(s);
}
static nvtxStringHandle_t NVTX_API cb_register_w(nvtxDomainHandle_t d, const wchar_t *s)
{
    return (nvtxStringHandle_t)(uintptr_t)wide_id(s);
}
static nvtxDomainHandle_t NVTX_API cb_domain_a(const char *s)
{
    return (nvtxDomainHandle_t)(uintptr_t)ascii_id(s);
}
static nvtxDomainHandle_t NVTX_API cb_domain_w(const wchar_t *s)
{
    return (nvtxDomainHandle_t)(uintptr_t)wide_id(s);
}
static void NVTX_API cb_domain_destroy(nvtxDomainHandle_t d) {}

/* ---- installing them ---- */

struct cb {
    unsigned id;
    NvtxFunctionPointer fn;
};

#define CB(id, fn) {id, (NvtxFunctionPointer)(fn)}
static const struct cb core[] = {
    CB(NVTX_CBID_CORE_MarkEx, cb_mark_ex),
    CB(NVTX_CBID_CORE_MarkA, cb_mark_a),
    CB(NVTX_CBID_CORE_MarkW, cb_mark_w),
    CB(NVTX_CBID_CORE_RangeStartEx, cb_start_ex),
    CB(NVTX_CBID_CORE_RangeStartA, cb_start_a),
    CB(NVTX_CBID_CORE_RangeStartW, cb_start_w),
    CB(NVTX_CBID_CORE_RangeEnd, cb_end),
    CB(NVTX_CBID_CORE_RangePushEx, cb_push_ex),
    CB(NVTX_CBID_CORE_RangePushA, cb_push_a),
    CB(NVTX_CBID_CORE_RangePushW, cb_push_w),
    CB(NVTX_CBID_CORE_RangePop, cb_pop),
    CB(NVTX_CBID_CORE_NameCategoryA, cb_name_category_a),
    CB(NVTX_CBID_CORE_NameCategoryW, cb_name_category_w),
    CB(NVTX_CBID_CORE_NameOsThreadA, cb_name_thread_a),
    CB(NVTX_CBID_CORE_NameOsThreadW, cb_name_thread_w),
};
static const struct cb core2[] = {
    CB(NVTX_CBID_CORE2_DomainMarkEx, cb_dom_mark_ex),
    CB(NVTX_CBID_CORE2_DomainRangeStartEx, cb_dom_start_ex),
    CB(NVTX_CBID_CORE2_DomainRangeEnd, cb_dom_end),
    CB(NVTX_CBID_CORE2_DomainRangePushEx, cb_dom_push_ex),
    CB(NVTX_CBID_CORE2_DomainRangePop, cb_dom_pop),
    CB(NVTX_CBID_CORE2_DomainRegisterStringA, cb_register_a),
    CB(NVTX_CBID_CORE2_DomainRegisterStringW, cb_register_w),
    CB(NVTX_CBID_CORE2_DomainCreateA, cb_domain_a),
    CB(NVTX_CBID_CORE2_DomainCreateW, cb_domain_w),
    CB(NVTX_CBID_CORE2_DomainDestroy, cb_domain_destroy),
};
#undef CB

/* Fill the slots the table has (an older NVTX has fewer). 0 when it has none. */
static int install(const NvtxExportTableCallbacks *x, NvtxCallbackModule module, const struct cb *cbs,
                   size_t n)
{
    NvtxFunctionTable table = NULL;
    unsigned size = 0;
    if (!x->GetModuleFunctionTable(module, &table, &size) || !table)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (cbs[i].id < size && table[cbs[i].id])
            *table[cbs[i].id] = cbs[i].fn;
    return 1;
}

static int injected; /* our callbacks are installed somewhere */

/* The child of fork(): the ranges begun before it, the forking thread's
 * and the start/end ones, belong to the parent's rings and trace. */
static void nvtx_forked(void)
{
    if (injected)
        memset(opened, 0, sizeof opened);
}

static void nvtx_thread_forked(void)
{
    if (injected)
        nvtx_stack.depth = nvtx_stack.overflow = 0;
}

/* Called by each copy of NVTX in the process (every library embeds its
 * own) at its first call. 1: our callbacks are installed. */
OPP_EXPORT int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get)
{
    if (!get || !opp_agent_wanted())
        return 0; /* not profiled (an inherited NVTX_INJECTION64_PATH): NVTX stays a no-op */
    const NvtxExportTableCallbacks *x = get(NVTX_ETID_CALLBACKS);
    if (!x || x->struct_size < offsetof(NvtxExportTableCallbacks, GetModuleFunctionTable) +
                                   sizeof x->GetModuleFunctionTable ||
        !x->GetModuleFunctionTable)
        return 0;
    if (!install(x, NVTX_CB_MODULE_CORE, core, sizeof core / sizeof *core))
        return 0;
    injected = 1;
    install(x, NVTX_CB_MODULE_CORE2, core2, sizeof core2 / sizeof *core2);
    const NvtxExportTableVersionInfo *v = get(NVTX_ETID_VERSIONINFO);
    if (v && v->struct_size >= offsetof(NvtxExportTableVersionInfo, SetInjectionNvtxVersion) +
                                   sizeof v->SetInjectionNvtxVersion &&
        v->SetInjectionNvtxVersion)
        v->SetInjectionNvtxVersion(NVTX_VERSION);
    return 1;
}

/* ---- NVTX_INJECTION64_PATH ---- */

/* The feature's start: point NVTX_INJECTION64_PATH at us when it is unset;
 * when it names another library, keep it and say once that NVTX ranges
 * are not recorded. */
static void nvtx_start(const char *self_path)
{
    if (!self_path || !*self_path)
        return;
    const char *cur = getenv("NVTX_INJECTION64_PATH");
    if (!cur || !*cur) {
        setenv("NVTX_INJECTION64_PATH", self_path, 1);
        return;
    }
    char a[PATH_MAX], b[PATH_MAX];
    if (realpath(cur, a) && realpath(self_path, b) && !strcmp(a, b))
        return;
    opp_agent_say("NVTX ranges are not recorded because NVTX_INJECTION64_PATH is set to ", cur, "");
}

const struct opp_feature opp_feature_nvtx = {.name = "nvtx",
                                             .start = nvtx_start,
                                             .forked = nvtx_forked,
                                             .thread_forked = nvtx_thread_forked};

#else /* no CUDA toolkit at build time */

const struct opp_feature opp_feature_nvtx = {.name = "nvtx"};

#endif
