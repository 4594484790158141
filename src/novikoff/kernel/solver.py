"""Deciding obligations: SymPy-free translation of kernel formulas to Z3 (QF_NRA) and entailment.

The translation of terms is total and conservative: ``sqrt`` and division are new variables defined
for every value of their argument (``sqrt(a) = 0`` for ``a < 0``, ``1/0 = 0``), so a definition never
removes a model.  The translation of a *relation* is strict: it holds only together with its domain
(every denominator non-zero, every radicand non-negative), so the total values are never used
where a term means nothing.  ``Norm(q)`` is ``sqrt(q)`` where ``q = <v, v>`` is a Gram form, so
``q >= 0`` is added as a fact (positivity of the inner product).  Two elements of one sequence are
equal when their indices are (``j = k`` gives ``w[j] = w[k]``).  Naturals are first relaxed to reals
``>= 0`` (nlsat is complete and fast there); a model that gives a natural a fractional value is
re-checked with the naturals as integers.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from fractions import Fraction

import sympy as sp

try:
    import z3
except ImportError:  # steps with stored certificates replay without it (certified.py)
    z3 = None

from .formulas import (Conjunction, Disjunction, Equivalence, Implication, Relation, VectorEq,
                       sides, visible_obligations)
from .terms import MAX_DIGITS, Inner, Norm, index_of

__all__ = ["Translator", "TranslationError", "Verdict", "entails", "atom_name", "model_number",
           "AUDIT", "Audit", "LIMITS", "Limits", "BUDGET_SPENT"]


class TranslationError(Exception):
    """A term has no translation (an unsupported function or exponent)."""


@functools.lru_cache(maxsize=1 << 16)  # printing a sum is slow: measured 0.9 of 5 s on seed 000
def atom_name(expr: sp.Basic) -> str:
    """The solver name of a scalar atom: a symbol, a sequence element or an inner product."""
    if isinstance(expr, Inner):
        u, v = expr.args
        return f"<{atom_name(u)}, {atom_name(v)}>"
    if isinstance(expr, sp.core.function.AppliedUndef):
        return f"{expr.func.__name__}[{expr.args[0]}]"  # an index: a polynomial in nats
    if isinstance(expr, sp.Dummy):  # one per use: never the name of a declared symbol
        return f"{expr.name}~{expr.dummy_index}"
    if isinstance(expr, sp.Symbol):
        return expr.name
    # A sum or a helper's argument: SymPy's full form, so that a user's sequence named Abs or
    # ceiling never reads like SymPy's own function.
    return sp.srepr(expr)


def coefficient_conditions(norm: Norm) -> tuple:
    """Where the coefficients of a norm's vector mean something (sqrt(b)*x needs b >= 0)."""
    return tuple(dict.fromkeys(o for _, c in norm.vector().terms
                               for o in visible_obligations(c)))


@dataclass(frozen=True)
class _Piece:
    """What translating a formula (or a helper's definition) produced and used: the Z3 term, the
    atoms it mentions, the helpers (square roots, inverses) it needs, whether it has floor or
    ceil."""

    expr: object
    atoms: tuple  # SymPy atoms
    helpers: tuple  # keys of _HELPERS
    has_integers: bool


# Translations shared by every Translator (all in Z3's main context): the same formulas are told to the
# solver in many steps (the declarations and assumptions in every one), and building Z3 terms
# from Python dominated checking (measured: `novikoff check proofs/` 3.7 -> 2.x s).  A translation
# depends only on the formula, its polarity and which symbols are integers; helper variables are
# named after their argument, so the same helper is the same variable in every translation.
_PIECES: dict = {}  # (formula, goal, integer nats) -> _Piece
_HELPERS: dict = {}  # (kind, argument, integer nats) -> (variable, definitions, _Piece of arg)


@dataclass
class Translator:
    """Translate kernel terms and formulas into one Z3 context, remembering their definitions."""

    nats: frozenset = frozenset()  # SymPy symbols translated as integers
    definitions: list = field(default_factory=list)
    atoms: dict = field(default_factory=dict)  # solver name -> (SymPy atom, z3 variable)
    helpers: set = field(default_factory=set)  # keys of the helpers defined here
    has_integers: bool = False  # floor or ceil: the integer solver decides
    _recording: list = field(default_factory=list)  # (atoms, helpers, [has_integers]) in progress

    def _var(self, atom: sp.Basic) -> z3.ArithRef:
        name = atom_name(atom)
        for atoms, _, _ in self._recording:
            atoms.append(atom)
        if name not in self.atoms:
            var = z3.Int(name) if atom in self.nats else z3.Real(name)
            self.atoms[name] = (atom, var)
            if isinstance(atom, Inner) and atom.args[0] == atom.args[1]:
                self.definitions.append(var >= 0)  # <v, v> >= 0
        return self.atoms[name][1]

    def _record(self, build):
        """Run build() and return the _Piece of what it made and used (the atoms, helpers and
        integers it meets are noted in every recording in progress)."""
        self._recording.append(([], [], [False]))
        try:
            expr = build()
        finally:
            atoms, helpers, integers = self._recording.pop()
        return _Piece(expr, tuple(dict.fromkeys(atoms)), tuple(dict.fromkeys(helpers)),
                      integers[0])

    def _use(self, piece: _Piece):
        """Make what a shared translation used part of this one; return its Z3 term."""
        for atom in piece.atoms:
            self._var(atom)
        for key in piece.helpers:
            self._helper(key)
        if piece.has_integers:
            self._integers()
        return piece.expr

    def _integers(self) -> None:
        self.has_integers = True
        for _, _, integers in self._recording:
            integers[0] = True

    def _helper(self, key) -> z3.ArithRef:
        """The variable of a helper (sqrt or inverse of an argument), defined here once."""
        if key not in _HELPERS:
            kind, arg, _, conditions = key
            piece = self._record(lambda: (self.term(arg),
                                          [self.formula(c) for c in conditions]))
            a, defined = piece.expr
            v = z3.Real(f"!{'inv' if kind == 'inv' else 'sqrt'}[{atom_name(arg)}]")
            if kind == "inv":
                defs = [z3.Implies(a != 0, v * a == 1), z3.Implies(a == 0, v == 0)]
            else:
                defs = [z3.Implies(a >= 0, z3.And(v >= 0, v * v == a)), z3.Implies(a < 0, v == 0)]
                if kind == "gram_sqrt":  # ||v||^2 >= 0 where v is a real vector
                    defs.append(z3.Implies(z3.And(*defined), a >= 0))
            _HELPERS[key] = (v, defs, piece)
        v, defs, piece = _HELPERS[key]
        for _, helpers, _ in self._recording:
            helpers.append(key)
        if key not in self.helpers:
            self.helpers.add(key)
            self._use(piece)
            self.definitions += defs
        return v

    def sqrt(self, arg: sp.Expr, gram: bool = False, conditions: tuple = ()) -> z3.ArithRef:
        """sqrt(arg); for a norm (gram), arg >= 0 where the conditions (that the vector's
        coefficients mean something) hold."""
        return self._helper(("gram_sqrt" if gram else "sqrt", arg, self.nats, conditions))

    def inverse(self, arg: sp.Expr) -> z3.ArithRef:
        return self._helper(("inv", arg, self.nats, ()))

    def whole(self, e: sp.Expr) -> z3.ArithRef:
        """floor(a) (SMT-LIB's to_int) or ceiling(a) = -floor(-a).  (Z3 fails on the trivial
        `n - 1 < T <= n, n != T` when floor is an integer variable with bounds, not on to_int.)
        The term is an integer one: compared with a nat, or added to one, it stays an integer,
        which Z3 decides at once, where T <= floor(R^2/gamma^2) compared as reals ran out of its
        budget (the value is the same either way; Z3 makes it real where a real meets it)."""
        self._integers()
        a = self.term(e.args[0])
        a = z3.ToReal(a) if a.is_int() else a
        if isinstance(e, sp.floor):
            return z3.ToInt(a)
        return -z3.ToInt(-a)

    def number(self, value: sp.Rational) -> z3.ArithRef:
        f = Fraction(int(value.p), int(value.q))
        return z3.RealVal(f"{f.numerator}/{f.denominator}")

    def term(self, e: sp.Expr) -> z3.ArithRef:
        if e.is_Rational:
            return self.number(e)
        if isinstance(e, (sp.Symbol, Inner, sp.core.function.AppliedUndef, sp.Sum)):
            return self._var(e)
        if isinstance(e, Norm):
            return self.sqrt(e.gram(), gram=True, conditions=coefficient_conditions(e))
        if e.is_Add:
            return z3.Sum([self.term(a) for a in e.args])
        if e.is_Mul:
            return z3.Product([self.term(a) for a in e.args])
        if e.is_Pow:
            return self.power(e.base, e.exp)
        if isinstance(e, sp.Abs):
            a = self.term(e.args[0])
            return z3.If(a >= 0, a, -a)
        if isinstance(e, (sp.floor, sp.ceiling)):
            return self.whole(e)
        if isinstance(e, (sp.Max, sp.Min)):
            args = [self.term(a) for a in e.args]
            out = args[0]
            for a in args[1:]:
                out = z3.If(a > out, a, out) if isinstance(e, sp.Max) else z3.If(a < out, a, out)
            return out
        raise TranslationError(f"no translation for {e} ({type(e).__name__})")

    def power(self, base: sp.Expr, exp: sp.Expr) -> z3.ArithRef:
        if exp.is_Integer:
            n = int(exp)
            if n == 0:
                return self.number(sp.Integer(1))
            if abs(n) > 16:
                raise TranslationError(f"exponent {n} is too large")
            b = self.inverse(base) if n < 0 else self.term(base)
            return z3.Product([b] * abs(n)) if abs(n) > 1 else b
        if exp.is_Rational and exp.q == 2:
            if exp < 0:
                return self.inverse(base ** (-exp))  # b^(-p/2) = 1 / sqrt(b)^p
            root = self.sqrt(base, gram=False)
            return self.power_of(root, int(exp.p))
        raise TranslationError(f"unsupported exponent {exp} in {base}**{exp}")

    def power_of(self, b: z3.ArithRef, n: int) -> z3.ArithRef:
        return z3.Product([b] * n) if n > 1 else b

    def formula(self, f, goal: bool = True) -> z3.BoolRef:
        key = (f, goal, self.nats)
        if key not in _PIECES:
            if len(_PIECES) > 1 << 15:
                _PIECES.clear()
                _HELPERS.clear()
            _PIECES[key] = self._record(lambda: self._formula(f, goal))
            return _PIECES[key].expr
        return self._use(_PIECES[key])

    def _formula(self, f, goal: bool) -> z3.BoolRef:
        """The formula as a goal (strong: implies the formula's meaning) or as a hypothesis
        (goal=False, weak: implied by its meaning).  They differ in the conditions that SymPy's
        simplified terms show but the written terms lack (sqrt(a^2*b) is |a|*sqrt(b), which
        shows b >= 0): a goal must meet them, a hypothesis does not assert them."""
        if isinstance(f, (Relation, VectorEq)):
            if isinstance(f, Relation):
                a, b = self.term(f.lhs), self.term(f.rhs)
                holds = {"=": a == b, "!=": a != b, "<": a < b, "<=": a <= b,
                         ">": a > b, ">=": a >= b}[f.rel]
            else:
                holds = self.term(f.as_quadratic()) == 0
            written = [self.formula(o, goal) for o in f.domain]
            shown = [self.formula(o) for o in f.obligations() if o not in f.domain]
            if goal or not shown:
                return z3.And(*written, *shown, holds)
            return z3.And(*written, z3.Implies(z3.And(*shown), holds))
        if isinstance(f, Implication):
            return z3.Implies(z3.And([self.formula(p, not goal) for p in f.premises] or [True]),
                              self.formula(f.conclusion, goal))
        if isinstance(f, Disjunction):
            return z3.Or([self.formula(d, goal) for d in f.disjuncts])
        if isinstance(f, Conjunction):
            return z3.And([self.formula(p, goal) for p in f.parts])
        if isinstance(f, Equivalence):
            return z3.And(self.formula(Implication((f.left,), f.right), goal),
                          self.formula(Implication((f.right,), f.left), goal))
        raise TranslationError(f"not a formula: {f!r}")

    def congruence(self) -> list:
        """Elements of one sequence at equal indices are equal (w[j], w[k] when j = k)."""
        elements: dict = {}
        vectors: set = set()
        for atom, _ in list(self.atoms.values()):
            parts = atom.args if isinstance(atom, Inner) else (atom,)
            for part in parts:
                if isinstance(part, sp.core.function.AppliedUndef) and not isinstance(part, Inner):
                    elements.setdefault(part.func, set()).add(part)
                if isinstance(atom, Inner):
                    vectors.add(part)
            if isinstance(atom, sp.Sum):  # sums of the same terms: their counts are indices
                elements.setdefault(atom.function, set()).add(atom)
        facts = []
        for group in elements.values():
            ordered = sorted(group, key=sp.default_sort_key)
            for i, e1 in enumerate(ordered):
                for e2 in ordered[i + 1:]:
                    gap = sp.expand(index_of(e1) - index_of(e2))
                    if gap.is_number and gap != 0:
                        continue  # k and k+1 are never equal (k*(k+1) and k^2 + k always are)
                    same = self.term(index_of(e1)) == self.term(index_of(e2))
                    if e1 in vectors or e2 in vectors:
                        equal = [self._var(Inner(e1, u)) == self._var(Inner(e2, u))
                                 for u in sorted(vectors, key=sp.default_sort_key)]
                    else:
                        equal = [self._var(e1) == self._var(e2)]
                    facts.append(z3.Implies(same, z3.And(*equal)))
        return facts


@dataclass(frozen=True)
class Verdict:
    """The solver's answer: 'valid', 'invalid' (with a model) or 'unknown' (with a reason)."""

    answer: str
    model: z3.ModelRef | None = None
    translator: Translator | None = None
    reason: str = ""
    # of a 'valid' verdict: 'solver', 'sympy' or 'certified'; of an 'invalid' one, 'model'
    # when a stored model shows it (certified.py)
    basis: str = ""


@dataclass
class Audit:
    """Defence in depth, off by default: a second opinion on every verdict (``crosscheck``:
    SMT-LIB 2 files, cvc5).  ``second_opinion(hypotheses, goal, timeout_ms, nats, verdict, by)``
    gives an answer with a reason, or None (no opinion); where its answer differs, the verdict
    is 'unknown' (``_audited``), so a second opinion can take a verdict away, never give one.
    `label` names the obligations' source."""

    second_opinion: object = None
    label: str = "obligation"
    disagreements: list = field(default_factory=list)


AUDIT = Audit()


# A check's budget of T milliseconds is counted in Z3's resource units, T * UNITS_PER_MS: the
# solver's own steps, which cost the same on any machine and under any load (up to a few percent
# with what the process decided before), so that a verdict does not depend on how fast or busy the
# machine is.  Measured on the bundled proofs with benchmarks/measure_rlimit.py, a unit is 0.2 to
# 0.5 microseconds here, so a check stops well within T ms; the costliest decided check there
# uses about 0.9 million units, under a fifth of the default 5,000 ms budget.  The wall clock
# stays as a backstop, at twice T and a second, for what the units do not count (measured: nlsat
# can spend seconds in a phase where it does not count).
UNITS_PER_MS = 1000


def wall_backstop_ms(timeout_ms: int) -> int:
    return 2 * timeout_ms + 1000


@dataclass
class Limits:
    """Bounds on the Z3 checks in Z3's resource units (deterministic, like every check's budget:
    see UNITS_PER_MS), off by default.

    rlimit: the most one check may use (0: only its own budget).  lemma_units: the most one
    lemma's checks may use together, diagnostics included (0: no bound); file_units: the most a
    file's lemmas may use together, after which each further lemma still gets reserve_units, so
    that a cheap honest lemma after a costly one is still checked.  A check that runs out is
    'unknown'; a lemma whose budget is spent makes no more checks (its remaining ones are
    'unknown' at once, saying so).  `novikoff grade` sets them in each worker process; the cvc5
    cross-check is not bounded by them."""

    rlimit: int = 0
    lemma_units: int = 0
    file_units: int = 0
    reserve_units: int = 0
    spent_file: int = 0  # by the file being checked
    spent_lemma: int = 0  # by the lemma being checked
    allowance: int = 0  # of the lemma being checked

    def start_file(self) -> None:
        self.spent_file = self.spent_lemma = 0
        self.start_lemma()

    def start_lemma(self) -> None:
        """Give the next lemma (or setting) its budget: lemma_units, or what is left of the
        file's, but at least reserve_units."""
        self.spent_lemma = 0
        left = self.file_units - self.spent_file if self.file_units else self.lemma_units
        self.allowance = min(self.lemma_units, max(left, self.reserve_units))

    def check(self, solver: z3.Solver, timeout_ms: int):
        """solver.check() within a budget of timeout_ms (in units) and the bounds, charging what
        it used; None (no check made) when the lemma's budget is spent."""
        limit = max(1, int(timeout_ms)) * UNITS_PER_MS
        if self.rlimit:
            limit = min(limit, self.rlimit)
        if self.lemma_units:
            left = self.allowance - self.spent_lemma
            if left <= 0:
                return None
            limit = min(limit, left)
        solver.set("timeout", wall_backstop_ms(max(1, int(timeout_ms))))
        solver.set("rlimit", int(limit))
        if not self.lemma_units:
            return solver.check()
        before = _context_units(solver.ctx)
        answer = solver.check()
        used = max(0, _context_units(solver.ctx) - before)
        self.spent_lemma += used
        self.spent_file += used
        return answer


BUDGET_SPENT = "the lemma's budget of solver steps is spent"


def _context_units(ctx: z3.Context) -> int:
    """Z3's resource count so far in a context (what rlimit bounds, relative to it).  A new
    solver reports it (one made by SolverFor("QF_NIRA") may list it only after a check)."""
    return int(z3.SolverFor("QF_NRA", ctx=ctx).statistics().get_key_value("rlimit count"))


def isolated_solver(make, constraints) -> z3.Solver:
    """make(ctx)'s solver holding the constraints, in a Z3 context of its own.

    Why: Z3's search depends on the context's history (the ids of the terms made before), so
    the same check took 0.1 s in a fresh process and ran past its budget after other files in
    a long-lived one, and verdicts changed with what was checked before.  Translated into a new
    context, a check sees the same terms in the same order every time (measured: about 2 ms
    more per check, 1.5 s over the 669 checks of `novikoff check proofs/`).  Its models belong
    to that context: `main_model` brings them back."""
    ctx = z3.Context()
    solver = make(ctx)
    solver.add(*(c.translate(ctx) for c in constraints))
    return solver


def main_model(solver: z3.Solver) -> z3.ModelRef:
    """The model of an isolated solver, in the main context (where the translators' variables
    live)."""
    return solver.model().translate(z3.main_ctx())


LIMITS = Limits()


def entails(hypotheses, goal, timeout_ms: int, nats=frozenset()) -> Verdict:
    """Decide whether the hypotheses imply the goal (goal=None: whether hypotheses are unsat).

    goal: a formula, a tuple of formulas (all of them), or None.  nats: the symbols that are
    natural numbers (their ">= 0" is among the hypotheses).
    """
    if z3 is None:
        return Verdict("unknown", reason="no solver: Z3 is not installed")
    goals = goal if isinstance(goal, tuple) else (goal,) if goal is not None else ()
    if any(side.has(sp.floor, sp.ceiling) for f in (*hypotheses, *goals) for side in sides(f)):
        # floor and ceil make the problem an integer one anyway: the nats are integers at once
        # (with them relaxed, the solver searches the reals in vain and times out).
        verdict = _decide(hypotheses, goal, timeout_ms, frozenset(nats))
    else:
        verdict = _decide(hypotheses, goal, timeout_ms, frozenset())
    if verdict.answer == "invalid" and _fractional_nats(verdict, nats):
        # The model gives a natural a fractional value: decide again over the integers.
        verdict = _decide(hypotheses, goal, timeout_ms, frozenset(nats))
    if AUDIT.second_opinion is not None:
        verdict = _audited(hypotheses, goal, timeout_ms, frozenset(nats), verdict)
    return verdict


def identity(hypotheses, goal, timeout_ms: int, nats=frozenset()) -> Verdict:
    """The verdict on an equality that the kernel settled by SymPy's exact normal form (no
    solver was asked): 'valid', and under `--smt2` it is written like every obligation, under
    `--cross-check` cvc5 must confirm it (else 'unknown', as for any obligation)."""
    verdict = Verdict("valid", reason="an identity by SymPy's normal form", basis="sympy")
    if AUDIT.second_opinion is not None:
        verdict = _audited(hypotheses, goal, timeout_ms, frozenset(nats), verdict, by="sympy")
    return verdict


def _audited(hypotheses, goal, timeout_ms: int, nats: frozenset, verdict: Verdict,
             by: str = "z3") -> Verdict:
    """The verdict, or 'unknown' with both answers where the second opinion differs (or fails:
    its 'unknown').  by: who gave the verdict."""
    second = AUDIT.second_opinion(hypotheses, goal, timeout_ms, nats, verdict, by)
    if second is None or second.answer == verdict.answer:
        return verdict
    reason = (f"the solvers disagree: {by} says {verdict.answer}"
              f"{f' ({verdict.reason})' if verdict.reason else ''}, cvc5 says {second.answer}"
              f"{f' ({second.reason})' if second.reason else ''}")
    AUDIT.disagreements.append((AUDIT.label, reason))
    return Verdict("unknown", translator=verdict.translator, reason=reason)


def model_number(value: z3.ExprRef) -> sp.Rational | None:
    """A model's rational value, exactly; None if it is not rational or has more than
    MAX_DIGITS digits: Python refuses to read integers of more than 4,300 digits from text
    (z3's as_long does), and no term of the kernel holds such a number."""
    if z3.is_int_value(value):
        parts = (value.as_string(), "1")
    elif z3.is_rational_value(value):
        parts = (value.numerator().as_string(), value.denominator().as_string())
    else:
        return None
    if any(len(p.lstrip("-")) > MAX_DIGITS for p in parts):
        return None
    return sp.Rational(int(parts[0]), int(parts[1]))


def _fractional_nats(verdict: Verdict, nats) -> bool:
    model = verdict.model
    for atom, var in verdict.translator.atoms.values():
        if atom in nats:
            value = model.eval(var, model_completion=True)
            if not (z3.is_rational_value(value) and value.denominator().as_string() == "1"):
                return True
    # A natural that appears only in an index has no variable; its value is unconstrained.
    return False


def _decide(hypotheses, goal, timeout_ms: int, int_nats: frozenset) -> Verdict:
    tr = Translator(nats=int_nats)
    try:
        hyps = [tr.formula(h, goal=False) for h in hypotheses]
        goals = goal if isinstance(goal, tuple) else (goal,) if goal is not None else ()
        negated = [z3.Not(z3.And(*[tr.formula(g) for g in goals]))] if goals else []
        congruence = tr.congruence()
    except (TranslationError, z3.Z3Exception) as exc:
        return Verdict("unknown", reason=f"no translation: {exc}")
    constraints = [*tr.definitions, *congruence, *hyps, *negated]
    # nlsat alone is complete for real problems and about twice as fast as the combined
    # solver; the combined solver is the fallback when the tactic gives up.  Integers (nats,
    # floor, ceil) have a solver of their own.
    makers = ((_integer_solver,) if int_nats or tr.has_integers
              else (_nlsat_solver, _combined_solver))
    for make in makers:
        solver = isolated_solver(make, constraints)
        answer = LIMITS.check(solver, timeout_ms)
        if answer is None:
            return Verdict("unknown", translator=tr, reason=f"timed out: {BUDGET_SPENT}")
        if answer == z3.unsat:
            return Verdict("valid", translator=tr, basis="solver")
        if answer == z3.sat:
            return Verdict("invalid", model=main_model(solver), translator=tr)
        if any(why in solver.reason_unknown() for why in ("timeout", "canceled",
                                                           "resource limit")):
            break  # out of its budget (or of the wall-clock backstop): unknown
    return Verdict("unknown", translator=tr,
                   reason=f"the solver could not decide ({solver.reason_unknown()})")


def _nlsat_solver(ctx: z3.Context) -> z3.Solver:
    return z3.Then(z3.Tactic("simplify", ctx), z3.Tactic("qfnra-nlsat", ctx), ctx=ctx).solver()


def _integer_solver(ctx: z3.Context) -> z3.Solver:
    # QF_NRA's solver gives up on to_int (floor); QF_NIRA's decides it and is as fast on the
    # library's integer re-checks.
    return z3.SolverFor("QF_NIRA", ctx=ctx)


def _combined_solver(ctx: z3.Context) -> z3.Solver:
    return z3.SolverFor("QF_NRA", ctx=ctx)
