/* The contract between libopprof.so (preload/torch/torch.c, C) and the
 * torch shim (preload/torch/shim/shim.cpp, C++ built against the headers of the
 * torch that is loaded): the shim registers a RecordFunction callback and
 * turns each op into plain values; the agent records them. The shim is
 * dlopen'ed by the agent only once the process has loaded torch, so a
 * program without torch never loads libtorch. Both sides check
 * OPP_TORCH_API_VERSION. */
#ifndef OPP_TORCH_SHIM_H
#define OPP_TORCH_SHIM_H

#include <stddef.h>
#include <stdint.h>

#include "format.h"

#define OPP_TORCH_API_VERSION 6u

/* Most values the shim encodes for one op's inputs (fits the trace's
 * OPP_MAX_ARGS with the op's own columns). */
#define OPP_TORCH_IN_MAX 36u

/* Inputs are encoded as a TORCH operator records them (format.h:
 * OPP_TIN_*). */

/* What the agent gives the shim. */
struct opp_torch_api {
    uint32_t version;
    /* An op began on this thread: key identifies it until its end (the
     * RecordFunction's address); name; scope (enum opp_torch_scope); in: n values
     * encoding `ninputs` inputs (the first ones, when not all fit); thread:
     * torch's number of this thread (RecordFunction::threadId). */
    void (*enter)(const void *key, const char *name, unsigned scope, const uint64_t *in, unsigned n,
                  unsigned ninputs, uint64_t thread);
    /* It ended, on this thread or another: thread is torch's number of
     * the thread it began on (a TorchScript function whose wait resumed
     * on an inter-op thread ends there). */
    void (*leave)(const void *key, uint64_t thread);
    int inputs; /* ask torch for each op's inputs (shapes); 0: names only */
    /* An nn.Module's forward begins on this thread (module: the Python
     * object, an identity; name: its string id; always_call: torch runs
     * the forward hook of a forward that raised, else a module open again
     * is taken for one whose forward raised), and ends (modhooks.c). */
    void (*module_pre)(const void *module, uint32_t name, int always_call);
    void (*module_post)(const void *module);
    /* How many forks the process came through (read atomically): when it
     * changes, the string ids Python kept for its modules are the
     * parent's, forgotten (a fork that ran no atfork handler too). */
    const uint32_t *forks;
};

/* The agent's side, once the shim is initialised (shim.cpp), for
 * modhooks.c; NULL before. */
extern const struct opp_torch_api *opp_torch_shim_agent;

/* The shim's exports (extern "C"): init registers the callbacks (disabled
 * until enable says otherwise); 0, or -1 with why filled. */
typedef int (*opp_torch_shim_init_t)(const struct opp_torch_api *api, char *why, size_t cap);
/* One Python frame of the thread (pyframes.c): its code object (an
 * identity the agent hands back to opp_torch_shim_pyline), the offset of
 * its instruction in the code, its file and function (the interpreter's
 * str objects, identities the agent hands to opp_torch_shim_pystr; valid
 * while the code object lives). */
struct opp_pyframe {
    const void *code;
    int addr;
    const void *file, *func;
};
/* The calling thread's Python frames, innermost first, at most max: how
 * many (0: not a Python thread), -1 when the shim was built without
 * Python's headers. */
typedef int (*opp_torch_shim_pyframes_t)(struct opp_pyframe *out, int max);
/* The source line of a frame's instruction (code and addr as given by
 * pyframes, while that frame runs). */
typedef int (*opp_torch_shim_pyline_t)(const void *code, int addr);
/* A frame's file or function (str, as pyframes gave it, while that frame
 * runs) in UTF-8 into buf, NUL-terminated: its length, at most cap - 1,
 * cut before a character that does not fit. */
typedef size_t (*opp_torch_shim_pystr_t)(const void *str, char *buf, size_t cap);

/* enable: which callbacks run (the agent's capture window). */
enum opp_torch_enable {
    OPP_TORCH_NONE = 0,   /* none: torch runs as without us */
    OPP_TORCH_ALL = 1,    /* every op, with its inputs */
    OPP_TORCH_LABELS = 2  /* record_function labels alone, no inputs (step markers) */
};
typedef void (*opp_torch_shim_enable_t)(int which);

/* The shim's module hooks (modhooks.c), for Python (ctypes.PyDLL):
 * opp_torch_shim_module_hooks(ids, id_of, forget, is_compiling or None,
 * always_call) gives the tuple (pre hook, post hook) to register with
 * torch, opp_torch_shim_module_call(ids, id_of, forget, torch's
 * nn.Module.__call__) what replaces it; NULL when the shim was built
 * without Python's headers. forget is called before a module's name is
 * looked up in a process that forked since (opp_torch_api.forks). */

#endif
