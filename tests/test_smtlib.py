"""SMT-LIB scripts of obligations, and cvc5's answers on them against Z3's (crosscheck/smtlib.py)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time

import pytest
import sympy as sp
from hypothesis import given, strategies as st

cvc5 = pytest.importorskip("cvc5")

from novikoff.kernel import solver  # noqa: E402
from novikoff.kernel.formulas import (Conjunction, Disjunction, Equivalence, Implication,  # noqa: E402
                                      Relation, VectorEq)
from novikoff.crosscheck.smtlib import (Cvc5Verdict, cvc5_entails, run_cvc5, smt2_script,  # noqa: E402
                                    smt2_symbol)
from novikoff.kernel.solver import TranslationError  # noqa: E402
from novikoff.kernel.terms import Inner, Vec, ip, norm  # noqa: E402

TIMEOUT_MS = 5000

a, b, c, y, gamma, R = (sp.Symbol(n, real=True) for n in ("a", "b", "c", "y", "gamma", "R"))
j, k = sp.Symbol("j", real=True), sp.Symbol("k", real=True)
x, z, ws = sp.Symbol("x"), sp.Symbol("z"), sp.Symbol("w_star")
w = sp.Function("w")
X, Z, WS = Vec.atom(x), Vec.atom(z), Vec.atom(ws)
W, W1 = Vec.atom(w(k)), Vec.atom(w(k + 1))


def rel(r, lhs, rhs=0):
    return Relation(r, lhs, rhs)


# (name, hypotheses, goal, nats, expected answer of both solvers)
CASES = [
    ("square_positive", [rel(">", a)], rel(">", a ** 2), (), "valid"),
    ("square_above", [], rel(">", a ** 2, a), (), "invalid"),
    ("division", [rel(">", a), rel(">", b, a)], rel("<", 1 / b, 1 / a), (), "valid"),
    ("division_domain", [rel(">=", a)], rel(">", 1 / a, 0), (), "invalid"),  # a = 0
    ("sqrt", [rel(">=", a)], rel(">=", sp.sqrt(a + 1), 1), (), "valid"),
    ("sqrt_below", [rel(">=", a)], rel("<=", sp.sqrt(a), a), (), "invalid"),
    ("inverse_sqrt", [rel(">", a, 1)], rel("<", a ** sp.Rational(-1, 2), 1), (), "valid"),
    ("norm_two_atoms", [rel("=", Inner(x, x), 1), rel("=", Inner(z, z), 1), rel("=", Inner(x, z), 0)],
     rel(">", norm(X + Z), 1), (), "valid"),
    ("norm_two_atoms_above", [rel("=", Inner(x, x), 1), rel("=", Inner(z, z), 1)],
     rel(">=", norm(X - Z.scale(2)), 1), (), "invalid"),
    ("abs", [], rel(">=", sp.Abs(a), a), (), "valid"),
    ("max_min", [], rel(">=", sp.Max(a, b, c), sp.Min(a, b)), (), "valid"),
    ("max_strict", [], rel(">", sp.Max(a, b), a), (), "invalid"),
    ("disjunction", [rel("=", a ** 2, 1)], Disjunction((rel("=", a, 1), rel("=", a, -1))), (), "valid"),
    ("disjunction_short", [rel("=", a ** 2, 4)], Disjunction((rel("=", a, 2), rel("=", a, 1))), (),
     "invalid"),
    ("implication_goal", [], Implication((rel(">", a, 1), rel(">", b, 1)), rel(">", a * b, 1)), (),
     "valid"),
    ("implication_hypothesis", [Implication((rel(">", a),), rel(">", b)), rel(">", a)], rel(">", b), (),
     "valid"),
    ("vector_eq_hypothesis", [VectorEq(z, X.scale(2))], rel("=", ip(Z, Z) - 4 * ip(Z, X) + 4 * ip(X, X)),
     (), "valid"),
    ("vector_eq_goal", [rel("=", Inner(z, z), 4 * Inner(x, x)), rel("=", Inner(x, z), 2 * Inner(x, x))],
     VectorEq(z, X.scale(2)), (), "valid"),
    # The solver alone treats inner products as free reals (the kernel substitutes definitions
    # before it asks): ||w[k+1] - w[k] - y*x||^2 = 0 does not give the step's identity.
    ("vector_eq_unsubstituted", [VectorEq(w(k + 1), W + X.scale(y)), rel("=", y ** 2, 1),
                                 rel("<=", y * ip(W, X), 0), rel(">=", k)],
     rel("<=", ip(W1, W1), ip(W, W) + ip(X, X)), (k,), "invalid"),
    ("congruence", [rel("=", j, k), rel("=", Inner(w(j), x), 1)], rel("=", Inner(w(k), x), 1), (),
     "valid"),
    ("natural_integral", [rel(">=", k), rel("<", 2 * k, 1)], rel("=", k, 0), (k,), "valid"),
    ("natural_square", [rel(">=", k), rel(">=", gamma, 0)], rel(">=", gamma * k ** 2, gamma * k), (k,),
     "valid"),
    ("conjunction_goal", [rel(">", a, 1), rel(">", b, 1)], (rel(">", a), rel(">", a * b)), (), "valid"),
    ("conjunction_formula", [Conjunction((rel(">", a, 1), rel(">", b, 1)))], rel(">", a * b, 1), (),
     "valid"),
    ("equivalence", [], Equivalence(rel(">", a ** 2), rel("!=", a, 0)), (), "valid"),
    ("equivalence_false", [], Equivalence(rel(">", a ** 2), rel(">", a)), (), "invalid"),
    ("floor_nat_bound", [rel(">=", k), rel(">", gamma), rel("<=", k, gamma ** -2)],
     rel("<=", k, sp.floor(gamma ** -2)), (k,), "valid"),
    ("floor_above", [], rel(">=", sp.floor(a), a), (), "invalid"),
    ("ceiling_nat", [rel(">=", k)], rel("=", sp.ceiling(k), k), (k,), "valid"),
    ("ceiling_real", [rel(">=", a)], rel("=", sp.ceiling(a), a), (), "invalid"),
    ("contradiction", [rel(">", a), rel("<", a ** 3, 0)], None, (), "valid"),
    ("consistent", [rel(">", a), rel(">", b, a ** 2)], None, (), "invalid"),
]


def _ids(cases):
    return [case[0] for case in cases]


@pytest.mark.parametrize("name, hyps, goal, nats, expected", CASES, ids=_ids(CASES))
def test_cvc5_and_z3_agree_on_cases(name, hyps, goal, nats, expected):
    verdict = cvc5_entails(hyps, goal, TIMEOUT_MS, nats=nats)
    assert isinstance(verdict, Cvc5Verdict)
    assert verdict.answer == expected, verdict.reason
    assert verdict.script.endswith("(check-sat)\n")
    assert solver.entails(hyps, goal, TIMEOUT_MS, frozenset(nats)).answer == expected


def test_naturals_are_decided_over_the_integers():
    hyps, goal = [rel(">=", k), rel("<", 2 * k, 1)], rel("=", k, 0)
    # Over the reals k = 1/4 is a counter-model; over the naturals there is none.
    assert run_cvc5(smt2_script(hyps, goal), TIMEOUT_MS).answer == "invalid"
    exact = smt2_script(hyps, goal, nats={k})
    assert "(set-logic QF_NIRA)" in exact and "(declare-fun |k| () Int)" in exact
    assert "(assert (>= |k| 0))" in exact and "(to_real |k|)" in exact
    verdict = cvc5_entails(hyps, goal, TIMEOUT_MS, nats={k})
    assert verdict.answer == "valid" and verdict.script == exact
    # A counter-model of the relaxation that gives k a natural value is one over the naturals.
    verdict = cvc5_entails([rel(">=", k), rel("=", k ** 2, 4)], rel("!=", k, 2), TIMEOUT_MS, nats={k})
    assert verdict.answer == "invalid" and verdict.model["|k|"] == 2


def test_script_shape():
    goal = rel(">", a ** 2 / 3 - sp.Rational(1, 2), -5)
    script = smt2_script([rel(">", a)], goal, comment="lemma L, step 2")
    lines = script.splitlines()
    assert lines[:3] == ["; lemma L, step 2", "(set-logic QF_NRA)", "(set-info :status unknown)"]
    assert "(declare-fun |a| () Real)" in lines
    assert "(assert (> |a| 0.0))" in lines
    assert lines[-2].startswith("(assert (not ") and lines[-1] == "(check-sat)"
    assert "(/ 1.0 3.0)" in script and "(- (/ 1.0 2.0))" in script and "(- 5.0)" in script
    sat_check = smt2_script([rel(">", a)], None)
    assert "(not" not in sat_check and "QF_NRA" in sat_check


def _declared(script: str) -> dict:
    out = {}
    for line in script.splitlines():
        if line.startswith("(declare-fun |") and not re.match(r"\(declare-fun \|%(sqrt|inv)\d+\|", line):
            symbol, sort = line[len("(declare-fun "):].rsplit(" () ", 1)
            out[symbol] = sort.rstrip(")")
    return out


@pytest.mark.parametrize("name, hyps, goal, nats, expected", CASES, ids=_ids(CASES))
def test_atoms_are_those_of_the_z3_translation(name, hyps, goal, nats, expected):
    tr = solver.Translator(nats=frozenset(nats))
    for h in hyps:
        tr.formula(h)
    for g in goal if isinstance(goal, tuple) else () if goal is None else (goal,):
        tr.formula(g)
    tr.congruence()
    expected_atoms = {smt2_symbol(name): "Int" if atom in nats else "Real"
                      for name, (atom, _) in tr.atoms.items()}
    assert _declared(smt2_script(hyps, goal, nats=nats)) == expected_atoms


def _parse(script: str) -> list:
    """Parse (and declare) every command of script with cvc5, strictly; run no check-sat."""
    tm = cvc5.TermManager()
    slv = cvc5.Solver(tm)
    slv.setOption("strict-parsing", "true")
    sm = cvc5.SymbolManager(tm)
    parser = cvc5.InputParser(slv, sm)
    parser.setStringInput(cvc5.InputLanguage.SMT_LIB_2_6, script, "test.smt2")
    commands = []
    while True:
        command = parser.nextCommand()
        if command.isNull():
            return commands
        commands.append(command.getCommandName())
        if command.getCommandName() != "check-sat":
            command.invoke(slv, sm)


@pytest.mark.parametrize("name, hyps, goal, nats, expected", CASES, ids=_ids(CASES))
def test_scripts_parse_with_cvc5_and_are_deterministic(name, hyps, goal, nats, expected):
    script = smt2_script(hyps, goal, nats=nats)
    assert script == smt2_script(hyps, goal, nats=nats)
    commands = _parse(script)
    assert commands[0] == "set-logic" and commands[-1] == "check-sat"
    assert commands.count("check-sat") == 1


_SNIPPET = """
import sympy as sp
from novikoff.kernel.formulas import Relation, VectorEq
from novikoff.crosscheck.smtlib import smt2_script
from novikoff.kernel.terms import Vec, ip, norm
k, y, a = (sp.Symbol(n, real=True) for n in "kya")
x, v, w = sp.Symbol("x"), sp.Symbol("v"), sp.Function("w")
W, X, V = Vec.atom(w(k)), Vec.atom(x), Vec.atom(v)
hyps = [VectorEq(w(k + 1), W + X.scale(y) - V.scale(a / 3)), Relation("=", y ** 2, 1),
        Relation("<=", norm(X + V), sp.sqrt(a) + sp.Max(a, 1 / y, -2))]
print(smt2_script(hyps, Relation("<=", ip(Vec.atom(w(k + 1)), W), sp.Abs(a - y) * 7), nats={k}), end="")
"""


@pytest.mark.e2e  # three fresh interpreters
def test_scripts_do_not_depend_on_hash_seeds():
    outputs = set()
    for seed in ("0", "1", "12345"):
        env = dict(os.environ, PYTHONHASHSEED=seed)
        result = subprocess.run([sys.executable, "-c", _SNIPPET], env=env, capture_output=True,
                                text=True, check=True)
        outputs.add(result.stdout)
    assert len(outputs) == 1 and "(check-sat)" in outputs.pop()


@pytest.mark.parametrize("term", [
    sp.I * a, a + sp.oo, sp.zoo * a, sp.nan, sp.sin(a), sp.exp(a), a ** sp.Rational(1, 3), a ** b,
    a ** 17, a ** -17, sp.pi * a, sp.Float(0.5) * a, sp.Function("f")(a, b) + sp.log(a),
], ids=str)
def test_unsupported_terms_are_refused(term):
    goal = rel("<=", term, 1)
    with pytest.raises(TranslationError):
        smt2_script([], goal)
    with pytest.raises(TranslationError):
        smt2_script([goal], None)
    verdict = cvc5_entails([], goal, TIMEOUT_MS)
    assert verdict.answer == "unknown" and verdict.reason
    assert solver.entails([], goal, TIMEOUT_MS).answer == "unknown"


def test_a_failing_script_is_unknown():
    verdict = run_cvc5("(set-logic QF_NRA)\n(assert (> |undeclared| 0.0))\n(check-sat)\n", 1000)
    assert verdict.answer == "unknown" and "cvc5 failed" in verdict.reason
    ill_sorted = "(set-logic QF_NIRA)\n(declare-fun k () Int)\n(assert (> (* 2.0 k) 1.0))\n(check-sat)\n"
    assert run_cvc5(ill_sorted, 1000).answer == "unknown"  # strict parsing: no Int/Real mixing


def test_a_timeout_is_unknown():
    hard = rel("<", a ** 7 * b ** 5 + c ** 3 * a - b ** 9, a * b * c + 17)
    verdict = cvc5_entails([rel(">", a * b * c, 1000)], hard, 1)
    assert verdict.answer in ("unknown", "invalid")


def test_cvc5_is_stopped_when_it_runs_past_its_time_limit():
    # cvc5 1.4.2 with coverings ran for minutes on this despite tlimit-per (a soft limit).
    p1 = -a * b + 3 * a * c + b ** 2 + b * c + b + 2 * c ** 2 + 2
    p2 = -2 * a ** 2 + 2 * a * b + 2 * a * c - 3 * a - b ** 2 + 2 * b * c - 3 * c ** 2 + 2 * c + 2
    p3 = 3 * a ** 2 + 3 * a * c + 2 * a - b ** 2 + 3 * b * c - 2 * b - 2 * c ** 2 + 2 * c + 2
    verdict = cvc5_entails([rel("<", p1), rel("!=", p2)], rel(">=", p3), 500)
    # No wall-clock assertion: the verdict says the child process was stopped (or it answered).
    assert verdict.answer == "invalid" or (
        verdict.answer == "unknown" and "ran past its time limit; stopped" in verdict.reason)
    theirs = solver.entails([rel("<", p1), rel("!=", p2)], rel(">=", p3), 500).answer
    assert theirs in ("unknown", "invalid")


@given(st.text(max_size=12))
def test_symbols_are_quoted_injectively(name):
    symbol = smt2_symbol(name)
    assert symbol.startswith("|") and symbol.endswith("|")
    inner = symbol[1:-1]
    assert "|" not in inner and "\\" not in inner
    assert all(0x20 <= ord(ch) <= 0x7E for ch in inner)
    assert smt2_symbol(name + "|") != symbol and smt2_symbol(name + "%7c") != smt2_symbol(name + "|")


def test_odd_names_make_valid_scripts():
    odd = [sp.Symbol(n, real=True) for n in ("a|b", "a\\b", "a%7cb", "γ", "%sqrt1", "x y")]
    hyps = [rel(">", s, i) for i, s in enumerate(odd)]
    script = smt2_script(hyps, rel(">", sum(odd), 10))
    assert len(_declared(script)) == len(odd)
    _parse(script)
    assert cvc5_entails(hyps, rel(">", sum(odd), 10), TIMEOUT_MS).answer == "valid"


# -- random polynomial inequalities: cvc5 and Z3 agree whenever both decide ----------------------

_VARS = (a, b, c)
_MONOMIALS = [sp.Integer(1)] + list(_VARS) + [u * v for i, u in enumerate(_VARS) for v in _VARS[i:]]


@st.composite
def _polynomials(draw, nvars):
    monomials = [m for m in _MONOMIALS if m.free_symbols <= set(_VARS[:nvars])]
    coeffs = draw(st.lists(st.integers(-3, 3), min_size=len(monomials), max_size=len(monomials)))
    return sp.expand(sum(co * m for co, m in zip(coeffs, monomials)))


@st.composite
def _obligations(draw):
    nvars = draw(st.integers(2, 3))
    relation = st.sampled_from(("<", "<=", ">", ">=", "=", "!="))
    count = draw(st.integers(0, 2))
    hyps = [Relation(draw(relation), draw(_polynomials(nvars)), 0) for _ in range(count)]
    return hyps, Relation(draw(relation), draw(_polynomials(nvars)), 0)


@pytest.mark.e2e  # a cvc5 child process per obligation: some 0.2 s each, 60 of them
@given(_obligations())
def test_cvc5_and_z3_agree_on_random_polynomial_inequalities(obligation):
    hyps, goal = obligation
    theirs = solver.entails(hyps, goal, 1000).answer
    ours = cvc5_entails(hyps, goal, 1000)  # cvc5 gives up (or is stopped) on a few percent
    if "unknown" not in (theirs, ours.answer):
        assert ours.answer == theirs, ours.script


# -- timings: cvc5 against Z3 on typical obligations (printed, never asserted) ------------------

def _typical_obligations():
    setting = [rel(">", gamma), rel(">", R), rel("=", y ** 2, 1), rel(">=", k)]
    margin = rel(">=", y * ip(WS, X), gamma)
    mistake = rel("<=", y * ip(W, X), 0)
    update = VectorEq(w(k + 1), W + X.scale(y))
    radius = rel("<=", norm(X), R)
    cs = rel("<=", ip(WS, W) ** 2, ip(WS, WS) * ip(W, W))
    out = [(name, setting + list(hyps), goal, (k,)) for name, hyps, goal, _, _ in CASES
           if goal is not None][:11]
    out += [
        # the kernel's form of an update step: w[k+1] substituted by its definition
        ("margin_step", setting + [margin], rel(">=", ip(WS, W + X.scale(y)), ip(WS, W) + gamma), (k,)),
        ("norm_step", setting + [mistake, radius],
         rel("<=", ip(W + X.scale(y), W + X.scale(y)), ip(W, W) + R ** 2), (k,)),
        ("unsubstituted_step", setting + [update, margin],
         rel(">=", ip(WS, W1), ip(WS, W) + gamma), (k,)),
        ("norm_bound", setting + [rel("<=", ip(W, W), k * R ** 2)],
         rel("<=", norm(W), R * sp.sqrt(k)), (k,)),
        ("margin_bound", setting + [rel(">=", ip(WS, W), k * gamma), rel("=", ip(WS, WS), 1), cs],
         rel(">=", ip(W, W), k ** 2 * gamma ** 2), (k,)),
        ("novikoff", setting + [rel("<=", k ** 2 * gamma ** 2, k * R ** 2)],
         rel("<=", k, R ** 2 / gamma ** 2), (k,)),
        ("novikoff_wrong", setting + [rel("<=", k ** 2 * gamma ** 2, k * R ** 2)],
         rel("<", k, R ** 2 / gamma ** 2), (k,)),
        ("geometric", setting + [rel("=", ip(WS, WS), 4), margin],
         rel(">=", y * ip(WS, X) / norm(WS), gamma / 2), (k,)),
        ("hinge", setting + [rel(">=", c, 0), rel(">=", c, 1 - y * a)],
         rel(">=", sp.Max(0, 1 - y * a), 0), (k,)),
    ]
    return out


@pytest.mark.e2e  # a cvc5 child process per obligation; prints its table of timings
def test_timings_cvc5_against_z3(capsys):
    rows = []
    for name, hyps, goal, nats in _typical_obligations():
        start = time.perf_counter()
        theirs = solver.entails(hyps, goal, TIMEOUT_MS, frozenset(nats)).answer
        t_z3 = time.perf_counter() - start
        start = time.perf_counter()
        ours = cvc5_entails(hyps, goal, TIMEOUT_MS, nats=nats).answer
        t_cvc5 = time.perf_counter() - start
        rows.append((name, theirs, ours, t_z3, t_cvc5))
    with capsys.disabled():
        print(f"\n{'obligation':24} {'z3':>8} {'cvc5':>8} {'z3 ms':>8} {'cvc5 ms':>8}")
        for name, theirs, ours, t_z3, t_cvc5 in rows:
            print(f"{name:24} {theirs:>8} {ours:>8} {1000 * t_z3:8.1f} {1000 * t_cvc5:8.1f}")
        total_z3, total_cvc5 = 1000 * sum(r[3] for r in rows), 1000 * sum(r[4] for r in rows)
        print(f"{f'total ({len(rows)})':24} {'':8} {'':8} {total_z3:8.1f} {total_cvc5:8.1f}")
    for name, theirs, ours, _, _ in rows:
        assert "unknown" in (theirs, ours) or theirs == ours, name
