# What torch.profiler says of a run, for the torch end-to-end tests
# (tests/e2e/test_torch.c reads it), a line per fact, tab-separated:
# key_averages' "count NAME N" and, with shapes, "shapes NAME SHAPES N";
# with profile_memory, each name's CPU memory as torch's event tree has it,
# "mem NAME CPU_MEM SELF_CPU_MEM" ("[memory]": outside every op), and
# "left BYTES", the bytes allocated less freed while it profiled.


def tree_memory(prof):
    """Each name's CPU memory (total, self) and "[memory]"'s, and the bytes
    left, as torch's profiler attributes each allocation and free: to its
    event's parent, the innermost op open on its thread (the ns-precise
    event tree). Not key_averages' cpu_memory_usage: that sums the
    allocations of any thread whose whole microsecond falls within an op's
    [start, end], so an allocation on a boundary is charged to a neighbour
    too, and a row moves by whole allocations from run to run
    (scripts/torch-memory-table.py shows it). Named, dropped and folded as
    key_averages does (_filter_name; _remove_dup_nodes: an op that is its
    same-named parent's only child is that parent)."""
    from torch._C._profiler import _EventType
    from torch.autograd.profiler_util import _filter_name, _rewrite_name

    def nbytes(e):
        if e.tag != _EventType.Allocation:
            return 0
        cpu = e.extra_fields.device.type in ("cpu", "mkldnn", "ideep")
        return e.extra_fields.alloc_size if cpu else 0

    def node(e):  # [name, self, children], or a dropped op's (None, self, children)
        ops = [node(c) for c in e.children if c.tag != _EventType.Allocation]
        kids = []
        for k in ops:
            kids += k[2] if k[0] is None else [k]
        own = sum(nbytes(c) for c in e.children) + sum(k[1] for k in ops if k[0] is None)
        name = None if _filter_name(e.name) else _rewrite_name(e.name, with_wildcard=True)
        while name and len(kids) == 1 and kids[0][0] == name:
            own, kids = own + kids[0][1], kids[0][2]
        return [name, own, kids]

    rows, outside = {}, 0

    def add(n):
        total = n[1] + sum(add(k) for k in n[2])
        t, s = rows.get(n[0], (0, 0))
        rows[n[0]] = (t + total, s + n[1])
        return total

    for e in prof.profiler.kineto_results.experimental_event_tree():
        if e.tag == _EventType.Allocation:
            outside += nbytes(e)
        elif e.tag == _EventType.TorchOp:
            n = node(e)
            outside += n[1] if n[0] is None else 0
            for k in n[2] if n[0] is None else [n]:
                add(k)
    left = outside + sum(s for _, s in rows.values())
    rows["[memory]"] = (outside, outside)
    return rows, left


def write(prof, path, shapes=False, memory=False):
    """prof's facts (above) to path."""
    with open(path, "w") as f:
        for e in prof.key_averages():
            f.write("count\t%s\t%d\n" % (e.key, e.count))
        if memory:
            rows, left = tree_memory(prof)
            for name, (total, self_mem) in rows.items():
                f.write("mem\t%s\t%d\t%d\n" % (name, total, self_mem))
            f.write("left\t%d\n" % left)
        if shapes:
            for e in prof.key_averages(group_by_input_shape=True):
                f.write("shapes\t%s\t%s\t%d\n" % (e.key, e.input_shapes, e.count))


def tree_paths(prof, root):
    """The call paths of the ops inside each op named root, "root;A;B", and
    how many calls each has, as torch's event tree nests them (ns-precise;
    folded and named as key_averages does: _filter_name, _rewrite_name,
    _remove_dup_nodes). Not key_averages' own tree, built from whole
    microseconds: it folds or not two same-named ops that tie."""
    from torch._C._profiler import _EventType
    from torch.autograd.profiler_util import _filter_name, _rewrite_name

    def node(e):  # [name, children], a dropped op's (None, children)
        kids = []
        for c in e.children:
            if c.tag == _EventType.TorchOp:
                k = node(c)
                kids += k[1] if k[0] is None else [k]
        name = None if _filter_name(e.name) else _rewrite_name(e.name, with_wildcard=True)
        while name and len(kids) == 1 and kids[0][0] == name:
            kids = kids[0][1]
        return [name, kids]

    paths = {}

    def add(n, path):
        if path or n[0] == root:
            path = path + [n[0]]
            key = ";".join(path)
            paths[key] = paths.get(key, 0) + 1
        for k in n[1]:
            add(k, path)

    for e in prof.profiler.kineto_results.experimental_event_tree():
        if e.tag == _EventType.TorchOp:
            n = node(e)
            for k in n[1] if n[0] is None else [n]:
                add(k, [])
    return paths
