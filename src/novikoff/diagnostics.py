"""Explaining failed steps (untrusted): counterexamples, realizability by vectors, missing facts.

Nothing here can verify a step.  A counterexample is shown only after an exact re-check with SymPy
rationals: it satisfies every hypothesis in force and violates the step, and where it gives values
to inner products, those values form a positive-semidefinite Gram matrix (they come from real
vectors).
"""

from __future__ import annotations

import itertools
from fractions import Fraction

import sympy as sp
try:
    import z3
except ImportError:  # without a solver there is no counterexample search
    z3 = None

from .kernel import (Conjunction, Disjunction, Equivalence, Implication, Inner, Relation,
                     VectorEq)
from .kernel.formulas import free_symbols, sides
from .kernel.terms import BOUND, VectorSum, count, exact_subs, expand_norms
from .display import display_name
from .kernel.solver import (LIMITS, Translator, TranslationError, atom_name, isolated_solver,
                            model_number)

__all__ = ["Explanation", "explain_failure"]

_DIAGNOSTIC_TIMEOUT_MS = 3000


class Explanation:
    """What the diagnostics found: a re-checked counterexample and/or a note."""

    def __init__(self, counterexample=None, note: str = "", holds: bool = False, subs=None):
        self.counterexample = counterexample
        self.note = note
        self.holds = holds  # no counterexample exists: it holds (for real vectors, for nats)
        self.subs = subs  # values found but not confirmed (a second search starts from them)


def _fraction(value: z3.ExprRef) -> Fraction | None:
    """The value exactly (an algebraic one to 30 digits); None when it is not a number or is
    too long to show (model_number)."""
    if z3.is_algebraic_value(value):
        value = value.approx(30)
    number = model_number(value)
    return None if number is None else Fraction(int(number.p), int(number.q))


def _truth(formula, subs: dict) -> bool | None:
    try:
        return _exact_truth(formula, subs)
    except (ValueError, TypeError, ArithmeticError):  # SymPy could not evaluate: unknown
        return None


def _exact_truth(formula, subs: dict) -> bool | None:
    """Evaluate a formula exactly at rational values; None when SymPy cannot decide.  A
    relation is strict: false where one of its domain conditions is false."""
    if isinstance(formula, Relation):
        if any(_truth(o, subs) is False for o in formula.obligations()):
            return False
        diff = expand_norms(formula.lhs - formula.rhs)
        diff = sp.expand(diff.xreplace(subs))
        if diff.free_symbols or diff.atoms(sp.core.function.AppliedUndef) or diff.has(sp.zoo,
                                                                                   sp.nan):
            return None
        if not diff.is_real and diff.is_real is not None:
            return None
        zero, pos, neg = diff.is_zero, diff.is_positive, diff.is_negative
        if zero is None and pos is None and neg is None:
            return None
        return {"=": zero, "!=": (not zero) if zero is not None else None, "<": neg,
                "<=": (neg or zero) if None not in (neg, zero) else None, ">": pos,
                ">=": (pos or zero) if None not in (pos, zero) else None}[formula.rel]
    if isinstance(formula, Implication):
        premises = [_truth(p, subs) for p in formula.premises]
        if any(p is False for p in premises):
            return True
        if any(p is None for p in premises):
            return None
        return _truth(formula.conclusion, subs)
    if isinstance(formula, Disjunction):
        values = [_truth(d, subs) for d in formula.disjuncts]
        return True if any(values) else (None if None in values else False)
    if isinstance(formula, Conjunction):
        values = [_truth(p, subs) for p in formula.parts]
        return False if False in values else (None if None in values else True)
    if isinstance(formula, Equivalence):
        left, right = _truth(formula.left, subs), _truth(formula.right, subs)
        return None if None in (left, right) else left == right
    if isinstance(formula, VectorEq):
        return _truth(Relation("=", formula.as_quadratic(), sp.Integer(0)), subs)
    return None


def _vector_atoms(formulas) -> list:
    atoms = set()
    for f in formulas:
        for side in sides(f):
            for inner in expand_norms(side).atoms(Inner):
                atoms.update(inner.args)
    # not the terms of a sum: their index is bound, not a value of the counterexample
    return sorted((a for a in atoms if BOUND not in a.free_symbols), key=sp.default_sort_key)


def _principal_minors(matrix, size: int, max_order: int):
    for order in range(1, min(size, max_order) + 1):
        for rows in itertools.combinations(range(size), order):
            yield [[matrix[i][j] for j in rows] for i in rows]


def _det(m):
    if len(m) == 1:
        return m[0][0]
    total = 0
    for j in range(len(m)):
        minor = [row[:j] + row[j + 1:] for row in m[1:]]
        term = m[0][j] * _det(minor)
        total = total + term if j % 2 == 0 else total - term
    return total


def _search(hypotheses, negated_goal, gram: bool, timeout_ms: int, nats=()):
    """Find a model of hypotheses and the negated goal (with a PSD Gram matrix if gram).

    Naturals get integer values (the kernel proves steps for all reals k >= 0, a sound
    relaxation; a counterexample must be a real one).
    """
    if z3 is None:
        return "unknown", None, {}
    tr = Translator()
    atoms: list = []
    try:
        # Relations translate strictly: a counterexample gives every hypothesis a meaning.
        constraints = [tr.formula(h, goal=False) for h in hypotheses]
        if negated_goal is not None:
            constraints.append(z3.Not(tr.formula(negated_goal)))
        atoms = _vector_atoms(list(hypotheses) + ([negated_goal] if negated_goal else []))
        matrix = [[tr.term(Inner(a, b)) for b in atoms] for a in atoms]
    except TranslationError:
        return None, None, atoms
    for nat in nats:
        name = atom_name(nat)
        if name in tr.atoms:
            constraints.append(z3.IsInt(tr.atoms[name][1]))
    constraints += _same_index_same_value(tr, atoms)
    if gram and atoms:
        max_order = len(atoms) if len(atoms) <= 4 else 2
        for minor in _principal_minors(matrix, len(atoms), max_order):
            constraints.append(_det(minor) >= 0)
    solver = isolated_solver(lambda ctx: z3.SolverFor("QF_NRA", ctx=ctx),
                             [*tr.definitions, *constraints])
    answer = LIMITS.check(solver, timeout_ms)  # under `novikoff grade`, charged to the lemma's budget
    if answer == z3.sat:
        return "sat", (_rational_model(solver, tr, timeout_ms), tr), atoms
    return ("unsat" if answer == z3.unsat else "unknown"), None, atoms


def _rational_model(solver: z3.Solver, tr: Translator, timeout_ms: int) -> z3.ModelRef:
    """Move atoms with irrational values (nlsat likes roots) to nearby rationals, if possible.

    Square roots of the rationals stay exact: SymPy evaluates them in the re-check.
    """
    model = solver.model()
    for name, (_, var) in sorted(tr.atoms.items()):
        var = var.translate(solver.ctx)
        value = model.eval(var, model_completion=True)
        if not z3.is_algebraic_value(value):
            continue
        approx = _fraction(value)
        for denominator in (1, 2, 4, 10, 100, 10 ** 4, 10 ** 8):
            candidate = approx.limit_denominator(denominator)
            solver.push()
            solver.add(var == z3.RealVal(f"{candidate.numerator}/{candidate.denominator}",
                                         solver.ctx))
            if LIMITS.check(solver, timeout_ms) == z3.sat:
                model = solver.model()
                break
            solver.pop()
    return model.translate(z3.main_ctx())


def _sequence_elements(tr: Translator, vector_atoms) -> list:
    scalar = [a for a, _ in tr.atoms.values() if isinstance(a, sp.core.function.AppliedUndef)
              and BOUND not in a.free_symbols]
    vector = [a for a in vector_atoms if isinstance(a, sp.core.function.AppliedUndef)]
    return scalar + vector


def _same_index_same_value(tr: Translator, vector_atoms) -> list:
    """w[j] and w[k] are one vector (TD[j] and TD[k] one number) when j = k."""
    out = []
    elements = _sequence_elements(tr, vector_atoms)
    for a, b in itertools.combinations(elements, 2):
        if a.func != b.func:
            continue
        same = tr.term(a.args[0]) == tr.term(b.args[0])
        if a in vector_atoms:
            rows = [tr.term(Inner(a, c)) == tr.term(Inner(b, c)) for c in vector_atoms]
            out.append(z3.Implies(same, z3.And(rows + [tr.term(Inner(a, a)) ==
                                                       tr.term(Inner(a, b))])))
        else:
            out.append(z3.Implies(same, tr.term(a) == tr.term(b)))
    return out


def _consistent_indices(subs: dict, vector_atoms) -> bool:
    """Re-check exactly that equal indices carry equal values."""
    index_of = {}
    for atom in list(subs) + list(vector_atoms):
        if isinstance(atom, sp.core.function.AppliedUndef):
            index_of[atom] = atom.args[0].xreplace(subs)
    groups: dict = {}
    for atom, index in index_of.items():
        groups.setdefault((atom.func, index), []).append(atom)
    for members in groups.values():
        for a, b in itertools.combinations(members, 2):
            if a in subs and b in subs and subs[a] != subs[b]:
                return False
            for c in vector_atoms:
                va, vb = subs.get(Inner(a, c)), subs.get(Inner(b, c))
                if va is not None and vb is not None and va != vb:
                    return False
    return True


def _values(model: z3.ModelRef, tr: Translator):
    subs = {}
    for _, (atom, var) in sorted(tr.atoms.items()):
        value = _fraction(model.eval(var, model_completion=True))
        if value is None:
            return None, None
        subs[atom] = sp.Rational(value.numerator, value.denominator)
    # Each value under what it denotes at these values (a[T] at T = 0 is a[0], shown once);
    # values read at indices < 0 mean nothing there, and empty sums are 0: not shown.
    shown = {}
    for atom, value in subs.items():
        concrete = _concrete(atom, subs)
        empty = isinstance(concrete, sp.Sum) and count(concrete) == 0  # 0, as every empty sum
        if not _outside_its_range(atom, subs) and not empty:
            shown.setdefault(display_name(atom if concrete is None else concrete), str(value))
    return subs, shown


def _outside_its_range(atom, subs: dict) -> bool:
    """Whether, at these values, the atom reads an element at an index < 0 or is a sum of
    fewer than 0 terms (a[T - 3] at T = 2): it means nothing there, and is not shown."""
    if isinstance(atom, sp.Sum):
        n = count(atom).xreplace(subs)
        if n.is_Integer and n < 0:
            return True
    elements = atom.atoms(sp.core.function.AppliedUndef) | (
        {atom} if isinstance(atom, sp.core.function.AppliedUndef) else set())
    for element in elements:
        if element.args and not element.args[0].has(BOUND):
            index = element.args[0].xreplace(subs)
            if index.is_Integer and index < 0:
                return True
    return False


def _gram_psd(atoms, subs) -> bool | None:
    """Whether the values of the inner products form a positive-semidefinite Gram matrix (so
    real vectors have them); None when a value is missing."""
    if not atoms:
        return True
    try:
        matrix = [[Fraction(int(subs[Inner(a, b)].p), int(subs[Inner(a, b)].q)) for b in atoms]
                  for a in atoms]
    except KeyError:
        return None
    return _is_psd(matrix)


def _is_psd(matrix) -> bool:
    """Whether a symmetric matrix of Fractions is positive semidefinite, exactly, in O(n^3):
    symmetric elimination (an LDL^T factorisation).  A negative pivot refutes it; a zero pivot
    needs a zero row (a PSD matrix with a_ii = 0 has a_ij = 0 for every j), which is then
    dropped; a positive pivot is eliminated, and the matrix is PSD exactly when its Schur
    complement is.  (Sylvester's leading minors do not suffice for semidefiniteness, and all
    2^n principal minors hung on 24 vectors.)"""
    a = [list(row) for row in matrix]
    while a:
        pivot = a[0][0]
        if pivot < 0:
            return False
        if pivot == 0:
            if any(a[0][j] != 0 or a[j][0] != 0 for j in range(1, len(a))):
                return False
            a = [row[1:] for row in a[1:]]
            continue
        a = [[a[i][j] - a[i][0] * a[0][j] / pivot for j in range(1, len(a))]
             for i in range(1, len(a))]
    return True


# A sum in a counterexample is re-checked against its terms when it has at most this many.
_WRITTEN_OUT = 16


def _concrete(atom, subs: dict):
    """What an atom denotes in the counterexample: w[T - 1] at T = 2 is w[1]; a sum, the same
    terms with the count's value.  None when that is not a plain atom (a sum of vectors)."""
    if isinstance(atom, Inner):
        u, v = (_concrete(a, subs) for a in atom.args)
        return None if u is None or v is None else Inner(u, v)
    if isinstance(atom, sp.Sum):
        n = count(atom).xreplace(subs)
        return sp.Sum(atom.function, (BOUND, 0, n - 1)) if n.is_Integer else None
    if isinstance(atom, sp.core.function.AppliedUndef):
        index = atom.args[0].xreplace(subs)
        return atom.func(index) if index.is_Integer else None
    return atom if isinstance(atom, sp.Symbol) else None


def _by_denotation(subs: dict) -> dict:
    """The counterexample's values keyed also by what each atom denotes (w[1] for w[T - 1]),
    so that a formula at a concrete index, or a sum's term, can be evaluated."""
    out = dict(subs)
    for atom, value in subs.items():
        concrete = _concrete(atom, subs)
        if concrete is not None:
            out.setdefault(concrete, value)
    return out


def _sums_agree(subs: dict, known: dict) -> bool | None:
    """Whether every sum's value is the sum of its terms at the count's value; None when a term
    has no value in the counterexample (or the count is large or not a whole number >= 0): the
    sum's value is then not re-checked, and neither is the counterexample."""
    for atom, value in subs.items():
        if not isinstance(atom, sp.Sum):
            continue
        n = count(atom).xreplace(subs)
        if n.is_Integer and n < 0:
            continue  # no sum there (T - 3 terms at T = 2): what mentions it says so
        if not n.is_Integer or n > _WRITTEN_OUT:
            return None
        total = sp.Integer(0)
        for i in range(int(n)):
            try:
                term = exact_subs(atom.function, BOUND, sp.Integer(i))
            except ValueError:  # (floor(sqrt(2)): a term with no exact value here)
                return None
            mapping = {a: _concrete(a, subs) for a in _atoms(term)}
            if any(c is None or c not in known for c in mapping.values()):
                return None
            total += expand_norms(term.xreplace({a: known[c] for a, c in mapping.items()}))
        same = sp.expand(total - value).is_zero
        if same is None:
            return None
        if not same:
            return False
    return True


def _atoms(expr: sp.Expr) -> set:
    found = set(expr.atoms(Inner, sp.Sum))
    found |= {a for a in expr.atoms(sp.core.function.AppliedUndef) if not isinstance(a, Inner)}
    return found | {a for a in expr.free_symbols if isinstance(a, sp.Symbol)}


def _holds_at_every_index(everywhere, subs: dict, known: dict, nats, examples=()) -> bool:
    """Whether the formulas that hold at every value of the nats hold at every index the
    counterexample shows (a[1] when it gives a[T - 1] with T = 2), and those without a nat as
    they are.  Instances whose atoms have no value there must have some values together: c[0]
    >= a[0] and a[0] >= 1 leave a[0] open but refuse c[0] = 0 (where no such values are found in
    time, they are not asked).  examples: (the per-update symbols, what holds of an example):
    a formula that mentions them speaks at another index of another example, which is fresh
    there and meets what holds of one (TD[1] >= TD[0] + d at k = 0 with d >= 0 refuses TD[1] =
    -1, TD[0] = 0 whatever the counterexample's own d)."""
    per_update, of_one = examples or (frozenset(), ())
    indices = _natural_indices(known)
    instances = []
    for f in everywhere:
        ks = set(nats) & free_symbols(f)
        instances += [f] if not ks else []
        for k, v in itertools.product(ks, indices):
            instance = f.subs(k, v)
            if free_symbols(f) & per_update:
                fresh = {p: sp.Symbol(f"{p.name}@{v}", **p.assumptions0) for p in per_update}
                instances += [_renamed(g, fresh) for g in (instance, *of_one)]
            else:
                instances.append(instance)
    open_instances = []
    for instance in dict.fromkeys(instances):
        truth = _truth(instance, known)
        if truth is False:
            return False
        if truth is None:
            open_instances.append(instance)
    if not open_instances:
        return True
    fixed = [Relation("=", atom, value) for atom, value in known.items()
             if not isinstance(atom, sp.Sum)]
    answer, _, _ = _search(fixed + open_instances, None, gram=False,
                           timeout_ms=_DIAGNOSTIC_TIMEOUT_MS)
    return answer != "unsat"


def _renamed(formula, mapping: dict):
    for old, new in mapping.items():
        formula = formula.subs(old, new)
    return formula


def _natural_indices(atoms) -> set:
    """The whole indices >= 0 at which the atoms read sequence elements (an index < 0, a[T - 3]
    at T = 2, is no value of a nat: the formulas that hold at every value say nothing there)."""
    return {c.args[0] for c in atoms if isinstance(c, sp.core.function.AppliedUndef)
            and c.args[0].is_Integer and c.args[0] >= 0}


def _written_out(subs: dict, everywhere, nats) -> list:
    """What a second search is told, to pin down the values a first one left free: each sum of
    at most _WRITTEN_OUT terms kept at its count's value and written out (n = 3 and S = t(0) +
    t(1) + t(2)), and the assumptions that hold at every k at the indices those terms read.
    Values found so still pass the whole re-check, or are not shown."""
    # the nats kept at their values, so every index below is a number
    facts = [Relation("=", k, subs[k]) for k in nats if k in subs]
    indices = _natural_indices(_by_denotation(subs))
    for atom in subs:
        if not isinstance(atom, sp.Sum):
            continue
        n = count(atom).xreplace(subs)
        if not n.is_Integer or not 0 <= n <= _WRITTEN_OUT:
            continue
        try:
            terms = [exact_subs(atom.function, BOUND, sp.Integer(i)) for i in range(int(n))]
        except ValueError:
            continue
        facts.append(Relation("=", atom, sp.Add(*terms)))
        indices |= {sp.Integer(i) for i in range(int(n))}
    for f in everywhere:
        for k in set(nats) & free_symbols(f):
            for i in indices:
                try:
                    facts.append(f.subs(k, i))
                except ValueError:
                    continue
    return facts


def explain_failure(hypotheses, goal, *, nats=(), everywhere=(), examples=(),
                    whole: bool = False, timeout_ms: int = _DIAGNOSTIC_TIMEOUT_MS) -> Explanation:
    """Look for a counterexample realizable by real vectors, re-checked exactly, meeting the
    formulas that hold at every k (everywhere) at every index it shows (examples: the
    per-update symbols and what holds of an example, _holds_at_every_index).  whole: it must
    also be one of the whole setting, so its sums are re-checked against their terms; when the
    first values leave those unchecked, once more with them written out."""
    if not whole:
        return _explain(hypotheses, goal, nats, everywhere, examples, timeout_ms, whole=False)
    first = _explain(hypotheses, goal, nats, everywhere, examples, timeout_ms)
    if first.counterexample is not None or first.holds or first.subs is None:
        return first
    # (a per-update formula speaks of one example: it is not written out at other indices)
    per_update = examples[0] if examples else frozenset()
    more = _written_out(first.subs, [f for f in everywhere if not free_symbols(f) & per_update],
                        nats)
    if not more:
        return first
    second = _explain(list(hypotheses) + more, goal, nats, everywhere, examples, timeout_ms)
    return second if second.counterexample is not None else first


def _explain(hypotheses, goal, nats, everywhere, examples, timeout_ms: int,
             whole: bool = True) -> Explanation:
    answer, found, atoms = _search(hypotheses, goal, gram=True, timeout_ms=timeout_ms,
                                   nats=nats)
    if answer == "unsat" and nats:
        answer, found, atoms = _search(hypotheses, goal, gram=True, timeout_ms=timeout_ms)
        if answer == "sat":
            return Explanation(note="it holds for natural numbers, but steps are proved for "
                                    "all reals >= 0: cite nat_cases (k = 0 or k >= 1)",
                               holds=True)
    if answer == "unsat":
        return Explanation(note="it holds for real vectors: a vector fact such as "
                                "cauchy_schwarz is needed", holds=True)
    if answer != "sat":
        return Explanation(note="no counterexample was found in time")
    if any(isinstance(a, VectorSum) for a in atoms):
        # Its inner products are values of their own to the solver, tied to its terms only by
        # the facts told: such values need not be those of any real vectors x[0], x[1], ...
        return Explanation(note="the solver found values, but a sum of vectors (one written, "
                                "or the update rule unrolled over the rounds) cannot be "
                                "re-checked exactly: no counterexample is shown")
    subs, shown = _values(*found)
    if subs is None:
        return Explanation(note="the solver's counterexample has no exact rational form "
                                "short enough to show")
    ok = all(_truth(h, subs) is True for h in hypotheses) and _truth(goal, subs) is False
    psd = _gram_psd(atoms, subs)
    if not ok or psd is not True or not _consistent_indices(subs, atoms):
        return Explanation(note="the solver found a counterexample, but it did not survive "
                                "the exact re-check")
    known = _by_denotation(subs)
    if not whole:
        if not _holds_at_every_index(everywhere, subs, known, nats, examples):
            return Explanation(note="the solver found values, but they break what it cites "
                                    "at an index they show")
        return Explanation(counterexample=shown)
    sums = _sums_agree(subs, known)
    if sums is not True:
        return Explanation(note="the solver found values, but its sums " + (
            "are not the sums of their terms" if sums is False else
            "could not be re-checked against their terms") + ": no counterexample is shown",
            subs=subs)
    if not _holds_at_every_index(everywhere, subs, known, nats, examples):
        return Explanation(note="the solver found values, but they break an assumption at an "
                                "index they show: no counterexample is shown", subs=subs)
    return Explanation(counterexample=shown)

