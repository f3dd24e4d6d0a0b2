/* nn.Module layers in C (part of the torch shim, built with the running
 * interpreter's headers): either nn.Module.__call__ wrapped by an object
 * of a small type of ours that hands the module and its name's string id
 * to the agent around the call, or torch's global forward pre hook and
 * forward hook as two builtins doing the same, instead of Python
 * functions calling the agent through ctypes (about 2 us a module call).
 * The names stay Python's (_opprof_torch.py's id_of, asked once per
 * module); the modules open on each thread are the agent's. Not built with
 * OPP_NO_PYTHON: the Python hooks are used then. */
#include "torch/shim/shim.h"

#ifdef OPP_NO_PYTHON

__attribute__((visibility("default"))) void *opp_torch_shim_module_hooks(void *ids, void *id_of,
                                                                         void *forget,
                                                                         void *compiling,
                                                                         int always_call)
{
    (void)ids, (void)id_of, (void)forget, (void)compiling, (void)always_call;
    return 0;
}

__attribute__((visibility("default"))) void *opp_torch_shim_module_call(void *ids, void *id_of,
                                                                        void *forget, void *call)
{
    (void)ids, (void)id_of, (void)forget, (void)call;
    return 0;
}

#else

#include <Python.h>

/* What the hooks need, set once (the factory below): the Python side's
 * map id(module) -> (weakref, name id) and its function naming a module
 * seen first; torch.compiler.is_compiling where torch has it (the hooks
 * then do nothing while torch.compile traces); whether torch runs the
 * forward hook of a forward that raised. */
static struct {
    PyObject *ids, *id_of, *compiling;
    PyObject *forget; /* Python's names forgotten: after a fork (opp_torch_api.forks) */
    uint32_t forks;
    int always_call;
    PyObject *call; /* nn.Module.__call__ as torch has it, when wrapped */
} module_hooks;

/* The module's name id, -1 with a Python error set. */
static long name_of(PyObject *mod)
{
    uint32_t forks = __atomic_load_n(opp_torch_shim_agent->forks, __ATOMIC_RELAXED);
    if (forks != module_hooks.forks) { /* the names are the parent's */
        module_hooks.forks = forks;
        PyObject *r = PyObject_CallNoArgs(module_hooks.forget);
        if (!r)
            return -1;
        Py_DECREF(r);
    }
    PyObject *key = PyLong_FromVoidPtr(mod);
    if (!key)
        return -1;
    PyObject *e = PyDict_GetItemWithError(module_hooks.ids, key); /* borrowed */
    Py_DECREF(key);
    if (e && PyTuple_Check(e) && PyTuple_GET_SIZE(e) == 2 &&
        (!PyWeakref_Check(PyTuple_GET_ITEM(e, 0)) ||
         PyWeakref_GetObject(PyTuple_GET_ITEM(e, 0)) == mod))
        return PyLong_AsLong(PyTuple_GET_ITEM(e, 1));
    if (PyErr_Occurred())
        return -1;
    PyObject *sid = PyObject_CallOneArg(module_hooks.id_of, mod);
    if (!sid)
        return -1;
    long v = PyLong_AsLong(sid);
    Py_DECREF(sid);
    return v;
}

/* 1 while torch.compile traces (nothing to record), 0, -1 on error. */
static int compiling(void)
{
    if (!module_hooks.compiling)
        return 0;
    PyObject *r = PyObject_CallNoArgs(module_hooks.compiling);
    if (!r)
        return -1;
    int v = PyObject_IsTrue(r);
    Py_DECREF(r);
    return v;
}

static PyObject *pre(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    int c = nargs >= 1 ? compiling() : 1;
    if (c < 0)
        return NULL;
    if (!c) {
        long name = name_of(args[0]);
        if (name < 0)
            return NULL;
        opp_torch_shim_agent->module_pre(args[0], (uint32_t)name, module_hooks.always_call);
    }
    Py_RETURN_NONE;
}

static PyObject *post(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    int c = nargs >= 1 ? compiling() : 1;
    if (c < 0)
        return NULL;
    if (!c)
        opp_torch_shim_agent->module_post(args[0]);
    Py_RETURN_NONE;
}

static PyMethodDef pre_def = {"opprof_module_pre", (PyCFunction)(void (*)(void))pre, METH_FASTCALL,
                              "opprof: an nn.Module's forward begins"};
static PyMethodDef post_def = {"opprof_module_post", (PyCFunction)(void (*)(void))post,
                               METH_FASTCALL, "opprof: an nn.Module's forward ended"};

/* nn.Module.__call__(module, *args, **kwargs): torch's own around the
 * agent's begin and end of the module's forward. Unlike global hooks,
 * which send every module call down torch's slow path (each hook dict
 * walked, the hooks' results checked: about 1 us a call), torch keeps its
 * fast path; the end is seen when the forward raises too, as torch's own
 * hooks see it from torch 2.1 on. An object of its own type, not a
 * builtin function: it binds to the module as a function does, and read
 * from the class it is itself, so code that saves Module.__call__ and puts
 * it back (torch.fx's tracer does) puts back this. */
typedef struct {
    PyObject_HEAD vectorcallfunc vectorcall;
} module_call;

static PyObject *call(PyObject *self, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    (void)self;
    if (PyVectorcall_NARGS(nargsf) < 1) /* torch's own says what is wrong */
        return PyObject_Vectorcall(module_hooks.call, args, nargsf, kwnames);
    PyObject *mod = args[0];
    long name = name_of(mod);
    if (name < 0)
        return NULL;
    opp_torch_shim_agent->module_pre(mod, (uint32_t)name, 1);
    PyObject *r = PyObject_Vectorcall(module_hooks.call, args, nargsf, kwnames);
    opp_torch_shim_agent->module_post(mod); /* touches no Python state: an error stays set */
    return r;
}

/* Bound to an instance as a function is; from the class, itself. */
static PyObject *call_get(PyObject *self, PyObject *obj, PyObject *type)
{
    (void)type;
    if (!obj || obj == Py_None)
        return Py_NewRef(self);
    return PyMethod_New(self, obj);
}

static void call_free(PyObject *self)
{
    PyObject_Free(self);
}

/* Any attribute it lacks is torch's __call__'s, as functools.wraps would
 * copy them: torch.profiler's Python tracer (with_stack) takes
 * Module.__call__.__code__ to know a module's call by its frames, and
 * torch's own frames are the ones that run. */
static PyObject *call_getattr(PyObject *self, PyObject *name)
{
    PyObject *r = PyObject_GenericGetAttr(self, name);
    if (r || !PyErr_ExceptionMatches(PyExc_AttributeError))
        return r;
    PyErr_Clear();
    return PyObject_GetAttr(module_hooks.call, name);
}

static PyObject *call_wrapped(PyObject *self, void *unused)
{
    (void)self, (void)unused;
    return Py_NewRef(module_hooks.call);
}

static PyGetSetDef call_getset[] = {
    {"__wrapped__", call_wrapped, NULL, "torch's nn.Module.__call__", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject module_call_type = {
    PyVarObject_HEAD_INIT(NULL, 0) /* with its comma */
        .tp_name = "opprof.module_call",
    .tp_basicsize = sizeof(module_call),
    .tp_dealloc = call_free,
    .tp_vectorcall_offset = offsetof(module_call, vectorcall),
    .tp_call = PyVectorcall_Call,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL | Py_TPFLAGS_METHOD_DESCRIPTOR,
    .tp_doc = "opprof: nn.Module.__call__, its forward recorded as a range",
    .tp_descr_get = call_get,
    .tp_getattro = call_getattr,
    .tp_getset = call_getset,
};

/* What replaces nn.Module.__call__ (torch's, given as torch_call), a new
 * reference; NULL with a Python error set. Called once, with the GIL
 * (ctypes.PyDLL). */
__attribute__((visibility("default"))) PyObject *opp_torch_shim_module_call(PyObject *ids,
                                                                            PyObject *id_of,
                                                                            PyObject *forget,
                                                                            PyObject *torch_call)
{
    if (!opp_torch_shim_agent || !PyDict_Check(ids) || !PyCallable_Check(id_of) ||
        !PyCallable_Check(forget) || !PyCallable_Check(torch_call)) {
        PyErr_SetString(PyExc_RuntimeError, "opprof: the torch shim is not attached");
        return NULL;
    }
    if (PyType_Ready(&module_call_type))
        return NULL;
    module_call *c = PyObject_New(module_call, &module_call_type);
    if (!c)
        return NULL;
    c->vectorcall = call;
    Py_INCREF(ids);
    Py_INCREF(id_of);
    Py_INCREF(forget);
    Py_INCREF(torch_call);
    module_hooks.ids = ids;
    module_hooks.id_of = id_of;
    module_hooks.forget = forget;
    module_hooks.forks = __atomic_load_n(opp_torch_shim_agent->forks, __ATOMIC_RELAXED);
    module_hooks.call = torch_call;
    return (PyObject *)c;
}

/* (pre hook, post hook), a new reference; NULL with a Python error set.
 * Called once, with the GIL (ctypes.PyDLL). */
__attribute__((visibility("default"))) PyObject *opp_torch_shim_module_hooks(
    PyObject *ids, PyObject *id_of, PyObject *forget, PyObject *is_compiling, int always_call)
{
    if (!opp_torch_shim_agent || !PyDict_Check(ids) || !PyCallable_Check(id_of) ||
        !PyCallable_Check(forget)) {
        PyErr_SetString(PyExc_RuntimeError, "opprof: the torch shim is not attached");
        return NULL;
    }
    Py_INCREF(ids);
    Py_INCREF(id_of);
    Py_INCREF(forget);
    module_hooks.ids = ids;
    module_hooks.id_of = id_of;
    module_hooks.forget = forget;
    module_hooks.forks = __atomic_load_n(opp_torch_shim_agent->forks, __ATOMIC_RELAXED);
    module_hooks.compiling = is_compiling != Py_None ? (Py_INCREF(is_compiling), is_compiling) : NULL;
    module_hooks.always_call = always_call;
    PyObject *a = PyCFunction_New(&pre_def, NULL), *b = a ? PyCFunction_New(&post_def, NULL) : NULL;
    PyObject *t = b ? PyTuple_Pack(2, a, b) : NULL;
    Py_XDECREF(a);
    Py_XDECREF(b);
    return t;
}

#endif
