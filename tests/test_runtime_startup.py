"""Start-up and overhead: a small run imports only what it uses (scikit-learn, scipy.optimize and numba cost
about 2 s of CPU between them before anything runs; benchmarks/bench_startup.py times it)."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from novikoff.runtime import load_dataset

from helpers import cli  # noqa: E402  (tests/ is on sys.path)

_PROBE = """
import sys
from novikoff.cli import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
print(sorted(m for m in ("sklearn", "scipy.optimize", "numba") if m in sys.modules))
"""


def _heavy_imports(*argv) -> str:
    done = subprocess.run([sys.executable, "-c", _PROBE, *argv], capture_output=True,
                          text=True, timeout=600)
    return done.stdout.strip().splitlines()[-1]


def test_a_small_run_of_a_bundled_set_imports_neither_sklearn_nor_scipy_nor_numba():
    assert _heavy_imports("run", "iris") == "[]"


@pytest.mark.parametrize("name, positive", [("iris", 0), ("breast_cancer", 1)])
def test_the_bundled_sets_are_what_scikit_learn_loads(name, positive):
    datasets = pytest.importorskip("sklearn.datasets")
    X, y, _ = load_dataset(name)
    expected = getattr(datasets, f"load_{name}")()
    assert X.dtype == np.float64 and X.flags.c_contiguous
    assert np.array_equal(X, expected.data.astype(float))
    assert np.array_equal(y, np.where(expected.target == positive, 1.0, -1.0))


def test_the_automatic_loop_gives_a_run_the_numpy_or_the_compiled_loop_would_give():
    """A run starts on the numpy loop and moves to the compiled one past a size: the weights
    are those of one of the two loops run alone (they differ only where rounding decides)."""
    from novikoff.runtime import HAVE_NUMBA, _loops, run
    if not HAVE_NUMBA:
        pytest.skip("numba is not installed")
    rng = np.random.default_rng(3)
    ws = rng.normal(size=6)
    X = rng.normal(size=(3000, 6))
    X = X[np.abs(X @ ws) > 0.05]
    y = np.sign(X @ ws)
    small = _loops._NUMPY_UPDATES
    try:
        _loops._NUMPY_UPDATES = 5  # move early: most updates on the compiled loop
        auto = run(X, y, w_star=ws, lemmas=[])
    finally:
        _loops._NUMPY_UPDATES = small
    alone = [run(X, y, w_star=ws, lemmas=[], backend=b) for b in ("numpy", "numba")]
    assert auto.mistakes > 5
    assert any(np.array_equal(auto.w, r.w) and auto.mistakes == r.mistakes for r in alone)


_HISTORY_PROBE = """
import numpy as np
from novikoff.runtime import run

# A tie that the two loops round apart: <w, x_1> = 2^53 + 1 - 2^53 after w = (1, 1, 1, 1) is 0
# summed left to right (numpy's prediction: an update) and 1 summed in another order.
X = np.array([[1.0, 1.0, 1.0, 1.0], [2.0 ** 53, 1.0, -2.0 ** 53, 0.0]])
y, order = np.array([1.0, 1.0]), np.array([0, 1])

def once(backend="auto"):
    r = run(X, y, order=order, cyclic=False, lemmas=[], checks=False, backend=backend)
    return r.mistakes, r.w.tobytes().hex()

fresh = once()
compiled = once("numba")  # numba is in use in this process from here on
print(fresh == once(), fresh == once("numpy"), fresh != compiled)
"""


def test_a_run_gives_the_same_bits_whether_or_not_numba_ran_before_in_the_process():
    """The automatic loop depends on the run (its size, its options), never on the process's
    history: a small run takes the numpy loop before and after numba has been used, even where
    the compiled loop would round a near-tie the other way."""
    from novikoff.runtime import HAVE_NUMBA
    if not HAVE_NUMBA:
        pytest.skip("numba is not installed")
    done = subprocess.run([sys.executable, "-c", _HISTORY_PROBE], capture_output=True,
                          text=True, timeout=600)
    assert done.stdout.split() == ["True", "True", "True"], done.stderr


# ------------------------------------------------------------------ checks off, from the CLI

@pytest.mark.parametrize("variant", ["classic", "margin", "kernel", "batch", "averaged", "voted"])
def test_run_with_no_checks_runs_the_same_engine_unmonitored(variant, capsys):
    extra = ["--gamma", "0.1"] if variant == "margin" else []
    code, out, _ = cli(["run", "iris", "--variant", variant, "--no-checks", "--json", *extra],
                       capsys)
    off = json.loads(out)
    code_on, out_on, _ = cli(["run", "iris", "--variant", variant, "--json", *extra], capsys)
    on = json.loads(out_on)
    assert (code, code_on) == (0, 0)
    assert off["checks"] == 0 and off["monitor"] is None and on["checks"] > 0
    # nothing certified either (gamma, unless given, and the bound come from the checks)
    assert off["gamma"] == (0.1 if extra else None)
    assert off["bound"] is None and on["bound"] is not None
    for key in ("mistakes", "epochs", "visits", "converged"):
        assert off[key] == on[key], key


@pytest.mark.parametrize("flag, value", [("--report", "out"), ("--plot", "run.png")])
def test_no_checks_refuses_what_shows_the_monitored_lemmas(flag, value, tmp_path, capsys):
    code, _, err = cli(["run", "iris", "--no-checks", flag, str(tmp_path / value)], capsys)
    assert code == 2 and f"{flag}: shows the monitored lemmas" in err
    assert not (tmp_path / value).exists()


# ------------------------------------------------------------------ exact replay

def test_the_exact_judge_decides_as_without_its_float_filter(monkeypatch):
    """On many points the exact judge lets the float judge (on the exact values rounded, their
    rounding in the error bounds) settle what is certain; every count is the same as deciding
    every point in rationals, violations included."""
    from novikoff.kernel import Inner, Relation
    from novikoff.runtime import Lemma, load_lemmas, run
    from novikoff.runtime import _program
    import sympy as sp

    rng = np.random.default_rng(5)
    ws = rng.normal(size=4)
    X = rng.normal(size=(400, 4))
    X = X[np.abs(X @ ws) > 0.02]
    y = np.sign(X @ ws)
    k, R = sp.Symbol("k"), sp.Symbol("R")
    w = sp.Function("w")
    wrong = Lemma("too_tight", Relation("<=", Inner(w(k), w(k)), k * R ** 2 / 1000))
    lemmas = list(load_lemmas()) + [wrong]

    def summary():
        res = run(X, y, w_star=ws, exact=True, lemmas=lemmas, include_unverified=True,
                  on_violation="collect")
        return res.mistakes, res.checks, [
            (m["lemma"], m["checks"], m["undetermined"], m["violations"], m["applies"])
            for m in res.monitor["monitored"]], [
            (v["lemma"], v["k"]) for v in res.monitor["violations"]]

    filtered = summary()
    monkeypatch.setattr(_program, "_FILTER_FROM", 10 ** 9)
    assert summary() == filtered
    assert filtered[0] >= 64 and filtered[3]  # the filter ran, and a violation was found


def test_replay_shows_progress_in_a_log_when_asked(tmp_path, capsys, monkeypatch):
    from novikoff.runtime import cli as runtime_cli

    saved = tmp_path / "run.npz"
    assert cli(["run", "iris", "--save", str(saved)], capsys)[0] == 0
    shown = []
    monkeypatch.setattr(runtime_cli._Progress, "_show", lambda self, text: shown.append(text))
    code, out, _ = cli(["replay", str(saved), "--progress"], capsys)
    assert code == 0 and "agree" in out
    assert any(text.startswith("exact checks 100%") for text in shown)


def test_progress_comes_in_small_chunks_of_visits():
    """With progress shown, the loop returns every few thousand visits at first (then grows its
    chunks while they are quick): no multi-million-visit silence before the first report."""
    from novikoff.runtime import run

    rng = np.random.default_rng(2)
    ws = rng.normal(size=5)
    X = rng.normal(size=(20_000, 5))
    X = X[np.abs(X @ ws) > 1e-3]
    y = np.sign(X @ ws)
    seen = []
    res = run(X, y, w_star=ws, lemmas=[], progress=lambda visits, mistakes, epochs:
              seen.append(visits))
    assert res.visits > 3 * 8192
    assert seen[0] <= 2 * X.shape[0] and len(seen) >= 3


# ------------------------------------------------------------------ BLAS threads

def test_large_data_runs_with_one_blas_thread_and_restores_it(monkeypatch):
    """The runtime's entries limit BLAS to one thread on large data (two spinning threads on
    two loaded cores made the separator 1.5-2.8 x slower), and give the process its threads
    back after; small data and a number of threads the user chose are left alone."""
    threadpoolctl = pytest.importorskip("threadpoolctl")
    from novikoff.runtime import _threads

    def blas_threads(X):
        return sorted({i["num_threads"] for i in threadpoolctl.threadpool_info()
                       if i["user_api"] == "blas"})

    for name in _threads._CHOSEN_BY_USER:
        monkeypatch.delenv(name, raising=False)
    before = blas_threads(None)
    limited = _threads.one_blas_thread(blas_threads)
    assert limited(np.zeros((256, 256))) == [1]
    assert blas_threads(None) == before
    assert limited(np.zeros((10, 10))) == before
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "2")
    assert limited(np.zeros((256, 256))) == before


def test_the_separator_called_alone_runs_with_one_blas_thread(monkeypatch):
    """max_margin_separator is a public entry too: its many small matrix-vector products on two
    spinning BLAS threads were 10-40 x slower on two loaded cores."""
    threadpoolctl = pytest.importorskip("threadpoolctl")
    from novikoff.runtime import _separator, _threads, max_margin_separator

    for name in _threads._CHOSEN_BY_USER:
        monkeypatch.delenv(name, raising=False)
    seen = []

    def solve(X, y, progress=None):
        seen.append(sorted({i["num_threads"] for i in threadpoolctl.threadpool_info()
                            if i["user_api"] == "blas"}))
        return np.ones(X.shape[1]) / np.sqrt(X.shape[1]), {}

    monkeypatch.setattr(_separator, "_solve", solve)
    max_margin_separator(np.ones((256, 256)), np.ones(256))
    assert seen == [[1]]
