"""BLAS threads: the separator on one BLAS thread against two, and the rule the runtime applies.

    python benchmarks/bench_blas_threads.py [--n 20000] [--d 200] [--repeat 3]

The default separator (no w* given) on planted data (bench_separator.planted), timed with
threadpoolctl limiting the process's BLAS libraries to one thread and to two, interleaved (the
machine's load hits both), then `run(X, y, lemmas=[])` (the separator, certified, and the run),
which applies the runtime's rule (runtime/_threads.py: one BLAS thread from 65,536 entries of
X), against the same run under two threads.  Wall and CPU seconds, best of `repeat`; a ratio above 1 means two threads are slower.
The issue's size is --n 20000 --d 1000 (minutes).
"""

from __future__ import annotations

import argparse
import os
import time

from bench_separator import planted  # this directory


def _timed(fn) -> tuple:
    wall, cpu = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - wall, time.process_time() - cpu


def blas_rows(n: int, d: int, repeat: int) -> list:
    from threadpoolctl import threadpool_limits

    from novikoff.runtime import max_margin_separator, run

    X, y, _ = planted(n, d)
    jobs = {
        "separator, 1 BLAS thread": (1, lambda: max_margin_separator(X, y)),
        "separator, 2 BLAS threads": (2, lambda: max_margin_separator(X, y)),
        "run(): the rule (1 thread)": (None, lambda: run(X, y, lemmas=[])),
        "run(), 2 threads forced": (2, lambda: _forced_run(run, X, y)),
    }
    best = {name: (float("inf"), float("inf")) for name in jobs}
    for _ in range(repeat):
        for name, (threads, job) in jobs.items():
            if threads is None:
                took = _timed(job)
            else:
                with threadpool_limits(threads, user_api="blas"):
                    took = _timed(job)
            best[name] = tuple(map(min, best[name], took))
    rows = [f"{len(X)} x {d}, load average {os.getloadavg()[0]:.2f} (best of {repeat})",
            f"{'':<38} {'wall s':>8} {'cpu s':>8}"]
    rows += [f"{name:<38} {w:>8.3f} {c:>8.3f}" for name, (w, c) in best.items()]
    one, two = best["separator, 1 BLAS thread"], best["separator, 2 BLAS threads"]
    rows.append(f"separator 2 threads / 1 thread: wall {two[0] / one[0]:.2f}, "
                f"cpu {two[1] / one[1]:.2f}")
    return rows


def _forced_run(run, X, y):
    """run() with its rule bypassed: the variable it leaves alone (a user's choice) set."""
    os.environ["OPENBLAS_NUM_THREADS"] = "2"
    try:
        return run(X, y, lemmas=[])
    finally:
        del os.environ["OPENBLAS_NUM_THREADS"]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=20_000)
    ap.add_argument("--d", type=int, default=200)
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args(argv)
    for line in blas_rows(a.n, a.d, a.repeat):
        print(line, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
