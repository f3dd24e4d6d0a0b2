/* Fuzz target: names as the traced program gives them (any bytes) through
 * each output of the report, every output checked for what its consumer
 * needs: the table and the tree UTF-8 with no raw control characters and
 * their rows as wide as each other; JSON UTF-8 with no raw control
 * characters; CSV UTF-8 with no name a spreadsheet takes for a formula;
 * the SVG flame graph UTF-8 with nothing XML forbids; folded stacks UTF-8,
 * each line a path and one count; a path component nothing but
 * [A-Za-z0-9._-]. The input's first byte shapes the call tree, the rest,
 * split at NUL bytes, are the names. See HACKING.md, "Fuzzing". */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "analysis/aggregate.h"
#include "analysis/callpath_tree.h"
#include "analysis/model.h"
#include "buf.h"
#include "exports/export.h"
#include "gpu.h"
#include "trace.h"
#include "utf8.h"
#include "views/fmt.h"
#include "views/output.h"
#include "views/tree_view.h"
#include "oracle/loaded.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define NAMES 8
#define NAME_CAP 4096 /* what a GPU string record keeps */

static _Noreturn void fail(const char *what, const char *out, const char *at)
{
    fprintf(stderr, "fuzz_names: %s at byte %td of:\n%.2000s\n", what, at - out, out);
    abort();
}

/* Whether a terminal would act on cp (fmt.h's text escapes these). */
static int acts(uint32_t cp)
{
    return (cp < 0x20 && cp != '\n') || (cp >= 0x7f && cp <= 0x9f) || cp == 0x200e ||
           cp == 0x200f || cp == 0x2028 || cp == 0x2029 || (cp >= 0x202a && cp <= 0x202e) ||
           (cp >= 0x2066 && cp <= 0x2069);
}

/* UTF-8 throughout, and no character that bad(cp) refuses. */
static void check_chars(const char *what, const char *out, int (*bad)(uint32_t))
{
    uint32_t cp;
    for (const char *p = out; *p;) {
        int n = opp_utf8_next(p, &cp);
        if (!n)
            fail(what, out, p); /* not UTF-8 */
        if (bad && bad(cp))
            fail(what, out, p);
        p += n;
    }
}

static int json_bad(uint32_t cp)
{
    return cp < 0x20 && cp != '\n';
}

static int xml_bad(uint32_t cp)
{
    return (cp < 0x20 && cp != '\n' && cp != '\t') || cp == 0xfffe || cp == 0xffff;
}

/* Characters in [p, end). */
static size_t chars(const char *p, const char *end)
{
    uint32_t cp;
    size_t k = 0;
    while (p < end) {
        int n = opp_utf8_next(p, &cp);
        p += n ? n : 1;
        k++;
    }
    return k;
}

/* Lines from the first of dashes to the next line that does not start as
 * the table's do, all of one width. */
static void check_table(const char *what, const char *out)
{
    const char *p = strstr(out, "---");
    size_t width = 0;
    for (int line = 0; p && *p; line++) {
        const char *eol = strchr(p, '\n');
        if (!eol)
            fail("no line break at the end", out, p);
        size_t w = chars(p, eol);
        if (line && w != width)
            fail(what, out, p);
        width = w;
        if (line > 2 && !strncmp(p, "---", 3))
            break;
        p = eol + 1;
    }
}

/* Each line a path without spaces, one space, a count. */
static void check_folded(const char *out)
{
    check_chars("folded stacks", out, json_bad);
    for (const char *p = out; *p;) {
        const char *eol = strchr(p, '\n'), *sp = memchr(p, ' ', (size_t)(eol - p));
        if (!eol || !sp || sp == p || sp + 1 == eol || memchr(sp + 1, ' ', (size_t)(eol - sp - 1)))
            fail("a folded line that is not a path and a count", out, p);
        for (const char *d = sp + 1; d < eol; d++)
            if (*d < '0' || *d > '9')
                fail("a folded count that is not a number", out, d);
        if (memchr(p, '\t', (size_t)(eol - p)))
            fail("a tab in a folded path", out, p);
        p = eol + 1;
    }
}

/* The key and lib fields of each row: none starts as a formula. */
static void check_csv(const char *out)
{
    check_chars("CSV", out, NULL);
    const char *p = strchr(out, '\n');
    int quoted = 0, field = 0, start = 1;
    for (p = p ? p + 1 : out; *p; p++) {
        if (start && field < 2 && strchr("=+-@\t\r", *p) && *p)
            fail("a CSV field that is a formula", out, p);
        if (start && *p == '"' && p[1] && strchr("=+-@\t\r", p[1]))
            fail("a quoted CSV field that is a formula", out, p);
        start = 0;
        if (*p == '"')
            quoted = !quoted;
        else if (!quoted && *p == ',')
            field++, start = 1;
        else if (!quoted && *p == '\n')
            field = 0, start = 1;
    }
}

/* The trace goes into one memfd, written and read by its /proc path. */
static int trace_fd = -1;
static char trace_path[64];

struct names {
    char *s[NAMES];
};

/* The names in data (split at NUL bytes; missing or empty ones "n"). */
static void split(const uint8_t *data, size_t size, struct names *nm)
{
    size_t at = 0;
    for (int i = 0; i < NAMES; i++) {
        size_t end = at;
        while (end < size && data[end])
            end++;
        size_t len = end > at ? end - at : 0;
        if (len > NAME_CAP)
            len = NAME_CAP;
        nm->s[i] = malloc(len ? len + 1 : 2);
        if (!nm->s[i])
            abort();
        if (len) {
            memcpy(nm->s[i], data + at, len);
            nm->s[i][len] = 0;
        } else {
            strcpy(nm->s[i], "n");
        }
        at = end < size ? end + 1 : size;
    }
}

/* A process named s[6] (argv s[6], s[7]) and its thread s[5]; a torch
 * operator by string id for s[0] to s[3], a CPU function s[3] of library
 * s[4]; a chain of calls (depth from shape) cycling through them, then a
 * sibling of each. 0, or -1 when the writer refused (not a fault). */
static int write_trace(uint8_t shape, const struct names *nm)
{
    if (ftruncate(trace_fd, 0))
        abort();
    struct opp_tw w;
    char err[256];
    if (opp_tw_open(&w, trace_path, err, sizeof err))
        return -1;
    char fname[256], lib[256], thread[256];
    snprintf(fname, sizeof fname, "%s", nm->s[3]);
    snprintf(lib, sizeof lib, "%s", nm->s[4]);
    snprintf(thread, sizeof thread, "%s", nm->s[5]);
    const char *argv[] = {nm->s[6], nm->s[7]};
    struct opp_tw_process p = {.proc = 1, .pid = 10, .exe = nm->s[6], .argc = 2, .argv = argv};
    struct opp_func_desc f[] = {{OPP_OP_TORCH, 0, "torch", "op"},
                                {OPP_OP_DOT, OPP_DT_F64, lib, fname}};
    int rc = opp_tw_process(&w, &p) || opp_tw_funcs(&w, 1, 2, f) || opp_tw_thread(&w, 1, 1, thread);

    static uint8_t mem[8 * (NAME_CAP + 64)];
    struct opp_wbuf b;
    opp_wbuf_init(&b, mem, sizeof mem);
    opp_put_u32(&b, 4);
    for (int i = 0; i < 4; i++) {
        struct opp_gpu_rec r = {.type = OPP_GPU_STRING,
                                .nfields = 1,
                                .str = nm->s[i],
                                .slen = (uint32_t)strlen(nm->s[i])};
        r.f[0] = OPP_STR_PRELOAD + (uint32_t)i;
        rc = rc || opp_gpu_put(&b, &r);
    }
    rc = rc || b.overflow || opp_tw_gpu(&w, 1, mem, (uint32_t)b.len);

    static uint8_t evmem[1 << 16];
    struct opp_ev_enc e;
    opp_ev_begin(&e, evmem, sizeof evmem, 1, 1, 0);
    uint32_t depth = 1 + shape % 16;
    for (uint32_t k = depth; k-- > 0;) { /* the chain, innermost first */
        uint32_t which = (k + shape / 16) % 5;
        uint64_t begin = 1000 * (uint64_t)k, end = 1000000 - 1000 * (uint64_t)k;
        uint64_t a[3] = {OPP_STR_PRELOAD + which, OPP_TORCH_SCOPE_FUNCTION, 0}, n = 1000;
        rc = rc || (which == 4 ? opp_ev_add(&e, 1, 0, begin, end, k, 1, &n)
                               : opp_ev_add(&e, 0, 0, begin, end, k, 3, a));
    }
    for (uint32_t i = 0; i < 4; i++) { /* siblings after it */
        uint64_t a[3] = {OPP_STR_PRELOAD + i, OPP_TORCH_SCOPE_FUNCTION, 0};
        rc = rc || opp_ev_add(&e, 0, 0, 2000000 + 10000 * i, 2005000 + 10000 * i, 0, 3, a);
    }
    rc = rc || e.w.overflow || opp_ev_write(&w, &e) || opp_tw_end(&w, e.count, 0, 1);
    if (opp_tw_close(&w))
        rc = 1;
    return rc ? -1 : 0;
}

/* What write(f) wrote, NUL-terminated (malloc'd); NULL when it failed. */
#define CAPTURE(out, write)                                                                        \
    do {                                                                                           \
        size_t len_;                                                                               \
        FILE *f = open_memstream(&(out), &len_);                                                   \
        if (!f)                                                                                    \
            abort();                                                                               \
        int rc_ = (write);                                                                         \
        fclose(f);                                                                                 \
        if (rc_) {                                                                                 \
            free(out);                                                                             \
            (out) = NULL;                                                                          \
        }                                                                                          \
    } while (0)

static void outputs(struct opp_model *m)
{
    char *out;
    struct opp_agg_opts o = {0};
    struct opp_agg a;
    if (tu_aggregate(m, &o, &a) == 0) {
        struct opp_out_opts oo = {.show_lib = 1};
        CAPTURE(out, opp_out_table(f, &a, &oo));
        if (out) {
            check_chars("the table", out, acts);
            check_table("a table row of another width", out);
        }
        free(out);
        CAPTURE(out, opp_out_csv(f, &a, &oo));
        if (out)
            check_csv(out);
        free(out);
        CAPTURE(out, opp_out_json(f, "t.trace", m, &a, &oo));
        if (out)
            check_chars("JSON", out, json_bad);
        free(out);
        opp_agg_free(&a);
    }
    struct opp_agg_opts by = {.group_by_stack = 4};
    if (tu_aggregate(m, &by, &a) == 0) {
        struct opp_out_opts oo = {.group_by_stack = 1};
        CAPTURE(out, opp_out_table(f, &a, &oo));
        if (out) {
            check_chars("the table by stack", out, acts);
            check_table("a table row (by stack) of another width", out);
        }
        free(out);
        opp_agg_free(&a);
    }
    struct opp_calltree ct;
    if (tu_calltree_build(m, &o, &ct) == 0) {
        struct opp_tree_opts to = {0};
        CAPTURE(out, opp_out_tree(f, m, &ct, &to));
        if (out)
            check_chars("the tree", out, acts);
        free(out);
        CAPTURE(out, opp_export_folded(m, &ct, 0, f));
        if (out)
            check_folded(out);
        free(out);
        CAPTURE(out, opp_export_flamegraph(m, &ct, 0, m->nthreads ? "t" : "", f));
        if (out)
            check_chars("the flame graph", out, xml_bad);
        free(out);
        opp_calltree_free(&ct);
    }
}

static void check_path_component(const char *name)
{
    char buf[64];
    opp_path_component(buf, sizeof buf, name);
    if (!buf[0] || buf[0] == '.')
        fail("a path component empty or hidden", buf, buf);
    for (const char *p = buf; *p; p++)
        if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-", *p))
            fail("a path component with another character", buf, p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (trace_fd < 0) {
        trace_fd = memfd_create("fuzz_names", MFD_CLOEXEC);
        if (trace_fd < 0) {
            perror("fuzz_names: memfd_create");
            abort();
        }
        snprintf(trace_path, sizeof trace_path, "/proc/self/fd/%d", trace_fd);
        setenv("OPPROF_WAIT_MS", "0", 1);
    }
    if (!size)
        return 0;
    struct names nm;
    split(data + 1, size - 1, &nm);
    for (int i = 0; i < NAMES; i++)
        check_path_component(nm.s[i]);
    if (write_trace(data[0], &nm) == 0) {
        char err[512];
        struct opp_model *m = tu_model_load(trace_path, err, sizeof err);
        if (!m) {
            fprintf(stderr, "fuzz_names: the trace written does not load: %s\n", err);
            abort();
        }
        outputs(m);
        opp_model_free(m);
    }
    for (int i = 0; i < NAMES; i++)
        free(nm.s[i]);
    return 0;
}
