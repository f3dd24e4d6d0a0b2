/* Process labels (rank, world size, host, ...): key/value pairs a process
 * sends once (OPP_MSG_INFO) and the trace keeps (OPP_CHUNK_INFO). The one
 * check both the collector and the reader apply. */
#ifndef OPP_INFO_H
#define OPP_INFO_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "buf.h"

#define OPP_INFO_MAX 32u       /* pairs */
#define OPP_INFO_KEY_MAX 64u   /* bytes: [A-Za-z0-9_] */
#define OPP_INFO_VALUE_MAX 256u /* bytes: printable ASCII */

struct opp_info_pair {
    const char *key, *value; /* not NUL-terminated: into the buffer */
    size_t klen, vlen;
};

/* Read `count` pairs from b into out[0..count). 0, or -1 when count, a
 * length or a byte is out of bounds (b may be left anywhere). */
static inline int opp_info_read(struct opp_rbuf *b, uint32_t count, struct opp_info_pair *out)
{
    if (count > OPP_INFO_MAX)
        return -1;
    for (uint32_t i = 0; i < count; i++) {
        struct opp_info_pair *p = &out[i];
        p->key = opp_get_str(b, OPP_INFO_KEY_MAX, &p->klen);
        p->value = opp_get_str(b, OPP_INFO_VALUE_MAX, &p->vlen);
        if (b->bad || !p->klen)
            return -1;
        for (size_t k = 0; k < p->klen; k++) {
            char c = p->key[k];
            if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                  c == '_'))
                return -1;
        }
        for (size_t k = 0; k < p->vlen; k++)
            if ((unsigned char)p->value[k] < 0x20 || (unsigned char)p->value[k] >= 0x7f)
                return -1;
    }
    return 0;
}

/* The one list of the variables launchers set: where the rank and sizes
 * come from, in order of preference (torchrun, Open MPI, PMIx/PMI (MPICH,
 * Intel MPI), Slurm), and the others the agent sends as they are (hello.c),
 * for a person reading the trace. */
#define OPP_INFO_RANK_VARS(X) X(RANK) X(OMPI_COMM_WORLD_RANK) X(PMIX_RANK) X(PMI_RANK) X(SLURM_PROCID)
#define OPP_INFO_WORLD_VARS(X) X(WORLD_SIZE) X(OMPI_COMM_WORLD_SIZE) X(PMI_SIZE) X(SLURM_NTASKS)
#define OPP_INFO_LOCAL_VARS(X) X(LOCAL_RANK) X(OMPI_COMM_WORLD_LOCAL_RANK) X(SLURM_LOCALID)
#define OPP_INFO_OTHER_VARS(X) X(LOCAL_WORLD_SIZE) X(GROUP_RANK) X(SLURM_NODEID)

#define OPP_INFO_KEY_STR(v) #v,
#define OPP_INFO_RANK_KEYS {OPP_INFO_RANK_VARS(OPP_INFO_KEY_STR) NULL}
#define OPP_INFO_WORLD_KEYS {OPP_INFO_WORLD_VARS(OPP_INFO_KEY_STR) NULL}
#define OPP_INFO_LOCAL_KEYS {OPP_INFO_LOCAL_VARS(OPP_INFO_KEY_STR) NULL}
/* Every one the agent sends. */
#define OPP_INFO_SENT_KEYS                                                                         \
    {OPP_INFO_RANK_VARS(OPP_INFO_KEY_STR) OPP_INFO_WORLD_VARS(OPP_INFO_KEY_STR)                    \
         OPP_INFO_LOCAL_VARS(OPP_INFO_KEY_STR) OPP_INFO_OTHER_VARS(OPP_INFO_KEY_STR) NULL}

/* The rank variables for a person, from OPP_INFO_RANK_KEYS: "RANK,
 * OMPI_COMM_WORLD_RANK, PMIX_RANK, PMI_RANK" then last ("or") and
 * "SLURM_PROCID", in buf. */
static inline const char *opp_info_rank_keys_text(char *buf, size_t cap, const char *last)
{
    static const char *const keys[] = OPP_INFO_RANK_KEYS;
    size_t n = 0, nkeys = sizeof keys / sizeof *keys - 1;
    buf[0] = 0;
    for (size_t i = 0; i < nkeys && n < cap; i++)
        n += (size_t)snprintf(buf + n, cap - n, "%s%s", !i ? "" : i + 1 < nkeys ? ", " : last,
                              keys[i]);
    return buf;
}

/* The value of the first of want (NULL-terminated) among the n labels that
 * is a number from 0 to 2^31 - 1; -1 when none is. */
static inline int64_t opp_info_number(uint32_t n, const char *const *keys,
                                      const char *const *values, const char *const *want)
{
    for (; *want; want++)
        for (uint32_t i = 0; i < n; i++) {
            const char *k = keys[i], *w = *want;
            while (*k && *k == *w)
                k++, w++;
            if (*k || *w)
                continue;
            int64_t x = 0;
            const char *v = values[i];
            if (!*v)
                break;
            for (; *v >= '0' && *v <= '9' && x <= 0x7fffffff; v++)
                x = x * 10 + (*v - '0');
            if (!*v && x <= 0x7fffffff)
                return x;
            break;
        }
    return -1;
}

#endif
