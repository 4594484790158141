"""Judge compiled checks at many points at once: their IR as one register program.

Every check a monitor evaluates at one kind of point becomes a single straight-line program over
registers (common subexpressions shared), in mid-radius arithmetic: each register holds a value
and a bound on its distance to the exact value, and each operation adds its own rounding,
u*|result| (u = 2**-53).  A relation lhs REL rhs is then decided three ways: certainly true,
certainly false, or undetermined within the tolerance T = (r_lhs + r_rhs) * SAFETY + 2u|lhs - rhs|.

One program, two backends that compute the same floats, operation by operation:

* the compiled judge (numba): it counts (per check: points in force, undetermined, false, the
  first false and the first undetermined point) without per-point arrays, and gives the
  per-point verdicts when the monitor asks for them (where something failed): why it is
  compiled, docs/runtime-bounds.md, "What is compiled, and why";
* the same program interpreted by numpy, one instruction at a time over all the points, when
  numba is not installed.

``Program.judge(env, n, exact=True)`` decides the same checks in exact rational arithmetic
(``_checks.exact_interval``), one point at a time, behind the same ``Judged`` interface: exact
runs and replays go through the monitor's one path.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from ._bounds import SAFETY, TINY, U
from ._jit import AVAILABLE as HAVE_NUMBA
from ._jit import compiled, jit, worth_compiling

__all__ = ["Program", "Judged", "HAVE_NUMBA", "SAFETY", "Verdict", "float_constant"]

# Checks x points from which the compiled judge is worth numba's start-up (both judges give
# the same verdicts: tests/test_runtime_compile.py).
_COMPILE_FROM = 50_000


def float_constant(c: Fraction):
    """(value, radius) of a rational constant: the float nearest c and a bound on its error."""
    v = float(c)
    return v, (0.0 if Fraction(v) == c else float(abs(Fraction(v) - c)) * 2.0)


@dataclass
class Verdict:
    """A vectorised three-valued verdict, with the values of the deciding relation."""

    true: np.ndarray
    false: np.ndarray
    lhs: np.ndarray
    rhs: np.ndarray
    tol: np.ndarray
    held: np.ndarray | None = None  # where a `given` lemma's premises certainly hold

    @property
    def in_force(self) -> np.ndarray:
        return np.ones(self.true.shape, bool) if self.held is None else self.held


LOAD, CONST, ADD, MUL, RECIP, SQRT, ABS, MAX, MIN, IPOW = range(10)
# A product or quotient whose result is subnormal rounds by up to half of 2^-1074 whatever its
# size, so u|v| alone does not bound it (1e-160 squared is 0.0): each adds TINY.  Sums of floats
# are exact there.
_RELS = {">=": 0, ">": 1, "<=": 2, "<": 3, "=": 4, "!=": 5}
# Points the compiled judge evaluates at once: the registers of a block stay in cache.
_BLOCK = 256


class Program:
    """The register code of a tuple of checks, and their formula trees over its relations."""

    def __init__(self, checks):
        self.checks = tuple(checks)
        self.rows = {c: i for i, c in enumerate(self.checks)}  # check -> row of its counts
        self.code, self.consts, self.slots = [], [], []
        self.rels = []  # (lhs register, rhs register, relation code)
        self._slot_index, self._memo = {}, {}
        trees = [self._formula(c.tree) for c in self.checks]
        self.code_arr = np.array(self.code, dtype=np.int64).reshape(-1, 4)
        self.cv = np.array([v for v, _ in self.consts] or [0.0])
        self.cr = np.array([r for _, r in self.consts] or [0.0])
        self.rels_arr = np.array(self.rels, dtype=np.int64).reshape(-1, 3)
        self.nregs = max(len(self.code), 1)
        # The trees flattened in post-order (children first): node = (kind: 0 relation,
        # 1 implication, 2 disjunction; its relation or first child; its number of children).
        self.nodes, children = [], []
        roots = [self._flatten(t, children) for t in trees]
        self.node_arr = np.array(self.nodes, dtype=np.int64).reshape(-1, 3)
        self.child_arr = np.array(children or [0], dtype=np.int64)
        self.root_arr = np.array(roots, dtype=np.int64)
        # The relation whose lhs, rhs and tolerance a report shows (an implication's conclusion,
        # a disjunction's first disjunct).
        self.report_rel = [_report_relation(t) for t in trees]

    # -- compiling the IR
    def _emit(self, op, a=0, b=0) -> int:
        self.code.append((op, len(self.code), a, b))
        return len(self.code) - 1

    def _expr(self, node) -> int:
        reg = self._memo.get(node)
        if reg is not None:
            return reg
        tag = node[0]
        if tag == "const":
            self.consts.append(float_constant(node[1]))
            reg = self._emit(CONST, len(self.consts) - 1)
        elif tag == "slot":
            if node[1] not in self._slot_index:
                self._slot_index[node[1]] = len(self.slots)
                self.slots.append(node[1])
            reg = self._emit(LOAD, self._slot_index[node[1]])
        elif tag in ("add", "mul", "max", "min"):
            op = {"add": ADD, "mul": MUL, "max": MAX, "min": MIN}[tag]
            regs = [self._expr(a) for a in node[1]]
            reg = regs[0]
            for r2 in regs[1:]:
                reg = self._emit(op, reg, r2)
        elif tag == "recip":
            reg = self._emit(RECIP, self._expr(node[1]))
        elif tag == "ipow":
            reg = self._emit(IPOW, self._expr(node[1]), node[2])
        elif tag == "sqrt":
            reg = self._emit(SQRT, self._expr(node[1]), int(bool(node[2])))
        elif tag == "abs":
            reg = self._emit(ABS, self._expr(node[1]))
        else:
            raise ValueError(f"unknown IR node {tag!r}")
        self._memo[node] = reg
        return reg

    def _formula(self, node):
        """The formula tree with each relation replaced by its index in self.rels."""
        if node[0] == "rel":
            self.rels.append((self._expr(node[3]), self._expr(node[4]), _RELS[node[1]]))
            return ("rel", len(self.rels) - 1)
        if node[0] == "imp":
            return ("imp", [self._formula(p) for p in node[1]] + [self._formula(node[2])])
        return ("or", [self._formula(d) for d in node[1]])

    def _flatten(self, tree, children) -> int:
        if tree[0] == "rel":
            self.nodes.append((0, tree[1], 0))
        else:
            kids = [self._flatten(t, children) for t in tree[1]]
            self.nodes.append((1 if tree[0] == "imp" else 2, len(children), len(kids)))
            children.extend(kids)
        return len(self.nodes) - 1

    # -- judging
    def judge(self, env: dict, length: int, *, exact: bool = False) -> Judged:
        """Every check at `length` points of env: slot -> (values, error bounds or None), or
        with exact=True slot -> Fraction, ('sqrt', q), or a list of those (one per point)."""
        if exact:
            return Judged(self, self._exact_points(env, length))
        sv, sr = self._slot_arrays(env, length)
        if not (HAVE_NUMBA and worth_compiling(length * len(self.checks), _COMPILE_FROM)):
            return Judged(self, self._points(sv, sr, length))
        stats = self._compiled(sv, sr, length, None)
        return Judged(self, lambda: self._compiled_points(sv, sr, length), stats)

    def _compiled(self, sv, sr, length, points):
        """The compiled judge: the counts, and the per-point verdicts into `points` (if any)."""
        stats = np.empty((len(self.checks), 5), np.int64)
        block = max(min(_BLOCK, length), 1)
        R = max(len(self.rels), 1)
        if points is None:
            points = (np.empty((0, 0), np.bool_),) * 3 + (np.empty((0, 0)),) * 3
        compiled(_judge_counts)(
            self.code_arr, self.cv, self.cr, sv, sr, self.rels_arr, length, SAFETY,
            self.node_arr, self.child_arr, self.root_arr, stats,
            np.empty((self.nregs, block)), np.empty((self.nregs, block)),
            np.empty((R, block), np.bool_), np.empty((R, block), np.bool_), *points)
        return stats

    def _compiled_points(self, sv, sr, length):
        C, R = len(self.checks), max(len(self.rels), 1)
        points = tuple(np.empty((C, length), np.bool_) for _ in range(3)) + tuple(
            np.empty((R, length)) for _ in range(3))
        self._compiled(sv, sr, length, points)
        rep = self.report_rel
        return points[:3] + tuple(a[rep].reshape(C, length) for a in points[3:])

    def _slot_arrays(self, env: dict, length: int):
        shape = (max(len(self.slots), 1), length)
        sv, sr = np.empty(shape), np.empty(shape)
        for i, key in enumerate(self.slots):
            v, e = env[key]
            sv[i] = v
            sr[i] = 0.0 if e is None else e
        return sv, sr

    def _exact_points(self, env: dict, length: int):
        """Judged points of every check, decided in exact rational arithmetic.  On many points,
        the float judge first runs on the exact values rounded (their rounding in the error
        bounds): what it finds certainly true or false, with premises certainly holding or not,
        is so exactly; every other check and point is decided in rationals."""
        C = len(self.checks)
        if length < _FILTER_FROM:
            out = tuple(np.zeros((C, length), np.bool_) for _ in range(3)) + tuple(
                np.full((C, length), np.nan) for _ in range(2))
            need = np.ones((C, length), np.bool_)
        else:
            shape = (max(len(self.slots), 1), length)
            sv, sr = np.empty(shape), np.empty(shape)
            for s, key in enumerate(self.slots):
                values = env[key] if isinstance(env[key], list) else [env[key]] * length
                sv[s], sr[s] = np.array([_float_slot(v) for v in values]).reshape(length, 2).T
            settled = []
            out = tuple(np.array(a) for a in self._points(sv, sr, length, settled)[:5])
            need = ~(out[0] | out[1]) | ~settled[0]
        for i in np.flatnonzero(need.any(axis=0)).tolist():
            _exact_point(self.checks, env, i, np.flatnonzero(need[:, i]).tolist(), out)
        return out + (np.zeros((C, length)),)

    def _points(self, sv, sr, length, settled=None):
        """(ct, cf, cin, lhs, rhs, tol): every check's verdict at every point, by numpy; into
        `settled` (a list), if given, where whether the premises hold is certain."""
        with np.errstate(all="ignore"):
            vl, vr, T, t, f = _relations(self.code, self.cv, self.cr, sv, sr, self.rels, length,
                                         self.nregs)
        N = len(self.nodes)
        nt, nf, nin, known = [None] * N, [None] * N, [None] * N, [None] * N
        for q, (kind, first, count) in enumerate(self.nodes):
            if kind == 0:
                nt[q], nf[q], nin[q] = t[first], f[first], np.ones(length, np.bool_)
                continue
            kids = self.child_arr[first:first + count].tolist()
            if kind == 1:  # premises..., conclusion
                *prem, concl = kids
                all_true = np.ones(length, np.bool_)
                any_false = np.zeros(length, np.bool_)
                for ch in prem:
                    all_true = all_true & nt[ch]
                    any_false = any_false | nf[ch]
                nt[q], nf[q], nin[q] = any_false | nt[concl], all_true & nf[concl], all_true
                known[q] = all_true | any_false
            else:
                nt[q] = np.logical_or.reduce([nt[ch] for ch in kids])
                nf[q] = np.logical_and.reduce([nf[ch] for ch in kids])
                nin[q] = np.ones(length, np.bool_)
        roots = self.root_arr.tolist()
        rep = self.report_rel

        def rows(arrays, select, dtype):
            return np.array([arrays[i] for i in select], dtype).reshape(len(select), length)
        if settled is not None:
            settled.append(rows([np.ones(length, np.bool_) if k is None else k for k in known],
                                roots, np.bool_))
        return (rows(nt, roots, np.bool_), rows(nf, roots, np.bool_), rows(nin, roots, np.bool_),
                rows(vl, rep, float), rows(vr, rep, float), rows(T, rep, float))


_FILTER_FROM = 64  # points from which the float judge first sorts out the certainly true ones


def _float_slot(value):
    """(float, error bound) of an exact slot value: a Fraction or ('sqrt', q)."""
    try:
        if isinstance(value, tuple):  # sqrt(q): q's rounding, then sqrt's
            v = np.sqrt(float(value[1]))
            return v, 3 * U * v + 2.0 ** -530
        v = float(value)
    except OverflowError:
        return np.nan, np.nan  # undetermined: decided in rational arithmetic
    return v, U * abs(v) + TINY


def _exact_point(checks, env: dict, i: int, rows, out) -> None:
    """Decide the checks `rows` at point i in exact rational arithmetic, into out."""
    ct, cf, cin, lhs, rhs = out
    point = {k: (v[i] if isinstance(v, list) else v) for k, v in env.items()}
    for c in rows:
        verdict, left, right, held = checks[c].evaluate_exact(point)
        ct[c, i], cf[c, i], cin[c, i] = verdict is True, verdict is False, held
        lhs[c, i] = np.nan if left is None else float(left)
        rhs[c, i] = np.nan if right is None else float(right)


def _report_relation(tree) -> int:
    while tree[0] != "rel":
        tree = tree[1][-1] if tree[0] == "imp" else tree[1][0]
    return tree[1]


class Judged:
    """The checks of a program at the points of one env.

    ``stats[row]``: the number of points where the check is in force, of those the number
    undetermined, the number certainly false, the first false point and the first undetermined
    point (-1 for none).  ``points()``: per-point (true, false, in force, lhs, rhs, tolerance),
    one row per check; computed when first asked for when the compiled judge counted.
    """

    __slots__ = ("program", "stats", "_points", "_verdicts")

    def __init__(self, program: Program, points, stats=None):
        self.program = program
        self._points = points
        self._verdicts = {}
        if stats is None:
            stats = _counts(*points[:3])
        self.stats = stats.tolist()  # lists: reading a count costs no numpy scalar

    def row(self, check) -> int:
        return self.program.rows[check]

    def counts(self, check) -> list:
        return self.stats[self.program.rows[check]]

    def points(self):
        if callable(self._points):
            self._points = self._points()
        return self._points

    def verdict(self, check) -> Verdict:
        c = self.program.rows[check]
        v = self._verdicts.get(c)
        if v is None:
            ct, cf, cin, lhs, rhs, tol = self.points()
            held = cin[c] if self.program.node_arr[self.program.root_arr[c], 0] == 1 else None
            v = self._verdicts[c] = Verdict(ct[c], cf[c], lhs[c], rhs[c], tol[c], held)
        return v


def _first(mask) -> np.ndarray:
    if mask.shape[1] == 0:
        return np.full(mask.shape[0], -1)
    return np.where(mask.any(axis=1), mask.argmax(axis=1), -1)


def _counts(ct, cf, cin) -> np.ndarray:
    """Judged.stats from per-point verdicts."""
    und = ~ct & ~cf
    return np.stack([cin.sum(axis=1), (cin & und).sum(axis=1), cf.sum(axis=1), _first(cf),
                     _first(und)], axis=1).astype(np.int64).reshape(-1, 5)


# --------------------------------------------------------------------------- numpy backend

def _max(a, b):
    """max with NaN propagating (as the compiled judge's _fmax)."""
    return np.where(np.isnan(a) | np.isnan(b), np.nan, np.where(a >= b, a, b))


def _min(a, b):
    return np.where(np.isnan(a) | np.isnan(b), np.nan, np.where(a <= b, a, b))


def _relations(code, cv, cr, sv, sr, rels, length, nregs):
    """Every relation's (lhs, rhs, tolerance, certainly true, certainly false) at every point:
    the program interpreted one instruction at a time over all the points."""
    rv, rr = [None] * nregs, [None] * nregs
    for op, dst, a, b in code:
        if op == LOAD:
            v, r = sv[a], sr[a]
        elif op == CONST:
            v, r = np.full(length, cv[a]), np.full(length, cr[a])
        elif op == ADD:
            v = rv[a] + rv[b]
            r = rr[a] + rr[b] + U * np.abs(v)
        elif op == MUL:
            va, vb, ra, rb = rv[a], rv[b], rr[a], rr[b]
            v = va * vb
            r = np.abs(va) * rb + np.abs(vb) * ra + ra * rb + U * np.abs(v) + TINY
        elif op == RECIP:  # undefined (NaN) where the divisor may be zero
            va, ra = rv[a], rr[a]
            av = np.abs(va)
            ok = av > ra
            q = 1.0 / va
            v = np.where(ok, q, np.nan)
            r = np.where(ok, ra / av / (av - ra) + U * np.abs(q) + TINY, np.nan)
        elif op == SQRT:
            va, ra = rv[a], rr[a]
            hi = va + ra
            sl, sh, v = (np.sqrt(_max(z, 0.0)) for z in (va - ra, hi, va))
            r = _max(v - sl, sh - v) + 2 * U * sh
            if b == 0:  # the square root of something certainly negative is undefined
                v, r = np.where(hi < 0, np.nan, v), np.where(hi < 0, np.nan, r)
        elif op == ABS:
            v, r = np.abs(rv[a]), rr[a]
        elif op == MAX:
            v, r = _max(rv[a], rv[b]), _max(rr[a], rr[b])
        elif op == MIN:
            v, r = _min(rv[a], rv[b]), _max(rr[a], rr[b])
        else:  # IPOW
            va, ra = rv[a], rr[a]
            v, r = va, ra
            for _ in range(b - 1):
                r = np.abs(v) * ra + np.abs(va) * r + r * ra
                v = v * va
                r = r + U * np.abs(v) + TINY
        rv[dst], rr[dst] = v, r
    R = len(rels)
    out = [np.empty((R, length)) for _ in range(3)] + [np.empty((R, length), np.bool_)
                                                       for _ in range(2)]
    vl, vr, T, t, f = out
    for q, (lr, rg, c) in enumerate(rels):
        vl[q], vr[q] = rv[lr], rv[rg]
        D = rv[lr] - rv[rg]
        T[q] = (rr[lr] + rr[rg]) * SAFETY + 2 * U * np.abs(D)
        t[q], f[q] = _decide(c, D, T[q])
    return out


@jit(cache=True, inline="always")
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
    point = (D == 0) & (T == 0)
    apart = np.abs(D) > T
    return (point, apart) if c == 4 else (apart, point)


# --------------------------------------------------------------------------- compiled backend

@jit(cache=True, inline="always")
def _fmax(a, b):
    if a != a or b != b:  # NaN propagates, as np.maximum
        return np.nan
    return a if a >= b else b

@jit(cache=True, inline="always")
def _fmin(a, b):
    if a != a or b != b:
        return np.nan
    return a if a <= b else b

@jit(cache=True, inline="always")
def _exec(code, cv, cr, sv, sr, b0, nb, rv, rr):
    """Run the instructions on points b0 .. b0+nb-1 (registers: rv, rr), as _relations.
    One dispatch per instruction and block; the loop over the points vectorises."""
    u, tiny = 2.0 ** -53, 2.0 ** -1074
    for pc in range(code.shape[0]):
        op, dst, a, b = code[pc, 0], code[pc, 1], code[pc, 2], code[pc, 3]
        if op == 0:
            for i in range(nb):
                rv[dst, i], rr[dst, i] = sv[a, b0 + i], sr[a, b0 + i]
        elif op == 1:
            for i in range(nb):
                rv[dst, i], rr[dst, i] = cv[a], cr[a]
        elif op == 2:
            for i in range(nb):
                v = rv[a, i] + rv[b, i]
                rr[dst, i] = rr[a, i] + rr[b, i] + u * abs(v)
                rv[dst, i] = v
        elif op == 3:
            for i in range(nb):
                va, vb, ra, rb = rv[a, i], rv[b, i], rr[a, i], rr[b, i]
                v = va * vb
                rr[dst, i] = abs(va) * rb + abs(vb) * ra + ra * rb + u * abs(v) + tiny
                rv[dst, i] = v
        elif op == 4:
            for i in range(nb):
                va, ra = rv[a, i], rr[a, i]
                av = abs(va)
                if av > ra:
                    q = 1.0 / va
                    # ra/(av(av - ra)) divided in two steps: av*(av - ra) underflows to 0
                    # for av below 1e-154; ra/av < 1 and av - ra > 0 never do.
                    rr[dst, i] = ra / av / (av - ra) + u * abs(q) + tiny
                    rv[dst, i] = q
                else:
                    rv[dst, i], rr[dst, i] = np.nan, np.nan
        elif op == 5:
            for i in range(nb):
                va, ra = rv[a, i], rr[a, i]
                hi = va + ra
                if b == 0 and hi < 0:
                    rv[dst, i], rr[dst, i] = np.nan, np.nan
                else:
                    sl = np.sqrt(_fmax(va - ra, 0.0))
                    sh = np.sqrt(_fmax(hi, 0.0))
                    sq = np.sqrt(_fmax(va, 0.0))
                    rv[dst, i] = sq
                    rr[dst, i] = _fmax(sq - sl, sh - sq) + 2 * u * sh
        elif op == 6:
            for i in range(nb):
                rv[dst, i], rr[dst, i] = abs(rv[a, i]), rr[a, i]
        elif op == 7:
            for i in range(nb):
                rv[dst, i] = _fmax(rv[a, i], rv[b, i])
                rr[dst, i] = _fmax(rr[a, i], rr[b, i])
        elif op == 8:
            for i in range(nb):
                rv[dst, i] = _fmin(rv[a, i], rv[b, i])
                rr[dst, i] = _fmax(rr[a, i], rr[b, i])
        else:
            for i in range(nb):
                va, ra = rv[a, i], rr[a, i]
                pv, pr = va, ra
                for _ in range(b - 1):
                    pr = abs(pv) * ra + abs(va) * pr + pr * ra
                    pv = pv * va
                    pr = pr + u * abs(pv) + tiny
                rv[dst, i], rr[dst, i] = pv, pr

@jit(cache=True, inline="always")
def _tree(nodes, children, nt, nf, nin):
    """Node verdicts of one point (post-order); nt/nf hold the relations' verdicts after
    the N nodes on entry."""
    N = nodes.shape[0]
    for q in range(N):
        kind, s0, cnt = nodes[q, 0], nodes[q, 1], nodes[q, 2]
        if kind == 0:
            nt[q], nf[q], nin[q] = nt[N + s0], nf[N + s0], True
        elif kind == 1:  # premises..., conclusion
            all_true, any_false = True, False
            for a in range(cnt - 1):
                ch = children[s0 + a]
                all_true = all_true and nt[ch]
                any_false = any_false or nf[ch]
            cc = children[s0 + cnt - 1]
            nt[q], nf[q], nin[q] = any_false or nt[cc], all_true and nf[cc], all_true
        else:  # disjunction
            any_true, all_false = False, True
            for a in range(cnt):
                ch = children[s0 + a]
                any_true = any_true or nt[ch]
                all_false = all_false and nf[ch]
            nt[q], nf[q], nin[q] = any_true, all_false, True

@jit(cache=True, inline="always")
def _count(roots, nt, nf, nin, i, times, stats):
    """Add `times` points, the first at i, with the node verdicts nt, nf, nin."""
    for c in range(roots.shape[0]):
        q = roots[c]
        und = not nt[q] and not nf[q]
        if nin[q]:
            stats[c, 0] += times
            if und:
                stats[c, 1] += times
        if nf[q]:
            stats[c, 2] += times
            if stats[c, 3] < 0:
                stats[c, 3] = i
        if und and stats[c, 4] < 0:
            stats[c, 4] = i

@jit(cache=True)
def _judge_counts(code, cv, cr, sv, sr, rels, length, safety, nodes, children, roots,
                  stats, rv, rr, bt, bf, ct, cf, cin, vl, vr, vT):
    """The counts of every check (Judged.stats), block by block of points; with per-point
    arrays (ct, cf, cin: checks x points; vl, vr, vT: relations x points), also every
    check's verdict and every relation's values at every point."""
    u = 2.0 ** -53
    B = rv.shape[1]
    N, R = nodes.shape[0], rels.shape[0]
    every_point = ct.shape[0] > 0 or vl.shape[0] > 0
    nt, nf = np.empty(N + R, np.bool_), np.empty(N + R, np.bool_)
    nin = np.empty(N, np.bool_)
    stats[:, :3] = 0
    stats[:, 3:] = -1
    for b0 in range(0, length, B):
        nb = min(B, length - b0)
        _exec(code, cv, cr, sv, sr, b0, nb, rv, rr)
        uniform = not every_point  # every relation has one verdict on the whole block
        for q in range(R):
            lr, rg, c = rels[q, 0], rels[q, 1], rels[q, 2]
            ntrue = 0
            nfalse = 0
            for i in range(nb):
                D = rv[lr, i] - rv[rg, i]
                T = (rr[lr, i] + rr[rg, i]) * safety + 2 * u * abs(D)
                t, f = _decide(c, D, T)
                bt[q, i], bf[q, i] = t, f
                ntrue += t
                nfalse += f
                if every_point:
                    vl[q, b0 + i], vr[q, b0 + i], vT[q, b0 + i] = rv[lr, i], rv[rg, i], T
            if ntrue == nb or nfalse == nb or ntrue + nfalse == 0:
                nt[N + q], nf[N + q] = ntrue == nb, nfalse == nb
            else:
                uniform = False
        if uniform:  # the usual clean block: judge its trees once
            _tree(nodes, children, nt, nf, nin)
            _count(roots, nt, nf, nin, b0, nb, stats)
            continue
        for i in range(nb):
            for q in range(R):
                nt[N + q], nf[N + q] = bt[q, i], bf[q, i]
            _tree(nodes, children, nt, nf, nin)
            _count(roots, nt, nf, nin, b0 + i, 1, stats)
            if every_point:
                for c in range(roots.shape[0]):
                    q = roots[c]
                    ct[c, b0 + i], cf[c, b0 + i], cin[c, b0 + i] = nt[q], nf[q], nin[q]
