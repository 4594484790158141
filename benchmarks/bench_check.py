"""Time `novikoff check` on the bundled proofs: whole command (interpreter start included) and steps.

Prints ratios against baselines measured in the same run: the bare interpreter start with the
solver libraries imported (the floor any Python checker pays), and the 3 s target.
Usage: python benchmarks/bench_check.py [--runs N] [PATH ...]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def wall(cmd: list, runs: int) -> list:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        times.append(time.perf_counter() - start)
    return times


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("paths", nargs="*", default=[str(ROOT / "proofs")])
    args = parser.parse_args()

    floor = wall([sys.executable, "-c", "import sympy, z3"], args.runs)
    full = wall([sys.executable, "-m", "novikoff", "check", *args.paths], args.runs)

    from novikoff.checker import check_paths
    reports = check_paths(args.paths)
    steps = [s for r in reports for s in r.steps if s.seconds > 0]
    per_step = sorted(s.seconds for s in steps)
    lemmas = sum(len(r.lemmas) for r in reports)

    med_full, med_floor = statistics.median(full), statistics.median(floor)
    print(f"files: {len(reports)}, lemmas: {lemmas}, checked steps: {len(steps)}")
    print(f"novikoff check (wall, interpreter start included): median {med_full:.2f} s "
          f"over {args.runs} runs  -> {med_full / 3.0:.2f} x the 3 s target")
    print(f"baseline `python -c 'import sympy, z3'`: median {med_floor:.2f} s  -> check is "
          f"{med_full / med_floor:.1f} x the import floor")
    if per_step:
        q90 = per_step[int(0.9 * (len(per_step) - 1))]
        print(f"per step: median {1000 * statistics.median(per_step):.1f} ms "
              f"(target 50 ms -> {statistics.median(per_step) / 0.05:.2f} x), "
              f"90th percentile {1000 * q90:.1f} ms, max {1000 * per_step[-1]:.1f} ms")


if __name__ == "__main__":
    main()
