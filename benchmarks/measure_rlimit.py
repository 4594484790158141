"""Measure the Z3 resource count (rlimit units) that every obligation of the bundled proofs needs.

`novikoff grade` bounds each solver check by Z3's rlimit, a count of the solver's own steps, so that
a submission gets the same grade on any machine.  Its default (novikoff.grade.DEFAULT_RLIMIT) must
let every bundled proof verify with a wide margin; this script measures the largest count any
check of them uses (each solver check of every step, setting, case split and induction, in one
process, as `novikoff check --timeout MS` makes them) and prints the ratio of the default to it.

Usage: python benchmarks/measure_rlimit.py [--timeout MS] [PATH ...]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import z3

ROOT = Path(__file__).resolve().parents[1]


def _count() -> int:
    """The main context's resource count so far.  Z3 reports it among the statistics of a new
    solver (a solver made by SolverFor("QF_NIRA") lists it only after a check)."""
    return int(z3.SolverFor("QF_NRA").statistics().get_key_value("rlimit count"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--timeout", type=int, default=5000, metavar="MS")
    parser.add_argument("--top", type=int, default=5, help="print the N costliest checks")
    parser.add_argument("paths", nargs="*", default=[str(ROOT / "proofs")])
    args = parser.parse_args()

    from novikoff.checker import Checker, proof_files
    from novikoff.grade import DEFAULT_FILE_BUDGET, DEFAULT_RLIMIT
    from novikoff.kernel.solver import AUDIT

    checks = []  # (units, answer, label, the function that made the check)
    plain_check = z3.Solver.check

    def measured_check(self, *assumptions):
        # rlimit is relative: a check may use `rlimit` more units than the count at its start.
        before = _count()
        answer = plain_check(self, *assumptions)
        # The kernel's checks are made in kernel.solver (through Limits.check); the others are
        # the diagnostics' counterexample searches, under the same limits.
        module = sys._getframe(2).f_globals.get("__name__", "")
        caller = "kernel" if module == "novikoff.kernel.solver" else "diagnostics"
        checks.append((_count() - before, str(answer), AUDIT.label, caller))
        return answer

    z3.Solver.check = measured_check
    start = time.perf_counter()
    try:
        checker = Checker(timeout_ms=args.timeout)
        files = proof_files(args.paths)
        for path in files:
            checker.check_file(path)
    finally:
        z3.Solver.check = plain_check
    elapsed = time.perf_counter() - start
    kernel = [c for c in checks if c[3] == "kernel"]
    decided = [c for c in kernel if c[1] != "unknown"]
    checks.sort(key=lambda c: -c[0])
    print(f"{len(files)} files, {len(checks)} solver checks, {len(kernel)} by the kernel "
          f"({len(decided)} decided), in {elapsed:.1f} s")
    largest = max((c[0] for c in decided), default=0)
    print(f"largest count of a decided kernel check: {largest:,} units")
    for units, answer, label, caller in checks[:args.top]:
        print(f"  {units:>12,}  {answer:<7}  {caller:<16} {label}")
    if largest:
        print(f"default rlimit {DEFAULT_RLIMIT:,} = {DEFAULT_RLIMIT / largest:.1f} x the largest")
    per_file = {}
    for units, _, label, _ in checks:
        path = label.split(":")[0]
        per_file[path] = per_file.get(path, 0) + units
    path, units = max(per_file.items(), key=lambda item: item[1])
    print(f"costliest file: {units:,} units ({path}); default file budget "
          f"{DEFAULT_FILE_BUDGET:,} = {DEFAULT_FILE_BUDGET / units:.1f} x")


if __name__ == "__main__":
    main()
