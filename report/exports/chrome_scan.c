/* The Chrome export's first pass (chrome.h): only what is small
 * (processes, function tables, labels, strings, devices, code stacks with
 * Python frames, the correlation ids that have both a call and GPU work,
 * the earliest and latest times). */
#include "exports/chrome.h"

#include <stdlib.h>
#include <string.h>

#include "info.h"
#include "ops.h"

/* Note a pid or device number of the file being read. */
static void note_pid(struct chrome *x, uint64_t id)
{
    uint64_t key = opp_chrome_pid_key(x, id);
    struct xpid *e;
    HASH_FIND(hh, x->pids, &key, sizeof key, e);
    if (e)
        return;
    e = calloc(1, sizeof *e);
    if (!e) {
        x->oom = 1;
        return;
    }
    e->key = key;
    HASH_ADD(hh, x->pids, key, sizeof e->key, e);
    if (x->oom)
        free(e);
}

static void seen(struct chrome *x, uint64_t t)
{
    t = opp_chrome_shifted(x, t);
    if (t && t < x->base_ns)
        x->base_ns = t;
    if (t > x->last_ns)
        x->last_ns = t;
}

static int p1_process(void *ctx, const struct opp_tr_process *tp)
{
    struct chrome *x = ctx;
    struct xfile *file = &x->files[x->cur];
    if (!file->have_shift) { /* the file's first process pairs its two clocks */
        int64_t off = opp_clock_offset(tp->start_real_ns, tp->start_ns);
        if (!x->cur)
            x->ref = off;
        file->shift = off - x->ref;
        file->have_shift = 1;
    }
    struct xproc *p = opp_chrome_proc(x, tp->proc);
    if (!p) {
        p = calloc(1, sizeof *p);
        if (!p)
            return x->oom = 1;
        p->proc = tp->proc + x->base;
        p->file = (uint32_t)x->cur;
        p->rank = p->world_size = -1;
        HASH_ADD(hh, x->procs, proc, sizeof p->proc, p);
        if (x->oom) {
            free(p);
            return 1;
        }
    }
    free(p->exe);
    p->exe = strdup(tp->exe ? tp->exe : "");
    p->pid = tp->pid;
    p->start_ns = opp_chrome_shifted(x, tp->start_ns);
    p->start_real_ns = tp->start_real_ns;
    /* not seen: ts 0 is the trace's first event, as the report's --from 0 */
    note_pid(x, tp->pid);
    return (x->oom |= !p->exe);
}

static int p1_funcs(void *ctx, uint32_t proc, uint32_t count, const struct opp_tr_func *f)
{
    struct chrome *x = ctx;
    struct xproc *p = opp_chrome_proc(x, proc);
    if (!p || p->funcs)
        return 0; /* the reader checks this: never happens */
    p->funcs = calloc(count ? count : 1, sizeof *p->funcs);
    if (!p->funcs)
        return x->oom = 1;
    p->nfuncs = count;
    for (uint32_t i = 0; i < count; i++) {
        p->funcs[i] = (struct xfunc){f[i].kind, f[i].dtype, strdup(f[i].lib), strdup(f[i].name)};
        if (!p->funcs[i].lib || !p->funcs[i].name)
            return x->oom = 1;
    }
    return 0;
}

static int p1_info(void *ctx, uint32_t proc, uint32_t count, const char *const *keys,
                   const char *const *values)
{
    struct chrome *x = ctx;
    struct xproc *p = opp_chrome_proc(x, proc);
    static const char *const rank[] = OPP_INFO_RANK_KEYS, *const world[] = OPP_INFO_WORLD_KEYS;
    if (p) {
        p->rank = opp_info_number(count, keys, values, rank);
        p->world_size = opp_info_number(count, keys, values, world);
        for (uint32_t i = 0; i < count; i++)
            if (!strcmp(keys[i], "host") && values[i][0] && !p->host) {
                if (!(p->host = strdup(values[i])))
                    return x->oom = 1;
                if (!x->files[x->cur].host)
                    x->files[x->cur].host = p->host;
            }
    }
    return 0;
}

/* Set bit c (0 when done, else out of memory). */
static int bits_set(struct bits *b, uint64_t c)
{
    struct bpage *pg = opp_bits_page(b, c);
    if (!pg) {
        pg = calloc(1, sizeof *pg);
        if (!pg)
            return -1;
        pg->key = c >> 16;
        HASH_ADD(hh, b->pages, key, sizeof pg->key, pg);
        b->last = pg;
    }
    pg->w[(c & 0xffff) / 64] |= 1ull << (c % 64);
    return 0;
}

static int p1_event(void *ctx, const struct opp_tr_event *e)
{
    struct chrome *x = ctx;
    seen(x, e->begin_ns);
    seen(x, e->end_ns);
    /* Arrows end only at GPU work whose call is in the trace. */
    struct xproc *p = opp_chrome_proc(x, e->proc);
    if (!p || e->fn >= p->nfuncs || opp_kind_base(p->funcs[e->fn].kind) != OPP_OP_CUDA_API ||
        e->nargs <= OPP_COL_CUDA_CORR)
        return 0;
    uint64_t c = e->args[OPP_COL_CUDA_CORR];
    if (c && bits_set(&p->has_call, c))
        return x->oom = 1;
    return 0;
}

static int p1_process_end(void *ctx, uint32_t proc, uint32_t how, uint64_t end_ns)
{
    struct chrome *x = ctx;
    struct xproc *p = opp_chrome_proc(x, proc);
    if (p)
        p->end_ns = opp_chrome_shifted(x, end_ns);
    seen(x, end_ns);
    return 0;
}

/* A STACK record's Python frames, kept for the python_function slices. */
static int p1_stack(struct chrome *x, uint32_t proc, const struct opp_gpu_rec *g)
{
    struct xpystack *ps = calloc(1, sizeof *ps);
    if (!ps)
        return x->oom = 1;
    for (uint32_t i = g->nfields; i-- > OPP_GF_ST_PC0;) /* innermost first in the record */
        if ((g->f[i] & OPP_STACK_PY_MASK) == OPP_STACK_PY)
            ps->frame[ps->n++] = (uint32_t)g->f[i];
    ps->key = (uint64_t)(proc + x->base) << 32 | (uint32_t)g->f[OPP_GF_ST_ID];
    struct xpystack *old;
    HASH_FIND(hh, x->pystacks, &ps->key, sizeof ps->key, old);
    if (!ps->n || old) { /* no Python frame, or the first record stands */
        free(ps);
        return 0;
    }
    HASH_ADD(hh, x->pystacks, key, sizeof ps->key, ps);
    if (x->oom)
        free(ps);
    return x->oom;
}

static int p1_gpu(void *ctx, uint32_t proc, const struct opp_gpu_rec *g)
{
    struct chrome *x = ctx;
    if (g->type == OPP_GPU_STACK)
        return p1_stack(x, proc, g);
    if (g->type == OPP_GPU_STRING) {
        uint64_t key = (uint64_t)(proc + x->base) << 32 | (g->f[0] & 0xffffffffu);
        struct xstr *s;
        HASH_FIND(hh, x->strs, &key, sizeof key, s);
        char *text = strndup(g->str, g->slen > OPP_NAME_STR_MAX ? OPP_NAME_STR_MAX : g->slen);
        if (!text)
            return x->oom = 1;
        if (s) { /* a later definition replaces an earlier one */
            free(s->text);
            s->text = text;
            return 0;
        }
        s = malloc(sizeof *s);
        if (!s) {
            free(text);
            return x->oom = 1;
        }
        s->key = key;
        s->text = text;
        HASH_ADD(hh, x->strs, key, sizeof s->key, s);
        if (x->oom) {
            free(text);
            free(s);
        }
        return x->oom;
    }
    if (g->type == OPP_GPU_DEVICE) {
        for (size_t i = 0; i < x->ndevs; i++)
            if (x->devs[i].f[OPP_GF_V_ID] == g->f[OPP_GF_V_ID])
                return 0;
        if (x->ndevs < sizeof x->devs / sizeof x->devs[0]) {
            x->devs[x->ndevs] = *g;
            x->devs[x->ndevs].str = NULL;
            /* for its name */
            x->devs[x->ndevs++].f[OPP_GF_V_NAME] |= (uint64_t)(proc + x->base) << 32;
        }
        return 0;
    }
    if (g->type == OPP_GPU_MEMORY) {
        seen(x, g->f[OPP_GF_START]);
        note_pid(x, g->f[OPP_GF_DEVICE]);
        return 0;
    }
    if (g->type >= OPP_GPU_KERNEL && g->type <= OPP_GPU_OVERHEAD) {
        note_pid(x, g->f[OPP_GF_DEVICE]);
        seen(x, g->f[OPP_GF_START]);
        seen(x, g->f[OPP_GF_END]);
        /* Arrows start only at calls whose GPU work is in the trace. */
        uint64_t c = g->f[OPP_GF_CORRELATION];
        struct xproc *p = opp_chrome_proc(x, proc);
        if (c && p && bits_set(&p->has_gpu, c))
            return x->oom = 1;
    }
    return 0;
}

const struct opp_tr_visitor opp_chrome_scan = {.process = p1_process,
                                               .funcs = p1_funcs,
                                               .event = p1_event,
                                               .process_end = p1_process_end,
                                               .gpu = p1_gpu,
                                               .info = p1_info};
