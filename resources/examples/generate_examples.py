#!/usr/bin/env python3
"""Generate hloscope's built-in example HLO modules.

Usage:
    python3 resources/examples/generate_examples.py            # (re)write every .hlo + index.json
    python3 resources/examples/generate_examples.py --selftest # gradient / Adam checks, writes nothing
    python3 resources/examples/generate_examples.py --out DIR  # write into another directory

Standard library only.  The script contains

  * a tiny tracing graph builder whose ops mirror HLO opcodes one to one and
    assert XLA's shape rules (no implicit broadcasting, exact broadcast
    dimension matching, dot_general / reduce / gather / scatter / slice / pad
    shape inference),
  * reverse-mode autodiff (VJP rules for every differentiable op used), so the
    BERT training step contains the real gradients of its loss,
  * an HLO text emitter that prints modules the way XLA prints JAX's
    ``*.before_optimizations.txt`` dumps (long form: typed operands, ``%`` names,
    descending layouts, ``name.N`` numbering, ``region_K`` reducer computations
    first, ``ENTRY %main.N`` last, ``/*index=N*/`` every five tuple elements),
  * a pure-Python evaluator used by ``--selftest`` to check every VJP rule and
    the whole (tiny-sized) BERT training step against central finite
    differences, and the Adam update against a direct reference implementation.

Output is deterministic: running the script twice gives identical files.
"""

import contextlib
import itertools
import json
import math
import os
import random
import struct
import sys

F32, S32, PRED = "f32", "s32", "pred"


# ---------------------------------------------------------------------------
# Graph builder
# ---------------------------------------------------------------------------

def prod(xs):
    r = 1
    for x in xs:
        r *= x
    return r


class Node:
    __slots__ = ("idx", "op", "dtype", "shape", "operands", "attrs", "prim",
                 "scope", "bwd", "rg", "meta")

    def __repr__(self):
        return "Node(%d %s %s%s)" % (self.idx, self.op, self.dtype, list(self.shape))


class Graph:
    """A single-computation HLO graph under construction (the ENTRY)."""

    def __init__(self, fn_name):
        self.fn = fn_name
        self.nodes = []
        self.params = []
        self.scopes = []
        self.bwd = False
        self.metadata = True

    # -- infrastructure -----------------------------------------------------
    @contextlib.contextmanager
    def scope(self, name):
        self.scopes.append(name)
        try:
            yield
        finally:
            self.scopes.pop()

    def op_name(self, scope, bwd, prim):
        path = list(scope)
        if bwd:
            if path:
                path[0] = "transpose(jvp(%s))" % path[0]
            else:
                path = ["transpose(jvp(main))"]
        return "/".join(["jit(%s)" % self.fn, "jit(main)"] + path + [prim])

    def _new(self, op, dtype, shape, operands, attrs=None, prim=None,
             diff_operands=None, meta=True):
        n = Node()
        n.idx = len(self.nodes)
        n.op = op
        n.dtype = dtype
        n.shape = tuple(shape)
        n.operands = list(operands)
        n.attrs = attrs or {}
        n.prim = prim
        n.scope = tuple(self.scopes)
        n.bwd = self.bwd
        for d in n.shape:
            assert isinstance(d, int) and d >= 0, (op, shape)
        for o in n.operands:
            assert isinstance(o, Node) and o.idx < n.idx
        src = n.operands if diff_operands is None else [n.operands[i] for i in diff_operands]
        n.rg = dtype == F32 and any(o.rg for o in src)
        n.meta = self.op_name(n.scope, n.bwd, prim) if (meta and prim and self.metadata) else None
        self.nodes.append(n)
        return n

    # -- leaves ---------------------------------------------------------------
    def param(self, dtype, shape, name, wrt=False):
        n = self._new("parameter", dtype, shape, [], {"index": len(self.params), "name": name},
                      meta=False)
        n.meta = name
        n.rg = bool(wrt)
        self.params.append(n)
        return n

    def constant(self, value, dtype=F32):
        return self._new("constant", dtype, (), [], {"value": value}, meta=False)

    def const(self, value, shape=(), dtype=F32):
        """Scalar constant, broadcast (dimensions={}) to `shape` if not scalar."""
        c = self.constant(value, dtype)
        if tuple(shape) == ():
            return c
        return self._new("broadcast", dtype, shape, [c], {"dims": []}, meta=False)

    def zeros_like(self, x):
        return self.const(0.0, x.shape, x.dtype)

    def iota(self, dtype, shape, dim, prim="iota"):
        assert 0 <= dim < len(shape)
        return self._new("iota", dtype, shape, [], {"dim": dim}, prim)

    # -- elementwise ----------------------------------------------------------
    def _ew(self, op, prim, *xs, dtype=None):
        s, d = xs[0].shape, xs[0].dtype
        for x in xs:
            assert x.shape == s and x.dtype == d, ("elementwise mismatch", op, xs)
        return self._new(op, dtype or d, s, xs, {}, prim)

    def add(self, a, b, prim="add"):
        return self._ew("add", prim, a, b)

    def sub(self, a, b, prim="sub"):
        return self._ew("subtract", prim, a, b)

    def mul(self, a, b, prim="mul"):
        return self._ew("multiply", prim, a, b)

    def div(self, a, b, prim="div"):
        return self._ew("divide", prim, a, b)

    def max(self, a, b, prim="max"):
        return self._ew("maximum", prim, a, b)

    def pow(self, a, b, prim="pow"):
        return self._ew("power", prim, a, b)

    def neg(self, a, prim="neg"):
        return self._ew("negate", prim, a)

    def exp(self, a, prim="exp"):
        return self._ew("exponential", prim, a)

    def log(self, a, prim="log"):
        return self._ew("log", prim, a)

    def tanh(self, a, prim="tanh"):
        return self._ew("tanh", prim, a)

    def rsqrt(self, a, prim="rsqrt"):
        return self._ew("rsqrt", prim, a)

    def sqrt(self, a, prim="sqrt"):
        return self._ew("sqrt", prim, a)

    def sin(self, a, prim="sin"):
        return self._ew("sine", prim, a)

    def cos(self, a, prim="cos"):
        return self._ew("cosine", prim, a)

    def compare(self, a, b, direction, prim=None):
        assert direction in ("EQ", "NE", "LT", "LE", "GT", "GE")
        assert a.shape == b.shape and a.dtype == b.dtype
        return self._new("compare", PRED, a.shape, [a, b], {"direction": direction},
                         prim or direction.lower())

    def select(self, p, a, b, prim="select_n"):
        assert p.dtype == PRED and p.shape == a.shape == b.shape and a.dtype == b.dtype
        return self._new("select", a.dtype, a.shape, [p, a, b], {}, prim, diff_operands=[1, 2])

    def convert(self, x, dtype, prim="convert_element_type"):
        return self._new("convert", dtype, x.shape, [x], {}, prim,
                         diff_operands=[0] if x.dtype == F32 else [])

    # -- shape ops ------------------------------------------------------------
    def broadcast(self, x, shape, dims, prim="broadcast_in_dim"):
        shape = tuple(shape)
        dims = list(dims)
        assert len(dims) == len(x.shape), ("broadcast rank", x, shape, dims)
        assert dims == sorted(set(dims)), dims
        for i, d in enumerate(dims):
            assert 0 <= d < len(shape) and shape[d] == x.shape[i], ("broadcast dim", x, shape, dims)
        return self._new("broadcast", x.dtype, shape, [x], {"dims": dims}, prim)

    def reshape(self, x, shape, prim="reshape"):
        assert prod(shape) == prod(x.shape), ("reshape", x, shape)
        return self._new("reshape", x.dtype, shape, [x], {}, prim)

    def transpose(self, x, perm, prim="transpose"):
        perm = list(perm)
        assert sorted(perm) == list(range(len(x.shape)))
        return self._new("transpose", x.dtype, [x.shape[p] for p in perm], [x], {"perm": perm}, prim)

    def dot(self, a, b, lc, rc, lb=(), rb=(), prim="dot_general"):
        lc, rc, lb, rb = list(lc), list(rc), list(lb), list(rb)
        assert a.dtype == b.dtype
        assert len(lc) == len(rc) and len(lb) == len(rb)
        assert len(set(lc + lb)) == len(lc + lb) and len(set(rc + rb)) == len(rc + rb)
        for i, j in zip(lc, rc):
            assert a.shape[i] == b.shape[j], ("dot contracting", a, b, lc, rc)
        for i, j in zip(lb, rb):
            assert a.shape[i] == b.shape[j], ("dot batch", a, b, lb, rb)
        lfree = [d for d in range(len(a.shape)) if d not in lc and d not in lb]
        rfree = [d for d in range(len(b.shape)) if d not in rc and d not in rb]
        shape = [a.shape[d] for d in lb] + [a.shape[d] for d in lfree] + [b.shape[d] for d in rfree]
        return self._new("dot", a.dtype, shape, [a, b], {"lc": lc, "rc": rc, "lb": lb, "rb": rb}, prim)

    def reduce(self, x, init, dims, kind, prim):
        dims = sorted(dims)
        assert init.shape == () and init.dtype == x.dtype and kind in ("add", "max")
        assert all(0 <= d < len(x.shape) for d in dims) and len(set(dims)) == len(dims)
        shape = [s for i, s in enumerate(x.shape) if i not in dims]
        n = self._new("reduce", x.dtype, shape, [x, init], {"dims": dims, "kind": kind}, prim,
                      diff_operands=[0])
        if kind == "max":
            n.rg = False  # only ever used under stop_gradient (softmax / log_softmax)
        return n

    def reduce_sum(self, x, dims, prim="reduce_sum"):
        return self.reduce(x, self.constant(0.0 if x.dtype == F32 else 0, x.dtype), dims, "add", prim)

    def reduce_max_stopgrad(self, x, dims, prim="reduce_max"):
        return self.reduce(x, self.constant(float("-inf"), x.dtype), dims, "max", prim)

    def gather(self, operand, indices, offset_dims, collapsed, start_index_map, ivd, slice_sizes,
               prim="gather"):
        assert indices.dtype == S32
        irank = len(indices.shape)
        assert 0 <= ivd <= irank
        nidx = indices.shape[ivd] if ivd < irank else 1
        assert nidx == len(start_index_map)
        assert len(slice_sizes) == len(operand.shape)
        for d in collapsed:
            assert slice_sizes[d] == 1
        for d, s in enumerate(slice_sizes):
            assert 0 <= s <= operand.shape[d]
        batch = [s for i, s in enumerate(indices.shape) if i != ivd]
        offs = [s for i, s in enumerate(slice_sizes) if i not in collapsed]
        rank = len(batch) + len(offs)
        assert len(offset_dims) == len(offs) and offset_dims == sorted(offset_dims)
        shape, bi, oi = [], iter(batch), iter(offs)
        for i in range(rank):
            shape.append(next(oi) if i in offset_dims else next(bi))
        attrs = {"offset_dims": list(offset_dims), "collapsed": list(collapsed),
                 "start_index_map": list(start_index_map), "ivd": ivd,
                 "slice_sizes": list(slice_sizes)}
        return self._new("gather", operand.dtype, shape, [operand, indices], attrs, prim,
                         diff_operands=[0])

    def scatter_add(self, operand, indices, updates, update_window_dims, inserted_window_dims,
                    sdod, ivd, prim="scatter-add"):
        assert indices.dtype == S32 and operand.dtype == updates.dtype
        irank = len(indices.shape)
        nidx = indices.shape[ivd] if ivd < irank else 1
        assert nidx == len(sdod)
        scatter_batch = [s for i, s in enumerate(indices.shape) if i != ivd]
        upd_scatter = [s for i, s in enumerate(updates.shape) if i not in update_window_dims]
        assert upd_scatter == scatter_batch, ("scatter batch", updates, indices)
        window_operand_dims = [d for d in range(len(operand.shape)) if d not in inserted_window_dims]
        assert len(window_operand_dims) == len(update_window_dims)
        for od, ud in zip(window_operand_dims, update_window_dims):
            assert updates.shape[ud] <= operand.shape[od]
        attrs = {"uwd": list(update_window_dims), "iwd": list(inserted_window_dims),
                 "sdod": list(sdod), "ivd": ivd, "kind": "add"}
        return self._new("scatter", operand.dtype, operand.shape, [operand, indices, updates],
                         attrs, prim, diff_operands=[0, 2])

    def slice(self, x, starts, limits, prim="slice"):
        assert len(starts) == len(limits) == len(x.shape)
        for s, l, d in zip(starts, limits, x.shape):
            assert 0 <= s <= l <= d
        return self._new("slice", x.dtype, [l - s for s, l in zip(starts, limits)], [x],
                         {"starts": list(starts), "limits": list(limits)}, prim)

    def pad(self, x, padval, lo, hi, prim="pad"):
        assert padval.shape == () and padval.dtype == x.dtype
        assert len(lo) == len(hi) == len(x.shape)
        shape = [l + d + h for l, d, h in zip(lo, x.shape, hi)]
        return self._new("pad", x.dtype, shape, [x, padval], {"lo": list(lo), "hi": list(hi)}, prim,
                         diff_operands=[0])

    def tuple(self, xs):
        n = self._new("tuple", "tuple", (), xs, {}, None, meta=False)
        n.attrs["shapes"] = [(x.dtype, x.shape) for x in xs]
        return n


# ---------------------------------------------------------------------------
# Reverse-mode autodiff
# ---------------------------------------------------------------------------

DOT_VJP_FORM = None  # selftest only: force one of the two dot_general transpose forms


def vjp(g, n, ct):
    """Return the list of cotangents for n.operands (None where not needed)."""
    op, xs = n.op, n.operands
    need = [o.rg for o in xs]
    out = [None] * len(xs)

    def zeros(x):
        return g.zeros_like(x)

    if op == "add":
        out = [ct if need[0] else None, ct if need[1] else None]
    elif op == "subtract":
        out = [ct if need[0] else None, g.neg(ct) if need[1] else None]
    elif op == "multiply":
        if need[0]:
            out[0] = g.mul(ct, xs[1])
        if need[1]:
            out[1] = g.mul(xs[0], ct)
    elif op == "divide":
        ga = g.div(ct, xs[1])
        if need[0]:
            out[0] = ga
        if need[1]:  # d(a/b)/db = -(a/b)/b
            out[1] = g.neg(g.mul(ga, n))
    elif op == "maximum":
        mask = g.compare(xs[0], xs[1], "GT")
        if need[0]:
            out[0] = g.select(mask, ct, zeros(ct))
        if need[1]:
            out[1] = g.select(mask, zeros(ct), ct)
    elif op == "power":
        if need[0]:  # y * x^(y-1)
            ym1 = g.sub(xs[1], g.const(1.0, n.shape))
            out[0] = g.mul(ct, g.mul(xs[1], g.pow(xs[0], ym1)))
        if need[1]:  # x^y * log(x)
            out[1] = g.mul(ct, g.mul(n, g.log(xs[0])))
    elif op == "negate":
        out = [g.neg(ct)]
    elif op == "exponential":
        out = [g.mul(ct, n)]
    elif op == "log":
        out = [g.div(ct, xs[0])]
    elif op == "tanh":
        out = [g.mul(ct, g.sub(g.const(1.0, n.shape), g.mul(n, n)))]
    elif op == "rsqrt":  # d x^-1/2 = -1/2 x^-3/2 = -1/2 * rsqrt(x) / x
        out = [g.mul(ct, g.mul(g.const(-0.5, n.shape), g.div(n, xs[0])))]
    elif op == "sqrt":
        out = [g.div(ct, g.mul(g.const(2.0, n.shape), n))]
    elif op == "sine":
        out = [g.mul(ct, g.cos(xs[0]))]
    elif op == "cosine":
        out = [g.mul(ct, g.neg(g.sin(xs[0])))]
    elif op == "select":
        if need[1]:
            out[1] = g.select(xs[0], ct, zeros(ct))
        if need[2]:
            out[2] = g.select(xs[0], zeros(ct), ct)
    elif op == "convert":
        assert xs[0].dtype == F32 and n.dtype == F32
        out = [ct]
    elif op == "broadcast":
        dims = n.attrs["dims"]
        red = [d for d in range(len(n.shape)) if d not in dims]
        r = g.reduce_sum(ct, red) if red else ct
        if r.shape != xs[0].shape:
            r = g.reshape(r, xs[0].shape)
        out = [r]
    elif op == "reshape":
        out = [g.reshape(ct, xs[0].shape)]
    elif op == "transpose":
        perm = n.attrs["perm"]
        inv = [perm.index(i) for i in range(len(perm))]
        out = [g.transpose(ct, inv)]
    elif op == "dot":
        a, b = xs
        lc, rc, lb, rb = n.attrs["lc"], n.attrs["rc"], n.attrs["lb"], n.attrs["rb"]
        nb = len(lb)
        lfree = [d for d in range(len(a.shape)) if d not in lc and d not in lb]
        rfree = [d for d in range(len(b.shape)) if d not in rc and d not in rb]
        ct_l = list(range(nb, nb + len(lfree)))
        ct_r = list(range(nb + len(lfree), nb + len(lfree) + len(rfree)))
        bidx = list(range(nb))

        def pick(forms, rank):
            # forms: [(make_dot, src)], src[k] = operand dim that result dim k holds.
            # Prefer a form whose result is already in operand order (no transpose).
            perms = [[src.index(j) for j in range(rank)] for _, src in forms]
            if DOT_VJP_FORM is not None:
                k = DOT_VJP_FORM
            else:
                k = next((i for i, p in enumerate(perms) if p == sorted(p)), 0)
            d = forms[k][0]()
            return d if perms[k] == sorted(perms[k]) else g.transpose(d, perms[k])

        if need[0]:
            out[0] = pick([
                # dot(ct, b) -> [batch, lhs-free, b's contracting dims ascending]
                (lambda: g.dot(ct, b, lc=ct_r, rc=rfree, lb=bidx, rb=rb),
                 list(lb) + lfree + [lc[rc.index(r)] for r in sorted(rc)]),
                # dot(b, ct) -> [batch, b's contracting dims ascending, lhs-free]
                (lambda: g.dot(b, ct, lc=rfree, rc=ct_r, lb=rb, rb=bidx),
                 list(lb) + [lc[rc.index(r)] for r in sorted(rc)] + lfree),
            ], len(a.shape))
        if need[1]:
            out[1] = pick([
                # dot(a, ct) -> [batch, a's contracting dims ascending, rhs-free]
                (lambda: g.dot(a, ct, lc=lfree, rc=ct_l, lb=lb, rb=bidx),
                 list(rb) + [rc[lc.index(l)] for l in sorted(lc)] + rfree),
                # dot(ct, a) -> [batch, rhs-free, a's contracting dims ascending]
                (lambda: g.dot(ct, a, lc=ct_l, rc=lfree, lb=bidx, rb=lb),
                 list(rb) + rfree + [rc[lc.index(l)] for l in sorted(lc)]),
            ], len(b.shape))
    elif op == "reduce":
        assert n.attrs["kind"] == "add"
        dims = n.attrs["dims"]
        keep = [d for d in range(len(xs[0].shape)) if d not in dims]
        out[0] = g.broadcast(ct, xs[0].shape, keep)
    elif op == "gather":
        a = n.attrs
        out[0] = g.scatter_add(zeros(xs[0]), xs[1], ct, a["offset_dims"], a["collapsed"],
                               a["start_index_map"], a["ivd"])
    elif op == "scatter":
        raise NotImplementedError("scatter VJP not needed")
    elif op == "slice":
        s, l = n.attrs["starts"], n.attrs["limits"]
        hi = [d - x for d, x in zip(xs[0].shape, l)]
        out[0] = g.pad(ct, g.constant(0.0), s, hi)
    elif op == "pad":
        lo = n.attrs["lo"]
        out[0] = g.slice(ct, lo, [l + d for l, d in zip(lo, xs[0].shape)])
    else:
        raise NotImplementedError("no VJP rule for %s" % op)
    return out


def grad(g, loss, wrt):
    """Cotangents of scalar `loss` w.r.t. each node in `wrt` (new nodes are added to g)."""
    assert loss.shape == () and loss.dtype == F32
    nodes = list(g.nodes[: loss.idx + 1])
    saved = (list(g.scopes), g.bwd)
    g.bwd = True
    g.scopes = list(loss.scope)
    cts = {loss.idx: g.const(1.0)}
    for n in reversed(nodes):
        ct = cts.get(n.idx)
        if ct is None or not n.rg or n.op == "parameter":
            continue
        del cts[n.idx]
        g.scopes = list(n.scope)
        outs = vjp(g, n, ct)
        assert len(outs) == len(n.operands)
        for o, oc in zip(n.operands, outs):
            if oc is None or not o.rg:
                continue
            assert oc.shape == o.shape and oc.dtype == o.dtype, ("bad cotangent", n, o, oc)
            if o.idx in cts:
                cts[o.idx] = g.add(cts[o.idx], oc)
            else:
                cts[o.idx] = oc
    g.scopes, g.bwd = saved
    res = []
    for w in wrt:
        c = cts.get(w.idx)
        res.append(c if c is not None else g.zeros_like(w))
    return res


# ---------------------------------------------------------------------------
# HLO text emitter
# ---------------------------------------------------------------------------

def f32_round(v):
    return struct.unpack("<f", struct.pack("<f", v))[0]


def fmt_f32(v):
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    x = f32_round(v)
    for p in range(6, 10):
        s = "%.*g" % (p, x)
        if f32_round(float(s)) == x:
            return s
    return "%.9g" % x


def fmt_const(v, dtype):
    if dtype == F32:
        return fmt_f32(float(v))
    if dtype == PRED:
        return "true" if v else "false"
    return str(int(v))


def layout(rank):
    return "{" + ",".join(str(i) for i in reversed(range(rank))) + "}"


def shape_str(dtype, shape, with_layout=True):
    if dtype == "tuple":
        return "(" + join_indexed([shape_str(d, s, with_layout) for d, s in shape]) + ")"
    s = "%s[%s]" % (dtype, ",".join(str(d) for d in shape))
    if with_layout and shape:
        s += layout(len(shape))
    return s


def human_shape(dtype, shape):
    if dtype == "tuple":
        return "(" + join_indexed([human_shape(d, s) for d, s in shape]) + ")"
    return shape_str(dtype, shape, with_layout=False)


def node_shape(n):
    if n.op == "tuple":
        return "tuple", n.attrs["shapes"]
    return n.dtype, n.shape


def join_indexed(items):
    out = []
    for i, it in enumerate(items):
        if i > 0 and i % 5 == 0:
            it = "/*index=%d*/" % i + it
        out.append(it)
    return ", ".join(out)


def braces(xs):
    return "{" + ",".join(str(x) for x in xs) + "}"


def escape(s):
    return s.replace("\\", "\\\\").replace('"', '\\"').replace("'", "\\'")


OPCODE_NAME = {"reduce": "reduce", "scatter": "scatter"}


def emit_module(g, root, module_name):
    """Return the HLO text of the module whose ENTRY root is `root`."""
    # Dead-code elimination (all parameters are kept).
    live = set()
    stack = [root]
    while stack:
        n = stack.pop()
        if n.idx in live:
            continue
        live.add(n.idx)
        stack.extend(n.operands)
    order = list(g.params) + [n for n in g.nodes if n.idx in live and n.op != "parameter"]

    counter = [0]

    def next_id():
        counter[0] += 1
        return counter[0]

    names = {}
    for p in g.params:
        names[p.idx] = "Arg_%d.%d" % (p.attrs["index"], next_id())

    regions = []  # text blocks
    region_of = {}
    lines = []
    for n in order:
        if n.op == "parameter":
            continue
        if n.op in ("reduce", "scatter"):
            rid = next_id()
            rname = "region_%d.%d" % (len(regions), rid)
            a0, a1, rr = next_id(), next_id(), next_id()
            kind = n.attrs["kind"]
            rop = {"add": "add", "max": "maximum"}[kind]
            sc = shape_str(n.dtype, ())
            meta = ', metadata={op_name="%s"}' % escape(n.meta) if n.meta else ""
            regions.append(
                "%%%s (Arg_0.%d: %s, Arg_1.%d: %s) -> %s {\n"
                "  %%Arg_0.%d = %s parameter(0)\n"
                "  %%Arg_1.%d = %s parameter(1)\n"
                "  ROOT %%%s.%d = %s %s(%s %%Arg_0.%d, %s %%Arg_1.%d)%s\n"
                "}\n" % (rname, a0, sc, a1, sc, sc, a0, sc, a1, sc,
                         rop, rr, sc, rop, sc, a0, sc, a1, meta))
            region_of[n.idx] = rname
        names[n.idx] = "%s.%d" % (n.op if n.op != "dot" else "dot", next_id())

    def opnd(o):
        return "%s %%%s" % (shape_str(*node_shape(o)), names[o.idx])

    def inst(n):
        a = n.attrs
        args = join_indexed([opnd(o) for o in n.operands])
        extra = []
        if n.op == "parameter":
            body = "parameter(%d)" % a["index"]
        elif n.op == "constant":
            body = "constant(%s)" % fmt_const(a["value"], n.dtype)
        elif n.op == "iota":
            body = "iota()"
            extra.append("iota_dimension=%d" % a["dim"])
        else:
            body = "%s(%s)" % (n.op, args)
        if n.op == "broadcast":
            extra.append("dimensions=" + braces(a["dims"]))
        elif n.op == "transpose":
            extra.append("dimensions=" + braces(a["perm"]))
        elif n.op == "dot":
            if a["lb"]:
                extra.append("lhs_batch_dims=" + braces(a["lb"]))
            extra.append("lhs_contracting_dims=" + braces(a["lc"]))
            if a["rb"]:
                extra.append("rhs_batch_dims=" + braces(a["rb"]))
            extra.append("rhs_contracting_dims=" + braces(a["rc"]))
        elif n.op == "reduce":
            extra.append("dimensions=" + braces(a["dims"]))
            extra.append("to_apply=%" + region_of[n.idx])
        elif n.op == "compare":
            extra.append("direction=" + a["direction"])
        elif n.op == "gather":
            extra += ["offset_dims=" + braces(a["offset_dims"]),
                      "collapsed_slice_dims=" + braces(a["collapsed"]),
                      "start_index_map=" + braces(a["start_index_map"]),
                      "index_vector_dim=%d" % a["ivd"],
                      "slice_sizes=" + braces(a["slice_sizes"])]
        elif n.op == "scatter":
            extra += ["update_window_dims=" + braces(a["uwd"]),
                      "inserted_window_dims=" + braces(a["iwd"]),
                      "scatter_dims_to_operand_dims=" + braces(a["sdod"]),
                      "index_vector_dim=%d" % a["ivd"],
                      "to_apply=%" + region_of[n.idx]]
        elif n.op == "slice":
            extra.append("slice={" + ", ".join("[%d:%d]" % (s, l) for s, l in
                                               zip(a["starts"], a["limits"])) + "}")
        elif n.op == "pad":
            extra.append("padding=" + "x".join("%d_%d" % (l, h) for l, h in zip(a["lo"], a["hi"])))
        if n.meta:
            extra.append('metadata={op_name="%s"}' % escape(n.meta))
        text = "%%%s = %s %s" % (names[n.idx], shape_str(*node_shape(n)), body)
        if extra:
            text += ", " + ", ".join(extra)
        return text

    for n in order:
        lines.append(("  ROOT " if n is root else "  ") + inst(n))

    entry_id = next_id()
    sig = ", ".join("%s: %s" % (names[p.idx], human_shape(p.dtype, p.shape)) for p in g.params)
    out_h = human_shape(*node_shape(root))
    layout_sig = "{(%s)->%s}" % (join_indexed([shape_str(p.dtype, p.shape) for p in g.params]),
                                 shape_str(*node_shape(root)))
    text = ["HloModule %s, entry_computation_layout=%s\n" % (module_name, layout_sig)]
    for r in regions:
        text.append("\n" + r)
    text.append("\nENTRY %%main.%d (%s) -> %s {\n" % (entry_id, sig, out_h))
    text.append("\n".join(lines) + "\n}\n\n")
    return "".join(text), len(lines) + 3 * len(regions)


# ---------------------------------------------------------------------------
# Model building blocks
# ---------------------------------------------------------------------------

def dense(g, x, w, b):
    r = len(x.shape)
    y = g.dot(x, w, lc=[r - 1], rc=[0])
    return g.add(y, g.broadcast(b, y.shape, [r - 1]))


def relu(g, x):
    return g.max(x, g.const(0.0, x.shape))


def softmax_last(g, x):
    """Numerically stable softmax over the last axis (max under stop_gradient, like jax.nn)."""
    r = len(x.shape)
    keep = list(range(r - 1))
    m = g.reduce_max_stopgrad(x, [r - 1])
    e = g.exp(g.sub(x, g.broadcast(m, x.shape, keep)))
    s = g.reduce_sum(e, [r - 1])
    return g.div(e, g.broadcast(s, x.shape, keep))


def log_softmax_last(g, x):
    r = len(x.shape)
    keep = list(range(r - 1))
    m = g.reduce_max_stopgrad(x, [r - 1])
    sh = g.sub(x, g.broadcast(m, x.shape, keep))
    lse = g.log(g.reduce_sum(g.exp(sh), [r - 1]))
    return g.sub(sh, g.broadcast(lse, x.shape, keep))


def layernorm(g, x, gamma, beta, eps):
    r = len(x.shape)
    n = x.shape[-1]
    keep = list(range(r - 1))
    red = x.shape[:-1]
    mean = g.div(g.reduce_sum(x, [r - 1]), g.const(float(n), red))
    xc = g.sub(x, g.broadcast(mean, x.shape, keep))
    var = g.div(g.reduce_sum(g.mul(xc, xc, prim="integer_pow"), [r - 1]), g.const(float(n), red))
    rstd = g.rsqrt(g.add(var, g.const(eps, red)))
    y = g.mul(xc, g.broadcast(rstd, x.shape, keep))
    y = g.mul(y, g.broadcast(gamma, x.shape, [r - 1]))
    return g.add(y, g.broadcast(beta, x.shape, [r - 1]))


def gelu_tanh(g, x):
    s = x.shape
    x3 = g.mul(x, g.mul(x, x, prim="integer_pow"), prim="integer_pow")
    inner = g.mul(g.const(math.sqrt(2.0 / math.pi), s), g.add(x, g.mul(g.const(0.044715, s), x3)))
    return g.mul(g.mul(g.const(0.5, s), x), g.add(g.const(1.0, s), g.tanh(inner)))


# ---------------------------------------------------------------------------
# BERT
# ---------------------------------------------------------------------------

BERT_BASE = dict(vocab=30522, hidden=768, heads=12, inter=3072, layers=2, batch=32, seq=128,
                 max_pos=512, type_vocab=2, eps=1e-12)


def bert_param_specs(cfg, mlm):
    H, I = cfg["hidden"], cfg["inter"]
    specs = [
        (("embeddings", "word_embeddings", "embedding"), (cfg["vocab"], H)),
        (("embeddings", "position_embeddings", "embedding"), (cfg["max_pos"], H)),
        (("embeddings", "token_type_embeddings", "embedding"), (cfg["type_vocab"], H)),
        (("embeddings", "LayerNorm", "scale"), (H,)),
        (("embeddings", "LayerNorm", "bias"), (H,)),
    ]
    for l in range(cfg["layers"]):
        p = ("encoder", "layer_%d" % l)
        for nm in ("query", "key", "value"):
            specs.append((p + ("attention", "self", nm, "kernel"), (H, H)))
            specs.append((p + ("attention", "self", nm, "bias"), (H,)))
        specs += [
            (p + ("attention", "output", "dense", "kernel"), (H, H)),
            (p + ("attention", "output", "dense", "bias"), (H,)),
            (p + ("attention", "output", "LayerNorm", "scale"), (H,)),
            (p + ("attention", "output", "LayerNorm", "bias"), (H,)),
            (p + ("intermediate", "dense", "kernel"), (H, I)),
            (p + ("intermediate", "dense", "bias"), (I,)),
            (p + ("output", "dense", "kernel"), (I, H)),
            (p + ("output", "dense", "bias"), (H,)),
            (p + ("output", "LayerNorm", "scale"), (H,)),
            (p + ("output", "LayerNorm", "bias"), (H,)),
        ]
    if mlm:
        specs += [
            (("cls", "predictions", "transform", "dense", "kernel"), (H, H)),
            (("cls", "predictions", "transform", "dense", "bias"), (H,)),
            (("cls", "predictions", "transform", "LayerNorm", "scale"), (H,)),
            (("cls", "predictions", "transform", "LayerNorm", "bias"), (H,)),
            (("cls", "predictions", "bias"), (cfg["vocab"],)),
        ]
    return specs


def path_name(root, path):
    return root + "".join("['%s']" % k for k in path)


def bert_encoder(g, cfg, P, ids, tt_ids, mask):
    B, S, H, NH = cfg["batch"], cfg["seq"], cfg["hidden"], cfg["heads"]
    D = H // NH
    eps = cfg["eps"]
    with g.scope("bert"):
        with g.scope("embeddings"):
            with g.scope("word_embeddings"):
                idx = g.reshape(ids, (B, S, 1), prim="broadcast_in_dim")
                we = g.gather(P["embeddings", "word_embeddings", "embedding"], idx, offset_dims=[2],
                              collapsed=[0], start_index_map=[0], ivd=2, slice_sizes=[1, H])
            with g.scope("position_embeddings"):
                pos = g.slice(P["embeddings", "position_embeddings", "embedding"], [0, 0], [S, H])
                pe = g.broadcast(pos, (B, S, H), [1, 2])
            with g.scope("token_type_embeddings"):
                tidx = g.reshape(tt_ids, (B, S, 1), prim="broadcast_in_dim")
                te = g.gather(P["embeddings", "token_type_embeddings", "embedding"], tidx,
                              offset_dims=[2], collapsed=[0], start_index_map=[0], ivd=2,
                              slice_sizes=[1, H])
            x = g.add(g.add(we, pe), te)
            with g.scope("LayerNorm"):
                x = layernorm(g, x, P["embeddings", "LayerNorm", "scale"],
                              P["embeddings", "LayerNorm", "bias"], eps)
        with g.scope("attention_mask"):
            keep = g.compare(mask, g.const(0, (B, S), S32), "GT")
            bias = g.select(keep, g.const(0.0, (B, S)), g.const(-10000.0, (B, S)))
        with g.scope("encoder"):
            for l in range(cfg["layers"]):
                p = ("encoder", "layer_%d" % l)
                with g.scope("layer_%d" % l):
                    with g.scope("attention"):
                        with g.scope("self"):
                            qkv = []
                            for nm in ("query", "key", "value"):
                                with g.scope(nm):
                                    t = dense(g, x, P[p + ("attention", "self", nm, "kernel")],
                                              P[p + ("attention", "self", nm, "bias")])
                                    qkv.append(g.reshape(t, (B, S, NH, D)))
                            q, k, v = qkv
                            q = g.mul(q, g.const(1.0 / math.sqrt(D), q.shape))
                            s = g.dot(q, k, lc=[3], rc=[3], lb=[0, 2], rb=[0, 2])  # [B,NH,S,S]
                            s = g.add(s, g.broadcast(bias, s.shape, [0, 3]))
                            pr = softmax_last(g, s)
                            c = g.dot(pr, v, lc=[3], rc=[1], lb=[0, 1], rb=[0, 2])  # [B,NH,S,D]
                            c = g.transpose(c, [0, 2, 1, 3])
                            c = g.reshape(c, (B, S, H))
                        with g.scope("output"):
                            with g.scope("dense"):
                                o = dense(g, c, P[p + ("attention", "output", "dense", "kernel")],
                                          P[p + ("attention", "output", "dense", "bias")])
                            with g.scope("LayerNorm"):
                                x = layernorm(g, g.add(o, x),
                                              P[p + ("attention", "output", "LayerNorm", "scale")],
                                              P[p + ("attention", "output", "LayerNorm", "bias")],
                                              eps)
                    with g.scope("intermediate"):
                        h = dense(g, x, P[p + ("intermediate", "dense", "kernel")],
                                  P[p + ("intermediate", "dense", "bias")])
                        h = gelu_tanh(g, h)
                    with g.scope("output"):
                        with g.scope("dense"):
                            f = dense(g, h, P[p + ("output", "dense", "kernel")],
                                      P[p + ("output", "dense", "bias")])
                        with g.scope("LayerNorm"):
                            x = layernorm(g, g.add(f, x), P[p + ("output", "LayerNorm", "scale")],
                                          P[p + ("output", "LayerNorm", "bias")], eps)
    return x


def mlm_loss(g, cfg, P, x, labels):
    B, S, V = cfg["batch"], cfg["seq"], cfg["vocab"]
    with g.scope("cls"):
        with g.scope("predictions"):
            with g.scope("transform"):
                h = dense(g, x, P["cls", "predictions", "transform", "dense", "kernel"],
                          P["cls", "predictions", "transform", "dense", "bias"])
                h = gelu_tanh(g, h)
                h = layernorm(g, h, P["cls", "predictions", "transform", "LayerNorm", "scale"],
                              P["cls", "predictions", "transform", "LayerNorm", "bias"], cfg["eps"])
            with g.scope("decoder"):
                # Output projection tied to the word embedding table.
                logits = g.dot(h, P["embeddings", "word_embeddings", "embedding"], lc=[2], rc=[1])
                logits = g.add(logits, g.broadcast(P["cls", "predictions", "bias"], logits.shape, [2]))
    with g.scope("loss"):
        logp = log_softmax_last(g, logits)
        lab = g.broadcast(labels, (B, S, V), [0, 1])
        onehot = g.convert(g.compare(lab, g.iota(S32, (B, S, V), 2), "EQ"), F32)
        nll = g.neg(g.reduce_sum(g.mul(onehot, logp), [2]))
        loss = g.div(g.reduce_sum(nll, [0, 1]), g.const(float(B * S)), prim="div")
    return loss


ADAM = dict(lr=1e-4, b1=0.9, b2=0.999, eps=1e-8)


def adam_update(g, params, grads, ms, vs, step):
    lr, b1, b2, eps = ADAM["lr"], ADAM["b1"], ADAM["b2"], ADAM["eps"]
    with g.scope("adam"):
        t = g.convert(step, F32)
        bc1 = g.sub(g.const(1.0), g.pow(g.const(b1), t))
        bc2 = g.sub(g.const(1.0), g.pow(g.const(b2), t))
        new_p, new_m, new_v = [], [], []
        for p, gr, m, v in zip(params, grads, ms, vs):
            s = p.shape
            dims = []
            m1 = g.add(g.mul(g.const(b1, s), m), g.mul(g.const(1.0 - b1, s), gr))
            v1 = g.add(g.mul(g.const(b2, s), v),
                       g.mul(g.const(1.0 - b2, s), g.mul(gr, gr, prim="integer_pow")))
            mhat = g.div(m1, g.broadcast(bc1, s, dims))
            vhat = g.div(v1, g.broadcast(bc2, s, dims))
            upd = g.div(mhat, g.add(g.sqrt(vhat), g.const(eps, s)))
            p1 = g.sub(p, g.mul(g.const(lr, s), upd))
            new_p.append(p1)
            new_m.append(m1)
            new_v.append(v1)
    return new_p, new_m, new_v


def build_bert_forward(cfg, metadata=True):
    g = Graph("bert_encoder")
    g.metadata = metadata
    B, S = cfg["batch"], cfg["seq"]
    specs = bert_param_specs(cfg, mlm=False)
    P = {path: g.param(F32, shape, path_name("params", path)) for path, shape in specs}
    ids = g.param(S32, (B, S), "input_ids")
    tt = g.param(S32, (B, S), "token_type_ids")
    mask = g.param(S32, (B, S), "attention_mask")
    x = bert_encoder(g, cfg, P, ids, tt, mask)
    return g, x


def build_bert_train_step(cfg, metadata=True):
    g = Graph("train_step")
    g.metadata = metadata
    B, S = cfg["batch"], cfg["seq"]
    specs = bert_param_specs(cfg, mlm=True)
    P = {path: g.param(F32, shape, path_name("params", path), wrt=True) for path, shape in specs}
    M = {path: g.param(F32, shape, path_name("opt_state['mu']", path)) for path, shape in specs}
    Vs = {path: g.param(F32, shape, path_name("opt_state['nu']", path)) for path, shape in specs}
    step = g.param(S32, (), "step")
    ids = g.param(S32, (B, S), "batch['input_ids']")
    tt = g.param(S32, (B, S), "batch['token_type_ids']")
    mask = g.param(S32, (B, S), "batch['attention_mask']")
    labels = g.param(S32, (B, S), "batch['labels']")
    x = bert_encoder(g, cfg, P, ids, tt, mask)
    loss = mlm_loss(g, cfg, P, x, labels)
    plist = [P[p] for p, _ in specs]
    grads = grad(g, loss, plist)
    new_p, new_m, new_v = adam_update(g, plist, grads, [M[p] for p, _ in specs],
                                      [Vs[p] for p, _ in specs], step)
    root = g.tuple([loss] + new_p + new_m + new_v)
    info = dict(loss=loss, params=plist, grads=grads, m=[M[p] for p, _ in specs],
                v=[Vs[p] for p, _ in specs], step=step, ids=ids, tt=tt, mask=mask, labels=labels,
                new_p=new_p, new_m=new_m, new_v=new_v, specs=specs)
    return g, root, info


# ---------------------------------------------------------------------------
# Small examples
# ---------------------------------------------------------------------------

def build_mlp():
    g = Graph("mlp")
    x = g.param(F32, (64, 784), "x")
    ws = []
    dims = [784, 512, 256, 10]
    for i in range(3):
        w = g.param(F32, (dims[i], dims[i + 1]), "params['dense_%d']['kernel']" % i)
        b = g.param(F32, (dims[i + 1],), "params['dense_%d']['bias']" % i)
        ws.append((w, b))
    h = x
    for i, (w, b) in enumerate(ws):
        with g.scope("dense_%d" % i):
            h = dense(g, h, w, b)
        if i < 2:
            h = relu(g, h)
    return g, softmax_last(g, h)


def build_relu_matmul_bias():
    g = Graph("relu_matmul_bias")
    x = g.param(F32, (128, 256), "x")
    w = g.param(F32, (256, 512), "w")
    b = g.param(F32, (512,), "b")
    return g, relu(g, dense(g, x, w, b))


def build_sin_plus_exp():
    g = Graph("sin_plus_exp")
    x = g.param(F32, (1024,), "x")
    return g, g.add(g.sin(x), g.exp(x))


def build_polynomial():
    g = Graph("polynomial")
    x = g.param(F32, (1024,), "x")
    s = x.shape
    y = g.add(g.mul(x, x), g.mul(g.const(2.0, s), x))
    return g, g.add(y, g.const(1.0, s))


def build_mean_relu_squared():
    g = Graph("mean_relu_squared")
    x = g.param(F32, (1024, 1024), "x")
    r = relu(g, x)
    sq = g.mul(r, r, prim="integer_pow")
    total = g.reduce_sum(sq, [0, 1])
    return g, g.div(total, g.const(float(1024 * 1024)))


def build_softmax():
    g = Graph("softmax")
    x = g.param(F32, (32, 128, 1000), "x")
    return g, softmax_last(g, x)


def build_layernorm():
    g = Graph("layernorm")
    x = g.param(F32, (32, 128, 768), "x")
    gamma = g.param(F32, (768,), "gamma")
    beta = g.param(F32, (768,), "beta")
    return g, layernorm(g, x, gamma, beta, 1e-12)


EXAMPLES = [
    ("sin_plus_exp", "jit_sin_plus_exp", build_sin_plus_exp, "sin(x) + exp(x)",
     "Element-wise sine plus exponential of a f32[1024] vector."),
    ("polynomial", "jit_polynomial", build_polynomial, "Polynomial x*x + 2*x + 1",
     "Element-wise polynomial on f32[1024]: scalar constants broadcast to the vector shape."),
    ("relu_matmul_bias", "jit_relu_matmul_bias", build_relu_matmul_bias, "relu(x @ w + b)",
     "Dense layer f32[128,256] x f32[256,512] plus bias f32[512], followed by ReLU."),
    ("mean_relu_squared", "jit_mean_relu_squared", build_mean_relu_squared, "mean(relu(x)**2)",
     "ReLU, square and a full reduction (reduce add over both dims) of f32[1024,1024] to a scalar mean."),
    ("softmax", "jit_softmax", build_softmax, "Softmax",
     "Numerically stable softmax over the last axis of f32[32,128,1000] (reduce max, subtract, exp, reduce sum, divide)."),
    ("layernorm", "jit_layernorm", build_layernorm, "Layer normalization",
     "Layer normalization over the last axis of f32[32,128,768] with gamma/beta, eps 1e-12."),
    ("mlp", "jit_mlp", build_mlp, "3-layer MLP",
     "MLP f32[64,784] -> 512 -> 256 -> 10 with biases, ReLU between layers and a softmax output."),
    ("bert_encoder_forward", "jit_bert_encoder",
     lambda: build_bert_forward(BERT_BASE), "BERT encoder (forward)",
     "2-layer BERT-base-sized encoder (vocab 30522, hidden 768, 12 heads, FFN 3072, GELU) on "
     "batch 32 x seq 128: gather embeddings, masked self-attention, residual + LayerNorm; returns "
     "the final hidden states f32[32,128,768]."),
    ("bert_encoder_train_step", "jit_train_step", None, "BERT MLM training step (Adam)",
     "The same encoder plus a tied-embedding masked-LM head and softmax cross-entropy loss, the full "
     "backward pass (reverse-mode autodiff) and an Adam update of all 42 parameters; returns "
     "(loss, new params, new m, new v)."),
]


def generate(out_dir):
    index = []
    report = []
    for name, module, builder, title, desc in EXAMPLES:
        if builder is None:
            g, root, _ = build_bert_train_step(BERT_BASE)
        else:
            g, root = builder()
        text, ninst = emit_module(g, root, module)
        path = os.path.join(out_dir, name + ".hlo")
        with open(path, "w", newline="\n") as f:
            f.write(text)
        index.append({"name": name, "file": name + ".hlo", "title": title, "description": desc})
        report.append((name + ".hlo", len(text.encode()), ninst))
    with open(os.path.join(out_dir, "index.json"), "w", newline="\n") as f:
        json.dump(index, f, indent=2)
        f.write("\n")
    for fn, size, ninst in report:
        print("%-30s %9d bytes %6d instructions" % (fn, size, ninst))


# ---------------------------------------------------------------------------
# Self-test: pure-Python evaluator, finite differences
# ---------------------------------------------------------------------------

def strides(shape):
    st = [1] * len(shape)
    for i in range(len(shape) - 2, -1, -1):
        st[i] = st[i + 1] * shape[i + 1]
    return st


def indices(shape):
    return itertools.product(*[range(d) for d in shape])


def ravel(mi, st):
    return sum(i * s for i, s in zip(mi, st))


UNARY = {
    "negate": lambda a: -a, "exponential": math.exp, "log": math.log, "tanh": math.tanh,
    "rsqrt": lambda a: 1.0 / math.sqrt(a), "sqrt": math.sqrt, "sine": math.sin, "cosine": math.cos,
}
BINARY = {
    "add": lambda a, b: a + b, "subtract": lambda a, b: a - b, "multiply": lambda a, b: a * b,
    "divide": lambda a, b: a / b, "maximum": max, "power": lambda a, b: a ** b,
}
CMP = {"EQ": lambda a, b: a == b, "NE": lambda a, b: a != b, "LT": lambda a, b: a < b,
       "LE": lambda a, b: a <= b, "GT": lambda a, b: a > b, "GE": lambda a, b: a >= b}


def eval_node(n, args):
    op, a, sh = n.op, n.attrs, n.shape
    if op == "constant":
        return [a["value"]]
    if op in UNARY:
        return [UNARY[op](x) for x in args[0]]
    if op in BINARY:
        f = BINARY[op]
        return [f(x, y) for x, y in zip(args[0], args[1])]
    if op == "compare":
        f = CMP[a["direction"]]
        return [f(x, y) for x, y in zip(args[0], args[1])]
    if op == "select":
        return [x if p else y for p, x, y in zip(*args)]
    if op == "convert":
        conv = {F32: float, S32: int, PRED: bool}[n.dtype]
        return [conv(x) for x in args[0]]
    if op == "reshape":
        return list(args[0])
    xs = n.operands
    if op == "broadcast":
        ost = strides(xs[0].shape)
        return [args[0][sum(mi[d] * s for d, s in zip(a["dims"], ost))] for mi in indices(sh)]
    if op == "transpose":
        ost = strides(xs[0].shape)
        perm = a["perm"]
        return [args[0][sum(mi[j] * ost[perm[j]] for j in range(len(perm)))] for mi in indices(sh)]
    if op == "iota":
        return [mi[a["dim"]] for mi in indices(sh)]
    if op == "dot":
        A, B = args
        ash, bsh = xs[0].shape, xs[1].shape
        ast, bst = strides(ash), strides(bsh)
        lc, rc, lb, rb = a["lc"], a["rc"], a["lb"], a["rb"]
        lfree = [d for d in range(len(ash)) if d not in lc and d not in lb]
        rfree = [d for d in range(len(bsh)) if d not in rc and d not in rb]
        csh = [ash[d] for d in lc]
        out = []
        for mi in indices(sh):
            ai = [0] * len(ash)
            bi = [0] * len(bsh)
            k = 0
            for d1, d2 in zip(lb, rb):
                ai[d1] = mi[k]
                bi[d2] = mi[k]
                k += 1
            for d in lfree:
                ai[d] = mi[k]
                k += 1
            for d in rfree:
                bi[d] = mi[k]
                k += 1
            acc = 0.0
            for ci in indices(csh):
                for j, (d1, d2) in enumerate(zip(lc, rc)):
                    ai[d1] = ci[j]
                    bi[d2] = ci[j]
                acc += A[ravel(ai, ast)] * B[ravel(bi, bst)]
            out.append(acc)
        return out
    if op == "reduce":
        dims = a["dims"]
        f = {"add": lambda x, y: x + y, "max": max}[a["kind"]]
        st = strides(sh)
        out = [args[1][0]] * prod(sh)
        for v, mi in zip(args[0], indices(xs[0].shape)):
            k = ravel([i for d, i in enumerate(mi) if d not in dims], st)
            out[k] = f(out[k], v)
        return out
    if op == "gather":
        # Supported form: indices[..., 1] selecting along operand dim 0, full trailing slices.
        assert a["collapsed"] == [0] and a["start_index_map"] == [0]
        assert a["ivd"] == len(xs[1].shape) - 1 and xs[1].shape[-1] == 1
        assert a["slice_sizes"][1:] == list(xs[0].shape[1:])
        nb = len(xs[1].shape) - 1
        assert a["offset_dims"] == list(range(nb, len(sh)))
        ost = strides(xs[0].shape)
        ist = strides(xs[1].shape)
        out = []
        for mi in indices(sh):
            row = args[1][ravel(list(mi[:nb]) + [0], ist)]
            assert 0 <= row < xs[0].shape[0]
            out.append(args[0][ravel([row] + list(mi[nb:]), ost)])
        return out
    if op == "scatter":
        assert a["iwd"] == [0] and a["sdod"] == [0] and a["ivd"] == len(xs[1].shape) - 1
        nb = len(xs[1].shape) - 1
        assert a["uwd"] == list(range(nb, len(xs[2].shape)))
        out = list(args[0])
        st = strides(sh)
        ist = strides(xs[1].shape)
        for v, mi in zip(args[2], indices(xs[2].shape)):
            row = args[1][ravel(list(mi[:nb]) + [0], ist)]
            k = ravel([row] + list(mi[nb:]), st)
            out[k] = out[k] + v
        return out
    if op == "slice":
        ost = strides(xs[0].shape)
        return [args[0][ravel([i + s for i, s in zip(mi, a["starts"])], ost)] for mi in indices(sh)]
    if op == "pad":
        out = [args[1][0]] * prod(sh)
        st = strides(sh)
        for v, mi in zip(args[0], indices(xs[0].shape)):
            out[ravel([i + l for i, l in zip(mi, a["lo"])], st)] = v
        return out
    if op == "tuple":
        return list(args)
    raise NotImplementedError(op)


def evaluate(g, targets, inputs):
    need = set()
    stack = list(targets)
    while stack:
        n = stack.pop()
        if n.idx in need:
            continue
        need.add(n.idx)
        stack.extend(n.operands)
    vals = {}
    for n in g.nodes:
        if n.idx not in need:
            continue
        if n.op == "parameter":
            v = inputs[n.attrs["index"]]
            assert len(v) == prod(n.shape)
        else:
            v = eval_node(n, [vals[o.idx] for o in n.operands])
        vals[n.idx] = v
    return [vals[t.idx] for t in targets]


def rel_err(a, b):
    return abs(a - b) / max(1e-6, abs(a) + abs(b))


def check_grads(g, loss, wrt, inputs, rng, max_entries=None, h=1e-5, tol=2e-5, label=""):
    grads = grad(g, loss, wrt)
    gv = evaluate(g, grads, inputs)
    worst = 0.0
    checked = 0
    for w, gw in zip(wrt, gv):
        k = w.attrs["index"]
        ents = list(range(len(inputs[k])))
        if max_entries is not None and len(ents) > max_entries:
            ents = rng.sample(ents, max_entries)
        for e in ents:
            orig = inputs[k][e]
            inputs[k][e] = orig + h
            lp = evaluate(g, [loss], inputs)[0][0]
            inputs[k][e] = orig - h
            lm = evaluate(g, [loss], inputs)[0][0]
            inputs[k][e] = orig
            fd = (lp - lm) / (2 * h)
            err = rel_err(fd, gw[e])
            worst = max(worst, err)
            checked += 1
            if err > tol and abs(fd - gw[e]) > 1e-8:
                raise AssertionError("%s: grad mismatch for %s[%d]: autodiff %r vs FD %r"
                                     % (label, w.meta, e, gw[e], fd))
    return worst, checked


def rand_inputs(g, rng, positive=False):
    vals = []
    for p in g.params:
        n = prod(p.shape)
        if p.dtype == F32:
            if positive:
                vals.append([rng.uniform(0.5, 2.0) for _ in range(n)])
            else:
                vals.append([rng.uniform(-1.0, 1.0) for _ in range(n)])
        else:
            vals.append([0] * n)
    return vals


def op_tests():
    """Each case: builder(g, x_params) -> output node; loss = sum(out * random weights)."""

    def mk(shapes, fn, positive=False, int_inputs=None):
        return (shapes, fn, positive, int_inputs or {})

    cases = {
        "add": mk([(2, 3), (2, 3)], lambda g, a, b: g.add(a, b)),
        "subtract": mk([(2, 3), (2, 3)], lambda g, a, b: g.sub(a, b)),
        "multiply": mk([(2, 3), (2, 3)], lambda g, a, b: g.mul(a, b)),
        "multiply_same": mk([(2, 3)], lambda g, a: g.mul(a, a)),
        "divide": mk([(2, 3), (2, 3)], lambda g, a, b: g.div(a, b), positive=True),
        "maximum": mk([(3, 4), (3, 4)], lambda g, a, b: g.max(a, b)),
        "relu": mk([(3, 4)], lambda g, a: relu(g, a)),
        "power": mk([(2, 3), (2, 3)], lambda g, a, b: g.pow(a, b), positive=True),
        "negate": mk([(4,)], lambda g, a: g.neg(a)),
        "exponential": mk([(4,)], lambda g, a: g.exp(a)),
        "log": mk([(4,)], lambda g, a: g.log(a), positive=True),
        "tanh": mk([(4,)], lambda g, a: g.tanh(a)),
        "rsqrt": mk([(4,)], lambda g, a: g.rsqrt(a), positive=True),
        "sqrt": mk([(4,)], lambda g, a: g.sqrt(a), positive=True),
        "sine": mk([(4,)], lambda g, a: g.sin(a)),
        "cosine": mk([(4,)], lambda g, a: g.cos(a)),
        "select": mk([(2, 3), (2, 3), (2, 3)],
                     lambda g, a, b, c: g.select(g.compare(a, g.zeros_like(a), "GT"), b, c)),
        "convert": mk([(3,)], lambda g, a: g.convert(a, F32)),
        "broadcast": mk([(3,)], lambda g, a: g.broadcast(a, (2, 3, 4), [1])),
        "broadcast_scalar": mk([()], lambda g, a: g.broadcast(a, (2, 3), [])),
        "reshape": mk([(2, 6)], lambda g, a: g.reshape(a, (3, 2, 2))),
        "transpose": mk([(2, 3, 4)], lambda g, a: g.transpose(a, [2, 0, 1])),
        "dot_matmul": mk([(2, 3), (3, 4)], lambda g, a, b: g.dot(a, b, lc=[1], rc=[0])),
        "dot_dense3d": mk([(2, 3, 4), (4, 5)], lambda g, a, b: g.dot(a, b, lc=[2], rc=[0])),
        "dot_transposed": mk([(3, 2), (4, 3)], lambda g, a, b: g.dot(a, b, lc=[0], rc=[1])),
        "dot_attn_scores": mk([(2, 3, 2, 4), (2, 5, 2, 4)],
                              lambda g, a, b: g.dot(a, b, lc=[3], rc=[3], lb=[0, 2], rb=[0, 2])),
        "dot_attn_context": mk([(2, 2, 3, 5), (2, 5, 2, 4)],
                               lambda g, a, b: g.dot(a, b, lc=[3], rc=[1], lb=[0, 1], rb=[0, 2])),
        "dot_multi_contract": mk([(2, 3, 4), (4, 5, 3)],
                                 lambda g, a, b: g.dot(a, b, lc=[2, 1], rc=[0, 2])),
        "reduce_sum": mk([(2, 3, 4)], lambda g, a: g.reduce_sum(a, [0, 2])),
        "reduce_sum_all": mk([(2, 3)], lambda g, a: g.reduce_sum(a, [0, 1])),
        "slice": mk([(5, 3)], lambda g, a: g.slice(a, [1, 0], [4, 2])),
        "pad": mk([(2, 3)], lambda g, a: g.pad(a, g.constant(0.0), [1, 0], [2, 1])),
        "softmax": mk([(2, 5)], lambda g, a: softmax_last(g, a)),
        "log_softmax": mk([(2, 5)], lambda g, a: log_softmax_last(g, a)),
        "layernorm": mk([(2, 3, 6), (6,), (6,)], lambda g, a, b, c: layernorm(g, a, b, c, 1e-12)),
        "gelu_tanh": mk([(7,)], lambda g, a: gelu_tanh(g, a)),
    }
    rng = random.Random(1234)
    total = 0
    for name, (shapes, fn, positive, _) in sorted(cases.items()):
        g = Graph("test")
        xs = [g.param(F32, s, "x%d" % i, wrt=True) for i, s in enumerate(shapes)]
        out = fn(g, *xs)
        w = g.param(F32, out.shape, "w")
        loss = g.reduce_sum(g.mul(out, w), list(range(len(out.shape))))
        inputs = rand_inputs(g, rng, positive)
        inputs[-1] = [rng.uniform(-1, 1) for _ in inputs[-1]]
        worst, n = check_grads(g, loss, xs, inputs, rng, label=name)
        total += n
        print("  VJP %-20s ok (%3d entries, max rel err %.1e)" % (name, n, worst))

    # gather -> scatter-add VJP (embedding lookup), including repeated indices.
    g = Graph("test")
    table = g.param(F32, (5, 3), "table", wrt=True)
    ids = g.param(S32, (2, 4), "ids")
    out = g.gather(table, g.reshape(ids, (2, 4, 1)), offset_dims=[2], collapsed=[0],
                   start_index_map=[0], ivd=2, slice_sizes=[1, 3])
    w = g.param(F32, out.shape, "w")
    loss = g.reduce_sum(g.mul(out, w), [0, 1, 2])
    inputs = rand_inputs(g, rng)
    inputs[1] = [0, 3, 3, 1, 4, 0, 0, 2]
    inputs[2] = [rng.uniform(-1, 1) for _ in inputs[2]]
    worst, n = check_grads(g, loss, [table], inputs, rng, label="gather")
    total += n
    print("  VJP %-20s ok (%3d entries, max rel err %.1e)" % ("gather/scatter-add", n, worst))
    return total


TINY = dict(vocab=13, hidden=8, heads=2, inter=12, layers=2, batch=2, seq=3, max_pos=5,
            type_vocab=2, eps=1e-12)


def bert_selftest():
    cfg = TINY
    rng = random.Random(42)
    g, root, info = build_bert_train_step(cfg)
    inputs = []
    for p in g.params:
        n = prod(p.shape)
        if p.dtype == F32:
            inputs.append([rng.gauss(0.0, 0.5) for _ in range(n)])
        else:
            inputs.append([0] * n)
    B, S = cfg["batch"], cfg["seq"]
    inputs[info["ids"].attrs["index"]] = [rng.randrange(cfg["vocab"]) for _ in range(B * S)]
    inputs[info["ids"].attrs["index"]][1] = inputs[info["ids"].attrs["index"]][4]  # repeated id
    inputs[info["tt"].attrs["index"]] = [rng.randrange(cfg["type_vocab"]) for _ in range(B * S)]
    inputs[info["mask"].attrs["index"]] = [1, 1, 0, 1, 1, 1]
    inputs[info["labels"].attrs["index"]] = [rng.randrange(cfg["vocab"]) for _ in range(B * S)]
    for v in info["v"]:  # second moments must be non-negative
        k = v.attrs["index"]
        inputs[k] = [abs(x) * 1e-3 for x in inputs[k]]
    step = 3
    inputs[info["step"].attrs["index"]] = [step]

    # 1. The gradients embedded in the train step (graph nodes info["grads"]) vs FD.
    gv = evaluate(g, info["grads"], inputs)
    loss0 = evaluate(g, [info["loss"]], inputs)[0][0]
    worst, checked = 0.0, 0
    h = 1e-5
    for w, gw in zip(info["params"], gv):
        k = w.attrs["index"]
        ents = list(range(len(inputs[k])))
        if len(ents) > 12:
            ents = rng.sample(ents, 12)
        for e in ents:
            orig = inputs[k][e]
            inputs[k][e] = orig + h
            lp = evaluate(g, [info["loss"]], inputs)[0][0]
            inputs[k][e] = orig - h
            lm = evaluate(g, [info["loss"]], inputs)[0][0]
            inputs[k][e] = orig
            fd = (lp - lm) / (2 * h)
            err = rel_err(fd, gw[e])
            if err > 1e-4 and abs(fd - gw[e]) > 1e-8:
                raise AssertionError("BERT grad mismatch %s[%d]: %r vs FD %r" % (w.meta, e, gw[e], fd))
            worst = max(worst, err if abs(fd - gw[e]) > 1e-10 else 0.0)
            checked += 1
    print("  tiny BERT train step: loss %.6f, %d gradient entries across %d params match "
          "central differences (max rel err %.1e)" % (loss0, checked, len(info["params"]), worst))

    # 2. The Adam update outputs vs a direct reference implementation.
    outs = evaluate(g, [root], inputs)[0]
    lr, b1, b2, eps = ADAM["lr"], ADAM["b1"], ADAM["b2"], ADAM["eps"]
    assert abs(outs[0][0] - loss0) < 1e-12
    np_ = len(info["params"])
    max_d = 0.0
    for i, (w, gw) in enumerate(zip(info["params"], gv)):
        pv = inputs[w.attrs["index"]]
        mv = inputs[info["m"][i].attrs["index"]]
        vv = inputs[info["v"][i].attrs["index"]]
        for e in range(len(pv)):
            m1 = b1 * mv[e] + (1 - b1) * gw[e]
            v1 = b2 * vv[e] + (1 - b2) * gw[e] ** 2
            mh = m1 / (1 - b1 ** step)
            vh = v1 / (1 - b2 ** step)
            p1 = pv[e] - lr * mh / (math.sqrt(vh) + eps)
            for got, want in ((outs[1 + i][e], p1), (outs[1 + np_ + i][e], m1),
                              (outs[1 + 2 * np_ + i][e], v1)):
                d = abs(got - want)
                max_d = max(max_d, d)
                assert d <= 1e-12 * max(1.0, abs(want)), (w.meta, e, got, want)
    print("  tiny BERT train step: Adam outputs (new params, m, v) match the reference "
          "implementation (max abs diff %.1e)" % max_d)

    # 3. Forward model builds and emits with the tiny config too.
    gf, xf = build_bert_forward(cfg)
    emit_module(gf, xf, "jit_bert_encoder")
    emit_module(g, root, "jit_train_step")


def selftest():
    global DOT_VJP_FORM
    print("per-op VJP checks (central differences, float64):")
    op_tests()
    for form in (0, 1):
        DOT_VJP_FORM = form
        print("per-op VJP checks with dot_general transpose form %d forced:" % form)
        op_tests()
    DOT_VJP_FORM = None
    print("whole-model checks:")
    bert_selftest()
    print("selftest passed")


def main(argv):
    out_dir = os.path.dirname(os.path.abspath(__file__))
    if "--out" in argv:
        out_dir = argv[argv.index("--out") + 1]
    if "--selftest" in argv:
        selftest()
        return 0
    generate(out_dir)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
