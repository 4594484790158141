"""Figures of a run: the trajectories are the lemmas' quantities, and the files are written."""

from __future__ import annotations

import builtins
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from novikoff.errors import InvalidArgument, NovikoffError
from novikoff.report.run_plots import plot_run, trajectories
from novikoff.runtime import load_dataset, run

from exact_floats import fr, gamma_n  # noqa: E402  (tests/ is on sys.path)

pytest.importorskip("matplotlib")


@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 12), d=st.integers(1, 5), K=st.integers(0, 30), seed=st.integers(0, 99),
       eta=st.sampled_from([1.0, 0.5, 3.0]))
def test_trajectories_are_the_weights_of_the_updates(n, d, K, seed, eta):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    y = rng.choice([-1.0, 1.0], n)
    ws = rng.standard_normal(d)
    updates = rng.integers(0, n, K)
    t = trajectories(X, y, updates, ws, eta)
    w = np.zeros(d)
    assert t["progress"][0] == 0 and t["norm_sq"][0] == 0
    for k, i in enumerate(updates, start=1):
        w = w + eta * y[i] * X[i]
        assert t["progress"][k] == pytest.approx(ws @ w, rel=1e-9, abs=1e-9)
        assert t["norm_sq"][k] == pytest.approx(w @ w, rel=1e-9, abs=1e-9)
    assert list(t["k"]) == list(range(K + 1))


def test_the_trajectories_of_a_run_respect_its_lemmas():
    """The mathematical run (exact sums of the updates' y*x) respects progress and norm growth
    exactly, and the plotted floats are within the rounding bound of its values (Higham: the
    dot products and running sums of length n, in any order, within gamma_n of the sum of
    the absolute values).  No tolerance of our own: where the exact progress is k*gamma (an
    update on the example of smallest margin) a float may fall an ulp below the line."""
    X, y, _ = load_dataset("iris")
    res = run(X, y)
    t = trajectories(X, y, res.updates, res.w_star)
    d = X.shape[1]
    ws = fr(res.w_star)
    gamma, R2 = Fraction(res.gamma), Fraction(res.R) ** 2
    w = [Fraction(0)] * d     # w[k], exactly
    a = [Fraction(0)] * d     # sum of |y*x| over the updates: each coordinate's rounding
    S = Fraction(0)           # sum of sum_i |w*_i x_i| over the updates: the progress's
    for k in range(len(res.updates) + 1):
        if k:
            x = fr(X[res.updates[k - 1]])
            w = [wi + int(y[res.updates[k - 1]]) * xi for wi, xi in zip(w, x)]
            a = [ai + abs(xi) for ai, xi in zip(a, x)]
            S += sum(abs(u * v) for u, v in zip(ws, x))
        progress = sum(u * v for u, v in zip(ws, w))
        norm_sq = sum(v * v for v in w)
        assert progress >= k * gamma and norm_sq <= k * R2, k  # the lemmas, exactly
        assert abs(Fraction(t["progress"][k]) - progress) <= gamma_n(d + k) * S, k
        delta = [gamma_n(k) * ai for ai in a]  # |fl(w[k])_i - w[k]_i|
        A = sum((abs(v) + e) ** 2 for v, e in zip(w, delta))  # >= ||fl(w[k])||^2
        assert abs(Fraction(t["norm_sq"][k]) - norm_sq) <= gamma_n(d) * A + (A - norm_sq), k


@pytest.mark.parametrize("suffix, magic", [(".png", b"\x89PNG"), (".svg", b"<?xml"),
                                           (".pdf", b"%PDF")])
def test_plot_writes_each_format(tmp_path, suffix, magic):
    X, y, _ = load_dataset("iris")
    res = run(X, y)
    out = plot_run(X, y, res, tmp_path / f"run{suffix}")
    assert out.read_bytes().startswith(magic) and out.stat().st_size > 5000


def test_plot_refuses_an_unknown_format_and_an_unwritable_path(tmp_path):
    X, y, _ = load_dataset("iris")
    res = run(X, y)
    with pytest.raises(InvalidArgument, match=r"plot='.*run.gif'.*\.png, \.svg, \.pdf"):
        plot_run(X, y, res, tmp_path / "run.gif")
    with pytest.raises(InvalidArgument, match="plot="):
        plot_run(X, y, res, tmp_path / "no" / "such" / "dir" / "run.png")


def test_plot_needs_a_run_with_checks(tmp_path):
    X, y, _ = load_dataset("iris")
    res = run(X, y, checks=False)
    with pytest.raises(InvalidArgument, match="update log"):
        plot_run(X, y, res, tmp_path / "run.png")


def test_without_matplotlib_the_message_says_how_to_install_it(tmp_path, monkeypatch):
    X, y, _ = load_dataset("iris")
    res = run(X, y)
    real_import = builtins.__import__

    def no_matplotlib(name, *args, **kwargs):
        if name.startswith("matplotlib"):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_matplotlib)
    with pytest.raises(NovikoffError, match=r"pip install 'novikoff\[plot\]'"):
        plot_run(X, y, res, tmp_path / "run.png")


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 99), eta=st.sampled_from([0.25, 1.0, 4.0]))
def test_trajectories_start_at_w0(seed, eta):
    rng = np.random.default_rng(seed)
    X, y = rng.standard_normal((6, 3)), rng.choice([-1.0, 1.0], 6)
    ws, w0 = rng.standard_normal(3), rng.standard_normal(3)
    updates = rng.integers(0, 6, 9)
    t = trajectories(X, y, updates, ws, eta, w0)
    w = w0 + eta * (y[updates, None] * X[updates]).sum(axis=0)
    assert t["progress"][0] == pytest.approx(ws @ w0) and t["norm_sq"][0] == pytest.approx(w0 @ w0)
    assert t["progress"][-1] == pytest.approx(ws @ w) and t["norm_sq"][-1] == pytest.approx(w @ w)


def test_no_plot_for_the_kernel_perceptron(tmp_path):
    X, y, _ = load_dataset("iris")
    res = run(X, y, variant="kernel", kernel="rbf:0.5")
    with pytest.raises(InvalidArgument, match="feature space"):
        plot_run(X, y, res, tmp_path / "run.png")
