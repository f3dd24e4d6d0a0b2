/* Seeds for fuzz_proto (fuzz_proto.c says their layout), made from real
 * traces: what each process of a trace sent the collector, encoded again
 * as the preload encodes it (preload/core/hello.c): its hello, labels,
 * function table in parts, GPU records; its first thread's calls as ring
 * slots in a summary session; and a ring, finish and header message.
 *   proto-seeds OUTDIR TRACE... */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "gpu.h"
#include "proto.h"
#include "ring.h"
#include "trace.h"

#define MAX_PROCS 4   /* per trace */
#define MAX_CALLS 64  /* ring slots of a session: at most 255 */
#define MAX_GPU 200   /* records */
#define PART_FUNCS 40 /* entries in a FUNCS part */
#define SEED_MAX (OPP_MSG_MAX + 64)

struct proc {
    uint32_t proc, pid, ppid, clock, argc;
    uint64_t start_ns, start_real_ns;
    char *exe, **argv;
    uint32_t ninfo;
    char **keys, **values;
    uint32_t nfuncs;
    struct opp_func_desc *funcs;
    uint32_t tid; /* the first thread with calls */
    struct opp_tr_event calls[MAX_CALLS];
    uint32_t ncalls;
    uint8_t *gpu; /* a GPU payload: u32 count, records */
    struct opp_wbuf gw;
    uint32_t ngpu;
};

struct seeds {
    struct proc p[MAX_PROCS];
    uint32_t n;
};

static void *xmalloc(size_t n)
{
    void *p = calloc(1, n ? n : 1);
    if (!p) {
        fprintf(stderr, "proto-seeds: out of memory\n");
        exit(1);
    }
    return p;
}

static char *xstrdup(const char *s)
{
    char *d = xmalloc(strlen(s) + 1);
    return strcpy(d, s);
}

static struct proc *find(struct seeds *s, uint32_t proc)
{
    for (uint32_t i = 0; i < s->n; i++)
        if (s->p[i].proc == proc)
            return &s->p[i];
    return NULL;
}

static int on_process(void *ctx, const struct opp_tr_process *tp)
{
    struct seeds *s = ctx;
    if (s->n == MAX_PROCS)
        return 0;
    struct proc *p = &s->p[s->n++];
    p->proc = tp->proc;
    p->pid = tp->pid;
    p->ppid = tp->ppid;
    p->clock = tp->clock;
    p->start_ns = tp->start_ns;
    p->start_real_ns = tp->start_real_ns;
    p->exe = xstrdup(tp->exe);
    p->argc = tp->argc;
    p->argv = xmalloc(tp->argc * sizeof *p->argv);
    for (uint32_t i = 0; i < tp->argc; i++)
        p->argv[i] = xstrdup(tp->argv[i]);
    p->gpu = xmalloc(OPP_MSG_MAX);
    opp_wbuf_init(&p->gw, p->gpu, OPP_MSG_MAX);
    opp_put_u32(&p->gw, 0);
    return 0;
}

static int on_info(void *ctx, uint32_t proc, uint32_t count, const char *const *keys,
                   const char *const *values)
{
    struct proc *p = find(ctx, proc);
    if (!p || p->ninfo)
        return 0;
    p->keys = xmalloc(count * sizeof *p->keys);
    p->values = xmalloc(count * sizeof *p->values);
    for (uint32_t i = 0; i < count; i++) {
        p->keys[i] = xstrdup(keys[i]);
        p->values[i] = xstrdup(values[i]);
    }
    p->ninfo = count;
    return 0;
}

static int on_funcs(void *ctx, uint32_t proc, uint32_t count, const struct opp_tr_func *f)
{
    struct proc *p = find(ctx, proc);
    if (!p)
        return 0;
    p->funcs = xmalloc(count * sizeof *p->funcs);
    for (uint32_t i = 0; i < count; i++)
        p->funcs[i] =
            (struct opp_func_desc){f[i].kind, f[i].dtype, xstrdup(f[i].lib), xstrdup(f[i].name)};
    p->nfuncs = count;
    return 0;
}

static int on_event(void *ctx, const struct opp_tr_event *e)
{
    struct proc *p = find(ctx, e->proc);
    if (!p || p->ncalls == MAX_CALLS || (p->ncalls && e->tid != p->tid))
        return 0;
    p->tid = e->tid;
    p->calls[p->ncalls++] = *e;
    return 0;
}

static int on_gpu(void *ctx, uint32_t proc, const struct opp_gpu_rec *g)
{
    struct proc *p = find(ctx, proc);
    if (!p || p->ngpu == MAX_GPU || opp_gpu_put(&p->gw, g))
        return 0;
    p->ngpu++;
    memcpy(p->gpu, &p->ngpu, 4);
    return 0;
}

static const char *outdir, *base;

/* OUTDIR/BASE-NAME: the selector byte, then the bytes of w. */
static void seed(const char *name, uint8_t sel, const struct opp_wbuf *w)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s-%s", outdir, base, name);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(&sel, 1, 1, f) != 1 || (w->len && fwrite(w->p, w->len, 1, f) != 1) ||
        fclose(f)) {
        fprintf(stderr, "proto-seeds: cannot write %s: %s\n", path, strerror(errno));
        exit(1);
    }
}

static void put_funcs(struct opp_wbuf *w, const struct proc *p, uint32_t total, uint32_t first,
                      uint32_t count, const uint32_t *map)
{
    opp_put_u32(w, total);
    opp_put_u32(w, first);
    opp_put_u32(w, count);
    for (uint32_t i = first; i < first + count; i++) {
        const struct opp_func_desc *d = &p->funcs[map ? map[i] : i];
        opp_put_u32(w, d->kind);
        opp_put_u32(w, d->dtype);
        opp_put_str(w, d->lib, strlen(d->lib));
        opp_put_str(w, d->name, strlen(d->name));
    }
}

static void put_hello(struct opp_wbuf *w, const struct proc *p)
{
    opp_put_u32(w, p->pid);
    opp_put_u32(w, p->ppid);
    opp_put_u32(w, p->clock);
    opp_put_u32(w, p->argc);
    opp_put_u64(w, p->start_ns);
    opp_put_u64(w, p->start_real_ns);
    opp_put_str(w, p->exe, strlen(p->exe));
    for (uint32_t i = 0; i < p->argc; i++)
        opp_put_str(w, p->argv[i], strlen(p->argv[i]));
}

static void put_header(struct opp_wbuf *w, uint16_t type, uint32_t size)
{
    struct opp_msg_header h = {
        .magic = OPP_PROTO_MAGIC, .type = type, .version = OPP_PROTO_VERSION, .size = size};
    opp_put_bytes(w, &h, sizeof h);
}

/* A summary session: the functions the thread's calls use (renumbered),
 * the calls as ring slots, the process's GPU records. */
static void put_session(struct opp_wbuf *w, const struct proc *p)
{
    uint32_t *map = xmalloc(p->nfuncs * sizeof *map), *id = xmalloc(p->nfuncs * sizeof *id);
    uint32_t k = 0;
    for (uint32_t i = 0; i < p->ncalls; i++) {
        uint32_t fn = p->calls[i].fn;
        if (!id[fn]) {
            map[k++] = fn;
            id[fn] = k;
        }
    }
    if (!k) { /* no calls: the GPU records still need a table */
        map[k++] = 0;
    }
    size_t at = w->len;
    opp_put_bytes(w, "\0\0", 2);
    put_funcs(w, p, k, 0, k, map);
    uint16_t flen = (uint16_t)(w->len - at - 2);
    memcpy(w->p + at, &flen, 2);
    size_t slots_at = w->len;
    uint8_t slots = 0;
    opp_put_bytes(w, &slots, 1);
    for (uint32_t i = 0; i < p->ncalls; i++) {
        const struct opp_tr_event *e = &p->calls[i];
        uint64_t args[OPP_MAX_ARGS + 1];
        uint32_t nargs = e->nargs;
        memcpy(args, e->args, nargs * sizeof *args);
        uint8_t flags = 0;
        if (e->stack) {
            args[nargs++] = e->stack;
            flags |= OPP_REC_STACK;
        }
        if (nargs > OPP_MAX_ARGS)
            continue;
        unsigned n = opp_rec_slots(nargs);
        if (slots + n > 255)
            break;
        struct opp_rec rec = {.begin = e->begin_ns,
                              .end = e->end_ns,
                              .fn = id[e->fn] - 1,
                              .depth = (uint16_t)e->depth,
                              .nargs = (uint8_t)nargs,
                              .flags = flags,
                              .arg0 = nargs ? args[0] : 0};
        opp_put_bytes(w, &rec, sizeof rec);
        for (unsigned s = 1; s < n; s++) {
            struct opp_rec_ext x = {{0}};
            for (unsigned a = 0; a < 4; a++)
                if (1 + (s - 1) * 4 + a < nargs)
                    x.arg[a] = args[1 + (s - 1) * 4 + a];
            opp_put_bytes(w, &x, sizeof x);
        }
        slots += n;
    }
    w->p[slots_at] = slots;
    opp_put_bytes(w, p->gpu, p->gw.len);
    free(map);
    free(id);
}

static void write_seeds(const struct proc *p, uint32_t i)
{
    static uint8_t mem[SEED_MAX];
    struct opp_wbuf w;
    char name[64];

    opp_wbuf_init(&w, mem, sizeof mem);
    put_hello(&w, p);
    snprintf(name, sizeof name, "p%u-hello", i);
    seed(name, OPP_MSG_HELLO, &w);
    /* the same as the collector reads it: header and payload */
    uint8_t hello[SEED_MAX];
    size_t hlen = w.len;
    memcpy(hello, mem, hlen);
    opp_wbuf_init(&w, mem, sizeof mem);
    put_header(&w, OPP_MSG_HELLO, (uint32_t)hlen);
    opp_put_bytes(&w, hello, hlen);
    snprintf(name, sizeof name, "p%u-header-hello", i);
    seed(name, 0xff, &w);

    if (p->ninfo) {
        opp_wbuf_init(&w, mem, sizeof mem);
        opp_put_u32(&w, p->ninfo);
        for (uint32_t k = 0; k < p->ninfo; k++) {
            opp_put_str(&w, p->keys[k], strlen(p->keys[k]));
            opp_put_str(&w, p->values[k], strlen(p->values[k]));
        }
        snprintf(name, sizeof name, "p%u-info", i);
        seed(name, OPP_MSG_INFO, &w);
    }
    if (p->nfuncs) {
        uint32_t n = p->nfuncs < PART_FUNCS ? p->nfuncs : PART_FUNCS;
        opp_wbuf_init(&w, mem, sizeof mem);
        put_funcs(&w, p, p->nfuncs, 0, n, NULL);
        snprintf(name, sizeof name, "p%u-funcs-first", i);
        seed(name, OPP_MSG_FUNCS, &w);
        opp_wbuf_init(&w, mem, sizeof mem);
        put_funcs(&w, p, p->nfuncs, p->nfuncs - n, n, NULL);
        snprintf(name, sizeof name, "p%u-funcs-last", i);
        seed(name, OPP_MSG_FUNCS, &w);

        opp_wbuf_init(&w, mem, sizeof mem);
        put_session(&w, p);
        snprintf(name, sizeof name, "p%u-session", i);
        seed(name, 0, &w);
    }
    if (p->ngpu) {
        opp_wbuf_init(&w, mem, sizeof mem);
        opp_put_bytes(&w, p->gpu, p->gw.len);
        snprintf(name, sizeof name, "p%u-gpu", i);
        seed(name, OPP_MSG_GPU, &w);
    }
    if (p->ncalls) { /* the ring of the thread with calls, as the preload sizes it */
        opp_wbuf_init(&w, mem, sizeof mem);
        opp_put_u32(&w, p->tid);
        opp_put_u32(&w, OPP_RING_DEFAULT_RECS);
        snprintf(name, sizeof name, "p%u-ring", i);
        seed(name, OPP_MSG_RING, &w);
    }
}

/* Messages of `opprof run` and `opprof ctl`, the same for every trace. */
static void write_control(void)
{
    static uint8_t mem[64];
    struct opp_wbuf w;
    uint32_t linger = 250, op = 1;
    opp_wbuf_init(&w, mem, sizeof mem);
    opp_put_u32(&w, linger);
    seed("finish", OPP_MSG_FINISH, &w);
    opp_wbuf_init(&w, mem, sizeof mem);
    put_header(&w, OPP_MSG_CTL, 4);
    opp_put_u32(&w, op);
    seed("header-ctl", 0xff, &w);
    opp_wbuf_init(&w, mem, sizeof mem);
    put_header(&w, OPP_MSG_BYE, 0);
    seed("header-bye", 0xff, &w);
    opp_wbuf_init(&w, mem, sizeof mem);
    put_header(&w, OPP_MSG_BYE, 8);
    opp_put_u64(&w, 123456789);
    seed("header-bye-end", 0xff, &w);
}

static void proc_free(struct proc *p)
{
    free(p->exe);
    for (uint32_t i = 0; i < p->argc; i++)
        free(p->argv[i]);
    free(p->argv);
    for (uint32_t i = 0; i < p->ninfo; i++)
        free(p->keys[i]), free(p->values[i]);
    free(p->keys);
    free(p->values);
    for (uint32_t i = 0; i < p->nfuncs; i++)
        free((char *)p->funcs[i].lib), free((char *)p->funcs[i].name);
    free(p->funcs);
    free(p->gpu);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: proto-seeds OUTDIR TRACE...\n");
        return 2;
    }
    outdir = argv[1];
    base = "control";
    write_control();
    static const struct opp_tr_visitor v = {.process = on_process,
                                            .info = on_info,
                                            .funcs = on_funcs,
                                            .event = on_event,
                                            .gpu = on_gpu};
    for (int a = 2; a < argc; a++) {
        struct seeds s = {0};
        struct opp_tr_summary sum;
        char err[512];
        if (opp_trace_read(argv[a], &v, &s, &sum, err, sizeof err)) {
            fprintf(stderr, "proto-seeds: %s\n", err);
            return 1;
        }
        base = strrchr(argv[a], '/') ? strrchr(argv[a], '/') + 1 : argv[a];
        for (uint32_t i = 0; i < s.n; i++) {
            write_seeds(&s.p[i], i);
            proc_free(&s.p[i]);
        }
    }
    return 0;
}
