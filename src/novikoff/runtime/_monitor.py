"""The monitor: lemma statements compiled into checks, evaluated over a run's update log.

A lemma is checked only where its setting's assumptions hold: every assumption is compiled like
the statement and evaluated at the same points, and from the first point where one is certainly
false the lemma no longer applies to the run (a margin-perceptron run breaks the classic
``mistake`` assumption, so the classic lemmas stop applying, and only then).  That is reported,
never silently skipped; so is a lemma whose symbols the run cannot bind.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

import sympy as sp

from ..errors import InvalidArgument, InvariantViolation
from ..kernel.formulas import VectorEq
from ..quantities import in_run_vocabulary
from ._compile import PER_UPDATE, Check, Unbindable, compile_formula, slot_names

__all__ = ["Lemma", "LemmaViolation", "Monitor", "Invariant", "Violation", "as_lemma"]


@dataclass(frozen=True)
class Lemma:
    """A lemma to monitor: a kernel statement, its setting's assumptions, where it comes from."""

    name: str
    statement: object
    hypotheses: tuple = ()  # ((name, kernel formula), ...)
    kinds: dict | None = None
    verified: bool = True
    file: str = ""
    line: int = 0
    per_update: frozenset | None = None  # the setting's per-update names (None: x, y, d)
    setting: str = ""
    text: str = ""  # the statement as written in the .proof file
    bindings: tuple = ()  # the setting's `bind` declarations (novikoff.quantities.Binding)

    @property
    def shown(self) -> str:
        return self.text or str(self.statement)

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}" if self.file else "<python>"


def _hypotheses_of(obj) -> tuple:
    """The assumptions a lemma object relies on, as ((name, formula), ...)."""
    for attr in ("hypotheses", "depends_on", "assumptions"):
        found = getattr(obj, attr, None)
        if found is not None and not callable(found):
            break
    else:
        setting = getattr(obj, "setting", None)
        found = getattr(setting, "assumptions", None) if setting is not None else None
    if found is None:
        return ()
    if isinstance(found, dict):
        return tuple((str(k), v) for k, v in found.items())
    out = []
    for i, item in enumerate(found):
        if isinstance(item, tuple) and len(item) == 2:
            out.append((str(item[0]), item[1]))
        elif hasattr(item, "formula"):
            out.append((str(getattr(item, "name", f"h{i}")), item.formula))
        elif hasattr(item, "statement"):
            out.append((str(getattr(item, "name", f"h{i}")), item.statement))
        else:
            out.append((f"h{i}", item))
    return tuple(out)


def as_lemma(obj) -> Lemma:
    """Adapt a lemma from novikoff.language.load_lemmas (or a Lemma) to the monitor."""
    if isinstance(obj, Lemma):
        return obj
    setting = getattr(obj, "setting", None)
    kinds = getattr(setting, "kinds", None) if setting is not None else None
    per = getattr(setting, "per_update", None) if setting is not None else None
    return Lemma(name=str(obj.name), statement=obj.statement, hypotheses=_hypotheses_of(obj),
                 kinds=dict(kinds) if kinds else None,
                 verified=bool(getattr(obj, "verified", True)),
                 file=str(getattr(obj, "file", "") or ""), line=int(getattr(obj, "line", 0) or 0),
                 per_update=frozenset(str(v) for v in per) if per is not None else None,
                 setting=str(getattr(setting, "name", "") or ""),
                 text=str(getattr(obj, "text", "") or ""),
                 bindings=tuple(getattr(setting, "bindings", ()) or ()))


def _check_per_update(lem: Lemma, check: Check, what: str) -> None:
    """x, y, d are bound to the example of each update: the setting must say so."""
    if lem.per_update is None or check.where not in ("update", "state"):
        return
    for name in sorted(slot_names(check.slots) & PER_UPDATE):
        if name not in lem.per_update:
            raise Unbindable(f"{what}mentions {name}, which setting {lem.setting or '?'} does not "
                             f"declare 'per update': it cannot be bound to each update's example")


_LEMMA_CACHE: dict = {}


def _compile_lemma(lem: Lemma):
    """(statement check, ((name, assumption check), ...)) or the reason it cannot be bound."""
    try:
        key = (lem.statement, lem.hypotheses, None if lem.kinds is None else
               frozenset(lem.kinds.items()), lem.per_update, lem.setting, lem.bindings)
        hit = _LEMMA_CACHE.get(key)
    except TypeError:
        key, hit = None, None
    if hit is not None:
        return hit
    try:
        statement, hypotheses, kinds, per_update = in_run_vocabulary(
            lem.statement, lem.hypotheses, lem.kinds, lem.per_update, lem.bindings)
        lem = replace(lem, kinds=kinds, per_update=per_update)
        check = compile_formula(statement, lem.kinds)
        _check_per_update(lem, check, "the statement ")
        hyps = []
        for hname, formula in hypotheses:
            try:
                h = compile_formula(formula, lem.kinds)
                _check_per_update(lem, h, "")
            except Unbindable as err:
                raise Unbindable(f"assumption {hname}: {err}") from None
            hyps.append((hname, h))
        out = (check, tuple(hyps))
    except Unbindable as err:
        out = str(err)
    if key is not None and len(_LEMMA_CACHE) < 4096:
        _LEMMA_CACHE[key] = out
    return out


@dataclass
class Violation:
    """One certainly-false evaluation of a lemma's statement."""

    lemma: str
    statement: str
    where: str  # 'update', 'state', 'example' or 'constant'
    lhs: float
    rhs: float
    slack: float
    tolerance: float
    k: int | None = None
    example: int | None = None
    visit: int | None = None
    source: str = ""
    loose: tuple = ()  # assumptions that held only within rounding before this point

    def message(self) -> str:
        at = []
        if self.k is not None:
            at.append(f"k={self.k}")
        if self.visit is not None:
            at.append(f"visit {self.visit}")
        if self.example is not None:
            at.append(f"example {self.example}")
        place = {"update": "at update", "state": "in the state", "example": "on",
                 "constant": "for the run's constants"}[self.where]
        note = (f" (assumptions {', '.join(self.loose)} held only within rounding)"
                if self.loose else "")
        return (f"lemma {self.lemma} ({self.source}) violated {place} {', '.join(at)}: "
                f"{self.statement}: lhs = {self.lhs!r}, rhs = {self.rhs!r}, "
                f"slack = {self.slack:.6g}, tolerance = {self.tolerance:.3g}{note}")

    def as_dict(self) -> dict:
        return {"kind": "lemma", "lemma": self.lemma, "statement": self.statement,
                "where": self.where, "k": self.k, "example": self.example,
                "visit": self.visit, "lhs": self.lhs, "rhs": self.rhs, "slack": self.slack,
                "tolerance": self.tolerance, "source": self.source,
                "loose_assumptions": list(self.loose), "message": self.message()}


class LemmaViolation(InvariantViolation):
    """A lemma's statement is certainly false at a point of a run (beyond the rounding bound).

    Attributes: ``lemma``, ``statement``, ``lhs``, ``rhs``, ``k``, ``example``, ``visit``,
    ``slack`` (lhs - rhs oriented so that negative means violated), ``tolerance`` (the rounding
    bound that was allowed), ``source`` (file:line) and ``violation`` (a Violation).
    """

    def __init__(self, violation: Violation):
        self.violation = violation
        for name in ("lemma", "statement", "lhs", "rhs", "k", "example", "visit", "slack",
                     "tolerance", "source"):
            setattr(self, name, getattr(violation, name))
        super().__init__(violation.message())


def _slack(rel: str, lhs, rhs):
    if rel in (">=", ">"):
        return lhs - rhs
    if rel in ("<=", "<"):
        return rhs - lhs
    if rel == "=":
        return -np.abs(lhs - rhs)
    return np.abs(lhs - rhs)


def _relation_of(check: Check):
    node = check.tree
    while node[0] != "rel":
        node = node[2] if node[0] == "imp" else node[1][0]
    return node[1]


@dataclass
class Invariant:
    """A monitorable lemma: the compiled statement and its compiled assumptions."""

    lemma: Lemma
    check: Check
    hypotheses: list  # [(name, Check)]
    checks: int = 0  # points where the statement was in force and evaluated
    undetermined: int = 0  # of those, within the rounding tolerance (neither true nor false)
    violations: int = 0
    first_violation: Violation | None = None
    inapplicable: str | None = None  # why and from where the lemma stopped applying
    fail_update: float = np.inf  # first update whose update/example assumptions fail
    fail_state: float = np.inf  # first state whose state assumptions fail
    fail_constant: bool = False
    loose: dict = field(default_factory=dict)  # assumption -> first point it was undetermined
    # derived from the fields above (given by fresh(), which copies them: a run starts
    # several monitors from one template)
    vector_definitions: frozenset | None = None
    where: str = ""

    def __post_init__(self):
        if self.vector_definitions is None:
            self.vector_definitions = frozenset(n for n, h in self.hypotheses
                                                if isinstance(h.formula, VectorEq))
        self.where = self.check.where

    @property
    def name(self) -> str:
        return self.lemma.name

    def status(self) -> dict:
        return {"lemma": self.name, "statement": self.lemma.shown,
                "source": self.lemma.where, "where": self.where, "checks": self.checks,
                "undetermined": self.undetermined, "violations": self.violations,
                "applies": self.inapplicable is None, "inapplicable": self.inapplicable,
                "loose_assumptions": sorted(self.loose)}


@dataclass
class Monitor:
    """Compiled lemmas and the bookkeeping of one monitored run.

    Envs map slot names to ``(values, error bounds)`` (floats, vectorised) or, with exact=True,
    to exact values (Fractions, lists of them, or ('sqrt', q)).
    """

    invariants: list = field(default_factory=list)
    not_monitorable: list = field(default_factory=list)  # [(name, reason)]
    on_violation: str = "raise"
    violations: list = field(default_factory=list)
    exact: bool = False
    # Where lemmas about a single example are checked: on every example of the data
    # (check_examples) or on the example of every update (check_chunk, O(updates)).
    example_scope: str = "all"
    # What depends only on the compiled lemmas, shared by the monitors fresh() makes.
    shared: dict = field(default_factory=dict, repr=False)

    def _eval(self, check: Check, env: dict, shape):
        # Lemmas of one setting share their assumptions: evaluate each once per env.
        judged = self._last_judged
        if judged is not None and judged[0] is env and id(check) in judged[1].program.index:
            return judged[1].verdict(check)
        memo = self._memo
        key = (id(check), id(env))
        if memo is not None and key in memo:
            return memo[key]
        if self.exact:
            out = check.evaluate_exact_points(env, shape[0])
        else:
            out = check.evaluate(env, shape)
        if memo is not None:
            memo[key] = out
        return out

    _memo = None
    _last_judged = None  # (env, Judged) of the last check_final_state / check_constants
    # The run's scratch memory (runtime._scratch) for the judge's per-chunk arrays, if any.
    scratch = None
    _plans = None  # shared -> (fail_constant flags, the _chunk_plan they give)
    _prev_visit = None  # the visit of the last update checked (where state k+1 appears)

    def _fresh_memo(self):
        self._memo = {}
        self._last_judged = None

    def _prefetch(self, checks, env: dict, length: int) -> None:
        """Evaluate many checks on one env at once (one numba program) into the memo."""
        from ._program import HAVE_NUMBA, build_program
        if self.exact or not HAVE_NUMBA or length == 0:
            return
        unique = list({id(c): c for c in checks}.values())
        if not unique:
            return
        for c, verdict in zip(unique, build_program(unique).run(env, length)):
            self._memo[(id(c), id(env))] = verdict

    def _chunk_checks(self):
        """The checks check_chunk evaluates on update envs, on state envs, and both (unique)."""
        key = ("chunk checks", self.example_scope,
               tuple((id(inv.check), inv.fail_constant) for inv in self.invariants))
        hit = self.shared.get(key)
        if hit is not None:
            return hit
        on_u, on_s = [], []
        for inv in self.invariants:
            if inv.fail_constant or inv.where == "constant":
                continue
            if inv.where == "example":
                if self.example_scope == "updates":
                    on_u.append(inv.check)
                    on_u += [h for _, h in inv.hypotheses if h.where in ("example", "constant")]
                continue
            (on_u if inv.where == "update" else on_s).append(inv.check)
            for _, h in inv.hypotheses:
                if h.where in ("update", "example"):
                    on_u.append(h)
                elif h.where == "state":
                    on_s.append(h)
        both = tuple({id(c): c for c in on_u + on_s}.values())
        on_u = tuple({id(c): c for c in on_u}.values())
        on_s = tuple({id(c): c for c in on_s}.values())
        self.shared[key] = on_u, on_s, both
        return on_u, on_s, both

    def _chunk_plan(self, build, shared: bool):
        """check_chunk's work list: the judge's programs and, per invariant checked in a chunk,
        (index, where, (program, row) of its check, [(assumption, program, row, 'update' or
        'state')]).

        shared: the state env is part of the update env, so one program judges both; otherwise
        one program per env.  check_chunk then reads the judge's counts by row, without looking
        anything up per chunk.  Kept per template and per set of invariants whose constants
        already failed.
        """
        flags = tuple(inv.fail_constant for inv in self.invariants)
        mine = self._plans.get(shared)
        if mine is not None and mine[0] == flags:
            return mine[1]
        key = ("chunk plan", shared, self.example_scope,
               tuple(id(inv.check) for inv in self.invariants), flags)
        plan = self.shared.get(key)
        if plan is None:
            on_u, on_s, both = self._chunk_checks()
            programs = (build(both),) if shared else (build(on_u), build(on_s))
            state = 0 if shared else 1  # the program that judges the state env

            def at(which, check):
                sel = state if which == "state" else 0
                return sel, programs[sel].index[id(check)]

            entries = []
            for k, inv in enumerate(self.invariants):
                if inv.fail_constant or inv.where == "constant":
                    continue
                if inv.where == "example":
                    if self.example_scope != "updates":
                        continue
                    kinds = {"example": "update", "constant": "update"}
                else:
                    kinds = {"update": "update", "example": "update", "state": "state"}
                hyps = [(hname, *at(kinds[h.where], h), kinds[h.where])
                        for hname, h in inv.hypotheses if h.where in kinds]
                where = "update" if inv.where == "example" else inv.where
                entries.append((k, inv.where, at(where, inv.check), hyps))
            plan = self.shared[key] = (programs, entries)
        self._plans[shared] = (flags, plan)
        return plan

    @classmethod
    def from_lemmas(cls, lemmas, *, include_unverified: bool = False,
                    on_violation: str = "raise") -> "Monitor":
        """Compile lemmas (objects of load_lemmas, or Lemma); unverified ones are skipped."""
        if on_violation not in ("raise", "collect"):
            raise InvalidArgument(f"on_violation={on_violation!r}")
        mon = cls(on_violation=on_violation)
        for obj in lemmas:
            lem = as_lemma(obj)
            if not lem.verified and not include_unverified:
                mon.not_monitorable.append((lem.name, "not verified (include_unverified=True "
                                                      "monitors it anyway)"))
                continue
            compiled = _compile_lemma(lem)
            if isinstance(compiled, str):
                mon.not_monitorable.append((lem.name, compiled))
                continue
            mon.invariants.append(Invariant(lem, compiled[0], list(compiled[1])))
        return mon

    def fresh(self, *, on_violation: str | None = None) -> "Monitor":
        """A monitor of the same compiled lemmas with no run state."""
        on_violation = self.on_violation if on_violation is None else on_violation
        if on_violation not in ("raise", "collect"):
            raise InvalidArgument(f"on_violation={on_violation!r}")
        return Monitor(invariants=[Invariant(i.lemma, i.check, list(i.hypotheses),
                                             vector_definitions=i.vector_definitions)
                                   for i in self.invariants],
                       not_monitorable=list(self.not_monitorable), on_violation=on_violation,
                       exact=self.exact, example_scope=self.example_scope,
                       shared=self.shared)

    # ------------------------------------------------------------------ queries

    @property
    def slots(self) -> frozenset:
        key = ("slots", tuple(id(inv.check) for inv in self.invariants))
        out = self.shared.get(key)
        if out is None:
            out = set()
            for inv in self.invariants:
                out |= inv.check.slots
                for _, h in inv.hypotheses:
                    out |= h.slots
            out = self.shared[key] = frozenset(out)
        return out

    def needs(self, *slots) -> bool:
        have = self.slots
        return any(s in have for s in slots)

    @property
    def checks(self) -> int:
        return sum(inv.checks for inv in self.invariants)

    def summary(self) -> dict:
        return {"monitored": [inv.status() for inv in self.invariants],
                "not_monitorable": [{"lemma": n, "reason": r} for n, r in self.not_monitorable],
                "checks": self.checks,
                "violations": [v.as_dict() for v in self.violations]}

    # ------------------------------------------------------------------ evaluation

    def _memoised(self, key, compute):
        memo = self._memo
        if memo is None:
            return compute()
        hit = memo.get(key)
        if hit is None:
            hit = memo[key] = compute()
        return hit

    def _assume(self, inv, hname, verdict, j0, ok=None):
        """Note where an assumption held only within rounding; return where it certainly fails.

        Vector definitions (w[k+1] = w[k] + y*x) are exempt from the note: in floating point
        they can only ever hold within rounding.
        """
        if hname not in inv.loose:
            def first_loose():
                loose = ~verdict.true & ~verdict.false
                if ok is not None:
                    loose &= ok
                first = np.flatnonzero(loose)
                return -1 if first.size == 0 else int(first[0])
            j = self._memoised(("loose", id(verdict), None if ok is None else id(ok)),
                               first_loose)
            if j >= 0 and hname not in inv.vector_definitions:
                inv.loose[hname] = j0 + j
        return verdict.false

    def _first_false(self, verdict) -> int:
        def first():
            bad = np.flatnonzero(verdict.false)
            return -1 if bad.size == 0 else int(bad[0])
        return self._memoised(("first", id(verdict)), first)

    def _judge(self, inv, verdict, ok):
        """Count the evaluated points; return the indices of violations."""
        if ok is None or ok.all():  # the common case: no assumption has failed
            def counts():
                force = verdict.in_force
                und = force & ~verdict.true & ~verdict.false
                return int(force.sum()), int(und.sum()), np.flatnonzero(verdict.false)
            n, und, bad = self._memoised(("judge", id(verdict)), counts)
            inv.checks += n
            inv.undetermined += und
            return bad
        force = ok & verdict.in_force
        inv.checks += int(force.sum())
        inv.undetermined += int((force & ~verdict.true & ~verdict.false).sum())
        return np.flatnonzero(verdict.false & ok)

    def _finding(self, inv, ver, i: int, j0: int, examples, visits, count: int):
        """The first violation of a chunk at its position i, with its example and visit."""
        ex = int(examples[i]) if examples is not None and inv.where == "update" else None
        if visits is None:
            vis = None
        elif inv.where == "update":
            vis = int(visits[i])
        else:  # state k appears at the visit of update k-1
            vis = int(visits[i - 1]) if i > 0 else self._prev_visit
        v = self._report(inv, ver, i, inv.where, j0 + i, k=j0 + i, example=ex, visit=vis)
        return (j0 + i, 1 if inv.where == "update" else 0), inv, v, count

    def _report(self, inv: Invariant, verdict, i: int, where: str, point: int, *, k=None,
                example=None, visit=None) -> Violation:
        rel = _relation_of(inv.check)
        lhs, rhs = float(verdict.lhs[i]), float(verdict.rhs[i])
        loose = tuple(sorted(n for n, j in inv.loose.items() if j <= point))
        return Violation(inv.name, inv.lemma.shown, where, lhs, rhs,
                         float(_slack(rel, lhs, rhs)), float(verdict.tol[i]), k=k,
                         example=example, visit=visit, source=inv.lemma.where, loose=loose)

    def _record(self, found: list) -> None:
        """found: [(order key, invariant, Violation, count)]; raise on the earliest."""
        if not found:
            return
        found.sort(key=lambda f: f[0])
        for _, inv, v, count in found:
            inv.violations += count
            if inv.first_violation is None:
                inv.first_violation = v
                self.violations.append(v)
        if self.on_violation == "raise":
            raise LemmaViolation(found[0][2])

    def _judge_point(self, build, where: str, env: dict):
        """Judge, at a single point, the lemmas and assumptions that live at `where`."""
        self._fresh_memo()
        key = ("point checks", where, tuple(id(inv.check) for inv in self.invariants))
        checks = self.shared.get(key)
        if checks is None:
            checks = [inv.check for inv in self.invariants if inv.where == where] + \
                     [h for inv in self.invariants for _, h in inv.hypotheses if h.where == where]
            checks = self.shared[key] = tuple({id(c): c for c in checks}.values())
        jd = build(checks).judge(env, 1)
        self._last_judged = (env, jd)
        return jd

    def check_constants(self, env: dict) -> None:
        """Constant-only lemmas and assumptions, once per run."""
        build = self._judged()
        if build is None:
            return self._check_constants_closures(env)
        jd = self._judge_point(build, "constant", env)
        found = []
        for inv in self.invariants:
            for hname, h in inv.hypotheses:
                if h.where != "constant":
                    continue
                st = jd.stats[jd.row(h)]
                if hname not in inv.loose and st[4] >= 0 and \
                        hname not in inv.vector_definitions:
                    inv.loose[hname] = 0
                if st[3] >= 0:
                    inv.fail_constant = True
                    inv.inapplicable = f"assumption {hname} fails for the run's constants"
            if inv.where == "constant" and not inv.fail_constant:
                st = jd.stats[jd.row(inv.check)]
                inv.checks += int(st[0])
                inv.undetermined += int(st[1])
                if st[2]:
                    ver = jd.verdict(inv.check)
                    found.append(((0, 0), inv, self._report(inv, ver, 0, "constant", 0), 1))
        self._record(found)

    def _check_constants_closures(self, env: dict) -> None:
        """Constant-only lemmas and assumptions, once per run."""
        self._fresh_memo()
        self._prefetch([inv.check for inv in self.invariants if inv.where == "constant"] +
                       [h for inv in self.invariants for _, h in inv.hypotheses
                        if h.where == "constant"], env, 1)
        found = []
        for inv in self.invariants:
            for hname, h in inv.hypotheses:
                if h.where == "constant" and self._assume(inv, hname, self._eval(h, env, (1,)),
                                                          0)[0]:
                    inv.fail_constant = True
                    inv.inapplicable = f"assumption {hname} fails for the run's constants"
            if inv.where == "constant" and not inv.fail_constant:
                ver = self._eval(inv.check, env, (1,))
                if self._judge(inv, ver, np.ones(1, bool)).size:
                    found.append(((0, 0), inv, self._report(inv, ver, 0, "constant", 0), 1))
        self._record(found)

    def check_examples(self, env: dict, n: int, index=None) -> None:
        """Example lemmas at every example (env arrays of length n)."""
        self._fresh_memo()
        found = []
        for inv in self.invariants:
            if inv.where != "example" or inv.fail_constant or self.example_scope != "all":
                continue
            ok = np.ones(n, bool)
            for hname, h in inv.hypotheses:
                if h.where in ("example", "constant"):
                    ok &= ~self._assume(inv, hname, self._eval(h, env, (n,)), 0)
            ver = self._eval(inv.check, env, (n,))
            bad = self._judge(inv, ver, ok)
            if bad.size:
                i = int(bad[0])
                ex = int(index[i]) if index is not None else i
                found.append(((i, 0), inv, self._report(inv, ver, i, "example", 0, example=ex),
                              int(bad.size)))
        self._record(found)

    def _judged(self):
        """The numba judge (None: exact mode or no numba, where the closures are used)."""
        if self.exact:
            return None
        from ._program import HAVE_NUMBA, build_program
        return build_program if HAVE_NUMBA else None

    @staticmethod
    def _same_points(env_u: dict, env_s: dict) -> bool:
        """env_s is a part of env_u (the same arrays): one program evaluates both."""
        for key, val in env_s.items():
            other = env_u.get(key)
            if other is None or other[0] is not val[0] or other[1] is not val[1]:
                return False
        return True

    def check_chunk(self, env_u: dict, env_s: dict, j0: int, length: int, *, examples=None,
                    visits=None) -> None:
        """Updates j0..j0+length-1 (env_u) and the states before them (env_s)."""
        if length == 0:
            self._fresh_memo()
            return
        build = self._judged()
        if build is None:
            return self._check_chunk_closures(env_u, env_s, j0, length, examples=examples,
                                              visits=visits)
        self._memo = None
        self._last_judged = None
        if self._plans is None:
            self._plans = {}
        shared = self._same_points(env_u, env_s)
        programs, entries = self._chunk_plan(build, shared)
        judged = [prog.judge(env, length, self.scratch)
                  for prog, env in zip(programs, (env_u, env_s))]
        # the counts as lists: reading them costs no numpy scalar per invariant
        counts = [jd.stats.tolist() for jd in judged]
        found = []
        invariants = self.invariants
        for k, where, (sel, c), hyps in entries:
            inv = invariants[k]
            jd = judged[sel]
            if where == "example":
                self._examples_at_updates_judged(inv, jd, counts[0], c, hyps, j0, examples,
                                                 visits, found)
                continue
            for hname, hsel, row, which in hyps:
                st = counts[hsel][row]
                if st[4] >= 0 and hname not in inv.loose and \
                        hname not in inv.vector_definitions:
                    inv.loose[hname] = j0 + st[4]
                if st[3] >= 0:
                    self._fails(inv, hname, which, j0 + st[3], examples, visits, j0)
            if where == "update":
                # points j with j < fail_update and j + 1 < fail_state: a prefix
                lim = min(inv.fail_update, inv.fail_state - 1) - j0
            else:
                lim = min(inv.fail_update + 1, inv.fail_state) - j0
            if lim <= 0:
                continue
            st = counts[sel][c]
            if lim >= length:
                inv.checks += st[0]
                inv.undetermined += st[1]
                nbad, i = st[2], st[3]
            else:
                lim = int(lim)
                force = jd.cin[c, :lim]
                inv.checks += int(force.sum())
                inv.undetermined += int((force & ~jd.ct[c, :lim] & ~jd.cf[c, :lim]).sum())
                bad = np.flatnonzero(jd.cf[c, :lim])
                nbad, i = int(bad.size), (int(bad[0]) if bad.size else -1)
            if nbad:
                found.append(self._finding(inv, jd.verdict(inv.check), i, j0, examples,
                                           visits, nbad))
        if visits is not None:
            self._prev_visit = int(visits[length - 1])
        self._record(found)

    def _examples_at_updates_judged(self, inv, jd, counts, c, hyps, j0, examples, visits,
                                    found):
        """An example lemma at the examples of a chunk's updates (judged by jd; its counts by
        row; hyps: the plan's assumptions, all judged by jd)."""
        ok = None
        for hname, _, row, _ in hyps:
            st = counts[row]
            if st[4] >= 0 and hname not in inv.loose and hname not in inv.vector_definitions:
                inv.loose[hname] = j0 + st[4]
            if st[3] >= 0:
                hf = jd.cf[row]
                ok = ~hf if ok is None else ok & ~hf
        if ok is None:
            st = counts[c]
            inv.checks += st[0]
            inv.undetermined += st[1]
            nbad, i = st[2], st[3]
        else:
            force = ok & jd.cin[c]
            inv.checks += int(force.sum())
            inv.undetermined += int((force & ~jd.ct[c] & ~jd.cf[c]).sum())
            bad = np.flatnonzero(jd.cf[c] & ok)
            nbad, i = int(bad.size), (int(bad[0]) if bad.size else -1)
        if nbad:
            ex = int(examples[i]) if examples is not None else None
            vis = int(visits[i]) if visits is not None else None
            found.append(((j0 + i, 0), inv, self._report(inv, jd.verdict(inv.check), i,
                                                         "example", j0 + i, k=j0 + i,
                                                         example=ex, visit=vis), nbad))

    def _check_chunk_closures(self, env_u: dict, env_s: dict, j0: int, length: int, *, examples=None,
                    visits=None) -> None:
        """Updates j0..j0+length-1 (env_u) and the states before them (env_s)."""
        self._fresh_memo()
        if length:
            on_u, on_s, _ = self._chunk_checks()
            self._prefetch(on_u, env_u, length)
            self._prefetch(on_s, env_s, length)
        if length == 0:
            return
        js = np.arange(j0, j0 + length)
        found = []
        for inv in self.invariants:
            if inv.fail_constant or inv.where == "constant":
                continue
            if inv.where == "example":
                if self.example_scope == "updates":
                    self._examples_at_updates(inv, env_u, j0, length, examples, visits, found)
                continue
            for hname, h in inv.hypotheses:
                if h.where in ("update", "example"):
                    env, which = env_u, "update"
                elif h.where == "state":
                    env, which = env_s, "state"
                else:
                    continue
                ver = self._eval(h, env, (length,))
                self._assume(inv, hname, ver, j0)
                bad = self._first_false(ver)
                if bad >= 0:
                    self._fails(inv, hname, which, j0 + bad, examples, visits, j0)
            if inv.where == "update":
                last_ok = j0 + length - 1 < inv.fail_update and j0 + length < inv.fail_state
                ok = None if last_ok else (js < inv.fail_update) & (js + 1 < inv.fail_state)
                env = env_u
            else:
                last_ok = j0 + length - 1 <= inv.fail_update and j0 + length - 1 < inv.fail_state
                ok = None if last_ok else (js <= inv.fail_update) & (js < inv.fail_state)
                env = env_s
            if ok is not None and not ok.any():
                continue
            ver = self._eval(inv.check, env, (length,))
            bad = self._judge(inv, ver, ok)
            if bad.size:
                found.append(self._finding(inv, ver, int(bad[0]), j0, examples, visits,
                                           int(bad.size)))
        if visits is not None and length:
            self._prev_visit = int(visits[length - 1])
        self._record(found)

    def _examples_at_updates(self, inv, env_u, j0, length, examples, visits, found):
        ok = np.ones(length, bool)
        for hname, h in inv.hypotheses:
            if h.where in ("example", "constant"):
                ok &= ~self._assume(inv, hname, self._eval(h, env_u, (length,)), j0)
        ver = self._eval(inv.check, env_u, (length,))
        bad = self._judge(inv, ver, ok)
        if bad.size:
            i = int(bad[0])
            ex = int(examples[i]) if examples is not None else None
            vis = int(visits[i]) if visits is not None else None
            found.append(((j0 + i, 0), inv, self._report(inv, ver, i, "example", j0 + i,
                                                         k=j0 + i, example=ex, visit=vis),
                          int(bad.size)))

    def check_final_state(self, env_s: dict, K: int, visit=None) -> None:
        """State lemmas after the last update (k = K; visit: that of update K-1)."""
        build = self._judged()
        if build is None:
            return self._check_final_state_closures(env_s, K, visit=visit)
        jd = self._judge_point(build, "state", env_s)
        found = []
        for inv in self.invariants:
            if inv.fail_constant or inv.where != "state":
                continue
            for hname, h in inv.hypotheses:
                if h.where == "state" and K < inv.fail_state:
                    st = jd.stats[jd.row(h)]
                    if hname not in inv.loose and st[4] >= 0 and \
                            hname not in inv.vector_definitions:
                        inv.loose[hname] = K
                    if st[3] >= 0:
                        inv.fail_state = K
                        self._why(inv, hname, "state", K, None, None, K)
            if not (K <= inv.fail_update and K < inv.fail_state):
                continue
            st = jd.stats[jd.row(inv.check)]
            inv.checks += int(st[0])
            inv.undetermined += int(st[1])
            if st[2]:
                found.append(((K, 0), inv, self._report(inv, jd.verdict(inv.check), 0, "state",
                                                        K, k=K, visit=visit), 1))
        self._record(found)

    def _check_final_state_closures(self, env_s: dict, K: int, visit=None) -> None:
        """State lemmas after the last update (k = K; visit: that of update K-1)."""
        self._fresh_memo()
        self._prefetch([inv.check for inv in self.invariants if inv.where == "state"] +
                       [h for inv in self.invariants for _, h in inv.hypotheses
                        if h.where == "state"], env_s, 1)
        found = []
        for inv in self.invariants:
            if inv.fail_constant or inv.where != "state":
                continue
            for hname, h in inv.hypotheses:
                if h.where == "state" and K < inv.fail_state and \
                        self._assume(inv, hname, self._eval(h, env_s, (1,)), K)[0]:
                    inv.fail_state = K
                    self._why(inv, hname, "state", K, None, None, K)
            if not (K <= inv.fail_update and K < inv.fail_state):
                continue
            ver = self._eval(inv.check, env_s, (1,))
            if self._judge(inv, ver, np.ones(1, bool)).size:
                found.append(((K, 0), inv, self._report(inv, ver, 0, "state", K, k=K,
                                                        visit=visit), 1))
        self._record(found)

    @classmethod
    def _fails(cls, inv, hname, where, j, examples, visits, j0):
        """Assumption hname fails at point j of kind where ('update' or 'state'): record it if
        it is the earliest failure of that kind, with the reason the lemma stops applying."""
        if where == "update" and j < inv.fail_update:
            inv.fail_update = j
        elif where == "state" and j < inv.fail_state:
            inv.fail_state = j
        else:
            return
        cls._why(inv, hname, where, j, examples, visits, j0)

    @staticmethod
    def _why(inv, hname, where, j, examples, visits, j0):
        if inv.inapplicable is not None and inv.fail_update < j and inv.fail_state < j:
            return
        if where == "update":
            extra = ""
            if examples is not None:
                extra = f" (example {int(examples[j - j0])}"
                extra += f", visit {int(visits[j - j0])})" if visits is not None else ")"
            inv.inapplicable = f"assumption {hname} fails at update k={j}{extra}"
        else:
            inv.inapplicable = f"assumption {hname} fails in the state k={j}"
