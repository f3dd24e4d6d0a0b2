/* NCCL entry points: X(name, lib, kind, flags, dtype, signature class,
 * class arguments) as every table (funcs.h). Each returns an ncclResult_t,
 * recorded first. The collectives record the COLL layout with the
 * communicator's rank and size as ncclCommInitRank, ncclCommUserRank and
 * ncclCommCount told us (preload/nccl.c). */
#define OPP_NCCL_FUNCS(X)                                                                  \
    X(ncclAllReduce, nccl, COLL, S, NONE, NC_RED, ALL_REDUCE)                              \
    X(ncclReduce, nccl, COLL, S, NONE, NC_RED_ROOT, REDUCE)                                \
    X(ncclBroadcast, nccl, COLL, S, NONE, NC_ROOT, BROADCAST)                              \
    X(ncclBcast, nccl, COLL, S, NONE, NC_BCAST, BROADCAST)                                 \
    X(ncclAllGather, nccl, COLL, S, NONE, NC_PLAIN, ALL_GATHER)                            \
    X(ncclReduceScatter, nccl, COLL, S, NONE, NC_RED, REDUCE_SCATTER)                      \
    X(ncclAlltoAll, nccl, COLL, S, NONE, NC_PLAIN, ALL_TO_ALL)                             \
    X(ncclSend, nccl, COLL, S, NONE, NC_P2P, SEND, const void *)                           \
    X(ncclRecv, nccl, COLL, S, NONE, NC_P2P, RECV, void *)                                 \
    X(ncclGroupStart, nccl, COLL, S, NONE, NC_GROUP, GROUP_START)                          \
    X(ncclGroupEnd, nccl, COLL, S, NONE, NC_GROUP, GROUP_END)                              \
    X(ncclCommInitRank, nccl, COLL, S, NONE, NC_INIT_RANK, NONE)                           \
    X(ncclCommInitRankConfig, nccl, COLL, S, NONE, NC_INIT_RANK_CONFIG, NONE)              \
    X(ncclCommInitAll, nccl, PLAIN, S, NONE, NC_INIT_ALL, NONE)                            \
    X(ncclCommUserRank, nccl, PLAIN, S, NONE, NC_QUERY, 0)                                 \
    X(ncclCommCount, nccl, PLAIN, S, NONE, NC_QUERY, 1)                                    \
    X(ncclCommDestroy, nccl, PLAIN, S, NONE, NC_COMM, NONE)                                \
    X(ncclCommAbort, nccl, PLAIN, S, NONE, NC_COMM, NONE)                                  \
    X(ncclCommFinalize, nccl, PLAIN, S, NONE, NC_COMM, NONE)                               \
    X(ncclGetUniqueId, nccl, PLAIN, S, NONE, NC_UID, NONE)
