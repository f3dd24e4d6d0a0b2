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

__attribute__((visibility("default"))) size_t opp_torch_shim_pystr(const void *str, char *buf,
                                                                   size_t cap)
{
    (void)str;
    if (cap)
        buf[0] = 0;
    return 0;
}

#else

#define Py_BUILD_CORE 1
#include <Python.h>
#if PY_VERSION_HEX >= 0x030B0000
#include <internal/pycore_frame.h>
#endif

static void frame_of(struct opp_pyframe *p, PyCodeObject *co, int addr)
{
    p->code = co;
    p->addr = addr;
    p->file = co->co_filename;
#if PY_VERSION_HEX >= 0x030B0000
    p->func = co->co_qualname;
#else
    p->func = co->co_name;
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

/* A str's code point in UTF-8 into u: how many bytes. A surrogate from
 * surrogateescape (U+DC80..U+DCFF: how Python decodes a path's bytes that
 * are not UTF-8) is that byte again, as os.fsencode gives it; any other
 * surrogate is '?'. */
static size_t utf8_put(Py_UCS4 c, unsigned char *u)
{
    if (c < 0x80 || (c >= 0xd800 && c <= 0xdfff)) {
        u[0] = c < 0x80 || (c >= 0xdc80 && c <= 0xdcff) ? (unsigned char)c : (unsigned char)'?';
        return 1;
    }
    size_t k = c < 0x800 ? 2 : c < 0x10000 ? 3 : 4;
    for (size_t i = k - 1; i > 0; i--, c >>= 6)
        u[i] = (unsigned char)(0x80 | (c & 0x3f));
    u[0] = (unsigned char)(0xff00u >> k | c); /* 110xxxxx, 1110xxxx or 11110xxx */
    return k;
}

/* A frame's str in UTF-8, from its code points as they are stored (1, 2
 * or 4 bytes each): no Python call and no allocation, so it runs where the
 * frames are read. */
__attribute__((visibility("default"))) size_t opp_torch_shim_pystr(const void *str, char *buf,
                                                                   size_t cap)
{
    PyObject *o = (PyObject *)str;
    if (!cap)
        return 0;
    size_t n = 0;
#if PY_VERSION_HEX < 0x030C0000
    int ok = o && PyUnicode_Check(o) && PyUnicode_IS_READY(o);
#else
    int ok = o && PyUnicode_Check(o);
#endif
    if (!ok) {
        if (cap > 1)
            buf[n++] = '?';
        buf[n] = 0;
        return n;
    }
    int kind = PyUnicode_KIND(o);
    const void *data = PyUnicode_DATA(o);
    Py_ssize_t len = PyUnicode_GET_LENGTH(o);
    for (Py_ssize_t i = 0; i < len; i++) {
        Py_UCS4 c = PyUnicode_READ(kind, data, i);
        unsigned char u[4];
        size_t k = utf8_put(c, u);
        if (!c || n + k >= cap)
            break; /* a C string ends at a NUL; a character fits whole or not at all */
        memcpy(buf + n, u, k);
        n += k;
    }
    buf[n] = 0;
    return n;
}

/* The line of a frame's instruction: a walk of the code's line table, so
 * the agent asks once per place, not at every op. */
__attribute__((visibility("default"))) int opp_torch_shim_pyline(const void *code, int addr)
{
    return PyCode_Addr2Line((PyCodeObject *)code, addr);
}

#endif
