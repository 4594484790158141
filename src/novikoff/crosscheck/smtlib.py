"""Obligations as SMT-LIB 2 scripts, and a second opinion on them from cvc5.

A path from novikoff's own terms to a solver that shares nothing with ``solver.py`` but the
semantics: the same atoms (named by ``atom_name``), the same total square roots and inverses
(helper variables with ``a >= 0 => s >= 0 and s*s = a``, ``a < 0 => s = 0``; ``b != 0 => q*b = 1``,
``b = 0 => q = 0``), ``q >= 0`` for the Gram form under a Norm and for every ``<a, a>``, relations
that hold only together with their domain, and equal sequence elements at equal indices.  It
never calls Z3: ``smt2_script`` prints the text, ``cvc5_entails`` gives that very text to cvc5.

Printing conventions, so that a script is well-sorted SMT-LIB 2.6 in both logics:
- every symbol is quoted; in an atom's name ``%``, ``|``, ``\\`` and every byte outside printable
  ASCII become ``%xx`` (hex of its UTF-8 bytes), which is injective and never contains ``|``;
- helper variables are ``|%sqrtN|`` and ``|%invN|``: ``%`` followed by a non-hex letter, a name no
  atom can be printed as;
- every numeral is a Real decimal (``2.0``, ``(/ 1.0 3.0)``, ``(- 5.0)``) and a natural, declared
  ``Int``, appears in terms as ``(to_real |k|)``; cvc5 reads scripts with strict parsing.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from fractions import Fraction

import sympy as sp

from ..kernel.formulas import (Conjunction, Disjunction, Equivalence, Implication, Relation,
                               VectorEq)
from ..kernel.solver import TranslationError, atom_name, coefficient_conditions
from ..kernel.terms import Inner, Norm, index_of

__all__ = ["Cvc5Verdict", "cvc5_entails", "run_cvc5", "smt2_script", "smt2_symbol"]

_RELATIONS = {"=": "(= {} {})", "!=": "(not (= {} {}))", "<": "(< {} {})", "<=": "(<= {} {})",
              ">": "(> {} {})", ">=": "(>= {} {})"}


def smt2_symbol(name: str) -> str:
    """The quoted SMT-LIB symbol of an atom's name (an injective encoding, see the module doc)."""
    out = []
    for byte in name.encode("utf-8"):
        char = chr(byte)
        out.append(char if 0x20 <= byte <= 0x7E and char not in "%|\\" else f"%{byte:02x}")
    return "|" + "".join(out) + "|"


def _number(value: sp.Rational) -> str:
    p, q = abs(int(value.p)), int(value.q)
    text = f"{p}.0" if q == 1 else f"(/ {p}.0 {q}.0)"
    return f"(- {text})" if value < 0 else text


def _apply(op: str, args: list, unit: str) -> str:
    """(op a b ...), the argument alone when there is one, unit when there is none."""
    if not args:
        return unit
    if len(args) == 1:
        return args[0]
    return f"({op} {' '.join(args)})"


def _comment(text: str) -> str:
    return "; " + " ".join(str(text).splitlines())


class _Printer:
    """Print kernel terms and formulas, collecting declarations and helper definitions."""

    def __init__(self, nats):
        self.nats = frozenset(nats)
        self.atoms: dict = {}  # atom_name -> SymPy atom (the first one seen with that name)
        self.helpers: list = []  # helper symbols, in order of creation
        self.definitions: list = []  # facts about atoms and helpers, in order of creation
        self._sqrt: dict = {}
        self._inv: dict = {}
        self.uses_integers = False  # floor and ceil

    def is_int(self, name: str) -> bool:
        return self.atoms[name] in self.nats

    def var(self, atom: sp.Basic) -> str:
        name = atom_name(atom)
        if name not in self.atoms:
            self.atoms[name] = atom
            if isinstance(atom, Inner) and atom.args[0] == atom.args[1]:
                self.definitions.append(f"(>= {smt2_symbol(name)} 0.0)")  # <v, v> >= 0
        symbol = smt2_symbol(name)
        return f"(to_real {symbol})" if self.is_int(name) else symbol

    def _helper(self, kind: str) -> str:
        symbol = f"|%{kind}{len(self.helpers) + 1}|"
        self.helpers.append(symbol)
        return symbol

    def sqrt(self, arg: sp.Expr, gram: bool, conditions: tuple = ()) -> str:
        key = (arg, gram, conditions)
        if key not in self._sqrt:
            a = self.term(arg)
            s = self._helper("sqrt")
            self._sqrt[key] = s
            self.definitions.append(f"(=> (>= {a} 0.0) (and (>= {s} 0.0) (= (* {s} {s}) {a})))")
            self.definitions.append(f"(=> (< {a} 0.0) (= {s} 0.0))")
            if gram:  # ||v||^2 >= 0 where v is a real vector (its coefficients mean something)
                defined = _apply("and", [self.formula(c) for c in conditions], "true")
                self.definitions.append(f"(=> {defined} (>= {a} 0.0))")
        return self._sqrt[key]

    def whole(self, e: sp.Expr) -> str:
        """floor(a) is to_int(a), ceiling(a) is -to_int(-a)."""
        self.uses_integers = True
        a = self.term(e.args[0])
        if isinstance(e, sp.floor):
            return f"(to_real (to_int {a}))"
        return f"(- (to_real (to_int (- {a}))))"

    def inverse(self, arg: sp.Expr) -> str:
        if arg not in self._inv:
            b = self.term(arg)
            q = self._helper("inv")
            self._inv[arg] = q
            self.definitions.append(f"(=> (not (= {b} 0.0)) (= (* {q} {b}) 1.0))")
            self.definitions.append(f"(=> (= {b} 0.0) (= {q} 0.0))")
        return self._inv[arg]

    def term(self, e: sp.Expr) -> str:
        if e.is_Rational:
            return _number(e)
        if isinstance(e, (sp.Symbol, Inner, sp.core.function.AppliedUndef, sp.Sum)):
            return self.var(e)
        if isinstance(e, Norm):
            return self.sqrt(e.gram(), gram=True, conditions=coefficient_conditions(e))
        if e.is_Add:
            return _apply("+", [self.term(a) for a in e.args], "0.0")
        if e.is_Mul:
            return _apply("*", [self.term(a) for a in e.args], "1.0")
        if e.is_Pow:
            return self.power(e.base, e.exp)
        if isinstance(e, sp.Abs):
            a = self.term(e.args[0])
            return f"(ite (>= {a} 0.0) {a} (- {a}))"
        if isinstance(e, (sp.floor, sp.ceiling)):
            return self.whole(e)
        if isinstance(e, (sp.Max, sp.Min)):
            args = [self.term(a) for a in e.args]
            out = args[0]
            for a in args[1:]:
                out = f"(ite (> {a} {out}) {a} {out})" if isinstance(e, sp.Max) \
                    else f"(ite (< {a} {out}) {a} {out})"
            return out
        raise TranslationError(f"no translation for {e} ({type(e).__name__})")

    def power(self, base: sp.Expr, exp: sp.Expr) -> str:
        if exp.is_Integer:
            n = int(exp)
            if n == 0:
                return "1.0"
            if abs(n) > 16:
                raise TranslationError(f"exponent {n} is too large")
            b = self.inverse(base) if n < 0 else self.term(base)
            return _apply("*", [b] * abs(n), "1.0")
        if exp.is_Rational and exp.q == 2:
            if exp < 0:
                return self.inverse(base ** (-exp))  # b^(-p/2) = 1 / sqrt(b)^p
            return _apply("*", [self.sqrt(base, gram=False)] * int(exp.p), "1.0")
        raise TranslationError(f"unsupported exponent {exp} in {base}**{exp}")

    def formula(self, f, goal: bool = True) -> str:
        """As a goal or as a hypothesis: see solver.Translator.formula."""
        if isinstance(f, (Relation, VectorEq)):
            if isinstance(f, Relation):
                holds = _RELATIONS[f.rel].format(self.term(f.lhs), self.term(f.rhs))
            else:
                holds = f"(= {self.term(f.as_quadratic())} 0.0)"
            written = [self.formula(o, goal) for o in f.domain]
            shown = [self.formula(o) for o in f.obligations() if o not in f.domain]
            if goal or not shown:
                return _apply("and", written + shown + [holds], "true")
            return _apply("and", written + [f"(=> {_apply('and', shown, 'true')} {holds})"],
                          "true")
        if isinstance(f, Implication):
            premises = _apply("and", [self.formula(p, not goal) for p in f.premises], "true")
            return f"(=> {premises} {self.formula(f.conclusion, goal)})"
        if isinstance(f, Disjunction):
            return _apply("or", [self.formula(d, goal) for d in f.disjuncts], "false")
        if isinstance(f, Conjunction):
            return _apply("and", [self.formula(p, goal) for p in f.parts], "true")
        if isinstance(f, Equivalence):
            return _apply("and", [self.formula(Implication((f.left,), f.right), goal),
                                  self.formula(Implication((f.right,), f.left), goal)], "true")
        raise TranslationError(f"not a formula: {f!r}")

    def congruence(self) -> list:
        """Elements of one sequence at equal indices are equal (w[j], w[k] when j = k)."""
        elements: dict = {}
        vectors: set = set()
        for atom in list(self.atoms.values()):
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
                    if sp.expand(index_of(e1) - index_of(e2)).is_number:
                        continue  # k and k+1 are never equal
                    same = f"(= {self.term(index_of(e1))} {self.term(index_of(e2))})"
                    if e1 in vectors or e2 in vectors:
                        equal = [f"(= {self.var(Inner(e1, u))} {self.var(Inner(e2, u))})"
                                 for u in sorted(vectors, key=sp.default_sort_key)]
                    else:
                        equal = [f"(= {self.var(e1)} {self.var(e2)})"]
                    facts.append(f"(=> {same} {_apply('and', equal, 'true')})")
        return facts


def smt2_script(hypotheses, goal, *, nats=(), comment: str = "") -> str:
    """A self-contained SMT-LIB 2 script that is unsat exactly when the hypotheses entail goal.

    goal: a formula, a tuple of formulas (all of them), or None (or ()): then the script asserts
    only the hypotheses, and is unsat when they are contradictory.
    nats: SymPy symbols that are natural numbers, declared Int with ``(>= k 0)``; the logic is
    QF_NIRA when one of them occurs, QF_NRA otherwise.  comment: lines put at the top.
    Raises TranslationError for a term with no translation.
    """
    pr = _Printer(nats)
    hyps = [(h, pr.formula(h, goal=False)) for h in hypotheses]
    goals = goal if isinstance(goal, tuple) else (goal,) if goal is not None else ()
    negated = f"(not {_apply('and', [pr.formula(g) for g in goals], 'true')})" if goals else None
    congruence = pr.congruence()  # last: it may mention new atoms and helpers
    names = sorted(pr.atoms)
    ints = [n for n in names if pr.is_int(n)]
    lines = [_comment(line) for line in comment.splitlines()]
    integers = ints or pr.uses_integers
    lines += [f"(set-logic {'QF_NIRA' if integers else 'QF_NRA'})",
              "(set-info :status unknown)"]
    lines += [f"(declare-fun {smt2_symbol(n)} () {'Int' if n in ints else 'Real'})" for n in names]
    lines += [f"(assert (>= {smt2_symbol(n)} 0))" for n in ints]
    lines += [f"(declare-fun {h} () Real)" for h in pr.helpers]
    if pr.definitions:
        lines.append("; definitions: total sqrt and inverse, <v, v> >= 0")
        lines += [f"(assert {d})" for d in pr.definitions]
    if congruence:
        lines.append("; sequence elements at equal indices are equal")
        lines += [f"(assert {c})" for c in congruence]
    for i, (h, text) in enumerate(hyps, 1):
        lines += [_comment(f"hypothesis {i}: {h}"), f"(assert {text})"]
    if negated is not None:
        lines += [_comment(f"goal (negated): {' and '.join(f'({g})' for g in goals)}"),
                  f"(assert {negated})"]
    lines.append("(check-sat)")
    return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class Cvc5Verdict:
    """cvc5's answer on script: 'valid' (unsat), 'invalid' (sat) or 'unknown' (with a reason).

    model (for 'invalid'): the value of every declared symbol, keyed as the script writes it
    (``|a|``), a Fraction when rational, cvc5's text otherwise (a real algebraic number).
    """

    answer: str
    reason: str = ""
    script: str = ""
    model: dict | None = None


# The child process that runs cvc5: stdin the script, argv the options; stdout one JSON line.
_CHILD = r"""
import json, sys
import cvc5
script, timeout_ms, nl_cov = sys.stdin.read(), sys.argv[1], sys.argv[2] == "nl-cov"
tm = cvc5.TermManager()
solver = cvc5.Solver(tm)
solver.setOption("tlimit-per", timeout_ms)
solver.setOption("strict-parsing", "true")
solver.setOption("produce-models", "true")
if nl_cov:
    solver.setOption("nl-cov", "true")
symbols = cvc5.SymbolManager(tm)
parser = cvc5.InputParser(solver, symbols)
parser.setStringInput(cvc5.InputLanguage.SMT_LIB_2_6, script, "obligation.smt2")
outputs, model = [], {}
while True:
    command = parser.nextCommand()
    if command.isNull():
        break
    output = command.invoke(solver, symbols).strip()
    if output:
        outputs.append(output)
if outputs == ["sat"]:
    for term in symbols.getDeclaredTerms():
        value = solver.getValue(term)
        rational = value.isIntegerValue() or value.isRealValue()
        try:
            text = str(value.getIntegerValue() if value.isIntegerValue() else
                       value.getRealValue() if value.isRealValue() else value)
        except ValueError:  # more than 4,300 digits: Python will not write it out
            rational, text = False, "a number too long to write"
        model["|" + term.getSymbol() + "|"] = [rational, text]
print(json.dumps({"outputs": outputs, "model": model}))
"""


def run_cvc5(script: str, timeout_ms: int) -> Cvc5Verdict:
    """Run an SMT-LIB 2 script (one check-sat) through cvc5's own parser, in a child process.

    Options: tlimit-per, strict-parsing (the script must be well-sorted standard SMT-LIB),
    produce-models, and nl-cov (cylindrical algebraic coverings, complete for QF_NRA) when the
    script is QF_NRA; with integers cvc5's default (no coverings) is kept.  cvc5's time limit is
    soft (it is checked at resource checkpoints, and coverings can run far past it: cvc5 1.4.2
    did on 3-variable quadratics, and on k*k = 2*j*j over the integers), so the child is killed
    after 2 * timeout_ms + 1 s.
    """
    seconds = 2 * timeout_ms / 1000 + 1
    nl = "nl-cov" if "(set-logic QF_NRA)" in script.splitlines() else "default"
    argv = [sys.executable, "-I", "-c", _CHILD, str(max(1, int(timeout_ms))), nl]
    try:
        done = subprocess.run(argv, input=script, capture_output=True, text=True, timeout=seconds)
    except subprocess.TimeoutExpired:
        return Cvc5Verdict("unknown", f"cvc5 ran past its time limit; stopped after {seconds:g} s",
                           script)
    except OSError as exc:
        return Cvc5Verdict("unknown", f"cvc5 could not be started ({exc})", script)
    if done.returncode != 0 or not done.stdout.strip():
        lines = done.stderr.strip().splitlines() or [f"exit status {done.returncode}"]
        return Cvc5Verdict("unknown", f"cvc5 failed: {lines[-1]}", script)
    result = json.loads(done.stdout.strip().splitlines()[-1])
    outputs = result["outputs"]
    if outputs == ["unsat"]:
        return Cvc5Verdict("valid", "", script)
    if outputs == ["sat"]:
        model = {symbol: Fraction(text) if rational else text
                 for symbol, (rational, text) in result["model"].items()}
        return Cvc5Verdict("invalid", "", script, model)
    return Cvc5Verdict("unknown", f"cvc5 could not decide ({'; '.join(outputs) or 'no answer'})",
                       script)


def cvc5_entails(hypotheses, goal, timeout_ms: int, *, nats=()) -> Cvc5Verdict:
    """Decide with cvc5 whether the hypotheses imply goal, on scripts that smt2_script prints.

    As solver.entails does, naturals are first relaxed to reals (the script without nats): unsat
    there is unsat over the naturals, and a model that gives every natural a natural value is a
    model over the naturals.  Otherwise the script with naturals as integers decides.  The
    verdict carries the script it is an answer on.
    """
    try:
        relaxed = smt2_script(hypotheses, goal)
        exact = smt2_script(hypotheses, goal, nats=nats)
    except TranslationError as exc:
        return Cvc5Verdict("unknown", str(exc))
    verdict = run_cvc5(relaxed, timeout_ms)
    if relaxed == exact or verdict.answer != "invalid":
        return verdict
    values = [verdict.model.get(smt2_symbol(atom_name(n))) for n in nats]  # None: not in the script
    if all(v is None or (isinstance(v, Fraction) and v.denominator == 1 and v >= 0)
           for v in values):
        return verdict
    return run_cvc5(exact, timeout_ms)
