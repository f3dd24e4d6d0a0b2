/* The Chrome export's calls (chrome.h): each a complete event in Kineto's
 * categories with its arguments, shapes and FLOPs, CPU allocations as
 * memory instants, the python_function slices of their code stacks, the
 * start of a launch's arrow to its GPU work. */
#include "exports/chrome.h"

#include <inttypes.h>
#include <string.h>

#include "exports/chrome_json.h"
#include "ops.h"

/* Kineto's categories: torch's labels are user annotations and its
 * nn.Module ranges python functions (as with_modules shows them). */
static const char *category(const char *lib, uint32_t kind, const uint64_t *a, uint32_t na)
{
    if (opp_kind_base(kind) == OPP_OP_NVTX)
        return "user_annotation";
    if (opp_kind_base(kind) == OPP_OP_TORCH && na > OPP_COL_TORCH_SCOPE)
        return a[OPP_COL_TORCH_SCOPE] == OPP_TORCH_SCOPE_USER     ? "user_annotation"
               : a[OPP_COL_TORCH_SCOPE] == OPP_TORCH_SCOPE_MODULE ? "python_function"
                                                                  : "cpu_op";
    if (!strcmp(lib, "cudart"))
        return "cuda_runtime";
    if (!strcmp(lib, "cuda"))
        return "cuda_driver";
    return "cpu_op";
}

/* A CPU allocation or free as Kineto writes torch's: an instant "[memory]"
 * on the thread, Device Type 0 (CPU), Device Id -1. A free's size is its
 * allocation's when that was read before it (events are read thread by
 * thread, so one freed on another thread may count 0: the report's CPU
 * Mem, from the whole model in time order, has it); Total Allocated is the
 * process's running sum in that order. */
static int cpu_memory(struct chrome *x, struct xproc *p, const struct opp_tr_event *e, uint64_t at,
                      const uint64_t *a, uint32_t na)
{
    if (na < OPP_COL_MEM_COLS)
        return 0;
    int64_t bytes = 0;
    if (a[OPP_COL_MEM_OP] == OPP_MEM_ALLOC) {
        bytes = (int64_t)a[OPP_COL_MEM_BYTES];
        if (opp_live_put(&x->blocks, p->proc, a[OPP_COL_MEM_ADDRESS], bytes))
            x->oom = 1;
    } else {
        int found;
        bytes = -opp_live_take(&x->blocks, p->proc, a[OPP_COL_MEM_ADDRESS], &found);
    }
    p->cpu_total += bytes;
    opp_chrome_begin_event(x);
    fprintf(x->out,
            "{\"ph\": \"i\", \"s\": \"t\", \"cat\": \"cpu_instant_event\", "
            "\"name\": \"[memory]\", \"pid\": %" PRIu32 ", \"tid\": %" PRIu32 ", \"ts\": ",
            p->cpid, e->tid);
    put_us(x->out, at, x->base_ns);
    fprintf(x->out,
            ", \"args\": {\"Device Type\": 0, \"Device Id\": -1, \"Addr\": %" PRIu64
            ", \"Bytes\": %" PRId64 ", \"Total Allocated\": %" PRId64 "}}",
            a[OPP_COL_MEM_ADDRESS], bytes, p->cpu_total);
    return ferror(x->out) ? -1 : 0;
}

/* A python_function slice ends (pyspans.h): thread is proc << 32 | tid
 * of the file being read. */
static int emit_pyspan(void *ctx, uint64_t thread, uint32_t frame, uint64_t begin, uint64_t end)
{
    struct chrome *x = ctx;
    const struct xproc *p = opp_chrome_proc(x, (uint32_t)(thread >> 32));
    const char *name = opp_chrome_str(x, (uint32_t)(thread >> 32), frame);
    if (!p)
        return 0;
    opp_chrome_begin_event(x);
    fprintf(x->out, "{\"ph\": \"X\", \"cat\": \"python_function\", \"name\": ");
    opp_json_str(x->out, name ? name : "?");
    fprintf(x->out, ", \"pid\": %" PRIu32 ", \"tid\": %" PRIu32 ", \"ts\": ", p->cpid,
            (uint32_t)thread);
    put_us(x->out, begin, x->base_ns);
    fputs(", \"dur\": ", x->out);
    put_us(x->out, end > begin ? end : begin, begin);
    fputs(", \"args\": {}}", x->out);
    return ferror(x->out) ? -1 : 0;
}

static int discard_pyspan(void *ctx, uint64_t thread, uint32_t frame, uint64_t begin, uint64_t end)
{
    (void)ctx, (void)thread, (void)frame, (void)begin, (void)end;
    return 0;
}

/* The call's Python frames, when its code stack has some, into the slices. */
static int python_frames(struct chrome *x, const struct opp_tr_event *e, uint64_t begin,
                         uint64_t end)
{
    uint64_t key = (uint64_t)(e->proc + x->base) << 32 | e->stack;
    const struct xpystack *ps;
    HASH_FIND(hh, x->pystacks, &key, sizeof key, ps);
    if (!ps)
        return 0;
    int rc = opp_pyspans_add(&x->spans, (uint64_t)e->proc << 32 | e->tid, ps->frame, ps->n, begin,
                             end, emit_pyspan, x);
    if (rc == -1 && !ferror(x->out))
        x->oom = 1;
    return rc;
}

int opp_chrome_event(void *ctx, const struct opp_tr_event *e)
{
    struct chrome *x = ctx;
    struct xproc *p = opp_chrome_proc(x, e->proc);
    uint64_t begin = opp_chrome_shifted(x, e->begin_ns), end = opp_chrome_shifted(x, e->end_ns);
    if (!opp_chrome_wanted(x, p) || e->fn >= p->nfuncs || begin < x->from_ns || begin >= x->to_ns)
        return 0;
    const struct xfunc *fn = &p->funcs[e->fn];
    uint32_t base = opp_kind_base(fn->kind);
    const uint64_t *a = e->args;
    uint32_t na = opp_op_args(fn->kind, &a, e->nargs);
    if (base == OPP_OP_MEMORY)
        return cpu_memory(x, p, e, begin, a, na);
    char name[OPP_NAME_STR_MAX + 300];
    const char *nm = name;
    if (base == OPP_OP_NVTX && na > OPP_COL_NVTX_MSG) {
        uint64_t dom = na > OPP_COL_NVTX_DOMAIN ? a[OPP_COL_NVTX_DOMAIN] : 0;
        opp_nvtx_label(name, sizeof name, dom ? opp_chrome_str(x, e->proc, dom) : NULL,
                       opp_chrome_str(x, e->proc, a[OPP_COL_NVTX_MSG]));
    } else if (base == OPP_OP_TORCH && na > OPP_COL_TORCH_NAME) {
        const char *tn = opp_chrome_str(x, e->proc, a[OPP_COL_TORCH_NAME]);
        nm = tn ? tn : "(unnamed op)";
    } else if (!opp_op_label(fn->kind, e->args, e->nargs, fn->lib, fn->name, name, sizeof name))
        nm = fn->name;
    if (e->flags & OPP_EV_OPEN) /* died inside: it lasted until the process ended */
        end = p->end_ns > begin ? p->end_ns : x->last_ns;
    if (e->stack && x->pystacks && python_frames(x, e, begin, end))
        return -1;
    FILE *f = x->out;
    opp_chrome_begin_event(x);
    struct sb b;
    sb_init(&b);
    SB_LIT(&b, "{\"ph\": \"X\", \"cat\": \"");
    sb_str(&b, category(fn->lib, fn->kind, a, na));
    SB_LIT(&b, "\", \"name\": ");
    sb_json(&b, f, nm);
    SB_LIT(&b, ", \"pid\": ");
    sb_u64(&b, p->cpid);
    SB_LIT(&b, ", \"tid\": ");
    sb_u64(&b, e->tid);
    SB_LIT(&b, ", \"ts\": ");
    sb_us(&b, begin, x->base_ns);
    SB_LIT(&b, ", \"dur\": ");
    sb_us(&b, end > begin ? end : begin, begin);
    SB_LIT(&b, ", \"args\": {\"lib\": ");
    sb_json(&b, f, fn->lib);
    int cuda_api = base == OPP_OP_CUDA_API && e->nargs > OPP_COL_CUDA_CBID;
    if (cuda_api) {
        SB_LIT(&b, ", \"correlation\": ");
        sb_u64(&b, e->args[OPP_COL_CUDA_CORR]);
        SB_LIT(&b, ", \"cbid\": ");
        sb_u64(&b, e->args[OPP_COL_CUDA_CBID]);
    }
    if (cuda_api || (fn->kind & OPP_OPK_STATUS && e->nargs)) {
        SB_LIT(&b, ", \"status\": ");
        sb_i64(&b, opp_op_status(fn->kind, e->args, e->nargs));
    }
    struct opp_shapes s;
    opp_op_shapes(fn->kind, e->args, e->nargs, &s);
    if (s.n) {
        SB_LIT(&b, ", \"Input Dims\": ");
        sb_shapes(&b, &s);
        uint32_t dt = opp_op_dtype(fn->kind, fn->dtype, e->args, e->nargs);
        if (dt) {
            SB_LIT(&b, ", \"Input type\": \"");
            sb_str(&b, opp_dtype_name(dt));
            SB_LIT(&b, "\"");
        }
    }
    uint64_t flops = opp_op_flops(fn->kind, fn->dtype, e->args, e->nargs);
    if (flops) {
        SB_LIT(&b, ", \"flops\": ");
        sb_u64(&b, flops);
    }
    fwrite(b.buf, 1, (size_t)(b.p - b.buf), f);
    const char *coll = base == OPP_OP_COLL && na > OPP_COL_COLL_OP
                           ? opp_coll_name((uint32_t)a[OPP_COL_COLL_OP])
                           : NULL;
    if (coll) {
        fprintf(f, ", \"Collective name\": \"%s\"", coll);
        uint64_t bytes = opp_op_bytes(fn->kind, e->args, e->nargs);
        if (bytes)
            fprintf(f, ", \"In msg nelems\": %" PRIu64 ", \"bytes\": %" PRIu64,
                    a[OPP_COL_COLL_COUNT], bytes);
        if (na > OPP_COL_COLL_NRANKS)
            fprintf(f, ", \"Group size\": %" PRIu64, a[OPP_COL_COLL_NRANKS]);
    }
    if (e->flags & OPP_EV_OPEN)
        fputs(", \"unfinished\": true", f);
    fputs("}}", f);
    uint64_t corr =
        base == OPP_OP_CUDA_API && e->nargs > OPP_COL_CUDA_CORR ? e->args[OPP_COL_CUDA_CORR] : 0;
    if (corr && opp_bits_has(&p->has_gpu, corr)) {
        /* launch -> GPU work arrow: ids of different processes kept apart */
        opp_chrome_begin_event(x);
        fprintf(f,
                "{\"ph\": \"s\", \"cat\": \"ac2g\", \"name\": \"ac2g\", \"id\": %" PRIu64
                ", \"pid\": %" PRIu32 ", \"tid\": %" PRIu32 ", \"ts\": ",
                opp_chrome_flow_id(p->proc, corr), p->cpid, e->tid);
        put_us(f, begin, x->base_ns);
        fputs("}", f);
    }
    return ferror(f) ? -1 : 0;
}

int opp_chrome_pyspans_end(struct chrome *x)
{
    return opp_pyspans_flush(&x->spans, emit_pyspan, x);
}

void opp_chrome_pyspans_drop(struct chrome *x)
{
    opp_pyspans_flush(&x->spans, discard_pyspan, NULL);
}
