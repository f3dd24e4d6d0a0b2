/* PyTorch's CPU allocations (torch/memory.c): c10::alloc_cpu and
 * c10::free_cpu, which c10's DefaultCPUAllocator calls through the PLT, so
 * the preload's definitions take them, and c10::reportMemoryUsageToProfiler
 * (torch 1.13's signature), what torch.profiler's profile_memory is told,
 * for the shared-memory mappings at::MapAllocator reports from outside
 * libc10. Each records an instant of kind MEMORY inside the operator open
 * on the thread. The names are the C++ mangled ones (valid C identifiers). */
#define OPP_C10_FUNCS(X, L)                                                                        \
    X(L, _ZN3c109alloc_cpuEm, MEMORY, 0, NONE, C10_ALLOC, void *)                                  \
    X(L, _ZN3c108free_cpuEPv, MEMORY, 0, NONE, C10_FREE, void)                                    \
    X(L, _ZN3c1027reportMemoryUsageToProfilerEPvlllNS_6DeviceE, MEMORY, 0, NONE, C10_REPORT, void)
