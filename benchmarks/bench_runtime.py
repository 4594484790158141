"""Benchmark: the monitored perceptron against itself unmonitored, scikit-learn and streaming X.

Every ratio is measured in one process on the same data: separable unit-row data (n x d) with
margin gamma, cycling to convergence (E epochs).  Columns:

  on/off      monitored run (every lemma of proofs/ checked at every update) / same engine,
              checks off: best time / best time                         (issue target <= 1.1)
  paired      the median of on/off over runs made back to back, each first in turn (less
              sensitive to a machine whose speed drifts during the benchmark)
  on/sklearn  monitored run / sklearn Perceptron(..., max_iter=E, tol=None) (target <= 1.0)
  on/stream   monitored run / E passes streaming X from memory          (target <= 3, d <= 100)

Run:  python benchmarks/bench_runtime.py            # small sizes (about a minute)
      python benchmarks/bench_runtime.py --full     # the issue's sizes: 10k x 20, 100k x 100,
                                                    # 1M x 20, 50k x 1000 at gamma 0.05, 0.01
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

SMALL = [(10_000, 20), (100_000, 20), (20_000, 100)]
FULL = [(10_000, 20), (100_000, 100), (1_000_000, 20), (50_000, 1000)]
GAMMAS = (0.05, 0.01)


def separable_unit_rows(n: int, d: int, gamma: float, seed: int = 0):
    """Unit rows x with |<w*, x>| >= gamma for a unit w* (the closest ones near gamma)."""
    rng = np.random.default_rng(seed)
    ws = rng.standard_normal(d)
    ws /= np.linalg.norm(ws)
    Z = rng.standard_normal((n, d))
    Z -= np.outer(Z @ ws, ws)
    Z /= np.linalg.norm(Z, axis=1)[:, None]
    c = np.minimum(gamma + np.abs(rng.standard_normal(n)) / np.sqrt(d), 0.99)
    c[rng.integers(n)] = gamma  # one example exactly at the margin
    s = rng.choice([-1.0, 1.0], n)
    X = np.sqrt(1 - c ** 2)[:, None] * Z + (s * c)[:, None] * ws
    X /= np.linalg.norm(X, axis=1)[:, None]
    return X, s, ws


def best_of(fn, repeat: int):
    best, out = np.inf, None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t)
    return best, out


HEAD = (f"{'n':>9} {'d':>5} {'gamma':>6} {'E':>4} {'M':>6} {'checks':>8} {'on ms':>8} "
        f"{'off ms':>8} {'on/off':>7} {'paired':>7} {'skl ms':>8} {'on/skl':>7} {'strm ms':>8} "
        f"{'on/strm':>8}")


def measure(n: int, d: int, gamma: float, lemmas, repeat: int, sklearn: bool = True) -> str:
    """One row of the table: the monitored run against its baselines, interleaved."""
    from novikoff.runtime import run
    from novikoff.runtime._loops import stream_passes

    X, y, ws = separable_unit_rows(n, d, gamma)
    # warm up (numba compilation, caches)
    run(X[:200], y[:200], w_star=ws, lemmas=lemmas)
    run(X[:200], y[:200], w_star=ws, checks=False)
    E = run(X, y, w_star=ws, checks=False, validate=False).epochs

    def skl():
        from sklearn.exceptions import ConvergenceWarning
        from sklearn.linear_model import Perceptron
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            Perceptron(fit_intercept=False, shuffle=False, eta0=1.0, tol=None,
                       max_iter=E).fit(X, y)

    stream_passes(X, 1)
    # Interleave the contenders and keep each one's best time: the machine may be shared, and
    # a slow moment then hits every contender alike.
    t_on = t_off = t_skl = t_str = np.inf
    paired = []  # on/off of runs made back to back: slow drifts of the machine cancel
    for rep in range(repeat):
        # on and off back to back, in turn first: neither always follows the cache-cold
        # baselines below.
        for which in (("on", "off") if rep % 2 == 0 else ("off", "on")):
            if which == "on":
                t1, r_on = best_of(lambda: run(X, y, w_star=ws, lemmas=lemmas), 1)
            else:
                t2, r_off = best_of(lambda: run(X, y, w_star=ws, checks=False,
                                                validate=False), 1)
        t_on, t_off = min(t_on, t1), min(t_off, t2)
        paired.append(t1 / t2)
        if sklearn:
            t_skl = min(t_skl, best_of(skl, 1)[0])
        t_str = min(t_str, best_of(lambda: stream_passes(X, E), 1)[0])
    assert r_on.mistakes == r_off.mistakes and r_on.converged and r_on.epochs == E
    return (f"{n:>9} {d:>5} {gamma:>6} {E:>4} {r_on.mistakes:>6} {r_on.checks:>8} "
            f"{t_on * 1e3:>8.2f} {t_off * 1e3:>8.2f} {t_on / t_off:>7.2f} "
            f"{float(np.median(paired)):>7.2f} "
            f"{t_skl * 1e3:>8.2f} {t_on / t_skl:>7.2f} {t_str * 1e3:>8.2f} "
            f"{t_on / t_str:>8.2f}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--full", action="store_true", help="the issue's sizes (several minutes)")
    ap.add_argument("--repeat", type=int, default=5, help="best of R runs (default 5)")
    ap.add_argument("--no-sklearn", action="store_true")
    args = ap.parse_args(argv)

    from novikoff.runtime import HAVE_NUMBA, load_lemmas

    lemmas = load_lemmas()
    print(f"numba: {HAVE_NUMBA}; lemmas loaded: {len(lemmas)}")
    print(HEAD)
    print("-" * len(HEAD))
    for n, d in FULL if args.full else SMALL:
        for gamma in GAMMAS:
            print(measure(n, d, gamma, lemmas, args.repeat, not args.no_sklearn), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
