/* Where a command writes its output (-o OUT, or standard output), so that
 * OUT is never destroyed, whatever it is:
 *   - one of the tool's own open descriptors (/dev/stdout, /dev/stderr,
 *     /dev/fd/N, /proc/self/fd/N, /proc/PID/fd/N with the tool's pid, or
 *     a link to one): written through that descriptor as the output
 *     streams, where its offset is (appending when it appends), as the
 *     shell's > and >> would; never renamed over, never truncated (a
 *     failed write leaves what was written);
 *   - a regular file, or none: written under a temporary name beside it and
 *     renamed over it when complete (a failed write leaves it as it was);
 *     an existing one must be writable by us (access W_OK, as > would
 *     refuse it) and gives the new one its mode, and its owner and group
 *     where we may set them; one in a directory that takes no new file
 *     (no room for the temporary one), or one with several names (hard
 *     links, which a rename would part: the others would keep the old
 *     content), is made whole in TMPDIR first and only then copied over
 *     it in place (its inode kept: every name holds the new content), room
 *     for it reserved first: a failed command, a full TMPDIR or disk
 *     leave it as it was;
 *   - a symbolic link: followed to what it names (made if missing), under
 *     these same rules; the link stays;
 *   - a character or block device, or a FIFO: written directly as the
 *     output streams, its write errors said (ENOSPC on /dev/full);
 *   - a directory, a socket, a trace a collector is still writing (its
 *     writer's lock held: opp_tw_busy): refused.
 * A temporary file is removed when SIGINT, SIGTERM, SIGHUP or SIGQUIT ends
 * the tool while it writes (the signal then ends it as it would have; one
 * that comes while a file is copied over in place waits for the copy).
 * Every export and `opprof summarize` goes through it. */
#ifndef OPP_TOOL_OUTFILE_H
#define OPP_TOOL_OUTFILE_H

#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

struct opp_out_sink;

struct opp_out {
    const char *name; /* OUT as given, for messages; NULL: standard output */
    char *target;     /* OUT with its symbolic links followed */
    char *tmp;        /* the temporary file, renamed onto target (or copied into fd) */
    const char *path; /* opp_out_open_path: the regular file the writer makes */
    int fd;           /* a descriptor of ours, a device or FIFO, written directly; else -1 */
    int in_place;     /* fd is a regular file's instead, written over once complete */
    int tmp_fd;       /* on the temporary file beside target, for its mode; else -1 */
    int replaces;     /* target exists, a regular file: the new one takes these three of it */
    mode_t mode;      /* its permissions, set-ID and sticky bits */
    uid_t uid;        /* its owner */
    gid_t gid;        /* its group */
    FILE *f;          /* opp_out_open: what the writer streams into */
    struct opp_out_sink *sink;
};

/* OUT (NULL: standard output) for a writer that streams into o->f;
 * gz: compressed with gzip on the way. None of the n inputs may be OUT.
 * 0; -2 when OUT is one of the inputs, -1 when it cannot be written; err
 * says why. */
int opp_out_open(struct opp_out *o, const char *out, int gz, const char *const *inputs, size_t n,
                 char *err, size_t errlen);

/* OUT for a writer that makes its own file by name (SQLite, a trace that
 * is rewritten in place): o->path, a regular file it writes in place (NULL
 * when OUT is). For a descriptor of ours, a device or FIFO, or a file
 * written in place, that file is made in TMPDIR and its bytes copied into
 * OUT once complete. Returns as opp_out_open. */
int opp_out_open_path(struct opp_out *o, const char *out, const char *const *inputs, size_t n,
                      char *err, size_t errlen);

/* The end of the output: ok, it is complete: into place (renamed, or
 * copied into the device); else the temporary file removed. 0, or -1 with
 * err: a write error (the first one) says so over what err held. */
int opp_out_close(struct opp_out *o, int ok, char *err, size_t errlen);

#endif
