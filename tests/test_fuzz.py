"""The fuzz driver: correct engines pass, every non-equivalent mutant is killed, cases replay."""

import json

import numpy as np
import pytest

from novikoff.fuzz import (MUTANTS, check_engine, hunt_mutant, load_case,
                           replay_case)
from novikoff.fuzz._profiles import profile_from_env

PROFILE = profile_from_env("ci")



def test_catalogue_has_at_least_twelve_real_mutants():
    assert len({m.name for m in MUTANTS}) == len(MUTANTS)
    assert sum(m.equivalent is None for m in MUTANTS) >= 12


@pytest.mark.parametrize("variant", ["classic", "margin", "hinge", "batch", "kernel",
                                     "averaged", "voted"])
def test_invariants_hold_on_the_correct_engines(variant, lemmas, tmp_path):
    result = check_engine(variant, lemmas, profile=PROFILE, directory=str(tmp_path))
    assert result.ok, result.violations
    assert result.runs > 0


@pytest.mark.parametrize("mutant", MUTANTS, ids=lambda m: m.name)
def test_each_mutant_is_killed_or_equivalent(mutant, lemmas, tmp_path):
    result = hunt_mutant(mutant, lemmas, profile=PROFILE, directory=str(tmp_path))
    if mutant.equivalent is not None:
        assert not result.killed, f"{mutant.name} is listed as equivalent but was killed"
        assert result.equivalent and result.reason
        return
    assert result.killed, f"{mutant.name} survived {result.examples} examples"
    assert result.examples >= 1
    assert result.lemma if result.kind == "lemma" else result.kind in ("td", "rule", "average",
                                                                       "vote")
    assert result.variant == mutant.variant
    # The case is saved losslessly and replays to a lemma violation.
    case = load_case(result.case)
    assert case.name == mutant.name and case.X.dtype == np.float64
    assert replay_case(result.case, lemmas)


@pytest.mark.parametrize("name", ["strict_mistake_test", "never_learns", "logs_before_update"])
def test_bugs_that_keep_every_lemma_true_are_killed_by_the_rule(name, lemmas, tmp_path):
    # w stays 0 (or lags a visit behind a correct run): every lemma holds on the trace, so a
    # judge of lemma findings alone lets them through; the audit's rule check kills them.
    from novikoff.fuzz import mutant_named
    result = hunt_mutant(mutant_named(name), lemmas, profile=PROFILE, directory=str(tmp_path))
    assert result.killed and result.kind == "rule" and not result.equivalent, result
    case = load_case(result.case)
    found = replay_case(result.case, lemmas)
    assert found and found[0].kind == "rule" and found[0].visit == case.visit
    assert not [f for f in found if f.kind == "lemma"]


def test_td_over_dataset_is_killed_by_its_reported_td(lemmas, tmp_path):
    # The learner is the classic perceptron; its TD counts each example once (the dataset's
    # TD_gamma), not once per presentation: the audit's TD check (or a lemma) kills it.
    from novikoff.fuzz import mutant_named
    m = mutant_named("td_over_dataset")
    assert m.equivalent is None and m.td is not None
    result = hunt_mutant(m, lemmas, profile=PROFILE, directory=str(tmp_path))
    assert result.killed and result.kind in ("td", "lemma"), result
    assert result.examples >= 1
    case = load_case(result.case)
    assert case.td is not None and case.td.shape == case.order.shape
    assert case.kind == result.kind and case.variant == "hinge"
    found = replay_case(result.case, lemmas)
    assert found and found[0].kind == result.kind and found[0].visit == case.visit


def _hinge_run(data, max_n=30, max_dim=5):
    from novikoff.strategies import nonseparable_datasets, orderings
    ds = data.draw(nonseparable_datasets(max_n=max_n, max_dim=max_dim))
    order = data.draw(orderings(n=ds.n))
    return ds, order


def test_the_correct_hinge_learner_and_its_td_are_never_flagged(lemmas):
    from hypothesis import given, settings, strategies as st

    from novikoff.fuzz import CORRECT, CORRECT_TD, trace, trace_violations

    @settings(max_examples=40, deadline=None)
    @given(st.data())
    def prop(data):
        ds, order = _hinge_run(data)
        W = trace(CORRECT["hinge"], ds.X, ds.y, order)
        td = CORRECT_TD["hinge"](ds.X, ds.y, order, w_star=ds.w_star, gamma=float(ds.gamma))
        assert not trace_violations(ds, order, W, "hinge", lemmas, td=td)

    prop()


def test_a_hinge_trace_with_one_wrong_update_is_caught(lemmas):
    # The first update subtracts y x (the rest of the run is the correct rule from there): at
    # k = 1, <w*, w_1> = -y<w*, x> < gamma - max(0, gamma - y<w*, x>) whenever y<w*, x> > 0,
    # which the example presented first is (the one of largest margin).
    from hypothesis import given, settings, strategies as st

    from novikoff.fuzz import CORRECT, lemma_violations, trace

    def wrong_first_update(X, y, *, gamma=None):
        w, done = np.zeros(X.shape[1]), [False]

        def step(i):
            nonlocal w
            if y[i] * (w @ X[i]) <= 0:
                w = w + (y[i] if done[0] else -y[i]) * X[i]
                done[0] = True
            return w.copy()

        return step

    @settings(max_examples=30, deadline=None)
    @given(st.data())
    def prop(data):
        ds, order = _hinge_run(data)
        best = int(np.argmax(ds.y * (ds.X @ ds.w_star)))
        order = np.concatenate(([best], order)).astype(np.int64)
        assert not lemma_violations(ds, order, trace(CORRECT["hinge"], ds.X, ds.y, order),
                                    "hinge", lemmas)
        found = lemma_violations(ds, order, trace(wrong_first_update, ds.X, ds.y, order),
                                 "hinge", lemmas)
        assert found and found[0].kind == "lemma" and found[0].visit == 0

    prop()


def test_a_wrong_td_at_one_visit_is_caught(lemmas):
    from novikoff.fuzz import CORRECT, CORRECT_TD, trace, trace_violations
    from novikoff.fuzz._mutants import distinct_td
    from novikoff.strategies import certify
    X = np.array([[1.0, 0.0], [0.0, 1.0], [-0.6, 0.8]])
    y = np.array([1.0, 1.0, 1.0])
    ds = certify(X, y, np.array([0.6, 0.8]), gamma=0.5)  # example 2: margin 0.28, loss 0.22
    order = np.array([0, 2, 1, 2, 0, 2], dtype=np.int64)
    W = trace(CORRECT["hinge"], ds.X, ds.y, order)
    kw = dict(w_star=ds.w_star, gamma=float(ds.gamma))
    td = CORRECT_TD["hinge"](ds.X, ds.y, order, **kw)
    assert np.allclose(td, [0.0, 0.22, 0.22, 0.44, 0.44, 0.66])
    assert not trace_violations(ds, order, W, "hinge", lemmas, td=td)
    bad = td.copy()
    bad[4] += 1e-9  # one visit off
    found = [f for f in trace_violations(ds, order, W, "hinge", lemmas, td=bad)
             if f.kind == "td"]
    assert len(found) == 1 and found[0].visit == 4 and found[0].lemma is None
    # td_over_dataset's bookkeeping: example 2 counted once, wrong from its second visit on
    once = distinct_td(ds.X, ds.y, order, **kw)
    assert np.allclose(once, [0.0, 0.22, 0.22, 0.22, 0.22, 0.22])
    found = trace_violations(ds, order, W, "hinge", lemmas, td=once)
    assert [(f.kind, f.visit) for f in found] == [("td", 3)]


def test_a_case_saved_before_td_existed_still_loads(lemmas, tmp_path):
    m = next(m for m in MUTANTS if m.name == "subtract_update")
    result = hunt_mutant(m, lemmas, profile=PROFILE, directory=str(tmp_path))
    with np.load(result.case) as z:
        old = {k: z[k] for k in z.files if k not in ("td", "kind")}
    np.savez(tmp_path / "old.npz", **old)
    case = load_case(tmp_path / "old.npz")
    assert case.td is None and case.kind == "lemma" and case.lemma == result.lemma
    assert replay_case(tmp_path / "old.npz", lemmas)[0].lemma == result.lemma


def test_norm_shrink_adversary_exposes_a_margin_test_without_the_norm(lemmas):
    # A nearly opposite pair of one class shrinks ||w|| to 2g < 1; then x3 has
    # (gamma/2)||w|| < y<w, x3> <= gamma/2: the test without ||w|| fires, the right one not.
    from novikoff.fuzz import CORRECT, lemma_violations, mutant_named
    from novikoff.strategies import NormShrinkAdversary, adversarial_run, certify, margin_fires
    g = 0.125
    s = (1 - g * g) ** 0.5
    X = np.array([[g, s], [g, -s], [0.25, (1 - 0.0625) ** 0.5]])
    ds = certify(X, np.ones(3), np.array([1.0, 0.0]), unit_rows=True)
    bad = mutant_named("margin_no_norm")
    order, W = adversarial_run(ds, NormShrinkAdversary(), learner=bad.learner,
                               fires=margin_fires)
    changed = np.any(np.diff(np.vstack([np.zeros(2), W]), axis=0) != 0, axis=1)
    assert sorted(order[changed][:2].tolist()) == [0, 1]  # the opposite pair first
    vs = lemma_violations(ds, order, W, "margin", lemmas)
    assert vs and vs[0].lemma == "norm_step"
    order, W = adversarial_run(ds, NormShrinkAdversary(), learner=CORRECT["margin"],
                               fires=margin_fires)
    assert not lemma_violations(ds, order, W, "margin", lemmas)


@pytest.mark.parametrize("name", ["subtract_update", "learning_rate_2", "aliased_trace",
                                  "previous_x"])
def test_a_saved_case_is_an_audit_input_with_the_same_finding(name, lemmas, tmp_path):
    # The fuzzer's judge is the runtime audit: the saved npz, given to `novikoff audit` as data
    # and trace file, reports the lemma the hunt reported.
    from novikoff.runtime import audit_files
    m = next(m for m in MUTANTS if m.name == name)
    result = hunt_mutant(m, lemmas, profile=PROFILE, directory=str(tmp_path))
    case = load_case(result.case)
    np.save(tmp_path / "w_star.npy", case.w_star)
    rep = audit_files(result.case, result.case, w_star=tmp_path / "w_star.npy",
                      gamma=float(case.gamma), variant=case.variant, lemmas=lemmas)
    assert (case.kind, case.lemma or None, case.visit) in {
        (v["kind"], v["lemma"], v["visit"]) for v in rep.violations}


def test_saved_cases_are_lossless(lemmas, tmp_path):
    m = next(m for m in MUTANTS if m.name == "float32_accumulation")
    result = hunt_mutant(m, lemmas, profile=PROFILE, directory=str(tmp_path))
    case = load_case(result.case)
    with np.load(result.case) as z:
        assert float.fromhex(str(z["gamma_hex"])) == float(case.gamma)
        assert np.array_equal(z["X"], case.X) and np.array_equal(z["w"], case.W)


def test_a_failure_found_once_is_replayed_first(lemmas, tmp_path):
    # Use a mutant that needs several examples; the example database replays the failure.
    m = next(m for m in MUTANTS if m.name == "update_always")
    first = hunt_mutant(m, lemmas, profile=PROFILE, directory=str(tmp_path))
    again = hunt_mutant(m, lemmas, profile=PROFILE, directory=str(tmp_path))
    assert first.killed and again.killed
    assert again.examples == 1 <= first.examples


@pytest.mark.e2e  # a whole campaign: every engine's runs, then the mutants named
def test_fuzz_cli_json(tmp_path, capsys):
    from novikoff.cli import main
    code = main(["fuzz", "--json", "--mutant", "subtract_update", "--mutant",
                 "strict_mistake_test", "--dir", str(tmp_path)])
    out = json.loads(capsys.readouterr().out)
    assert code == 0
    names = {m["name"]: m for m in out["mutants"]}
    assert names["subtract_update"]["killed"] and names["subtract_update"]["lemma"] == "progress"
    assert names["strict_mistake_test"]["killed"]
    assert names["strict_mistake_test"]["kind"] == "rule"
    assert set(names["subtract_update"]) >= {"name", "killed", "equivalent", "lemma", "kind",
                                             "examples"}
    assert names["subtract_update"]["kind"] == "lemma"
    assert out["runs_per_second"] > 0
    t = out["tightness"]
    assert t["orthonormal"] == 1.0
    assert out["best_tightness"] == 1.0
    assert t["datasets"] > 0 and t["runs_each"] >= 1
    assert t["adaptive_better"] + t["adaptive_equal"] + t["adaptive_worse"] == t["datasets"]
    assert t["adaptive_mean"] <= t["adaptive_best_mean"] <= t["adaptive"] <= 1.0
    assert t["random_mean"] <= t["random_best_mean"] <= t["random"] <= 1.0


def test_fuzz_cli_unknown_mutant(capsys):
    from novikoff.cli import main
    assert main(["fuzz", "--mutant", "nope"]) == 2
    assert "unknown mutant 'nope'" in capsys.readouterr().err


def test_users_own_perceptron_example(lemmas):
    # The example of docs/fuzzing.md, with a user's perceptron written from scratch.
    from hypothesis import given, strategies as st

    from novikoff.fuzz import lemma_violations
    from novikoff.strategies import orderings, separable_datasets

    def my_perceptron_trace(X, y, order):
        w, out = np.zeros(X.shape[1]), []
        for i in order:
            if y[i] * (w @ X[i]) <= 0:
                w = w + y[i] * X[i]
            out.append(w.copy())
        return np.array(out)

    @given(separable_datasets(max_n=30, max_dim=5), st.data())
    def test_my_perceptron(ds, data):
        order = data.draw(orderings(n=ds.n))
        W = my_perceptron_trace(ds.X, ds.y, order)
        assert not lemma_violations(ds, order, W, "classic", lemmas)

    test_my_perceptron()


@pytest.mark.slow
def test_deep_campaign(tmp_path):
    from novikoff.fuzz import run_fuzz
    report = run_fuzz("deep", directory=str(tmp_path))
    assert report.ok, report.as_dict()


@pytest.mark.parametrize("claim", ["eta", "w0"])
def test_a_rate_or_a_start_is_no_bug_when_the_learner_claims_it(lemmas, claim):
    # learning_rate_2 and nonzero_start are killed as bugs of the textbook rule; the same
    # learners audited as what they claim (a rate of 2, their start) are judged by
    # learning_rate.proof / nonzero_start.proof and never flagged.
    from hypothesis import given, settings, strategies as st

    from novikoff.fuzz import trace, trace_violations
    from novikoff.fuzz._mutants import _classic_like, _rate
    from novikoff.strategies import orderings, separable_datasets

    @settings(max_examples=30, deadline=None)
    @given(st.data())
    def prop(data):
        ds = data.draw(separable_datasets(max_n=20, max_dim=5))
        order = data.draw(orderings(n=ds.n))
        if claim == "eta":
            learner, declared = _classic_like(update=_rate(2.0)), {"eta": 2.0}
        else:
            w0 = np.asarray(data.draw(st.lists(st.integers(-8, 8), min_size=ds.X.shape[1],
                                               max_size=ds.X.shape[1])), dtype=float) / 4
            learner, declared = _classic_like(start=lambda d: w0.copy()), {"w0": w0}
        W = trace(learner, ds.X, ds.y, order)
        assert not trace_violations(ds, order, W, "classic", lemmas, **declared)

    prop()


# ----------------------------------------------------------------------------- the variant table

def test_the_variant_table_has_a_runner_and_a_judge_per_variant():
    from novikoff.fuzz import VARIANTS
    assert {"classic", "margin", "hinge", "batch", "kernel"} <= set(VARIANTS)
    for name, spec in VARIANTS.items():
        assert spec.name == name and callable(spec.runs) and callable(spec.judge)
    for m in MUTANTS:  # every mutant claims a variant the table knows
        assert m.variant in VARIANTS, m.name
    kinds = {m.variant for m in MUTANTS}
    assert {"batch", "kernel"} <= kinds
    assert sum(m.variant == "batch" for m in MUTANTS) >= 4
    assert sum(m.variant == "kernel" for m in MUTANTS) >= 4


def test_a_registered_variant_is_fuzzed_by_its_own_judge(lemmas, tmp_path):
    # The extension point: a variant registered in the table (here the classic perceptron under
    # another name, judged by a judge that counts its calls) is what check_engine runs.
    from novikoff.fuzz import VARIANTS, Variant, register_variant
    base = VARIANTS["classic"]
    calls = []

    def judge(run, lemmas_):
        calls.append(run)
        return base.judge(run, lemmas_)

    register_variant(Variant("classic_copy", base.runs, judge, base.correct, base.family))
    try:
        result = check_engine("classic_copy", lemmas, profile=PROFILE, directory=str(tmp_path))
        assert result.ok and result.runs == len(calls) > 0
    finally:
        del VARIANTS["classic_copy"]


@pytest.mark.parametrize("name, variant", [("batch_twice", "batch"),
                                           ("kernel_update_always", "kernel")])
def test_a_new_variant_case_replays_and_audits_from_its_file(name, variant, lemmas, tmp_path):
    from novikoff.fuzz import mutant_named
    from novikoff.runtime import audit_batch_files, audit_kernel_files
    result = hunt_mutant(mutant_named(name), lemmas, profile=PROFILE, directory=str(tmp_path))
    assert result.killed and result.variant == variant
    case = load_case(result.case)
    assert case.variant == variant
    found = replay_case(result.case, lemmas)
    assert found and (found[0].kind, found[0].visit) == (result.kind, result.visit)
    # the saved npz is the data and trace file of `novikoff audit --variant ...`
    np.save(tmp_path / "w_star.npy", case.w_star)
    if variant == "batch":
        np.savez(tmp_path / "t.npz", w=case.W, converged=case.converged)
        rep = audit_batch_files(result.case, tmp_path / "t.npz", w_star=tmp_path / "w_star.npy",
                                lemmas=lemmas)
    else:
        assert case.kernel
        np.savez(tmp_path / "t.npz", order=case.order, alpha=case.W)
        rep = audit_kernel_files(result.case, tmp_path / "t.npz", kernel=case.kernel,
                                 w_star=tmp_path / "w_star.npy", lemmas=lemmas)
    assert not rep.ok


def test_the_correct_batch_and_kernel_learners_match_the_engines():
    # the catalogue's learners are independent implementations; on the same data they make the
    # engines' runs
    from novikoff.fuzz._batch_learners import batch, batch_trace
    from novikoff.fuzz._dual_learners import kernel_perceptron, kernel_trace
    from novikoff.runtime import kernel_trace as engine_kernel_trace
    from novikoff.runtime._batch_run import run_batch
    from novikoff.runtime._dual_run import run_kernel
    X = np.array([[1.0, 1.0], [1.0, -1.0], [-1.0, 1.0], [-1.0, -1.0], [2.0, 1.0], [0.5, -2.0]])
    y = np.array([1.0, -1.0, -1.0, 1.0, 1.0, -1.0])
    engine = run_kernel(X, y, kernel="poly:2")
    tr = engine_kernel_trace(engine)
    A = kernel_trace(kernel_perceptron, X, y, tr["order"], kernel="poly:2")
    np.testing.assert_array_equal(A, tr["alpha"])
    Xb = X + np.array([3.0, 0.0])
    yb = np.where(Xb[:, 1] > 0, 1.0, -1.0)
    W, converged = batch_trace(batch, Xb, yb)
    res = run_batch(Xb, yb, keep_trace=True)
    assert converged == res.converged and W.shape == res.steps.shape
    np.testing.assert_allclose(W, res.steps, rtol=1e-12)


@pytest.mark.e2e  # a whole campaign: every engine's runs, then the mutants named
def test_fuzz_report_shows_each_mutants_variant(tmp_path, capsys):
    # (one campaign for the batch, kernel, averaged and voted mutants: each runs every engine)
    from novikoff.cli import main
    code = main(["fuzz", "--mutant", "batch_strict", "--mutant", "kernel_strict", "--mutant",
                 "average_of_updates", "--mutant", "vote_aliased", "--dir", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == 0
    assert any(line.split()[:3] == ["batch", "batch_strict", "yes"] for line in out.splitlines())
    assert any(line.split()[:3] == ["kernel", "kernel_strict", "yes"] for line in out.splitlines())
    assert "(update rule)" in out and "engine batch:" in out and "engine kernel:" in out
    assert "time: engines" in out
    lines = [line.split() for line in out.splitlines()]
    assert ["averaged", "average_of_updates", "yes", "(average)"] in [r[:4] for r in lines]
    assert ["voted", "vote_aliased", "yes", "(vote)"] in [r[:4] for r in lines]
    assert "engine averaged: 60 runs, ok" in out and "engine voted: 60 runs, ok" in out


# ----------------------------------------------------------------------- averaged and voted

AVERAGED_AND_VOTED = [m for m in MUTANTS if m.variant in ("averaged", "voted")]


def test_the_averaged_and_voted_mutants_are_in_the_catalogue():
    from novikoff.fuzz import VARIANTS, all_mutants
    from novikoff.fuzz._averaged_learners import AVERAGED_MUTANTS, averaged_after
    from novikoff.fuzz._voted_learners import VOTED_MUTANTS, voted
    assert {"averaged", "voted"} <= set(VARIANTS)
    assert VARIANTS["averaged"].correct is averaged_after and VARIANTS["voted"].correct is voted
    names = {m.name: m for m in all_mutants()}
    assert set(AVERAGED_MUTANTS) | set(VOTED_MUTANTS) <= set(names)
    for name, (learner, _) in AVERAGED_MUTANTS.items():
        assert names[name].variant == "averaged" and names[name].learner is learner
    for name, (learner, _) in VOTED_MUTANTS.items():
        assert names[name].variant == "voted" and names[name].learner is learner
    assert len(AVERAGED_AND_VOTED) == len(AVERAGED_MUTANTS) + len(VOTED_MUTANTS) == 7
    assert all(m.equivalent is None for m in AVERAGED_AND_VOTED)


@pytest.mark.parametrize("mutant", AVERAGED_AND_VOTED, ids=lambda m: m.name)
def test_each_averaged_and_voted_mutant_is_killed_by_its_audit(mutant, lemmas, tmp_path):
    # Each trains the textbook perceptron (its weights are right): the kill is the audit's
    # finding about the average or the vote, and the saved case carries the averages / the vote
    # and the learner's convention, and replays to the same finding.
    result = hunt_mutant(mutant, lemmas, profile=PROFILE, directory=str(tmp_path))
    assert result.killed and result.variant == mutant.variant
    assert result.kind == ("average" if mutant.variant == "averaged" else "vote"), result
    case = load_case(result.case)
    assert case.variant == mutant.variant and case.convention == mutant.learner.convention
    expected = {"average"} if mutant.variant == "averaged" else {"vectors", "counts"}
    assert set(case.extra) == expected
    found = replay_case(result.case, lemmas)
    assert found and (found[0].kind, found[0].visit) == (result.kind, result.visit)


def _clean_over_runs(variant, learner, lemmas, examples, family="separable"):
    """How many runs of ``learner`` the variant's judge saw; fails on the first finding."""
    from hypothesis import given, settings

    from novikoff.fuzz import VARIANTS, PROFILES
    spec = VARIANTS[variant]
    seen = []

    @settings(PROFILES["ci"], max_examples=examples)
    @given(spec.runs(learner, family))
    def prop(run):
        seen.append(len(run.order))
        assert not spec.judge(run, lemmas)

    prop()
    return seen


CORRECT_AVERAGED_AND_VOTED = ["averaged_after", "averaged_in_use", "averaged_running_mean",
                              "voted"]


def _correct(name):
    from novikoff.fuzz._averaged_learners import AVERAGED_LEARNERS
    from novikoff.fuzz._voted_learners import voted
    return ("voted", voted) if name == "voted" else ("averaged", AVERAGED_LEARNERS[name][0])


@pytest.mark.parametrize("name", CORRECT_AVERAGED_AND_VOTED)
def test_the_correct_averaged_and_voted_learners_are_never_flagged(name, lemmas):
    # every correct learner in the convention it declares, not only the engine's
    variant, learner = _correct(name)
    seen = _clean_over_runs(variant, learner, lemmas, 60)
    assert len(seen) == 60 and sum(seen) > 60


@pytest.mark.slow
@pytest.mark.parametrize("family", ["separable", "fine", "unit"])
@pytest.mark.parametrize("name", CORRECT_AVERAGED_AND_VOTED)
def test_the_correct_averaged_and_voted_learners_over_many_runs(name, family, lemmas):
    variant, learner = _correct(name)
    assert len(_clean_over_runs(variant, learner, lemmas, 500, family)) == 500


def _two_updates():
    from novikoff.strategies import certify
    X = np.array([[1.0, 0.0], [0.0, 1.0]])
    y = np.array([1.0, 1.0])
    return certify(X, y, np.array([0.6, 0.8])), np.array([0, 1], dtype=np.int64)


def test_an_averaged_run_is_judged_in_the_convention_its_learner_declares(lemmas):
    # The in-use learner's averages are right in its convention and wrong in the other: the
    # convention travels with the run, and a learner claiming 'after' while computing the
    # in-use mean is a bug.
    from novikoff.fuzz import VARIANTS, Run
    from novikoff.fuzz._averaged_learners import averaged_in_use, averaged_trace
    ds, order = _two_updates()
    W, A = averaged_trace(averaged_in_use, ds.X, ds.y, order)
    np.testing.assert_array_equal(A, [[0.0, 0.0], [0.5, 0.0]])  # 0, then (0 + w[0])/2
    judge = VARIANTS["averaged"].judge
    assert not judge(Run(ds, order, W, extra={"average": A}, convention="in-use"), lemmas)
    found = judge(Run(ds, order, W, extra={"average": A}, convention="after"), lemmas)
    assert found and (found[0].kind, found[0].visit) == ("average", 0)


def test_an_averaged_learner_must_declare_its_convention():
    from novikoff.fuzz import VARIANTS
    from novikoff.fuzz._averaged_learners import averaged_after

    def undeclared(X, y, *, gamma=None):
        return averaged_after(X, y, gamma=gamma)

    with pytest.raises(ValueError, match="learner='undeclared' declares no averaging convention"):
        VARIANTS["averaged"].runs(undeclared, "separable")


def test_a_vote_that_counts_wrong_is_caught_at_its_vector(lemmas):
    from novikoff.fuzz import VARIANTS, Run
    from novikoff.fuzz._voted_learners import voted, voted_trace
    ds, order = _two_updates()
    tr = voted_trace(voted, ds.X, ds.y, order)
    np.testing.assert_array_equal(tr["counts"], [1, 1, 0])  # w[0], w[1] in use once each
    judge = VARIANTS["voted"].judge
    vote = {"vectors": tr["vectors"], "counts": tr["counts"]}
    assert not judge(Run(ds, order, tr["w"], extra=vote, convention="in-use"), lemmas)
    # each update's visit counted for the vector it makes: not the in-use counts ...
    bad = dict(vote, counts=np.array([0, 1, 1]))
    found = judge(Run(ds, order, tr["w"], extra=bad, convention="in-use"), lemmas)
    assert found and found[0].kind == "vote" and "counts[0] = 0" in found[0].message
    # ... but exactly Freund and Schapire's convention: right when declared
    assert not judge(Run(ds, order, tr["w"], extra=bad, convention="freund-schapire"), lemmas)


@pytest.mark.parametrize("name, variant", [("average_undivided", "averaged"),
                                           ("vote_count_not_reset", "voted")])
def test_an_averaged_or_voted_case_is_an_audit_input_with_the_same_finding(name, variant,
                                                                            lemmas, tmp_path,
                                                                            capsys):
    # the saved npz is the data and the trace file of `novikoff audit --variant averaged/voted`
    from novikoff.cli import main
    from novikoff.fuzz import mutant_named
    result = hunt_mutant(mutant_named(name), lemmas, profile=PROFILE, directory=str(tmp_path))
    case = load_case(result.case)
    np.save(tmp_path / "w_star.npy", case.w_star)
    option = (["--average-convention", case.convention.replace("_", "-")]
              if variant == "averaged" else ["--vote-counts", case.convention])
    code = main(["audit", "--variant", variant, "--data", result.case, "--trace", result.case,
                 "--w-star", str(tmp_path / "w_star.npy"), "--gamma", repr(float(case.gamma)),
                 "--json", *option])
    out = json.loads(capsys.readouterr().out)
    assert code == 1
    assert result.kind in {v["kind"] for v in out["violations"]}


def test_averaged_and_voted_cases_round_trip_and_old_cases_still_load(lemmas, tmp_path):
    from novikoff.fuzz import Case, save_case
    from novikoff.fuzz._variants import case_run
    ds, order = _two_updates()
    A = np.array([[1.0, 0.0], [1.0, 0.5]])
    W = np.array([[1.0, 0.0], [1.0, 1.0]])
    case = Case("c", "averaged", ds.X, ds.y, ds.w_star, ds.gamma_exact, order, W,
                extra={"average": A}, convention="after")
    back = load_case(save_case(tmp_path / "c.npz", case))
    assert back.convention == "after" and set(back.extra) == {"average"}
    np.testing.assert_array_equal(back.extra["average"], A)
    run = case_run(back)
    assert run.convention == "after" and run.ds.gamma_exact == ds.gamma_exact
    assert not replay_case(tmp_path / "c.npz", lemmas)  # the correct 'after' mean
    # a case written before extra and convention existed
    with np.load(tmp_path / "c.npz") as z:
        old = {k: z[k] for k in z.files if k not in ("extra_names", "convention", "average")}
    np.savez(tmp_path / "old.npz", **old)
    old_case = load_case(tmp_path / "old.npz")
    assert old_case.extra is None and old_case.convention == ""
    # an extra array may not overwrite a field of the case
    with pytest.raises(ValueError, match="'order' is a field of every case"):
        save_case(tmp_path / "bad.npz", Case("c", "voted", ds.X, ds.y, ds.w_star,
                                             ds.gamma_exact, order, W, extra={"order": A}))
