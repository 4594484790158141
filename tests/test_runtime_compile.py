"""The statement compiler: binding, classification, honest float decisions, exact decisions."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
import sympy as sp

from novikoff.kernel import Implication, Inner, Norm, Relation, Vec, VectorEq
from novikoff.runtime import Lemma, Monitor, Unbindable, compile_formula
from novikoff.runtime._checks import exact_interval
from novikoff.runtime._loops import HAVE_NUMBA

k = sp.Symbol("k", real=True)
gamma = sp.Symbol("gamma", real=True)
R = sp.Symbol("R", real=True)
y = sp.Symbol("y", real=True)
x, ws = sp.Symbol("x"), sp.Symbol("w_star")
w = sp.Function("w")
TD = sp.Function("TD", real=True)


def norm(a):
    return Norm(Vec.atom(a).as_tuple())


def test_slots_and_where():
    assert compile_formula(Relation(">=", Inner(ws, w(k)), k * gamma)).where == "state"
    assert compile_formula(Relation("<=", Inner(w(k + 1), w(k + 1)),
                                    Inner(w(k), w(k)) + R ** 2)).where == "update"
    assert compile_formula(Relation(">=", y * Inner(ws, x), gamma)).where == "example"
    assert compile_formula(Relation(">", norm(ws), 0)).where == "constant"
    assert compile_formula(Relation("<=", y * Inner(w(k), x), 0)).where == "update"
    c = compile_formula(Relation(">=", TD(k + 1), TD(k)))
    assert c.where == "update" and c.slots == {"TD[k]", "TD[k+1]"}


@pytest.mark.parametrize("formula, why", [
    (Relation(">=", Inner(sp.Symbol("z"), x), 0), "'z'"),
    (Relation(">=", Inner(w(k - 1), x), 0), "index"),
    (Relation(">=", sp.Symbol("b", real=True), 0), "'b'"),  # (eta is the learning rate)
    (Relation(">=", Inner(w(2), x), 0), "index"),
])
def test_unbindable(formula, why):
    with pytest.raises(Unbindable, match=why):
        compile_formula(formula)


def test_kind_mismatch_is_unbindable():
    with pytest.raises(Unbindable, match="declared"):
        compile_formula(Relation(">=", gamma, 0), {"gamma": "nat"})


def test_w0_is_the_start_and_td0_is_zero():
    """w[0] is the start w0 (its slots come from _bounds.start_slots: zero for a run from 0)."""
    from novikoff.runtime._bounds import start_slots
    c = compile_formula(Relation("=", Inner(ws, w(0)) + TD(0), 0))
    assert c.slots == {"<w_star, w0>"} and c.where == "constant"
    v = c.evaluate(start_slots(), (1,))
    assert v.true[0] and not v.false[0]
    v = c.evaluate(start_slots(np.array([1.0, 2.0]), np.array([3.0, 0.0])), (1,))
    assert v.false[0]


def _env(**slots):
    return {key: (np.atleast_1d(np.asarray(v, float)), None if e is None else np.atleast_1d(e))
            for key, (v, e) in slots.items()}


def test_three_valued_decisions_respect_the_error_bounds():
    c = compile_formula(Relation(">=", Inner(ws, w(k)), k * gamma))
    env = _env(**{"<w_star, w[k]>": ([1.0, 0.9995, 0.999999999], [0.0, 1e-3, 1e-8]),
                  "k": ([10.0] * 3, None), "gamma": ([0.1] * 3, None)})
    v = c.evaluate(env, (3,))
    # 1.0 >= 10*0.1 holds within rounding of 10*0.1 only: not certainly true, never false.
    assert not v.false.any()
    env = _env(**{"<w_star, w[k]>": ([0.5], [1e-3]), "k": ([10.0], None),
                  "gamma": ([0.1], None)})
    v = c.evaluate(env, (1,))
    assert v.false[0] and v.tol[0] >= 1e-3


def test_float_intervals_contain_the_exact_value():
    """Random values, random error bounds: the exact result is always within the radius."""
    rng = np.random.default_rng(3)
    lhs = (Inner(ws, w(k)) ** 2 / (1 + Inner(w(k), w(k))) - sp.sqrt(Inner(ws, ws)) * R
           + sp.Abs(k * gamma - 3) + sp.Max(R, gamma) ** 3)
    c = compile_formula(Relation(">=", lhs, 0))
    for _ in range(200):
        vals = {"<w_star, w[k]>": rng.normal() * 10, "<w[k], w[k]>": abs(rng.normal()) * 5,
                "<w_star, w_star>": abs(rng.normal()) + 0.1, "R": rng.normal(),
                "k": float(rng.integers(0, 100)), "gamma": rng.normal()}
        exact_env = {key: Fraction(v) for key, v in vals.items()}
        env = {key: (np.array([v]), None) for key, v in vals.items()}
        v = c.evaluate(env, (1,))
        lo, hi = exact_interval(c.tree[3], exact_env, 512)
        # exact lhs lies in [lo, hi] (tiny for rationals); the float value is within tol of it
        assert abs(Fraction(float(v.lhs[0])) - lo) <= Fraction(float(v.tol[0])) + (hi - lo)


def test_exact_evaluation_decides_ties_with_square_roots():
    c = compile_formula(Relation("<=", k, R ** 2 * Inner(ws, ws) / gamma ** 2))
    # k = 2, R = sqrt(2) (irrational), ||w*||^2 = 1, gamma = 1: 2 <= 2 exactly
    env = {"k": Fraction(2), "R": ("sqrt", Fraction(2)), "<w_star, w_star>": Fraction(1),
           "gamma": Fraction(1)}
    verdict, lhs, rhs, held = c.evaluate_exact(env)
    assert verdict is True and held
    env["k"] = Fraction(3)
    assert c.evaluate_exact(env)[0] is False


def test_implication_needs_its_premises():
    c = compile_formula(Implication((Relation("=", R, 1),), Relation("<=", k, 1 / gamma ** 2)))
    env = _env(R=([1.0, 1.0], [0.0, 1e-12]), k=([5.0, 5.0], None), gamma=([1.0, 1.0], None))
    v = c.evaluate(env, (2,))
    assert v.false[0] and not v.false[1]  # premise certain only where R is exact
    assert list(v.in_force) == [True, False]


def test_vector_definition_of_an_unbound_vector_is_substituted():
    z0 = sp.Symbol("z0")
    foot = VectorEq(z0, Vec.atom(x) - Vec.atom(ws).scale(Inner(ws, x) / Inner(ws, ws)))
    dist = Norm((Vec.atom(x) - Vec.atom(z0)).as_tuple())
    lem = Lemma("foot_distance", Relation("=", dist, sp.Abs(Inner(ws, x)) / norm(ws)),
                (("foot", foot),))
    mon = Monitor.from_lemmas([lem], include_unverified=True)
    assert not mon.not_monitorable and mon.invariants[0].where == "example"
    assert not mon.invariants[0].hypotheses  # the definition is used up
    inv = mon.invariants[0]
    env = _env(**{"<w_star, x>": ([3.0], [0.0]), "<w_star, w_star>": ([4.0], [0.0]),
                  "<x, x>": ([10.0], [0.0])})
    v = inv.check.evaluate(env, (1,))
    assert not v.false[0]  # ||x - z0|| = |<w*,x>|/||w*|| = 1.5 for these numbers


def test_per_update_names_must_be_declared_per_update():
    lem = Lemma("p", Relation("<=", y * Inner(w(k), x), 0), (), per_update=frozenset({"y"}),
                setting="s")
    mon = Monitor.from_lemmas([lem], include_unverified=True)
    assert mon.not_monitorable and "per update" in mon.not_monitorable[0][1]


def test_unverified_lemmas_are_reported_not_monitored():
    lem = Lemma("p", Relation(">=", Inner(ws, w(k)), k * gamma))
    assert not Monitor.from_lemmas([lem]).invariants
    assert Monitor.from_lemmas([lem], include_unverified=True).invariants


@pytest.mark.skipif(not HAVE_NUMBA, reason="numba not installed")
@pytest.mark.parametrize("seed", range(4))
def test_the_compiled_judge_and_the_numpy_program_agree(monkeypatch, seed):
    """The compiled judge's counts are those of the numpy interpretation of the same program,
    point by point, undefined values (a divisor that may be zero: NaN) included."""
    import novikoff.runtime._program as program
    checks = [compile_formula(f) for f in (
        Relation(">=", Inner(ws, w(k)), k * gamma),
        Relation("<=", Inner(w(k + 1), w(k + 1)), gamma * norm(w(k)) + Inner(w(k), w(k)) + 1),
        Implication((Relation(">", norm(w(k)), 0),),
                    Relation("<=", norm(w(k + 1)), norm(w(k)) + gamma / 2 + 1 / (2 * norm(w(k))))),
        Relation(">=", sp.Abs(Inner(ws, x)) / norm(ws), sp.Min(gamma, R) ** 3 - TD(k + 1)),
        Relation("<=", sp.Max(1 / Inner(ws, x), R) + sp.sqrt(gamma - 1), 1 / (gamma - R)),
        Relation("=", Inner(w(k), x) ** 2, Inner(w(k), w(k))),
    )]
    rng = np.random.default_rng(seed)
    n = 300
    env = {s: (rng.normal(size=n) * 3, np.abs(rng.normal(size=n)) * 10.0 ** rng.integers(-16, 0))
           for c in checks for s in c.slots}
    env["<w_star, x>"][0][:20] = 0.0  # 1/<w_star, x> undefined
    env["gamma"][0][20:40] = env["R"][0][20:40]  # 1/(gamma - R) undefined
    env["<w[k], w[k]>"][0][40:60] = 0.0
    env["<w[k], w[k]>"][1][40:60] = 0.0
    prog = program.Program(checks)
    monkeypatch.setattr(program, "_COMPILE_FROM", 0)  # the compiled judge, however small
    compiled = prog.judge(env, n)
    ct, cf, cin = compiled.points()[:3]
    assert compiled.stats == program._counts(ct, cf, cin).tolist()
    monkeypatch.setattr(program, "HAVE_NUMBA", False)
    interpreted = prog.judge(env, n)
    assert interpreted.stats == compiled.stats
    for a, b in zip(compiled.points(), interpreted.points()):
        assert np.array_equal(a, b, equal_nan=True)
    assert any(row[2] for row in compiled.stats) and any(row[1] for row in compiled.stats)


def test_a_lemma_written_in_python_is_never_monitored_as_verified(lemmas):
    """Only a checked LemmaInfo whose proof the kernel verified makes a verified Lemma: a Lemma
    written by hand, a look-alike object claiming verified=True, or a LemmaInfo built by hand
    with status 'verified' is unverified."""
    from dataclasses import replace
    from types import SimpleNamespace

    from novikoff.lemmas import LemmaInfo, SettingInfo
    from novikoff.runtime._compile import as_lemma
    statement = Relation(">=", Inner(ws, w(k)), k * gamma)
    by_hand = Lemma("p", statement)
    assert not by_hand.verified
    with pytest.raises(TypeError):
        Lemma("p", statement, verified=True)  # not a field: it cannot be claimed
    look_alike = SimpleNamespace(name="p", statement=statement, verified=True, hypotheses={})
    forged = LemmaInfo(name="p", file="f.proof", line=1, text="", statement=statement,
                       setting=SettingInfo("s", {}, frozenset(), {}), status="verified",
                       hypotheses={})
    checked = next(lem for lem in lemmas if lem.verified)
    copied = replace(checked, text=checked.text + " ")  # a copy with a field changed
    for obj in (by_hand, look_alike, forged, copied):
        assert not as_lemma(obj).verified
    skipped = Monitor.from_lemmas([by_hand, look_alike, forged])
    assert not skipped.invariants and [r for _, r in skipped.not_monitorable] == [
        "not verified (include_unverified=True monitors it anyway)"] * 3
    assert as_lemma(checked).verified
    assert Monitor.from_lemmas([checked]).not_monitorable == [] or \
        "not verified" not in Monitor.from_lemmas([checked]).not_monitorable[0][1]


def test_the_bundled_lemmas_that_the_kernel_verified_are_monitored_as_verified(lemmas):
    from novikoff.runtime._compile import as_lemma
    verified = [lem for lem in lemmas if lem.verified]
    assert verified and all(as_lemma(lem).verified for lem in verified)
    assert not any(as_lemma(lem).verified for lem in lemmas if not lem.verified)
