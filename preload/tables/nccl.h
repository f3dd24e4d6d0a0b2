/* NCCL entry points: X(L, name, kind, flags, dtype, signature class,
 * class arguments) as every table (funcs.h). Each returns an ncclResult_t,
 * recorded first. The collectives record the COLL layout with the
 * communicator's rank and size as ncclCommInitRank, ncclCommUserRank and
 * ncclCommCount told us (libs/nccl.c). */
#define OPP_NCCL_FUNCS(X, L)                                                                       \
    X(L, ncclAllReduce, COLL, S, NONE, NC_RED, ALL_REDUCE)                                         \
    X(L, ncclReduce, COLL, S, NONE, NC_RED_ROOT, REDUCE)                                           \
    X(L, ncclBroadcast, COLL, S, NONE, NC_ROOT, BROADCAST)                                         \
    X(L, ncclBcast, COLL, S, NONE, NC_BCAST, BROADCAST)                                            \
    X(L, ncclAllGather, COLL, S, NONE, NC_PLAIN, ALL_GATHER)                                       \
    X(L, ncclReduceScatter, COLL, S, NONE, NC_RED, REDUCE_SCATTER)                                 \
    X(L, ncclAlltoAll, COLL, S, NONE, NC_PLAIN, ALL_TO_ALL)                                        \
    X(L, ncclSend, COLL, S, NONE, NC_P2P, SEND, const void *)                                      \
    X(L, ncclRecv, COLL, S, NONE, NC_P2P, RECV, void *)                                            \
    X(L, ncclGroupStart, COLL, S, NONE, NC_GROUP, GROUP_START)                                     \
    X(L, ncclGroupEnd, COLL, S, NONE, NC_GROUP, GROUP_END)                                         \
    X(L, ncclCommInitRank, COLL, S, NONE, NC_INIT_RANK, NONE)                                      \
    X(L, ncclCommInitRankConfig, COLL, S, NONE, NC_INIT_RANK_CONFIG, NONE)                         \
    X(L, ncclCommInitAll, PLAIN, S, NONE, NC_INIT_ALL, NONE)                                       \
    X(L, ncclCommUserRank, PLAIN, S, NONE, NC_QUERY, 0)                                            \
    X(L, ncclCommCount, PLAIN, S, NONE, NC_QUERY, 1)                                               \
    X(L, ncclCommDestroy, PLAIN, S, NONE, NC_COMM, NONE)                                           \
    X(L, ncclCommAbort, PLAIN, S, NONE, NC_COMM, NONE)                                             \
    X(L, ncclCommFinalize, PLAIN, S, NONE, NC_COMM, NONE)                                          \
    X(L, ncclGetUniqueId, PLAIN, S, NONE, NC_UID, NONE)

/* ---- signature classes: the prototype once, what is recorded ---- */

#define NC_COLL(c, count, dt, op, comm, peer)                                                      \
    ((uint64_t)r_, OPP_COLL_##c, (uint64_t)(count), nc_dtype(dt), op, nc_rank(comm),               \
     nc_size(comm), peer)
#define NC_RED(name, c)                                                                            \
    OPP_WRAP_RET(ncclResult_t, name,                                                               \
                 (const void *s, void *r, size_t n, ncclDataType_t dt, ncclRedOp_t op,             \
                  ncclComm_t comm, cudaStream_t st),                                               \
                 (s, r, n, dt, op, comm, st), NC_COLL(c, n, dt, nc_redop(op), comm, NC_NONE))
#define NC_RED_ROOT(name, c)                                                                       \
    OPP_WRAP_RET(ncclResult_t, name,                                                               \
                 (const void *s, void *r, size_t n, ncclDataType_t dt, ncclRedOp_t op, int root,   \
                  ncclComm_t comm, cudaStream_t st),                                               \
                 (s, r, n, dt, op, root, comm, st),                                                \
                 NC_COLL(c, n, dt, nc_redop(op), comm, (uint64_t)root))
#define NC_ROOT(name, c)                                                                           \
    OPP_WRAP_RET(ncclResult_t, name,                                                               \
                 (const void *s, void *r, size_t n, ncclDataType_t dt, int root, ncclComm_t comm,  \
                  cudaStream_t st),                                                                \
                 (s, r, n, dt, root, comm, st),                                                    \
                 NC_COLL(c, n, dt, OPP_RED_NONE, comm, (uint64_t)root))
#define NC_BCAST(name, c)                                                                          \
    OPP_WRAP_RET(ncclResult_t, name,                                                               \
                 (void *b, size_t n, ncclDataType_t dt, int root, ncclComm_t comm,                 \
                  cudaStream_t st),                                                                \
                 (b, n, dt, root, comm, st),                                                       \
                 NC_COLL(c, n, dt, OPP_RED_NONE, comm, (uint64_t)root))
/* count: per rank (all_gather's send count, all_to_all's per peer) */
#define NC_PLAIN(name, c)                                                                          \
    OPP_WRAP_RET(ncclResult_t, name,                                                               \
                 (const void *s, void *r, size_t n, ncclDataType_t dt, ncclComm_t comm,            \
                  cudaStream_t st),                                                                \
                 (s, r, n, dt, comm, st), NC_COLL(c, n, dt, OPP_RED_NONE, comm, NC_NONE))
#define NC_P2P(name, c, B)                                                                         \
    OPP_WRAP_RET(ncclResult_t, name,                                                               \
                 (B b, size_t n, ncclDataType_t dt, int peer, ncclComm_t comm, cudaStream_t st),   \
                 (b, n, dt, peer, comm, st),                                                       \
                 NC_COLL(c, n, dt, OPP_RED_NONE, comm, (uint64_t)peer))
#define NC_GROUP(name, c)                                                                          \
    OPP_WRAP_RET(ncclResult_t, name, (void), (), ((uint64_t)r_, OPP_COLL_##c))
#define NC_INIT_RANK(name, c)                                                                      \
    OPP_WRAP_RET(ncclResult_t, name, (ncclComm_t * comm, int nranks, ncclUniqueId id, int rank),   \
                 (comm, nranks, id, rank),                                                         \
                 (nc_init(r_, comm, nranks, rank), OPP_COLL_NONE, 0, 0, 0, opp_dim(rank),          \
                  opp_dim(nranks), NC_NONE))
#define NC_INIT_RANK_CONFIG(name, c)                                                               \
    OPP_WRAP_RET(ncclResult_t, name,                                                               \
                 (ncclComm_t * comm, int nranks, ncclUniqueId id, int rank, ncclConfig_t *cfg),    \
                 (comm, nranks, id, rank, cfg),                                                    \
                 (nc_init(r_, comm, nranks, rank), OPP_COLL_NONE, 0, 0, 0, opp_dim(rank),          \
                  opp_dim(nranks), NC_NONE))
#define NC_INIT_ALL(name, c)                                                                       \
    OPP_WRAP_RET(ncclResult_t, name, (ncclComm_t * comm, int n, const int *devs), (comm, n, devs), (nc_init_all(r_, comm, n)))
#define NC_QUERY(name, which)                                                                      \
    OPP_WRAP_RET(ncclResult_t, name, (const ncclComm_t comm, int *v), (comm, v),                   \
                 (nc_query(r_, comm, v, which)))
#define NC_COMM(name, c)                                                                           \
    OPP_WRAP_RET(ncclResult_t, name, (ncclComm_t comm), (comm), ((uint64_t)r_))
#define NC_UID(name, c)                                                                            \
    OPP_WRAP_RET(ncclResult_t, name, (ncclUniqueId * id), (id), ((uint64_t)r_))
