/* Records sorted beyond memory (extsort.h). */
#include "analysis/extsort.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define RUN_BUF (64u << 10) /* bytes read back from a run at a time */

struct run {
    off_t off;     /* where its records are in the file */
    size_t n, got; /* its records; how many were read back */
    char *buf;     /* those read back and not yet taken: buf[at..have) */
    size_t at, have;
};

struct opp_extsort {
    size_t rec, cap; /* record size; records the buffer holds */
    int (*cmp)(const void *, const void *);
    char *mem;
    size_t n; /* records in the buffer */
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
    qsort(s->mem, s->n, s->rec, s->cmp);
    size_t bytes = s->n * s->rec, done = 0;
    while (done < bytes) {
        ssize_t w = pwrite(s->fd, s->mem + done, bytes - done, s->end + (off_t)done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return w < 0 ? -errno : -ENOSPC;
        done += (size_t)w;
    }
    s->runs[s->nruns++] = (struct run){.off = s->end, .n = s->n};
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
    memcpy(s->mem + s->n++ * s->rec, rec, s->rec);
    s->count++;
    return 0;
}

/* Run r's next records read back; 0, or -errno. */
static int refill(struct opp_extsort *s, struct run *r)
{
    size_t per = RUN_BUF / s->rec ? RUN_BUF / s->rec : 1;
    size_t want = r->n - r->got < per ? r->n - r->got : per;
    size_t bytes = want * s->rec, done = 0;
    off_t at = r->off + (off_t)(r->got * s->rec);
    while (done < bytes) {
        ssize_t g = pread(s->fd, r->buf + done, bytes - done, at + (off_t)done);
        if (g < 0 && errno == EINTR)
            continue;
        if (g <= 0)
            return g < 0 ? -errno : -EIO;
        done += (size_t)g;
    }
    r->got += want;
    r->at = 0;
    r->have = want;
    return 0;
}

static const void *head(const struct opp_extsort *s, size_t run)
{
    const struct run *r = &s->runs[run];
    return r->buf + r->at * s->rec;
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
        r->got = 0;
        if ((s->err = refill(s, r)))
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
        qsort(s->mem, s->n, s->rec, s->cmp);
        return 0;
    }
    if (s->n && (s->err = spill(s)))
        return s->err;
    free(s->mem); /* the runs' buffers take its place */
    s->mem = NULL;
    s->heap = calloc(s->nruns, sizeof *s->heap);
    if (!s->heap)
        return s->err = -ENOMEM;
    size_t per = RUN_BUF / s->rec ? RUN_BUF / s->rec : 1;
    for (size_t i = 0; i < s->nruns; i++)
        if (!(s->runs[i].buf = malloc(per * s->rec)))
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
    memcpy(s->out, head(s, i), s->rec);
    if (++r->at == r->have) {
        if (r->got < r->n) {
            if ((s->err = refill(s, r)))
                return NULL;
        } else {
            s->heap[0] = s->heap[--s->nheap]; /* this run is over */
        }
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

void opp_extsort_free(struct opp_extsort *s)
{
    if (!s)
        return;
    if (s->fd >= 0)
        close(s->fd);
    for (size_t i = 0; i < s->nruns; i++)
        free(s->runs[i].buf);
    free(s->runs);
    free(s->heap);
    free(s->mem);
    free(s->out);
    free(s);
}
