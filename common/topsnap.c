/* `opprof top`'s snapshot, written and read (topsnap.h). */
#include "topsnap.h"

#include <stdlib.h>
#include <string.h>

#include "format.h"

#define TRAILER 4u /* left_out */

static size_t str_bytes(const char *s)
{
    return 4 + strlen(s);
}

void opp_top_put(struct opp_wbuf *w, const struct opp_top_snap *s)
{
    opp_put_u64(w, s->now_ns);
    opp_put_u64(w, s->events);
    opp_put_u64(w, s->dropped);
    opp_put_u64(w, s->interrupted);
    opp_put_u32(w, s->procs);
    opp_put_u32(w, s->threads);
    opp_put_u32(w, s->recording);
    opp_put_u32(w, s->from_start);
    opp_put_u64(w, s->gpu_ns);
    opp_put_u64(w, s->steps);
    opp_put_str(w, s->step_name, strlen(s->step_name));
    uint32_t nlat = s->nlat < OPP_TOP_LAT_MAX ? s->nlat : OPP_TOP_LAT_MAX;
    opp_put_u32(w, nlat);
    for (uint32_t i = 0; i < nlat; i++)
        opp_put_u64(w, s->lat_ns[i]);
    size_t count_at = w->len;
    opp_put_u32(w, 0);
    uint32_t put = 0;
    for (size_t i = 0; i < s->nrows; i++) {
        const struct opp_top_row *r = &s->rows[i];
        size_t need = str_bytes(r->name) + str_bytes(r->lib) + 2 * 4 + 6 * 8;
        if (w->overflow || need + TRAILER > w->cap - w->len)
            break;
        opp_put_str(w, r->name, strlen(r->name));
        opp_put_str(w, r->lib, strlen(r->lib));
        opp_put_u32(w, r->proc);
        opp_put_u64(w, r->calls);
        opp_put_u64(w, r->self_ns);
        opp_put_u64(w, r->total_ns);
        opp_put_u64(w, r->gpu_ns);
        opp_put_u64(w, (uint64_t)r->mem);
        opp_put_u64(w, r->layer_ns);
        opp_put_u32(w, r->module);
        put++;
    }
    if (!w->overflow)
        memcpy(w->p + count_at, &put, 4);
    opp_put_u32(w, (uint32_t)(s->nrows - put) + s->left_out);
}

/* A string of the message as a C string: the byte after it is
 * overwritten by the next field's, so it is copied into place first. */
static const char *get_name(struct opp_rbuf *b, char **pool, size_t *used, size_t cap)
{
    size_t n;
    const char *s = opp_get_str(b, OPP_STR_MAX, &n);
    if (b->bad || *used + n + 1 > cap)
        return "";
    char *d = *pool + *used;
    memcpy(d, s, n);
    d[n] = 0;
    *used += n + 1;
    return d;
}

int opp_top_get(const void *p, size_t n, struct opp_top_snap *s)
{
    struct opp_rbuf b;
    opp_rbuf_init(&b, p, n);
    memset(s, 0, sizeof *s);
    s->now_ns = opp_get_u64(&b);
    s->events = opp_get_u64(&b);
    s->dropped = opp_get_u64(&b);
    s->interrupted = opp_get_u64(&b);
    s->procs = opp_get_u32(&b);
    s->threads = opp_get_u32(&b);
    s->recording = opp_get_u32(&b);
    s->from_start = opp_get_u32(&b);
    s->gpu_ns = opp_get_u64(&b);
    s->steps = opp_get_u64(&b);
    /* every string of the message, terminated, in one block after the rows */
    size_t pool_cap = n + 64;
    size_t used = 0;
    s->nlat = 0;
    char *strs = NULL;
    size_t sn;
    const char *sname = opp_get_str(&b, 256, &sn);
    uint32_t nlat = opp_get_u32(&b);
    if (b.bad || nlat > OPP_TOP_LAT_MAX)
        return -1;
    s->nlat = nlat;
    for (uint32_t i = 0; i < nlat; i++)
        s->lat_ns[i] = opp_get_u64(&b);
    uint32_t nrows = opp_get_u32(&b);
    if (b.bad || nrows > n / 64)
        return -1;
    s->rows = malloc(nrows * sizeof *s->rows + pool_cap);
    if (!s->rows)
        return -1;
    strs = (char *)(s->rows + nrows);
    memcpy(strs, sname, sn);
    strs[sn] = 0;
    s->step_name = strs;
    used = sn + 1;
    for (uint32_t i = 0; i < nrows && !b.bad; i++) {
        struct opp_top_row *r = &s->rows[i];
        r->name = get_name(&b, &strs, &used, pool_cap);
        r->lib = get_name(&b, &strs, &used, pool_cap);
        r->proc = opp_get_u32(&b);
        r->calls = opp_get_u64(&b);
        r->self_ns = opp_get_u64(&b);
        r->total_ns = opp_get_u64(&b);
        r->gpu_ns = opp_get_u64(&b);
        r->mem = (int64_t)opp_get_u64(&b);
        r->layer_ns = opp_get_u64(&b);
        r->module = opp_get_u32(&b);
    }
    s->nrows = nrows;
    s->left_out = opp_get_u32(&b);
    if (b.bad || opp_rbuf_left(&b)) {
        opp_top_free(s);
        return -1;
    }
    return 0;
}

void opp_top_free(struct opp_top_snap *s)
{
    free(s->rows);
    s->rows = NULL;
    s->nrows = 0;
}
