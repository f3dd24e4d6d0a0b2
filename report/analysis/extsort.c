/* Records sorted beyond memory (extsort.h). */
#include "analysis/extsort.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define RUN_BUF (64u << 10) /* bytes read back from a run at a time */
#define ENC_BUF (64u << 10) /* bytes of a run encoded before they are written */

/* A run is written encoded: each record as its 8-byte words' differences
 * from the record before it (the run's first from zeros), each a zigzag
 * varint. Sorted neighbours differ little (a key one more, a time a few
 * microseconds later), so a run takes a fraction of its records' bytes in
 * the temporary file, and in the kernel's copies to and from it. */
struct run {
    off_t off;         /* where its bytes are in the file */
    size_t bytes, got; /* its bytes; how many were read back */
    size_t n, left;    /* its records; those not yet decoded */
    char *buf;         /* bytes read back and not yet decoded: buf[at..have) */
    size_t at, have;
    char *cur; /* its current record (the one decoded last) */
};

struct opp_extsort {
    size_t rec, cap; /* record size; records the buffer holds */
    size_t words;    /* 8-byte words a record spans (the last maybe partial) */
    size_t enc_max;  /* the most bytes a record takes encoded */
    int (*cmp)(const void *, const void *);
    char *mem;
    size_t n;     /* records in the buffer */
    int disorder; /* one of them came before the one added before it */
    int fd;
    off_t end;
    struct run *runs;
    size_t nruns, runs_cap, count, pos;
    size_t *heap; /* runs by their current record */
    size_t nheap;
    char *out; /* the record handed out while merging */
    int err, reading;
};

struct opp_extsort *opp_extsort_new(size_t rec_size, int (*cmp)(const void *, const void *),
                                    size_t mem_bytes)
{
    struct opp_extsort *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->rec = rec_size;
    s->words = (rec_size + 7) / 8;
    s->enc_max = s->words * 10;
    s->cap = mem_bytes / rec_size ? mem_bytes / rec_size : 1;
    s->cmp = cmp;
    s->fd = -1;
    s->mem = malloc(s->cap * rec_size);
    s->out = malloc(rec_size);
    if (!s->mem || !s->out) {
        opp_extsort_free(s);
        return NULL;
    }
    return s;
}

/* Where the temporary files go. */
static const char *temp_dir(void)
{
    const char *dir = getenv("TMPDIR");
    return dir && *dir ? dir : "/tmp";
}

void opp_extsort_no_room(char *err, size_t errlen, int rc)
{
    snprintf(err, errlen, "no room for temporary files in %s (%s)", temp_dir(), strerror(-rc));
}

static int temp_file(void)
{
    char path[4096];
    if (snprintf(path, sizeof path, "%s/opprof-sort-XXXXXX", temp_dir()) >= (int)sizeof path) {
        errno = ENAMETOOLONG;
        return -1;
    }
    int fd = mkstemp(path);
    if (fd >= 0)
        unlink(path);
    return fd;
}

/* Word i of record r (the last zero-filled past the record's end); whole
 * words copied by a copy of constant size, not a library call. */
static uint64_t word(const struct opp_extsort *s, const char *r, size_t i)
{
    uint64_t w = 0;
    size_t at = i * 8;
    if (s->rec - at >= 8)
        memcpy(&w, r + at, 8);
    else
        memcpy(&w, r + at, s->rec - at);
    return w;
}

static void set_word(const struct opp_extsort *s, char *r, size_t i, uint64_t w)
{
    size_t at = i * 8;
    if (s->rec - at >= 8)
        memcpy(r + at, &w, 8);
    else
        memcpy(r + at, &w, s->rec - at);
}

/* Record r encoded against prev (NULL: zeros) into p; the bytes written. */
static size_t encode(const struct opp_extsort *s, const char *prev, const char *r, uint8_t *p)
{
    uint8_t *at = p;
    for (size_t i = 0; i < s->words; i++) {
        uint64_t d = word(s, r, i) - (prev ? word(s, prev, i) : 0);
        uint64_t z = (d << 1) ^ (uint64_t) - (int64_t)(d >> 63); /* zigzag */
        while (z >= 0x80) {
            *at++ = (uint8_t)(z | 0x80);
            z >>= 7;
        }
        *at++ = (uint8_t)z;
    }
    return (size_t)(at - p);
}

/* The record after r decoded from p[0..len) into r, in place; the bytes
 * taken, 0 when they are not a whole record. */
static size_t decode(const struct opp_extsort *s, char *r, const uint8_t *p, size_t len)
{
    const uint8_t *at = p, *end = p + len;
    for (size_t i = 0; i < s->words; i++) {
        uint64_t z = 0;
        for (unsigned shift = 0;; shift += 7) {
            if (at == end || shift > 63)
                return 0;
            uint8_t b = *at++;
            z |= (uint64_t)(b & 0x7f) << shift;
            if (!(b & 0x80))
                break;
        }
        uint64_t d = (z >> 1) ^ (uint64_t) - (int64_t)(z & 1);
        set_word(s, r, i, word(s, r, i) + d);
    }
    return (size_t)(at - p);
}

static int write_all(struct opp_extsort *s, const void *p, size_t bytes, off_t off)
{
    size_t done = 0;
    while (done < bytes) {
        ssize_t w = pwrite(s->fd, (const char *)p + done, bytes - done, off + (off_t)done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return w < 0 ? -errno : -ENOSPC;
        done += (size_t)w;
    }
    return 0;
}

/* The buffer sorted: records that came in order are left as they came
 * (qsort, glibc's merge sort, keeps equal ones so too). */
static void sort_mem(struct opp_extsort *s)
{
    if (s->disorder)
        qsort(s->mem, s->n, s->rec, s->cmp);
    s->disorder = 0;
}

/* The buffer sorted and written as a run. */
static int spill(struct opp_extsort *s)
{
    if (s->fd < 0 && (s->fd = temp_file()) < 0)
        return -errno;
    if (s->nruns == s->runs_cap) {
        size_t n = s->runs_cap ? 2 * s->runs_cap : 16;
        struct run *r = reallocarray(s->runs, n, sizeof *r);
        if (!r)
            return -ENOMEM;
        s->runs = r;
        s->runs_cap = n;
    }
    sort_mem(s);
    size_t cap = ENC_BUF > s->enc_max ? ENC_BUF : s->enc_max;
    uint8_t *enc = malloc(cap);
    if (!enc)
        return -ENOMEM;
    size_t bytes = 0, have = 0;
    int rc = 0;
    for (size_t i = 0; i < s->n && !rc; i++) {
        if (cap - have < s->enc_max) {
            rc = write_all(s, enc, have, s->end + (off_t)bytes);
            bytes += have;
            have = 0;
        }
        const char *r = s->mem + i * s->rec;
        have += encode(s, i ? r - s->rec : NULL, r, enc + have);
    }
    if (!rc)
        rc = write_all(s, enc, have, s->end + (off_t)bytes);
    bytes += have;
    free(enc);
    if (rc)
        return rc;
    s->runs[s->nruns++] = (struct run){.off = s->end, .bytes = bytes, .n = s->n};
    s->end += (off_t)bytes;
    s->n = 0;
    return 0;
}

int opp_extsort_add(struct opp_extsort *s, const void *rec)
{
    if (s->err)
        return s->err;
    if (s->n == s->cap && (s->err = spill(s)))
        return s->err;
    char *at = s->mem + s->n * s->rec;
    if (s->n++ && !s->disorder)
        s->disorder = s->cmp(at - s->rec, rec) > 0;
    memcpy(at, rec, s->rec);
    s->count++;
    return 0;
}

/* Run r's next bytes read back after those not yet decoded; 0, or
 * -errno. */
static int refill(struct opp_extsort *s, struct run *r)
{
    size_t keep = r->have - r->at;
    memmove(r->buf, r->buf + r->at, keep);
    size_t room = RUN_BUF + s->enc_max - keep; /* keep < enc_max */
    size_t want = r->bytes - r->got < room ? r->bytes - r->got : room;
    size_t done = 0;
    off_t at = r->off + (off_t)r->got;
    while (done < want) {
        ssize_t g = pread(s->fd, r->buf + keep + done, want - done, at + (off_t)done);
        if (g < 0 && errno == EINTR)
            continue;
        if (g <= 0)
            return g < 0 ? -errno : -EIO;
        done += (size_t)g;
    }
    r->got += want;
    r->at = 0;
    r->have = keep + want;
    return 0;
}

/* Run r's next record decoded into r->cur; 0, or -errno. */
static int advance(struct opp_extsort *s, struct run *r)
{
    if (r->have - r->at < s->enc_max && r->got < r->bytes) {
        int rc = refill(s, r);
        if (rc)
            return rc;
    }
    size_t used = decode(s, r->cur, (const uint8_t *)r->buf + r->at, r->have - r->at);
    if (!used)
        return -EIO;
    r->at += used;
    r->left--;
    return 0;
}

static const void *head(const struct opp_extsort *s, size_t run)
{
    return s->runs[run].cur;
}

static int before(const struct opp_extsort *s, size_t a, size_t b)
{
    return s->cmp(head(s, a), head(s, b)) < 0;
}

static void sift_down(struct opp_extsort *s, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, m = i;
        if (l < s->nheap && before(s, s->heap[l], s->heap[m]))
            m = l;
        if (l + 1 < s->nheap && before(s, s->heap[l + 1], s->heap[m]))
            m = l + 1;
        if (m == i)
            return;
        size_t t = s->heap[i];
        s->heap[i] = s->heap[m];
        s->heap[m] = t;
        i = m;
    }
}

/* Each run read from its start, its first record in the heap. 0 or -errno. */
static int merge_start(struct opp_extsort *s)
{
    s->nheap = 0;
    for (size_t i = 0; i < s->nruns; i++) {
        struct run *r = &s->runs[i];
        r->got = r->at = r->have = 0;
        r->left = r->n;
        memset(r->cur, 0, s->rec);
        if ((s->err = advance(s, r)))
            return s->err;
        s->heap[s->nheap++] = i;
    }
    for (size_t i = s->nheap / 2; i-- > 0;)
        sift_down(s, i);
    return 0;
}

int opp_extsort_done(struct opp_extsort *s)
{
    if (s->err || s->reading)
        return s->err;
    s->reading = 1;
    if (!s->nruns) {
        sort_mem(s);
        return 0;
    }
    if (s->n && (s->err = spill(s)))
        return s->err;
    free(s->mem); /* the runs' buffers take its place */
    s->mem = NULL;
    s->heap = calloc(s->nruns, sizeof *s->heap);
    if (!s->heap)
        return s->err = -ENOMEM;
    for (size_t i = 0; i < s->nruns; i++)
        if (!(s->runs[i].buf = malloc(RUN_BUF + s->enc_max)) || !(s->runs[i].cur = malloc(s->rec)))
            return s->err = -ENOMEM;
    return merge_start(s);
}

int opp_extsort_rewind(struct opp_extsort *s)
{
    if (s->err || !s->reading)
        return s->err ? s->err : -EINVAL;
    s->pos = 0;
    return s->nruns ? merge_start(s) : 0;
}

const void *opp_extsort_next(struct opp_extsort *s)
{
    if (s->err || !s->reading)
        return NULL;
    if (!s->nruns)
        return s->pos < s->n ? s->mem + s->pos++ * s->rec : NULL;
    if (!s->nheap)
        return NULL;
    size_t i = s->heap[0];
    struct run *r = &s->runs[i];
    memcpy(s->out, r->cur, s->rec);
    if (r->left) {
        if ((s->err = advance(s, r)))
            return NULL;
    } else {
        s->heap[0] = s->heap[--s->nheap]; /* this run is over */
    }
    sift_down(s, 0);
    return s->out;
}

int opp_extsort_error(const struct opp_extsort *s)
{
    return s->err;
}

size_t opp_extsort_count(const struct opp_extsort *s)
{
    return s->count;
}

size_t opp_extsort_file_bytes(const struct opp_extsort *s)
{
    return (size_t)s->end;
}

void opp_extsort_free(struct opp_extsort *s)
{
    if (!s)
        return;
    if (s->fd >= 0)
        close(s->fd);
    for (size_t i = 0; i < s->nruns; i++) {
        free(s->runs[i].buf);
        free(s->runs[i].cur);
    }
    free(s->runs);
    free(s->heap);
    free(s->mem);
    free(s->out);
    free(s);
}
