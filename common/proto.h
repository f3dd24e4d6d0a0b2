/* The socket protocol between profiled processes (and `opprof run`) and the
 * collector, version 11. docs/FORMAT.md describes it in prose. */
#ifndef OPP_PROTO_H
#define OPP_PROTO_H

#include <stdint.h>

#define OPP_PROTO_MAGIC 0x4d50504fu /* "OPPM" */
/* 2: FUNCS in parts, GPU; 3: INFO; 4: RESUME; 5: REAPED; 6: TOP; 7: BYE's
 * end, REAPED's clock; 8: MODE, RESUMED's mode; 9: DONE's summary losses;
 * 10: RING after BYE; 11: DONE's records lost to a signal handler */
#define OPP_PROTO_VERSION 12u
#define OPP_MSG_MAX (64u * 1024u) /* payload bytes */

/* The u64 fields of an ACK, in order. The last two are set when the
 * goodbye finished the trace. */
enum opp_ack_field {
    OPP_ACK_EVENTS,      /* this process's; the whole trace's when it finished it */
    OPP_ACK_DROPPED,     /* likewise */
    OPP_ACK_CONNECTED,   /* processes still connected */
    OPP_ACK_WRITE_ERRNO, /* the trace's write errno (0: none) */
    OPP_ACK_WRITTEN,     /* events written before that */
    OPP_ACK_FIELDS
};

/* The u64 fields of a DONE, in order. */
enum opp_done_field {
    OPP_DONE_EVENTS,
    OPP_DONE_DROPPED,
    OPP_DONE_PROCS,       /* processes in the trace */
    OPP_DONE_CUT,         /* processes still running when it was finished */
    OPP_DONE_WRITE_ERRNO, /* 0: none */
    OPP_DONE_WRITTEN,     /* events written before that */
    OPP_DONE_SUM_DROPPED, /* a summary's calls on new call paths past its bound */
    OPP_DONE_SUM_LOST,    /* a summary's launches and blocks let go at its maps' bound */
    OPP_DONE_INTERRUPTED, /* of DROPPED: lost because a signal handler interrupted a
                             thread's publishing, not for a full buffer (version 11) */
    OPP_DONE_FIELDS
};

struct opp_msg_header {
    uint32_t magic;
    uint16_t type;
    uint16_t version;
    uint32_t size; /* payload bytes that follow */
    uint32_t reserved;
};

enum opp_msg_type {
    /* client -> collector */
    OPP_MSG_HELLO = 1,   /* u32 pid, u32 ppid, u32 clock, u32 argc, u64 start ticks,
                            u64 realtime ns, str exe, argc x str arg */
    OPP_MSG_FUNCS = 2,   /* u32 total, u32 first, u32 count, count x (u32 kind, u32 dtype,
                            str lib, str name): entries first..first+count-1 of the
                            process's table, sent in order until total */
    OPP_MSG_RING = 3,    /* u32 tid, u32 capacity; carries the ring's memfd */
    OPP_MSG_BYE = 4,     /* u64 the clock's ticks at exit (or empty); answered by ACK once
                            the process's records are written */
    OPP_MSG_FINISH = 5,  /* control: u32 linger ms; answered by DONE once the file is complete */
    OPP_MSG_GPU = 6,     /* u32 count, count x GPU record (gpu.h); after the whole FUNCS table */
    OPP_MSG_INFO = 7,    /* u32 count, count x (str key, str value): the process's labels
                            (rank, world size, host...), once, after the hello (info.h) */
    OPP_MSG_CTL = 8,     /* control, first and only: u32 op (0 status, 1 start, 2 stop);
                            answered by CTL_ACK */
    OPP_MSG_RESUME = 9,  /* empty, first and only: the process whose connection the
                            program closed (SO_PEERCRED's pid) carries on here;
                            answered by RESUMED */
    OPP_MSG_REAPED = 10, /* u32 pid, u32 wait status (waitpid's), u64 the clock's ticks
                            then (an 8-byte one has none): a child the process
                            reaped; after the hello */
    OPP_MSG_TOP = 11,    /* control, empty, first and as often as wanted: answered by
                            TOP_SNAP (`opprof top`) */
    /* collector -> client */
    OPP_MSG_ACK = 16,      /* OPP_ACK_FIELDS x u64 (enum opp_ack_field) */
    OPP_MSG_DONE = 17,     /* OPP_DONE_FIELDS x u64 (enum opp_done_field) */
    OPP_MSG_CTL_ACK = 18,  /* u32 recording (1) or stopped (0), u32 processes connected,
                              u64 events so far, u64 records dropped so far (version 6) */
    OPP_MSG_RESUMED = 19,  /* u32 the collector's mode (enum opp_mode) */
    OPP_MSG_TOP_SNAP = 20, /* the live aggregate's snapshot (topsnap.h) */
    OPP_MSG_MODE = 21      /* u32 the collector's mode (enum opp_mode): the answer to a
                              HELLO, sent once it is read, before anything else */
};

/* What the collector records (MODE, RESUMED): the agent names torch.profiler's
 * steps by it, and marks schedule windows for a summary. */
enum opp_mode { OPP_MODE_FULL = 0, OPP_MODE_SUMMARY = 1 };

#endif
