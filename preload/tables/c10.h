/* PyTorch's CPU allocator (torch/memory.c): c10::alloc_cpu and
 * c10::free_cpu, which c10's DefaultCPUAllocator calls through the PLT, so
 * the preload's definitions take them. Each records an instant of kind
 * MEMORY inside the operator open on the thread (torch's profile_memory).
 * The names are the C++ mangled ones (valid C identifiers). */
#define OPP_C10_FUNCS(X, L)                                                                        \
    X(L, _ZN3c109alloc_cpuEm, MEMORY, 0, NONE, C10_ALLOC, void *)                                  \
    X(L, _ZN3c108free_cpuEPv, MEMORY, 0, NONE, C10_FREE, void)
