"""Throughput of the full fuzz property: generate a run, run the learner, check every lemma.

    python benchmarks/bench_fuzz.py [--examples 600] [--workers 1 2] [--repeat 3]

The property is the one `novikoff fuzz` uses on the correct engines: a certified dataset
(n <= 50, d <= 8, every kind of `separable_datasets`), an ordering or an adaptive adversary, the
textbook classic perceptron's weight trace, judged by `novikoff.runtime.audit` (every lemma of
the bundled library that the classic rule satisfies on that data and order, checked at every
update).  With several workers, each process runs its own seeded property and the rates add up.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import platform


def _worker(args):
    examples, seed_, variant = args
    from novikoff.fuzz import _audit
    from novikoff.fuzz._driver import measure_throughput
    lemmas = _audit.bundled_lemmas()
    measure_throughput(lemmas, examples=20, variant=variant, seed_=seed_ + 10_000)  # warm-up
    return measure_throughput(lemmas, examples=examples, variant=variant, seed_=seed_)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--examples", type=int, default=600)
    ap.add_argument("--workers", type=int, nargs="*", default=[1, 2])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--variant", default="classic", choices=("classic", "margin", "hinge"))
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args(argv)
    results = {}
    for w in a.workers:
        rates = []
        for r in range(a.repeat):
            jobs = [(a.examples, 1000 * r + i, a.variant) for i in range(w)]
            if w == 1:
                per = [_worker(jobs[0])]
            else:
                with mp.get_context("spawn").Pool(w) as pool:
                    per = pool.map(_worker, jobs)
            rates.append(sum(per))
        results[w] = {"runs_per_second": max(rates), "all": rates}
    info = {"machine": platform.processor() or platform.machine(), "cpus": os.cpu_count(),
            "python": platform.python_version(), "variant": a.variant,
            "examples_per_worker": a.examples, "results": results}
    if a.json:
        print(json.dumps(info, indent=2))
    else:
        for w, r in results.items():
            print(f"{w} worker(s): {r['runs_per_second']:.0f} runs/s (best of "
                  f"{a.repeat}: {', '.join(f'{x:.0f}' for x in r['all'])})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
