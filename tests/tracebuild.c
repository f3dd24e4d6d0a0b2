/* The trace builder of the suites (see tracebuild.h). */
#include "tracebuild.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "gpu.h"
#include "util.h"

#define TB_BUF (1u << 16)

static void gpu_reset(struct tb *b)
{
    opp_wbuf_init(&b->gpu, b->gpu_mem, TB_BUF);
    opp_put_u32(&b->gpu, 0); /* the count, patched when written */
    b->ngpu = 0;
}

void tb_gpu_chunk(struct tb *b)
{
    if (!b->ngpu)
        return;
    ck_assert_msg(!b->gpu.overflow, "GPU records past %u bytes", TB_BUF);
    memcpy(b->gpu_mem, &b->ngpu, 4);
    ck_assert_int_eq(opp_tw_gpu(&b->w, b->proc, b->gpu_mem, (uint32_t)b->gpu.len), 0);
    gpu_reset(b);
}

void tb_open(struct tb *b, const char *path)
{
    memset(b, 0, sizeof *b);
    char err[512];
    int rc = opp_tw_open(&b->w, path, err, sizeof err);
    ck_assert_msg(rc == 0, "%s", err);
    b->gpu_mem = malloc(TB_BUF);
    b->ev_mem = malloc(TB_BUF);
    ck_assert(b->gpu_mem && b->ev_mem);
    gpu_reset(b);
}

void tb_close(struct tb *b)
{
    tb_gpu_chunk(b);
    ck_assert_int_eq(opp_tw_close(&b->w), 0);
    free(b->gpu_mem);
    free(b->ev_mem);
    b->gpu_mem = NULL;
    b->ev_mem = NULL;
}

void tb_end(struct tb *b)
{
    tb_gpu_chunk(b);
    ck_assert_int_eq(opp_tw_end(&b->w, b->events, b->dropped, b->processes), 0);
    tb_close(b);
}

void tb_put_process(struct tb *b, const struct tb_process *p)
{
    tb_gpu_chunk(b);
    const char *exe_only[] = {p->exe, NULL};
    const char *const *argv = p->argv[0] ? p->argv : exe_only;
    uint32_t argc = 0;
    while (argc < 8 && argv[argc])
        argc++;
    struct opp_tw_process w = {.proc = p->proc, .pid = p->pid, .ppid = p->ppid,
                               .parent_proc = p->parent, .clock = p->clock,
                               .start_ticks = p->start, .start_real_ns = p->real, .exe = p->exe,
                               .argc = argc, .argv = argv};
    ck_assert_int_eq(opp_tw_process(&b->w, &w), 0);
    b->proc = p->proc;
    b->tid = 0;
    b->processes++;
}

void tb_put_funcs(struct tb *b, const struct opp_func_desc *f, uint32_t n)
{
    tb_gpu_chunk(b);
    ck_assert_int_eq(opp_tw_funcs(&b->w, b->proc, n, f), 0);
}

void tb_put_info(struct tb *b, const char *const *kv, uint32_t n)
{
    tb_gpu_chunk(b);
    ck_assert_uint_eq(n % 2, 0);
    uint8_t mem[4096];
    struct opp_wbuf w;
    opp_wbuf_init(&w, mem, sizeof mem);
    opp_put_u32(&w, n / 2);
    for (uint32_t i = 0; i < n; i++)
        opp_put_str(&w, kv[i], strlen(kv[i]));
    ck_assert(!w.overflow);
    ck_assert_int_eq(opp_tw_info(&b->w, b->proc, mem, (uint32_t)w.len), 0);
}

void tb_thread(struct tb *b, uint32_t tid, const char *name)
{
    b->tid = tid;
    if (!name)
        return;
    tb_gpu_chunk(b);
    ck_assert_int_eq(opp_tw_thread(&b->w, b->proc, tid, name), 0);
}

void tb_at(struct tb *b, uint32_t proc, uint32_t tid)
{
    tb_gpu_chunk(b);
    b->proc = proc;
    b->tid = tid;
}

void tb_dropped_why(struct tb *b, uint64_t count, uint32_t why)
{
    tb_gpu_chunk(b);
    ck_assert_int_eq(opp_tw_dropped(&b->w, b->proc, b->tid, count, why), 0);
    b->dropped += count;
}

void tb_dropped(struct tb *b, uint64_t count)
{
    tb_dropped_why(b, count, OPP_DROP_FULL);
}

void tb_process_end(struct tb *b, uint32_t proc, uint32_t how, uint64_t end_ticks)
{
    tb_gpu_chunk(b);
    ck_assert_int_eq(opp_tw_process_end(&b->w, proc, how, end_ticks), 0);
}

void tb_process_status(struct tb *b, uint32_t proc, uint32_t how, uint32_t code)
{
    tb_gpu_chunk(b);
    ck_assert_int_eq(opp_tw_process_status(&b->w, proc, how, code), 0);
}

void tb_clock(struct tb *b, uint64_t tsc, uint64_t mono_ns, uint64_t real_ns)
{
    tb_gpu_chunk(b);
    struct opp_clock_sample s = {.tsc = tsc, .mono_ns = mono_ns, .real_ns = real_ns};
    ck_assert_int_eq(opp_tw_clock(&b->w, &s), 0);
}

void tb_chunk(struct tb *b, uint32_t type, const void *payload, uint32_t size)
{
    tb_gpu_chunk(b);
    ck_assert_int_eq(opp_tw_chunk(&b->w, type, payload, size), 0);
}

/* ---- events ---- */

struct opp_ev_enc *tb_enc(struct tb *b, uint64_t base_end)
{
    opp_ev_begin(&b->enc, b->ev_mem, TB_BUF, b->proc, b->tid, base_end);
    return &b->enc;
}

void tb_enc_write(struct tb *b)
{
    tb_gpu_chunk(b);
    ck_assert(!b->enc.w.overflow);
    ck_assert_int_eq(opp_ev_write(&b->w, &b->enc), 0);
    b->events += b->enc.count;
}

void tb_put_events(struct tb *b, uint64_t base_end, const struct tb_ev *ev, size_t n)
{
    struct opp_ev_enc *e = tb_enc(b, base_end);
    for (size_t i = 0; i < n; i++)
        ck_assert_msg(opp_ev_add_stack(e, ev[i].fn, ev[i].flags, ev[i].begin, ev[i].end,
                                       ev[i].depth, ev[i].nargs, ev[i].args, ev[i].stack) == 0,
                      "event %zu of thread %u: not encoded (ends before the one before?)", i,
                      b->tid);
    tb_enc_write(b);
}

/* ---- GPU records ---- */

void tb_gpu(struct tb *b, struct opp_gpu_rec r)
{
    ck_assert_int_eq(opp_gpu_put(&b->gpu, &r), 0);
    b->ngpu++;
}

struct opp_wbuf *tb_gpu_raw(struct tb *b)
{
    b->ngpu++;
    return &b->gpu;
}

void tb_gpu_payload(struct tb *b, const void *payload, uint32_t size)
{
    tb_gpu_chunk(b);
    ck_assert_int_eq(opp_tw_gpu(&b->w, b->proc, payload, size), 0);
}

struct opp_gpu_rec tb_op_rec(uint32_t type, const struct tb_op *o)
{
    struct opp_gpu_rec r = {.type = type};
    uint64_t *f = r.f;
    f[OPP_GF_START] = o->start;
    f[OPP_GF_END] = type == OPP_GPU_MEMORY ? o->start : o->end;
    f[OPP_GF_DEVICE] = o->device;
    f[OPP_GF_CONTEXT] = o->context;
    f[OPP_GF_STREAM] = o->stream;
    f[OPP_GF_CORRELATION] = o->corr;
    switch (type) {
    case OPP_GPU_KERNEL:
        r.nfields = OPP_GF_K_COUNT;
        f[OPP_GF_K_NAME] = o->name;
        for (int i = 0; i < 3; i++) {
            f[OPP_GF_K_GRID_X + i] = o->grid[i];
            f[OPP_GF_K_BLOCK_X + i] = o->block[i];
        }
        f[OPP_GF_K_REGS] = o->regs;
        f[OPP_GF_K_STATIC_SMEM] = o->static_smem;
        f[OPP_GF_K_DYNAMIC_SMEM] = o->dynamic_smem;
        f[OPP_GF_K_GRAPH] = o->graph;
        f[OPP_GF_K_GRAPH_NODE] = o->graph_node;
        break;
    case OPP_GPU_MEMCPY:
        r.nfields = OPP_GF_C_COUNT;
        f[OPP_GF_C_BYTES] = o->bytes;
        f[OPP_GF_C_KIND] = o->kind;
        f[OPP_GF_C_SRC_KIND] = o->src_kind;
        f[OPP_GF_C_DST_KIND] = o->dst_kind;
        f[OPP_GF_C_GRAPH] = o->graph;
        break;
    case OPP_GPU_MEMSET:
        r.nfields = OPP_GF_S_COUNT;
        f[OPP_GF_S_BYTES] = o->bytes;
        f[OPP_GF_S_VALUE] = o->value;
        f[OPP_GF_S_MEM_KIND] = o->mem_kind;
        f[OPP_GF_S_GRAPH] = o->graph;
        break;
    case OPP_GPU_SYNC:
        r.nfields = OPP_GF_Y_COUNT;
        f[OPP_GF_Y_TYPE] = o->type;
        f[OPP_GF_Y_EVENT] = o->event;
        break;
    case OPP_GPU_MEMORY:
        r.nfields = OPP_GF_M_COUNT;
        f[OPP_GF_M_OP] = o->op;
        f[OPP_GF_M_MEM_KIND] = o->mem_kind;
        f[OPP_GF_M_ADDRESS] = o->address;
        f[OPP_GF_M_BYTES] = o->bytes;
        f[OPP_GF_M_ASYNC] = o->async;
        break;
    case OPP_GPU_OVERHEAD:
        r.nfields = OPP_GF_O_COUNT;
        f[OPP_GF_O_KIND] = o->kind;
        break;
    default:
        ck_abort_msg("GPU record type %u is not a timed one", type);
    }
    return r;
}

void tb_put_device(struct tb *b, const struct tb_device *d)
{
    struct opp_gpu_rec r = {.type = OPP_GPU_DEVICE, .nfields = OPP_GF_V_COUNT};
    r.f[OPP_GF_V_ID] = d->id;
    r.f[OPP_GF_V_NAME] = d->name;
    r.f[OPP_GF_V_CC_MAJOR] = d->cc_major;
    r.f[OPP_GF_V_CC_MINOR] = d->cc_minor;
    r.f[OPP_GF_V_SMS] = d->sms;
    r.f[OPP_GF_V_THREADS_PER_SM] = d->threads_per_sm;
    r.f[OPP_GF_V_REGS_PER_SM] = d->regs_per_sm;
    r.f[OPP_GF_V_SMEM_PER_SM] = d->smem_per_sm;
    r.f[OPP_GF_V_BLOCKS_PER_SM] = d->blocks_per_sm;
    r.f[OPP_GF_V_WARPS_PER_SM] = d->warps_per_sm;
    r.f[OPP_GF_V_THREADS_PER_BLOCK] = d->threads_per_block;
    r.f[OPP_GF_V_GLOBAL_MEM] = d->global_mem;
    tb_gpu(b, r);
}

void tb_string_n(struct tb *b, uint64_t id, const char *s, uint32_t len)
{
    struct opp_gpu_rec r = {.type = OPP_GPU_STRING, .nfields = 1, .str = s, .slen = len};
    r.f[0] = id;
    tb_gpu(b, r);
}

void tb_string(struct tb *b, uint64_t id, const char *s)
{
    tb_string_n(b, id, s, (uint32_t)strlen(s));
}

void tb_extcorr(struct tb *b, uint32_t kind, uint64_t external, uint64_t corr)
{
    struct opp_gpu_rec r = {.type = OPP_GPU_EXTCORR, .nfields = OPP_GF_X_COUNT};
    r.f[OPP_GF_X_KIND] = kind;
    r.f[OPP_GF_X_EXTERNAL] = external;
    r.f[OPP_GF_X_CORRELATION] = corr;
    tb_gpu(b, r);
}

void tb_gpu_dropped(struct tb *b, uint64_t cupti, uint64_t ours)
{
    struct opp_gpu_rec r = {.type = OPP_GPU_DROPPED, .nfields = OPP_GF_D_COUNT};
    r.f[OPP_GF_D_CUPTI] = cupti;
    r.f[OPP_GF_D_OURS] = ours;
    tb_gpu(b, r);
}

void tb_module(struct tb *b, uint64_t bias, uint64_t start, uint64_t end, uint64_t path)
{
    struct opp_gpu_rec r = {.type = OPP_GPU_MODULE, .nfields = OPP_GF_MD_COUNT};
    r.f[OPP_GF_MD_BIAS] = bias;
    r.f[OPP_GF_MD_START] = start;
    r.f[OPP_GF_MD_END] = end;
    r.f[OPP_GF_MD_PATH] = path;
    tb_gpu(b, r);
}

void tb_put_stack(struct tb *b, uint64_t id, const uint64_t *pcs, uint32_t n)
{
    ck_assert_uint_le(n, OPP_GPU_FIELDS_MAX - 1);
    struct opp_gpu_rec r = {.type = OPP_GPU_STACK, .nfields = 1 + n};
    r.f[OPP_GF_ST_ID] = id;
    memcpy(&r.f[OPP_GF_ST_PC0], pcs, n * sizeof *pcs);
    tb_gpu(b, r);
}

void tb_set_version(const char *path, uint32_t v)
{
    FILE *f = fopen(path, "rb");
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(fseek(f, 0, SEEK_END), 0);
    long size = ftell(f);
    ck_assert_int_ge(size, OPP_FILE_HEADER_SIZE);
    char *data = malloc((size_t)size);
    ck_assert_ptr_nonnull(data);
    rewind(f);
    ck_assert_uint_eq(fread(data, 1, (size_t)size, f), (size_t)size);
    fclose(f);
    size_t head = v < 6 ? OPP_FILE_HEADER_SIZE_V1 : OPP_FILE_HEADER_SIZE;
    uint32_t fields[2] = {v, (uint32_t)head};
    memcpy(data + 8, fields, 8);
    memmove(data + head, data + OPP_FILE_HEADER_SIZE, (size_t)size - OPP_FILE_HEADER_SIZE);
    if (v >= 6) {
        uint32_t crc = opp_crc32(0, data, 16);
        memcpy(data + 16, &crc, 4);
    }
    f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    size_t n = (size_t)size - OPP_FILE_HEADER_SIZE + head;
    ck_assert_uint_eq(fwrite(data, 1, n, f), n);
    ck_assert_int_eq(fclose(f), 0);
    free(data);
}

void tb_open_python(struct tb *b, const char *path, const struct tb_python *py)
{
    tb_open(b, path);
    tb_process(b, .proc = 0, .pid = 10, .ppid = 1, .parent = UINT32_MAX, .real = 1,
               .exe = "/usr/bin/python3");
    tb_put_funcs(b, py->funcs, py->nfuncs);
    tb_thread(b, 10, "main");
}

void tb_python_strings(struct tb *b, const struct tb_python *py)
{
    for (uint32_t i = 0; py->strings && py->strings[i]; i++)
        tb_string(b, OPP_STR_PRELOAD + i, py->strings[i]);
}

void tb_python_calls(const char *path, const struct tb_python *py, const struct tb_ev *ev, size_t n,
                     const struct tb_ev *more, size_t nmore, uint64_t end_ns)
{
    struct tb b;
    tb_open_python(&b, path, py);
    tb_put_events(&b, 0, ev, n);
    if (nmore)
        tb_put_events(&b, 0, more, nmore);
    tb_python_strings(&b, py);
    if (end_ns)
        tb_process_end(&b, 0, OPP_END_LOST, end_ns);
    tb_end(&b);
}

/* tb_outer_inner's trace, its calls of code stack 1 when stacked. */
static void outer_inner(const char *path, uint32_t n, uint32_t stack)
{
    struct tb b;
    tb_open(&b, path);
    tb_process(&b, .proc = 0, .pid = 100, .ppid = 1, .parent = UINT32_MAX, .real = 1,
               .exe = "/usr/bin/app", .argv = {"app"});
    tb_funcs(&b, [0] = {OPP_OP_PLAIN, OPP_DT_NONE, "app", "outer"},
             [1] = {OPP_OP_PLAIN, OPP_DT_NONE, "app", "inner"});
    tb_thread(&b, 100, "app");
    if (stack)
        tb_stack(&b, stack, 0x10, 0x20);
    enum { CHUNK = 4096 };
    static struct tb_ev ev[2 * CHUNK];
    for (uint32_t i = 0; i < n;) {
        uint32_t k = 0;
        for (; k < CHUNK && i < n; k++, i++) {
            uint64_t t = 1000 + 200 * (uint64_t)i;
            ev[2 * k] =
                (struct tb_ev){.fn = 1, .begin = t + 10, .end = t + 30, .depth = 1, .stack = stack};
            ev[2 * k + 1] = (struct tb_ev){.fn = 0, .begin = t, .end = t + 100, .stack = stack};
        }
        tb_put_events(&b, 0, ev, 2 * k);
    }
    tb_process_end(&b, 0, OPP_END_EXITED, 1000 + 200 * (uint64_t)n);
    tb_end(&b);
}

void tb_outer_inner(const char *path, uint32_t n)
{
    outer_inner(path, n, 0);
}

void tb_outer_inner_stacked(const char *path, uint32_t n)
{
    outer_inner(path, n, 1);
}

void tb_outer_memory(const char *path, uint32_t n)
{
    struct tb b;
    tb_open(&b, path);
    tb_process(&b, .proc = 0, .pid = 100, .ppid = 1, .parent = UINT32_MAX, .real = 1,
               .exe = "/usr/bin/app", .argv = {"app"});
    tb_funcs(&b, [0] = {OPP_OP_PLAIN, OPP_DT_NONE, "app", "outer"},
             [1] = {OPP_OP_PLAIN, OPP_DT_NONE, "app", "inner"},
             [2] = {OPP_OP_MEMORY, OPP_DT_NONE, "c10", "_ZN3c109alloc_cpuEm"},
             [3] = {OPP_OP_MEMORY, OPP_DT_NONE, "c10", "_ZN3c108free_cpuEPv"});
    tb_thread(&b, 100, "app");
    enum { CHUNK = 1024 }; /* four events each, with arguments: within TB_BUF */
    static struct tb_ev ev[4 * CHUNK];
    for (uint32_t i = 0; i < n;) {
        uint32_t k = 0;
        for (; k < CHUNK && i < n; k++, i++) {
            uint64_t t = 1000 + 200 * (uint64_t)i;
            uint64_t addr = 0x1000 + 256 * (i % 64);
            ev[4 * k] = (struct tb_ev)TB_CALL(2, t + 5, t + 5, 1, OPP_MEM_ALLOC, addr, 256);
            ev[4 * k + 1] = (struct tb_ev){.fn = 1, .begin = t + 10, .end = t + 30, .depth = 1};
            ev[4 * k + 2] = (struct tb_ev)TB_CALL(3, t + 50, t + 50, 1, OPP_MEM_FREE, addr, 0);
            ev[4 * k + 3] = (struct tb_ev){.fn = 0, .begin = t, .end = t + 100};
        }
        tb_put_events(&b, 0, ev, 4 * k);
    }
    tb_process_end(&b, 0, OPP_END_EXITED, 1000 + 200 * (uint64_t)n);
    tb_end(&b);
}
