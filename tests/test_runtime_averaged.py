"""The averaged perceptron: the monitored engine (runtime/_averaged_run.py, averaged.proof's
averaged_run lemmas at every visit), the audit of averaged traces (runtime/_audit_averaged.py,
scikit-learn's SGDClassifier(average=True) included) and the fuzz learners
(fuzz/_averaged_learners.py)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from novikoff.errors import InvalidArgument
from novikoff.fuzz._averaged_learners import (AVERAGED_LEARNERS, AVERAGED_MUTANTS,
                                              average_of_updates, average_off_by_one,
                                              average_undivided, averaged_after,
                                              averaged_in_use, averaged_trace)
from novikoff.runtime import audit_averaged, audit_averaged_files, run
from novikoff.runtime._audit_averaged import _means
from novikoff.runtime._averaged_run import run_averaged
from novikoff.runtime._io import load_dataset
from novikoff.strategies import orderings, separable_datasets
from helpers import cli  # noqa: E402  (tests/ is on sys.path)

AVERAGED_LEMMAS = {"averaged_run_progress", "averaged_run_norm", "average_run_progress",
                   "average_run_norm"}
CLASSIC_LEMMAS = {"progress", "norm_growth", "mistake_bound"}


def planted(n=300, d=6, seed=0):
    rng = np.random.default_rng(seed)
    w = rng.normal(size=d)
    X = rng.normal(size=(n, d))
    X = X[np.abs(X @ w / np.linalg.norm(w)) > 0.05]
    return X, np.where(X @ w > 0, 1.0, -1.0)


DATA = {"iris": lambda: load_dataset("iris")[:2], "planted": planted}


def plain_averaged(X, y, order, cyclic=True, max_epochs=1000):
    """The averaged perceptron written out: (updates' examples, visits, mean of the weights in
    use at every visit)."""
    w = np.zeros(X.shape[1])
    total = np.zeros(X.shape[1])
    updates, T = [], 0
    for _ in range(max_epochs if cyclic else 1):
        clean = True
        for i in order:
            total = total + w
            T += 1
            if y[i] * (w @ X[i]) <= 0:
                w = w + y[i] * X[i]
                updates.append(int(i))
                clean = False
        if clean:
            break
    return updates, T, total / T


def by_name(res):
    out = {}
    for m in res.monitor["monitored"]:
        out.setdefault(m["lemma"], m)
    return out


# ------------------------------------------------------------------------------- the engine

@pytest.mark.parametrize("data", sorted(DATA))
def test_the_averaged_lemmas_hold_at_every_visit_and_the_run_is_the_textbook_one(data):
    X, y = DATA[data]()
    res = run(X, y, variant="averaged")
    mon = by_name(res)
    for name in AVERAGED_LEMMAS | CLASSIC_LEMMAS:
        assert mon[name]["applies"], mon[name]
        assert mon[name]["violations"] == 0
    # the sums' lemmas at every state t = 0..T, the averages' at every visit
    assert mon["averaged_run_progress"]["checks"] == res.visits + 1
    assert mon["average_run_norm"]["checks"] == res.visits
    assert res.checks > res.visits and not res.monitor["violations"]
    updates, T, mean = plain_averaged(X, y, np.arange(X.shape[0]))
    assert res.converged and res.visits == T and res.mistakes == len(updates)
    assert res.updates.tolist() == updates
    np.testing.assert_allclose(res.w, mean, rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(res.monitor["weights"],
                                  run(X, y, order=None).w)  # the classic engine's weights
    # the averaged lemmas are not reported as unmonitored, nor on a classic run as monitored
    assert not AVERAGED_LEMMAS & {m["lemma"] for m in res.monitor["not_monitorable"]}
    classic = run(X, y)
    reasons = {m["lemma"]: m["reason"] for m in classic.monitor["not_monitorable"]}
    for name in AVERAGED_LEMMAS:
        assert reasons[name].startswith("about the averaged perceptron only"), reasons[name]


def test_the_engine_makes_the_classic_runs_mistakes_with_its_bound():
    X, y = load_dataset("iris")[:2]
    a, c = run(X, y, variant="averaged"), run(X, y)
    assert (a.mistakes, a.visits, a.epochs) == (c.mistakes, c.visits, c.epochs)
    assert a.bound == pytest.approx(c.bound)


def test_online_with_an_order_with_repeats_and_max_epochs():
    X, y = planted(60, 4, seed=3)
    order = np.random.default_rng(1).integers(0, X.shape[0], 500)
    res = run_averaged(X, y, order=order, cyclic=False)
    updates, T, mean = plain_averaged(X, y, order, cyclic=False)
    assert res.visits == T == 500 and res.updates.tolist() == updates
    np.testing.assert_allclose(res.w, mean, rtol=1e-12, atol=1e-12)
    assert not res.monitor["violations"]
    short = run_averaged(X, y, max_epochs=1)
    assert short.visits == X.shape[0] and short.epochs == 1


def test_the_engine_and_the_in_use_learner_compute_the_same_floats():
    X, y = planted(80, 5, seed=2)
    order = np.random.default_rng(0).permutation(X.shape[0])
    res = run_averaged(X, y, order=order, cyclic=False)
    W, A = averaged_trace(averaged_in_use, X, y, order)
    np.testing.assert_array_equal(res.w, A[-1])
    np.testing.assert_array_equal(res.monitor["weights"], W[-1])


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(ds=separable_datasets(max_n=12, max_dim=5),
       scale=st.sampled_from([1e-12, 1e-3, 1.0, 1e6]), data=st.data())
def test_no_false_violation_at_any_scale_or_margin(ds, scale, data):
    """Near-degenerate margins (down to 1e-9), duplicates, scaled and mirrored rows, high
    dimension, at scales 1e-12 .. 1e6: round-off never makes a violation."""
    order = data.draw(orderings(n=ds.n, max_epochs=3))
    for cyclic in (True, False):
        res = run_averaged(ds.X * scale, ds.y, w_star=ds.w_star, order=order, cyclic=cyclic,
                           max_epochs=50)
        assert res.checks > 0 and not res.monitor["violations"]


def test_large_values_and_a_tiny_margin():
    rng = np.random.default_rng(5)
    w = rng.normal(size=8)
    X = rng.normal(size=(400, 8)) * 1e150
    m = X @ w
    X = X[np.abs(m) > 1e-6 * np.abs(m).max()]
    y = np.where(X @ w > 0, 1.0, -1.0)
    res = run_averaged(X, y, w_star=w, max_epochs=20)
    assert res.checks > 0 and not res.monitor["violations"]
    # the sums overflow float64 after a while: those points are undetermined, not decided
    assert by_name(res)["averaged_run_norm"]["undetermined"] > 0


@pytest.mark.parametrize("kwargs, message", [
    ({"max_epochs": 0}, "max_epochs=0"),
    ({"order": [0, 150]}, "order"),
    ({"w_star": [1.0, 2.0]}, "w_star"),
    ({"gamma": -1.0}, "gamma"),
    ({"on_violation": "ignore"}, "on_violation"),
])
def test_bad_arguments_name_the_argument(kwargs, message):
    X, y = load_dataset("iris")[:2]
    with pytest.raises(InvalidArgument, match=message):
        run_averaged(X, y, **kwargs)


@pytest.mark.parametrize("kwargs", [{"eta": 0.5}, {"w0": np.ones(4)}, {"exact": True},
                                    {"separable": False}, {"all_examples": True},
                                    {"kernel": "linear"}])
def test_run_refuses_what_the_averaged_engine_does_not_take(kwargs):
    X, y = load_dataset("iris")[:2]
    with pytest.raises(InvalidArgument, match="variant='averaged'"):
        run(X, y, variant="averaged", **kwargs)


def test_a_given_gamma_above_the_margin_is_refused():
    X, y = load_dataset("iris")[:2]
    with pytest.raises(InvalidArgument, match="gamma"):
        run_averaged(X, y, gamma=100.0)


def test_checks_off_gives_the_same_average():
    X, y = planted(100, 4, seed=6)
    on, off = run_averaged(X, y), run_averaged(X, y, checks=False)
    np.testing.assert_array_equal(on.w, off.w)
    assert off.checks == 0 and off.monitor is None


# ------------------------------------------------------------------------------- the CLI



def test_cli_run_iris(capsys):
    code, out, err = cli(["run", "iris", "--variant", "averaged", "--no-progress"], capsys)
    assert code == 0, err
    assert "averaged perceptron, cyclic" in out and "no violation" in out
    assert "average    of the weights in use at the 600 visits" in out
    code, out, err = cli(["run", "iris", "--variant", "averaged", "--json"], capsys)
    assert code == 0, err
    doc = json.loads(out)
    assert doc["variant"] == "averaged" and doc["checks"] > 0 and doc["violations"] == []
    names = {m["lemma"] for m in doc["monitor"]["monitored"]}
    assert AVERAGED_LEMMAS <= names


def test_cli_run_breast_cancer_a_few_epochs(capsys):
    code, out, err = cli(["run", "breast_cancer", "--variant", "averaged", "--max-epochs", "5",
                          "--json"], capsys)
    assert code == 0, err
    doc = json.loads(out)
    assert doc["checks"] > 5 * 569 and doc["violations"] == []


@pytest.mark.parametrize("flag", [["--exact"], ["--save", "x.npz"], ["--plot", "x.png"],
                                  ["--w0", "w0.npy"], ["--non-separable"], ["--all-examples"],
                                  ["--kernel", "linear"]])
def test_cli_run_refuses_options_in_one_line(flag, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, out, err = cli(["run", "iris", "--variant", "averaged", *flag], capsys)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "averaged perceptron" in err and flag[0] in err


def test_cli_run_refuses_a_learning_rate(capsys):
    code, out, err = cli(["run", "iris", "--variant", "averaged", "--eta", "0.5"], capsys)
    assert code == 2 and "eta=0.5" in err and err.count("\n") == 1


# ------------------------------------------------------------------------------- the audit

def _iris_trace(learner, epochs=4):
    X, y = load_dataset("iris")[:2]
    order = np.tile(np.arange(X.shape[0]), epochs)
    W, A = averaged_trace(learner, X, y, order)
    return X, y, order, W, A


@pytest.mark.parametrize("name", sorted(AVERAGED_LEARNERS))
def test_the_correct_learners_audit_clean(name):
    make, convention = AVERAGED_LEARNERS[name]
    X, y, order, W, A = _iris_trace(make)
    rep = audit_averaged(X, y, order, W, A, convention=convention)
    assert rep.ok, rep.violations[:3]
    assert rep.average_violations == 0 and rep.checks > len(order)
    names = {m["lemma"] for m in rep.monitor["monitored"] if m["applies"]}
    assert AVERAGED_LEMMAS | CLASSIC_LEMMAS <= names


@pytest.mark.parametrize("name", sorted(AVERAGED_MUTANTS))
def test_the_audit_kills_every_mutant(name):
    make, convention = AVERAGED_MUTANTS[name]
    X, y, order, W, A = _iris_trace(make)
    rep = audit_averaged(X, y, order, W, A, convention=convention)
    assert not rep.ok
    first = rep.violations[0]
    assert first["kind"] == "average" and first["visit"] == 1
    assert "convention 'after'" in first["message"]
    assert rep.average_violations >= 500 and rep.rule_violations == 0
    assert rep.lemma_violations >= 1  # averaged.proof, on the learner's own averages


def test_a_convention_mismatch_is_named_with_the_option_that_explains_it():
    X, y, order, W, A = _iris_trace(averaged_in_use)
    rep = audit_averaged(X, y, order, W, A)  # the default: scikit-learn's 'after'
    assert not rep.ok and rep.average_violations == len(order)
    assert rep.violations[0]["visit"] == 0
    assert [p["option"] for p in rep.patterns] == ["in-use"]
    assert "--average-convention in-use" in rep.patterns[0]["message"]
    assert audit_averaged(X, y, order, W, A, convention="in-use").ok
    X, y, order, W, A = _iris_trace(averaged_after)
    rep = audit_averaged(X, y, order, W, A, convention="in-use")
    assert not rep.ok and "convention 'in-use'" in rep.violations[0]["message"]
    assert [p["option"] for p in rep.patterns] == ["after"]


def test_a_single_wrong_coordinate_late_in_the_run_is_found():
    X, y, order, W, A = _iris_trace(averaged_after)
    A = A.copy()
    A[450, 2] = np.nextafter(A[450, 2], np.inf) + 1e-9
    rep = audit_averaged(X, y, order, W, A)
    assert [v["kind"] for v in rep.violations] == ["average"]
    assert rep.violations[0]["visit"] == 450 and rep.average_violations == 1


def test_rounding_of_a_correct_mean_is_not_a_violation():
    """Every correct way of taking the mean (a sum, a running mean) is within the allowance,
    with room: a few ulps of each average moved do not make a finding either."""
    X, y, order, W, A = _iris_trace(averaged_after, epochs=20)
    _, M, mine, allowed = _means(W)
    assert (np.abs(A - M) <= 0.05 * (mine + allowed)).all()
    jiggled = A + np.abs(A) * 4 * 2.0 ** -53 * np.sign(np.sin(np.arange(A.size))).reshape(
        A.shape)
    assert audit_averaged(X, y, order, W, jiggled).ok


@pytest.mark.parametrize("bad, message", [
    (lambda A: A[:-1], "average: shape"),
    (lambda A: A[:, :2], "average: shape"),
    (lambda A: np.where(np.arange(A.size).reshape(A.shape) == 7, np.nan, A), r"average\[1, 3\]"),
])
def test_a_bad_average_array_is_named(bad, message):
    X, y, order, W, A = _iris_trace(averaged_after, epochs=1)
    with pytest.raises(InvalidArgument, match=message):
        audit_averaged(X, y, order, W, bad(A))


def test_a_bad_convention_is_named():
    X, y, order, W, A = _iris_trace(averaged_after, epochs=1)
    with pytest.raises(InvalidArgument, match="convention='sklearn'"):
        audit_averaged(X, y, order, W, A, convention="sklearn")


def test_the_weights_are_audited_by_the_classic_rules():
    X, y, order, W, A = _iris_trace(averaged_after, epochs=1)
    W = W.copy()
    W[3:] *= 2.0  # a step that is not y*x
    rep = audit_averaged(X, y, order, W, A)
    assert rep.rule_violations >= 1 and not rep.ok


def _cli_files(tmp_path, learner):
    X, y, order, W, A = _iris_trace(learner)
    np.savez(tmp_path / "d.npz", X=X, y=y)
    np.savez(tmp_path / "t.npz", order=order, w=W, average=A)
    return str(tmp_path / "d.npz"), str(tmp_path / "t.npz")


def test_cli_audit_clean_dirty_and_json(tmp_path, capsys):
    d, t = _cli_files(tmp_path, averaged_after)
    code, out, err = cli(["audit", "--variant", "averaged", "--data", d, "--trace", t], capsys)
    assert code == 0, err
    assert "0 visit(s) whose average is not the mean" in out
    assert audit_averaged_files(d, t).ok
    d, t = _cli_files(tmp_path, average_off_by_one)
    code, out, err = cli(["audit", "--variant", "averaged", "--data", d, "--trace", t], capsys)
    assert code == 1 and "[average] visit 1" in out and "[lemma]" in out
    code, out, err = cli(["audit", "--variant", "averaged", "--data", d, "--trace", t,
                          "--json"], capsys)
    doc = json.loads(out)
    assert code == 1 and doc["average_violations"] > 0 and doc["convention"] == "after"
    d, t = _cli_files(tmp_path, averaged_in_use)
    code, out, err = cli(["audit", "--variant", "averaged", "--data", d, "--trace", t,
                          "--average-convention", "in-use"], capsys)
    assert code == 0, out + err


def test_cli_audit_errors_are_one_line(tmp_path, capsys):
    d, t = _cli_files(tmp_path, averaged_after)
    np.savez(tmp_path / "no_avg.npz", order=np.arange(3), w=np.zeros((3, 4)))
    for argv, words in [
        (["--trace", str(tmp_path / "no_avg.npz")], "average"),
        (["--trace", t, "--float32"], "--float32"),
        (["--trace", t, "--eta", "2"], "--eta"),
    ]:
        code, out, err = cli(["audit", "--variant", "averaged", "--data", d, *argv], capsys)
        assert code == 2 and words in err and err.count("\n") == 1, err
    code, out, err = cli(["audit", "--data", d, "--trace", t, "--average-convention", "after"],
                         capsys)
    assert code == 2 and "--average-convention" in err


# ------------------------------------------------------------------------------- scikit-learn

def sklearn_trace(X, y, order, broken=False):
    """SGDClassifier as the classic averaged perceptron, one example per partial_fit: its plain
    weights (``_standard_coef``) and its average (``coef_``) after each example."""
    sk = pytest.importorskip("sklearn.linear_model")
    clf = sk.SGDClassifier(loss="perceptron", learning_rate="constant", eta0=1, penalty=None,
                           average=True, fit_intercept=False, shuffle=False)
    W, A = [], []
    for t, i in enumerate(order):
        extra = {"classes": np.array([-1.0, 1.0])} if t == 0 else {}
        clf.partial_fit(X[i:i + 1], y[i:i + 1], **extra)
        W.append(clf._standard_coef.ravel().copy())
        A.append(clf.coef_.ravel().copy())
    W, A = np.array(W), np.array(A)
    if broken:  # off by one: the mean of t + 1 vectors divided by t
        t = np.arange(1, len(order) + 1, dtype=float)[:, None]
        A = A * t / np.maximum(t - 1, 1)
    return W, A


@pytest.mark.parametrize("data", sorted(DATA))
def test_sklearn_averaged_perceptron_audits_clean(data):
    X, y = DATA[data]()
    X, y = X[:120], y[:120]
    order = np.tile(np.arange(X.shape[0]), 3)
    W, A = sklearn_trace(X, y, order)
    rep = audit_averaged(X, y, order, W, A)
    assert rep.ok, rep.violations[:3]
    assert rep.updates > 0 and rep.checks > len(order)
    # the average is the 'after' mean: the other convention is certainly wrong, and says so
    rep = audit_averaged(X, y, order, W, A, convention="in-use")
    assert not rep.ok and rep.patterns[0]["option"] == "after"


def test_sklearn_with_a_broken_average_is_caught():
    X, y = load_dataset("iris")[:2]
    order = np.tile(np.arange(X.shape[0]), 2)
    W, A = sklearn_trace(X, y, order, broken=True)
    rep = audit_averaged(X, y, order, W, A)
    assert not rep.ok and rep.violations[0]["kind"] == "average"
    assert rep.violations[0]["visit"] == 1


# ------------------------------------------------------------------------------- fuzz learners

@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(ds=separable_datasets(max_n=10, max_dim=4), data=st.data())
def test_the_audit_passes_correct_learners_and_kills_mutants_exactly_when_they_differ(ds, data):
    order = data.draw(orderings(n=ds.n, max_epochs=3))
    for name, (make, convention) in AVERAGED_LEARNERS.items():
        W, A = averaged_trace(make, ds.X, ds.y, order)
        rep = audit_averaged(ds.X, ds.y, order, W, A, w_star=ds.w_star, convention=convention)
        assert rep.ok, (name, rep.violations[:2])
    changed = np.concatenate([[True], (np.diff(
        averaged_trace(averaged_after, ds.X, ds.y, order)[0], axis=0) != 0).any(axis=1)])
    T = len(order)
    for make, killed in ((average_off_by_one, T >= 2), (average_undivided, T >= 2),
                         (average_of_updates, not changed.all())):
        W, A = averaged_trace(make, ds.X, ds.y, order)
        rep = audit_averaged(ds.X, ds.y, order, W, A, w_star=ds.w_star)
        assert rep.ok != killed, (make.__name__, rep.violations[:2])


# ------------------------------------------------------------------------------- binding

def test_visit_quantities_bind_only_as_the_run_keeps_them(tmp_path):
    """wv[t+1] is not a run quantity (said so, not guessed), and a nat t binds to the visits
    only with `bind t to visits`: a setting's own t is never silently an averaged run's."""
    from novikoff.runtime import load_lemmas
    from novikoff.runtime._monitor import Monitor

    head = """setting visits:
  vector   w_star
  sequence wv, s
  real sequence kt
  real     gamma > 0, R > 0
  nat      t
{bind}  assume   accumulate:  s[t+1] = s[t] + wv[t]
  assume   progress:    <w_star, wv[t]> >= kt[t]*gamma

lemma next_weights: <w_star, wv[t+1]> >= kt[t]*gamma
proof:
  <w_star, wv[t+1]> >= kt[t]*gamma     xfail

lemma count: t >= 0
proof:
  t >= 0
"""
    path = tmp_path / "v.proof"
    path.write_text(head.format(bind="  bind     t to visits\n"), encoding="utf-8")
    mon = Monitor.from_lemmas(load_lemmas([str(path)]), engine="averaged",
                              include_unverified=True)
    reasons = dict(mon.not_monitorable)
    assert reasons["next_weights"] == "wv[t+1]: of wv the run keeps only wv[t]"
    assert [i.name for i in mon.invariants] == ["count"]
    path.write_text(head.format(bind=""), encoding="utf-8")
    mon = Monitor.from_lemmas(load_lemmas([str(path)]), engine="averaged",
                              include_unverified=True)
    assert "no run quantity is bound to 't'" in dict(mon.not_monitorable)["count"]
