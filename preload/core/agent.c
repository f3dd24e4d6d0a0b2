/* The in-process agent (libopprof.so): settings, the connection to the
 * collector (starting one when none is listening), per-thread rings, fork
 * and exit, and the features' hooks walked at each. Failures of ours print
 * one line and turn profiling off; the program itself never notices
 * (errno, signals and results untouched). */
#include "core/internal.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

__thread struct opp_tls opp_tls __attribute__((tls_model("initial-exec")));
int opp_use_tsc;
void *_Atomic opp_real_fn[OPP_FN_COUNT];

/* The hooks features fill (internal.h): off until one does. */
int opp_stacks_n;
uint32_t (*opp_stack_capture)(void);
int (*opp_stack_extra)(uint64_t *out, int max);
uintptr_t opp_stack_skip_lo, opp_stack_skip_hi;
uintptr_t opp_stack_entry_lo, opp_stack_entry_hi;
_Atomic int opp_extcorr_on;
uint64_t (*opp_extcorr_push)(void);
void (*opp_extcorr_pop)(void);


static struct {
    _Atomic int on;   /* recording (connected, or a fork child to connect at its first record) */
    int sock;         /* connection to the collector */
    int hello_due;    /* a fork child that has not connected yet */
    int timers_due;   /* a fork child just connected: its capture timers start */
    dev_t sock_dev;   /* what sock is: a program may close the number and reuse it */
    ino_t sock_ino;
    int root;         /* this process started the collector */
    int collector_pid; /* when root: the collector's, as it said when ready */
    int clock;
    uint32_t cap;     /* ring slots */
    int paused;       /* OPPROF_PAUSED=1: new rings start paused */
    pthread_mutex_t lock; /* the socket and msg */
    pthread_key_t key;
    _Atomic int warned;
    char socket_path[108];
    char output[PATH_MAX];
    uint8_t msg[OPP_MSG_MAX];
} agent = {.sock = -1, .lock = PTHREAD_MUTEX_INITIALIZER};

/* ---- messages to a person: one line each, straight to fd 2 ---- */

static void say(const char *a, const char *b, const char *c)
{
    char line[1024];
    size_t n = 0;
    const char *parts[] = {"opprof: ", a, b, c, "\n"};
    for (size_t i = 0; i < sizeof parts / sizeof *parts; i++)
        for (const char *p = parts[i]; p && *p && n < sizeof line - 2; p++)
            line[n++] = *p;
    if (line[n - 1] != '\n')
        line[n++] = '\n';
    ssize_t w = write(2, line, n);
    (void)w;
}

void opp_agent_say(const char *a, const char *b, const char *c) { say(a, b, c); }

/* ---- the connection ---- */

static void give_up(const char *what, int err);
static void connect_and_hello(void);

/* With agent.lock held, at a fork child's first message (its first
 * record): connect and say hello as a process of its own. The fork handler
 * left this here, so a child that only execs never connects. */
static int child_connect(void)
{
    agent.hello_due = 0;
    connect_and_hello(); /* says why, and turns recording off, when it fails */
    if (agent.sock < 0)
        return -ENOTCONN;
    agent.timers_due = 1;
    return 0;
}

/* Releases agent.lock; then starts what a fork child's first connection
 * left to start (threads: never with the lock held). */
static void agent_unlock(void)
{
    int timers = agent.timers_due;
    agent.timers_due = 0;
    pthread_mutex_unlock(&agent.lock);
    if (timers)
        opp_capture_child_start();
}

/* Our socket moves to a high descriptor number, out of the way of the
 * program's own, and is remembered by identity: a program that closes
 * every descriptor (a daemon) may get the number back for a socket of its
 * own, and nothing of ours may ever be written there. */
static int adopt_socket(int fd)
{
    struct rlimit rl;
    int low = 512;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
        low = rl.rlim_cur / 2 < 4096 ? (int)(rl.rlim_cur / 2) : 4096;
    int high = low > fd ? fcntl(fd, F_DUPFD_CLOEXEC, low) : -1;
    if (high >= 0) {
        close(fd);
        fd = high;
    }
    /* A stopped collector: a send that cannot go within 2 s fails (and
     * we stop recording) rather than hold the program. */
    struct timeval tv = {.tv_sec = 2};
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    struct stat st;
    if (fstat(fd, &st) == 0) {
        agent.sock_dev = st.st_dev;
        agent.sock_ino = st.st_ino;
    }
    return fd;
}

/* Whether agent.sock is still the socket we connected (async-signal-safe). */
static int socket_ours(void)
{
    struct stat st;
    return agent.sock >= 0 && fstat(agent.sock, &st) == 0 && S_ISSOCK(st.st_mode) &&
           st.st_dev == agent.sock_dev && st.st_ino == agent.sock_ino;
}

/* With agent.lock held, before anything is sent: 0 when agent.sock is ours
 * (a fork child connects here first). If
 * the program closed it, the number is the program's now (never written
 * to, never closed): connect again and carry on as the same process (the
 * collector kept draining our rings meanwhile). */
static int socket_ready(void)
{
    if (agent.hello_due)
        return child_connect();
    if (socket_ours())
        return 0;
    agent.sock = -1;
    int fd = opp_connect_within(agent.socket_path, 2000);
    if (fd < 0)
        return fd;
    fd = adopt_socket(fd);
    int rc = opp_send_msg(fd, OPP_MSG_RESUME, NULL, 0, -1);
    if (!rc)
        rc = opp_wait_msg(fd, OPP_MSG_RESUMED, NULL, 0, NULL, 2000);
    if (rc == -ECONNRESET) {
        /* Refused: the collector saw no ring of ours (none made yet, as
         * in a daemon's child that closed every descriptor first) and
         * ended us. Carry on as a new instance of this process. */
        close(fd);
        if ((fd = opp_connect_within(agent.socket_path, 2000)) < 0)
            return fd;
        fd = adopt_socket(fd);
        rc = opp_hello(fd, agent.msg, agent.clock);
    }
    if (rc) {
        close(fd);
        return rc;
    }
    agent.sock = fd;
    return 0;
}

/* With agent.lock held: the connection failed (a send that could not go
 * within its timeout, a resume refused). Say so once and record nothing
 * more; the socket is closed when it is still ours. */
static void connection_lost(const char *why, int err)
{
    if (socket_ours())
        close(agent.sock);
    agent.sock = -1;
    give_up(why, err);
}

/* A message from a thread other than the program's calls (CUPTI's). */
int opp_agent_send(unsigned type, const void *payload, unsigned size)
{
    int saved_errno = errno; /* program threads send too (a new string inside an op) */
    pthread_mutex_lock(&agent.lock);
    int rc = -ENOTCONN;
    if (atomic_load(&agent.on)) {
        rc = socket_ready();
        if (!rc)
            rc = opp_send_msg(agent.sock, (uint16_t)type, payload, size, -1);
        if (rc)
            connection_lost("the collector took no message within 2 s (stopped, or gone), "
                            "profiling off", -rc);
    }
    agent_unlock();
    errno = saved_errno;
    return rc;
}

/* The first failure of ours: say why, once, and stop recording. */
static void give_up(const char *what, int err)
{
    atomic_store(&agent.on, 0);
    if (atomic_exchange(&agent.warned, 1))
        return;
    say(what, err ? ": " : "", err ? strerror(err) : "");
}

static const char *u2s(unsigned long v, char *buf, size_t cap)
{
    char *p = buf + cap - 1;
    *p = 0;
    do
        *--p = (char)('0' + v % 10);
    while ((v /= 10) && p > buf);
    return p;
}

/* ---- a full ring ---- */

int opp_drop_block; /* OPPROF_DROP=block */

/* This thread's production, measured between looks: the head and the time
 * of the last mark. A rewind leaves a quarter of the ring free until the
 * collector reads past it, so it is made only for a thread that wrote at
 * most a quarter of the ring in REWIND_PACE_NS: the quarter then lasts
 * that long, many times the collector's 2 ms between looks. A thread
 * calling flat out goes round the whole ring, as it always did. */
#define REWIND_PACE_NS 10000000ull
static __thread uint64_t rewind_mark_h, rewind_mark_ns;
static __thread int rewind_paced; /* the last pace measured allows a rewind */

uint64_t opp_ring_rewind(struct opp_ring_hdr *r, uint64_t h)
{
    uint64_t now = opp_mono_ns();
    if (!rewind_mark_ns || h < rewind_mark_h) {
        rewind_mark_h = h, rewind_mark_ns = now;
    } else if (now - rewind_mark_ns >= REWIND_PACE_NS) {
        rewind_paced = h - rewind_mark_h <= opp_ring_hot(r->capacity);
        rewind_mark_h = h, rewind_mark_ns = now;
    }
    uint64_t lap = h - (h & (r->capacity - 1)); /* where this lap began */
    if (!rewind_paced)
        return h;
    r->cached_tail = atomic_load_explicit(&r->tail, memory_order_acquire);
    if (r->cached_tail < lap + opp_ring_hot(r->capacity))
        return h; /* the collector has not read this lap's first quarter */
    struct opp_rec *s = opp_ring_slot(r, r->capacity, h);
    uint64_t next = lap + r->capacity;
    s->begin = s->end = 0;
    s->fn = 0;
    s->depth = 0;
    s->nargs = 0;
    s->flags = OPP_REC_REWIND;
    s->arg0 = next - h;
    atomic_store_explicit(&r->head, next, memory_order_release);
    rewind_mark_h = next; /* the skipped slots are not production */
    return next;
}

int opp_ring_wait(struct opp_ring_hdr *r, uint64_t h, unsigned need)
{
    int saved_errno = errno;
    /* Bounded by progress: 1 s in which the collector reads nothing of
     * this ring (stopped, stuck); 10 s before it first reads it at all
     * (a collector still starting, slow under the sanitizers). */
    uint64_t last = atomic_load_explicit(&r->tail, memory_order_acquire);
    uint64_t deadline = opp_mono_ns() + (last ? 1000000000ull : 10000000000ull);
    int room = 0;
    for (unsigned spin = 0;; spin++) {
        r->cached_tail = atomic_load_explicit(&r->tail, memory_order_acquire);
        if (h + need - r->cached_tail <= r->capacity) {
            room = 1;
            break;
        }
        if (r->cached_tail != last) {
            last = r->cached_tail;
            deadline = opp_mono_ns() + 1000000000ull;
        }
        if (!__atomic_load_n(&opp_drop_block, __ATOMIC_RELAXED))
            break; /* another thread gave up waiting */
        if (opp_mono_ns() >= deadline) {
            if (__atomic_exchange_n(&opp_drop_block, 0, __ATOMIC_RELAXED))
                say("the collector read nothing for 1 s (OPPROF_DROP=block): records that "
                    "do not fit are dropped and counted from now on", "", "");
            break;
        }
        if (spin < 4096) { /* the collector frees a ring in microseconds */
            sched_yield();
        } else {
            struct timespec ts = {0, 50000};
            nanosleep(&ts, NULL);
        }
    }
    errno = saved_errno;
    return room;
}

/* The file size limit (ulimit -f), which a ring, a memfd, must stay
 * under: growing a file past it raises SIGXFSZ and kills the program. */
static uint64_t file_size_limit(void)
{
    struct rlimit fs;
    return getrlimit(RLIMIT_FSIZE, &fs) == 0 && fs.rlim_cur != RLIM_INFINITY ? fs.rlim_cur
                                                                            : UINT64_MAX;
}

/* ---- threads ---- */

static void thread_gone(void *ring)
{
    struct opp_ring_hdr *r = ring;
    if (!r || r != opp_tls.ring) /* a fork child's value: the parent's ring, unmapped */
        return;
    opp_tls.ring = NULL;
    opp_tls.state = OPP_T_OFF; /* calls from later destructors are not recorded */
    atomic_store_explicit(&r->state, OPP_RING_CLOSED, memory_order_release);
    munmap(r, opp_ring_bytes(r->capacity));
}

struct opp_ring_hdr *opp_thread_attach(void)
{
    if (opp_tls.state != OPP_T_NEW || !atomic_load_explicit(&agent.on, memory_order_relaxed))
        return NULL;
    int saved_errno = errno;
    opp_tls.state = OPP_T_OFF; /* also our reentrancy guard while attaching */
    struct opp_ring_hdr *r = NULL;
    size_t bytes = opp_ring_bytes(agent.cap);
    int fd = (int)syscall(SYS_memfd_create, "opprof-ring", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (fd < 0) {
        give_up("cannot create a trace buffer (memfd_create)", errno);
        goto out;
    }
    if (bytes > file_size_limit()) { /* lowered since we started */
        give_up("the file size limit (ulimit -f) is below a trace buffer, profiling off", 0);
        close(fd);
        goto out;
    }
    if (ftruncate(fd, (off_t)bytes) < 0 ||
        fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) < 0) {
        give_up("cannot size a trace buffer", errno);
        close(fd);
        goto out;
    }
    r = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (r == MAP_FAILED) {
        give_up("cannot map a trace buffer", errno);
        r = NULL;
        close(fd);
        goto out;
    }
    r->magic = OPP_RING_MAGIC;
    r->version = OPP_RING_VERSION;
    r->capacity = agent.cap;
    r->tid = (uint32_t)syscall(SYS_gettid);
    r->paused = agent.paused; /* until the collector says otherwise (opprof ctl) */
    prctl(PR_GET_NAME, r->name, 0, 0, 0);
    r->name[15] = 0;
    uint32_t body[2] = {r->tid, agent.cap};
    pthread_mutex_lock(&agent.lock);
    int rc = !atomic_load(&agent.on) ? -ENOTCONN : socket_ready();
    if (!rc)
        rc = opp_send_msg(agent.sock, OPP_MSG_RING, body, sizeof body, fd);
    if (rc && atomic_load(&agent.on))
        connection_lost("the collector took no new thread's buffer within 2 s (stopped, or "
                        "gone), profiling off", -rc);
    agent_unlock();
    close(fd);
    if (rc) {
        munmap(r, bytes);
        r = NULL;
        goto out;
    }
    pthread_setspecific(agent.key, r);
    opp_tls.ring = r;
    opp_tls.state = OPP_T_ON;
out:
    errno = saved_errno;
    return r;
}

void opp_thread_rename(struct opp_ring_hdr *r, const char *name, size_t n)
{
    size_t cap = sizeof r->name - 1;
    if (n > cap) {
        n = cap;
        while (n > 0 && ((uint8_t)name[n] & 0xc0) == 0x80)
            n--; /* name[n] continues a character: cut before it */
    }
    memcpy(r->name, name, n);
    r->name[n] = 0;
    atomic_fetch_add_explicit(&r->name_seq, 1, memory_order_release);
}

/* Keep thread names current in the report. */
OPP_EXPORT int pthread_setname_np(pthread_t t, const char *name)
{
    typedef int (*setname_fn)(pthread_t, const char *);
    static _Atomic setname_fn real_setname; /* threads name themselves at once */
    setname_fn real = atomic_load_explicit(&real_setname, memory_order_relaxed);
    if (!real) {
        real = (setname_fn)dlsym(RTLD_NEXT, "pthread_setname_np");
        atomic_store_explicit(&real_setname, real, memory_order_relaxed);
    }
    if (!real)
        return ENOSYS;
    int rc = real(t, name);
    struct opp_ring_hdr *r = opp_tls.ring;
    if (rc == 0 && r && pthread_equal(t, pthread_self()))
        opp_thread_rename(r, name, strnlen(name, sizeof r->name - 1));
    return rc;
}

void opp_publish_stack(struct opp_ring_hdr *r, const struct opp_frame *f, uint64_t end,
                       const uint64_t *args, unsigned nargs)
{
    if (nargs >= OPP_MAX_ARGS) {
        opp_publish(r, f->fn, f->depth, f->begin, end, args, nargs);
        return;
    }
    uint64_t a[OPP_MAX_ARGS];
    for (unsigned i = 0; i < nargs; i++)
        a[i] = args[i];
    a[nargs] = f->stack;
    opp_publish_f(r, f->fn, f->depth, f->begin, end, a, nargs + 1, OPP_REC_STACK);
}

/* ---- the collector ---- */

/* buf holds PATH_MAX bytes, as realpath needs. */
static const char *self_dir(char *buf)
{
    Dl_info di;
    if (!dladdr((void *)opp_thread_attach, &di) || !di.dli_fname || !realpath(di.dli_fname, buf))
        return NULL;
    char *slash = strrchr(buf, '/');
    if (!slash)
        return NULL;
    *slash = 0;
    return buf;
}

/* Start a collector of our own (detached, in its own session, so neither
 * our wait() nor a Ctrl-C to our process group reaches it). */
static int start_collector(void)
{
    const char *why = NULL;
    int rc = opp_socket_path(agent.socket_path, sizeof agent.socket_path, &why);
    if (rc) {
        give_up(why, -rc);
        return rc;
    }
    char exe[PATH_MAX], dir[PATH_MAX];
    const char *env_exe = getenv("OPPROF_COLLECTOR");
    if (env_exe && env_exe[0]) {
        strncpy(exe, env_exe, sizeof exe - 1);
        exe[sizeof exe - 1] = 0;
    } else if (self_dir(dir)) {
        size_t n = strlen(dir);
        if (n + sizeof "/opprof-collector" > sizeof exe)
            return -ENAMETOOLONG;
        memcpy(exe, dir, n);
        memcpy(exe + n, "/opprof-collector", sizeof "/opprof-collector");
    } else {
        give_up("cannot locate opprof-collector (set OPPROF_COLLECTOR)", 0);
        return -ENOENT;
    }
    const char *out = getenv("OPPROF_OUTPUT");
    char num[24];
    if (out && out[0]) {
        if (out[0] == '/' || !getcwd(agent.output, sizeof agent.output))
            agent.output[0] = 0;
        else
            strncat(agent.output, "/", sizeof agent.output - strlen(agent.output) - 1);
        strncat(agent.output, out, sizeof agent.output - strlen(agent.output) - 1);
    } else {
        if (!getcwd(agent.output, sizeof agent.output - 40)) {
            give_up("cannot tell the working directory for the trace file", errno);
            return -errno;
        }
        strcat(agent.output, "/opprof-");
        strcat(agent.output, u2s((unsigned long)getpid(), num, sizeof num));
        strcat(agent.output, ".trace");
    }
    int pfd[2];
    if (pipe2(pfd, O_CLOEXEC) < 0) {
        give_up("cannot start the collector (pipe)", errno);
        return -errno;
    }
    char pidbuf[24];
    char *pid_arg = (char *)u2s((unsigned long)getpid(), pidbuf, sizeof pidbuf);
    char *argv[] = {exe,        "--socket",   agent.socket_path, "--output",   agent.output,
                    "--daemon", "--root-pid", pid_arg,           "--ready-fd", "3",
                    NULL};
    /* Its environment: ours without the preload and our own settings. */
    size_t ne = 0;
    while (environ && environ[ne])
        ne++;
    char **envp = calloc(ne + 1, sizeof *envp);
    if (!envp) {
        close(pfd[0]);
        close(pfd[1]);
        give_up("cannot start the collector: out of memory", 0);
        return -ENOMEM;
    }
    size_t k = 0;
    for (size_t i = 0; i < ne; i++)
        if (strncmp(environ[i], "LD_PRELOAD=", 11) && strncmp(environ[i], "OPPROF_SOCKET=", 14))
            envp[k++] = environ[i];
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t at;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, pfd[1], 3);
    posix_spawnattr_init(&at);
    sigset_t none;
    sigemptyset(&none);
    posix_spawnattr_setsigmask(&at, &none);
    posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGMASK);
    pid_t pid;
    rc = posix_spawn(&pid, exe, &fa, &at, argv, envp);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&at);
    free(envp);
    close(pfd[1]);
    if (rc) {
        close(pfd[0]);
        say("cannot start the collector ", exe, ": profiling off");
        atomic_store(&agent.warned, 1);
        return -rc;
    }
    /* It forks into the background and tells us when it listens. */
    char ready[24] = "";
    struct pollfd p = {.fd = pfd[0], .events = POLLIN};
    int pr;
    do
        pr = poll(&p, 1, 10000);
    while (pr < 0 && errno == EINTR);
    if (pr > 0 && read(pfd[0], ready, sizeof ready - 1) < 1)
        ready[0] = 0;
    close(pfd[0]);
    char ok = ready[0];
    agent.collector_pid = atoi(ready + 1);
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
        ;
    if (ok != '1') {
        give_up("the collector did not start (see its message above): profiling off", 0);
        return -EIO;
    }
    agent.root = 1;
    return 0;
}

/* ---- process life ---- */

/* The string table's lock, then ours: the order its sends take them in. */
static void at_prepare(void)
{
    opp_str_atfork_prepare();
    pthread_mutex_lock(&agent.lock);
}

static void at_parent(void)
{
    pthread_mutex_unlock(&agent.lock);
    opp_str_atfork_parent();
}

/* The child of fork() records as a process of its own: forget the parent's
 * ring, string ids and connection, and let each feature forget what was the
 * parent's. Only resets here: the child of a threaded program may make
 * only async-signal-safe calls until it execs, and one that only execs
 * should cost nothing. Connecting, the hello and the capture timers wait
 * for its first record (socket_ready). */
static void at_child(void)
{
    pthread_mutex_unlock(&agent.lock);
    opp_str_forked();
    struct opp_ring_hdr *r = opp_tls.ring;
    opp_tls.ring = NULL; /* and thread_gone leaves the thread key's r alone */
    opp_tls.state = OPP_T_NEW;
    opp_tls.publishing = 0; /* a fork from a handler inside a publish */
    if (r)
        munmap(r, opp_ring_bytes(r->capacity));
    agent.root = 0;
    opp_capture_forked();
    for (const struct opp_feature *const *f = opp_features; *f; f++)
        if ((*f)->forked)
            (*f)->forked();
    if (socket_ours()) /* else the number is the program's */
        close(agent.sock);
    agent.sock = -1;
    agent.hello_due = 1;
}

static void connect_and_hello(void)
{
    /* bounded: a stopped or swamped collector must not hold the program */
    int fd = opp_connect_within(agent.socket_path, 2000);
    if (fd < 0) {
        give_up(fd == -ETIMEDOUT ? "the collector did not take us within 2 s (stopped or "
                                   "swamped), profiling off"
                                 : "cannot reach the collector, profiling off",
                fd == -ETIMEDOUT ? 0 : -fd);
        return;
    }
    agent.sock = adopt_socket(fd);
    fd = agent.sock;
    int rc = opp_hello(agent.sock, agent.msg, agent.clock);
    if (rc) {
        give_up("the collector refused us, profiling off", -rc);
        close(fd);
        agent.sock = -1;
        return;
    }
    atomic_store(&agent.on, 1);
}

static uint32_t env_u32(const char *name, uint32_t dflt)
{
    const char *v = getenv(name);
    if (!v || !*v)
        return dflt;
    char *end;
    unsigned long x = strtoul(v, &end, 10);
    return *end || x > UINT32_MAX ? dflt : (uint32_t)x;
}

int opp_agent_on(void) { return atomic_load(&agent.on); }

struct load_order {
    uintptr_t self;         /* an address inside this library */
    int at, self_at, libc_at;
};

static int note_order(struct dl_phdr_info *info, size_t size, void *data)
{
    struct load_order *o = data;
    for (int i = 0; i < info->dlpi_phnum && o->self_at < 0; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
        if (ph->p_type == PT_LOAD && o->self >= lo && o->self < lo + ph->p_memsz)
            o->self_at = o->at;
    }
    const char *n = info->dlpi_name ? strrchr(info->dlpi_name, '/') : NULL;
    n = n ? n + 1 : info->dlpi_name;
    if (o->libc_at < 0 && n && !strcmp(n, "libc.so.6"))
        o->libc_at = o->at;
    o->at++;
    return 0;
}

/* Whether this library was preloaded (LD_PRELOAD, /etc/ld.so.preload, ld.so
 * --preload, with $LIB and the like expanded by the loader): the loader
 * maps preloaded objects before the program's own libraries, so it comes
 * before libc in the load order. Loaded otherwise, as a driver or NVTX
 * loads the library an inherited CUDA_INJECTION64_PATH or
 * NVTX_INJECTION64_PATH names, the process is not ours to profile: a
 * descendant is profiled fully or not at all. */
static int preloaded(void)
{
    struct load_order o = {(uintptr_t)(void *)opp_agent_on, 0, -1, -1};
    dl_iterate_phdr(note_order, &o);
    return o.self_at >= 0 && (o.libc_at < 0 || o.self_at < o.libc_at);
}

/* Whether this process is to be profiled: preloaded, OPPROF_DISABLE not 1. */
int opp_agent_wanted(void)
{
    static int wanted = -1;
    int w = __atomic_load_n(&wanted, __ATOMIC_RELAXED);
    if (w < 0) {
        const char *dis = getenv("OPPROF_DISABLE");
        w = !(dis && dis[0] == '1') && preloaded();
        __atomic_store_n(&wanted, w, __ATOMIC_RELAXED);
    }
    return w;
}

__attribute__((constructor)) static void opp_init(void)
{
    int saved_errno = errno;
    opp_tls.state = OPP_T_OFF; /* nothing of ours is recorded while we start */
    if (!opp_agent_wanted())
        goto out;
    opp_resolve_init();
    const char *ck = getenv("OPPROF_CLOCK");
    opp_use_tsc = !(ck && !strcmp(ck, "monotonic")) && opp_tsc_usable();
    agent.clock = opp_use_tsc ? OPP_CLOCK_TSC : OPP_CLOCK_MONOTONIC;
    uint32_t cap = env_u32("OPPROF_BUFFER", OPP_RING_DEFAULT_RECS);
    agent.paused = env_u32("OPPROF_PAUSED", 0) == 1;
    const char *drop = getenv("OPPROF_DROP");
    if (drop && *drop && strcmp(drop, "drop") && strcmp(drop, "block"))
        say("OPPROF_DROP is drop or block, not '", drop, "': full buffers drop (and count)");
    opp_drop_block = drop && !strcmp(drop, "block");
    if (cap < OPP_RING_MIN_RECS)
        cap = OPP_RING_MIN_RECS;
    if (cap > OPP_RING_MAX_RECS)
        cap = OPP_RING_MAX_RECS;
    agent.cap = 1u << (31 - __builtin_clz(cap)); /* round down to a power of two */
    /* A ring is a file: sizing it past the file size limit (ulimit -f)
     * would raise SIGXFSZ and kill the program. */
    uint64_t limit = file_size_limit();
    while (agent.cap > OPP_RING_MIN_RECS && opp_ring_bytes(agent.cap) > limit)
        agent.cap >>= 1;
    if (opp_ring_bytes(agent.cap) > limit) {
        give_up("the file size limit (ulimit -f) is below the smallest trace buffer, "
                "profiling off", 0);
        goto out;
    }
    if (pthread_key_create(&agent.key, thread_gone) != 0) {
        give_up("cannot create a thread key, profiling off", 0);
        goto out;
    }
    const char *sock = getenv("OPPROF_SOCKET");
    if (sock && sock[0]) {
        if (strlen(sock) >= sizeof agent.socket_path) {
            give_up("OPPROF_SOCKET is too long, profiling off", 0);
            goto out;
        }
        strcpy(agent.socket_path, sock);
    } else {
        if (start_collector() != 0)
            goto out;
        /* Every process this one starts joins the same trace. */
        setenv("OPPROF_SOCKET", agent.socket_path, 1);
    }
    connect_and_hello();
    if (atomic_load(&agent.on)) {
        opp_capture_init();
        pthread_atfork(at_prepare, at_parent, at_child);
        Dl_info self;
        const char *self_path = dladdr((void *)opp_thread_attach, &self) ? self.dli_fname : NULL;
        for (const struct opp_feature *const *f = opp_features; *f; f++)
            if ((*f)->start)
                (*f)->start(self_path);
    }
out:
    opp_tls.state = OPP_T_NEW;
    errno = saved_errno;
}

/* Say goodbye so the collector writes our records now and knows we exited
 * rather than died; the process that started the collector waits for the
 * whole trace (the collector says where it went). */
__attribute__((destructor)) static void opp_fini(void)
{
    if (!atomic_load(&agent.on))
        return;
    pthread_mutex_lock(&agent.lock);
    int idle = agent.hello_due || agent.sock < 0; /* a fork child that recorded nothing */
    pthread_mutex_unlock(&agent.lock);
    if (idle)
        return;
    int saved_errno = errno;
    opp_step_finish(); /* the step running at exit */
    size_t nf = 0;
    while (opp_features[nf])
        nf++;
    while (nf--) /* what features still hold (GPU records in CUPTI's buffers) */
        if (opp_features[nf]->stop)
            opp_features[nf]->stop();
    pthread_mutex_lock(&agent.lock);
    int rc = socket_ready();
    if (!rc)
        rc = opp_send_msg(agent.sock, OPP_MSG_BYE, NULL, 0, -1);
    uint64_t counts[OPP_ACK_FIELDS] = {0};
    uint32_t got = 0;
    /* Bounded: our records are in shared memory and outlive us, so a
     * process waits at most a second. The one that started the collector
     * waits for the finished trace as long as the collector makes
     * progress, never on one that is stopped or stuck. */
    struct opp_patience pat = {.pid = agent.root ? agent.collector_pid : 0,
                               .trace = agent.root ? agent.output : NULL,
                               .quiet_ms = 1000,
                               .max_ms = agent.root ? 600000 : 1000};
    if (!rc)
        rc = opp_wait_answer(agent.sock, OPP_MSG_ACK, counts, sizeof counts, &got, &pat);
    pthread_mutex_unlock(&agent.lock);
    if (rc == -ETIMEDOUT && pat.state == 'T') {
        say("the collector is stopped (SIGSTOP): ", agent.output, " is finished once it continues");
    } else if (rc == -ETIMEDOUT) {
        /* A process of a run waits no longer: nothing is lost, its records
         * stay in shared memory for the collector, and whoever waits for
         * the trace says what became of it. */
        if (agent.root)
            say("the collector did not answer for 1 s: ", agent.output, " may not be finished yet");
    } else if (rc) {
        if (!atomic_exchange(&agent.warned, 1))
            say("the collector is gone (killed or crashed): the trace misses what this process "
                "recorded after that",
                agent.root ? "; what it holds is in " : "", agent.root ? agent.output : "");
    } else if (agent.root && got == sizeof counts && counts[OPP_ACK_CONNECTED]) {
        /* the collector says where the trace went once it is finished
         * (collector.c's say_where), as it does when it is finished now */
        say("trace is being written to ", agent.output, " (other processes still run)");
    }
    atomic_store(&agent.on, 0);
    errno = saved_errno;
}
