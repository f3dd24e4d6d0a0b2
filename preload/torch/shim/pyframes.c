/* The calling thread's Python frames, read at a torch op's start (part of
 * the torch shim, built with the running interpreter's headers, internal
 * ones included: where the frames are is not public API). No GIL is taken
 * and nothing is allocated: the thread reads its own frame chain, which
 * nothing else changes while it is inside the op. Compiled with
 * OPP_NO_PYTHON when the headers are missing: no Python frames. Written
 * for CPython 3.10 to 3.13; tested on 3.11. */
#include "torch/shim/shim.h"

#if !defined(OPP_NO_PYTHON)
#include <patchlevel.h>
#if PY_VERSION_HEX < 0x030A0000 || PY_VERSION_HEX >= 0x030E0000
#define OPP_NO_PYTHON 1 /* frame layouts this file does not know */
#endif
#endif

#ifdef OPP_NO_PYTHON

__attribute__((visibility("default"))) int opp_torch_shim_pyframes(struct opp_pyframe *out, int max)
{
    (void)out, (void)max;
    return -1;
}

__attribute__((visibility("default"))) int opp_torch_shim_pyline(const void *code, int addr)
{
    (void)code, (void)addr;
    return 0;
}

#else

#define Py_BUILD_CORE 1
#include <Python.h>
#if PY_VERSION_HEX >= 0x030B0000
#include <internal/pycore_frame.h>
#endif

/* A str's UTF-8 bytes without converting (which would allocate): a compact
 * ASCII string's own, else the cached UTF-8 copy when there is one. */
static const char *utf8_of(PyObject *o)
{
    if (!o || !PyUnicode_Check(o))
        return "?";
    if (PyUnicode_IS_COMPACT_ASCII(o))
        return (const char *)PyUnicode_DATA(o);
    const char *u = ((PyCompactUnicodeObject *)o)->utf8;
    return u ? u : "?";
}

static void frame_of(struct opp_pyframe *p, PyCodeObject *co, int addr)
{
    p->code = co;
    p->addr = addr;
    p->file = utf8_of(co->co_filename);
#if PY_VERSION_HEX >= 0x030B0000
    p->func = utf8_of(co->co_qualname);
#else
    p->func = utf8_of(co->co_name);
#endif
}

__attribute__((visibility("default"))) int opp_torch_shim_pyframes(struct opp_pyframe *out, int max)
{
    if (!Py_IsInitialized())
        return 0;
    PyThreadState *ts = PyGILState_GetThisThreadState(); /* this thread's, GIL or not */
    if (!ts)
        return 0;
    int n = 0;
#if PY_VERSION_HEX >= 0x030D0000
    for (_PyInterpreterFrame *f = ts->current_frame; f && n < max; f = f->previous) {
        if (f->owner == FRAME_OWNED_BY_CSTACK || !PyCode_Check(f->f_executable))
            continue;
        PyCodeObject *co = (PyCodeObject *)f->f_executable;
        frame_of(&out[n++], co, _PyInterpreterFrame_LASTI(f) * (int)sizeof(_Py_CODEUNIT));
    }
#elif PY_VERSION_HEX >= 0x030B0000
    for (_PyInterpreterFrame *f = ts->cframe ? ts->cframe->current_frame : NULL; f && n < max;
         f = f->previous) {
#if PY_VERSION_HEX >= 0x030C0000
        if (f->owner == FRAME_OWNED_BY_CSTACK)
            continue;
#endif
        if (_PyFrame_IsIncomplete(f))
            continue;
        PyCodeObject *co = f->f_code;
        frame_of(&out[n++], co, _PyInterpreterFrame_LASTI(f) * (int)sizeof(_Py_CODEUNIT));
    }
#else
    for (PyFrameObject *f = ts->frame; f && n < max; f = f->f_back)
        frame_of(&out[n++], f->f_code, f->f_lasti * 2);
#endif
    return n;
}

/* The line of a frame's instruction: a walk of the code's line table, so
 * the agent asks once per place, not at every op. */
__attribute__((visibility("default"))) int opp_torch_shim_pyline(const void *code, int addr)
{
    return PyCode_Addr2Line((PyCodeObject *)code, addr);
}

#endif
