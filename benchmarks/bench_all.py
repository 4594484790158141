"""Every speed target in one table: monitored runs against their baselines, and fuzz throughput.

    python benchmarks/bench_all.py [--repeat 7] [--small]

Rows 1-8: bench_runtime.py's rows at the issue's sizes (on/off: target <= 1.1 for runs of 10 ms
or more; on/skl: <= 1; on/strm: <= 3 at d <= 100).  Last rows: runs per second of the fuzz
property (generate, run, audit; n <= 50, d <= 8), as `novikoff fuzz --profile ci` measures it
(200 runs per worker, forked workers on every core; target >= 300), and on one core.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from bench_runtime import FULL, GAMMAS, HEAD, SMALL, measure  # noqa: E402


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
    print("\n".join(fuzz_rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
