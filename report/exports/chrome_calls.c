/* The Chrome export's calls (chrome.h): each a complete event in Kineto's
 * categories with its arguments, shapes and FLOPs, CPU allocations as
 * memory instants, the python_function slices of their code stacks, the
 * start of a launch's arrow to its GPU work. */
#include "exports/chrome.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "analysis/symbolize.h"
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
 * on the thread, Device Type 0 (CPU), Device Id -1, its bytes as the
 * files' order sizes them (opp_cpu_mem_bytes_read); Total Allocated is
 * the process's running sum in that order. */
static int cpu_memory(struct chrome *x, const struct opp_pass_call *c, uint32_t pi,
                      const uint64_t *a, uint32_t na)
{
    if (na < OPP_COL_MEM_COLS)
        return 0;
    struct xproc *p = &x->procs[pi];
    int oom = 0;
    int64_t bytes = opp_cpu_mem_bytes_read(&x->blocks, pi, c->kind, c->args, c->nargs, &oom);
    if (oom)
        return -ENOMEM;
    p->cpu_total += bytes;
    opp_chrome_begin_event(x);
    fprintf(x->out,
            "{\"ph\": \"i\", \"s\": \"t\", \"cat\": \"cpu_instant_event\", "
            "\"name\": \"[memory]\", \"pid\": %" PRIu32 ", \"tid\": %" PRIu32 ", \"ts\": ",
            p->cpid, x->m->threads[c->thread].tid);
    put_us(x->out, c->begin, x->base_ns);
    fprintf(x->out,
            ", \"args\": {\"Device Type\": 0, \"Device Id\": -1, \"Addr\": %" PRIu64
            ", \"Bytes\": %" PRId64 ", \"Total Allocated\": %" PRId64 "}}",
            a[OPP_COL_MEM_ADDRESS], bytes, p->cpu_total);
    return ferror(x->out) ? -EIO : 0;
}

/* A python_function slice ends (pyspans.h): thread is the model's index. */
static int emit_pyspan(void *ctx, uint64_t thread, uint32_t frame, uint64_t begin, uint64_t end)
{
    struct chrome *x = ctx;
    const struct opp_thread *t = &x->m->threads[thread];
    opp_chrome_begin_event(x);
    fprintf(x->out, "{\"ph\": \"X\", \"cat\": \"python_function\", \"name\": ");
    opp_json_str(x->out, frame == UINT32_MAX ? "?" : opp_model_str(x->m, frame));
    fprintf(x->out,
            ", \"pid\": %" PRIu32 ", \"tid\": %" PRIu32 ", \"ts\": ", x->procs[t->proc].cpid,
            t->tid);
    put_us(x->out, begin, x->base_ns);
    fputs(", \"dur\": ", x->out);
    put_us(x->out, end > begin ? end : begin, begin);
    fputs(", \"args\": {}}", x->out);
    return ferror(x->out) ? -EIO : 0;
}

static int discard_pyspan(void *ctx, uint64_t thread, uint32_t frame, uint64_t begin, uint64_t end)
{
    (void)ctx, (void)thread, (void)frame, (void)begin, (void)end;
    return 0;
}

/* The call's Python frames, when its code stack has some, into the slices. */
static int python_frames(struct chrome *x, const struct opp_pass_call *c, uint32_t pi)
{
    uint32_t in[OPP_GPU_FIELDS_MAX], out[OPP_GPU_FIELDS_MAX];
    int n = opp_code_pyframes(x->m->code, pi, c->stack, in, OPP_GPU_FIELDS_MAX);
    if (!n)
        return 0;
    for (int i = 0; i < n; i++) /* outermost first */
        out[i] = in[n - 1 - i];
    int rc = opp_pyspans_add(&x->spans, c->thread, out, n, c->begin, c->end, emit_pyspan, x);
    return rc == -1 ? -ENOMEM : rc;
}

int opp_chrome_call(void *ctx, const struct opp_pass_call *c)
{
    struct chrome *x = ctx;
    uint32_t pi = x->m->threads[c->thread].proc;
    if (opp_chrome_reach(x, pi))
        return -EIO;
    uint64_t begin = c->begin, end = c->end;
    if (!opp_chrome_wanted(x, pi) || begin < x->from_ns || begin >= x->to_ns)
        return 0;
    struct xproc *p = &x->procs[pi];
    const struct opp_process *mp = &x->m->procs[pi];
    const struct opp_func *fn = &mp->funcs[c->fn];
    const char *lib = opp_model_str(x->m, fn->lib);
    uint32_t base = opp_kind_base(fn->kind);
    const uint64_t *a = c->args;
    uint32_t na = opp_op_args(fn->kind, &a, c->nargs);
    if (base == OPP_OP_MEMORY)
        return cpu_memory(x, c, pi, a, na);
    const char *nm = opp_model_str(x->m, c->name);
    int open = (c->flags & OPP_PASS_OPEN) != 0;
    int rc = c->stack ? python_frames(x, c, pi) : 0;
    if (rc)
        return rc;
    uint32_t tid = x->m->threads[c->thread].tid;
    FILE *f = x->out;
    opp_chrome_begin_event(x);
    struct sb b;
    sb_init(&b);
    SB_LIT(&b, "{\"ph\": \"X\", \"cat\": \"");
    sb_str(&b, category(lib, fn->kind, a, na));
    SB_LIT(&b, "\", \"name\": ");
    sb_json(&b, f, nm);
    SB_LIT(&b, ", \"pid\": ");
    sb_u64(&b, p->cpid);
    SB_LIT(&b, ", \"tid\": ");
    sb_u64(&b, tid);
    SB_LIT(&b, ", \"ts\": ");
    sb_us(&b, begin, x->base_ns);
    SB_LIT(&b, ", \"dur\": ");
    sb_us(&b, end > begin ? end : begin, begin);
    SB_LIT(&b, ", \"args\": {\"lib\": ");
    sb_json(&b, f, lib);
    int cuda_api = base == OPP_OP_CUDA_API && c->nargs > OPP_COL_CUDA_CBID;
    if (cuda_api) {
        SB_LIT(&b, ", \"correlation\": ");
        sb_u64(&b, c->args[OPP_COL_CUDA_CORR]);
        SB_LIT(&b, ", \"cbid\": ");
        sb_u64(&b, c->args[OPP_COL_CUDA_CBID]);
    }
    if (cuda_api || (fn->kind & OPP_OPK_STATUS && c->nargs)) {
        SB_LIT(&b, ", \"status\": ");
        sb_i64(&b, opp_op_status(fn->kind, c->args, c->nargs));
    }
    struct opp_shapes s;
    opp_op_shapes(fn->kind, c->args, c->nargs, &s);
    if (s.n) {
        SB_LIT(&b, ", \"Input Dims\": ");
        sb_shapes(&b, &s);
        uint32_t dt = opp_op_dtype(fn->kind, fn->dtype, c->args, c->nargs);
        if (dt) {
            SB_LIT(&b, ", \"Input type\": \"");
            sb_str(&b, opp_dtype_name(dt));
            SB_LIT(&b, "\"");
        }
    }
    uint64_t flops = opp_op_flops(fn->kind, fn->dtype, nm, c->args, c->nargs);
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
        uint64_t bytes = opp_op_bytes(fn->kind, c->args, c->nargs);
        if (bytes)
            fprintf(f, ", \"In msg nelems\": %" PRIu64 ", \"bytes\": %" PRIu64,
                    a[OPP_COL_COLL_COUNT], bytes);
        if (na > OPP_COL_COLL_NRANKS)
            fprintf(f, ", \"Group size\": %" PRIu64, a[OPP_COL_COLL_NRANKS]);
    }
    if (open)
        fputs(", \"unfinished\": true", f);
    fputs("}}", f);
    uint64_t corr =
        base == OPP_OP_CUDA_API && c->nargs > OPP_COL_CUDA_CORR ? c->args[OPP_COL_CUDA_CORR] : 0;
    if (corr && opp_bits_has(&p->has_gpu, corr)) {
        /* launch -> GPU work arrow: ids of different processes kept apart */
        opp_chrome_begin_event(x);
        fprintf(f,
                "{\"ph\": \"s\", \"cat\": \"ac2g\", \"name\": \"ac2g\", \"id\": %" PRIu64
                ", \"pid\": %" PRIu32 ", \"tid\": %" PRIu32 ", \"ts\": ",
                opp_chrome_flow_id(mp->proc, corr), p->cpid, tid);
        put_us(f, begin, x->base_ns);
        fputs("}", f);
    }
    return ferror(f) ? -EIO : 0;
}

int opp_chrome_pyspans_end(struct chrome *x)
{
    return opp_pyspans_flush(&x->spans, emit_pyspan, x);
}

int opp_chrome_reach(struct chrome *x, uint32_t pi)
{
    uint32_t file = opp_chrome_file(x, pi);
    if (file == x->cur)
        return 0;
    x->cur = file;
    memset(x->mem_total, 0, sizeof x->mem_total); /* another host's devices */
    return opp_chrome_pyspans_end(x);
}

void opp_chrome_pyspans_drop(struct chrome *x)
{
    opp_pyspans_flush(&x->spans, discard_pyspan, NULL);
}
