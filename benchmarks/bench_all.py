"""Every speed target in one table: monitored runs against their baselines, and fuzz throughput.

    python benchmarks/bench_all.py [--repeat 7] [--small]

Rows 1-8: bench_runtime.py's rows at the targets' sizes (on/off: target <= 1.1 for runs of 10 ms
or more; on/skl: <= 1; on/strm: <= 3 at d <= 100).  Then the variants, each monitored run beside
the same run with checks off: a learning rate and a start (1M x 20 planted data), the batch,
voted and averaged perceptrons (variant_rows: `run(..., variant=V)` against the same engine with
`checks=False`), and the kernel perceptron (bench_kernel.py's rows).  Last rows: runs per second of the fuzz property (generate,
run, audit; n <= 50, d <= 8), as `novikoff fuzz --profile ci` measures it (200 runs per worker,
forked workers on every core; target >= 300), and on one core.  Then scale and overhead
(bench_scale.py): the default separator at 20k x 1000 (as `novikoff run` commands and run()
calls), 20k x 1000 without numba (run() calls in a process with NOVIKOFF_NO_NUMBA=1) and 1M x 20
(run() calls) against the run with w* given (target 3), the 100k x 100 run against checks off
(target 1.1), exact replay of a breast-cancer run (target 60 s).  Then start-up
(bench_startup.py): commands as fresh processes with the cache of checked lemmas warm and cold
(target < 1 s), and a run() call that loads the library against one given the lemmas.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from bench_kernel import HEADER as KERNEL_HEAD, kernel_rows, planted  # noqa: E402
from bench_runtime import FULL, GAMMAS, HEAD, SMALL, best_of, measure  # noqa: E402
from bench_scale import scale_rows  # noqa: E402
from bench_startup import startup_rows  # noqa: E402


def rate_start_rows(repeat: int) -> list:
    """A learning rate and a start: the monitored run against checks off, best of `repeat`
    interleaved runs of each."""
    import numpy as np

    from novikoff.runtime import max_margin_separator, run
    X, y = planted(n=1_000_000, d=20, margin=0.02)
    w0 = np.random.default_rng(1).normal(size=X.shape[1])
    # The separator is given to both runs, as in the rows above: the checks, not the solve.
    w_star = max_margin_separator(X, y)
    rows = []
    for label, options in (("eta = 0.5", {"eta": 0.5}), ("w0 random", {"w0": w0}),
                           ("eta = 3, w0", {"eta": 3.0, "w0": w0})):
        on_t = off_t = float("inf")
        for _ in range(repeat):  # interleaved, best of each
            t, res = best_of(lambda: run(X, y, w_star=w_star, **options), 1)
            on_t = min(on_t, t)
            off_t = min(off_t, best_of(lambda: run(X, y, w_star=w_star, checks=False,
                                                    **options), 1)[0])
        rows.append(f"{'1M x 20':>16} {label:>12} {res.mistakes:>6} {res.checks:>7} "
                    f"{on_t * 1e3:>9.2f} {off_t * 1e3:>9.2f} {on_t / off_t:>7.2f}")
    return rows


def _variant_data():
    """The data sets of the variant rows: (label, X, y, max_epochs)."""
    from bench_runtime import separable_unit_rows

    from novikoff.runtime import load_dataset
    X_iris, y_iris = load_dataset("iris")[:2]
    X_bc, y_bc = load_dataset("breast_cancer")[:2]
    X_u, y_u, _ = separable_unit_rows(10_000, 20, 0.01)
    X_p, y_p = planted(n=1_000_000, d=20, margin=0.02)
    return [("iris 150x4", X_iris, y_iris, None),
            # not separable through the origin within 1000 passes: the cap ends the run
            ("breast 569x30", X_bc, y_bc, 1000),
            ("unit 10k x 20", X_u, y_u, None),
            ("planted 1M x 20", X_p, y_p, None)]


def _on_off(X, y, repeat: int, **options):
    """(monitored result, best on seconds, best off seconds), interleaved runs of each."""
    from novikoff.runtime import run
    on_t = off_t = float("inf")
    res = None
    for _ in range(repeat):
        t, res = best_of(lambda: run(X, y, **options), 1)
        on_t = min(on_t, t)
        off_t = min(off_t, best_of(lambda: run(X, y, checks=False, **options), 1)[0])
    return res, on_t, off_t


def variant_rows(repeat: int) -> list:
    """The batch, voted and averaged perceptrons: each monitored run against the same engine
    with checks off (``checks=False``), best of `repeat` interleaved runs, the separator given
    to both (the checks, not the solve).  M: batch steps for the batch perceptron, updates
    otherwise; the batch perceptron's steps are capped at 1000 (--max-epochs' default)."""
    from novikoff.runtime import VARIANTS, max_margin_separator
    rows = []
    variants = ["batch", "voted"]
    # The averaged perceptron is built alongside: its row appears once the engine exists.
    if "averaged" in VARIANTS:
        variants.append("averaged")
    for label, X, y, max_epochs in _variant_data():
        w_star = max_margin_separator(X, y)
        for variant in variants:
            if variant == "batch" and X.shape[0] > 100_000:
                continue  # a batch step is a pass over the data: the smaller sets show it
            cap = 1000 if variant == "batch" else max_epochs
            res, on_t, off_t = _on_off(X, y, repeat, w_star=w_star, variant=variant,
                                       max_epochs=cap)
            rows.append(f"{label:>16} {variant:>12} {res.mistakes:>6} {res.checks:>7} "
                        f"{on_t * 1e3:>9.2f} {off_t * 1e3:>9.2f} {on_t / off_t:>7.2f}")
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--small", action="store_true", help="bench_runtime.py's small sizes")
    args = ap.parse_args(argv)

    from novikoff.fuzz import _audit
    from novikoff.fuzz._driver import measure_throughput
    from novikoff.runtime import HAVE_NUMBA, load_lemmas

    # Fuzz throughput first, as in `novikoff fuzz`: forked workers of a process that holds the
    # benchmark's large arrays would pay for copying its pages.
    fuzz = _audit.bundled_lemmas()
    measure_throughput(fuzz, examples=20, seed_=1)  # warm-up
    cores = os.cpu_count() or 1
    fuzz_rows = []
    for workers in (cores, 1):
        rates = [measure_throughput(fuzz, examples=200, workers=workers) for _ in range(3)]
        fuzz_rows.append(f"fuzz ci throughput, {workers} worker(s): {max(rates):.0f} runs/s "
                         f"(best of 3: {', '.join(f'{r:.0f}' for r in rates)}; target >= 300 "
                         f"on {cores} cores)")
    lemmas = load_lemmas()
    print(f"numba: {HAVE_NUMBA}; lemmas loaded: {len(lemmas)}; cpus: {cores}")
    print(HEAD)
    print("-" * len(HEAD))
    for n, d in SMALL if args.small else FULL:
        for gamma in GAMMAS:
            print(measure(n, d, gamma, lemmas, args.repeat), flush=True)
    print(f"\n{'data':>16} {'variant':>12} {'M':>6} {'checks':>7} {'on ms':>9} {'off ms':>9} "
          f"{'on/off':>7}")
    for row in rate_start_rows(args.repeat):
        print(row, flush=True)
    for row in variant_rows(args.repeat):
        print(row, flush=True)
    print("\n" + KERNEL_HEAD)
    for row in kernel_rows(max(1, args.repeat // 2)):
        print(row, flush=True)
    print("\n".join(fuzz_rows))
    print("\nscale and overhead (bench_scale.py)")
    for row in scale_rows(max(1, args.repeat // 3), small=args.small):
        print(row, flush=True)
    print("\nstart-up (bench_startup.py)")
    for row in startup_rows(max(3, args.repeat // 2)):
        print(row, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
