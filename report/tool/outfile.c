/* Where a command writes its output, never destroying OUT (outfile.h). */
#include "tool/outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#ifdef OPP_HAVE_ZLIB
#include <zlib.h>
#endif

#include "trace.h"

/* What the writer's FILE writes into: a descriptor, through zlib or not,
 * keeping the first write error (errno) for the one message. */
struct opp_out_sink {
    int fd;
    int keep; /* standard output: not closed */
#ifdef OPP_HAVE_ZLIB
    gzFile gz;
#endif
    int err;
    char buf[]; /* the FILE's buffer: glibc's setvbuf takes no size without one */
};

/* Bytes a write takes: the Chrome export of 10M calls writes 2 GB, which
 * in the default 8 KiB writes cost the kernel about twice what 256 KiB ones do. */
#define SINK_BUF (256u << 10)

/* 0, or the errno of the failed write. */
static int write_all(int fd, const char *p, size_t n)
{
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return w < 0 ? errno : EIO;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* n bytes onward: 0, or the errno of the failed write. */
static int sink_put(struct opp_out_sink *s, const char *buf, size_t n)
{
#ifdef OPP_HAVE_ZLIB
    if (s->gz) {
        errno = 0;
        if (gzwrite(s->gz, buf, (unsigned)n) > 0)
            return 0;
        int z;
        gzerror(s->gz, &z);
        return z == Z_ERRNO && errno ? errno : EIO;
    }
#endif
    return write_all(s->fd, buf, n);
}

static ssize_t sink_write(void *cookie, const char *buf, size_t n)
{
    struct opp_out_sink *s = cookie;
    if (!s->err && n)
        s->err = sink_put(s, buf, n);
    if (s->err) {
        errno = s->err;
        return -1;
    }
    return (ssize_t)n;
}

/* The end: what zlib still holds written, the descriptor closed (not
 * standard output). */
static int sink_close(void *cookie)
{
    struct opp_out_sink *s = cookie;
    int e = 0;
#ifdef OPP_HAVE_ZLIB
    if (s->gz) {
        errno = 0;
        if (gzclose(s->gz) != Z_OK) /* closes fd too */
            e = errno ? errno : EIO;
        s->keep = 1;
    }
#endif
    if (!s->keep && close(s->fd) < 0)
        e = errno;
    if (e && !s->err)
        s->err = e;
    return s->err ? -1 : 0;
}

/* A FILE over fd (gz: compressed), owning it unless keep. NULL with errno. */
static FILE *sink_file(struct opp_out *o, int fd, int keep, int gz)
{
    struct opp_out_sink *s = malloc(sizeof *s + SINK_BUF);
    if (!s)
        return NULL;
    memset(s, 0, sizeof *s);
    s->fd = fd;
    s->keep = keep;
    if (gz) {
#ifdef OPP_HAVE_ZLIB
        s->gz = gzdopen(fd, "wb6");
        if (!s->gz) {
            free(s);
            errno = ENOMEM;
            return NULL;
        }
#else
        free(s);
        errno = ENOTSUP; /* built without zlib (zlib1g-dev) */
        return NULL;
#endif
    }
    cookie_io_functions_t io = {.write = sink_write, .close = sink_close};
    FILE *f = fopencookie(s, "w", io);
    if (f)
        setvbuf(f, s->buf, _IOFBF, SINK_BUF);
    if (!f) {
#ifdef OPP_HAVE_ZLIB
        if (s->gz)
            gzclose(s->gz);
#endif
        free(s);
        return NULL;
    }
    o->sink = s;
    return f;
}

/* s a descriptor's number as /proc writes it (decimal, no leading zero):
 * the number, or -1. */
static int fd_number(const char *s)
{
    long n = 0;
    if (!*s || (*s == '0' && s[1]))
        return -1;
    for (; *s; s++) {
        if (*s < '0' || *s > '9' || (n = n * 10 + (*s - '0')) > INT_MAX)
            return -1;
    }
    return (int)n;
}

/* Whether directory dir is ours of descriptors: the one /proc/self/fd or
 * /proc/thread-self/fd is (the same directory: in a pid namespace whose
 * /proc is another's, our pid there is not getpid()'s). */
static int our_fd_dir(const char *dir)
{
    static const char *const ours[] = {"/proc/self/fd", "/proc/thread-self/fd"};
    struct stat d, o;
    if (stat(dir, &d))
        return 0;
    for (int i = 0; i < 2; i++)
        if (!stat(ours[i], &o) && o.st_dev == d.st_dev && o.st_ino == d.st_ino)
            return 1;
    return 0;
}

/* The descriptor of ours that p names: /dev/stdin, /dev/stdout,
 * /dev/stderr, /dev/fd/N (by name, as the shell takes them, even where
 * /dev lacks them), or N in our own /proc/PID/fd (/proc/self/fd,
 * /proc/thread-self/fd, a link to one); else -1. */
static int own_fd(const char *p)
{
    static const char *const std[] = {"/dev/stdin", "/dev/stdout", "/dev/stderr"};
    for (int i = 0; i < 3; i++)
        if (!strcmp(p, std[i]))
            return i;
    if (!strncmp(p, "/dev/fd/", 8))
        return fd_number(p + 8);
    const char *slash = strrchr(p, '/');
    int n = fd_number(slash ? slash + 1 : p);
    char *dir = n < 0 ? NULL : slash ? strndup(p, (size_t)(slash - p)) : strdup(".");
    int is_ours = dir && our_fd_dir(*dir ? dir : "/");
    free(dir);
    return is_ours ? n : -1;
}

/* out with the symbolic links of its last component followed (those of the
 * directories above, the system follows), up to one of our own descriptors,
 * which the links of /proc would pass by to the file it has open: *own
 * that descriptor's number, else -1. Malloc'd, or NULL with errno. */
static char *follow(const char *out, int *own)
{
    char *p = strdup(out);
    for (int hops = 0; p; hops++) {
        struct stat st;
        if ((*own = own_fd(p)) >= 0 || lstat(p, &st) || !S_ISLNK(st.st_mode))
            return p;
        char link[PATH_MAX];
        ssize_t n = hops < 40 ? readlink(p, link, sizeof link - 1) : -1;
        if (n < 0) {
            int e = hops < 40 ? errno : ELOOP;
            free(p);
            errno = e;
            return NULL;
        }
        link[n] = 0;
        const char *slash = strrchr(p, '/');
        char *next;
        if (link[0] == '/' || !slash)
            next = strdup(link);
        else if (asprintf(&next, "%.*s/%s", (int)(slash - p), p, link) < 0)
            next = NULL;
        free(p);
        p = next;
    }
    errno = ENOMEM;
    return NULL;
}

/* The temporary file being written, and SQLite's journal beside it
 * (opp_out_open_path), removed when a signal ends the tool: a killed
 * export leaves nothing behind, as a failed one does. */
static struct {
    char path[PATH_MAX + 16], journal[PATH_MAX + 24];
    volatile sig_atomic_t set;
} pending;

/* The signals that end the tool with a temporary file to remove. */
static const int fatal_sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
#define NFATAL (sizeof fatal_sigs / sizeof *fatal_sigs)

/* The fatal signals held back (was: the mask before), for what must not be
 * cut halfway; a held one comes when the mask is set back to was. */
static void fatal_block(sigset_t *was)
{
    sigset_t fatal;
    sigemptyset(&fatal);
    for (size_t i = 0; i < NFATAL; i++)
        sigaddset(&fatal, fatal_sigs[i]);
    pthread_sigmask(SIG_BLOCK, &fatal, was);
}

static void on_fatal(int sig)
{
    if (pending.set) {
        unlink(pending.path);
        unlink(pending.journal);
    }
    signal(sig, SIG_DFL);
    raise(sig);
}

/* tmp (NULL: none) is the file a fatal signal removes. The handlers are
 * set the first time, for the signals whose action is the default (one
 * the caller ignores, as nohup does SIGHUP, stays ignored). */
static void guard(const char *tmp)
{
    static int installed;
    pending.set = 0;
    if (!tmp || strlen(tmp) > PATH_MAX)
        return;
    snprintf(pending.path, sizeof pending.path, "%s", tmp);
    snprintf(pending.journal, sizeof pending.journal, "%s-journal", tmp);
    pending.set = 1;
    if (installed++)
        return;
    for (size_t i = 0; i < NFATAL; i++) {
        struct sigaction was, sa = {.sa_handler = on_fatal};
        sigemptyset(&sa.sa_mask);
        if (sigaction(fatal_sigs[i], NULL, &was) == 0 && was.sa_handler == SIG_DFL)
            sigaction(fatal_sigs[i], &sa, NULL);
    }
}

/* Nothing left behind: the temporary file removed, OUT closed. */
static void drop(struct opp_out *o)
{
    guard(NULL);
    if (o->tmp)
        unlink(o->tmp);
    if (o->fd >= 0)
        close(o->fd);
    if (o->tmp_fd >= 0)
        close(o->tmp_fd);
    free(o->tmp);
    free(o->target);
    o->tmp = o->target = NULL;
    o->path = NULL;
    o->fd = o->tmp_fd = -1;
}

/* err: cannot write OUT, errno e's why; -1. */
static int fail(struct opp_out *o, int e, char *err, size_t errlen)
{
    snprintf(err, errlen, "cannot write %s: %s", o->name ? o->name : "standard output",
             strerror(e));
    drop(o);
    return -1;
}

/* OUT names our descriptor n: o->fd a duplicate of it, written as it is
 * (where its offset is, appending when it appends), as the shell's > and
 * >> would; a regular file it has open is never replaced. 0, or -1 with
 * err said (a descriptor not open, or not for writing: EBADF). */
static int through(struct opp_out *o, int n, char *err, size_t errlen)
{
    int fl = fcntl(n, F_GETFL);
    if (fl < 0 || (fl & O_ACCMODE) == O_RDONLY)
        return fail(o, fl < 0 ? errno : EBADF, err, errlen);
    o->fd = fcntl(n, F_DUPFD_CLOEXEC, 0);
    return o->fd < 0 ? fail(o, errno, err, errlen) : 0;
}

/* Whether the directory of path (a file's) takes a new file. */
static int dir_writable(const char *path)
{
    const char *slash = strrchr(path, '/');
    char *dir = slash ? strndup(path, (size_t)(slash - path)) : strdup(".");
    int ok = !dir || access(*dir ? dir : "/", W_OK) == 0; /* out of memory: try */
    free(dir);
    return ok;
}

/* The part both opens share: OUT's kind found, refused where it must be.
 * One of our descriptors, a device or FIFO, is opened into o->fd (a FIFO
 * waits for its reader), and so is a file of ours to write in a directory
 * that takes no new file or with several names (o->in_place: untouched
 * until the output is complete); otherwise a temporary file is to be
 * renamed to o->target, OUT with its links followed: an existing one must
 * be ours to write (as > would refuse it), and its mode, owner and group
 * are the new one's. 0, -1 or -2 with err said. */
static int prepare(struct opp_out *o, const char *out, const char *const *inputs, size_t n,
                   char *err, size_t errlen)
{
    memset(o, 0, sizeof *o);
    o->fd = o->tmp_fd = -1;
    if (!out)
        return 0;
    o->name = out;
    struct stat so, si;
    int exists = stat(out, &so) == 0, e = exists ? 0 : errno, own;
    for (size_t i = 0; exists && i < n; i++)
        if (!stat(inputs[i], &si) && si.st_dev == so.st_dev && si.st_ino == so.st_ino) {
            snprintf(err, errlen, "'%s' is the trace itself: choose another output", out);
            return -2;
        }
    if (!exists && e != ENOENT)
        return fail(o, e, err, errlen);
    if (!(o->target = follow(out, &own)))
        return fail(o, errno, err, errlen);
    if (own >= 0)
        return through(o, own, err, errlen);
    if (!exists) /* missing (a dangling link too): made */
        return 0;
    if (S_ISREG(so.st_mode)) {
        if (access(o->target, W_OK) < 0)
            return fail(o, errno, err, errlen);
        /* its collector would go on writing the file renamed away */
        if (opp_tw_busy(out, err, errlen)) {
            drop(o);
            return -1;
        }
        /* no room for a file beside it, or a file of several names (hard
         * links), whose others a new file renamed over this one would
         * leave with the old content: written in place once complete */
        if (so.st_nlink > 1 || !dir_writable(o->target)) {
            o->in_place = 1;
            o->fd = open(o->target, O_WRONLY | O_CLOEXEC | O_NOCTTY);
            return o->fd < 0 ? fail(o, errno, err, errlen) : 0;
        }
        o->replaces = 1;
        o->mode = so.st_mode & 07777;
        o->uid = so.st_uid;
        o->gid = so.st_gid;
        return 0;
    }
    if (S_ISDIR(so.st_mode))
        return fail(o, EISDIR, err, errlen);
    if (!S_ISCHR(so.st_mode) && !S_ISBLK(so.st_mode) && !S_ISFIFO(so.st_mode)) {
        snprintf(err, errlen, "cannot write %s: not a regular file, device or FIFO", out);
        drop(o);
        return -1;
    }
    /* by its own name: a link of another process's /proc names a pipe no
     * path reaches */
    o->fd = open(out, O_WRONLY | O_CLOEXEC | O_NOCTTY);
    return o->fd < 0 ? fail(o, errno, err, errlen) : 0;
}

/* A new temporary file beside the target, o->tmp_fd kept on it for
 * settle(): its descriptor, or -1 with errno. Private (0600) until
 * settled when it replaces a file, whose mode may be narrower than ours. */
static int make_tmp(struct opp_out *o)
{
    if (asprintf(&o->tmp, "%s.%d.tmp", o->target, (int)getpid()) < 0) {
        o->tmp = NULL;
        errno = ENOMEM;
        return -1;
    }
    int flags = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC;
    mode_t mode = o->replaces ? 0600 : 0666;
    guard(o->tmp); /* before it exists: a signal finds it named */
    int fd = open(o->tmp, flags, mode);
    if (fd < 0 && errno == EEXIST && unlink(o->tmp) == 0) /* a killed run's, with our pid */
        fd = open(o->tmp, flags, mode);
    if (fd >= 0 && (o->tmp_fd = fcntl(fd, F_DUPFD_CLOEXEC, 0)) < 0) {
        int e = errno;
        close(fd);
        unlink(o->tmp);
        errno = e;
        fd = -1;
    }
    if (fd < 0) {
        int e = errno;
        guard(NULL);
        free(o->tmp);
        o->tmp = NULL;
        errno = e;
    }
    return fd;
}

/* The complete temporary file made what it replaces was: its owner where
 * we may give it (root), else its group where we may (we are in it), then
 * its mode, set-user and set-group-ID only with both kept. 0 or errno. */
static int settle(struct opp_out *o)
{
    if (!o->replaces)
        return 0;
    mode_t mode = o->mode;
    if ((o->uid != geteuid() || o->gid != getegid()) && fchown(o->tmp_fd, o->uid, o->gid) < 0) {
        mode &= (mode_t) ~(S_ISUID | S_ISGID);
        /* its group alone where we are in it; else ours, as a file we make
         * (a file system that takes no owners, too) */
        if (o->gid != getegid())
            (void)!fchown(o->tmp_fd, (uid_t)-1, o->gid);
    }
    return fchmod(o->tmp_fd, mode) < 0 ? errno : 0;
}

/* Where the output is made whole before it is copied into o->fd. */
static const char *tmp_dir(void)
{
    const char *dir = getenv("TMPDIR");
    return dir && *dir ? dir : "/tmp";
}

/* A new temporary file in TMPDIR (o->tmp), for an output copied into
 * o->fd once complete: its descriptor, or -1 with err said and o
 * dropped. */
static int spill(struct opp_out *o, char *err, size_t errlen)
{
    if (asprintf(&o->tmp, "%s/opprof-out.XXXXXX", tmp_dir()) < 0) {
        o->tmp = NULL;
        return fail(o, ENOMEM, err, errlen);
    }
    sigset_t was; /* named by mkostemp: no signal before guard knows it */
    fatal_block(&was);
    int fd = mkostemp(o->tmp, O_CLOEXEC), e = errno;
    if (fd >= 0)
        guard(o->tmp); /* a signal now removes it */
    pthread_sigmask(SIG_SETMASK, &was, NULL);
    if (fd < 0) {
        free(o->tmp);
        o->tmp = NULL;
        drop(o);
        snprintf(err, errlen, "cannot write %s: no temporary file in %s: %s", o->name, tmp_dir(),
                 strerror(e));
        return -1;
    }
    return fd;
}

int opp_out_open(struct opp_out *o, const char *out, int gz, const char *const *inputs, size_t n,
                 char *err, size_t errlen)
{
    int rc = prepare(o, out, inputs, n, err, errlen);
    if (rc)
        return rc;
    int fd;
    if (!o->name) {
        fd = STDOUT_FILENO;
    } else if (o->in_place) {
        if ((fd = spill(o, err, errlen)) < 0)
            return -1;
    } else if (o->fd >= 0) {
        fd = o->fd;
        o->fd = -1; /* the sink's from now on */
    } else if ((fd = make_tmp(o)) < 0) {
        return fail(o, errno, err, errlen);
    }
    if (!(o->f = sink_file(o, fd, !o->name, gz))) {
        int e = errno;
        if (o->name)
            close(fd);
        rc = fail(o, e, err, errlen);
        if (e == ENOTSUP)
            snprintf(err, errlen,
                     "cannot write %s: this opprof was built without zlib "
                     "(zlib1g-dev): write .json and gzip it",
                     out);
        return rc;
    }
    return 0;
}

int opp_out_open_path(struct opp_out *o, const char *out, const char *const *inputs, size_t n,
                      char *err, size_t errlen)
{
    int rc = prepare(o, out, inputs, n, err, errlen);
    if (rc || !o->name)
        return rc;
    /* a descriptor of ours, a device or FIFO, a file written in place:
     * made whole in TMPDIR first */
    int fd;
    if (o->fd >= 0) {
        if ((fd = spill(o, err, errlen)) < 0)
            return -1;
    } else if ((fd = make_tmp(o)) < 0) {
        return fail(o, errno, err, errlen);
    }
    close(fd);
    o->path = o->tmp;
    return 0;
}

/* A file written in place: room for its size bytes found (reserved
 * beyond its end, where the file system can) before its first byte is
 * changed, so that a full disk leaves it as it was. 0 or the errno. */
static int reserve(int fd, off_t size)
{
    if (size > 0 && fallocate(fd, FALLOC_FL_KEEP_SIZE, 0, size) < 0 && errno != EOPNOTSUPP &&
        errno != ENOSYS)
        return errno;
    return 0;
}

/* The temporary file's bytes into o->fd: as the output streams, or, in
 * place, over the file from its start (room reserved first), cut to
 * their length, no fatal signal let in halfway (it ends the tool after).
 * 0 or the errno. */
static int copy_out(struct opp_out *o)
{
    int in = open(o->tmp, O_RDONLY | O_CLOEXEC);
    if (in < 0)
        return errno;
    struct stat st;
    sigset_t was;
    int e = 0;
    if (o->in_place) {
        e = fstat(in, &st) < 0 ? errno : reserve(o->fd, st.st_size);
        fatal_block(&was);
    }
    char buf[65536];
    off_t at = 0; /* in place: o->fd is ours, opened at the file's start */
    while (!e) {
        ssize_t r = read(in, buf, sizeof buf);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            e = r < 0 ? errno : 0;
            break;
        }
        if (!(e = write_all(o->fd, buf, (size_t)r)))
            at += r;
    }
    if (o->in_place) {
        if (!e && ftruncate(o->fd, at) < 0)
            e = errno;
        pthread_sigmask(SIG_SETMASK, &was, NULL);
    }
    close(in);
    return e;
}

int opp_out_close(struct opp_out *o, int ok, char *err, size_t errlen)
{
    int werr = 0, copy = o->tmp && o->fd >= 0;
    if (o->f) {
        errno = 0;
        int c = fclose(o->f);
        werr = o->sink->err ? o->sink->err : c ? (errno ? errno : EIO) : 0;
        free(o->sink);
        o->f = NULL;
        o->sink = NULL;
    }
    if (werr && copy) { /* TMPDIR's write failed, not OUT's, still as it was */
        snprintf(err, errlen, "cannot write %s: its temporary file in %s: %s", o->name, tmp_dir(),
                 strerror(werr));
        drop(o);
        return -1;
    }
    if (ok && !werr && copy)
        werr = copy_out(o);
    if (o->fd >= 0 && close(o->fd) < 0 && ok && !werr)
        werr = errno;
    o->fd = -1;
    if (!werr && ok && o->tmp && !copy) {
        werr = settle(o);
        if (!werr && rename(o->tmp, o->target) < 0)
            werr = errno;
    }
    if (!werr && ok && !copy)
        guard(NULL); /* in place: OUT now */
    if (werr)
        return fail(o, werr, err, errlen);
    if (copy || !ok)
        drop(o);
    guard(NULL);
    if (o->tmp_fd >= 0)
        close(o->tmp_fd);
    o->tmp_fd = -1;
    free(o->tmp);
    free(o->target);
    o->tmp = o->target = NULL;
    o->path = NULL;
    return ok ? 0 : -1;
}
