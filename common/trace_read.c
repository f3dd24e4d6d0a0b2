/* Trace file reader: validates every chunk (size, CRC, and its fields in
 * trace_chunks.c) before it is delivered, converts ticks to
 * CLOCK_MONOTONIC ns, and stops cleanly with a warning at the first
 * damaged or cut chunk. This file reads the file: its header, each chunk's
 * frame, the clock calibration, a collector still writing it. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "trace.h"
#include "trace_reader.h"

#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

static int read_header(struct reader *r, struct opp_chunk_header *h)
{
    if (r->size - r->off < OPP_CHUNK_HEADER_SIZE) {
        if (r->size != r->off)
            snprintf(r->sum->warning, sizeof r->sum->warning,
                     "trace cut at byte %llu: %llu stray bytes after the last whole chunk",
                     (unsigned long long)r->off, (unsigned long long)(r->size - r->off));
        return 1;
    }
    if (fread(h, sizeof *h, 1, r->f) != 1)
        return -1;
    if (h->type == 0 || h->type > OPP_CHUNK_TYPE_MAX || h->size > OPP_CHUNK_MAX || h->reserved) {
        r->damaged = 1;
        snprintf(r->sum->warning, sizeof r->sum->warning,
                 "trace damaged at byte %llu: not a chunk header (type %u, size %u)",
                 (unsigned long long)r->off, h->type, h->size);
        return 1;
    }
    if (r->size - r->off - OPP_CHUNK_HEADER_SIZE < h->size) {
        snprintf(r->sum->warning, sizeof r->sum->warning,
                 "trace cut at byte %llu: last chunk has %llu of its %u bytes",
                 (unsigned long long)r->off,
                 (unsigned long long)(r->size - r->off - OPP_CHUNK_HEADER_SIZE), h->size);
        return 1;
    }
    return 0;
}

static int read_payload(struct reader *r, const struct opp_chunk_header *h)
{
    if (h->size > r->bufcap) {
        size_t cap = h->size < 65536 ? 65536 : h->size;
        uint8_t *nb = realloc(r->buf, cap);
        if (!nb)
            return -1;
        r->buf = nb;
        r->bufcap = cap;
    }
    if (h->size && fread(r->buf, h->size, 1, r->f) != 1)
        return -1;
    if (opp_crc32(0, r->buf, h->size) != h->crc) {
        r->damaged = 1;
        snprintf(r->sum->warning, sizeof r->sum->warning,
                 "trace damaged at byte %llu: checksum mismatch in a chunk of type %u",
                 (unsigned long long)r->off, h->type);
        return 1;
    }
    return 0;
}

/* First pass: the first and last CLOCK samples give the TSC calibration. */
static void calibrate(struct reader *r)
{
    uint64_t first_t = 0, first_m = 0, last_t = 0, last_m = 0;
    int n = 0;
    struct opp_chunk_header h;
    char saved[sizeof r->sum->warning];
    memcpy(saved, r->sum->warning, sizeof saved);
    while (read_header(r, &h) == 0) {
        if (h.type == OPP_CHUNK_CLOCK && h.size == 24) {
            if (read_payload(r, &h) != 0)
                break;
            uint64_t t, m;
            memcpy(&t, r->buf, 8);
            memcpy(&m, r->buf + 8, 8);
            if (!n) {
                first_t = t;
                first_m = m;
            }
            last_t = t;
            last_m = m;
            n++;
        } else if (fseeko(r->f, h.size, SEEK_CUR) != 0) {
            break;
        }
        r->off += OPP_CHUNK_HEADER_SIZE + h.size;
    }
    memcpy(r->sum->warning, saved, sizeof saved);
    r->damaged = 0;
    r->tsc0 = first_t;
    r->mono0 = first_m;
    r->mult = 1ull << 32;
    if (n >= 2 && last_t > first_t && last_m > first_m) {
        r->mult = (uint64_t)(((unsigned __int128)(last_m - first_m) << 32) / (last_t - first_t));
        r->have_cal = 1;
    }
}

/* Wait a little for a collector still writing the file (it holds LOCK_EX):
 * 0, or -1 when OPPROF_WAIT_MS is not a number of milliseconds (said in
 * err). */
static int wait_writer(int fd, const struct stat *st, struct opp_tr_summary *sum, char *err,
                       size_t errlen)
{
    /* The files whose writer a read of this process waited out: a command
     * reads a trace several times, and waits once (OPPROF_WAIT_MS), not
     * once a read. */
    static struct {
        dev_t dev;
        ino_t ino;
    } waited_out[16];
    static unsigned nwaited;
    int again = 0;
    for (unsigned i = 0; i < nwaited && i < 16 && !again; i++)
        again = waited_out[i].dev == st->st_dev && waited_out[i].ino == st->st_ino;
    const char *w = getenv("OPPROF_WAIT_MS");
    long ms = 5000;
    if (w) {
        char *end;
        errno = 0;
        ms = strtol(w, &end, 10);
        if (end == w || *end || ms < 0 || errno) {
            snprintf(err, errlen, "OPPROF_WAIT_MS=%s is not a number of milliseconds", w);
            return -1;
        }
    }
    if (again)
        ms = 0;
    for (long waited = 0;; waited += 20) {
        if (flock(fd, LOCK_SH | LOCK_NB) == 0) {
            flock(fd, LOCK_UN);
            return 0;
        }
        if (errno != EWOULDBLOCK || waited >= ms)
            break;
        usleep(20000);
    }
    if (!again) {
        waited_out[nwaited % 16].dev = st->st_dev;
        waited_out[nwaited % 16].ino = st->st_ino;
        nwaited++;
    }
    snprintf(sum->warning, sizeof sum->warning, "trace is still being written");
    return 0;
}

int opp_trace_read(const char *path, const struct opp_tr_visitor *v, void *ctx,
                   struct opp_tr_summary *sum, char *err, size_t errlen)
{
    memset(sum, 0, sizeof *sum);
    struct reader r = {.path = path, .sum = sum};
    /* O_NONBLOCK: a FIFO would otherwise block the open until a writer came */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
        snprintf(err, errlen, "cannot open %s: %s", path, strerror(errno));
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
        snprintf(err, errlen, "%s is not a regular file", path);
        close(fd);
        return -1;
    }
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    if (wait_writer(fd, &st, sum, err, errlen) < 0) {
        close(fd);
        return -1;
    }
    char still[sizeof sum->warning];
    memcpy(still, sum->warning, sizeof still);
    sum->warning[0] = 0;
    sum->held = still[0] != 0;
    if (fstat(fd, &st) < 0) {
        snprintf(err, errlen, "cannot stat %s: %s", path, strerror(errno));
        close(fd);
        return -1;
    }
    r.f = fdopen(fd, "rb");
    if (!r.f) {
        snprintf(err, errlen, "cannot read %s: %s", path, strerror(errno));
        close(fd);
        return -1;
    }
    /* stdio's own buffer, a block: a payload larger than it is read
     * straight into r.buf, and calibrate's seeks refill it at each chunk,
     * which a 1 MiB one made slower (glibc's setvbuf, given a size and no
     * buffer, keeps its own anyway) */
    r.size = (uint64_t)st.st_size;
    sum->file_size = r.size;
    struct opp_file_header fh;
    const size_t v1 = OPP_FILE_HEADER_SIZE_V1;
    if (r.size < v1 || fread(&fh, v1, 1, r.f) != 1 || memcmp(fh.magic, OPP_TRACE_MAGIC, 8) != 0) {
        snprintf(err, errlen, "%s is not an opprof trace (bad magic)", path);
        fclose(r.f);
        return -1;
    }
    /* From version 6 the header carries its own CRC, so a flipped version
     * or size is caught rather than read as another format. */
    size_t hsize = v1;
    if (fh.header_size == OPP_FILE_HEADER_SIZE) {
        hsize = OPP_FILE_HEADER_SIZE;
        if (r.size < hsize || fread(&fh.crc, hsize - v1, 1, r.f) != 1) {
            snprintf(err, errlen, "%s: the trace is cut inside its header", path);
            fclose(r.f);
            return -1;
        }
        if (fh.crc != opp_crc32(0, &fh, offsetof(struct opp_file_header, crc)) || fh.reserved ||
            fh.version < 6) {
            snprintf(err, errlen, "%s: the trace's header is damaged (checksum mismatch)", path);
            fclose(r.f);
            return -1;
        }
    } else if (fh.header_size != v1 || fh.version >= 6) {
        snprintf(err, errlen, "%s: the trace's header is damaged (header size %u, version %u)",
                 path, fh.header_size, fh.version);
        fclose(r.f);
        return -1;
    }
    if (fh.version < OPP_TRACE_VERSION_MIN || fh.version > OPP_TRACE_VERSION) {
        snprintf(err, errlen,
                 "%s: trace format version %u is not supported (this opprof reads %u to %u)",
                 path, fh.version, OPP_TRACE_VERSION_MIN, OPP_TRACE_VERSION);
        fclose(r.f);
        return -1;
    }
    sum->version = fh.version;
    r.off = hsize;
    calibrate(&r);
    if (fseeko(r.f, (off_t)hsize, SEEK_SET) != 0) {
        snprintf(err, errlen, "cannot seek in %s", path);
        fclose(r.f);
        return -1;
    }
    r.off = hsize;
    int rc = 0;
    struct opp_chunk_header h;
    while (!sum->complete) {
        int hr = read_header(&r, &h);
        if (hr) {
            if (hr < 0)
                snprintf(sum->warning, sizeof sum->warning, "read error at byte %llu",
                         (unsigned long long)r.off);
            break;
        }
        int pr = read_payload(&r, &h);
        if (pr) {
            if (pr < 0)
                snprintf(sum->warning, sizeof sum->warning, "read error at byte %llu",
                         (unsigned long long)r.off);
            break;
        }
        struct opp_rbuf b;
        opp_rbuf_init(&b, r.buf, h.size);
        int cr = opp_tr_chunk(&r, h.type, &b, v, ctx);
        if (cr == 1 || cr < 0)
            r.damaged = 1;
        if (cr == 1)
            break;
        if (cr < 0) {
            snprintf(sum->warning, sizeof sum->warning,
                     "trace damaged at byte %llu: invalid %s chunk", (unsigned long long)r.off,
                     opp_tr_chunk_name(h.type));
            break;
        }
        r.off += OPP_CHUNK_HEADER_SIZE + h.size;
        sum->chunks++;
        sum->bytes_good = r.off;
        if (cr == 2)
            break; /* the visitor asked to stop */
    }
    if (r.damaged && !sum->chunks) { /* a header and nothing after it to read */
        snprintf(err, errlen, "%s: nothing in the trace can be read: %s", path, sum->warning);
        rc = -1;
    }
    if (!sum->warning[0] && !sum->complete) {
        if (still[0])
            snprintf(sum->warning, sizeof sum->warning, "%s", still);
        else
            snprintf(sum->warning, sizeof sum->warning,
                     "trace has no end marker: the collector stopped before finishing it");
    }
    if (sum->complete && r.off < r.size && !sum->warning[0])
        snprintf(sum->warning, sizeof sum->warning, "%llu bytes after the end marker ignored",
                 (unsigned long long)(r.size - r.off));
    if (!r.have_cal && !sum->warning[0]) {
        for (uint32_t i = 0; i < r.nprocs; i++)
            if (r.procs[i].known && r.procs[i].clock == OPP_CLOCK_TSC) {
                snprintf(sum->warning, sizeof sum->warning,
                         "no clock calibration in the trace: times are in TSC ticks");
                break;
            }
    }
    free(r.procs);
    free(r.buf);
    fclose(r.f);
    return rc;
}

int opp_trace_magic(int fd)
{
    char head[sizeof OPP_TRACE_MAGIC - 1];
    ssize_t got = pread(fd, head, sizeof head, 0);
    if (got < 0)
        return -errno;
    return got == (ssize_t)sizeof head && !memcmp(head, OPP_TRACE_MAGIC, sizeof head);
}

int opp_trace_check(const char *path, char *err, size_t errlen)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st)) {
        snprintf(err, errlen, "cannot read %s: %s", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    int magic = S_ISREG(st.st_mode) ? opp_trace_magic(fd) : 0;
    close(fd);
    if (!S_ISREG(st.st_mode))
        snprintf(err, errlen, "%s is not a regular file", path);
    else if (magic < 0)
        snprintf(err, errlen, "cannot read %s: %s", path, strerror(-magic));
    else if (!magic)
        snprintf(err, errlen, "%s is not an opprof trace (bad magic)", path);
    else
        return 0;
    return -1;
}

int opp_trace_distinct(const char *const *paths, size_t n, char *err, size_t errlen)
{
    struct stat *st = n > 1 ? calloc(n, sizeof *st) : NULL;
    if (n > 1 && !st) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    int rc = 0;
    for (size_t i = 0; n > 1 && i < n && !rc; i++) {
        if (stat(paths[i], &st[i])) /* the reader says why */
            st[i].st_ino = 0;
        for (size_t k = 0; k < i && !rc && st[i].st_ino; k++)
            if (st[k].st_ino == st[i].st_ino && st[k].st_dev == st[i].st_dev) {
                snprintf(err, errlen, "%s and %s are the same trace: give it once", paths[k],
                         paths[i]);
                rc = -1;
            }
    }
    free(st);
    return rc;
}
