"""Batch evaluation of compiled checks: their IR as one register program, run by numba.

The closures of ``_compile`` evaluate one check with a few numpy calls per operation, which costs
microseconds of Python per operation whatever the number of points.  Here every check a monitor
evaluates on one env becomes a single straight-line program over registers (common
subexpressions shared), interpreted by one numba loop over the points: the same mid-radius
arithmetic as the closures, without the per-call overhead.  Without numba the closures are used.
"""

from __future__ import annotations

import numpy as np

from ._compile import SAFETY, Verdict
from ._kernels import HAVE_NUMBA

__all__ = ["Program", "build_program", "HAVE_NUMBA"]

LOAD, CONST, ADD, MUL, RECIP, SQRT, ABS, MAX, MIN, IPOW = range(10)
_RELS = {">=": 0, ">": 1, "<=": 2, "<": 3, "=": 4, "!=": 5}


class Program:
    """Instructions, constants, slot order and relation outputs for a tuple of checks."""

    def __init__(self, checks):
        self.checks = checks
        self.code = []
        self.consts = []
        self.slots = []
        self._slot_index = {}
        self._memo = {}
        self.nregs = 0
        self.rels = []  # (lhs register, rhs register, relation code)
        self.trees = []  # per check: the tree with relation nodes replaced by their index
        for c in checks:
            self.trees.append(self._tree(c.tree))
        self.code_arr = np.array(self.code, dtype=np.int64).reshape(-1, 4)
        self.cv = np.array([v for v, _ in self.consts] or [0.0])
        self.cr = np.array([r for _, r in self.consts] or [0.0])
        self.rels_arr = np.array(self.rels, dtype=np.int64).reshape(-1, 3)

    def _reg(self) -> int:
        self.nregs += 1
        return self.nregs - 1

    def _emit(self, op, a=0, b=0) -> int:
        dst = self._reg()
        self.code.append((op, dst, a, b))
        return dst

    def _node(self, node) -> int:
        key = node
        if key in self._memo:
            return self._memo[key]
        tag = node[0]
        if tag == "const":
            from ._compile import _f_const
            v, r = _f_const(node[1])(None)
            self.consts.append((v, r))
            reg = self._emit(CONST, len(self.consts) - 1)
        elif tag == "slot":
            if node[1] not in self._slot_index:
                self._slot_index[node[1]] = len(self.slots)
                self.slots.append(node[1])
            reg = self._emit(LOAD, self._slot_index[node[1]])
        elif tag in ("add", "mul", "max", "min"):
            op = {"add": ADD, "mul": MUL, "max": MAX, "min": MIN}[tag]
            regs = [self._node(a) for a in node[1]]
            reg = regs[0]
            for r2 in regs[1:]:
                reg = self._emit(op, reg, r2)
        elif tag == "recip":
            reg = self._emit(RECIP, self._node(node[1]))
        elif tag == "ipow":
            reg = self._emit(IPOW, self._node(node[1]), node[2])
        elif tag == "sqrt":
            reg = self._emit(SQRT, self._node(node[1]), int(bool(node[2])))
        elif tag == "abs":
            reg = self._emit(ABS, self._node(node[1]))
        else:
            raise ValueError(f"unknown IR node {tag!r}")
        self._memo[key] = reg
        return reg

    def _tree(self, node):
        tag = node[0]
        if tag == "rel":
            lhs, rhs = self._node(node[6]), self._node(node[7])
            self.rels.append((lhs, rhs, _RELS[node[1]]))
            return ("rel", len(self.rels) - 1)
        if tag == "imp":
            return ("imp", [self._tree(p) for p in node[1]], self._tree(node[2]))
        return ("or", [self._tree(d) for d in node[1]])

    def run(self, env: dict, length: int) -> list:
        """Verdicts of every check at `length` points of env (slot -> (values, errors))."""
        ns = len(self.slots)
        sv = np.empty((max(ns, 1), length))
        sr = np.empty((max(ns, 1), length))
        for i, key in enumerate(self.slots):
            v, e = env[key]
            sv[i] = v
            sr[i] = 0.0 if e is None else e
        nrel = self.rels_arr.shape[0]
        vl = np.empty((nrel, length))
        vr = np.empty((nrel, length))
        T = np.empty((nrel, length))
        t = np.empty((nrel, length), np.bool_)
        f = np.empty((nrel, length), np.bool_)
        _interpret(self.code_arr, self.cv, self.cr, sv, sr, self.rels_arr, length,
                   max(self.nregs, 1), SAFETY, vl, vr, T, t, f)
        return [_compose(tree, vl, vr, T, t, f) for tree in self.trees]


def _compose(tree, vl, vr, T, t, f) -> Verdict:
    tag = tree[0]
    if tag == "rel":
        i = tree[1]
        return Verdict(t[i], f[i], vl[i], vr[i], T[i])
    if tag == "imp":
        prem = [_compose(p, vl, vr, T, t, f) for p in tree[1]]
        c = _compose(tree[2], vl, vr, T, t, f)
        shape = c.true.shape
        all_true = np.logical_and.reduce([p.true for p in prem]) if prem else np.ones(shape, bool)
        any_false = np.logical_or.reduce([p.false for p in prem]) if prem else np.zeros(shape,
                                                                                         bool)
        return Verdict(any_false | c.true, all_true & c.false, c.lhs, c.rhs, c.tol, all_true)
    ds = [_compose(d, vl, vr, T, t, f) for d in tree[1]]
    return Verdict(np.logical_or.reduce([d.true for d in ds]),
                   np.logical_and.reduce([d.false for d in ds]), ds[0].lhs, ds[0].rhs, ds[0].tol)


_PROGRAMS: dict = {}


def build_program(checks) -> Program:
    """The (cached) program of a tuple of checks."""
    key = tuple(id(c) for c in checks)
    hit = _PROGRAMS.get(key)
    if hit is not None and all(a is b for a, b in zip(hit.checks, checks)):
        return hit
    prog = Program(tuple(checks))
    if len(_PROGRAMS) > 256:
        _PROGRAMS.clear()
    _PROGRAMS[key] = prog
    return prog


if HAVE_NUMBA:
    import numba as _nb

    _BLOCK = 256

    @_nb.njit(cache=True)
    def _interpret(code, cv, cr, sv, sr, rels, length, nregs, safety, out_vl, out_vr, out_T,
                   out_t, out_f):
        # Instruction-major over blocks of points: each instruction's dispatch is paid once per
        # block and its inner loop over the points vectorises.
        u = 2.0 ** -53
        B = _BLOCK
        rv = np.empty((nregs, B))
        rr = np.empty((nregs, B))
        n = code.shape[0]
        for b0 in range(0, length, B):
            nb = min(B, length - b0)
            for pc in range(n):
                op = code[pc, 0]
                dst = code[pc, 1]
                a = code[pc, 2]
                b = code[pc, 3]
                if op == 0:
                    for i in range(nb):
                        rv[dst, i] = sv[a, b0 + i]
                        rr[dst, i] = sr[a, b0 + i]
                elif op == 1:
                    for i in range(nb):
                        rv[dst, i] = cv[a]
                        rr[dst, i] = cr[a]
                elif op == 2:
                    for i in range(nb):
                        v = rv[a, i] + rv[b, i]
                        rr[dst, i] = rr[a, i] + rr[b, i] + u * abs(v)
                        rv[dst, i] = v
                elif op == 3:
                    for i in range(nb):
                        va, vb, ra, rb = rv[a, i], rv[b, i], rr[a, i], rr[b, i]
                        v = va * vb
                        rr[dst, i] = abs(va) * rb + abs(vb) * ra + ra * rb + u * abs(v)
                        rv[dst, i] = v
                elif op == 4:
                    for i in range(nb):
                        va, ra = rv[a, i], rr[a, i]
                        av = abs(va)
                        if av > ra:
                            q = 1.0 / va
                            rv[dst, i] = q
                            rr[dst, i] = ra / (av * (av - ra)) + u * abs(q)
                        else:
                            rv[dst, i] = np.nan
                            rr[dst, i] = np.nan
                elif op == 5:
                    for i in range(nb):
                        va, ra = rv[a, i], rr[a, i]
                        hi = va + ra
                        if b == 0 and hi < 0:
                            rv[dst, i] = np.nan
                            rr[dst, i] = np.nan
                        else:
                            sl = np.sqrt(max(va - ra, 0.0))
                            sh = np.sqrt(max(hi, 0.0))
                            sq = np.sqrt(max(va, 0.0))
                            rv[dst, i] = sq
                            rr[dst, i] = max(sq - sl, sh - sq) + 2 * u * sh
                elif op == 6:
                    for i in range(nb):
                        rv[dst, i] = abs(rv[a, i])
                        rr[dst, i] = rr[a, i]
                elif op == 7:
                    for i in range(nb):
                        rv[dst, i] = max(rv[a, i], rv[b, i])
                        rr[dst, i] = max(rr[a, i], rr[b, i])
                elif op == 8:
                    for i in range(nb):
                        rv[dst, i] = min(rv[a, i], rv[b, i])
                        rr[dst, i] = max(rr[a, i], rr[b, i])
                else:
                    for i in range(nb):
                        va, ra = rv[a, i], rr[a, i]
                        pv, pr = va, ra
                        for _ in range(b - 1):
                            pr = abs(pv) * ra + abs(va) * pr + pr * ra
                            pv = pv * va
                            pr = pr + u * abs(pv)
                        rv[dst, i] = pv
                        rr[dst, i] = pr
            for q in range(rels.shape[0]):
                lr, rg, c = rels[q, 0], rels[q, 1], rels[q, 2]
                for i in range(nb):
                    vl, vr = rv[lr, i], rv[rg, i]
                    D = vl - vr
                    T = (rr[lr, i] + rr[rg, i]) * safety + 2 * u * abs(D)
                    out_vl[q, b0 + i] = vl
                    out_vr[q, b0 + i] = vr
                    out_T[q, b0 + i] = T
                    if c == 0:
                        t, f = D >= T, D < -T
                    elif c == 1:
                        t, f = D > T, D <= -T
                    elif c == 2:
                        t, f = D <= -T, D > T
                    elif c == 3:
                        t, f = D < -T, D >= T
                    else:
                        point = D == 0 and T == 0
                        apart = abs(D) > T
                        if c == 4:
                            t, f = point, apart
                        else:
                            t, f = apart, point
                    out_t[q, b0 + i] = t
                    out_f[q, b0 + i] = f
else:  # pragma: no cover - without numba the monitor uses the numpy closures
    _interpret = None
