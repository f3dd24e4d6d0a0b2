/* What -o names is never destroyed (report/tool/outfile.h): every export
 * and `opprof summarize`, to each kind of target (missing, regular, its
 * mode and owner kept, one we may not write, symbolic links, the tool's
 * own descriptors as > and >> leave them, a FIFO, a device, /dev/full, a
 * directory, a read-only directory, a file of several names, kept as it
 * was when the command fails or finds no room), run as the real tool; an
 * export killed while it writes leaves nothing behind; -o given twice or
 * empty;
 * and `opprof run -o` refusing what it cannot write before CMD starts. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "analysis/model.h"
#include "testutil.h"
#include "tracebuild.h"

TU_TRACE_FIXTURE

/* Every command that writes -o OUT, and its exit code when OUT cannot be
 * written. */
static const struct output {
    const char *argv[3]; /* before TRACE */
    int fails;
} outputs[] = {
    {{"export", "chrome"}, 1}, {{"export", "stacks"}, 1}, {{"export", "flamegraph"}, 1},
    {{"export", "html"}, 1},   {{"export", "memory"}, 1}, {{"export", "sqlite"}, 1},
    {{"summarize"}, 1},
};
#define NOUT (sizeof outputs / sizeof *outputs)

/* One call, one GPU allocation (for the memory timeline). */
static void make_trace(void)
{
    struct tb b;
    tb_open(&b, trace);
    tb_process(&b, .proc = 1, .pid = 4242, .real = 1, .exe = "app");
    tb_funcs(&b, {OPP_OP_PLAIN, OPP_DT_NONE, "app", "work"});
    tb_thread(&b, 7, NULL);
    tb_events(&b, TB_CALL(0, 1000, 3000, 0));
    tb_memory(&b, .start = 1500, .corr = 1, .op = OPP_MEM_ALLOC, .mem_kind = 3, .address = 0xA000,
              .bytes = 4096);
    tb_gpu_chunk(&b);
    tb_end(&b);
}

/* The command line of output k reading from, writing out (argv: room for
 * 8). */
static void command_from(size_t k, const char *from, const char *out, char **argv)
{
    int n = 0;
    argv[n++] = (char *)tu_tool("opprof");
    for (int i = 0; outputs[k].argv[i]; i++)
        argv[n++] = (char *)outputs[k].argv[i];
    argv[n++] = (char *)from;
    argv[n++] = "-o";
    argv[n++] = (char *)out;
    argv[n] = NULL;
}

static void command(size_t k, const char *out, char **argv)
{
    command_from(k, trace, out, argv);
}

static const char *what(size_t k)
{
    static char s[64];
    snprintf(s, sizeof s, "%s%s%s", outputs[k].argv[0], outputs[k].argv[1] ? " " : "",
             outputs[k].argv[1] ? outputs[k].argv[1] : "");
    return s;
}

/* argv run with TMPDIR=tmp: its exit code, stderr in *err (malloc'd). */
static int run_in(char **argv, const char *tmp, char **err)
{
    char *e = tu_path(dir, "stderr"), env[4200];
    snprintf(env, sizeof env, "TMPDIR=%s", tmp);
    char *const add[] = {env, NULL};
    int code = tu_code(tu_run(argv, add, NULL, e));
    *err = tu_slurp(e);
    free(e);
    return code;
}

/* Output k to out: its exit code, stderr in *err (malloc'd). */
static int write_to(size_t k, const char *out, char **err)
{
    char *argv[8], *e = tu_path(dir, "stderr");
    command(k, out, argv);
    int code = tu_code(tu_run(argv, NULL, NULL, e));
    *err = tu_slurp(e);
    free(e);
    return code;
}

/* Output k written to a regular file (name, in dir), read back (malloc'd,
 * *len bytes): what every other target must receive. NULL for SQLite when
 * not built. */
static char *reference_as(size_t k, const char *name, size_t *len)
{
    char *ref = tu_path(dir, name), *err;
    int code = write_to(k, ref, &err);
    if (code && strstr(err, "without SQLite")) {
        fprintf(stderr, "outputs: sqlite skipped (this opprof was built without libsqlite3-dev)\n");
        free(err), free(ref);
        return NULL;
    }
    ck_assert_msg(code == 0, "%s: %s", what(k), err);
    FILE *f = fopen(ref, "rb");
    ck_assert_ptr_nonnull(f);
    fseek(f, 0, SEEK_END);
    *len = (size_t)ftell(f);
    rewind(f);
    char *data = malloc(*len + 1);
    ck_assert_uint_eq(fread(data, 1, *len, f), *len);
    fclose(f);
    unlink(ref);
    free(err), free(ref);
    ck_assert_uint_gt(*len, 0);
    return data;
}

static char *reference(size_t k, size_t *len)
{
    return reference_as(k, "reference", len);
}

/* path holds exactly the len bytes of want. */
static void same_bytes(size_t k, const char *path, const char *want, size_t len)
{
    FILE *f = fopen(path, "rb");
    ck_assert_msg(f != NULL, "%s: %s missing", what(k), path);
    char *got = malloc(len + 2);
    size_t n = fread(got, 1, len + 1, f);
    fclose(f);
    ck_assert_msg(n == len && !memcmp(got, want, len), "%s: %s has %zu bytes, not the %zu expected",
                  what(k), path, n, len);
    free(got);
}

/* Entries of where besides . and .. */
static int entries(const char *where)
{
    return tu_count_files(where, "") - 2;
}

static void no_tmp_left(const char *where)
{
    ck_assert_int_eq(tu_count_files(where, ".tmp"), 0);
}

static mode_t kind_of(const char *path)
{
    struct stat st;
    ck_assert_int_eq(lstat(path, &st), 0);
    return st.st_mode & S_IFMT;
}

/* A missing OUT is made; a regular one is replaced whole. */
/* An export ended by SIGTERM or SIGINT while it writes (its temporary
 * file made, the trace being read): the signal's status, OUT left as it
 * was, no temporary file; SQLite's export too, its journal included. */
START_TEST(killed_export_leaves_nothing)
{
    char *big = tu_path(dir, "big.trace");
    tb_outer_inner(big, 1500000); /* 3M calls: seconds of reading */
    const char *kinds[][2] = {{"stacks", "out.folded"}, {"sqlite", "out.sqlite"}};
    const int sigs[] = {SIGTERM, SIGINT};
    for (size_t k = 0; k < 2; k++) {
#ifndef OPP_HAVE_SQLITE
        if (k == 1)
            break;
#endif
        char *out = tu_path(dir, kinds[k][1]);
        char *argv[] = {
            (char *)tu_tool("opprof"), "export", (char *)kinds[k][0], big, "-o", out, NULL};
        int pid = tu_spawn(argv, NULL, NULL, NULL);
        ck_assert_int_gt(pid, 0);
        /* the first read comes before the output is made: seconds under
         * ASan on a loaded machine */
        for (int i = 0; i < 30000 && !tu_count_files(dir, ".tmp"); i++)
            usleep(1000);
        ck_assert_int_eq(tu_count_files(dir, ".tmp"), 1); /* it is writing */
        ck_assert_int_eq(kill(pid, sigs[k]), 0);
        int st = tu_wait(pid);
        ck_assert_msg(WIFSIGNALED(st) && WTERMSIG(st) == sigs[k], "status %d", st);
        ck_assert_int_eq(tu_count_files(dir, ".tmp"), 0);
        ck_assert_int_eq(tu_count_files(dir, "journal"), 0);
        ck_assert_int_ne(access(out, F_OK), 0);
        free(out);
    }
    free(big);
}
END_TEST

/* The same with OUT a file of two names, made in TMPDIR first: its
 * temporary file removed there, both names holding what they held. */
START_TEST(killed_in_place_export_leaves_nothing)
{
    char *big = tu_path(dir, "big.trace"), *tmp = tu_path(dir, "tmp");
    char *a = tu_path(dir, "a.out"), *b = tu_path(dir, "b.out"), env[4200];
    tb_outer_inner(big, 1500000);
    ck_assert_int_eq(mkdir(tmp, 0700), 0);
    FILE *f = fopen(a, "w");
    fputs("ORIGINAL\n", f);
    fclose(f);
    ck_assert_int_eq(link(a, b), 0);
    snprintf(env, sizeof env, "TMPDIR=%s", tmp);
    char *const add[] = {env, NULL};
    char *argv[] = {(char *)tu_tool("opprof"), "export", "stacks", big, "-o", a, NULL};
    int pid = tu_spawn(argv, add, NULL, NULL);
    ck_assert_int_gt(pid, 0);
    for (int i = 0; i < 30000 && !entries(tmp); i++)
        usleep(1000);
    ck_assert_int_eq(entries(tmp), 1); /* it is writing */
    ck_assert_int_eq(kill(pid, SIGTERM), 0);
    int st = tu_wait(pid);
    ck_assert_msg(WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM, "status %d", st);
    ck_assert_int_eq(entries(tmp), 0);
    same_bytes(1, a, "ORIGINAL\n", 9);
    same_bytes(1, b, "ORIGINAL\n", 9);
    free(big), free(tmp), free(a), free(b);
}
END_TEST

START_TEST(missing_and_regular_files)
{
    make_trace();
    for (size_t k = 0; k < NOUT; k++) {
        size_t len;
        char *want = reference(k, &len), *err;
        if (!want)
            continue;
        char *out = tu_path(dir, "new.out");
        ck_assert_int_eq(write_to(k, out, &err), 0);
        ck_assert_msg(!strcmp(err, "") || !strcmp(outputs[k].argv[0], "summarize"), "%s", err);
        same_bytes(k, out, want, len);
        free(err);
        FILE *f = fopen(out, "w");
        fputs("an older file, longer than nothing\n", f);
        fclose(f);
        ck_assert_int_eq(write_to(k, out, &err), 0);
        same_bytes(k, out, want, len);
        ck_assert_uint_eq(kind_of(out), S_IFREG);
        no_tmp_left(dir);
        unlink(out);
        free(err), free(out), free(want);
    }
}
END_TEST

/* A file of two names (hard links): written in place, so that both names
 * hold the new output, still one file (its inode, two links, its mode),
 * nothing else made beside it, nothing left in TMPDIR. */
START_TEST(hard_linked_file_written_in_place)
{
    make_trace();
    char *a = tu_path(dir, "a.out"), *b = tu_path(dir, "b.out"), *tmp = tu_path(dir, "tmp");
    ck_assert_int_eq(mkdir(tmp, 0700), 0);
    for (size_t k = 0; k < NOUT; k++) {
        size_t len;
        char *want = reference(k, &len), *err;
        if (!want)
            continue;
        FILE *f = fopen(a, "w"); /* longer than the output: cut to its length */
        for (size_t i = 0; i < len + 4096; i++)
            fputc('x', f);
        fclose(f);
        ck_assert_int_eq(chmod(a, 0640), 0);
        ck_assert_int_eq(link(a, b), 0);
        struct stat before, sa, sb;
        ck_assert_int_eq(stat(a, &before), 0);
        char *argv[8];
        command(k, a, argv);
        ck_assert_int_eq(run_in(argv, tmp, &err), 0);
        ck_assert_msg(!strcmp(err, "") || !strcmp(outputs[k].argv[0], "summarize"), "%s", err);
        same_bytes(k, a, want, len);
        same_bytes(k, b, want, len);
        ck_assert_int_eq(stat(a, &sa), 0);
        ck_assert_int_eq(stat(b, &sb), 0);
        ck_assert_msg(sa.st_ino == before.st_ino && sb.st_ino == before.st_ino,
                      "%s: a.out and b.out are no longer one file", what(k));
        ck_assert_uint_eq(sa.st_nlink, 2);
        ck_assert_uint_eq(sa.st_mode & 07777, 0640);
        ck_assert_int_eq(entries(dir), 5); /* the trace, stderr, TMPDIR, a.out, b.out */
        ck_assert_int_eq(entries(tmp), 0);
        unlink(a), unlink(b);
        free(err), free(want);
    }
    free(a), free(b), free(tmp);
}
END_TEST

/* Each output's exit code for an empty trace. */
static const int empty_fails[NOUT] = {1, 1, 1, 1, 1, 1, 1};

/* A command that fails with OUT a file of two names (an empty trace, for
 * every output; a summary trace, which it refuses, or a rank the trace
 * does not hold, for the Chrome export): the one line and exit code it
 * gives OUT missing (not made then), and both names hold what they held,
 * byte for byte, one file still; nothing left beside it or in TMPDIR. */
START_TEST(hard_linked_file_kept_when_failing)
{
    make_trace();
    char *empty = tu_path(dir, "empty.trace"), *summary = tu_path(dir, "s.trace");
    char *a = tu_path(dir, "a.out"), *b = tu_path(dir, "b.out"), *tmp = tu_path(dir, "tmp");
    ck_assert_int_eq(mkdir(tmp, 0700), 0);
    fclose(fopen(empty, "w"));
    char *err, *argv[10];
    command_from(NOUT - 1, trace, summary, argv); /* summarize */
    ck_assert_int_eq(run_in(argv, tmp, &err), 0);
    free(err);
    for (size_t i = 0; i < NOUT + 2; i++) {
        size_t k = i < NOUT ? i : 0; /* the last two: Chrome's */
        int want = i < NOUT ? empty_fails[i] : i == NOUT ? 1 : 2;
        if (i < NOUT) {
            command_from(k, empty, a, argv);
        } else if (i == NOUT) {
            command_from(k, summary, a, argv);
        } else {
            char *rank[] = {
                (char *)tu_tool("opprof"), "export", "chrome", "--rank", "9", trace, "-o", a, NULL};
            memcpy(argv, rank, sizeof rank);
        }
        char *said;
        int code = run_in(argv, tmp, &said);
        ck_assert_msg(code == want && strchr(said, '\n') == said + strlen(said) - 1, "%s %s: %d %s",
                      what(k), argv[3], code, said);
        ck_assert_int_eq(access(a, F_OK), -1);
        FILE *f = fopen(a, "w");
        fputs("ORIGINAL\n", f);
        fclose(f);
        ck_assert_int_eq(link(a, b), 0);
        struct stat before, sa, sb;
        ck_assert_int_eq(stat(a, &before), 0);
        ck_assert_int_eq(run_in(argv, tmp, &err), want);
        ck_assert_str_eq(err, said);
        same_bytes(k, a, "ORIGINAL\n", 9);
        same_bytes(k, b, "ORIGINAL\n", 9);
        ck_assert_int_eq(stat(a, &sa), 0);
        ck_assert_int_eq(stat(b, &sb), 0);
        ck_assert(sa.st_ino == before.st_ino && sb.st_ino == before.st_ino && sa.st_nlink == 2);
        ck_assert_int_eq(entries(tmp), 0);
        ck_assert_int_eq(entries(dir), 7); /* 3 traces, stderr, TMPDIR, a.out, b.out */
        unlink(a), unlink(b);
        free(err), free(said);
    }
    free(empty), free(summary), free(a), free(b), free(tmp);
}
END_TEST

/* A symbolic link is written through: what it names is replaced (or made,
 * when it dangles), in its own directory, and the link stays. */
START_TEST(symlinks_written_through)
{
    make_trace();
    char *sub = tu_path(dir, "sub");
    ck_assert_int_eq(mkdir(sub, 0755), 0);
    char *link = tu_path(dir, "link"), *dangling = tu_path(dir, "dangling");
    char *real = tu_path(sub, "real.out"), *made = tu_path(sub, "made.out");
    ck_assert_int_eq(symlink("sub/real.out", link), 0); /* relative to the link's directory */
    ck_assert_int_eq(symlink(made, dangling), 0);
    for (size_t k = 0; k < NOUT; k++) {
        size_t len;
        char *want = reference(k, &len), *err;
        if (!want)
            continue;
        FILE *f = fopen(real, "w");
        fputs("old\n", f);
        fclose(f);
        ck_assert_int_eq(write_to(k, link, &err), 0);
        ck_assert_uint_eq(kind_of(link), S_IFLNK);
        same_bytes(k, real, want, len);
        free(err);
        ck_assert_int_eq(write_to(k, dangling, &err), 0);
        ck_assert_uint_eq(kind_of(dangling), S_IFLNK);
        same_bytes(k, made, want, len);
        no_tmp_left(dir);
        no_tmp_left(sub);
        unlink(made);
        free(err), free(want);
    }
    free(sub), free(link), free(dangling), free(real), free(made);
}
END_TEST

/* A FIFO gets the output while a reader reads it, and stays a FIFO. */
START_TEST(fifo_with_a_reader)
{
    make_trace();
    char *fifo = tu_path(dir, "fifo"), *got = tu_path(dir, "got");
    ck_assert_int_eq(mkfifo(fifo, 0600), 0);
    for (size_t k = 0; k < NOUT; k++) {
        size_t len;
        char *want = reference(k, &len), *err;
        if (!want)
            continue;
        char *cat[] = {"cat", fifo, NULL};
        int reader = tu_spawn(cat, NULL, got, NULL);
        ck_assert_int_gt(reader, 0);
        ck_assert_int_eq(write_to(k, fifo, &err), 0);
        ck_assert_int_eq(tu_code(tu_wait(reader)), 0);
        same_bytes(k, got, want, len);
        ck_assert_uint_eq(kind_of(fifo), S_IFIFO);
        no_tmp_left(dir);
        free(err), free(want);
    }
    free(fifo), free(got);
}
END_TEST

/* A device node made here, major:minor (1:3 is /dev/null, 1:7 /dev/full),
 * writable: its path (malloc'd), or NULL when mknod or the container's
 * device rules do not allow it (why said). */
static char *device(const char *name, unsigned minor)
{
    char *path = tu_path(dir, name);
    int fd = -1;
    if (mknod(path, S_IFCHR | 0666, makedev(1, minor)) < 0 || (fd = open(path, O_WRONLY)) < 0) {
        fprintf(stderr, "outputs: no device made with mknod (%s)\n", strerror(errno));
        unlink(path);
        free(path);
        return NULL;
    }
    close(fd);
    return path;
}

/* A character device (a /dev/null made with mknod here) is written, never
 * replaced by a regular file. */
START_TEST(device_stays_a_device)
{
    make_trace();
    char *null = device("null", 3);
    if (!null) {
        fprintf(stderr, "outputs: device_stays_a_device skipped\n");
        return;
    }
    for (size_t k = 0; k < NOUT; k++) {
        char *err;
        int code = write_to(k, null, &err);
        if (code && strstr(err, "without SQLite")) {
            free(err);
            continue;
        }
        ck_assert_msg(code == 0, "%s: %s", what(k), err);
        ck_assert_uint_eq(kind_of(null), S_IFCHR);
        no_tmp_left(dir);
        free(err);
    }
    free(null);
}
END_TEST

/* /dev/full: the write error in one line, a failing exit, the device kept.
 * A copy made with mknod where we may (so that a fault here cannot take
 * the machine's own), else /dev/full itself. */
START_TEST(dev_full_says_so)
{
    make_trace();
    char *full = device("full", 7);
    if (!full)
        full = strdup("/dev/full");
    if (access(full, W_OK) != 0) {
        fprintf(stderr, "outputs: dev_full_says_so skipped: no writable /dev/full\n");
        free(full);
        return;
    }
    for (size_t k = 0; k < NOUT; k++) {
        char *err;
        int code = write_to(k, full, &err);
        if (code && strstr(err, "without SQLite")) {
            free(err);
            continue;
        }
        char want[4400];
        snprintf(want, sizeof want, "opprof %s: cannot write %s: No space left on device\n",
                 outputs[k].argv[0], full);
        ck_assert_msg(code == outputs[k].fails && !strcmp(err, want), "%s: %d %s", what(k), code,
                      err);
        ck_assert_uint_eq(kind_of(full), S_IFCHR);
        free(err);
    }
    free(full);
}
END_TEST

/* A full disk: `opprof summarize` names OUT, not the temporary file it
 * writes beside it, whether the disk fills at the summary's first bytes
 * or later (one page left: the header fits). A 64 KiB tmpfs (root
 * only). */
START_TEST(summarize_full_disk_names_out)
{
    char blas[4200]; /* its summary: 74 KB */
    snprintf(blas, sizeof blas, "%s/tests/corpus/traces/blas.trace", getenv("OPPROF_SRC"));
    char *full = tu_path(dir, "full");
    ck_assert_int_eq(mkdir(full, 0700), 0);
    if (mount("tmpfs", full, "tmpfs", 0, "size=64k") != 0) {
        fprintf(stderr, "outputs: summarize_full_disk_names_out skipped: cannot mount a tmpfs "
                        "(not root)\n");
        free(full);
        return;
    }
    char *fill = tu_path(full, "fill"), *out = tu_path(full, "s.trace");
    const size_t left[] = {0, 4096};
    for (size_t i = 0; i < 2; i++) {
        FILE *f = fopen(fill, "w");
        ck_assert_ptr_nonnull(f);
        char page[4096] = {0};
        while (fwrite(page, 1, sizeof page, f) == sizeof page && fflush(f) == 0)
            ;
        fclose(f);
        ck_assert_int_eq(truncate(fill, 64 * 1024 - (off_t)left[i]), 0);
        char *e = tu_path(dir, "stderr"), want[4400];
        char *argv[] = {(char *)tu_tool("opprof"), "summarize", blas, "-o", out, NULL};
        ck_assert_int_eq(tu_code(tu_run(argv, NULL, NULL, e)), 1);
        char *err = tu_slurp(e);
        snprintf(want, sizeof want, "opprof summarize: cannot write %s: No space left on device\n",
                 out);
        ck_assert_msg(!strcmp(err, want), "%zu bytes left: %s", left[i], err);
        ck_assert_int_eq(entries(full), 1); /* the fill alone */
        free(err), free(e);
    }
    ck_assert_int_eq(umount(full), 0);
    free(fill), free(out), free(full);
}
END_TEST

/* A file of two names where the new output finds no room: on its own
 * full disk, or in a full TMPDIR where it is made first. Said in one line
 * naming OUT (and TMPDIR), exit 1, both names holding what they held,
 * nothing left in either place. A 64 KiB tmpfs (root only); the outputs
 * of blas.trace are larger. */
START_TEST(hard_linked_file_kept_when_no_room)
{
    char blas[4200];
    snprintf(blas, sizeof blas, "%s/tests/corpus/traces/blas.trace", getenv("OPPROF_SRC"));
    char *full = tu_path(dir, "full"), *tmp = tu_path(dir, "tmp");
    ck_assert_int_eq(mkdir(full, 0700), 0);
    ck_assert_int_eq(mkdir(tmp, 0700), 0);
    if (mount("tmpfs", full, "tmpfs", 0, "size=64k") != 0) {
        fprintf(stderr, "outputs: hard_linked_file_kept_when_no_room skipped: cannot mount a "
                        "tmpfs (not root)\n");
        free(full), free(tmp);
        return;
    }
    char *fill = tu_path(full, "fill");
    const size_t ks[] = {3, NOUT - 1}; /* html (streamed), summarize (its own file) */
    for (int in_tmp = 0; in_tmp < 2; in_tmp++) {
        char *a = tu_path(in_tmp ? dir : full, "a.out"), *b = tu_path(in_tmp ? dir : full, "b.out");
        for (size_t i = 0; i < 2; i++) {
            size_t k = ks[i];
            FILE *f = fopen(a, "w");
            fputs("ORIGINAL\n", f);
            fclose(f);
            ck_assert_int_eq(link(a, b), 0);
            struct stat before, sa, sb;
            ck_assert_int_eq(stat(a, &before), 0);
            f = fopen(fill, "w");
            ck_assert_ptr_nonnull(f);
            char page[4096] = {0};
            while (fwrite(page, 1, sizeof page, f) == sizeof page && fflush(f) == 0)
                ;
            fclose(f);
            char *argv[8], *err, want[8800];
            command_from(k, blas, a, argv);
            int code = run_in(argv, in_tmp ? full : tmp, &err);
            if (in_tmp && k != NOUT - 1)
                snprintf(want, sizeof want,
                         "opprof %s: cannot write %s: its temporary file in %s: No space left on "
                         "device\n",
                         outputs[k].argv[0], a, full);
            else
                snprintf(want, sizeof want, "opprof %s: cannot write %s: No space left on device\n",
                         outputs[k].argv[0], a);
            ck_assert_msg(code == 1 && !strcmp(err, want), "%s, TMPDIR %s: %d %s", what(k),
                          in_tmp ? "full" : "not", code, err);
            same_bytes(k, a, "ORIGINAL\n", 9);
            same_bytes(k, b, "ORIGINAL\n", 9);
            ck_assert_int_eq(stat(a, &sa), 0);
            ck_assert_int_eq(stat(b, &sb), 0);
            ck_assert(sa.st_ino == before.st_ino && sb.st_ino == before.st_ino);
            ck_assert_int_eq(entries(full), in_tmp ? 1 : 3); /* the fill (a.out, b.out) */
            ck_assert_int_eq(entries(tmp), 0);
            unlink(fill), unlink(a), unlink(b);
            free(err);
        }
        free(a), free(b);
    }
    ck_assert_int_eq(umount(full), 0);
    free(fill), free(full), free(tmp);
}
END_TEST

/* Standard output a full device: each command says so in one line with
 * the failed write's errno (not EIO), and exits non-zero; the report and
 * the comparison are longer than stdio's buffer (a write fails while they
 * are written, not at the end), advice and help fit in it. */
START_TEST(stdout_full_says_so)
{
    if (access("/dev/full", W_OK) != 0) {
        fprintf(stderr, "outputs: stdout_full_says_so skipped: no writable /dev/full\n");
        return;
    }
    char torch[4200];
    snprintf(torch, sizeof torch, "%s/tests/corpus/traces/torch.trace", getenv("OPPROF_SRC"));
    char *op = (char *)tu_tool("opprof"), *e = tu_path(dir, "err");
    const struct {
        char *argv[5];
        int code;
        const char *said;
    } runs[] = {
        {{op, "report", torch}, 1, "opprof report: cannot write the report"},
        {{op, "advise", torch}, 1, "opprof advise: cannot write the output"},
        {{op, "advise", "--thresholds"}, 1, "opprof advise: cannot write the output"},
        {{op, "diff", torch, torch}, 3, "opprof diff: cannot write the comparison"},
        {{op, "--help"}, 1, "opprof: cannot write the output"},
        {{op, "--version"}, 1, "opprof: cannot write the output"},
        {{op, "report", "--help"}, 1, "opprof report: cannot write the output"},
    };
    for (size_t i = 0; i < sizeof runs / sizeof *runs; i++) {
        int code = tu_code(tu_run(runs[i].argv, NULL, "/dev/full", e));
        char *err = tu_slurp(e), want[4400];
        snprintf(want, sizeof want, "%s: No space left on device\n", runs[i].said);
        ck_assert_msg(code == runs[i].code && !strcmp(err, want), "%s %s: %d %s", runs[i].argv[1],
                      runs[i].argv[2] ? runs[i].argv[2] : "", code, err);
        free(err);
    }
    free(e);
}
END_TEST

/* opprof's own --help and --version take nothing after them: a word
 * there is refused in one line, exit 2, nothing on stdout. */
START_TEST(own_options_take_no_word)
{
    char *op = (char *)tu_tool("opprof"), *o = tu_path(dir, "out"), *e = tu_path(dir, "err");
    const struct {
        char *argv[4];
        const char *said;
    } runs[] = {
        {{op, "--help", "report"},
         "opprof: --help takes nothing after it, not 'report' (a command's help: 'opprof COMMAND "
         "--help')\n"},
        {{op, "-h", "x"},
         "opprof: -h takes nothing after it, not 'x' (a command's help: 'opprof COMMAND "
         "--help')\n"},
        {{op, "--version", "report"}, "opprof: --version takes nothing after it, not 'report'\n"},
    };
    for (size_t i = 0; i < sizeof runs / sizeof *runs; i++) {
        ck_assert_int_eq(tu_code(tu_run(runs[i].argv, NULL, o, e)), 2);
        char *out = tu_slurp(o), *err = tu_slurp(e);
        ck_assert_str_eq(out, "");
        ck_assert_str_eq(err, runs[i].said);
        free(out), free(err);
    }
    free(o), free(e);
}
END_TEST

/* A directory is refused, and left as it was; but the Chrome export's
 * file goes in it, named as tensorboard_trace_handler names it (README). */
START_TEST(directory_refused)
{
    make_trace();
    char *sub = tu_path(dir, "sub");
    ck_assert_int_eq(mkdir(sub, 0755), 0);
    for (size_t k = 0; k < NOUT; k++) {
        char *err, want[4400];
        if (!strcmp(outputs[k].argv[0], "export") && !strcmp(outputs[k].argv[1], "chrome")) {
            char named[4300];
            snprintf(named, sizeof named, "%s/localhost_4242.1.pt.trace.json", sub);
            snprintf(want, sizeof want, "opprof export: the whole trace -> %s\n", named);
            ck_assert_int_eq(write_to(k, sub, &err), 0);
            ck_assert_str_eq(err, want);
            ck_assert_int_eq(entries(sub), 1);
            ck_assert_int_eq(unlink(named), 0);
            free(err);
            continue;
        }
        snprintf(want, sizeof want, "opprof %s: cannot write %s: Is a directory\n",
                 outputs[k].argv[0], sub);
        ck_assert_int_eq(write_to(k, sub, &err), outputs[k].fails);
        ck_assert_str_eq(err, want);
        ck_assert_uint_eq(kind_of(sub), S_IFDIR);
        ck_assert_int_eq(entries(sub), 0);
        no_tmp_left(dir);
        free(err);
    }
    free(sub);
}
END_TEST

/* -o given twice, or empty: a usage error in one line for every output,
 * nothing written (the options' rule, tool/options.h). */
START_TEST(output_given_twice_or_empty)
{
    make_trace();
    char *a = tu_path(dir, "a.out"), *b = tu_path(dir, "b.out");
    for (size_t k = 0; k < NOUT; k++) {
        char *argv[10], *e = tu_path(dir, "stderr"), want[4400];
        command(k, a, argv);
        int n = 0;
        while (argv[n])
            n++;
        argv[n++] = "--output";
        argv[n++] = b;
        argv[n] = NULL;
        ck_assert_int_eq(tu_code(tu_run(argv, NULL, NULL, e)), 2);
        char *err = tu_slurp(e);
        snprintf(want, sizeof want, "opprof %s: --output given twice ('%s' and '%s'): give it once\n",
                 outputs[k].argv[0], a, b);
        ck_assert_str_eq(err, want);
        free(err);
        ck_assert_int_eq(entries(dir), 2); /* the trace, stderr */
        command(k, "", argv);
        ck_assert_int_eq(tu_code(tu_run(argv, NULL, NULL, e)), 2);
        err = tu_slurp(e);
        snprintf(want, sizeof want, "opprof %s: --output wants OUT, not ''\n", outputs[k].argv[0]);
        ck_assert_str_eq(err, want);
        ck_assert_int_eq(entries(dir), 2);
        free(err), free(e);
    }
    free(a), free(b);
}
END_TEST

/* argv run as user nobody when we are root (root writes anywhere), else
 * as ourselves, stderr into err: its exit code; -2 when it cannot run as
 * nobody (the build not reachable by that user). */
static int run_unprivileged(char **argv, const char *err)
{
    pid_t pid = fork();
    if (pid == 0) {
        int fd = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0666);
        if (fd < 0 || dup2(fd, 2) < 0)
            _exit(120);
        if (geteuid() == 0 && (setgid(65534) || setuid(65534)))
            _exit(121);
        if (access(argv[0], X_OK))
            _exit(122);
        execv(argv[0], argv);
        _exit(123);
    }
    int code = tu_code(tu_wait(pid));
    return code >= 120 && code <= 123 ? -2 : code;
}

/* What a shell leaves a command's descriptor fd open on, path: with >
 * (append 0: "header\n" written first), with >> (append 1: path already
 * holds "line1 5\n"). Its descriptor (close-on-exec), path written as
 * described. */
static int shell_open(const char *path, int append)
{
    int d = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    ck_assert_int_ge(d, 0);
    if (append) {
        ck_assert_int_eq(write(d, "line1 5\n", 8), 8);
        close(d);
        d = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
        ck_assert_int_ge(d, 0);
    } else {
        ck_assert_int_eq(write(d, "header\n", 7), 7);
    }
    return d;
}

/* Output k run with d as its descriptor fd, -o name (/proc/PID/...: the
 * tool's pid), stdin /dev/null: its exit code, stderr in *err. */
static int run_with_fd_ns(size_t k, const char *name, int d, int fd, int ns, char **err)
{
    char *e = tu_path(dir, "stderr");
    pid_t pid = fork();
    if (pid == 0 && ns) { /* the tool as pid 1 of a namespace, /proc still ours */
        if (unshare(CLONE_NEWPID))
            _exit(122);
        pid_t in = fork();
        if (in > 0) {
            int st;
            _exit(waitpid(in, &st, 0) == in && WIFEXITED(st) ? WEXITSTATUS(st) : 123);
        }
    }
    if (pid == 0) {
        char named[4200], *argv[8];
        if (!strncmp(name, "/proc/PID/", 10))
            snprintf(named, sizeof named, "/proc/%d/%s", (int)getpid(), name + 10);
        else
            snprintf(named, sizeof named, "%s", name);
        command(k, named, argv);
        int in = open("/dev/null", O_RDONLY), er = open(e, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (in < 0 || er < 0 || dup2(in, 0) < 0 || dup2(er, 2) < 0 || dup2(d, fd) < 0 ||
            fcntl(fd, F_SETFD, 0) < 0) /* dup2 onto itself keeps close-on-exec */
            _exit(120);
        execv(argv[0], argv);
        _exit(121);
    }
    int code = tu_code(tu_wait(pid));
    *err = tu_slurp(e);
    free(e);
    return code;
}

static int run_with_fd(size_t k, const char *name, int d, int fd, char **err)
{
    return run_with_fd_ns(k, name, d, fd, 0, err);
}

/* In a pid namespace whose /proc is the parent's (`unshare --pid --fork`),
 * /proc/self/fd/N is still the tool's own descriptor, though getpid()
 * there is not its pid in /proc: written through, the shell's file kept. */
START_TEST(own_descriptor_in_a_pid_namespace)
{
    make_trace();
    char *path = tu_path(dir, "shell.out");
    size_t len;
    char *want = reference(0, &len);
    ck_assert_ptr_nonnull(want);
    int d = shell_open(path, 1);
    char *err;
    int code = run_with_fd_ns(0, "/proc/self/fd/3", d, 3, 1, &err);
    close(d);
    if (code == 122) {
        fprintf(stderr, "outputs: own_descriptor_in_a_pid_namespace skipped: no pid namespace\n");
    } else {
        ck_assert_msg(code == 0, "%s: %d %s", what(0), code, err);
        char *whole = malloc(8 + len);
        memcpy(whole, "line1 5\n", 8);
        memcpy(whole + 8, want, len);
        same_bytes(0, path, whole, 8 + len);
        free(whole);
    }
    free(want), free(err), free(path);
}
END_TEST

/* -o naming one of the tool's own descriptors (/dev/stdout, /dev/fd/N,
 * /proc/self/fd/N, /proc/thread-self/fd/N, /proc/PID/fd/N, a link to
 * /dev/stdout) is written through it as > and >> would: a file opened
 * with >> keeps what it held, one opened with > keeps what was written
 * before and after, whatever the output (SQLite's and summarize's copied
 * in); never renamed over (`printf 'line1 5\n' > f; opprof export stacks
 * t -o /dev/stdout >> f` lost line1). */
START_TEST(own_descriptors_written_through)
{
    make_trace();
    char *link = tu_path(dir, "to-stdout"), *path = tu_path(dir, "shell.out");
    ck_assert_int_eq(symlink("/dev/stdout", link), 0);
    const struct {
        const char *name;
        int fd;
    } names[] = {{"/dev/stdout", 1},     {"/dev/fd/3", 3},
                 {"/proc/self/fd/3", 3}, {"/proc/thread-self/fd/3", 3},
                 {"/proc/PID/fd/3", 3},  {link, 1}};
    for (size_t k = 0; k < NOUT; k++) {
        size_t len;
        char *want = reference(k, &len);
        if (!want)
            continue;
        for (size_t i = 0; i < sizeof names / sizeof *names; i++)
            for (int append = 0; append < 2; append++) {
                int d = shell_open(path, append);
                struct stat before, after;
                ck_assert_int_eq(fstat(d, &before), 0);
                char *err;
                int code = run_with_fd(k, names[i].name, d, names[i].fd, &err);
                ck_assert_msg(code == 0, "%s -o %s: %d %s", what(k), names[i].name, code, err);
                ck_assert_msg(!strcmp(err, "") || !strcmp(outputs[k].argv[0], "summarize"), "%s",
                              err);
                if (!append)
                    ck_assert_int_eq(write(d, "footer\n", 7), 7);
                ck_assert_int_eq(fstat(d, &after), 0);
                ck_assert_int_eq(after.st_nlink, 1); /* still the file path names */
                ck_assert_int_eq(stat(path, &after), 0);
                ck_assert_uint_eq(after.st_ino, before.st_ino);
                close(d);
                const char *pre = append ? "line1 5\n" : "header\n";
                const char *post = append ? "" : "footer\n";
                size_t np = strlen(pre), nq = strlen(post);
                char *whole = malloc(np + len + nq);
                memcpy(whole, pre, np);
                memcpy(whole + np, want, len);
                memcpy(whole + np + len, post, nq);
                same_bytes(k, path, whole, np + len + nq);
                no_tmp_left(dir);
                free(whole), free(err);
            }
        free(want);
    }
    unlink(path);
    free(link), free(path);
}
END_TEST

/* A compressed output (OUT's name ends in .gz) through a descriptor: the
 * same gzip bytes as into a file, after what the file held. */
START_TEST(gz_through_a_descriptor)
{
    make_trace();
    size_t len;
    char *want = reference_as(0, "reference.json.gz", &len); /* chrome */
    ck_assert_int_eq(memcmp(want, "\x1f\x8b", 2), 0);
    char *link = tu_path(dir, "x.json.gz"), *path = tu_path(dir, "shell.out"), *err;
    ck_assert_int_eq(symlink("/dev/fd/3", link), 0);
    int d = shell_open(path, 1);
    ck_assert_int_eq(run_with_fd(0, link, d, 3, &err), 0);
    ck_assert_str_eq(err, "");
    close(d);
    char *whole = malloc(8 + len);
    memcpy(whole, "line1 5\n", 8);
    memcpy(whole + 8, want, len);
    same_bytes(0, path, whole, 8 + len);
    ck_assert_uint_eq(kind_of(link), S_IFLNK);
    free(whole), free(err), free(want), free(link), free(path);
}
END_TEST

/* A descriptor not open, or open only for reading, is refused in one
 * line (EBADF), for every output. */
START_TEST(own_descriptor_not_writable)
{
    make_trace();
    const char *names[] = {"/dev/fd/999", "/dev/stdin", "/proc/self/fd/0"};
    for (size_t k = 0; k < NOUT; k++)
        for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
            char *err, want[4400];
            snprintf(want, sizeof want, "opprof %s: cannot write %s: Bad file descriptor\n",
                     outputs[k].argv[0], names[i]);
            ck_assert_int_eq(write_to(k, names[i], &err), outputs[k].fails);
            ck_assert_str_eq(err, want);
            free(err);
        }
    ck_assert_int_eq(entries(dir), 2); /* the trace, stderr */
}
END_TEST

/* A write through a descriptor that fails midway (its file system fills)
 * leaves what it wrote, after what the file held: there is no temporary
 * file to keep OUT whole. A 64 KiB tmpfs with one page free (root only):
 * the file's own page and that one fill. */
START_TEST(own_descriptor_fails_midway)
{
    char blas[4200];
    snprintf(blas, sizeof blas, "%s/tests/corpus/traces/blas.trace", getenv("OPPROF_SRC"));
    char *full = tu_path(dir, "full");
    ck_assert_int_eq(mkdir(full, 0700), 0);
    if (mount("tmpfs", full, "tmpfs", 0, "size=64k") != 0) {
        fprintf(stderr, "outputs: own_descriptor_fails_midway skipped: cannot mount a tmpfs "
                        "(not root)\n");
        free(full);
        return;
    }
    char *fill = tu_path(full, "fill"), *path = tu_path(full, "shell.out");
    char *ref = tu_path(dir, "ref"), *op = (char *)tu_tool("opprof");
    struct {
        char *argv[7];
        int out;  /* OUT's index */
        size_t k; /* in outputs */
    } cmds[] = {
        {{op, "export", "html", blas, "-o", ref}, 5, 3}, /* streamed */
        {{op, "summarize", blas, "-o", ref}, 4, 6},      /* made in TMPDIR, copied */
    };
    for (size_t c = 0; c < 2; c++) {
        char **argv = cmds[c].argv, *e = tu_path(dir, "stderr");
        ck_assert_int_eq(tu_code(tu_run(argv, NULL, NULL, e)), 0);
        char *want = tu_slurp(ref);
        struct stat st;
        ck_assert_int_eq(stat(ref, &st), 0);
        ck_assert_int_gt(st.st_size, 8192);
        int d = shell_open(path, 1);
        FILE *f = fopen(fill, "w");
        ck_assert_ptr_nonnull(f);
        char page[4096] = {0};
        while (fwrite(page, 1, sizeof page, f) == sizeof page && fflush(f) == 0)
            ;
        fclose(f);
        ck_assert_int_eq(stat(fill, &st), 0);
        ck_assert_int_eq(truncate(fill, st.st_size - 4096), 0);
        argv[cmds[c].out] = "/dev/stdout";
        pid_t pid = fork();
        if (pid == 0) {
            int er = open(e, O_WRONLY | O_CREAT | O_TRUNC, 0644);
            if (er < 0 || dup2(er, 2) < 0 || dup2(d, 1) < 0)
                _exit(120);
            execv(argv[0], argv);
            _exit(121);
        }
        ck_assert_int_eq(tu_code(tu_wait(pid)), 1);
        close(d);
        char *err = tu_slurp(e), said[128];
        snprintf(said, sizeof said,
                 "opprof %s: cannot write /dev/stdout: No space left on device\n", argv[1]);
        ck_assert_str_eq(err, said);
        char *whole = malloc(8192);
        memcpy(whole, "line1 5\n", 8);
        memcpy(whole + 8, want, 8192 - 8);
        same_bytes(cmds[c].k, path, whole, 8192);
        ck_assert_int_eq(entries(full), 2); /* the fill, the file */
        unlink(fill), unlink(path), unlink(ref);
        free(whole), free(err), free(want), free(e);
    }
    ck_assert_int_eq(umount(full), 0);
    free(fill), free(path), free(full), free(ref);
}
END_TEST

/* A regular file replaced keeps its mode, and its owner and group where
 * the tool may set them (as root: a file of user nobody, set-ID bits
 * and all), for every output. */
START_TEST(replacement_keeps_mode_and_owner)
{
    make_trace();
    char *out = tu_path(dir, "kept.out");
    int root = geteuid() == 0;
    const mode_t modes[] = {0604, 0600, 06640};
    for (size_t k = 0; k < NOUT; k++) {
        size_t len;
        char *want = reference(k, &len), *err;
        if (!want)
            continue;
        for (size_t m = 0; m < (root ? 3u : 2u); m++) {
            FILE *f = fopen(out, "w");
            fputs("an older file\n", f);
            fclose(f);
            if (root)
                ck_assert_int_eq(chown(out, 65534, 65534), 0);
            ck_assert_int_eq(chmod(out, modes[m]), 0);
            ck_assert_int_eq(write_to(k, out, &err), 0);
            same_bytes(k, out, want, len);
            struct stat st;
            ck_assert_int_eq(stat(out, &st), 0);
            ck_assert_msg((st.st_mode & 07777) == modes[m], "%s: mode %o, not %o", what(k),
                          st.st_mode & 07777, modes[m]);
            ck_assert_uint_eq(st.st_uid, root ? 65534 : geteuid());
            ck_assert_uint_eq(st.st_gid, root ? 65534 : getegid());
            no_tmp_left(dir);
            free(err);
        }
        unlink(out);
        free(want);
    }
    free(out);
}
END_TEST

/* The trace, made for a test that runs outputs as user nobody: it reads
 * it, and writes its stderr in the test's directory. */
static void make_trace_for_nobody(void)
{
    make_trace();
    ck_assert_int_eq(chmod(dir, 0777), 0);
    ck_assert_int_eq(chmod(trace, 0644), 0);
}

/* Output k to out run as user nobody (stderr to e): its exit code, or -2
 * when the test cannot run as nobody (said: test skips the rest). */
static int output_as_nobody(size_t k, const char *out, const char *e, const char *test)
{
    char *argv[8];
    command(k, out, argv);
    int code = run_unprivileged(argv, e);
    if (code == -2)
        fprintf(stderr, "outputs: %s skipped: cannot run %s as user nobody\n", test, argv[0]);
    return code;
}

/* Output k to out run as user nobody (stderr to e): refused in one line,
 * "cannot write OUT: Permission denied", with its exit status. 0 when
 * the test cannot run as nobody (said: test skips the rest). */
static int refused_unprivileged(size_t k, const char *out, const char *e, const char *test)
{
    int code = output_as_nobody(k, out, e, test);
    if (code == -2)
        return 0;
    char *err = tu_slurp(e), want[4400];
    snprintf(want, sizeof want, "opprof %s: cannot write %s: Permission denied\n",
             outputs[k].argv[0], out);
    ck_assert_msg(code == outputs[k].fails && !strcmp(err, want), "%s: %d %s", what(k), code, err);
    free(err);
    return 1;
}

/* A regular file the user may not write (root's, 0444, in a directory
 * anyone writes in) is refused as > would refuse it, and left as it was,
 * for every output. Run as nobody when root, else as ourselves (0444 is
 * not ours to write either). */
START_TEST(unwritable_file_refused)
{
    make_trace_for_nobody();
    char *out = tu_path(dir, "ro.out"), *e = tu_path(dir, "stderr");
    FILE *f = fopen(out, "w");
    fputs("not yours\n", f);
    fclose(f);
    ck_assert_int_eq(chmod(out, 0444), 0);
    for (size_t k = 0; k < NOUT && refused_unprivileged(k, out, e, "unwritable_file_refused");
         k++) {
        same_bytes(k, out, "not yours\n", 10);
        struct stat st;
        ck_assert_int_eq(stat(out, &st), 0);
        ck_assert_uint_eq(st.st_mode & 07777, 0444);
        ck_assert_uint_eq(st.st_uid, geteuid());
        ck_assert_int_eq(entries(dir), 3); /* the trace, the file, stderr */
    }
    free(out), free(e);
}
END_TEST

/* A directory we may not write in: refused, nothing made there. */
START_TEST(read_only_directory_refused)
{
    make_trace_for_nobody();
    char *ro = tu_path(dir, "ro"), *out = tu_path(ro, "x.out"), *e = tu_path(dir, "stderr");
    ck_assert_int_eq(mkdir(ro, 0555), 0);
    for (size_t k = 0; k < NOUT && refused_unprivileged(k, out, e, "read_only_directory_refused");
         k++)
        ck_assert_int_eq(entries(ro), 0);
    free(ro), free(out), free(e);
}
END_TEST

/* A file we may write in a directory we may not (no room for a file
 * beside it): written in place, the same file (its inode, mode and
 * owner), nothing else made there; left as it was, byte for byte, by a
 * command that fails (an empty trace). */
START_TEST(writable_file_in_read_only_directory)
{
    make_trace_for_nobody();
    char *ro = tu_path(dir, "ro"), *out = tu_path(ro, "w.out"), *e = tu_path(dir, "stderr");
    char *empty = tu_path(dir, "empty.trace");
    ck_assert_int_eq(mkdir(ro, 0755), 0);
    fclose(fopen(empty, "w"));
    ck_assert_int_eq(chmod(empty, 0644), 0);
    for (size_t k = 0; k < NOUT; k++) {
        size_t len;
        char *want = reference(k, &len);
        if (!want)
            continue;
        FILE *f = fopen(out, "w");
        fputs("old contents, longer than none of the outputs\n", f);
        fclose(f);
        ck_assert_int_eq(chmod(out, 0666), 0);
        struct stat before, after;
        ck_assert_int_eq(stat(out, &before), 0);
        int code = output_as_nobody(k, out, e, "writable_file_in_read_only_directory");
        if (code == -2) {
            free(want);
            break;
        }
        char *err = tu_slurp(e);
        ck_assert_msg(code == 0, "%s: %d %s", what(k), code, err);
        same_bytes(k, out, want, len);
        ck_assert_int_eq(stat(out, &after), 0);
        ck_assert_uint_eq(after.st_ino, before.st_ino);
        ck_assert_uint_eq(after.st_mode & 07777, 0666);
        ck_assert_uint_eq(after.st_uid, before.st_uid);
        ck_assert_int_eq(entries(ro), 1);
        char *bad[8];
        command_from(k, empty, out, bad);
        ck_assert_int_eq(run_unprivileged(bad, e), empty_fails[k]);
        same_bytes(k, out, want, len);
        ck_assert_int_eq(stat(out, &after), 0);
        ck_assert_uint_eq(after.st_ino, before.st_ino);
        ck_assert_int_eq(entries(ro), 1);
        free(err), free(want);
    }
    free(ro), free(out), free(e), free(empty);
}
END_TEST

/* `opprof run -o OUT -- touch MARKER` as ourselves (unprivileged: as
 * nobody when root): its exit code, stderr into *err; MARKER must not be
 * made. -2 when it cannot run as nobody. */
static int run_to(const char *out, int unprivileged, char **err)
{
    char *marker = tu_path(dir, "marker"), *e = tu_path(dir, "stderr");
    char *argv[] = {
        (char *)tu_tool("opprof"), "run", "-q", "-o", (char *)out, "--", "touch", marker, NULL};
    int code = unprivileged ? run_unprivileged(argv, e) : tu_code(tu_run(argv, NULL, NULL, e));
    *err = tu_slurp(e);
    ck_assert_msg(access(marker, F_OK) == -1, "CMD ran with -o %s", out);
    free(marker), free(e);
    return code;
}

/* `opprof run` refuses a trace path it cannot write before CMD starts:
 * one line, exit 2, as other bad arguments, and OUT as it was. */
START_TEST(run_refuses_bad_outputs)
{
    char *fifo = tu_path(dir, "fifo"), *sub = tu_path(dir, "sub");
    char *nowhere = tu_path(dir, "no/such/t.trace"), *notes = tu_path(dir, "notes.txt");
    ck_assert_int_eq(mkfifo(fifo, 0600), 0);
    ck_assert_int_eq(mkdir(sub, 0755), 0);
    FILE *f = fopen(notes, "w");
    fputs("notes, not a trace\n", f);
    fclose(f);
    /* a trace another collector is writing: its writer's lock held */
    char *busy = tu_path(dir, "busy.trace");
    int held = open(busy, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    ck_assert_int_ge(held, 0);
    ck_assert_int_eq(flock(held, LOCK_EX | LOCK_NB), 0);
    const char *outs[] = {fifo, sub, nowhere, notes, "", busy};
    const char *why[][2] = {{"refusing to write the trace to ", ": not a regular file"},
                            {"cannot create ", ": Is a directory"},
                            {"cannot create ", ": No such file or directory"},
                            {"refusing to overwrite ", ": it is not an opprof trace"},
                            {"--output wants FILE, not ''", ""},
                            {"", " is being written by another collector"}};
    for (int i = 0; i < 6; i++) {
        char *err, want[4400];
        snprintf(want, sizeof want, "opprof run: %s%s%s\n", why[i][0], outs[i], why[i][1]);
        ck_assert_int_eq(run_to(outs[i], 0, &err), 2);
        ck_assert_str_eq(err, want);
        free(err);
    }
    ck_assert_uint_eq(kind_of(fifo), S_IFIFO);
    ck_assert_int_eq(entries(sub), 0);
    char *text = tu_slurp(notes);
    ck_assert_str_eq(text, "notes, not a trace\n");
    free(text);
    struct stat st;
    ck_assert_int_eq(fstat(held, &st), 0);
    ck_assert_int_eq(st.st_size, 0); /* the writer's file untouched */
    close(held);
    free(busy);

    /* a directory we may not write in (root may: as nobody) */
    char *ro = tu_path(dir, "ro"), *in_ro = tu_path(ro, "t.trace"), *err;
    ck_assert_int_eq(mkdir(ro, 0555), 0);
    ck_assert_int_eq(chmod(dir, 0777), 0);
    int code = run_to(in_ro, 1, &err);
    if (code == -2) {
        fprintf(stderr, "outputs: run_refuses_bad_outputs: the read-only directory skipped: "
                        "cannot run opprof as user nobody\n");
    } else {
        char want[4400];
        snprintf(want, sizeof want, "opprof run: cannot create %s: Permission denied\n", in_ro);
        ck_assert_int_eq(code, 2);
        ck_assert_str_eq(err, want);
        ck_assert_int_eq(entries(ro), 0);
    }
    free(err), free(ro), free(in_ro);
    free(fifo), free(sub), free(nowhere), free(notes);
}
END_TEST

/* `opprof run -o T -- CMD` with a CMD that cannot run: T, a trace
 * already, is left as it was (the collector that empties it never
 * starts): a directory, a script whose "#!" names no interpreter that
 * runs (a CRLF line end's "/bin/sh\r"), a "#!" naming a script whose own
 * interpreter is missing (execve looks through it: that one named); said
 * as a shell says it, with its exit code. */
START_TEST(run_keeps_trace_when_cmd_cannot_run)
{
    make_trace();
    FILE *f = fopen(trace, "rb");
    ck_assert_ptr_nonnull(f);
    char before[1 << 16];
    size_t len = fread(before, 1, sizeof before, f);
    fclose(f);
    ck_assert_uint_gt(len, 0);
    char *sub = tu_path(dir, "cmd.d"), *crlf = tu_path(dir, "crlf.sh"),
         *outer = tu_path(dir, "outer.sh"), *inner = tu_path(dir, "inner.sh"),
         *missing = tu_path(dir, "no-such-sh");
    ck_assert_int_eq(mkdir(sub, 0755), 0);
    char outer_body[4200], inner_body[4200], nested_why[4400];
    snprintf(outer_body, sizeof outer_body, "#!%s\necho ran\n", inner);
    snprintf(inner_body, sizeof inner_body, "#!%s\n", missing);
    snprintf(nested_why, sizeof nested_why, "bad interpreter '%s': No such file or directory",
             missing);
    const char *body[] = {"#!/bin/sh\r\necho ran\n", outer_body, inner_body};
    char *scripts[] = {crlf, outer, inner};
    for (int i = 0; i < 3; i++) {
        f = fopen(scripts[i], "w");
        ck_assert_ptr_nonnull(f);
        fputs(body[i], f);
        fclose(f);
        ck_assert_int_eq(chmod(scripts[i], 0755), 0);
    }
    const struct {
        char *cmd;
        int code;
        const char *why;
    } cases[] = {
        {sub, 126, "Is a directory"},
        {crlf, 127, "bad interpreter '/bin/sh\\r': No such file or directory"},
        {outer, 127, nested_why},
    };
    char *e = tu_path(dir, "stderr");
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char *argv[] = {
            (char *)tu_tool("opprof"), "run", "-q", "-o", trace, "--", cases[i].cmd, NULL};
        ck_assert_int_eq(tu_code(tu_run(argv, NULL, NULL, e)), cases[i].code);
        char *err = tu_slurp(e), want[4400];
        snprintf(want, sizeof want, "opprof run: cannot run %s: %s\n", cases[i].cmd, cases[i].why);
        ck_assert_str_eq(err, want);
        free(err);
        f = fopen(trace, "rb");
        ck_assert_msg(f != NULL, "%s: the trace is gone", cases[i].cmd);
        char after[1 << 16];
        size_t n = fread(after, 1, sizeof after, f);
        fclose(f);
        ck_assert_msg(n == len && !memcmp(before, after, len), "%s: the trace changed",
                      cases[i].cmd);
    }
    free(e), free(sub), free(crlf), free(outer), free(inner), free(missing);
}
END_TEST

/* A CMD execve takes for no format (ENOEXEC: a script without "#!", one
 * whose "#!" names nothing) is run by /bin/sh, as execvp and a shell run
 * it, by its path or found on PATH: its output, its arguments, its exit
 * code, and the trace written; a binary one is not (as a shell says). */
START_TEST(run_gives_cmd_of_no_format_to_sh)
{
    char *bin = tu_path(dir, "bin"), *plain = tu_path(dir, "bin/plain"),
         *empty = tu_path(dir, "bin/empty"), *o = tu_path(dir, "stdout"),
         *e = tu_path(dir, "stderr");
    ck_assert_int_eq(mkdir(bin, 0755), 0);
    const char *body[] = {"echo ran \"$1\"\nexit 3\n", "#!\necho ran \"$1\"\nexit 3\n"};
    char *scripts[] = {plain, empty};
    for (int i = 0; i < 2; i++) {
        FILE *f = fopen(scripts[i], "w");
        ck_assert_ptr_nonnull(f);
        fputs(body[i], f);
        fclose(f);
        ck_assert_int_eq(chmod(scripts[i], 0755), 0);
    }
    char path_env[4300];
    snprintf(path_env, sizeof path_env, "PATH=%s:%s", bin, getenv("PATH") ? getenv("PATH") : "");
    char *env[] = {path_env, NULL};
    char *cmds[] = {plain, empty, "plain", "empty"};
    for (int i = 0; i < 4; i++) {
        unlink(trace);
        char *argv[] = {
            (char *)tu_tool("opprof"), "run", "-q", "-o", trace, "--", cmds[i], "an arg", NULL};
        ck_assert_int_eq(tu_code(tu_run(argv, env, o, e)), 3);
        char *out = tu_slurp(o), *err = tu_slurp(e), want[4400];
        ck_assert_str_eq(out, "ran an arg\n");
        snprintf(want, sizeof want, "opprof: trace written to %s (0 events)\n", trace);
        ck_assert_str_eq(err, want); /* /bin/sh calls nothing opprof intercepts */
        struct opp_model *m = tu_load(trace);
        ck_assert_ptr_nonnull(m);
        ck_assert(m->sum.complete);
        opp_model_free(m);
        free(out), free(err);
    }
    /* a binary (a NUL in its first line) is no script: a shell refuses it */
    char *nul = tu_path(dir, "bin/nul");
    FILE *f = fopen(nul, "w");
    ck_assert_ptr_nonnull(f);
    fwrite("echo x\0\n", 1, 8, f);
    fclose(f);
    ck_assert_int_eq(chmod(nul, 0755), 0);
    char *argv[] = {(char *)tu_tool("opprof"), "run", "-q", "-o", trace, "--", nul, NULL};
    ck_assert_int_eq(tu_code(tu_run(argv, env, o, e)), 126);
    char *out = tu_slurp(o), *err = tu_slurp(e), want[4400];
    ck_assert_str_eq(out, "");
    snprintf(want, sizeof want,
             "opprof run: cannot run %s: Exec format error\n"
             "opprof run: nothing was recorded (no process connected): %s left as it was\n",
             nul, trace); /* the last script's trace, kept */
    ck_assert_str_eq(err, want);
    free(out), free(err), free(nul);
    free(bin), free(plain), free(empty), free(o), free(e);
}
END_TEST

/* The bytes of path into buf (cap): how many, or -1. */
static long slurp_bytes(const char *path, char *buf, size_t cap)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    size_t n = fread(buf, 1, cap, f);
    fclose(f);
    return (long)n;
}

/* A copy of /bin/true at path, patched: machine set, its ELF header's
 * e_machine made ARM's (execve: ENOEXEC); else its PT_INTERP's loader
 * made one that is not there (execve: ENOENT). */
static void patched_true(const char *path, int machine)
{
    static char elf[1 << 22];
    FILE *f = fopen("/bin/true", "rb");
    ck_assert_ptr_nonnull(f);
    size_t n = fread(elf, 1, sizeof elf, f);
    fclose(f);
    ck_assert_uint_gt(n, 64);
    ck_assert_int_eq(elf[4], 2); /* ELFCLASS64 */
    if (machine) {
        elf[18] = 40, elf[19] = 0; /* EM_ARM */
    } else {
        uint64_t phoff;
        uint16_t phentsize, phnum;
        memcpy(&phoff, elf + 32, 8);
        memcpy(&phentsize, elf + 54, 2);
        memcpy(&phnum, elf + 56, 2);
        int found = 0;
        for (uint16_t i = 0; i < phnum && !found; i++) {
            const char *ph = elf + phoff + (size_t)i * phentsize;
            uint32_t type;
            uint64_t off, size;
            memcpy(&type, ph, 4);
            memcpy(&off, ph + 8, 8);
            memcpy(&size, ph + 32, 8);
            if (type == 3 && size > 2 && off + size <= n) { /* PT_INTERP */
                elf[off + size - 2] = 'X';                  /* before its NUL */
                found = 1;
            }
        }
        ck_assert_msg(found, "/bin/true has no PT_INTERP");
    }
    f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(elf, 1, n, f), n);
    fclose(f);
    ck_assert_int_eq(chmod(path, 0755), 0);
}

/* `opprof run -o T -- CMD` where no process of the run connects: CMD
 * passes the checks but execve refuses it (an ELF for another machine,
 * one whose loader is missing), or it dies before it connects (the agent
 * off, OPPROF_DISABLE=1): T, a trace already, is left byte for byte as it
 * was (the collector replaces it at the first hello), said in one line,
 * the exit code a shell gives. */
START_TEST(run_keeps_trace_when_nothing_recorded)
{
    make_trace();
    static char before[1 << 16], after[1 << 16];
    long len = slurp_bytes(trace, before, sizeof before);
    ck_assert_int_gt(len, 0);
    char *arm = tu_path(dir, "arm"), *noloader = tu_path(dir, "noloader");
    patched_true(arm, 1);
    patched_true(noloader, 0);
    char *const off[] = {"OPPROF_DISABLE=1", NULL};
    const struct {
        char *cmd[4];
        char *const *env;
        int code;
        const char *said; /* before the line said of T */
    } cases[] = {
        {{arm}, NULL, 126, "Exec format error"},
        {{noloader}, NULL, 127, "No such file or directory"},
        {{"/bin/sh", "-c", "kill -9 $$"}, off, 137, NULL},
    };
    char *e = tu_path(dir, "stderr");
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char *argv[10] = {(char *)tu_tool("opprof"), "run", "-o", trace, "--"};
        for (int k = 0; k < 4 && cases[i].cmd[k]; k++)
            argv[5 + k] = cases[i].cmd[k];
        ck_assert_int_eq(tu_code(tu_run(argv, cases[i].env, NULL, e)), cases[i].code);
        char *err = tu_slurp(e), want[9000] = "";
        if (cases[i].said)
            snprintf(want, sizeof want, "opprof run: cannot run %s: %s\n", cases[i].cmd[0],
                     cases[i].said);
        snprintf(want + strlen(want), sizeof want - strlen(want),
                 "opprof run: nothing was recorded (no process connected): %s left as it was\n",
                 trace);
        ck_assert_str_eq(err, want);
        free(err);
        long n = slurp_bytes(trace, after, sizeof after);
        ck_assert_msg(n == len && !memcmp(before, after, (size_t)len), "%s: the trace changed",
                      cases[i].cmd[0]);
    }
    /* a run that records replaces it */
    char *argv[] = {(char *)tu_tool("opprof"), "run", "-q", "-o", trace, "--", "/bin/true", NULL};
    ck_assert_int_eq(tu_code(tu_run(argv, NULL, NULL, e)), 0);
    char *err = tu_slurp(e), want[4200];
    snprintf(want, sizeof want, "opprof: trace written to %s (0 events)\n", trace);
    ck_assert_str_eq(err, want);
    free(err);
    struct opp_model *m = tu_load(trace);
    ck_assert_ptr_nonnull(m);
    ck_assert_uint_eq(m->nprocs, 1);
    const char *exe = m->procs[0].exe; /* /usr/bin/true where /bin is /usr/bin */
    ck_assert_msg(strlen(exe) > 9 && !strcmp(exe + strlen(exe) - 9, "/bin/true"), "%s", exe);
    opp_model_free(m);
    free(e), free(arm), free(noloader);
}
END_TEST

/* `opprof run -o T` whose collector is killed (SIGKILL) before any
 * process connected: T, a trace already, is as it was, and is said to be
 * (not "holds what it wrote before": it wrote nothing, T is another run's).
 * CMD, not preloaded (OPPROF_DISABLE=1), kills its sibling collector. */
START_TEST(run_says_trace_kept_when_collector_killed_before_hello)
{
    make_trace();
    static char before[1 << 16], after[1 << 16];
    long len = slurp_bytes(trace, before, sizeof before);
    ck_assert_int_gt(len, 0);
    char *const off[] = {"OPPROF_DISABLE=1", NULL};
    char *e = tu_path(dir, "stderr");
    char *argv[] = {(char *)tu_tool("opprof"),
                    "run",
                    "-o",
                    trace,
                    "--",
                    "/bin/sh",
                    "-c",
                    "for d in /proc/[0-9]*; do read -r c < $d/comm 2>/dev/null || continue; "
                    "case $c in opprof-collect*) set -- $(cat $d/stat); "
                    "[ \"$4\" = \"$PPID\" ] && kill -9 ${d#/proc/};; esac; done; exit 3",
                    NULL};
    ck_assert_int_eq(tu_code(tu_run(argv, off, NULL, e)), 3);
    char *err = tu_slurp(e), want[4200];
    snprintf(want, sizeof want,
             "opprof run: the collector was killed before any process connected: "
             "%s left as it was\n",
             trace);
    ck_assert_str_eq(err, want);
    free(err);
    long n = slurp_bytes(trace, after, sizeof after);
    ck_assert_msg(n == len && !memcmp(before, after, (size_t)len), "the trace changed");
    free(e);
}
END_TEST

/* A complete trace a collector holds (its lock, as a collector that has
 * not had its first hello holds the trace it found): `opprof report`
 * reads it and says whose it may be; not held, it says nothing of it. */
START_TEST(report_says_held_complete_trace_may_be_replaced)
{
    make_trace();
    char *const now[] = {"OPPROF_WAIT_MS=0", NULL};
    char *o = tu_path(dir, "stdout"), *e = tu_path(dir, "stderr");
    char *argv[] = {(char *)tu_tool("opprof"), "report", trace, NULL};
    int held = open(trace, O_RDONLY | O_CLOEXEC);
    ck_assert_int_ge(held, 0);
    ck_assert_int_eq(flock(held, LOCK_EX | LOCK_NB), 0);
    ck_assert_int_eq(tu_code(tu_run(argv, now, o, e)), 0);
    char *err = tu_slurp(e), want[4400];
    snprintf(want, sizeof want,
             "opprof report: warning: a collector holds %s: this complete trace is the one "
             "it found there (replaced when a process of its run connects) or one it has "
             "just finished\n",
             trace);
    ck_assert_str_eq(err, want);
    free(err);
    close(held);
    ck_assert_int_eq(tu_code(tu_run(argv, now, o, e)), 0);
    err = tu_slurp(e);
    ck_assert_str_eq(err, "");
    free(err), free(o), free(e);
}
END_TEST

/* The preload's own collector (a plain LD_PRELOAD run: --root-pid, as
 * the first process starts it) that no process connects to leaves a
 * trace at its output as it was, and says so. */
START_TEST(preload_collector_keeps_trace_when_nothing_recorded)
{
    make_trace();
    static char before[1 << 16], after[1 << 16];
    long len = slurp_bytes(trace, before, sizeof before);
    ck_assert_int_gt(len, 0);
    pid_t gone = fork();
    ck_assert_int_ge(gone, 0);
    if (!gone)
        _exit(0);
    ck_assert_int_eq(waitpid(gone, NULL, 0), gone);
    char *sock = tu_path(dir, "c.sock"), *e = tu_path(dir, "stderr"), root[24];
    snprintf(root, sizeof root, "%d", (int)gone);
    char *argv[] = {(char *)tu_tool("opprof-collector"),
                    "--socket",
                    sock,
                    "--output",
                    trace,
                    "--root-pid",
                    root,
                    "--idle-exit-ms",
                    "100",
                    NULL};
    ck_assert_int_eq(tu_code(tu_run(argv, NULL, NULL, e)), 0);
    char *err = tu_slurp(e), want[4200];
    snprintf(want, sizeof want,
             "opprof: nothing was recorded (no process connected): %s left as it was\n", trace);
    ck_assert_str_eq(err, want);
    free(err);
    long n = slurp_bytes(trace, after, sizeof after);
    ck_assert_msg(n == len && !memcmp(before, after, (size_t)len), "the trace changed");
    free(sock), free(e);
}
END_TEST

/* A trace a collector is still writing (its writer's lock held, as
 * `opprof run` refuses it): no output replaces it, which would leave the
 * collector writing a file no name reaches; exit 1, one line, the file as
 * it was, no temporary file. */
START_TEST(trace_being_written_refused)
{
    make_trace();
    char *busy = tu_path(dir, "busy.trace");
    int held = open(busy, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    ck_assert_int_ge(held, 0);
    ck_assert_int_eq(write(held, "being written", 13), 13);
    ck_assert_int_eq(flock(held, LOCK_EX | LOCK_NB), 0);
    for (size_t k = 0; k < NOUT; k++) {
        char *err, want[4400];
        snprintf(want, sizeof want, "opprof %s: %s is being written by another collector\n",
                 outputs[k].argv[0], busy);
        ck_assert_int_eq(write_to(k, busy, &err), outputs[k].fails);
        ck_assert_str_eq(err, want);
        same_bytes(k, busy, "being written", 13);
        no_tmp_left(dir);
        free(err);
    }
    struct stat by_name, by_fd;
    ck_assert_int_eq(stat(busy, &by_name), 0);
    ck_assert_int_eq(fstat(held, &by_fd), 0);
    ck_assert_uint_eq(by_name.st_ino, by_fd.st_ino); /* the writer's file still has the name */
    close(held);
    free(busy);
}
END_TEST

Suite *suite_outputs(void)
{
    Suite *s = suite_create("outputs");
    TCase *tc = tcase_create("targets");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, missing_and_regular_files);
    tcase_add_test(tc, hard_linked_file_written_in_place);
    tcase_add_test(tc, hard_linked_file_kept_when_failing);
    tcase_add_test(tc, killed_export_leaves_nothing);
    tcase_add_test(tc, killed_in_place_export_leaves_nothing);
    tcase_add_test(tc, symlinks_written_through);
    tcase_add_test(tc, fifo_with_a_reader);
    tcase_add_test(tc, device_stays_a_device);
    tcase_add_test(tc, dev_full_says_so);
    tcase_add_test(tc, stdout_full_says_so);
    tcase_add_test(tc, own_options_take_no_word);
    tcase_add_test(tc, directory_refused);
    tcase_add_test(tc, summarize_full_disk_names_out);
    tcase_add_test(tc, hard_linked_file_kept_when_no_room);
    tcase_add_test(tc, read_only_directory_refused);
    tcase_add_test(tc, writable_file_in_read_only_directory);
    tcase_add_test(tc, run_refuses_bad_outputs);
    tcase_add_test(tc, trace_being_written_refused);
    tcase_add_test(tc, run_keeps_trace_when_cmd_cannot_run);
    tcase_add_test(tc, run_gives_cmd_of_no_format_to_sh);
    tcase_add_test(tc, run_keeps_trace_when_nothing_recorded);
    tcase_add_test(tc, report_says_held_complete_trace_may_be_replaced);
    tcase_add_test(tc, run_says_trace_kept_when_collector_killed_before_hello);
    tcase_add_test(tc, preload_collector_keeps_trace_when_nothing_recorded);
    tcase_add_test(tc, output_given_twice_or_empty);
    tcase_add_test(tc, own_descriptors_written_through);
    tcase_add_test(tc, own_descriptor_in_a_pid_namespace);
    tcase_add_test(tc, gz_through_a_descriptor);
    tcase_add_test(tc, own_descriptor_not_writable);
    tcase_add_test(tc, own_descriptor_fails_midway);
    tcase_add_test(tc, replacement_keeps_mode_and_owner);
    tcase_add_test(tc, unwritable_file_refused);
    suite_add_tcase(s, tc);
    return s;
}
