"""The monitor: lemma statements compiled into checks, evaluated over a run's update log.

A lemma is checked only where its setting's assumptions hold: every assumption is compiled like
the statement and evaluated at the same points, and from the first point where one is certainly
false the lemma no longer applies to the run (a margin-perceptron run breaks the classic
``mistake`` assumption, so the classic lemmas stop applying, and only then).  That is reported,
never silently skipped; so is a lemma whose symbols the run cannot bind.

One path evaluates everything: the checks that live at one kind of point (the run's constants,
the examples, the updates and the states before them, the final state) form one program
(``_program``), judged at all the points of an env at once, in floats or, for exact runs, in
rationals.  The monitor reads the judge's counts and looks at single points only where
something failed.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..errors import InvalidArgument, InvariantViolation
from ._checks import Check, MonitoredLemma, SameObjects, other_run
from ._library import monitored
from ._program import Program

__all__ = ["LemmaViolation", "Monitor", "Invariant", "Violation", "monitor_of"]


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

    def place(self) -> str:
        """Where the lemma failed ('at update k=3, visit 7, example 2')."""
        at = []
        if self.k is not None:
            at.append(f"k={self.k}")
        if self.visit is not None:
            at.append(f"visit {self.visit}")
        if self.example is not None:
            at.append(f"example {self.example}")
        where = {"update": "at update", "state": "in the state", "example": "on",
                 "constant": "for the run's constants"}[self.where]
        return f"{where} {', '.join(at)}"

    def message(self) -> str:
        note = (f" (assumptions {', '.join(self.loose)} held only within rounding)"
                if self.loose else "")
        return (f"lemma {self.lemma} ({self.source}) violated {self.place()}: "
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


@dataclass
class Invariant:
    """A monitorable lemma: the compiled statement and its compiled assumptions."""

    lemma: MonitoredLemma
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

    @property
    def name(self) -> str:
        return self.lemma.name

    @property
    def where(self) -> str:
        return self.check.where

    def assumptions(self, *where) -> list:
        return [(name, h) for name, h in self.hypotheses if h.where in where]

    def at_updates(self) -> list:
        """[(name, check, 'update' or 'state')]: the assumptions judged with the updates: for an
        update or state lemma those about the update (and its example) or the state; for an
        example lemma, checked at the examples of the updates, those about the example."""
        if self.where == "example":
            return [(n, h, "update") for n, h in self.assumptions("example", "constant")]
        kinds = {"update": "update", "example": "update", "state": "state"}
        return [(n, h, kinds[h.where]) for n, h in self.assumptions(*kinds)]

    def note_loose(self, hname: str, first: int, at: int) -> None:
        """An assumption held only within rounding from point `at` on (first >= 0).  Vector
        definitions (w[k+1] = w[k] + y*x) are exempt: in floats they only ever hold so."""
        if first >= 0 and hname not in self.loose and not dict(self.hypotheses)[hname].vector_eq:
            self.loose[hname] = at

    def status(self) -> dict:
        return {"lemma": self.name, "statement": self.lemma.shown,
                "source": self.lemma.where, "where": self.where, "checks": self.checks,
                "undetermined": self.undetermined, "violations": self.violations,
                "applies": self.inapplicable is None, "inapplicable": self.inapplicable,
                "loose_assumptions": sorted(self.loose)}


# The checks each kind of point judges: the run's constants (once), every example (all_examples),
# a chunk of updates with the states before them, the state after the last update.
def _checks_at(invariants, kind: str, example_scope: str) -> tuple:
    out = []
    for inv in invariants:
        if kind == "constant":
            out += [inv.check] if inv.where == "constant" else []
            out += [h for _, h in inv.assumptions("constant")]
        elif kind == "example" and inv.where == "example":
            out += [inv.check] + [h for _, h in inv.assumptions("example", "constant")]
        elif kind == "chunk" and inv.where in ("update", "state", "example"):
            if inv.where != "example" or example_scope == "updates":
                out += [inv.check] + [h for _, h, _ in inv.at_updates()]
        elif kind == "state" and inv.where == "state":
            out += [inv.check] + [h for _, h in inv.assumptions("state")]
    return tuple(dict.fromkeys(out))  # each check once: lemmas of a setting share assumptions


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
    # The programs of the compiled lemmas, shared by the monitors fresh() makes.
    programs: dict = field(default_factory=dict, repr=False)
    _prev_visit: int | None = field(default=None, repr=False)  # the last update's visit
    _final: object = field(default=None, repr=False)  # the final state, judged

    @classmethod
    def from_lemmas(cls, lemmas, *, include_unverified: bool = False,
                    on_violation: str = "raise", engine: str = "single") -> "Monitor":
        """Monitor lemmas (records of the library, objects of load_lemmas, or Lemma);
        unverified ones are skipped.

        engine: 'single' (a run with one example per update: classic, margin, kernel, audits)
        or 'batch' (a batch step per update), or 'voted' (a classic run keeping its vote), or
        'averaged' (the visits of an averaged run: its lemmas indexed by t only); a
        lemma that mentions quantities only another kind of run has is listed as not
        monitorable, with the reason (``other_run``).
        """
        if engine not in ("single", "batch", "voted", "averaged"):
            raise InvalidArgument(f"engine={engine!r}")
        mon = cls(on_violation=_check_on_violation(on_violation))
        for lem in monitored(lemmas):
            if not lem.verified and not include_unverified:
                mon.not_monitorable.append((lem.name, "not verified (include_unverified=True "
                                                      "monitors it anyway)"))
                continue
            compiled = lem.run
            if not isinstance(compiled, str):
                compiled = other_run(compiled, engine) or compiled
            if isinstance(compiled, str):
                mon.not_monitorable.append((lem.name, compiled))
                continue
            mon.invariants.append(Invariant(lem, compiled[0], list(compiled[1])))
        return mon

    def fresh(self, *, on_violation: str | None = None) -> "Monitor":
        """A monitor of the same compiled lemmas with no run state."""
        return Monitor(invariants=[Invariant(i.lemma, i.check, i.hypotheses)
                                   for i in self.invariants],
                       not_monitorable=list(self.not_monitorable),
                       on_violation=_check_on_violation(on_violation or self.on_violation),
                       exact=self.exact, example_scope=self.example_scope,
                       programs=self.programs)

    # ------------------------------------------------------------------ queries

    @property
    def slots(self) -> frozenset:
        out = self.programs.get("slots")
        if out is None:
            out = self.programs["slots"] = frozenset().union(
                *(inv.check.slots for inv in self.invariants),
                *(h.slots for inv in self.invariants for _, h in inv.hypotheses))
        return out

    def needs(self, *slots) -> bool:
        return any(s in self.slots for s in slots)

    @property
    def checks(self) -> int:
        return sum(inv.checks for inv in self.invariants)

    def bound_invariants(self) -> list:
        """The monitored state lemmas that bound the number of updates: k <= e (or M <= e,
        k < e; `given` premises allowed)."""
        return [inv for inv in self.invariants if inv.where == "state" and inv.check.bounds_k]

    def bounds(self) -> dict:
        """lemma -> its bound on k in the final state (check_final_state first), for the bound
        lemmas that apply and whose premises hold there."""
        out = {}
        for inv in self.bound_invariants():
            verdict = self._final.verdict(inv.check)
            if inv.inapplicable is None and verdict.in_force[0]:
                out[inv.name] = float(verdict.rhs[0])
        return out

    def summary(self) -> dict:
        return {"monitored": [inv.status() for inv in self.invariants],
                "not_monitorable": [{"lemma": n, "reason": r} for n, r in self.not_monitorable],
                "checks": self.checks,
                "violations": [v.as_dict() for v in self.violations]}

    # ------------------------------------------------------------------ the points of a run

    def _judge(self, kind: str, env: dict, length: int):
        key = (kind, self.example_scope)
        program = self.programs.get(key)
        if program is None:
            program = self.programs[key] = Program(_checks_at(self.invariants, kind,
                                                              self.example_scope))
        return program.judge(env, length, exact=self.exact)

    def check_constants(self, env: dict) -> None:
        """Constant-only lemmas and assumptions, once per run."""
        jd = self._judge("constant", env, 1)
        found = []
        for inv in self.invariants:
            for hname, h in inv.assumptions("constant"):
                counts = jd.counts(h)
                inv.note_loose(hname, counts[4], 0)
                if counts[3] >= 0:
                    inv.fail_constant = True
                    inv.inapplicable = f"assumption {hname} fails for the run's constants"
            if inv.where == "constant" and not inv.fail_constant:
                if self._count(inv, jd)[0]:
                    found.append(((0, 0), inv, self._report(inv, jd, 0, "constant", 0), 1))
        self._record(found)

    def check_examples(self, env: dict, n: int, index=None) -> None:
        """Example lemmas at every example (env arrays of length n)."""
        if self.example_scope != "all":
            return
        jd = self._judge("example", env, n)
        found = []
        for inv in self.invariants:
            if inv.where == "example" and not inv.fail_constant:
                self._at_examples(inv, jd, 0, found, index=index)
        self._record(found)

    def check_chunk(self, env: dict, j0: int, length: int, *, examples=None,
                    visits=None) -> None:
        """Updates j0..j0+length-1 and the states before them (state j: before update j):
        env holds the slots of both."""
        if length == 0:
            return
        jd = self._judge("chunk", env, length)
        found = []
        for inv in self.invariants:
            if inv.fail_constant or inv.where == "constant":
                continue
            if inv.where == "example":
                if self.example_scope == "updates":
                    self._at_examples(inv, jd, j0, found, examples=examples, visits=visits)
                continue
            for hname, h, kind in inv.at_updates():
                counts = jd.counts(h)
                inv.note_loose(hname, counts[4], j0 + counts[4])
                if counts[3] >= 0:
                    self._fails(inv, hname, kind, j0 + counts[3], examples, visits, j0)
            # In force while the assumptions held: points j with j < fail_update and
            # j + 1 < fail_state for an update, j <= fail_update and j < fail_state for a state.
            if inv.where == "update":
                lim = min(inv.fail_update, inv.fail_state - 1) - j0
            else:
                lim = min(inv.fail_update + 1, inv.fail_state) - j0
            if lim <= 0:
                continue
            nbad, i = self._count(inv, jd, None if lim >= length else
                                  np.arange(length) < lim)
            if nbad:
                found.append(self._finding(inv, jd, i, j0, examples, visits, nbad))
        if visits is not None:
            self._prev_visit = int(visits[length - 1])
        self._record(found)

    def check_final_state(self, env: dict, K: int, visit=None) -> None:
        """State lemmas after the last update (k = K; visit: that of update K-1)."""
        jd = self._final = self._judge("state", env, 1)
        found = []
        for inv in self.invariants:
            if inv.fail_constant or inv.where != "state":
                continue
            for hname, h in inv.assumptions("state"):
                if K < inv.fail_state:
                    counts = jd.counts(h)
                    inv.note_loose(hname, counts[4], K)
                    if counts[3] >= 0:
                        inv.fail_state = K
                        self._why(inv, hname, "state", K, None, None, K)
            if K <= inv.fail_update and K < inv.fail_state and self._count(inv, jd)[0]:
                found.append(((K, 0), inv, self._report(inv, jd, 0, "state", K, k=K,
                                                        visit=visit), 1))
        self._record(found)

    def _at_examples(self, inv, jd, j0, found, *, index=None, examples=None, visits=None):
        """An example lemma at every point of jd where its assumptions are not certainly false:
        every example of the data (index: their numbers), or the examples of the updates
        j0, j0+1, ... (examples, visits: theirs)."""
        ok = None
        for hname, h, _ in inv.at_updates():
            counts = jd.counts(h)
            inv.note_loose(hname, counts[4], j0 + counts[4])
            if counts[3] >= 0:
                ok = ~jd.verdict(h).false if ok is None else ok & ~jd.verdict(h).false
        nbad, i = self._count(inv, jd, ok)
        if not nbad:
            return
        if examples is None:  # every example of the data
            ex = int(index[i]) if index is not None else i
            found.append(((i, 0), inv, self._report(inv, jd, i, "example", 0, example=ex),
                          nbad))
            return
        vis = int(visits[i]) if visits is not None else None
        found.append(((j0 + i, 0), inv, self._report(inv, jd, i, "example", j0 + i, k=j0 + i,
                                                     example=int(examples[i]), visit=vis),
                      nbad))

    @staticmethod
    def _count(inv, jd, ok=None):
        """Add the statement's points in force (among ok: a mask, None for all) to its
        counts; return (the number certainly false, the first of them or -1)."""
        if ok is None:
            counts = jd.counts(inv.check)
            inv.checks += counts[0]
            inv.undetermined += counts[1]
            return counts[2], counts[3]
        v = jd.verdict(inv.check)
        force = ok & v.in_force
        inv.checks += int(force.sum())
        inv.undetermined += int((force & ~v.true & ~v.false).sum())
        bad = np.flatnonzero(v.false & ok)
        return int(bad.size), (int(bad[0]) if bad.size else -1)

    # ------------------------------------------------------------------ reports

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

    def _finding(self, inv, jd, i: int, j0: int, examples, visits, count: int):
        """The first violation of a chunk at its position i, with its example and visit."""
        ex = int(examples[i]) if examples is not None and inv.where == "update" else None
        if visits is None:
            vis = None
        elif inv.where == "update":
            vis = int(visits[i])
        else:  # state k appears at the visit of update k-1
            vis = int(visits[i - 1]) if i > 0 else self._prev_visit
        v = self._report(inv, jd, i, inv.where, j0 + i, k=j0 + i, example=ex, visit=vis)
        return (j0 + i, 1 if inv.where == "update" else 0), inv, v, count

    @staticmethod
    def _report(inv: Invariant, jd, i: int, where: str, point: int, *, k=None, example=None,
                visit=None) -> Violation:
        verdict = jd.verdict(inv.check)
        lhs, rhs = float(verdict.lhs[i]), float(verdict.rhs[i])
        loose = tuple(sorted(n for n, j in inv.loose.items() if j <= point))
        return Violation(inv.name, inv.lemma.shown, where, lhs, rhs,
                         float(_slack(inv.check.relation, lhs, rhs)), float(verdict.tol[i]), k=k,
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


def _check_on_violation(on_violation: str) -> str:
    if on_violation not in ("raise", "collect"):
        raise InvalidArgument(f"on_violation={on_violation!r}")
    return on_violation


_TEMPLATES: dict = {}


def monitor_of(lemmas, *, include_unverified: bool = False,
               on_violation: str = "raise", engine: str = "single") -> Monitor:
    """A fresh Monitor of these lemmas (load_lemmas objects or Lemma).

    The compiled template, with its programs, is kept per list of lemma objects: a run or an
    audit with the same lemmas then costs no compiling (the fuzzer makes thousands).
    """
    key = (SameObjects(lemmas), bool(include_unverified), engine)
    template = _TEMPLATES.get(key)
    if template is None:
        template = Monitor.from_lemmas(key[0].objects, include_unverified=include_unverified,
                                       engine=engine)
        if len(_TEMPLATES) > 64:
            _TEMPLATES.clear()
        _TEMPLATES[key] = template
    return template.fresh(on_violation=on_violation)
