/* PyTorch's CPU allocations (tables/c10.h): c10::alloc_cpu and
 * c10::free_cpu, which every CPU tensor's storage goes through, defined
 * here so that libc10's calls (through its PLT) reach us first. Each
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
