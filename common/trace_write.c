/* Trace file writer: chunk framing and the payload of each chunk type. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "trace.h"

#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

static int not_regular(const char *path, char *err, size_t errlen)
{
    snprintf(err, errlen, "refusing to write the trace to %s: not a regular file", path);
    return -EINVAL;
}

static int cannot_create(const char *path, int e, char *err, size_t errlen)
{
    const char *q = *path ? "" : "'"; /* an empty name shown as '' */
    snprintf(err, errlen, "cannot create %s%s%s: %s", q, path, q, strerror(e));
    return -e;
}

/* Takes path's lock, how (LOCK_EX: the writer's, held while it writes;
 * LOCK_SH: to see whether a writer holds it), never waiting: 0, -EBUSY
 * when another writer holds it, or -errno when the file cannot be locked
 * (err says which). */
static int lock(int fd, int how, const char *path, char *err, size_t errlen)
{
    if (flock(fd, how | LOCK_NB) == 0)
        return 0;
    int e = errno;
    if (e != EWOULDBLOCK) {
        snprintf(err, errlen, "cannot lock %s: %s", path, strerror(e));
        return -e;
    }
    snprintf(err, errlen, "%s is being written by another collector", path);
    return -EBUSY;
}

/* Why the open file fd at path cannot take a trace (err), or 0: it is
 * not a regular file, or holds something that is not a trace. */
static int unfit(int fd, const char *path, char *err, size_t errlen)
{
    struct stat st;
    if (fstat(fd, &st) < 0)
        return cannot_create(path, errno, err, errlen);
    if (!S_ISREG(st.st_mode))
        return not_regular(path, err, errlen);
    if (st.st_size > 0 && opp_trace_magic(fd) != 1) {
        snprintf(err, errlen, "refusing to overwrite %s: it is not an opprof trace", path);
        return -EEXIST;
    }
    return 0;
}

int opp_tw_check(const char *path, char *err, size_t errlen)
{
    struct stat st;
    if (!*path) /* stat("") says ENOENT: it would look like a file to make */
        return cannot_create(path, ENOENT, err, errlen);
    if (stat(path, &st) < 0) {
        if (errno != ENOENT)
            return cannot_create(path, errno, err, errlen);
        /* to be made: its directory must take a new file */
        char dir[4096] = ".";
        const char *slash = strrchr(path, '/');
        if (slash && (size_t)(slash - path) >= sizeof dir)
            return cannot_create(path, ENAMETOOLONG, err, errlen);
        if (slash)
            snprintf(dir, sizeof dir, "%.*s", slash > path ? (int)(slash - path) : 1, path);
        if (faccessat(AT_FDCWD, dir, W_OK | X_OK, AT_EACCESS) < 0)
            return cannot_create(path, errno, err, errlen);
        return 0;
    }
    if (S_ISDIR(st.st_mode))
        return cannot_create(path, EISDIR, err, errlen);
    if (!S_ISREG(st.st_mode)) /* not opened: a FIFO would wait, a device may act */
        return not_regular(path, err, errlen);
    int fd = faccessat(AT_FDCWD, path, R_OK | W_OK, AT_EACCESS) < 0
                 ? -1
                 : open(path, O_RDONLY | O_CLOEXEC); /* the writer's is O_RDWR */
    if (fd < 0)
        return cannot_create(path, errno, err, errlen);
    int rc = unfit(fd, path, err, errlen);
    if (!rc) /* a reader's lock: refused only while a writer holds its own */
        rc = lock(fd, LOCK_SH, path, err, errlen);
    close(fd);
    return rc;
}

int opp_tw_busy(const char *path, char *err, size_t errlen)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0)
        return 0;
    int rc = lock(fd, LOCK_SH, path, err, errlen);
    close(fd);
    return rc == -EBUSY ? rc : 0;
}

/* The file at w->fd made empty and given the header: 0, or -errno. A
 * trace of this version (a held one) that begins with that header is cut
 * to it in one step: no moment (a kill, a write refused) leaves it of no
 * bytes or half a header, which no reader takes for a trace. */
static int replace(struct opp_tw *w)
{
    w->held = 0;
    struct opp_file_header h = {.version = OPP_TRACE_VERSION, .header_size = OPP_FILE_HEADER_SIZE};
    memcpy(h.magic, OPP_TRACE_MAGIC, 8);
    h.crc = opp_crc32(0, &h, offsetof(struct opp_file_header, crc));
    struct opp_file_header old;
    if (pread(w->fd, &old, sizeof old, 0) == (ssize_t)sizeof old && !memcmp(&old, &h, sizeof h)) {
        if (ftruncate(w->fd, sizeof h) < 0 || lseek(w->fd, sizeof h, SEEK_SET) < 0)
            return -errno;
        w->offset = sizeof h;
        return 0;
    }
    if (ftruncate(w->fd, 0) < 0 || lseek(w->fd, 0, SEEK_SET) < 0)
        return -errno;
    ssize_t n = write(w->fd, &h, sizeof h);
    if (n != (ssize_t)sizeof h)
        return n < 0 ? -errno : -EIO;
    w->offset = sizeof h;
    return 0;
}

static int tw_open(struct opp_tw *w, const char *path, int hold, char *err, size_t errlen)
{
    w->fd = -1;
    w->offset = 0;
    w->error = 0;
    w->held = 0;
    /* whether a file was there: one held keeps its bytes until the first chunk */
    int fd = hold ? open(path, O_RDWR | O_CLOEXEC) : -1, made = fd < 0;
    if (fd < 0 && (!hold || errno == ENOENT))
        fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0)
        return cannot_create(path, errno, err, errlen);
    int rc = unfit(fd, path, err, errlen);
    if (rc) {
        close(fd);
        return rc;
    }
    /* Readers wait on this lock while the file is being written (or held). */
    if ((rc = lock(fd, LOCK_EX, path, err, errlen))) {
        close(fd);
        return rc;
    }
    w->fd = fd;
    if (!made) {
        w->held = 1;
        return 0;
    }
    if ((rc = replace(w))) {
        snprintf(err, errlen, "cannot write %s: %s", path, strerror(-rc));
        close(fd);
        w->fd = -1;
        return rc;
    }
    return 0;
}

int opp_tw_open(struct opp_tw *w, const char *path, char *err, size_t errlen)
{
    return tw_open(w, path, 0, err, errlen);
}

int opp_tw_open_held(struct opp_tw *w, const char *path, char *err, size_t errlen)
{
    return tw_open(w, path, 1, err, errlen);
}

static int write_all(struct opp_tw *w, const struct iovec *iov, int n)
{
    struct iovec v[2];
    memcpy(v, iov, sizeof(struct iovec) * (size_t)n);
    while (n) {
        ssize_t k = writev(w->fd, v, n);
        if (k < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        w->offset += (uint64_t)k;
        while (n && (size_t)k >= v[0].iov_len) {
            k -= (ssize_t)v[0].iov_len;
            v[0] = v[1];
            n--;
        }
        if (n) {
            v[0].iov_base = (char *)v[0].iov_base + k;
            v[0].iov_len -= (size_t)k;
        }
    }
    return 0;
}

int opp_tw_chunk(struct opp_tw *w, uint32_t type, const void *payload, uint32_t size)
{
    if (w->error)
        return -w->error;
    int rc = w->held ? replace(w) : 0;
    if (rc) {
        w->error = -rc;
        return rc;
    }
    struct opp_chunk_header h = {.type = type, .size = size, .crc = opp_crc32(0, payload, size)};
    struct iovec iov[2] = {{&h, sizeof h}, {(void *)payload, size}};
    rc = write_all(w, iov, size ? 2 : 1);
    if (rc)
        w->error = -rc;
    return rc;
}

int opp_tw_close(struct opp_tw *w)
{
    int rc = w->error ? -w->error : 0;
    /* Where the disk fills only on writeback (NFS, quotas), fsync and
     * close are the first to say so. */
    if (w->fd >= 0 && !rc && !w->held && fdatasync(w->fd) < 0 && errno != EINVAL && errno != EROFS)
        rc = -errno;
    if (w->fd >= 0 && close(w->fd) < 0 && !rc)
        rc = -errno;
    w->fd = -1;
    return rc;
}

/* Small chunks are built on the stack; strings are bounded by format.h. */
#define SMALL_CHUNK 4096

int opp_tw_clock(struct opp_tw *w, const struct opp_clock_sample *s)
{
    uint64_t p[3] = {s->tsc, s->mono_ns, s->real_ns};
    return opp_tw_chunk(w, OPP_CHUNK_CLOCK, p, sizeof p);
}

static int put_done(struct opp_tw *w, uint32_t type, struct opp_wbuf *b)
{
    if (b->overflow)
        return -EOVERFLOW;
    return opp_tw_chunk(w, type, b->p, (uint32_t)b->len);
}

int opp_tw_process(struct opp_tw *w, const struct opp_tw_process *p)
{
    size_t cap = 64 + strlen(p->exe ? p->exe : "");
    for (uint32_t i = 0; i < p->argc; i++)
        cap += 4 + strlen(p->argv[i]);
    char *mem = malloc(cap);
    if (!mem)
        return -ENOMEM;
    struct opp_wbuf b;
    opp_wbuf_init(&b, mem, cap);
    opp_put_u32(&b, p->proc);
    opp_put_u32(&b, p->pid);
    opp_put_u32(&b, p->ppid);
    opp_put_u32(&b, p->parent_proc);
    opp_put_u32(&b, p->clock);
    opp_put_u32(&b, p->argc);
    opp_put_u64(&b, p->start_ticks);
    opp_put_u64(&b, p->start_real_ns);
    opp_put_str(&b, p->exe ? p->exe : "", strlen(p->exe ? p->exe : ""));
    for (uint32_t i = 0; i < p->argc; i++)
        opp_put_str(&b, p->argv[i], strlen(p->argv[i]));
    int rc = put_done(w, OPP_CHUNK_PROCESS, &b);
    free(mem);
    return rc;
}

int opp_tw_funcs(struct opp_tw *w, uint32_t proc, uint32_t count, const struct opp_func_desc *f)
{
    size_t cap = 16;
    for (uint32_t i = 0; i < count; i++)
        cap += 16 + strlen(f[i].lib) + strlen(f[i].name);
    char *mem = malloc(cap);
    if (!mem)
        return -ENOMEM;
    struct opp_wbuf b;
    opp_wbuf_init(&b, mem, cap);
    opp_put_u32(&b, proc);
    opp_put_u32(&b, count);
    for (uint32_t i = 0; i < count; i++) {
        opp_put_u32(&b, f[i].kind);
        opp_put_u32(&b, f[i].dtype);
        opp_put_str(&b, f[i].lib, strlen(f[i].lib));
        opp_put_str(&b, f[i].name, strlen(f[i].name));
    }
    int rc = put_done(w, OPP_CHUNK_FUNCS, &b);
    free(mem);
    return rc;
}

int opp_tw_thread(struct opp_tw *w, uint32_t proc, uint32_t tid, const char *name)
{
    char mem[SMALL_CHUNK];
    struct opp_wbuf b;
    opp_wbuf_init(&b, mem, sizeof mem);
    opp_put_u32(&b, proc);
    opp_put_u32(&b, tid);
    size_t n = strnlen(name, OPP_NAME_MAX);
    opp_put_str(&b, name, n);
    return put_done(w, OPP_CHUNK_THREAD, &b);
}

int opp_tw_dropped(struct opp_tw *w, uint32_t proc, uint32_t tid, uint64_t count, uint32_t why)
{
    char mem[24];
    struct opp_wbuf b;
    opp_wbuf_init(&b, mem, sizeof mem);
    opp_put_u32(&b, proc);
    opp_put_u32(&b, tid);
    opp_put_u64(&b, count);
    if (why != OPP_DROP_FULL) { /* the full ring's chunk as every version wrote it */
        opp_put_u32(&b, why);
        opp_put_u32(&b, 0);
    }
    return put_done(w, OPP_CHUNK_DROPPED, &b);
}

/* A chunk of u32 proc then a payload as the process sent it. */
static int proc_chunk(struct opp_tw *w, uint32_t type, uint32_t proc, const void *payload,
                      uint32_t size)
{
    if (size > OPP_CHUNK_MAX - 4)
        return -EMSGSIZE;
    uint8_t *mem = malloc(4u + size);
    if (!mem)
        return -ENOMEM;
    memcpy(mem, &proc, 4);
    memcpy(mem + 4, payload, size);
    int rc = opp_tw_chunk(w, type, mem, 4u + size);
    free(mem);
    return rc;
}

int opp_tw_gpu(struct opp_tw *w, uint32_t proc, const void *records, uint32_t size)
{
    return proc_chunk(w, OPP_CHUNK_GPU, proc, records, size);
}

int opp_tw_info(struct opp_tw *w, uint32_t proc, const void *pairs, uint32_t size)
{
    return proc_chunk(w, OPP_CHUNK_INFO, proc, pairs, size);
}

int opp_tw_process_end(struct opp_tw *w, uint32_t proc, uint32_t how, uint64_t end_ticks)
{
    char mem[16];
    struct opp_wbuf b;
    opp_wbuf_init(&b, mem, sizeof mem);
    opp_put_u32(&b, proc);
    opp_put_u32(&b, how);
    opp_put_u64(&b, end_ticks);
    return put_done(w, OPP_CHUNK_PROCESS_END, &b);
}

int opp_tw_process_status(struct opp_tw *w, uint32_t proc, uint32_t how, uint32_t code)
{
    char mem[16];
    struct opp_wbuf b;
    opp_wbuf_init(&b, mem, sizeof mem);
    opp_put_u32(&b, proc);
    opp_put_u32(&b, how);
    opp_put_u32(&b, code);
    opp_put_u32(&b, 0);
    return put_done(w, OPP_CHUNK_PROCESS_STATUS, &b);
}

int opp_tw_end(struct opp_tw *w, uint64_t events, uint64_t dropped, uint32_t processes)
{
    char mem[24];
    struct opp_wbuf b;
    opp_wbuf_init(&b, mem, sizeof mem);
    opp_put_u64(&b, events);
    opp_put_u64(&b, dropped);
    opp_put_u32(&b, processes);
    opp_put_u32(&b, 0);
    return put_done(w, OPP_CHUNK_END, &b);
}

void opp_ev_begin(struct opp_ev_enc *e, void *mem, size_t cap, uint32_t proc, uint32_t tid,
                  uint64_t base_end)
{
    opp_wbuf_init(&e->w, mem, cap);
    opp_put_u32(&e->w, proc);
    opp_put_u32(&e->w, tid);
    opp_put_u32(&e->w, 0); /* count, patched by opp_ev_write */
    opp_put_u32(&e->w, 0);
    opp_put_u64(&e->w, base_end);
    e->prev_end = base_end;
    e->count = 0;
}

int opp_ev_write(struct opp_tw *w, struct opp_ev_enc *e)
{
    if (!e->count)
        return 0;
    memcpy(e->w.p + 8, &e->count, 4);
    return opp_tw_chunk(w, OPP_CHUNK_EVENTS, e->w.p, (uint32_t)e->w.len);
}
