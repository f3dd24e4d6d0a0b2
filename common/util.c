/* Shared helpers (see util.h). Everything here that the preload may call
 * after fork() avoids malloc and stdio. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

void opp_clock_sample(struct opp_clock_sample *s)
{
    /* Keep the tightest of a few brackets around clock_gettime. */
    uint64_t best = UINT64_MAX;
    for (int i = 0; i < 5; i++) {
        uint64_t a = __rdtsc();
        uint64_t m = opp_mono_ns();
        uint64_t b = __rdtsc();
        if (b - a < best) {
            best = b - a;
            s->tsc = a + (b - a) / 2;
            s->mono_ns = m;
        }
    }
    s->real_ns = opp_real_ns();
}

int opp_tsc_usable(void)
{
    int fd = open("/proc/cpuinfo", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    char buf[8192];
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return 0;
    buf[n] = 0;
    char *flags = strstr(buf, "\nflags");
    if (!flags)
        return 0;
    char *eol = strchr(flags + 1, '\n');
    if (eol)
        *eol = 0;
    return strstr(flags, " constant_tsc") && strstr(flags, " nonstop_tsc");
}

/* CRC-32C (Castagnoli): the SSE4.2 instruction where the CPU has it (the
 * collector checksums every byte it writes), a table otherwise. */
static uint32_t crc_table[256];
static _Atomic int crc_mode; /* 0 unknown, 1 table, 2 hardware */

static void crc_init(void)
{
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++)
            c = c & 1 ? 0x82f63b78u ^ (c >> 1) : c >> 1;
        crc_table[i] = c; /* racing initialisers write the same values */
    }
    __builtin_cpu_init();
    atomic_store_explicit(&crc_mode, __builtin_cpu_supports("sse4.2") ? 2 : 1,
                          memory_order_release);
}

__attribute__((target("sse4.2"))) static uint32_t crc_hw(uint32_t c, const uint8_t *p, size_t n)
{
    uint64_t c64 = c;
    for (; n >= 8; n -= 8, p += 8) {
        uint64_t v;
        memcpy(&v, p, 8);
        c64 = __builtin_ia32_crc32di(c64, v);
    }
    c = (uint32_t)c64;
    while (n--)
        c = __builtin_ia32_crc32qi(c, *p++);
    return c;
}

uint32_t opp_crc32(uint32_t crc, const void *buf, size_t len)
{
    int mode = atomic_load_explicit(&crc_mode, memory_order_acquire);
    if (!mode) {
        crc_init();
        mode = atomic_load_explicit(&crc_mode, memory_order_acquire);
    }
    const uint8_t *p = buf;
    crc = ~crc;
    if (mode == 2)
        return ~crc_hw(crc, p, len);
    while (len--)
        crc = crc_table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
    return ~crc;
}

int opp_send_all(int fd, const void *buf, size_t len)
{
    const char *p = buf;
    while (len) {
        ssize_t n = send(fd, p, len, MSG_NOSIGNAL);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        if ((size_t)n > len)
            return -ENOSYS; /* not made: a trap's (opp_send_msg) */
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

int opp_recv_all(int fd, void *buf, size_t len, int timeout_ms)
{
    char *p = buf;
    uint64_t deadline = opp_mono_ns() + (uint64_t)timeout_ms * 1000000ull;
    while (len) {
        uint64_t now = opp_mono_ns();
        if (now >= deadline)
            return -ETIMEDOUT;
        struct pollfd pfd = {.fd = fd, .events = POLLIN};
        int pr = poll(&pfd, 1, (int)((deadline - now) / 1000000ull) + 1);
        if (pr < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        if (pr == 0)
            return -ETIMEDOUT;
        ssize_t n = recv(fd, p, len, 0);
        if (n < 0) {
            if (errno == EINTR || errno == EAGAIN)
                continue;
            return -errno;
        }
        if (n == 0)
            return -ECONNRESET;
        if ((size_t)n > len)
            return -ENOSYS; /* not made: a trap's (opp_send_msg) */
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

int opp_send_msg(int fd, uint16_t type, const void *payload, uint32_t size, int pass_fd)
{
    struct opp_msg_header h = {
        .magic = OPP_PROTO_MAGIC, .type = type, .version = OPP_PROTO_VERSION, .size = size};
    struct iovec iov[2] = {{&h, sizeof h}, {(void *)payload, size}};
    union {
        char buf[CMSG_SPACE(sizeof(int))];
        struct cmsghdr align;
    } u;
    struct msghdr m = {.msg_iov = iov, .msg_iovlen = size ? 2 : 1};
    if (pass_fd >= 0) {
        memset(&u, 0, sizeof u);
        m.msg_control = u.buf;
        m.msg_controllen = sizeof u.buf;
        struct cmsghdr *c = CMSG_FIRSTHDR(&m);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(c), &pass_fd, sizeof(int));
    }
    size_t total = sizeof h + size;
    ssize_t n;
    do
        n = sendmsg(fd, &m, MSG_NOSIGNAL);
    while (n < 0 && errno == EINTR);
    if (n < 0)
        return -errno;
    /* More than asked: the call was not made. A seccomp filter trapped it
     * (SIGSYS) and the handler returned, which leaves the system call's
     * number where its result goes. */
    if ((size_t)n > total)
        return -ENOSYS;
    if ((size_t)n == total)
        return 0;
    /* Partial send (tiny socket buffer): the fd went with the first byte. */
    const char *rest_h = (const char *)&h;
    size_t done = (size_t)n;
    if (done < sizeof h) {
        int rc = opp_send_all(fd, rest_h + done, sizeof h - done);
        if (rc)
            return rc;
        done = sizeof h;
    }
    return opp_send_all(fd, (const char *)payload + (done - sizeof h), total - done);
}

int opp_wait_msg(int fd, uint16_t want, void *payload, uint32_t cap, uint32_t *size, int timeout_ms)
{
    struct opp_msg_header h;
    int rc = opp_recv_all(fd, &h, sizeof h, timeout_ms);
    if (rc)
        return rc;
    if (h.magic != OPP_PROTO_MAGIC || h.type != want || h.size > cap)
        return -EPROTO;
    if (h.size) {
        rc = opp_recv_all(fd, payload, h.size, timeout_ms);
        if (rc)
            return rc;
    }
    if (size)
        *size = h.size;
    return 0;
}

int opp_ctl_ask(int fd, uint32_t op, struct opp_ctl_ack *ack, int timeout_ms)
{
    uint8_t m[24];
    uint32_t got = 0;
    int rc = opp_send_msg(fd, OPP_MSG_CTL, &op, 4, -1);
    if (!rc)
        rc = opp_wait_msg(fd, OPP_MSG_CTL_ACK, m, sizeof m, &got, timeout_ms);
    if (!rc && got != sizeof m)
        rc = -EPROTO;
    if (!rc)
        memcpy(&ack->recording, m, 4), memcpy(&ack->procs, m + 4, 4),
            memcpy(&ack->events, m + 8, 8), memcpy(&ack->dropped, m + 16, 8);
    return rc;
}

void opp_write_failure(char *buf, size_t cap, int err, uint64_t written, uint64_t events)
{
    if (written >= events) /* only the final sync or close failed */
        snprintf(buf, cap, " when it was synced (%s): its last writes may be missing",
                 strerror(err));
    else
        snprintf(buf, cap, " (%s): it holds the first %llu events of %llu; the rest is lost",
                 strerror(err), (unsigned long long)written, (unsigned long long)events);
}

ssize_t opp_read_small(const char *path, char *buf, size_t cap)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    ssize_t n = fd < 0 ? -1 : read(fd, buf, cap - 1);
    if (fd >= 0)
        close(fd);
    buf[n > 0 ? n : 0] = 0;
    return n;
}

char opp_proc_state(int pid)
{
    char path[32], buf[512];
    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    if (opp_read_small(path, buf, sizeof buf) <= 0)
        return 0;
    const char *paren = strrchr(buf, ')'); /* the command name may hold anything */
    return paren && paren[1] == ' ' ? paren[2] : 0;
}

static int64_t file_size(const char *path)
{
    struct stat st;
    return path && stat(path, &st) == 0 ? (int64_t)st.st_size : -1;
}

int opp_wait_answer(int fd, uint16_t want, void *payload, uint32_t cap, uint32_t *size,
                    struct opp_patience *p)
{
    uint64_t start = opp_mono_ns(), last_progress = start;
    int64_t last_size = file_size(p->trace);
    p->state = 0;
    for (;;) {
        struct pollfd pfd = {.fd = fd, .events = POLLIN};
        int pr = poll(&pfd, 1, 100);
        if (pr < 0 && errno != EINTR)
            return -errno;
        if (pr > 0) /* the answer is sent whole: no slicing needed for the rest */
            return opp_wait_msg(fd, want, payload, cap, size, 2000);
        uint64_t now = opp_mono_ns();
        int64_t sz = file_size(p->trace);
        char st = p->pid > 0 ? opp_proc_state(p->pid) : 0;
        if (st == 'T') { /* stopped by a signal: no answer to wait for (not 't', which a
                            collector under strace passes through at each system call) */
            p->state = st;
            return -ETIMEDOUT;
        }
        if (sz != last_size || st == 'R' || st == 'D') {
            last_size = sz;
            last_progress = now;
        }
        if (now - last_progress >= (uint64_t)p->quiet_ms * 1000000ull ||
            now - start >= (uint64_t)p->max_ms * 1000000ull) {
            p->state = st;
            return -ETIMEDOUT;
        }
    }
}

int opp_connect_socket(int ms)
{
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | (ms >= 0 ? SOCK_NONBLOCK : 0), 0);
    return fd < 0 ? -errno : fd;
}

int opp_connect_on(int fd, const char *path, int ms)
{
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    if (strlen(path) >= sizeof a.sun_path)
        return -ENAMETOOLONG;
    strcpy(a.sun_path, path);
    /* Non-blocking: a listener whose backlog is full answers EAGAIN at
     * once (it would block a blocking connect until it accepts), so we
     * retry until the deadline. */
    uint64_t deadline = opp_mono_ns() + (uint64_t)(ms > 0 ? ms : 0) * 1000000u;
    int rc;
    for (;;) {
        rc = connect(fd, (struct sockaddr *)&a, sizeof a);
        if (rc == 0 || (errno != EINTR && errno != EAGAIN))
            break;
        if (errno == EAGAIN) {
            if (opp_mono_ns() >= deadline) {
                errno = ETIMEDOUT;
                break;
            }
            struct timespec ts = {0, 10 * 1000000};
            nanosleep(&ts, NULL);
        }
    }
    if (rc < 0)
        return -errno;
    if (ms >= 0)
        fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    return 0;
}

int opp_connect_within(const char *path, int ms)
{
    struct sockaddr_un a;
    if (strlen(path) >= sizeof a.sun_path)
        return -ENAMETOOLONG;
    int fd = opp_connect_socket(ms);
    if (fd < 0)
        return fd;
    int rc = opp_connect_on(fd, path, ms);
    if (rc) {
        close(fd);
        return rc;
    }
    return fd;
}

int opp_connect(const char *path) { return opp_connect_within(path, -1); }

static size_t cat(char *out, size_t cap, size_t at, const char *s)
{
    while (*s && at + 1 < cap)
        out[at++] = *s++;
    out[at < cap ? at : cap - 1] = 0;
    return at;
}

static size_t cat_u(char *out, size_t cap, size_t at, unsigned long v)
{
    char d[24];
    int i = 23;
    d[i] = 0;
    do
        d[--i] = (char)('0' + v % 10);
    while ((v /= 10) && i > 0);
    return cat(out, cap, at, d + i);
}

int opp_socket_dir(char *out, size_t cap, const char **why)
{
    const char *rt = getenv("XDG_RUNTIME_DIR");
    size_t n;
    struct stat st;
    if (rt && rt[0] == '/' && stat(rt, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == getuid()) {
        n = cat(out, cap, 0, rt);
        n = cat(out, cap, n, "/opprof");
    } else {
        n = cat(out, cap, 0, "/tmp/opprof-");
        n = cat_u(out, cap, n, (unsigned long)getuid());
    }
    if (n + 1 >= cap) {
        *why = "socket directory path too long";
        return -ENAMETOOLONG;
    }
    if (mkdir(out, 0700) < 0 && errno != EEXIST) {
        *why = "cannot create the socket directory";
        return -errno;
    }
    if (lstat(out, &st) < 0) {
        *why = "cannot stat the socket directory";
        return -errno;
    }
    if (!S_ISDIR(st.st_mode) || st.st_uid != getuid()) {
        *why = "socket directory is not a directory owned by this user";
        return -EPERM;
    }
    if ((st.st_mode & 0077) && chmod(out, 0700) < 0) {
        *why = "socket directory is open to other users and cannot be closed";
        return -EPERM;
    }
    return 0;
}

int opp_socket_path(char *out, size_t cap, const char **why)
{
    int rc = opp_socket_dir(out, cap, why);
    if (rc)
        return rc;
    size_t n = strlen(out);
    n = cat(out, cap, n, "/run-");
    n = cat_u(out, cap, n, (unsigned long)getpid());
    n = cat(out, cap, n, "-");
    n = cat_u(out, cap, n, (unsigned long)(opp_mono_ns() % 1000000007ull));
    n = cat(out, cap, n, ".sock");
    if (n + 1 >= cap || n >= 108) {
        *why = "socket path too long";
        return -ENAMETOOLONG;
    }
    return 0;
}
