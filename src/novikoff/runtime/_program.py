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
# Points judged at once: the registers of a block stay in cache.
_BLOCK = 256
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
        # The trees flattened for the numba judge: node kinds (0 rel, 1 imp, 2 or), their
        # children, each check's root and the relation that gives its lhs, rhs and tolerance.
        self._nodes, self._children = [], []
        roots = [self._flat(tree) for tree in self.trees]
        self.node_arr = np.array(self._nodes, dtype=np.int64).reshape(-1, 3)
        self.child_arr = np.array(self._children or [0], dtype=np.int64)
        self.root_arr = np.array(roots, dtype=np.int64)
        self.report_rel = [self._report_rel(tree) for tree in self.trees]
        self.index = {id(c): i for i, c in enumerate(checks)}

    def _flat(self, tree) -> int:
        """Post-order: node = (kind, first child or relation, number of children)."""
        if tree[0] == "rel":
            self._nodes.append((0, tree[1], 0))
            return len(self._nodes) - 1
        subs = tree[1] + [tree[2]] if tree[0] == "imp" else tree[1]
        kids = [self._flat(t) for t in subs]
        start = len(self._children)
        self._children.extend(kids)
        self._nodes.append((1 if tree[0] == "imp" else 2, start, len(kids)))
        return len(self._nodes) - 1

    def _report_rel(self, tree) -> int:
        while tree[0] != "rel":
            tree = tree[2] if tree[0] == "imp" else tree[1][0]
        return tree[1]

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

    def _slots(self, env: dict, length: int, scratch=None):
        shape = (max(len(self.slots), 1), length)
        if scratch is None:
            sv, sr = np.empty(shape), np.empty(shape)
        else:
            sv, sr = scratch.array("judge.sv", shape), scratch.array("judge.sr", shape)
        for i, key in enumerate(self.slots):
            v, e = env[key]
            sv[i] = v
            sr[i] = 0.0 if e is None else e
        return sv, sr

    def _relations(self, env: dict, length: int):
        sv, sr = self._slots(env, length)
        nrel = self.rels_arr.shape[0]
        vl = np.empty((nrel, length))
        vr = np.empty((nrel, length))
        T = np.empty((nrel, length))
        t = np.empty((nrel, length), np.bool_)
        f = np.empty((nrel, length), np.bool_)
        _interpret(self.code_arr, self.cv, self.cr, sv, sr, self.rels_arr, length,
                   max(self.nregs, 1), SAFETY, vl, vr, T, t, f)
        return vl, vr, T, t, f

    def run(self, env: dict, length: int) -> list:
        """Verdicts of every check at `length` points of env (slot -> (values, errors))."""
        vl, vr, T, t, f = self._relations(env, length)
        return [_compose(tree, vl, vr, T, t, f) for tree in self.trees]

    def judge(self, env: dict, length: int, scratch=None) -> Judged:
        """Every check's counts at `length` points of env, in one numba pass.

        Only the counts are kept; the per-point verdicts and values (for a report, or for
        counting over a part of the points) are recomputed when asked for.  scratch: a run's
        Scratch for the working arrays (fresh ones otherwise).
        """
        sv, sr = self._slots(env, length, scratch)
        stats = np.empty((len(self.trees), 5), np.int64)
        B = max(min(_BLOCK, length), 1)  # small chunks: small (cache-resident) registers
        regs = (max(self.nregs, 1), B)
        rels = (max(self.rels_arr.shape[0], 1), B)
        if scratch is None:
            rv, rr = np.empty(regs), np.empty(regs)
            bt, bf = np.empty(rels, np.bool_), np.empty(rels, np.bool_)
        else:
            rv, rr = scratch.array("judge.rv", regs), scratch.array("judge.rr", regs)
            bt = scratch.array("judge.bt", rels, np.bool_)
            bf = scratch.array("judge.bf", rels, np.bool_)
        _interpret_judge(self.code_arr, self.cv, self.cr, sv, sr, self.rels_arr, length,
                         SAFETY, self.node_arr, self.child_arr, self.root_arr, stats,
                         rv, rr, bt, bf)
        return Judged(self, env, length, stats)

    def judge_points(self, env: dict, length: int):
        """(vl, vr, T, ct, cf, cin): relation values and every check's verdict at every point."""
        vl, vr, T, t, f = self._relations(env, length)
        C = len(self.trees)
        ct = np.empty((C, length), np.bool_)
        cf = np.empty((C, length), np.bool_)
        cin = np.empty((C, length), np.bool_)
        stats = np.empty((C, 5), np.int64)
        _judge(self.node_arr, self.child_arr, self.root_arr, t, f, length, ct, cf, cin, stats)
        return vl, vr, T, ct, cf, cin


class Judged:
    """Every check of a program at the points of one env: per check, the number of points in
    force, of those undetermined, the number false, the first false and the first undetermined
    (-1 for none).  Per-point verdicts (``ct``, ``cf``, ``cin``) are computed on demand."""

    __slots__ = ("_points", "_verdicts", "env", "length", "program", "stats")

    def __init__(self, program, env, length, stats):
        self.program, self.env, self.length, self.stats = program, env, length, stats
        self._points = None
        self._verdicts = {}

    def row(self, check) -> int:
        return self.program.index[id(check)]

    def points(self):
        if self._points is None:
            self._points = self.program.judge_points(self.env, self.length)
        return self._points

    @property
    def ct(self):
        return self.points()[3]

    @property
    def cf(self):
        return self.points()[4]

    @property
    def cin(self):
        return self.points()[5]

    def verdict(self, check) -> Verdict:
        """The check's Verdict (as Program.run gives it)."""
        c = self.program.index[id(check)]
        v = self._verdicts.get(c)
        if v is None:
            vl, vr, T, ct, cf, cin = self.points()
            r = self.program.report_rel[c]
            held = cin[c] if self.program.node_arr[self.program.root_arr[c], 0] == 1 else None
            v = self._verdicts[c] = Verdict(ct[c], cf[c], vl[r], vr[r], T[r], held)
        return v


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

    @_nb.njit(cache=True, inline="always")
    def _exec(code, cv, cr, sv, sr, b0, nb, rv, rr):
        """Run the instructions on points b0 .. b0+nb-1 (registers: rv, rr)."""
        u = 2.0 ** -53
        n = code.shape[0]
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
                        # ra/(av(av - ra)) divided in two steps: av*(av - ra) underflows to
                        # 0 for av below 1e-154 (ZeroDivisionError here, inf or nan in numpy);
                        # ra/av < 1 and av - ra > 0 (gradual underflow) never do.
                        rr[dst, i] = ra / av / (av - ra) + u * abs(q)
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

    @_nb.njit(cache=True, inline="always")
    def _decide(c, D, T):
        """(certainly true, certainly false) of `lhs rel rhs` with D = lhs - rhs, tolerance T."""
        if c == 0:
            return D >= T, D < -T
        if c == 1:
            return D > T, D <= -T
        if c == 2:
            return D <= -T, D > T
        if c == 3:
            return D < -T, D >= T
        point = D == 0 and T == 0
        apart = abs(D) > T
        if c == 4:
            return point, apart
        return apart, point

    @_nb.njit(cache=True, inline="always")
    def _tree(nodes, children, nt, nf, nin):
        """Node verdicts of one point; nt/nf hold the relations' verdicts at the rel nodes'
        relation indices on entry (nodes are in post-order: children come first)."""
        N = nodes.shape[0]
        for q in range(N):
            kind = nodes[q, 0]
            if kind == 0:
                r = nodes[q, 1]
                nt[q] = nt[N + r]
                nf[q] = nf[N + r]
                nin[q] = True
            elif kind == 1:  # premises..., conclusion
                s0 = nodes[q, 1]
                npr = nodes[q, 2] - 1
                all_true = True
                any_false = False
                for a in range(npr):
                    ch = children[s0 + a]
                    all_true = all_true and nt[ch]
                    any_false = any_false or nf[ch]
                cc = children[s0 + npr]
                nt[q] = any_false or nt[cc]
                nf[q] = all_true and nf[cc]
                nin[q] = all_true
            else:  # disjunction
                s0 = nodes[q, 1]
                any_true = False
                all_false = True
                for a in range(nodes[q, 2]):
                    ch = children[s0 + a]
                    any_true = any_true or nt[ch]
                    all_false = all_false and nf[ch]
                nt[q] = any_true
                nf[q] = all_false
                nin[q] = True

    @_nb.njit(cache=True, inline="always")
    def _count(roots, nt, nf, nin, i, stats):
        for c in range(roots.shape[0]):
            q = roots[c]
            vt, vf = nt[q], nf[q]
            und = not vt and not vf
            if nin[q]:
                stats[c, 0] += 1
                if und:
                    stats[c, 1] += 1
            if vf:
                stats[c, 2] += 1
                if stats[c, 3] < 0:
                    stats[c, 3] = i
            if und and stats[c, 4] < 0:
                stats[c, 4] = i

    @_nb.njit(cache=True)
    def _interpret(code, cv, cr, sv, sr, rels, length, nregs, safety, out_vl, out_vr, out_T,
                   out_t, out_f):
        # Instruction-major over blocks of points: each instruction's dispatch is paid once per
        # block and its inner loop over the points vectorises.
        u = 2.0 ** -53
        B = max(min(_BLOCK, length), 1)  # small chunks: small (cache-resident) registers
        rv = np.empty((nregs, B))
        rr = np.empty((nregs, B))
        for b0 in range(0, length, B):
            nb = min(B, length - b0)
            _exec(code, cv, cr, sv, sr, b0, nb, rv, rr)
            for q in range(rels.shape[0]):
                lr, rg, c = rels[q, 0], rels[q, 1], rels[q, 2]
                for i in range(nb):
                    vl, vr = rv[lr, i], rv[rg, i]
                    D = vl - vr
                    T = (rr[lr, i] + rr[rg, i]) * safety + 2 * u * abs(D)
                    out_vl[q, b0 + i] = vl
                    out_vr[q, b0 + i] = vr
                    out_T[q, b0 + i] = T
                    t, f = _decide(c, D, T)
                    out_t[q, b0 + i] = t
                    out_f[q, b0 + i] = f

    @_nb.njit(cache=True)
    def _judge(nodes, children, roots, t, f, length, ct, cf, cin, stats):
        """Per-point verdicts of every check (ct, cf, cin) and their counts (stats)."""
        N = nodes.shape[0]
        R = t.shape[0]
        nt, nf, nin = _point_verdicts(N, R)
        _reset(stats)
        for i in range(length):
            for r in range(R):
                nt[N + r] = t[r, i]
                nf[N + r] = f[r, i]
            _tree(nodes, children, nt, nf, nin)
            for c in range(roots.shape[0]):
                q = roots[c]
                ct[c, i] = nt[q]
                cf[c, i] = nf[q]
                cin[c, i] = nin[q]
            _count(roots, nt, nf, nin, i, stats)

    @_nb.njit(cache=True, inline="always")
    def _point_verdicts(N, R):
        """_tree's working arrays for one point: (certainly true, certainly false) of the N
        nodes followed by the R relations, and whether each node's check is in force."""
        return np.empty(N + R, np.bool_), np.empty(N + R, np.bool_), np.empty(N, np.bool_)

    @_nb.njit(cache=True, inline="always")
    def _reset(stats):
        for c in range(stats.shape[0]):
            stats[c, 0] = 0
            stats[c, 1] = 0
            stats[c, 2] = 0
            stats[c, 3] = -1
            stats[c, 4] = -1

    @_nb.njit(cache=True)
    def _interpret_judge(code, cv, cr, sv, sr, rels, length, safety, nodes, children, roots,
                         stats, rv, rr, bt, bf):
        """Only the counts of every check (no per-point arrays): the common, clean case.

        rv, rr (registers) and bt, bf (relations' verdicts): working arrays of B columns, the
        block of points processed at once.
        """
        u = 2.0 ** -53
        B = rv.shape[1]
        N = nodes.shape[0]
        R = rels.shape[0]
        nt, nf, nin = _point_verdicts(N, R)
        _reset(stats)
        for b0 in range(0, length, B):
            nb = min(B, length - b0)
            _exec(code, cv, cr, sv, sr, b0, nb, rv, rr)
            uniform = True
            for q in range(R):
                lr, rg, c = rels[q, 0], rels[q, 1], rels[q, 2]
                ntrue = 0
                nfalse = 0
                for i in range(nb):
                    D = rv[lr, i] - rv[rg, i]
                    T = (rr[lr, i] + rr[rg, i]) * safety + 2 * u * abs(D)
                    t, f = _decide(c, D, T)
                    bt[q, i] = t
                    bf[q, i] = f
                    ntrue += t
                    nfalse += f
                # a relation with the same verdict at every point of the block
                if ntrue == nb or nfalse == nb or ntrue + nfalse == 0:
                    nt[N + q] = ntrue == nb
                    nf[N + q] = nfalse == nb
                else:
                    uniform = False
            if uniform:  # the checks' verdicts are the same at every point: judge once
                _tree(nodes, children, nt, nf, nin)
                for c in range(roots.shape[0]):
                    q = roots[c]
                    vt, vf = nt[q], nf[q]
                    und = not vt and not vf
                    if nin[q]:
                        stats[c, 0] += nb
                        if und:
                            stats[c, 1] += nb
                    if vf:
                        stats[c, 2] += nb
                        if stats[c, 3] < 0:
                            stats[c, 3] = b0
                    if und and stats[c, 4] < 0:
                        stats[c, 4] = b0
                continue
            for i in range(nb):
                for q in range(R):
                    nt[N + q] = bt[q, i]
                    nf[N + q] = bf[q, i]
                _tree(nodes, children, nt, nf, nin)
                _count(roots, nt, nf, nin, b0 + i, stats)
else:  # pragma: no cover - without numba the monitor uses the numpy closures
    _interpret = None
    _judge = None
    _interpret_judge = None
