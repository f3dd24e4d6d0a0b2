/* NCCL wrappers, generated from tables/nccl.h. A collective records
 * (status, coll, count, dtype, redop, rank, nranks, peer/root); rank and
 * size come from a small lock-free table keyed by communicator, filled by
 * the calls that tell them. */
#include "core/internal.h" /* funcs.h: OPP_HAVE_NCCL when the header is installed */
#ifdef OPP_HAVE_NCCL

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstrict-prototypes" /* ncclGroupStart() in nccl.h */
#include <nccl.h>
#pragma GCC diagnostic pop

#define NC_NONE (~0ull) /* no peer/root; rank unknown */

static uint64_t nc_dtype(ncclDataType_t t)
{
    /* unsigned 32/64-bit as their signed peers: same size, so bytes hold */
    static const uint8_t map[] = {OPP_DT_I8,  OPP_DT_U8,  OPP_DT_I32,    OPP_DT_I32,
                                  OPP_DT_I64, OPP_DT_I64, OPP_DT_F16,    OPP_DT_F32,
                                  OPP_DT_F64, OPP_DT_BF16, OPP_DT_F8E4M3, OPP_DT_F8E5M2};
    return (unsigned)t < sizeof map ? map[t] : OPP_DT_NONE;
}

static uint64_t nc_redop(ncclRedOp_t op)
{
    switch ((int)op) {
    case ncclSum: return OPP_RED_SUM;
    case ncclProd: return OPP_RED_PROD;
    case ncclMax: return OPP_RED_MAX_;
    case ncclMin: return OPP_RED_MIN;
    case ncclAvg: return OPP_RED_AVG;
    default: return OPP_RED_OTHER; /* ncclRedOpCreatePreMulSum's */
    }
}

/* Communicators: key, then rank + 1 and size (0: not known yet). A slot is
 * claimed once and never freed: a process has few communicators, and a
 * full table only means rank/size read as unknown. */
#define NC_COMMS 128
static struct {
    _Atomic uintptr_t key;
    _Atomic uint32_t rank1, size;
} nc_comms[NC_COMMS];

static int nc_slot(const void *comm, int claim)
{
    uintptr_t k = (uintptr_t)comm;
    if (!k)
        return -1;
    for (int i = 0; i < NC_COMMS; i++) {
        uintptr_t cur = atomic_load_explicit(&nc_comms[i].key, memory_order_acquire);
        if (cur == k)
            return i;
        if (!cur) {
            if (!claim)
                return -1;
            uintptr_t zero = 0;
            if (atomic_compare_exchange_strong(&nc_comms[i].key, &zero, k) || zero == k)
                return i;
        }
    }
    return -1;
}

static void nc_tell(const void *comm, int rank, int size)
{
    int i = nc_slot(comm, 1);
    if (i < 0)
        return;
    if (rank >= 0)
        atomic_store_explicit(&nc_comms[i].rank1, (uint32_t)rank + 1, memory_order_relaxed);
    if (size > 0)
        atomic_store_explicit(&nc_comms[i].size, (uint32_t)size, memory_order_relaxed);
}

static uint64_t nc_rank(const void *comm)
{
    int i = nc_slot(comm, 0);
    uint32_t r = i < 0 ? 0 : atomic_load_explicit(&nc_comms[i].rank1, memory_order_relaxed);
    return r ? r - 1 : NC_NONE;
}

static uint64_t nc_size(const void *comm)
{
    int i = nc_slot(comm, 0);
    return i < 0 ? 0 : atomic_load_explicit(&nc_comms[i].size, memory_order_relaxed);
}

/* Communicator creation: what the call was given (it may fail), and on
 * success the rank and size of the new communicator. */
static uint64_t nc_init(ncclResult_t r, ncclComm_t *comm, int nranks, int rank)
{
    if (r == ncclSuccess && comm)
        nc_tell(*comm, rank, nranks);
    return (uint64_t)r;
}
static uint64_t nc_init_all(ncclResult_t r, ncclComm_t *comm, int n)
{
    for (int i = 0; r == ncclSuccess && comm && i < n; i++)
        nc_tell(comm[i], i, n);
    return (uint64_t)r;
}
/* ncclCommUserRank (which 0) / ncclCommCount (1): cache what they answer. */
static uint64_t nc_query(ncclResult_t r, ncclComm_t comm, const int *v, int which)
{
    if (r == ncclSuccess && v)
        nc_tell(comm, which ? -1 : *v, which ? *v : 0);
    return (uint64_t)r;
}

OPP_DEFINE_WRAPPERS(OPP_NCCL_FUNCS)

#endif /* OPP_HAVE_NCCL */
