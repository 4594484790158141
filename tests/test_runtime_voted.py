"""The voted perceptron, monitored (runtime/_voted_run.py) and audited (runtime/_audit_voted.py):
voted.proof's lemmas checked at every update, no false alarm, bugs caught, the audit of a vote,
and the fuzz learners (fuzz/_voted_learners.py)."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from novikoff.errors import InvalidArgument, NovikoffError
from novikoff.fuzz._voted_learners import VOTED_MUTANTS, voted, voted_trace
from novikoff.runtime import run
from novikoff.runtime import _voted_run
from novikoff.runtime._audit_voted import audit_voted
from novikoff.runtime._io import load_dataset
from novikoff.runtime._voted_run import run_voted
from novikoff.strategies import orderings, separable_datasets

from helpers import run_cli  # noqa: E402  (tests/ is on sys.path)

VOTED_LEMMAS = {"vectors_voted", "voted_size", "replaced_counted", "counts_add_up",
                "updates_at_most_visits", "vote_weight"}


def iris():
    return load_dataset("iris")[:2]


def planted(n=300, d=6, seed=0):
    rng = np.random.default_rng(seed)
    w = rng.normal(size=d)
    X = rng.normal(size=(n, d))
    X = X[np.abs(X @ w / np.linalg.norm(w)) > 0.05]
    return X, np.where(X @ w > 0, 1.0, -1.0)


def textbook_vote(X, y, order):
    """The voted perceptron written out plainly: (vectors, counts) after the visits of order."""
    w = np.zeros(X.shape[1])
    vectors, counts = [w.copy()], [0]
    for i in order:
        counts[-1] += 1
        if y[i] * (w @ X[i]) <= 0:
            w = w + y[i] * X[i]
            vectors.append(w.copy())
            counts.append(0)
    return np.array(vectors), np.array(counts)


def cyclic_order(n, epochs):
    return np.tile(np.arange(n), epochs)


# --------------------------------------------------------------------------- the engine

@pytest.mark.parametrize("data", [iris, planted])
def test_voted_lemmas_hold_and_the_vote_is_the_textbook_one(data):
    X, y = data()
    res = run(X, y, variant="voted")
    classic = run(X, y)
    mon = {m["lemma"]: m for m in res.monitor["monitored"]}
    assert VOTED_LEMMAS <= set(mon)
    for name in VOTED_LEMMAS:
        assert mon[name]["applies"] and mon[name]["checks"] > 0, mon[name]
    assert res.variant == "voted" and res.converged and res.mistakes == classic.mistakes
    # the classic lemmas that apply to the classic run apply to the voted one too
    applied = {(m["lemma"], m["source"]) for m in classic.monitor["monitored"] if m["applies"]}
    assert applied <= {(m["lemma"], m["source"]) for m in res.monitor["monitored"]
                       if m["applies"]}
    vectors, counts = textbook_vote(X, y, cyclic_order(len(y), res.epochs))
    assert np.array_equal(res.vote.vectors, vectors)  # the same floats
    assert np.array_equal(res.vote.counts, counts)
    assert len(res.vote) == res.mistakes + 1 and res.vote.counts.sum() == res.visits
    assert np.array_equal(res.w, res.vote.vectors[-1])


def test_online_runs_honour_the_order_with_repeats():
    X, y = iris()
    order = np.random.default_rng(3).integers(0, len(y), 400)
    res = run(X, y, variant="voted", order=order, cyclic=False)
    vectors, counts = textbook_vote(X, y, order)
    assert np.array_equal(res.vote.vectors, vectors) and np.array_equal(res.vote.counts, counts)
    assert res.visits == 400 and res.checks > 0


def test_the_unmonitored_run_keeps_the_same_vote():
    X, y = planted(seed=4)
    on = run_voted(X, y)
    off = run_voted(X, y, checks=False)
    assert off.checks == 0 and off.monitor is None
    assert np.array_equal(on.vote.vectors, off.vote.vectors)
    assert np.array_equal(on.vote.counts, off.vote.counts)


def test_the_vote_is_kept_across_chunks_of_the_update_log():
    X, y = planted(n=400, seed=2)
    whole = run_voted(X, y)
    pieces = run_voted(X, y, chunk_visits=7)
    assert np.array_equal(whole.vote.counts, pieces.vote.counts)
    assert np.array_equal(whole.vote.vectors, pieces.vote.vectors)
    assert whole.checks == pieces.checks


def test_predict_is_the_vote():
    X, y = iris()
    res = run(X, y, variant="voted")
    signs = np.sign(X @ res.vote.vectors.T)
    scores = signs @ res.vote.counts
    assert np.array_equal(res.vote.scores(X), scores)
    assert np.array_equal(res.predict(X), np.where(scores >= 0, 1.0, -1.0))
    assert (res.predict(X) == y).mean() == 1.0  # iris is separable and the run converged
    with pytest.raises(InvalidArgument, match=r"X: shape \(3, 2\)"):
        res.vote.predict(np.ones((3, 2)))


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.data())
def test_no_false_alarm_on_separable_data(data):
    ds = data.draw(separable_datasets(max_n=20, max_dim=5))
    order = data.draw(orderings(n=len(ds.y), max_epochs=3))
    cyclic = data.draw(st.booleans())
    res = run(ds.X, ds.y, variant="voted", w_star=ds.w_star, order=order, cyclic=cyclic,
              max_epochs=50)
    mon = {m["lemma"]: m for m in res.monitor["monitored"]}
    assert all(mon[n]["violations"] == 0 for n in VOTED_LEMMAS)
    assert res.vote.counts.sum() == res.visits and len(res.vote) == res.mistakes + 1


def test_voted_lemmas_are_not_monitored_on_other_engines():
    X, y = iris()
    for variant in ("classic", "batch"):
        res = run(X, y, variant=variant)
        reasons = {m["lemma"]: m["reason"] for m in res.monitor["not_monitorable"]}
        for name in VOTED_LEMMAS:
            assert reasons[name].startswith("about the voted perceptron only"), (variant, name)


@pytest.mark.parametrize("kwargs, match", [
    ({"exact": True}, r"variant='voted': exact=True"),
    ({"all_examples": True}, r"all_examples=True"),
    ({"kernel": "poly:2"}, r"kernel='poly:2'"),
    ({"max_epochs": 0}, r"max_epochs=0"),
    ({"eta": -1.0}, r"eta=-1.0"),
    ({"order": [0, 999]}, r"order"),
])
def test_bad_arguments_are_named(kwargs, match):
    X, y = iris()
    with pytest.raises(InvalidArgument, match=match):
        run(X, y, variant="voted", **kwargs)


def test_a_vote_over_its_budget_is_refused(monkeypatch):
    X, y = iris()
    monkeypatch.setattr(_voted_run, "VOTE_BUDGET", 12)
    with pytest.raises(NovikoffError, match="max_epochs"):
        run_voted(X, y)


def test_a_learning_rate_and_a_start_are_the_classic_run_with_its_vote():
    X, y = iris()
    w0 = np.array([0.5, -1.0, 0.25, 2.0])
    res = run(X, y, variant="voted", eta=0.5, w0=w0)
    classic = run(X, y, eta=0.5, w0=w0)
    assert res.mistakes == classic.mistakes and np.array_equal(res.w, classic.w)
    assert np.array_equal(res.vote.vectors[0], w0)
    mon = {m["lemma"]: m for m in res.monitor["monitored"]}
    assert mon["counts_add_up"]["applies"] and not mon["voted_size"]["applies"]


# --------------------------------------------------------------------------- the audit

def _audit(X, y, tr, **kw):
    return audit_voted(X, y, tr["order"], tr["w"], vectors=tr["vectors"], counts=tr["counts"],
                       **kw)


def test_the_textbook_learner_passes_the_audit_and_matches_the_engine():
    X, y = iris()
    order = cyclic_order(150, 4)
    tr = voted_trace(voted, X, y, order)
    rep = _audit(X, y, tr)
    assert rep.ok and rep.vote_violations == 0 and rep.lemma_violations == 0
    mon = {m["lemma"]: m for m in rep.monitor["monitored"]}
    assert VOTED_LEMMAS <= set(mon) and all(mon[n]["checks"] > 0 for n in VOTED_LEMMAS)
    assert not any(m["lemma"] in VOTED_LEMMAS for m in rep.monitor["not_monitorable"])
    res = run(X, y, variant="voted")
    assert np.array_equal(res.vote.vectors, tr["vectors"])
    assert np.array_equal(res.vote.counts, tr["counts"])


@pytest.mark.parametrize("name", sorted(VOTED_MUTANTS))
def test_each_mutant_fails_the_audit_on_iris(name):
    X, y = iris()
    tr = voted_trace(VOTED_MUTANTS[name][0], X, y, cyclic_order(150, 4))
    rep = _audit(X, y, tr)
    assert not rep.ok and rep.vote_violations > 0
    assert rep.rule_violations == 0  # the training run itself is the textbook one


@settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.data())
def test_the_audit_kills_every_mutant_and_passes_the_textbook_learner(data):
    ds = data.draw(separable_datasets(max_n=12, max_dim=4))
    n = len(ds.y)
    order = data.draw(orderings(n=n, max_epochs=3))
    clean = _audit(ds.X, ds.y, voted_trace(voted, ds.X, ds.y, order), w_star=ds.w_star)
    assert clean.ok, clean.violations
    for name, (learner, _) in VOTED_MUTANTS.items():
        tr = voted_trace(learner, ds.X, ds.y, order)
        differs = (tr["vectors"].shape != clean_vectors(ds, order).shape or
                   not np.array_equal(tr["vectors"], clean_vectors(ds, order)) or
                   not np.array_equal(tr["counts"], clean_counts(ds, order)))
        rep = _audit(ds.X, ds.y, tr, w_star=ds.w_star)
        # a mutant whose vote happens to be the textbook one (e.g. every visit an update)
        # must pass; any other is killed
        assert rep.ok != differs, (name, rep.violations)


def clean_vectors(ds, order):
    return textbook_vote(ds.X, ds.y, order)[0]


def clean_counts(ds, order):
    return textbook_vote(ds.X, ds.y, order)[1]


def test_a_mutant_is_killed_whenever_a_visit_makes_no_update():
    # iris, one pass: most visits make no update, so every mutant's vote differs
    X, y = iris()
    for name, (learner, _) in VOTED_MUTANTS.items():
        rep = _audit(X, y, voted_trace(learner, X, y, np.arange(150)))
        assert not rep.ok, name


def test_freund_schapire_counts_are_named_and_accepted_under_their_convention():
    X, y = iris()
    tr = voted_trace(voted, X, y, cyclic_order(150, 4))
    fs = dict(tr, counts=tr["counts"].copy())
    fs["counts"][0] -= 1
    fs["counts"][-1] += 1
    rep = _audit(X, y, fs)
    assert not rep.ok
    assert any("--vote-counts freund-schapire" in v["message"] for v in rep.violations)
    assert _audit(X, y, fs, convention="freund-schapire").ok
    assert not _audit(X, y, tr, convention="freund-schapire").ok


def test_a_vector_within_rounding_is_accepted_and_one_beyond_is_not():
    X, y = iris()
    tr = voted_trace(voted, X, y, cyclic_order(150, 4))
    near = dict(tr, vectors=tr["vectors"].copy())
    near["vectors"][3] = np.nextafter(near["vectors"][3], np.inf)  # one ulp: rounding
    assert _audit(X, y, near).ok
    far = dict(tr, vectors=tr["vectors"].copy())
    far["vectors"][3, 0] += 1e-6
    rep = _audit(X, y, far)
    assert not rep.ok and "vectors[3] is not w[3]" in rep.violations[0]["message"]


def test_a_trace_without_a_vote_gets_the_classic_audit():
    X, y = iris()
    tr = voted_trace(voted, X, y, cyclic_order(150, 4))
    rep = audit_voted(X, y, tr["order"], tr["w"])
    assert rep.ok and rep.vote["updates"] == 5 and "vectors" not in rep.vote
    bad = tr["w"].copy()
    bad[10:] *= 2  # not the classic rule
    assert not audit_voted(X, y, tr["order"], bad).ok


def test_audit_files_reads_a_voted_trace_as_the_table_row_says(tmp_path):
    """variant='voted': order and w, and the vote's vectors and counts when the file has them."""
    from novikoff.runtime import audit_files
    X, y = iris()
    tr = voted_trace(voted, X, y, cyclic_order(150, 4))
    np.savez(tmp_path / "d.npz", X=X, y=y)
    np.savez(tmp_path / "t.npz", **tr)
    rep = audit_files(tmp_path / "d.npz", tmp_path / "t.npz", variant="voted")
    assert rep.as_dict() == _audit(X, y, tr).as_dict()
    bad = dict(tr, counts=tr["counts"] + 1)
    np.savez(tmp_path / "bad.npz", **bad)
    assert audit_files(tmp_path / "d.npz", tmp_path / "bad.npz", variant="voted").vote_violations
    np.savez(tmp_path / "plain.npz", order=tr["order"], w=tr["w"])
    plain = audit_files(tmp_path / "d.npz", tmp_path / "plain.npz", variant="voted")
    assert plain.ok and "vectors" not in plain.vote


@pytest.mark.parametrize("vote, match", [
    ({"vectors": np.zeros((2, 4))}, "counts: missing"),
    ({"counts": np.ones(2)}, "vectors: missing"),
    ({"vectors": np.zeros((2, 3)), "counts": np.ones(2)}, r"vectors: shape \(2, 3\)"),
    ({"vectors": np.zeros((2, 4)), "counts": np.ones(3)}, r"counts: shape \(3,\)"),
    ({"vectors": np.zeros((2, 4)), "counts": np.array([1.5, 2])}, r"counts\[0\]=1.5"),
    ({"vectors": np.zeros((2, 4)), "counts": np.array([1, -2])}, r"counts\[1\]=-2"),
    ({"vectors": np.full((2, 4), np.nan), "counts": np.ones(2)}, r"vectors\[0, 0\]=nan"),
])
def test_a_bad_vote_is_bad_input(vote, match):
    X, y = iris()
    with pytest.raises(InvalidArgument, match=match):
        audit_voted(X, y, np.arange(3), np.zeros((3, 4)), **vote)


def test_a_bad_convention_is_named():
    X, y = iris()
    with pytest.raises(InvalidArgument, match="convention='fs'"):
        audit_voted(X, y, np.arange(3), np.zeros((3, 4)), convention="fs")


# --------------------------------------------------------------------------- the command line

def cli(*args, cwd=None):
    return run_cli(*args, cwd=cwd)  # in this process: the command line's code, no start-up


def test_cli_run_voted_on_iris():
    out = cli("run", "iris", "--variant", "voted")
    assert out.returncode == 0, out.stderr
    assert "vote       6 vectors, counts 1 50 100 50 100 299 (sum 600)" in out.stdout
    assert "no violation" in out.stdout


@pytest.mark.e2e
def test_cli_run_voted_in_a_fresh_process():
    out = subprocess.run([sys.executable, "-m", "novikoff", "run", "iris", "--variant", "voted"],
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    assert "vote       6 vectors, counts 1 50 100 50 100 299 (sum 600)" in out.stdout


def test_cli_run_voted_json():
    import json
    out = cli("run", "iris", "--variant", "voted", "--json")
    assert out.returncode == 0, out.stderr
    d = json.loads(out.stdout)
    assert d["variant"] == "voted" and d["vote"]["vectors"] == 6 and sum(d["vote"]["counts"]) \
        == d["visits"]


@pytest.mark.parametrize("flag", ["--exact", "--all-examples", "--save=x.npz"])
def test_cli_run_voted_refuses_options(flag, tmp_path):
    out = cli("run", "iris", "--variant", "voted", flag, cwd=tmp_path)
    assert out.returncode == 2
    assert out.stderr.count("\n") == 1 and "not available for the voted perceptron" in out.stderr


def test_cli_audit_voted(tmp_path):
    X, y = iris()
    np.savez(tmp_path / "d.npz", X=X, y=y)
    order = cyclic_order(150, 4)
    np.savez(tmp_path / "ok.npz", **voted_trace(voted, X, y, order))
    np.savez(tmp_path / "bug.npz",
             **voted_trace(VOTED_MUTANTS["vote_count_not_reset"][0], X, y, order))
    ok = cli("audit", "--variant", "voted", "--data", str(tmp_path / "d.npz"), "--trace",
             str(tmp_path / "ok.npz"))
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "vote       6 vectors for 5 update(s), in-use counts: 0 entry(ies)" in ok.stdout
    bug = cli("audit", "--variant", "voted", "--data", str(tmp_path / "d.npz"), "--trace",
              str(tmp_path / "bug.npz"), "--json")
    assert bug.returncode == 1
    import json
    d = json.loads(bug.stdout)
    assert d["vote_violations"] == 5 and {v["kind"] for v in d["violations"]} == {"vote", "lemma"}
    wrong = cli("audit", "--data", str(tmp_path / "d.npz"), "--trace",
                str(tmp_path / "ok.npz"), "--vote-counts", "in-use")
    assert wrong.returncode == 2 and "--vote-counts: only for --variant voted" in wrong.stderr
    tr = voted_trace(voted, X, y, order)
    np.savez(tmp_path / "bad.npz", order=tr["order"], w=tr["w"], vectors=tr["vectors"],
             counts=tr["counts"][:-1])
    bad = cli("audit", "--variant", "voted", "--data", str(tmp_path / "d.npz"), "--trace",
              str(tmp_path / "bad.npz"))
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "counts: shape" in bad.stderr


# --------------------------------------------------------------------------- the batch row

def test_the_batch_engines_first_step_needs_no_exact_arithmetic(monkeypatch):
    # <u, w[0]> = 0 exactly (w[0] = 0): the benchmark's batch row must not pay an exact
    # O(n*d) integer product to decide the `obtuse` assumption at the first step
    from novikoff.runtime import _batch_run

    def refuse(self, alpha, Y):
        raise AssertionError("exact <u, w[k]> computed")

    monkeypatch.setattr(_batch_run._Exact, "inner", refuse)
    X, y = planted(seed=1)
    res = run(X, y, variant="batch")
    assert res.converged and res.mistakes >= 1 and res.checks > 0
    mon = {m["lemma"]: m for m in res.monitor["monitored"]}
    assert mon["batch_step_bound"]["applies"]


def test_a_count_for_a_vector_never_in_use_names_no_empty_range():
    from novikoff.runtime import audit_voted
    X, y = np.array([[1.0, 0.0], [0.0, 1.0]]), np.array([1.0, 1.0])
    report = audit_voted(X, y, np.array([0]), np.array([[1.0, 0.0]]),
                         vectors=np.array([[0.0, 0.0], [1.0, 0.0]]), counts=np.array([1, 1]))
    (finding,) = [v for v in report.violations if v["kind"] == "vote"]
    assert "counts[1] = 1" in finding["message"] and "no visit: it came last" in finding["message"]
    assert "1..0" not in finding["message"]
