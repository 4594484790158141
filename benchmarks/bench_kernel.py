"""The kernel perceptron: the monitored run against the same run with checks=False.

For iris and a planted 2,000 x 10 set (separable through the origin with a relative margin of
0.05, so separable in every kernel's feature space) and each kernel, in one process, best of
--repeat runs of each, interleaved:

* on ms: run(..., variant="kernel", kernel=K, w_star=beta) with every lemma checked;
* off ms: the same run with checks=False (no separator, no bookkeeping, no monitor);
* on/off: their ratio.  Both compute the Gram matrix; the separator (beta) is computed once
  beforehand and given to the monitored run, its cost shown apart (sep ms: the max-margin
  solve in feature space, eigh of the Gram matrix then max_margin_separator).

    python benchmarks/bench_kernel.py [--repeat 5]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from bench_runtime import best_of  # the same timing as the runtime's benchmark (this directory)
from novikoff.runtime import load_dataset, run
from novikoff.runtime._dual_run import _default_beta, gram, parse_kernel

KERNELS = ("linear", "poly:2", "poly:3", "rbf:0.5")


def planted(n=2000, d=10, margin=0.05, seed=0):
    rng = np.random.default_rng(seed)
    w = rng.normal(size=d)
    w /= np.linalg.norm(w)
    X = rng.normal(size=(4 * n, d))
    X = X[np.abs(X @ w) >= margin * np.linalg.norm(X, axis=1)][:n]
    return X, np.where(X @ w > 0, 1.0, -1.0)


HEADER = (f"{'data':>16} {'kernel':>8} {'M':>6} {'epochs':>6} {'checks':>7} {'bound':>10} "
          f"{'sep ms':>8} {'gram ms':>8} {'on ms':>8} {'off ms':>8} {'on/off':>7}")


def kernel_rows(repeat: int) -> list:
    """One row per data set and kernel (see the module docstring)."""
    iris = load_dataset("iris")[:2]
    rows = []
    for name, (X, y) in {"iris 150x4": iris, "planted 2000x10": planted()}.items():
        for spec in KERNELS:
            kern = parse_kernel(spec)
            t = time.perf_counter()
            K, _, _ = gram(X, kern)
            t_gram = (time.perf_counter() - t) * 1e3
            t = time.perf_counter()
            beta = _default_beta(K, y, kern)
            t_sep = (time.perf_counter() - t) * 1e3
            run(X, y, variant="kernel", kernel=spec, w_star=beta)  # warm-up (lemmas loaded)
            on_t = off_t = np.inf
            for _ in range(repeat):  # interleaved, best of each
                a, res = best_of(lambda: run(X, y, variant="kernel", kernel=spec, w_star=beta), 1)
                b, off = best_of(lambda: run(X, y, variant="kernel", kernel=spec, checks=False), 1)
                on_t, off_t = min(on_t, a * 1e3), min(off_t, b * 1e3)
            assert off.mistakes == res.mistakes
            rows.append(f"{name:>16} {spec:>8} {res.mistakes:>6} {res.epochs:>6} "
                        f"{res.checks:>7} {res.bound:>10.4g} {t_sep:>8.1f} {t_gram:>8.1f} "
                        f"{on_t:>8.2f} {off_t:>8.2f} {on_t / off_t:>7.2f}")
    return rows


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    print(HEADER)
    for row in kernel_rows(args.repeat):
        print(row, flush=True)


if __name__ == "__main__":
    main()
