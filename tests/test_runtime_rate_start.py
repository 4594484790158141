"""Monitored runs with a learning rate and a non-zero start: w[0] = w0, w[k+1] = w[k] + eta*y*x.

learning_rate.proof's and nonzero_start.proof's lemmas are checked on such runs; the classic
lemmas, whose `update` (w[k+1] = w[k] + y*x) or `start` (w[0] = 0) assumption the run breaks,
are reported not applicable.  Both backends, the exact engine, replay and the audit.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from novikoff.errors import InvalidArgument
from novikoff.runtime import audit, replay, run, save_run
from novikoff.runtime._bounds import start_slots
from novikoff.runtime._io import load_dataset
from novikoff.runtime._loops import HAVE_NUMBA

from helpers import cli  # noqa: E402  (tests/ is on sys.path)
from test_runtime_engine import separable  # noqa: E402  (tests/ is on sys.path)

BACKENDS = ["numba", "numpy"] if HAVE_NUMBA else ["numpy"]
RATE = ("rate_progress", "rate_norm_growth", "rate_mistake_bound")
START = ("start_progress", "start_norm_growth", "start_bound")
CLASSIC = ("progress", "norm_growth", "mistake_bound")



def _iris():
    X, y, _ = load_dataset("iris")
    return X, y, None


def _planted():
    return separable(300, 6, 0.05, seed=3, unit=False)


DATA = {"iris": _iris, "planted": _planted}


def _status(res, name, proof):
    (m,) = [m for m in res.monitor["monitored"]
            if m["lemma"] == name and m["source"].split(":")[0].endswith(proof)]
    return m


def _assert_monitored(res, names, proof):
    for name in names:
        m = _status(res, name, proof)
        assert m["applies"] and m["checks"] > 0 and m["violations"] == 0, m


def _assert_not_applicable(res, names, proof, because):
    for name in names:
        m = _status(res, name, proof)
        assert not m["applies"] and because in m["inapplicable"], m


# ------------------------------------------------------------------ a learning rate

@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("data", sorted(DATA))
@pytest.mark.parametrize("eta", [0.5, 3.0])
def test_a_learning_rate_run_is_judged_by_learning_rate_proof(lemmas, eta, data, backend):
    X, y, ws = DATA[data]()
    res = run(X, y, w_star=ws, eta=eta, lemmas=lemmas, backend=backend)  # raises on a violation
    assert res.monitor["violations"] == [] and res.eta == eta and res.w0 is None
    _assert_monitored(res, RATE, "learning_rate.proof")
    _assert_not_applicable(res, CLASSIC, "novikoff.proof", "assumption update fails")
    assert "rate_mistake_bound" in res.bounds and "mistake_bound" not in res.bounds
    # from 0 the rate only scales the weights: the same mistakes as eta = 1
    assert res.mistakes == run(X, y, w_star=ws, lemmas=[], backend=backend).mistakes


def test_a_rate_that_is_not_a_power_of_two_rounds_its_steps_without_a_violation(lemmas):
    X, y, ws = separable(400, 5, 0.02, seed=8, unit=False)
    for eta in (0.1, 1 / 3, 1e-3, 7e3):
        res = run(X, y, w_star=ws, eta=eta, lemmas=lemmas, order=np.tile(np.arange(400), 3),
                  cyclic=False)
        _assert_monitored(res, RATE[:2], "learning_rate.proof")


# ------------------------------------------------------------------ a non-zero start

@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("data", sorted(DATA))
def test_a_run_from_w0_is_judged_by_nonzero_start_proof(lemmas, data, backend):
    X, y, ws = DATA[data]()
    w0 = np.random.default_rng(11).standard_normal(X.shape[1]) * 2.0
    res = run(X, y, w_star=ws, w0=w0, lemmas=lemmas, backend=backend)
    assert res.monitor["violations"] == [] and res.mistakes > 0
    np.testing.assert_array_equal(res.w0, w0)
    _assert_monitored(res, START, "nonzero_start.proof")
    _assert_not_applicable(res, CLASSIC, "novikoff.proof",
                           "assumption start fails for the run's constants")
    _assert_not_applicable(res, RATE, "learning_rate.proof", "assumption start fails")


def test_the_start_slots_are_zero_for_the_zero_start_and_bounded_otherwise():
    zero = start_slots()
    assert {k: (float(v[0]), e) for k, (v, e) in zero.items()} == {
        "<w0, w0>": (0.0, None), "<w_star, w0>": (0.0, None), "eta": (1.0, None)}
    w0, ws = np.array([0.1, -0.3, 1e-3]), np.array([1.0, 2.0, -3.0])
    slots = start_slots(w0, ws, 0.25)
    exact = start_slots(w0, ws, 0.25, exact=True)
    for key in ("<w0, w0>", "<w_star, w0>"):
        (v,), (e,) = slots[key]
        assert 0 < e < 1e-15 and abs(v - float(exact[key])) <= e
    assert float(exact["eta"]) == 0.25 and slots["eta"][1] is None
    # w0 = 0 is the zero start, whatever the separator
    assert start_slots(np.zeros(3), ws)["<w_star, w0>"][1] is None


# ------------------------------------------------------------------ the default run

def test_the_default_run_is_unchanged_and_every_lemma_family_applies(lemmas):
    X, y, _ = _iris()
    res = run(X, y, lemmas=lemmas)
    _assert_monitored(res, CLASSIC, "novikoff.proof")
    _assert_monitored(res, RATE, "learning_rate.proof")  # eta = 1: true as well
    _assert_monitored(res, START, "nonzero_start.proof")  # w0 = 0: true as well
    same = [run(X, y, lemmas=lemmas, eta=1.0), run(X, y, lemmas=lemmas, w0=np.zeros(4))]
    for other in same:
        assert other.w.tobytes() == res.w.tobytes() and other.checks == res.checks
        assert other.bounds == res.bounds and other.w0 is None


@pytest.mark.skipif(not HAVE_NUMBA, reason="numba is not installed")
@pytest.mark.parametrize("variant", ["classic", "margin"])
def test_the_backends_compute_the_same_run_with_a_rate_and_a_start(lemmas, variant):
    X, y, ws = separable(500, 7, 0.03, seed=2, unit=variant == "margin")
    w0 = np.random.default_rng(5).standard_normal(7) * 0.3
    gamma = 0.03 if variant == "margin" else None
    kw = dict(w_star=ws, gamma=gamma, variant=variant, eta=0.1, w0=w0, lemmas=lemmas)
    a, b = run(X, y, backend="numba", **kw), run(X, y, backend="numpy", **kw)
    assert a.w.tobytes() == b.w.tobytes() and a.updates.tolist() == b.updates.tolist()
    assert a.monitor == b.monitor


# ------------------------------------------------------------------ a buggy engine, audited

def _trace(X, y, order, *, eta=1.0, w0=None):
    w = np.zeros(X.shape[1]) if w0 is None else np.array(w0, float)
    W = []
    for i in order:
        if y[i] * (w @ X[i]) <= 0:
            w = w + (eta * y[i]) * X[i]
        W.append(w.copy())
    return np.array(W)


def test_an_audited_rate_trace_is_judged_by_learning_rate_proof(lemmas):
    X, y, ws = separable(80, 4, 0.1, seed=5, unit=False)
    order = np.tile(np.arange(80), 3)
    rep = audit(X, y, order, _trace(X, y, order, eta=0.3), w_star=ws, lemmas=lemmas, eta=0.3)
    assert rep.ok
    for name in RATE:
        m = _status(rep, name, "learning_rate.proof")
        assert m["applies"] and m["checks"] > 0
    assert not _status(rep, "norm_growth", "novikoff.proof")["applies"]


def test_a_trace_with_eta_2_claiming_eta_1_is_caught(lemmas):
    X, y, ws = separable(80, 4, 0.1, seed=5, unit=False)
    order = np.tile(np.arange(80), 3)
    rep = audit(X, y, order, _trace(X, y, order, eta=2.0), w_star=ws, lemmas=lemmas, eta=1.0)
    assert not rep.ok and rep.rule_violations > 0
    assert "not y*x" in rep.violations[0]["message"]
    broken = {name for v in rep.violations if v["kind"] == "lemma"
              for name in [v["lemma"], *v["also"]]}
    assert "rate_norm_growth" in broken  # judged with the declared eta = 1: 4x too fast
    assert rep.patterns[0]["suggest"] == "--eta 2.0"


def test_a_trace_from_w0_claiming_0_is_caught_and_passes_with_w0(lemmas):
    X, y, ws = separable(80, 4, 0.1, seed=5, unit=False)
    order = np.tile(np.arange(80), 3)
    w0 = np.array([0.4, -0.3, 0.2, 0.1])
    W = _trace(X, y, order, w0=w0)
    rep = audit(X, y, order, W, w_star=ws, lemmas=lemmas)
    assert not rep.ok and rep.violations[0]["visit"] == 0 and rep.violations[0]["kind"] == "rule"
    assert rep.patterns[0]["pattern"] == "start"
    rep = audit(X, y, order, W, w_star=ws, lemmas=lemmas, w0=w0)
    assert rep.ok
    for name in START:
        m = _status(rep, name, "nonzero_start.proof")
        assert m["applies"] and m["checks"] > 0
    assert "non-zero start" in _status(rep, "progress", "novikoff.proof")["inapplicable"]
    # a wrong w0 declared: the rule breaks at visit 0 again
    assert not audit(X, y, order, W, w_star=ws, lemmas=lemmas, w0=w0 * 2).ok


# ------------------------------------------------------------------ exact arithmetic

def test_an_exact_run_and_a_replay_carry_eta_and_w0(lemmas, tmp_path):
    X, y, ws = separable(60, 3, 0.1, seed=4, unit=False)
    w0 = np.array([0.25, -0.5, 0.125])
    for eta, start in ((0.1, None), (1.0, w0), (3.0, w0)):
        fl = run(X, y, w_star=ws, eta=eta, w0=start, lemmas=lemmas)
        ex = run(X, y, w_star=ws, eta=eta, w0=start, lemmas=lemmas, exact=True)
        assert ex.exact and ex.monitor["violations"] == [] and ex.eta == eta
        assert ex.mistakes == fl.mistakes
        np.testing.assert_allclose(ex.w, fl.w, rtol=1e-12, atol=1e-12)
        if start is None:
            _assert_monitored(ex, RATE, "learning_rate.proof")
        elif eta == 1.0:
            _assert_monitored(ex, START, "nonzero_start.proof")
        path = save_run(tmp_path / "run.npz", X, y, w_star=ws, w0=start,
                        config={"eta": eta}, outcome={"mistakes": fl.mistakes,
                                                      "violation": None})
        out = replay(path, lemmas=lemmas)
        assert out["verdict"].startswith("agree") and out["mistakes_exact"] == fl.mistakes
        assert out["exact"]["eta"] == eta
        assert out["exact"]["w0"] == (None if start is None else start.tolist())


# ------------------------------------------------------------------ bad arguments

@pytest.mark.parametrize("eta, why", [(0.0, "eta=0.0 is not a positive"),
                                      (-1.0, "eta=-1.0 is not a positive"),
                                      (float("nan"), "eta=nan"), (float("inf"), "eta=inf"),
                                      ("fast", "eta='fast' is not a number")])
def test_a_bad_eta_is_refused_naming_it(eta, why):
    X, y, ws = separable(20, 3, 0.1, seed=1)
    with pytest.raises(InvalidArgument, match=why):
        run(X, y, w_star=ws, eta=eta, lemmas=[])


@pytest.mark.parametrize("w0, why", [(np.ones(2), r"w0: shape \(2,\) does not match"),
                                     (np.ones((3, 1)), r"w0: shape \(3, 1\)"),
                                     (np.array([1.0, np.nan, 0.0]), r"w0\[1\]=nan"),
                                     (np.array([1e200, 0.0, 0.0]), "overflows"),
                                     (["a", "b", "c"], "w0: dtype")])
def test_a_bad_w0_is_refused_naming_it(w0, why):
    X, y, ws = separable(20, 3, 0.1, seed=1)
    with pytest.raises(InvalidArgument, match=why):
        run(X, y, w_star=ws, w0=w0, lemmas=[])


def test_the_kernel_variant_refuses_a_rate_or_a_start():
    X, y, _ = separable(20, 3, 0.1, seed=1)
    with pytest.raises(InvalidArgument, match="kernel perceptron runs from 0"):
        run(X, y, variant="kernel", eta=0.5)


def test_the_command_line_runs_with_eta_and_w0(tmp_path, capsys):
    np.save(tmp_path / "w0.npy", np.array([0.5, -1.0, 0.25, 2.0]))
    code, out, _ = cli(["run", "iris", "--eta", "0.5", "--w0",
                                 str(tmp_path / "w0.npy"), "--no-progress"], capsys)
    assert code == 0 and "rule       w <- w + 0.5*y*x from w0" in out
    code, out, _ = cli(["run", "iris", "--eta", "0.25", "--json", "--save",
                                 str(tmp_path / "r.npz")], capsys)
    doc = json.loads(out)
    assert code == 0 and doc["eta"] == 0.25 and doc["bounds"]["rate_mistake_bound"] > 0
    code, out, _ = cli(["replay", str(tmp_path / "r.npz")], capsys)
    assert code == 0 and "agree" in out
    # the default prints no rule line
    code, out, _ = cli(["run", "iris", "--no-progress"], capsys)
    assert code == 0 and "rule " not in out


@pytest.mark.parametrize("args, message", [
    (["--eta", "-2"], "eta='-2' is not a positive finite number"),
    (["--eta", "abc"], "eta='abc' is not a number"),
    (["--eta", "inf"], "eta='inf' is not a positive finite number"),
    (["--w0", "missing.npy"], "w0='missing.npy' is not a readable .npy file"),
    (["--w0", "short.npy"], "w0: shape (3,) does not match the data's dimension d=4"),
])
def test_bad_command_line_values_exit_2_with_one_line(tmp_path, capsys, monkeypatch, args,
                                                      message):
    monkeypatch.chdir(tmp_path)
    np.save("short.npy", np.ones(3))
    np.save("w0.npy", np.ones(4))
    code, out, err = cli(["run", "iris", *args], capsys)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and message in err


# ------------------------------------------------------------------ the property

@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2 ** 31 - 1), n=st.integers(2, 30), d=st.integers(2, 6),
       eta=st.floats(1e-3, 1e3, allow_nan=False, allow_infinity=False),
       w0_scale=st.sampled_from([0.0, 1e-3, 1.0, 30.0]),
       variant=st.sampled_from(["classic", "margin"]))
def test_a_correct_run_with_any_rate_and_start_reports_no_violation(lemmas, seed, n, d, eta,
                                                                    w0_scale, variant):
    X, y, ws = separable(n, d, 0.05, seed=seed, unit=variant == "margin")
    w0 = np.random.default_rng(seed + 1).standard_normal(d) * w0_scale
    gamma = float(np.min(y * (X @ ws))) / 2 if variant == "margin" else None
    res = run(X, y, w_star=ws, gamma=gamma, variant=variant, eta=eta, w0=w0, lemmas=lemmas,
              max_epochs=50, on_violation="collect")
    assert res.monitor["violations"] == []
    if variant == "classic":
        proof, names = (("nonzero_start.proof", START) if w0_scale and eta == 1.0 else
                        ("learning_rate.proof", RATE) if not w0_scale else (None, ()))
        if proof and res.mistakes:
            _assert_monitored(res, names[:2], proof)
