/* PyTorch's CPU allocations (tables/c10.h): c10::alloc_cpu and
 * c10::free_cpu, which every CPU tensor's storage goes through, defined
 * here so that libc10's calls (through its PLT) reach us first, and the
 * shared-memory mappings at::MapAllocator reports to torch.profiler
 * (c10::reportMemoryUsageToProfiler), which no alloc_cpu makes. Each
 * becomes an instant of kind MEMORY at the thread's depth, so the report
 * puts it inside the operator that was open, like torch's profile_memory.
 * A free records its address only: the report finds its size from the
 * allocation (no table of live blocks here). Nothing is recorded outside a
 * capture window, on our own threads, or with OPPROF_TORCH=lean. */
#include "core/internal.h"
#include "torch/torch.h"

static void record(uint32_t fn, uint64_t op, const void *p, uint64_t bytes)
{
    if (opp_torch_lean || opp_tls.state == OPP_T_OFF ||
        !__atomic_load_n(&opp_capturing, __ATOMIC_RELAXED) || !opp_thread_ring())
        return; /* attached first: a new ring may start paused */
    if (!opp_capture_open())
        return;
    if (OPP_UNLIKELY(__atomic_load_n(&opp_torch_paused_off, __ATOMIC_RELAXED)))
        opp_torch_unpaused();
    uint64_t t = opp_now();
    const uint64_t a[OPP_COL_MEM_COLS] = {[OPP_COL_MEM_OP] = op,
                                          [OPP_COL_MEM_ADDRESS] = (uintptr_t)p,
                                          [OPP_COL_MEM_BYTES] = bytes};
    opp_record_at(fn, t, t, a, OPP_COL_MEM_COLS);
}

/* c10::alloc_cpu(size_t) */
OPP_EXPORT void *_ZN3c109alloc_cpuEm(size_t n)
{
    void *(*real)(size_t) = (void *(*)(size_t))opp_real(OPP_FN__ZN3c109alloc_cpuEm);
    if (OPP_UNLIKELY(!real)) {
        opp_missing(OPP_FN__ZN3c109alloc_cpuEm, 1); /* NULL: c10 has no status */
        return NULL;
    }
    void *p = real(n);
    if (p)
        record(OPP_FN__ZN3c109alloc_cpuEm, OPP_MEM_ALLOC, p, n);
    return p;
}

/* c10::free_cpu(void *) */
OPP_EXPORT void _ZN3c108free_cpuEPv(void *p)
{
    void (*real)(void *) = (void (*)(void *))opp_real(OPP_FN__ZN3c108free_cpuEPv);
    if (OPP_UNLIKELY(!real)) {
        opp_missing(OPP_FN__ZN3c108free_cpuEPv, 0);
        return;
    }
    if (p)
        record(OPP_FN__ZN3c108free_cpuEPv, OPP_MEM_FREE, p, 0);
    real(p);
}

/* c10::Device, passed by value in a register: its type (CPU: 0), index */
struct c10_device {
    int8_t type, index;
};

/* Whether a report's caller (a return address) lies in libc10, which
 * defines report (c10::reportMemoryUsageToProfiler): libc10's reports are
 * its CPU allocator's, made only while torch.profiler asks for memory, of
 * the blocks alloc_cpu and free_cpu record. libc10's range is looked up
 * once (again if report moves: an unload and load). */
static int from_c10(const void *caller, void *report)
{
    static void *_Atomic of;
    static _Atomic uintptr_t lo, hi;
    if (atomic_load_explicit(&of, memory_order_acquire) != report) {
        uintptr_t l, h;
        if (opp_object_range(report, &l, &h))
            return 0;
        atomic_store_explicit(&lo, l, memory_order_relaxed);
        atomic_store_explicit(&hi, h, memory_order_relaxed);
        atomic_store_explicit(&of, report, memory_order_release);
    }
    uintptr_t c = (uintptr_t)caller;
    return c >= atomic_load_explicit(&lo, memory_order_relaxed) &&
           c < atomic_load_explicit(&hi, memory_order_relaxed);
}

/* c10::reportMemoryUsageToProfiler(void *, long, long, long, c10::Device):
 * what torch.profiler's profile_memory is told of a block (bytes < 0:
 * freed). Recorded when the caller is outside libc10: at::MapAllocator's
 * mappings of shared memory (a DataLoader worker's batches as the main
 * process receives them, shared tensors), which no alloc_cpu makes and
 * which it reports whether a profiler listens or not. A free records its
 * address only, as free_cpu's. */
OPP_EXPORT void _ZN3c1027reportMemoryUsageToProfilerEPvlllNS_6DeviceE(void *p, int64_t bytes,
                                                                      int64_t total,
                                                                      int64_t reserved,
                                                                      struct c10_device d)
{
    const uint32_t fn = OPP_FN__ZN3c1027reportMemoryUsageToProfilerEPvlllNS_6DeviceE;
    void (*real)(void *, int64_t, int64_t, int64_t, struct c10_device) =
        (void (*)(void *, int64_t, int64_t, int64_t, struct c10_device))opp_real(fn);
    if (OPP_UNLIKELY(!real)) {
        opp_missing(fn, 0);
        return;
    }
    if (p && bytes && d.type == 0 /* CPU */ && !from_c10(__builtin_return_address(0), (void *)real))
        record(fn, bytes > 0 ? OPP_MEM_ALLOC : OPP_MEM_FREE, p, bytes > 0 ? (uint64_t)bytes : 0);
    real(p, bytes, total, reserved, d);
}
