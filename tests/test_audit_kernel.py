"""`novikoff audit --variant kernel`: kernel perceptron traces (dual counts) judged by the rule
and kernel.proof."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from novikoff.errors import InvalidArgument
from novikoff.runtime import audit_kernel, audit_kernel_files, kernel_trace
from novikoff.runtime._dual_run import run_kernel
from helpers import cli  # noqa: E402  (tests/ is on sys.path)

KERNEL_LEMMAS = {"kernel_progress", "kernel_norm_growth", "kernel_mistake_bound"}



def xor(n=24, seed=0):
    """Points near the corners (+-1, +-1), labelled by the sign of x1*x2: no linear separator."""
    rng = np.random.default_rng(seed)
    s = rng.choice([-1.0, 1.0], size=(n, 2))
    X = s * (1.0 + rng.integers(0, 9, size=(n, 2)) / 8.0)
    X, first = np.unique(X, axis=0, return_index=True)
    return X, (s[:, 0] * s[:, 1])[first]


def kernel_value(spec):
    name, *p = spec.split(":")
    if name == "linear":
        return lambda a, b: float(a @ b)
    if name == "poly":
        c = float(p[1]) if len(p) > 1 else 1.0
        return lambda a, b: (float(a @ b) + c) ** int(p[0])
    return lambda a, b: math.exp(-float(p[0]) * float((a - b) @ (a - b)))


def plain_kernel(X, y, order, spec, *, fires=None, target=None, label=True):
    """An independent kernel perceptron: its own kernel, f summed example by example."""
    k = kernel_value(spec)
    n = X.shape[0]
    alpha = np.zeros(n)
    rows, prev = [], None
    for i in order:
        f = sum(alpha[j] * (y[j] if label else 1.0) * k(X[j], X[i]) for j in range(n)
                if alpha[j])
        if (fires or (lambda s: s <= 0))(y[i] * f):
            alpha[target(i, prev) if target else i] += 1
        prev = i
        rows.append(alpha.copy())
    return np.array(rows)


def cyclic(n, epochs):
    return np.tile(np.arange(n), epochs)


# ----------------------------------------------------------------------------- clean traces

@pytest.mark.parametrize("spec", ["poly:2", "poly:3:0.5", "rbf:1.5"])
def test_a_trace_of_the_engine_passes(lemmas, spec):
    X, y = xor()
    res = run_kernel(X, y, kernel=spec, lemmas=lemmas)
    tr = kernel_trace(res)
    assert tr["alpha"].shape == (res.visits, X.shape[0])
    np.testing.assert_array_equal(tr["alpha"][-1] * y, res.w)
    rep = audit_kernel(X, y, tr["order"], tr["alpha"], kernel=spec, lemmas=lemmas)
    assert rep.ok and rep.violations == [] and rep.undetermined == 0, rep.violations
    assert rep.updates == res.mistakes and rep.checks > 0
    applied = {m["lemma"] for m in rep.monitor["monitored"] if m["applies"] and m["checks"]}
    assert KERNEL_LEMMAS <= applied


def test_a_trace_of_an_independent_implementation_passes(lemmas):
    X, y = xor(seed=1)
    order = cyclic(X.shape[0], 5)
    A = plain_kernel(X, y, order, "poly:2")
    rep = audit_kernel(X, y, order, A, kernel="poly:2", lemmas=lemmas)
    assert rep.ok and rep.updates > 0


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 10_000), spec=st.sampled_from(["poly:2", "poly:2:0.3", "rbf:0.7"]),
       epochs=st.integers(1, 4))
def test_no_false_violation_on_random_runs(lemmas, seed, spec, epochs):
    rng = np.random.default_rng(seed)
    X, y = xor(n=int(rng.integers(4, 20)), seed=seed)
    X = X * rng.uniform(0.3, 1.7)  # non-dyadic: every Gram entry rounds
    order = np.concatenate([rng.permutation(X.shape[0]) for _ in range(epochs)])
    rep = audit_kernel(X, y, order, plain_kernel(X, y, order, spec), kernel=spec,
                       lemmas=lemmas)
    assert rep.ok, rep.violations[:2]


# ----------------------------------------------------------------------------- rule findings

@pytest.fixture(scope="module")
def run4():
    X, y = xor(seed=2)
    return X, y, cyclic(X.shape[0], 4)


def rules(rep):
    return [v for v in rep.violations if v["kind"] == "rule"]


def test_an_update_on_a_correct_prediction_is_spurious(lemmas, run4):
    X, y, order = run4
    A = plain_kernel(X, y, order, "poly:2", fires=lambda s: True)
    rep = audit_kernel(X, y, order, A, kernel="poly:2", lemmas=lemmas)
    r = rules(rep)
    assert r and "alpha changed but the rule does not update (y*f(x) > 0" in r[0]["message"]
    assert {"kernel_norm_growth", "norm_growth"} & {v["lemma"] for v in rep.violations}


def test_a_strict_test_misses_the_first_update(lemmas, run4):
    X, y, order = run4
    A = plain_kernel(X, y, order, "poly:2", fires=lambda s: s < 0)
    assert not A.any()
    rep = audit_kernel(X, y, order, A, kernel="poly:2", lemmas=lemmas)
    first = rules(rep)[0]
    assert first["visit"] == 0  # f = 0 exactly at alpha = 0: the rule updates, certainly
    assert "the rule updates (y*f(x) <= 0: y*f(x) = 0.0" in first["message"]


def test_an_update_of_the_previous_example_is_off_by_one(lemmas, run4):
    X, y, order = run4
    A = plain_kernel(X, y, order, "poly:2", target=lambda i, p: i if p is None else p)
    rep = audit_kernel(X, y, order, A, kernel="poly:2", lemmas=lemmas)
    assert any("the previous visit's example: off by one?" in v["message"] for v in rules(rep))


def test_a_step_of_two_or_a_decrease_is_a_rule_finding(lemmas, run4):
    X, y, order = run4
    A = plain_kernel(X, y, order, "poly:2")
    t = int(np.flatnonzero((A[1:] != A[:-1]).any(axis=1))[0]) + 1  # a visit that updates
    i = int(order[t])
    doubled = A.copy()
    doubled[t:, i] += 1
    rep = audit_kernel(X, y, order, doubled, kernel="poly:2", lemmas=lemmas)
    assert f"the trace changes alpha[{i}] +2" in rules(rep)[0]["message"]
    dropped = A.copy()
    dropped[t + 1:, i] -= 1  # alpha goes back down at the next visit
    rep = audit_kernel(X, y, order, dropped, kernel="poly:2", lemmas=lemmas)
    assert any(f"alpha[{i}] -1" in v["message"] for v in rules(rep))


def test_the_wrong_kernel_parameter_is_caught(lemmas, run4):
    X, y, order = run4
    A = plain_kernel(X, y, order, "poly:3")  # declared poly:2
    assert not audit_kernel(X, y, order, A, kernel="poly:3", lemmas=lemmas).violations
    assert audit_kernel(X, y, order, A, kernel="poly:2", lemmas=lemmas).rule_violations


# ----------------------------------------------------------------------------- ties

# After updates on examples 1 and 2 (order 1, 2, 0), w = phi(x1) - phi(x2) = (1, 3, 0) under the
# linear kernel and f(x0) = -fl(0.3) + 3*fl(0.1) = 2.8e-17 exactly: the rule does not update, but
# within the rounding bound of a float evaluation.
TIE_X = np.array([[-0.3, 0.1, 1.0], [1.0, 4.0, -1.0], [0.0, 1.0, -1.0]])
TIE_Y = np.array([1.0, 1.0, -1.0])
TIE_ORDER = np.array([1, 2, 0])


def test_a_tie_within_rounding_is_undetermined(lemmas):
    clean = np.array([[0, 1, 0], [0, 1, 1], [0, 1, 1]], float)
    rep = audit_kernel(TIE_X, TIE_Y, TIE_ORDER, clean, kernel="linear", lemmas=lemmas)
    assert rep.ok and rep.undetermined == 0
    updated = np.array([[0, 1, 0], [0, 1, 1], [1, 1, 1]], float)
    rep = audit_kernel(TIE_X, TIE_Y, TIE_ORDER, updated, kernel="linear", lemmas=lemmas)
    assert rep.ok and rep.undetermined == 1 and rep.rule_violations == 0
    v = rep.undetermined_visits[0]
    assert v["visit"] == 2 and "y*f(x) = 2.77" in v["message"]
    assert "a correct float implementation may decide as the trace did" in v["message"]


# ----------------------------------------------------------------------------- bad input

@pytest.mark.parametrize("alpha, match", [
    (np.zeros((3, 2)), r"alpha: shape \(3, 2\) does not match order: shape \(3,\) and X: 3 "
                       r"examples \(expected \(3, 3\)"),
    (np.array([[0, 1, 0], [0, 1, np.nan], [0, 1, 1]]), r"alpha\[1, 2\]=nan is not finite"),
    (np.array([[0, 1, 0], [0, 1.5, 0], [0, 1, 1]]),
     r"alpha\[1, 1\]=1.5 is not an integer \(alpha_i counts the updates"),
    (np.array([[0, 1, 0], [0, 1, -1], [0, 1, -1]]),
     r"alpha\[1, 2\]=-1.0 is negative, and alpha is negative exactly where y = -1: these look "
     r"like signed coefficients alpha_i\*y_i .*pass alpha\*y"),
    (np.array([[-1, 0, 0], [-1, 0, 0], [-1, 0, 0]]),
     r"alpha\[0, 0\]=-1.0 is negative \(alpha_i counts"),
    (np.array([["a"] * 3] * 3), r"alpha: dtype <U1 is not numeric"),
])
def test_bad_alpha_is_refused_with_a_clear_message(alpha, match):
    with pytest.raises(InvalidArgument, match=match):
        audit_kernel(TIE_X, TIE_Y, TIE_ORDER, alpha, kernel="linear")


def test_bad_arguments_are_refused():
    A = np.zeros((3, 3))
    with pytest.raises(InvalidArgument, match="kernel='sigmoid': unknown kernel"):
        audit_kernel(TIE_X, TIE_Y, TIE_ORDER, A, kernel="sigmoid")
    with pytest.raises(InvalidArgument, match=r"kernel='rbf:-1': the width G = -1.0"):
        audit_kernel(TIE_X, TIE_Y, TIE_ORDER, A, kernel="rbf:-1")
    with pytest.raises(InvalidArgument, match=r"order\[0\]=7"):
        audit_kernel(TIE_X, TIE_Y, np.array([7, 0, 1]), A, kernel="linear")
    with pytest.raises(InvalidArgument, match=r"w_star: shape \(2,\) does not match"):
        audit_kernel(TIE_X, TIE_Y, TIE_ORDER, A, kernel="linear", w_star=np.ones(2))
    bad = TIE_X.copy()
    bad[0, 0] = np.inf
    with pytest.raises(InvalidArgument, match=r"X\[0, 0\]=inf is not finite"):
        audit_kernel(bad, TIE_Y, TIE_ORDER, A, kernel="linear")
    X, y = xor()
    with pytest.raises(InvalidArgument, match="run_kernel with checks=True"):
        kernel_trace(run_kernel(X, y, kernel="poly:2", checks=False))


@pytest.mark.parametrize("row,spec", [([1e-300, 0.0], "linear"), ([0.0, 0.0], "linear"),
                                      ([1e-100, 0.0], "poly:2:0")])
def test_a_row_whose_kernel_diagonal_underflows_is_refused(row, spec):
    X = np.array([[1.0, 1.0], row, [-1.0, 0.5]])
    with pytest.raises(InvalidArgument, match=r"X\[1\]: K\(X\[1\], X\[1\]\) = .*under kernel="
                                              r".*below the smallest normal float"):
        audit_kernel(X, TIE_Y, TIE_ORDER, np.zeros((3, 3)), kernel=spec)


@pytest.mark.parametrize("spec,scale", [("linear", 2.0 ** -480), ("linear", 2.0 ** 500),
                                        ("poly:2:0", 2.0 ** -200), ("rbf:1e18", 1.0)])
def test_traces_at_extreme_scales_pass(lemmas, spec, scale):
    """Where float32 bounds refused (tiny, huge) or expm1 overflowed (wide rbf): an engine's
    trace and an independent implementation's both pass."""
    X, y = xor()
    if spec == "linear":  # xor is not linearly separable: label by the first coordinate
        y = np.sign(X[:, 0])
    X = X * scale
    res = run_kernel(X, y, kernel=spec, lemmas=lemmas, on_violation="collect")
    assert res.converged and res.monitor["violations"] == []
    t = kernel_trace(res)
    report = audit_kernel(X, y, t["order"], t["alpha"], kernel=spec, lemmas=lemmas)
    assert report.ok, report.violations[:3]
    assert report.updates == res.mistakes and report.undetermined == 0


def test_files_and_a_given_separator(tmp_path, lemmas):
    X, y = xor()
    res = run_kernel(X, y, kernel="poly:2", lemmas=lemmas)
    np.savez(tmp_path / "d.npz", X=X, y=y)
    np.savez(tmp_path / "t.npz", **kernel_trace(res))
    np.save(tmp_path / "beta.npy", res.w_star)
    rep = audit_kernel_files(tmp_path / "d.npz", tmp_path / "t.npz",
                             w_star=tmp_path / "beta.npy", kernel="poly:2", lemmas=lemmas)
    assert rep.ok and rep.gamma == res.gamma


# ----------------------------------------------------------------------------- CLI



def test_cli(tmp_path, capsys):
    X, y = xor()
    np.savez(tmp_path / "d.npz", X=X, y=y)
    tr = kernel_trace(run_kernel(X, y, kernel="poly:2"))
    np.savez(tmp_path / "ok.npz", **tr)
    order = tr["order"]
    np.savez(tmp_path / "bug.npz", order=order,
             alpha=plain_kernel(X, y, order, "poly:2", fires=lambda s: True))
    np.savez(tmp_path / "signed.npz", order=order, alpha=tr["alpha"] * y)
    base = ["audit", "--variant", "kernel", "--data", str(tmp_path / "d.npz")]
    code, out, err = cli(base + ["--kernel", "poly:2", "--trace", str(tmp_path / "ok.npz")],
                         capsys)
    assert code == 0, err
    assert "kernel poly:2 (alpha: unsigned counts)" in out and "0 lemma(s) violated" in out
    code, out, _ = cli(base + ["--kernel", "poly:2", "--trace", str(tmp_path / "bug.npz"),
                               "--json"], capsys)
    doc = json.loads(out)
    assert code == 1 and doc["rule_violations"] > 0 and doc["rule"]["kernel"] == "poly:2"
    code, out, err = cli(base + ["--kernel", "poly:2", "--trace", str(tmp_path / "signed.npz")],
                         capsys)
    assert code == 2 and out == "" and "signed.npz" in err and "pass alpha*y" in err
    assert len(err.strip().splitlines()) == 1
    code, _, err = cli(base + ["--kernel", "tanh", "--trace", str(tmp_path / "ok.npz")], capsys)
    assert code == 2 and "kernel='tanh': unknown kernel" in err
    code, _, err = cli(base + ["--trace", str(tmp_path / "ok.npz")], capsys)
    assert code == 2 and "--kernel: required with --variant kernel" in err
    code, _, err = cli(base + ["--kernel", "poly:2", "--eta", "2", "--trace",
                               str(tmp_path / "ok.npz")], capsys)
    assert code == 2 and "--eta 2: not available for --variant kernel" in err
    code, _, err = cli(["audit", "--data", str(tmp_path / "d.npz"), "--kernel", "poly:2",
                        "--trace", str(tmp_path / "ok.npz")], capsys)
    assert code == 2 and "--kernel: only for --variant kernel" in err


# ----------------------------------------------------------------------------- strategies

@settings(max_examples=30, deadline=None)
@given(st.data())
def test_kernel_datasets_are_certified_and_fitted_to_their_kernel(data):
    from novikoff.runtime._dual_run import _certify, gram, parse_kernel
    from novikoff.strategies import kernel_datasets
    ds = data.draw(kernel_datasets(max_n=16, max_dim=3))
    assert ds.gamma > 0 and ds.R > 0 and ds.beta.shape == (ds.n,)
    K, E, _ = gram(ds.X, parse_kernel(ds.kernel))
    assert _certify(K, E, ds.y, ds.beta, ds.gamma, parse_kernel(ds.kernel)).gamma == ds.gamma
    if ds.kind == "xor":  # the labels are the sign of x1*x2
        np.testing.assert_array_equal(ds.y, np.sign(ds.X[:, 0] * ds.X[:, 1]))
        assert ds.kernel != "linear"


def test_xor_data_is_not_linearly_separable():
    X = np.array([[1.0, 1.0], [-1.0, -1.0], [1.0, -1.0], [-1.0, 1.0]])
    y = np.array([1.0, 1.0, -1.0, -1.0])
    from novikoff.strategies import kernel_dataset
    assert kernel_dataset(X, y, "poly:2").gamma > 0
    with pytest.raises(InvalidArgument, match="no separator found"):
        kernel_dataset(X, y, "linear")
