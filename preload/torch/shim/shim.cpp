// The torch shim: one global RecordFunction callback (at::addGlobalCallback)
// that hands every op torch sees (aten ops, autograd nodes, record_function
// labels, optimizer steps) to the agent as plain values (shim.h). C++ only
// because RecordFunction is; built against the headers of the torch that is
// loaded (their ABI changes between versions), dlopen'ed by the agent once
// torch is in the process. Inputs are encoded the way torch.profiler's
// record_shapes sees them, a tensor's sizes and [] for anything else; for
// aten::conv2d, with the values of its integers and short integer lists,
// which torch's FLOPs read (its stride, padding, dilation and groups).
#include <ATen/record_function.h>
#include <ATen/core/ivalue.h>
#include <c10/core/ScalarType.h>

#include <cstdio>
#include <cstring>

extern "C" {
#include "format.h"
#include "torch/shim/shim.h"

const opp_torch_api *opp_torch_shim_agent;
}

namespace {

at::CallbackHandle all, labels; // every op with its inputs; labels alone

unsigned dtype_of(c10::ScalarType t)
{
    switch (t) {
    case c10::ScalarType::Float: return OPP_DT_F32;
    case c10::ScalarType::Double: return OPP_DT_F64;
    case c10::ScalarType::Half: return OPP_DT_F16;
    case c10::ScalarType::BFloat16: return OPP_DT_BF16;
    case c10::ScalarType::ComplexFloat: return OPP_DT_C64;
    case c10::ScalarType::ComplexDouble: return OPP_DT_C128;
    case c10::ScalarType::ComplexHalf: return OPP_DT_C32;
    case c10::ScalarType::Char: return OPP_DT_I8;
    case c10::ScalarType::Byte: return OPP_DT_U8;
    case c10::ScalarType::Int: return OPP_DT_I32;
    case c10::ScalarType::Long: return OPP_DT_I64;
    case c10::ScalarType::Bool: return OPP_DT_BOOL;
    default: return OPP_DT_NONE;
    }
}

// The most items of an integer list whose values are recorded (a shape's
// most dims, common/ops.h's OPP_RANK_MAX): a longer list is recorded as [].
constexpr unsigned list_max = 8;

// Whether an op's integer inputs are recorded with their values: only
// where torch's FLOPs read them (common/ops.c), so that the other ops'
// records, and summary mode's nodes, stay one per shape (an index or a
// size that changes from call to call would make each call a node).
bool with_values(const char *name)
{
    return name && !std::strcmp(name, "aten::conv2d");
}

// Encode the inputs into out (at most OPP_TORCH_IN_MAX values); returns
// the values written, *count the inputs they cover.
unsigned encode(const at::RecordFunction &fn, uint64_t *out, unsigned *count)
{
    unsigned n = 0, k = 0;
    bool values = with_values(fn.name());
    for (const c10::IValue &v : fn.inputs()) {
        uint64_t tag = OPP_TIN_TAG(OPP_TIN_OTHER, 0, 0);
        c10::IntArrayRef sizes;
        int64_t vals[list_max]; // a number's or a list's values
        if (v.isTensor()) {
            const at::Tensor &t = v.toTensor();
            tag = OPP_TIN_TAG(OPP_TIN_UNDEF, 0, 0);
            if (t.defined()) {
                try {
                    sizes = t.sizes(); // a nested or sparse tensor may have none
                    tag = OPP_TIN_TAG(OPP_TIN_TENSOR, dtype_of(t.scalar_type()),
                                      sizes.size() > 255 ? 255 : sizes.size());
                } catch (...) {
                    sizes = {};
                }
            }
        } else if (values && v.isInt()) {
            vals[0] = v.toInt();
            sizes = c10::IntArrayRef(vals, 1);
            tag = OPP_TIN_TAG(OPP_TIN_SCALAR, 0, 1);
        } else if (v.isScalar()) {
            tag = OPP_TIN_TAG(OPP_TIN_SCALAR, 0, 0);
        } else if (values && v.isIntList()) {
            c10::List<int64_t> l = v.toIntList();
            size_t items = l.size() <= list_max ? l.size() : 0;
            for (size_t i = 0; i < items; i++)
                vals[i] = l.get(i);
            sizes = c10::IntArrayRef(vals, items);
            tag = OPP_TIN_TAG(OPP_TIN_LIST, 0, items);
        } else if (v.isList()) {
            tag = OPP_TIN_TAG(OPP_TIN_LIST, 0, 0);
        }
        unsigned rank = OPP_TIN_RANK(tag);
        if (n + 1 + rank > OPP_TORCH_IN_MAX)
            break;
        out[n++] = tag;
        for (unsigned d = 0; d < rank; d++)
            out[n++] = (uint64_t)sizes[d];
        k++;
    }
    *count = k;
    return n;
}

// torch's RecordScope as the trace numbers it (format.h): torch's enum may
// change order between versions, the file may not.
unsigned scope_of(at::RecordScope s)
{
    switch (s) {
    case at::RecordScope::FUNCTION: return OPP_TORCH_SCOPE_FUNCTION;
    case at::RecordScope::BACKWARD_FUNCTION: return OPP_TORCH_SCOPE_BACKWARD_FUNCTION;
    case at::RecordScope::USER_SCOPE: return OPP_TORCH_SCOPE_USER;
    default: return OPP_TORCH_SCOPE_OTHER;
    }
}

std::unique_ptr<at::ObserverContext> on_start(const at::RecordFunction &fn)
{
    uint64_t in[OPP_TORCH_IN_MAX];
    unsigned n = 0, k = 0;
    if (fn.needsInputs())
        n = encode(fn, in, &k);
    opp_torch_shim_agent->enter(&fn, fn.name(), scope_of(fn.scope()), in, n, k, fn.threadId());
    return nullptr;
}

void on_end(const at::RecordFunction &fn, at::ObserverContext *)
{
    opp_torch_shim_agent->leave(&fn, fn.threadId());
}

} // namespace

extern "C" __attribute__((visibility("default"))) int opp_torch_shim_init(const opp_torch_api *a,
                                                                          char *why, size_t cap)
{
    if (!a || a->version != OPP_TORCH_API_VERSION) {
        snprintf(why, cap, "the torch shim and the agent disagree on their interface");
        return -1;
    }
    opp_torch_shim_agent = a;
    try {
        // registered disabled; the agent turns them on (opp_torch_shim_enable)
        // every scope a RecordFunction can have in a desktop build: torch
        // rebuilds each scope's list of callbacks on every thread-local state
        // change (the autograd engine's, each backward node), paying for
        // every scope a callback is registered in; KERNEL_FUNCTION_DTYPE and
        // BUILD_FEATURE exist only in builds that trace for a mobile
        // selective build (ENABLE_RECORD_KERNEL_FUNCTION_DTYPE)
        all = at::addGlobalCallback(
            at::RecordFunctionCallback(on_start, on_end)
                .needsInputs(a->inputs != 0)
                .scopes({at::RecordScope::FUNCTION, at::RecordScope::BACKWARD_FUNCTION,
                         at::RecordScope::TORCHSCRIPT_FUNCTION, at::RecordScope::CUSTOM_CLASS,
                         at::RecordScope::LITE_INTERPRETER, at::RecordScope::USER_SCOPE,
                         at::RecordScope::STATIC_RUNTIME_OP,
                         at::RecordScope::STATIC_RUNTIME_MODEL}));
        at::disableCallback(all);
        labels = at::addGlobalCallback(
            at::RecordFunctionCallback(on_start, on_end).scopes({at::RecordScope::USER_SCOPE}));
        at::disableCallback(labels);
    } catch (const std::exception &e) {
        snprintf(why, cap, "at::addGlobalCallback failed: %s", e.what());
        try {
            if (all)
                at::removeCallback(all);
        } catch (...) {
        }
        all = labels = 0;
        return -1;
    }
    return 0;
}

// Recording off (a closed capture window): the callbacks are disabled, so
// torch does not even build an op's RecordFunction for us; labels alone
// stay when they mark the steps that open the next window.
extern "C" __attribute__((visibility("default"))) void opp_torch_shim_enable(int which)
{
    if (!all)
        return;
    try { // off before on: never both (a label would be seen twice)
        if (which != OPP_TORCH_ALL)
            at::disableCallback(all);
        if (which != OPP_TORCH_LABELS)
            at::disableCallback(labels);
        if (which == OPP_TORCH_ALL)
            at::reenableCallback(all);
        if (which == OPP_TORCH_LABELS)
            at::reenableCallback(labels);
    } catch (...) {
    }
}
