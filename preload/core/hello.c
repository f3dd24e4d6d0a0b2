/* The hello: who this process is (pid, command line, clock, the labels
 * launchers set) and what it intercepts (the function table), the first
 * messages on a new connection to the collector. */
#include "core/conn.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "info.h"
#include "proto.h"

/* The process's labels: the host, and the rank variables that launchers
 * set (torchrun, mpirun, srun, PMI), as they are; the report picks the rank
 * from them. Values a label cannot hold (too long, not printable) are left
 * out. */
static int send_info(int sock, uint8_t *msg)
{
    static const char *const vars[] = OPP_INFO_SENT_KEYS;
    struct opp_wbuf b;
    opp_wbuf_init(&b, msg, OPP_MSG_MAX);
    uint32_t n = 0;
    opp_put_u32(&b, 0);
    char host[256];
    if (gethostname(host, sizeof host) == 0) {
        host[sizeof host - 1] = 0;
        opp_put_str(&b, "host", 4);
        opp_put_str(&b, host, strlen(host));
        n++;
    }
    for (size_t i = 0; vars[i]; i++) {
        const char *v = getenv(vars[i]);
        size_t len = v ? strlen(v) : 0;
        int ok = v && len <= OPP_INFO_VALUE_MAX;
        for (size_t k = 0; ok && k < len; k++)
            ok = (unsigned char)v[k] >= 0x20 && (unsigned char)v[k] < 0x7f;
        if (!ok)
            continue;
        opp_put_str(&b, vars[i], strlen(vars[i]));
        opp_put_str(&b, v, len);
        n++;
    }
    memcpy(msg, &n, 4);
    return opp_send_msg(sock, OPP_MSG_INFO, msg, (uint32_t)b.len, -1);
}

int opp_hello(int sock, uint8_t *msg, int clock, const uint64_t *born)
{
    uint64_t start = born ? born[0] : opp_ticks(clock), start_real = born ? born[1] : opp_real_ns();
    struct opp_wbuf b;
    opp_wbuf_init(&b, msg, OPP_MSG_MAX);
    static char cmd[32768];
    ssize_t clen = opp_read_small("/proc/self/cmdline", cmd, sizeof cmd);
    if (clen < 0)
        clen = 0;
    uint32_t argc = 0;
    for (ssize_t i = 0; i < clen; i++)
        argc += cmd[i] == 0;
    if (clen && cmd[clen - 1] != 0) {
        cmd[clen++] = 0;
        argc++;
    }
    if (argc > OPP_MAX_ARGV) /* what a trace keeps (a glob of many files): the first ones */
        argc = OPP_MAX_ARGV;
    char exe[PATH_MAX];
    ssize_t elen = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (elen < 0)
        elen = 0;
    opp_put_u32(&b, (uint32_t)getpid());
    opp_put_u32(&b, (uint32_t)getppid());
    opp_put_u32(&b, (uint32_t)clock);
    opp_put_u32(&b, argc);
    opp_put_u64(&b, start);
    opp_put_u64(&b, start_real);
    opp_put_str(&b, exe, (size_t)elen);
    for (ssize_t i = 0, k = 0; k < argc; k++) {
        size_t n = strlen(cmd + i);
        opp_put_str(&b, cmd + i, n);
        i += (ssize_t)n + 1;
    }
    if (b.overflow) { /* a huge command line: keep the program name only */
        opp_wbuf_init(&b, msg, OPP_MSG_MAX);
        opp_put_u32(&b, (uint32_t)getpid());
        opp_put_u32(&b, (uint32_t)getppid());
        opp_put_u32(&b, (uint32_t)clock);
        opp_put_u32(&b, 1);
        opp_put_u64(&b, start);
        opp_put_u64(&b, start_real);
        opp_put_str(&b, exe, (size_t)elen);
        opp_put_str(&b, cmd, strnlen(cmd, 4096));
    }
    int rc = opp_send_msg(sock, OPP_MSG_HELLO, msg, (uint32_t)b.len, -1);
    if (!rc)
        rc = send_info(sock, msg);
    if (rc)
        return rc;
    /* The function table, in parts that each fit a message. */
    for (uint32_t first = 0; first < OPP_FN_COUNT;) {
        opp_wbuf_init(&b, msg, OPP_MSG_MAX);
        opp_put_u32(&b, OPP_FN_COUNT);
        opp_put_u32(&b, first);
        size_t count_at = b.len;
        opp_put_u32(&b, 0);
        uint32_t n = 0;
        while (first + n < OPP_FN_COUNT) {
            const struct opp_fn_info *f = &opp_fn_info[first + n];
            size_t mark = b.len;
            opp_put_u32(&b, f->kind);
            opp_put_u32(&b, f->dtype);
            opp_put_str(&b, f->lib, strlen(f->lib));
            opp_put_str(&b, f->name, strlen(f->name));
            if (b.overflow) {
                b.len = mark;
                b.overflow = 0;
                break;
            }
            n++;
        }
        if (!n)
            return -EMSGSIZE;
        memcpy(msg + count_at, &n, 4);
        rc = opp_send_msg(sock, OPP_MSG_FUNCS, msg, (uint32_t)b.len, -1);
        if (rc)
            return rc;
        first += n;
    }
    return 0;
}
