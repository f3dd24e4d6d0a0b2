/* The collector's message validation (parse.c): every field of a
 * client's message, and every record read out of its ring, checked here
 * as hostile input before anything else looks at it. */
#ifndef OPP_COLLECTOR_PARSE_H
#define OPP_COLLECTOR_PARSE_H

#include <stdint.h>
#include <string.h>
#include <sys/types.h>

#include "format.h"
#include "proto.h"
#include "ring.h"
#include "trace.h"

#define OPP_MAX_FUNCS 65536u

struct opp_hello {
    uint32_t pid, ppid, clock, argc;
    uint64_t start_ticks, start_real_ns;
    char *exe;
    char **argv; /* argc entries */
};
struct opp_funcs_msg {
    uint32_t total, first, count;
    struct opp_func_desc *f; /* names point into one allocation */
    char *strings;
};
struct opp_ring_msg {
    uint32_t tid, capacity;
};

/* 0, or -1 with a reason in *why. The out structs own heap memory: free
 * with opp_hello_free / opp_funcs_free (also after a failure). */
int opp_parse_header(const void *p, size_t n, struct opp_msg_header *h, const char **why);
int opp_parse_hello(const void *p, uint32_t n, struct opp_hello *out, const char **why);
int opp_parse_funcs(const void *p, uint32_t n, struct opp_funcs_msg *out, const char **why);
int opp_parse_ring(const void *p, uint32_t n, struct opp_ring_msg *out, const char **why);
/* FINISH: its linger, and how the controller's own child ended when it
 * says (cmd->pid 0: it does not). */
struct opp_finish_msg {
    uint32_t linger_ms;
    uint32_t pid, ppid, status; /* as waitpid gave it */
};
int opp_parse_finish(const void *p, uint32_t n, struct opp_finish_msg *out, const char **why);
void opp_hello_free(struct opp_hello *h);
void opp_funcs_free(struct opp_funcs_msg *f);

/* One record read out of a ring, checked as hostile input: the memory is
 * the client's, which may write anything there at any moment. */
struct opp_ring_rec {
    struct opp_rec rec;    /* as it was copied */
    unsigned slots;        /* the slots it takes */
    uint32_t nargs, stack; /* arguments without the code stack id (OPPROF_STACKS) */
    uint64_t args[OPP_MAX_ARGS];
};

/* The record at index t of a ring whose slots begin at base (cap slots, a
 * power of two; the caller's own copy), avail slots published from t on:
 * 0, or -1 when it is damaged (an unknown function, too many arguments,
 * more slots than published, a rewind not to a lap's start). Inline: the
 * collector's drain loop. */
static inline int opp_ring_read(const struct opp_rec *base, uint32_t cap, uint64_t t,
                                uint64_t avail, uint32_t nfuncs, struct opp_ring_rec *o)
{
    memcpy(&o->rec, base + (t & (cap - 1)), sizeof o->rec);
    if (o->rec.flags & OPP_REC_REWIND) { /* the slots to the next lap's start */
        if (o->rec.arg0 != cap - (t & (cap - 1)) || o->rec.arg0 > avail)
            return -1;
        o->slots = (unsigned)o->rec.arg0;
        o->nargs = o->stack = 0;
        return 0;
    }
    o->slots = opp_rec_slots(o->rec.nargs);
    if (o->rec.fn >= nfuncs || o->rec.nargs > OPP_MAX_ARGS || o->slots > avail)
        return -1;
    o->args[0] = o->rec.arg0;
    for (unsigned i = 1; i < o->slots; i++) {
        struct opp_rec_ext e;
        memcpy(&e, base + ((t + i) & (cap - 1)), sizeof e);
        for (unsigned k = 0; k < 4; k++)
            if (1 + (i - 1) * 4 + k < OPP_MAX_ARGS)
                o->args[1 + (i - 1) * 4 + k] = e.arg[k];
    }
    o->nargs = o->rec.nargs;
    o->stack = 0;
    if ((o->rec.flags & OPP_REC_STACK) && o->nargs && o->args[o->nargs - 1] <= UINT32_MAX)
        o->stack = (uint32_t)o->args[--o->nargs];
    return 0;
}

/* Check a ring memfd handed to us: size, seals and header. Maps it and
 * returns the header, or NULL with a reason. */
struct opp_ring_hdr *opp_ring_map(int fd, const struct opp_ring_msg *m, const char **why);

#endif
