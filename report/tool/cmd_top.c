/* `opprof top -- CMD...` / `opprof top --attach` / `opprof top TRACE`:
 * the operators of a run as it goes, from the collector's live aggregate
 * (common/topsnap.h), asked for over its socket each interval: full screen on
 * a terminal (top_screen.h), else plain snapshots, one table an interval.
 * With CMD, it runs `opprof run -q` (the trace written as usual) and
 * exits with CMD's status. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "analysis/top.h"
#include "proto.h"
#include "tool/cmds.h"
#include "tool/collectors.h"
#include "tool/options.h"
#include "tool/paths.h"
#include "tool/top_screen.h"
#include "topsnap.h"
#include "trace.h"
#include "util.h"
#include "views/top_view.h"
#include "views/say.h"

#define PREFIX "opprof top: "
#define ANSWER_MS 5000
#define FIND_MS 10000 /* how long the run's collector may take to appear */

struct top {
    int fd;
    uint8_t msg[OPP_MSG_MAX];
    struct opp_top_snap prev, cur; /* the snapshot last shown, and the latest */
    int have_prev, have_cur, cur_shown;
    int ended; /* the collector said DONE, or went: no more asking */
    int lost;  /* -errno: it went, or stopped answering, before it said DONE */
    const char *sock;
    enum opp_top_sort sort;
    enum opp_top_group group;
    size_t limit;
};

/* ---- options ---- */

static int opt_sort(const struct opp_option *o, const char *arg)
{
    for (int s = 0; s < OPP_TOP_NSORT; s++)
        if (!strcmp(arg, opp_top_sort_name(s))) {
            *(enum opp_top_sort *)o->value = s;
            return 0;
        }
    opp_say(PREFIX "--sort takes total, self, calls, gpu, mem or name, not '%s'", arg);
    return 2;
}

/* ---- finding the collector ---- */

/* The socket of the collector that writes trace (when not NULL), or of
 * the only one running. 0, or -1 said. */
static int find_socket(const char *trace, char *out, size_t cap)
{
    if (!trace)
        return opp_collector_only("top", "--socket", out, cap);
    if (access(trace, R_OK)) {
        opp_say(PREFIX "cannot read %s: %s", trace, strerror(errno));
        return -1;
    }
    if (!opp_collector_writing(trace, out, cap))
        return 0;
    char why[PATH_MAX + 64];
    if (opp_trace_check(trace, why, sizeof why))
        opp_say(PREFIX "%s", why); /* no trace at all: not a run that is over */
    else
        opp_say(PREFIX "no running collector writes %s (is its run over?)", trace);
    return -1;
}

/* ---- talking to it ---- */

/* The next message: its type, payload in t->msg. 0 or -errno. */
static int read_msg(struct top *t, uint16_t *type, uint32_t *size, int timeout_ms)
{
    struct opp_msg_header h;
    int rc = opp_recv_all(t->fd, &h, sizeof h, timeout_ms);
    if (rc)
        return rc;
    if (h.magic != OPP_PROTO_MAGIC || h.size > sizeof t->msg)
        return -EPROTO;
    if (h.size && (rc = opp_recv_all(t->fd, t->msg, h.size, timeout_ms)))
        return rc;
    *type = h.type;
    *size = h.size;
    return 0;
}

/* A message: a snapshot becomes the latest, DONE ends the run. */
static int take(struct top *t, uint16_t type, uint32_t size)
{
    if (type == OPP_MSG_DONE) {
        t->ended = 1;
        return 0;
    }
    if (type != OPP_MSG_TOP_SNAP)
        return -EPROTO;
    struct opp_top_snap s;
    if (opp_top_get(t->msg, size, &s))
        return -EPROTO;
    if (t->have_cur && t->cur_shown) {
        opp_top_free(&t->prev);
        t->prev = t->cur;
        t->have_prev = 1;
    } else if (t->have_cur) {
        opp_top_free(&t->cur);
    }
    t->cur = s;
    t->have_cur = 1;
    t->cur_shown = 0;
    return 0;
}

/* Ask for a snapshot and read it (and, the run over, the last one and
 * DONE). 0, or -errno (the collector is gone: ended is set). */
static int ask(struct top *t)
{
    if (t->ended)
        return 0;
    opp_send_msg(t->fd, OPP_MSG_TOP, NULL, 0, -1); /* gone: its last words are read still */
    int got = 0, rc = 0;
    while (!t->ended) {
        uint16_t type;
        uint32_t size;
        rc = read_msg(t, &type, &size, got ? 1 : ANSWER_MS); /* then what else is there */
        if (rc == -ETIMEDOUT && got)
            return 0;
        if (rc || (rc = take(t, type, size))) {
            t->ended = 1;
            t->lost = rc;
            break;
        }
        got += type == OPP_MSG_TOP_SNAP;
    }
    return got ? 0 : rc ? rc : -ECONNRESET;
}

/* Why the collector is lost, into buf: a line without its prefix. */
static const char *lost_why(const struct top *t, char *buf, size_t cap)
{
    if (t->lost == -ETIMEDOUT)
        snprintf(buf, cap, "the collector at %s did not answer for %d s (is it stopped?)", t->sock,
                 ANSWER_MS / 1000);
    else
        snprintf(buf, cap, "the collector at %s went away before the run ended (%s)", t->sock,
                 strerror(-t->lost));
    return buf;
}

/* ---- showing ---- */

/* The view of the latest snapshot against the one last shown, as text
 * into f: rows rows at most, or (rows 0, lines not) as many as fit in lines
 * with the lines around them. 0 or -errno. */
static int show(struct top *t, FILE *f, int paused, int keys, size_t rows, size_t lines)
{
    struct opp_top_view v;
    int rc = opp_top_compute(t->have_prev ? &t->prev : NULL, &t->cur, t->group, t->sort, &v);
    if (rc)
        return rc;
    struct opp_top_show o = {.rows = rows,
                             .sort = t->sort,
                             .group = t->group,
                             .paused = paused,
                             .ended = t->ended && !t->lost,
                             .lost = t->lost != 0,
                             .keys = keys};
    if (!rows && lines) {
        size_t around = opp_top_lines_around(&v, &o);
        o.rows = lines > around ? lines - around : 1;
    }
    rc = opp_out_top(f, &v, &o);
    opp_top_view_free(&v);
    return rc;
}

/* Plain snapshots: one table an interval, count of them (0: until the
 * run ends, then its last). */
static int plain(struct top *t, double interval, size_t count)
{
    size_t shown = 0;
    uint64_t next = opp_mono_ns();
    while (!t->ended && (!count || shown < count)) {
        next += (uint64_t)(interval * 1e9);
        uint64_t now = opp_mono_ns();
        if (next > now)
            usleep((useconds_t)((next - now) / 1000));
        ask(t);
        if (!t->have_cur)
            return 1;
        if (t->lost || (t->ended && t->cur_shown))
            break; /* lost: said by the caller, the numbers before it stand */
        if (shown)
            putchar('\n');
        if (show(t, stdout, 0, 0, t->limit, 0))
            return 1;
        fflush(stdout);
        t->cur_shown = 1;
        shown++;
    }
    return 0;
}

static void draw(struct top *t, struct top_screen *scr, int paused)
{
    char *text = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&text, &len);
    if (!m)
        return;
    size_t lines = top_screen_lines(scr); /* less ours below the view's, once ended */
    show(t, m, paused, 1, t->limit, lines > 1 && t->ended ? lines - 1 : lines);
    char why[PATH_MAX + 128];
    if (t->lost)
        fprintf(m, "%s: q quits\n", lost_why(t, why, sizeof why));
    else if (t->ended)
        fprintf(m, "the run is over: q quits\n");
    fclose(m);
    top_screen_draw(scr, text, len);
    free(text);
}

/* The full screen until q. */
static void screen(struct top *t, struct top_screen *scr, double interval)
{
    int paused = 0;
    uint64_t next = opp_mono_ns();
    for (;;) {
        uint64_t now = opp_mono_ns();
        if (now >= next) {
            next = now + (uint64_t)(interval * 1e9);
            if (!t->ended && !paused) {
                ask(t);
                if (t->have_cur)
                    draw(t, scr, paused);
                t->cur_shown = 1;
            }
        }
        now = opp_mono_ns();
        int k = top_screen_key(scr, next > now ? (int)((next - now) / 1000000) + 1 : 0);
        if (k < 0)
            continue;
        if (k == 'q' || k == 'Q')
            return;
        if (k == 's')
            t->sort = (t->sort + 1) % OPP_TOP_NSORT;
        else if (k == 'S')
            t->sort = (t->sort + OPP_TOP_NSORT - 1) % OPP_TOP_NSORT;
        else if (k == 'g' || k == 'l')
            t->group = (t->group + 1) % OPP_TOP_NGROUP; /* name, library, layer */
        else if (k == 'p' || k == ' ')
            paused = !paused;
        if (t->have_cur)
            draw(t, scr, paused);
    }
}

/* ---- running CMD ---- */

/* `opprof run -q --top-fd 3 [-o OUT] -- CMD...` as a child, its output
 * (and CMD's) to log when not NULL; *link our end of fd 3, where it says
 * its collector's socket and waits for our byte to start CMD. Its pid, or
 * -1 said. */
static pid_t start_run(const char *out, const char *log, char **cmd, int ncmd, int *link)
{
    char self[PATH_MAX];
    if (opp_tool_self(self, sizeof self)) {
        opp_say(PREFIX "cannot find the opprof program itself");
        return -1;
    }
    char **argv = calloc((size_t)ncmd + 10, sizeof *argv); /* ours, CMD and NULL */
    if (!argv)
        return -1;
    int k = 0;
    argv[k++] = self;
    argv[k++] = "run";
    argv[k++] = "-q";
    argv[k++] = "--top-fd";
    argv[k++] = "3";
    if (out) {
        argv[k++] = "-o";
        argv[k++] = (char *)out;
    }
    argv[k++] = "--";
    for (int i = 0; i < ncmd; i++)
        argv[k++] = cmd[i];
    int lfd = -1;
    if (log && (lfd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)) < 0) {
        opp_say(PREFIX "cannot write %s: %s", log, strerror(errno));
        free(argv);
        return -1;
    }
    int sp[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp)) {
        opp_say(PREFIX "socketpair: %s", strerror(errno));
        if (lfd >= 0)
            close(lfd);
        free(argv);
        return -1;
    }
    pid_t pid = fork();
    if (pid == 0) {
        /* the log first: it may be fd 3 itself, which the link takes then */
        if (lfd >= 0) {
            dup2(lfd, 1);
            dup2(lfd, 2);
            int nul = open("/dev/null", O_RDONLY | O_CLOEXEC);
            if (nul >= 0)
                dup2(nul, 0); /* the keys are ours */
        }
        dup2(sp[1], 3); /* not close-on-exec: run's */
        signal(SIGINT, SIG_DFL);
        execv(self, argv);
        _exit(127);
    }
    if (lfd >= 0)
        close(lfd);
    close(sp[1]);
    free(argv);
    if (pid < 0) {
        opp_say(PREFIX "fork: %s", strerror(errno));
        close(sp[0]);
        return -1;
    }
    *link = sp[0];
    return pid;
}

static int exit_code(int st)
{
    return WIFEXITED(st) ? WEXITSTATUS(st) : WIFSIGNALED(st) ? 128 + WTERMSIG(st) : 1;
}

/* The run's collector's socket, as the run says it on link: 0, or -1 (it
 * runs CMD unprofiled, or said nothing in time). */
static int await_collector(int link, char *sock, size_t cap)
{
    size_t n = 0;
    while (n + 1 < cap) {
        struct pollfd p = {.fd = link, .events = POLLIN};
        if (poll(&p, 1, FIND_MS) <= 0 || read(link, sock + n, 1) != 1)
            return -1;
        if (sock[n] == '\n')
            break;
        n++;
    }
    sock[n] = 0;
    return n ? 0 : -1;
}

int cmd_top(int argc, char **argv)
{
    const char *sock = NULL, *out = NULL, *log = NULL;
    int attach = 0, once = 0;
    double interval = 1.0;
    size_t count = 0;
    struct top t = {.fd = -1, .sort = OPP_TOP_SORT_TOTAL, .group = OPP_TOP_BY_NAME};
    int by_lib = 0, by_layer = 0;
    const struct opp_option options[] = {
        OPP_OPT_FLAG('a', "attach", &attach,
                     "watch a run started elsewhere (the only collector of\n"
                     "this user that is running, or --socket)"),
        OPP_OPT_STRING('s', "socket", &sock, "PATH", "the collector to watch (`opprof ctl list`)"),
        OPP_OPT_FLAG(0, "once", &once, "one table after one interval, then exit"),
        OPP_OPT_NUMBER('i', "interval", &interval, "S", "seconds between tables (default 1)",
                       OPP_NUMBER_DOUBLE, 0.05, 3600, "seconds from 0.05 to 3600"),
        OPP_OPT_NUMBER('n', "count", &count, "N", "N tables, then exit (CMD runs on to its end)",
                       OPP_NUMBER_SIZE, 1, 1e15, "a positive number"),
        OPP_OPT_NUMBER('l', "limit", &t.limit, "N", "rows shown (default: what fits; plain: all)",
                       OPP_NUMBER_SIZE, 1, 1e15, "a positive number"),
        OPP_OPT_CALLBACK(0, "sort", &t.sort, "KEY",
                         "total (default), self, calls, gpu, mem or name", opt_sort),
        OPP_OPT_FLAG(0, "by-lib", &by_lib, "a row per library instead of per operator"),
        OPP_OPT_FLAG(0, "by-layer", &by_layer,
                     "a row per nn.Module: the self time of the calls inside\n"
                     "it and in no module inside it"),
        OPP_OPT_STRING('o', "output", &out, "FILE", "with CMD: its trace (as opprof run -o)"),
        OPP_OPT_STRING(0, "log", &log, "FILE",
                       "with CMD on the full screen: where its output goes\n"
                       "(default opprof-top-PID.log)"),
        OPP_OPT_HELP("show this help"),
        OPP_OPT_END(),
    };
    const struct opp_command cmd = {
        .name = "top",
        .usage = "usage: opprof top [OPTIONS] -- CMD [ARG...]\n"
                 "       opprof top [OPTIONS] --attach [--socket PATH]\n"
                 "       opprof top [OPTIONS] TRACE_BEING_WRITTEN\n"
                 "\n"
                 "The operators of a run as it goes, refreshed each interval: calls per\n"
                 "second, self CPU, CPU total, GPU time, CPU memory, the last interval's\n"
                 "and since the start; records, drops, processes, threads and steps.\n"
                 "On a terminal, full screen (keys: s sort, g group by library or layer,\n"
                 "p pause, q quit); else, or with --once or --count, a table an interval.\n"
                 "\n",
        .col = 21,
        .options = options, /* options after TRACE too; CMD's own follow "--" */
    };
    /* CMD is what follows the first "--": the options are read before it
     * only (getopt would move a TRACE before it to after it) */
    int dd = 1;
    while (dd < argc && strcmp(argv[dd], "--"))
        dd++;
    int first, parsed = opp_options_parse(&cmd, dd, argv, &first);
    if (parsed)
        return parsed == 1 ? 0 : parsed;
    if (by_lib && by_layer) {
        opp_say(PREFIX "--by-lib and --by-layer exclude each other (g switches on the screen)");
        return 2;
    }
    if (once && count) { /* count's least is 1: given */
        opp_say(PREFIX "--once is --count 1: give one of them");
        return 2;
    }
    t.group = by_layer ? OPP_TOP_BY_LAYER : by_lib ? OPP_TOP_BY_LIB : OPP_TOP_BY_NAME;
    if (once)
        count = 1;
    int ntraces = dd - first, is_cmd = dd < argc;
    int ncmd = is_cmd ? argc - dd - 1 : 0;
    const char *trace = NULL;
    if (sock)
        attach = 1;
    if (attach && (is_cmd || ntraces)) {
        opp_say(PREFIX "%s and %s exclude each other (see 'opprof top --help')",
                sock ? "--socket" : "--attach", is_cmd ? "-- CMD" : "a trace");
        return 2;
    } else if (ntraces > 1 || (ntraces && is_cmd)) {
        opp_say(PREFIX "one trace at a time, or -- CMD (see 'opprof top --help')");
        return 2;
    } else if (!ncmd && (out || log)) { /* else nothing would be written there */
        opp_say(PREFIX "%s goes with -- CMD (see 'opprof top --help')", out ? "--output" : "--log");
        return 2;
    } else if (log && count) { /* plain tables: CMD's output stays where it goes */
        opp_say(PREFIX "--log goes with the full screen, which --%s leaves out (see 'opprof top "
                       "--help')",
                once ? "once" : "count");
        return 2;
    } else if (ncmd) {
        first = dd + 1; /* CMD */
    } else if (ntraces) {
        trace = argv[first];
    } else if (!attach) {
        opp_say(PREFIX "say what to watch: -- CMD, --attach or a trace being written (see "
                       "'opprof top --help')");
        return 2;
    }
    struct top_screen *scr = NULL;
    char logbuf[64], found[512];
    pid_t run = -1;
    int st = 0, link = -1;
    int full = !count && top_screen_usable();
    if (ncmd) {
        if (full && !log) {
            snprintf(logbuf, sizeof logbuf, "opprof-top-%d.log", (int)getpid());
            log = logbuf;
        }
        if ((run = start_run(out, full ? log : NULL, argv + first, ncmd, &link)) < 0)
            return 1;
        if (await_collector(link, found, sizeof found)) {
            close(link); /* it said why, or runs CMD unprofiled */
            waitpid(run, &st, 0);
            return exit_code(st);
        }
        sock = found;
        signal(SIGINT, SIG_IGN); /* Ctrl-C is CMD's; we show its end */
    } else if (!sock && find_socket(trace, found, sizeof found)) {
        return 1;
    } else if (!sock) {
        sock = found;
    }
    t.sock = sock;
    t.fd = opp_connect(sock);
    if (t.fd < 0) {
        opp_say(PREFIX "cannot reach the collector at %s: %s", sock, strerror(-t.fd));
        if (link >= 0)
            close(link); /* CMD runs unwatched */
        if (run > 0)
            waitpid(run, &st, 0);
        return 1;
    }
    /* the first snapshot at once: the collector then sends us its last
     * one however soon the run ends */
    int rc = ask(&t);
    char why[PATH_MAX + 128];
    if (rc) {
        if (t.lost == -ETIMEDOUT)
            opp_say(PREFIX "%s", lost_why(&t, why, sizeof why));
        else
            opp_say(PREFIX "the collector at %s did not answer: %s", sock, strerror(-rc));
        close(t.fd);
        if (link >= 0)
            close(link);
        if (run > 0)
            waitpid(run, &st, 0);
        return 1;
    }
    t.cur_shown = 1; /* the first interval is from it */
    if (link >= 0) { /* we watch: CMD may start */
        if (write(link, "1", 1) != 1) {
            /* the run is gone: its end is read from the collector */
        }
        close(link);
    }
    int on_screen = full && (scr = top_screen_open());
    if (on_screen) {
        screen(&t, scr, interval);
        top_screen_close(scr);
    } else {
        rc = plain(&t, interval, count);
    }
    if (t.lost) {
        opp_say(PREFIX "%s", lost_why(&t, why, sizeof why));
        rc = 1;
    }
    if (on_screen && run > 0 && (!t.ended || t.lost))
        opp_say(PREFIX "waiting for the run to end (pid %d)", (int)run);
    close(t.fd);
    opp_top_free(&t.prev);
    opp_top_free(&t.cur);
    if (run > 0) {
        waitpid(run, &st, 0);
        if (log && full)
            opp_say(PREFIX "the program's output, and where its trace went, is in %s", log);
        return exit_code(st);
    }
    return rc;
}
