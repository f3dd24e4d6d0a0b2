/* Validation of everything a client sends: protocol messages and the ring
 * memory it shares. A client is never trusted; a bad field is a reason. */
#include "parse.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "buf.h"
#include "ops.h"
#include "ring.h"

int opp_parse_header(const void *p, size_t n, struct opp_msg_header *h, const char **why)
{
    if (n < sizeof *h) {
        *why = "short message header";
        return -1;
    }
    memcpy(h, p, sizeof *h);
    if (h->magic != OPP_PROTO_MAGIC) {
        *why = "bad message magic";
        return -1;
    }
    if (h->version != OPP_PROTO_VERSION) {
        *why = "unsupported protocol version";
        return -1;
    }
    if (h->size > OPP_MSG_MAX) {
        *why = "message too large";
        return -1;
    }
    if (h->reserved) {
        *why = "reserved header field set";
        return -1;
    }
    switch (h->type) {
    case OPP_MSG_HELLO:
    case OPP_MSG_FUNCS:
    case OPP_MSG_RING:
    case OPP_MSG_BYE:
    case OPP_MSG_FINISH:
    case OPP_MSG_GPU:
    case OPP_MSG_INFO:
    case OPP_MSG_CTL:
    case OPP_MSG_RESUME:
    case OPP_MSG_REAPED:
    case OPP_MSG_TOP:
        return 0;
    default:
        *why = "unknown message type";
        return -1;
    }
}

static char *dup_str(struct opp_rbuf *b, size_t max)
{
    size_t n;
    const char *s = opp_get_str(b, max, &n);
    if (b->bad || memchr(s, 0, n))
        return NULL;
    char *d = malloc(n + 1);
    if (!d)
        return NULL;
    memcpy(d, s, n);
    d[n] = 0;
    return d;
}

void opp_hello_free(struct opp_hello *h)
{
    if (h->argv)
        for (uint32_t i = 0; i < h->argc; i++)
            free(h->argv[i]);
    free(h->argv);
    free(h->exe);
    memset(h, 0, sizeof *h);
}

int opp_parse_hello(const void *p, uint32_t n, struct opp_hello *h, const char **why)
{
    struct opp_rbuf b;
    memset(h, 0, sizeof *h);
    opp_rbuf_init(&b, p, n);
    h->pid = opp_get_u32(&b);
    h->ppid = opp_get_u32(&b);
    h->clock = opp_get_u32(&b);
    uint32_t argc = opp_get_u32(&b);
    h->start_ticks = opp_get_u64(&b);
    h->start_real_ns = opp_get_u64(&b);
    if (b.bad) {
        *why = "hello too short";
        return -1;
    }
    if (h->clock > OPP_CLOCK_TSC) {
        *why = "hello names an unknown clock";
        return -1;
    }
    if (argc > OPP_MAX_ARGV || argc > opp_rbuf_left(&b) / 4) {
        *why = "hello has an impossible argument count";
        return -1;
    }
    h->exe = dup_str(&b, 4096);
    if (!h->exe) {
        *why = "hello has a bad executable path";
        return -1;
    }
    h->argv = calloc(argc + 1, sizeof *h->argv);
    if (!h->argv) {
        *why = "out of memory";
        return -1;
    }
    for (; h->argc < argc; h->argc++) {
        h->argv[h->argc] = dup_str(&b, OPP_STR_MAX);
        if (!h->argv[h->argc]) {
            *why = "hello has a bad argument string";
            return -1;
        }
    }
    if (opp_rbuf_left(&b)) {
        *why = "hello has trailing bytes";
        return -1;
    }
    return 0;
}

void opp_funcs_free(struct opp_funcs_msg *f)
{
    free(f->f);
    free(f->strings);
    memset(f, 0, sizeof *f);
}

static int name_ok(const char *s, size_t n)
{
    if (n == 0)
        return 0;
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)s[i] <= ' ' || (unsigned char)s[i] >= 0x7f)
            return 0;
    return 1;
}

int opp_parse_funcs(const void *p, uint32_t n, struct opp_funcs_msg *out, const char **why)
{
    struct opp_rbuf b;
    memset(out, 0, sizeof *out);
    opp_rbuf_init(&b, p, n);
    uint32_t total = opp_get_u32(&b), first = opp_get_u32(&b);
    uint32_t count = opp_get_u32(&b);
    if (b.bad || count == 0 || total > OPP_MAX_FUNCS || first > total || count > total - first ||
        count > opp_rbuf_left(&b) / 16) {
        *why = "function table has an impossible count";
        return -1;
    }
    out->f = calloc(count, sizeof *out->f);
    out->strings = malloc(opp_rbuf_left(&b) + 2u * count);
    if (!out->f || !out->strings) {
        *why = "out of memory";
        return -1;
    }
    char *s = out->strings;
    for (uint32_t i = 0; i < count; i++) {
        struct opp_func_desc *d = &out->f[i];
        d->kind = opp_get_u32(&b);
        d->dtype = opp_get_u32(&b);
        size_t ln, nn;
        const char *lib = opp_get_str(&b, OPP_NAME_MAX, &ln);
        const char *name = opp_get_str(&b, OPP_NAME_MAX, &nn);
        if (b.bad) {
            *why = "function table cut short";
            return -1;
        }
        if (!opp_kind_valid(d->kind) || d->dtype > OPP_DT_MAX) {
            *why = "function table names an unknown kind or type";
            return -1;
        }
        if (!name_ok(lib, ln) || !name_ok(name, nn)) {
            *why = "function table has a bad name";
            return -1;
        }
        memcpy(s, lib, ln);
        s[ln] = 0;
        d->lib = s;
        s += ln + 1;
        memcpy(s, name, nn);
        s[nn] = 0;
        d->name = s;
        s += nn + 1;
    }
    out->count = count;
    out->total = total;
    out->first = first;
    if (opp_rbuf_left(&b)) {
        *why = "function table has trailing bytes";
        return -1;
    }
    return 0;
}

int opp_parse_ring(const void *p, uint32_t n, struct opp_ring_msg *out, const char **why)
{
    if (n != 8) {
        *why = "ring message has the wrong size";
        return -1;
    }
    memcpy(&out->tid, p, 4);
    memcpy(&out->capacity, (const char *)p + 4, 4);
    uint32_t c = out->capacity;
    if (c < OPP_RING_MIN_RECS || c > OPP_RING_MAX_RECS || (c & (c - 1))) {
        *why = "ring capacity is not a power of two in range";
        return -1;
    }
    if (out->tid == 0) {
        *why = "ring names thread 0";
        return -1;
    }
    return 0;
}

int opp_parse_finish(const void *p, uint32_t n, struct opp_finish_msg *out, const char **why)
{
    *out = (struct opp_finish_msg){0};
    if (n != 4 && n != 16) {
        *why = "finish message has the wrong size";
        return -1;
    }
    memcpy(&out->linger_ms, p, 4);
    if (n == 16) {
        memcpy(&out->pid, (const char *)p + 4, 4);
        memcpy(&out->ppid, (const char *)p + 8, 4);
        memcpy(&out->status, (const char *)p + 12, 4);
        if (!out->pid || !out->ppid) {
            *why = "finish message names no process";
            return -1;
        }
    }
    if (out->linger_ms > 3600u * 1000u) {
        *why = "finish linger longer than an hour";
        return -1;
    }
    return 0;
}

struct opp_ring_hdr *opp_ring_map(int fd, const struct opp_ring_msg *m, const char **why)
{
    struct stat st;
    uint64_t bytes = opp_ring_bytes(m->capacity);
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || (uint64_t)st.st_size != bytes) {
        *why = "ring memory has the wrong size";
        return NULL;
    }
    /* Without the shrink seal the client could truncate it under us and
     * our next read would be a SIGBUS. */
    int seals = fcntl(fd, F_GET_SEALS);
    if (seals < 0 || !(seals & F_SEAL_SHRINK)) {
        *why = "ring memory is not sealed against shrinking";
        return NULL;
    }
    struct opp_ring_hdr *r = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (r == MAP_FAILED) {
        *why = "cannot map ring memory";
        return NULL;
    }
    if (r->magic != OPP_RING_MAGIC || r->version != OPP_RING_VERSION ||
        r->capacity != m->capacity || r->tid != m->tid) {
        munmap(r, bytes);
        *why = "ring header does not match its message";
        return NULL;
    }
    return r;
}
