"""Compile kernel formulas and lemmas into runtime checks (untrusted: it only ever *evaluates*
statements).  The checks and the monitor's record of a lemma live in ``_checks``, without SymPy.

A statement is walked once into an IR of tuples (``_Walker.expr``); nothing is ever parsed or
evaluated as text.  Statements arrive in the run vocabulary of novikoff.quantities (a setting's
own names are translated there first); the leaves are *slots*, the run quantities at the point of
evaluation: the default names of novikoff.quantities' table (``k``, ``TD[k+1]``, ``C[k]``, ...:
what each means at update k, and which belong to batch, voted or averaged runs only, is said
there) and the inner products ``<a, b>`` of its vectors (``<w_star, w[k]>``, ``<x, x>``; of the
start only ``<w0, w0>`` and ``<w_star, w0>``, constants of the run).  The monitor lists a lemma
that needs the other kind of run (``BATCH_NAMES``, ``SINGLE_EXAMPLE_NAMES``) as not monitored.

The IR is evaluated two ways.  In floating point by ``_program`` (many checks at many points at
once, mid-radius arithmetic: every slot is ``(value, error bound)`` and each operation adds its
own rounding, so a relation is decided three ways: certainly true, certainly false (a violation),
or undetermined within the rounding tolerance, never reported as a violation).  In exact rational
arithmetic by ``_checks.exact_interval`` (square roots as shrinking rational intervals, ties by
SymPy on the substituted numbers), for exact runs and replays.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from fractions import Fraction

import sympy as sp

from ..kernel.formulas import Disjunction, Implication, Relation, VectorEq
from ..kernel.terms import Inner, Norm, Vec, expand_norms
from ..lemmas import LemmaInfo
from ..quantities import KINDS, PER_UPDATE, Unbindable, in_run_vocabulary
from ._checks import (AT_UPDATE_ONLY, SEQUENCES, START_SLOTS, VECTOR_ATOMS, VISIT_SEQUENCES,
                      VISIT_VECTORS, ZERO_AT_START, Check, MonitoredLemma, classify, inner_slot,
                      other_run, sealed_verified, slot_names)

__all__ = ["Check", "Lemma", "Unbindable", "as_lemma", "compile_formula", "monitored_lemma"]

# --------------------------------------------------------------------------- the walk

@dataclass
class _Walker:
    kinds: dict | None
    slots: set = field(default_factory=set)

    # -- names
    def _check_kind(self, name: str) -> None:
        if name not in KINDS:
            raise Unbindable(f"no run quantity is bound to {name!r}")
        if self.kinds is not None and name in self.kinds and self.kinds[name] not in KINDS[name]:
            raise Unbindable(f"{name} is declared {self.kinds[name]!r} but the run binds it "
                             f"as {' or '.join(KINDS[name])}")

    def _index(self, idx: sp.Expr, var: str = "k") -> str | None:
        """'k', 'k+1' or '0' (var 't', an averaged run's visits: 't', 't+1' or '0')."""
        bound = f"only 0, {var} and {var}+1 are bound"
        if idx.is_Integer:
            if idx == 0:
                return "0"
            raise Unbindable(f"index {idx}: {bound}")
        names = {s.name for s in idx.free_symbols}
        if names != {var}:
            raise Unbindable(f"index {idx}: {bound}")
        k = next(iter(idx.free_symbols))
        off = sp.expand(idx - k)
        if off == 0:
            return var
        if off == 1:
            return f"{var}+1"
        raise Unbindable(f"index {idx}: {bound}")

    def vector(self, a) -> str:
        """The vector atom's name in VECTOR_ATOMS (w[0] is the start, w0)."""
        if isinstance(a, sp.Symbol):
            self._check_kind(a.name)
            if a.name not in ("x", "w_star", "w0", "u"):
                raise Unbindable(f"{a.name} is not a vector of the run")
            return a.name
        if isinstance(a, sp.core.function.AppliedUndef):
            name = a.func.__name__
            self._check_kind(name)
            if name in VISIT_VECTORS:
                atom = f"{name}[{self._index(a.args[0], 't')}]"
                if atom not in VECTOR_ATOMS:
                    raise Unbindable(f"{atom}: of {name} the run keeps only "
                                     f"{', '.join(v for v in VECTOR_ATOMS if v.startswith(name + '['))}")
                return atom
            if name != "w":
                raise Unbindable(f"{name} is not a vector sequence of the run")
            i = self._index(a.args[0])
            return "w0" if i == "0" else f"w[{i}]"
        raise Unbindable(f"{a} is not a vector atom")

    def inner(self, u: str, v: str) -> str:
        key = inner_slot(u, v)
        if "w0" in (u, v) and key not in START_SLOTS:
            raise Unbindable(f"{key}: of the start w0 the run keeps only <w0, w0> and "
                             f"<w_star, w0>")
        return self.slot(key)

    def slot(self, key: str):
        self.slots.add(key)
        return key

    # -- expressions: an IR of tuples, ('const', Fraction), ('slot', key), ('add', [..]),
    #    ('mul', [..]), ('recip', a), ('ipow', a, n), ('sqrt', a, gram), ('abs', a),
    #    ('max', [..]), ('min', [..]).
    def expr(self, e: sp.Expr):
        if e.is_Rational:
            return ("const", Fraction(int(e.p), int(e.q)))
        if isinstance(e, sp.Float):
            return ("const", Fraction(float(e)))
        if isinstance(e, Inner):
            u, v = (self.vector(a) for a in e.args)
            return ("slot", self.inner(u, v))
        if isinstance(e, Norm):
            return ("sqrt", self.expr(e.gram()), True)
        if isinstance(e, sp.Symbol):
            self._check_kind(e.name)
            if e.name in ("x", "w_star", "w", "u") + SEQUENCES + VISIT_SEQUENCES + VISIT_VECTORS:
                raise Unbindable(f"{e.name} is used as a scalar")
            return ("slot", self.slot(e.name))
        if isinstance(e, sp.core.function.AppliedUndef):
            name = e.func.__name__
            self._check_kind(name)
            if name not in SEQUENCES + VISIT_SEQUENCES:
                raise Unbindable(f"{name}[...] is not a real sequence of the run")
            i = self._index(e.args[0], "t" if name in VISIT_SEQUENCES else "k")
            if name == "kt" and i != "t":  # known at the visit being checked only
                raise Unbindable(f"index {e.args[0]} of kt: only kt[t] is bound")
            if i == "0" and name in ("KT", "RT"):  # sums over no visit
                return ("const", Fraction(0))
            if i == "0" and name in ZERO_AT_START:
                return ("const", Fraction(0))
            if name in AT_UPDATE_ONLY and i != "k":  # known at the update being checked only
                raise Unbindable(f"index {e.args[0]} of {name}: only {name}[k] is bound")
            return ("slot", self.slot(f"{name}[{i}]"))
        if isinstance(e, sp.Add):
            return ("add", tuple(self.expr(a) for a in e.args))
        if isinstance(e, sp.Mul):
            return ("mul", tuple(self.expr(a) for a in e.args))
        if isinstance(e, sp.Pow):
            return self.power(e)
        if isinstance(e, sp.Abs):
            return ("abs", self.expr(e.args[0]))
        if isinstance(e, (sp.Max, sp.Min)):
            return ("max" if isinstance(e, sp.Max) else "min",
                    tuple(self.expr(a) for a in e.args))
        raise Unbindable(f"cannot evaluate {type(e).__name__} ({e})")

    def power(self, e: sp.Pow):
        base, ex = e.args
        if not ex.is_Rational:
            raise Unbindable(f"exponent {ex} is not a rational number")
        p, q = int(ex.p), int(ex.q)
        node = self.expr(base)
        if q == 2:
            node = ("sqrt", node, False)
        elif q != 1:
            raise Unbindable(f"exponent {ex}: only integers and halves are supported")
        if abs(p) != 1:
            node = ("ipow", node, abs(p))
        if p < 0:
            node = ("recip", node)
        return node

    # -- formulas: ('rel', rel, formula, ir lhs, ir rhs), ('imp', premises, conclusion),
    #    ('or', disjuncts)
    def formula(self, fm):
        if isinstance(fm, Relation):
            return ("rel", fm.rel, fm, self.expr(fm.lhs), self.expr(fm.rhs))
        if isinstance(fm, VectorEq):
            rel = Relation("=", start_as_w0(fm).as_quadratic(), sp.Integer(0))
            return self.formula(rel)
        if isinstance(fm, Implication):
            return ("imp", [self.formula(p) for p in fm.premises], self.formula(fm.conclusion))
        if isinstance(fm, Disjunction):
            return ("or", [self.formula(d) for d in fm.disjuncts])
        raise Unbindable(f"cannot monitor a {type(fm).__name__}")


def start_as_w0(fm: VectorEq) -> VectorEq:
    """The vector equation with w[0] written w0: both are the start, so that w[0] = w0 is
    ||w0 - w0||^2 = 0 identically (true on every run, not a difference of two rounded values)."""
    def sub(a):
        if isinstance(a, sp.core.function.AppliedUndef) and a.func.__name__ == "w" and \
                a.args[0] == 0:
            return sp.Symbol("w0")  # novikoff.kernel.written.symbol("w0", "vector")
        return a
    atom = sub(fm.atom)
    rhs = Vec.zero()
    for a, c in fm.rhs.terms:
        rhs = rhs + Vec.atom(sub(a)).scale(c)
    if atom == fm.atom and rhs == fm.rhs:
        return fm
    return VectorEq(atom, rhs, fm.domain)


# --------------------------------------------------------------------------- checks

def _sympy_tie(fm, env) -> int | None:
    """The sign of lhs - rhs of a relation at an exact point where the rational intervals of
    both sides could not separate them (a tie between irrational values), decided by SymPy on
    the substituted numbers; None when SymPy cannot tell."""
    subs = {}
    for atom in _atoms(fm):
        key = _atom_key(atom)
        if key is not None and key in env:
            subs[atom] = _sympy_value(env[key])
        elif key is None:
            subs[atom] = sp.Integer(0)
    diff = sp.simplify(expand_norms(fm.lhs - fm.rhs).xreplace(subs))
    if diff.is_number and diff.is_comparable:
        return 0 if diff == 0 else (1 if diff > 0 else -1)
    return None


def _sympy_value(v):
    if isinstance(v, tuple):
        return sp.sqrt(sp.Rational(v[1].numerator, v[1].denominator))
    v = Fraction(v)
    return sp.Rational(v.numerator, v.denominator)


def _atoms(fm):
    if isinstance(fm, Relation):
        exprs = [fm.lhs, fm.rhs]
    elif isinstance(fm, VectorEq):
        exprs = [start_as_w0(fm).as_quadratic()]
    elif isinstance(fm, Implication):
        return set().union(*(_atoms(p) for p in fm.premises), _atoms(fm.conclusion))
    else:
        return set().union(*(_atoms(d) for d in fm.disjuncts))
    out = set()
    for e in exprs:
        e = expand_norms(e)
        out |= e.atoms(Inner)
        out |= {a for a in e.atoms(sp.Symbol)}
        out |= {a for a in e.atoms(sp.core.function.AppliedUndef)}
    return out


def _atom_key(atom):
    w = _Walker(None)
    try:
        if isinstance(atom, Inner):
            u, v = (w.vector(a) for a in atom.args)
            return inner_slot(u, v)
        if isinstance(atom, sp.Symbol):
            return atom.name
        if isinstance(atom, sp.core.function.AppliedUndef) and \
                atom.func.__name__ in SEQUENCES:
            name = atom.func.__name__
            i = w._index(atom.args[0])
            return None if i == "0" and name in ZERO_AT_START else f"{name}[{i}]"
    except Unbindable:
        return "?"
    return "?"


_CACHE: dict = {}


def compile_formula(formula, kinds: dict | None = None) -> Check:
    """Compile a kernel formula; raise Unbindable when a symbol has no run quantity.

    Compiled checks are immutable and cached (formulas are immutable and hashable), so every
    lemma of a setting shares the compiled assumptions, and a monitor is cheap to rebuild.
    """
    try:
        key = (formula, None if kinds is None else frozenset(kinds.items()))
        hit = _CACHE.get(key)
    except TypeError:  # an unhashable formula: compile it every time
        key, hit = None, None
    if hit is not None:
        if isinstance(hit, Unbindable):
            raise Unbindable(str(hit))
        return hit
    walker = _Walker(kinds)
    try:
        tree = walker.formula(formula)
    except Unbindable as err:
        if key is not None and len(_CACHE) < 4096:
            _CACHE[key] = err
        raise
    slots = frozenset(walker.slots)
    check = Check(slots, classify(slots), tree, _relation(formula), isinstance(formula, VectorEq),
                  _bounds_k(formula), formula, _sympy_tie)
    if key is not None and len(_CACHE) < 4096:
        _CACHE[key] = check
    return check


def _relation(formula) -> str:
    """The relation a violation's lhs and rhs belong to (a conclusion, a first disjunct)."""
    while not isinstance(formula, (Relation, VectorEq)):
        formula = formula.conclusion if isinstance(formula, Implication) else \
            formula.disjuncts[0]
    return "=" if isinstance(formula, VectorEq) else formula.rel


def _bounds_k(formula) -> bool:
    """The statement (in the run vocabulary) reads k <= e, k < e or M <= e, maybe `given`."""
    if isinstance(formula, Implication):  # `given gamma > 0`: a bound where that holds
        formula = formula.conclusion
    return isinstance(formula, Relation) and formula.rel in ("<=", "<") and \
        isinstance(formula.lhs, sp.Symbol) and formula.lhs.name in ("k", "M")


# --------------------------------------------------------------------------- lemmas

@dataclass(frozen=True)
class Lemma:
    """A lemma to monitor: a kernel statement, its setting's assumptions, where it comes from.

    Verified only when made (by ``as_lemma``) from a checked ``LemmaInfo`` whose proof the
    kernel verified: a lemma written by hand in Python is monitored as unverified, so only with
    ``include_unverified=True``.
    """

    name: str
    statement: object
    hypotheses: tuple = ()  # ((name, kernel formula), ...)
    kinds: dict | None = None
    file: str = ""
    line: int = 0
    per_update: frozenset | None = None  # the setting's per-update names (None: x, y, d)
    setting: str = ""
    text: str = ""  # the statement as written in the .proof file
    bindings: tuple = ()  # the setting's `bind` declarations (novikoff.quantities.Binding)
    # The checked lemma this one was made from: the only source of `verified`.
    checked: LemmaInfo | None = field(default=None, repr=False, compare=False)

    @property
    def verified(self) -> bool:
        """Whether the kernel verified the proof of the checked lemma this one comes from."""
        return isinstance(self.checked, LemmaInfo) and self.checked.verified is True

    @property
    def shown(self) -> str:
        return self.text or str(self.statement)

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}" if self.file else "<python>"


def _hypotheses_of(obj) -> tuple:
    """The assumptions a lemma of load_lemmas relies on (a dict name -> formula), as pairs."""
    found = getattr(obj, "hypotheses", None) or ()
    return tuple((str(k), v) for k, v in (found.items() if isinstance(found, dict) else found))


def as_lemma(obj) -> Lemma:
    """Adapt a lemma from novikoff.language.load_lemmas (or a Lemma) to the monitor; any other
    object (a look-alike with ``verified = True``) is adapted as unverified."""
    if isinstance(obj, Lemma):
        return obj
    setting = getattr(obj, "setting", None)
    kinds = getattr(setting, "kinds", None) if setting is not None else None
    per = getattr(setting, "per_update", None) if setting is not None else None
    return Lemma(name=str(obj.name), statement=obj.statement, hypotheses=_hypotheses_of(obj),
                 kinds=dict(kinds) if kinds else None,
                 checked=obj if isinstance(obj, LemmaInfo) else None,
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
    key = (lem.statement, lem.hypotheses, None if lem.kinds is None else
           frozenset(lem.kinds.items()), lem.per_update, lem.setting, lem.bindings)
    try:
        hit = _LEMMA_CACHE.get(key)
    except TypeError:  # an unhashable statement: compile it every time
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


def about_data(formula, lem) -> bool:
    """An assumption about constants or examples, not about the learner's weights (judged in
    the run vocabulary: a setting may bind its own names, like kernel.proof's phi).

    One the compiler cannot bind on its own (a definition such as z0 = ...) is kept, for the
    monitor to use as it would in a run.
    """
    try:
        translated, _, kinds, _ = in_run_vocabulary(formula, (), lem.kinds, lem.per_update,
                                                    lem.bindings)
        return compile_formula(translated, kinds).where in ("constant", "example")
    except Unbindable:
        return True


_RECORDS: dict = {}  # id(lemma object) -> (the object, its record)


def monitored_lemma(obj) -> MonitoredLemma:
    """The monitor's record of a lemma (a LemmaInfo of load_lemmas, or a Lemma): compiled for a
    run and, gated by its assumptions about the data only, for judging a trace; verified only
    when the lemma is.  The same record for the same object."""
    hit = _RECORDS.get(id(obj))
    if hit is not None and hit[0] is obj:
        return hit[1]
    lem = as_lemma(obj)
    gated = replace(lem, hypotheses=tuple((n, f) for n, f in lem.hypotheses
                                          if about_data(f, lem)))
    rec = MonitoredLemma(lem.name, lem.file, lem.line, lem.shown, _compile_lemma(lem),
                         _compile_lemma(gated), declared_rule_breaks(lem, False, 1.0),
                         source=lem)
    if lem.verified:
        sealed_verified(rec)
    if len(_RECORDS) > 4096:
        _RECORDS.clear()
    _RECORDS[id(obj)] = (obj, rec)
    return rec


def declared_rule_breaks(lem, nonzero_start: bool, eta: float):
    """Why the lemma's assumptions about the learner's start or step do not describe the
    declared rule (None when they do, or when only the run can tell): the start is an equation
    w[0] = ..., the step one w[k+1] = ... (any index but 0), read in the run vocabulary (eta,
    w0, x, y, w)."""
    compiled = _compile_lemma(lem)
    if isinstance(compiled, str) or other_run(compiled, "single"):
        return None  # not monitorable on a trace (a batch lemma): the monitor says why
    try:
        _, translated, _, _ = in_run_vocabulary(lem.statement, lem.hypotheses, lem.kinds,
                                                lem.per_update, lem.bindings)
    except Unbindable:
        return None  # not monitorable anyway: the monitor says why
    written = dict(lem.hypotheses)
    for hname, f in translated:
        if not isinstance(f, VectorEq):
            continue
        atom = f.atom
        if getattr(getattr(atom, "func", None), "__name__", None) != "w":
            continue
        index = atom.args[0]
        shown = _shown_eq(written[hname]) if hname in written else str(f)
        if index == 0:
            if nonzero_start and not f.rhs.terms:
                return (f"assumption {hname} ({shown}) does not hold: the trace declares a "
                        f"non-zero start w0 (--w0)")
        elif _step_differs(f, index, eta):
            return (f"assumption {hname} ({shown}) does not hold: the trace declares the step "
                    f"eta*y*x with eta = {eta!r} (--eta)")
    return None


def _step_differs(f, index, eta: float) -> bool:
    """The step equation w[index] = ... (run vocabulary) is certainly not w[index - 1] +
    eta*y*x for the declared eta and either label (False when it mentions other quantities:
    the reference run decides)."""
    rate = sp.Rational(Fraction(eta).numerator, Fraction(eta).denominator)
    label = sp.Symbol("y", real=True)  # the run vocabulary's symbols (kernel.written.symbol)
    expected = Vec.atom(f.atom.func(index - 1)) + Vec.atom(sp.Symbol("x")).scale(rate * label)
    values = {a: c.xreplace({sp.Symbol("eta", real=True): rate}) for a, c in f.rhs.terms}
    diff = Vec._from_dict(values) - expected
    for _, c in diff.terms:
        if c.free_symbols - {label}:
            return False
    return any(c.xreplace({label: v}) != 0 for _, c in diff.terms for v in (1, -1))


def _shown_eq(f) -> str:
    """A vector equation as a .proof file writes it: w[k+1] = w[k] + y*x."""
    def vec(a):
        if getattr(getattr(a, "func", None), "__name__", None) == "w":
            return "w[" + ", ".join(str(i).replace(" ", "") for i in a.args) + "]"
        return str(a)

    terms = sorted(f.rhs.terms, key=lambda t: not vec(t[0]).startswith("w["))
    parts = [vec(a) if c == 1 else f"{c}*{vec(a)}" for a, c in terms]
    return f"{vec(f.atom)} = {' + '.join(parts) if parts else '0'}"


