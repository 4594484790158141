"""Certificates of the bundled proofs: replay time, sizes, check time with them, search time.

Prints, for the certificates and models stored in proofs/ (its .proof files and notes):
- their number and sizes (bytes of compact JSON: median, total), certificates and models apart;
- the time the kernel's checker takes to replay all of them (statements built once), against
  the 1 s target;
- `novikoff check` on the proofs (interpreter start included) with the certificates replayed,
  as a ratio to the same command on a copy without them (the solver decides everything);
- the time the search takes per obligation (`novikoff certify` on a copy of one file, default
  novikoff.proof; --all certifies a copy of every file, which takes minutes).
Usage: python benchmarks/bench_certificates.py [--runs N] [--all]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PROOFS = ROOT / "proofs"


def wall(cmd: list, runs: int) -> list:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        times.append(time.perf_counter() - start)
    return times


def replay_times():
    """(sizes in bytes, seconds to check each stored certificate on the facts the kernel hands
    the checker, seconds building every statement in the check) over the library."""
    from novikoff.certify.store import certificate_path
    from novikoff.checker import Checker, proof_files
    from novikoff.kernel import certified
    from novikoff.kernel.certificates import check_facts, check_model

    files = [p for p in proof_files([PROOFS], notes=True) if certificate_path(Path(p)).is_file()]
    built = certified._statement
    building = []
    statements = {}

    def timed(*args):
        start = time.process_time()
        obligation = built(*args)
        building.append(time.process_time() - start)
        if obligation is not None:
            statements[obligation[0]] = obligation[1]
        return obligation

    certified._statement = timed
    try:
        checker = Checker()
        for p in files:
            checker.check_file(p)
    finally:
        certified._statement = built
    pairs = [(statements[k], c) for k, c in certified.LEDGER.used.items()]
    certified.LEDGER.store = {}
    seconds = {"certificate": [], "model": []}
    sizes = {"certificate": [], "model": []}
    for statement, certificate in pairs:
        kind = "model" if certificate["by"] == "model" else "certificate"
        start = time.process_time()
        (check_model if kind == "model" else check_facts)(statement.facts, statement.nats,
                                                          certificate, statement.integers)
        seconds[kind].append(time.process_time() - start)
        sizes[kind].append(len(json.dumps(certificate, separators=(",", ":"))))
    return sizes, seconds, building


def without_certificates(tmp: Path) -> Path:
    copy = tmp / "proofs"
    shutil.copytree(PROOFS, copy)
    for d in copy.rglob(".certificates"):
        shutil.rmtree(d)
    return copy


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--all", action="store_true", help="certify every file (minutes)")
    parser.add_argument("--file", default="novikoff.proof")
    args = parser.parse_args()

    sizes, seconds, building = replay_times()
    checking = sum(map(sum, seconds.values()))
    total = checking + sum(building)
    for kind in ("certificate", "model"):
        if sizes[kind]:
            print(f"{kind}s: {len(sizes[kind])}; size median {statistics.median(sizes[kind])} B, "
                  f"total {sum(sizes[kind]) / 1000:.1f} kB, largest {max(sizes[kind])} B; "
                  f"checked in {sum(seconds[kind]):.3f} s (median "
                  f"{statistics.median(seconds[kind]) * 1000:.2f} ms each)")
    print(f"replay all (CPU): {total:.3f} s ({total / 1.0:.2f} x the 1 s target): checking "
          f"{checking:.3f} s, building the {len(building)} statements of the check "
          f"{sum(building):.3f} s")

    with tempfile.TemporaryDirectory() as tmp:
        bare = without_certificates(Path(tmp))
        cmd = [sys.executable, "-m", "novikoff", "check"]
        replayed = wall(cmd + [str(PROOFS)], args.runs)
        solved = wall(cmd + [str(bare)], args.runs)
        print(f"novikoff check proofs/: {statistics.median(replayed):.2f} s with certificates, "
              f"{statistics.median(solved):.2f} s with the solver alone (ratio "
              f"{statistics.median(replayed) / statistics.median(solved):.2f}); "
              f"{statistics.median(replayed) / 3.0:.2f} x the 3 s target")
        targets = [bare] if args.all else [bare / args.file]
        start = time.perf_counter()
        out = subprocess.run(cmd[:3] + ["certify", *map(str, targets)], capture_output=True,
                             text=True)
        elapsed = time.perf_counter() - start
        last = out.stdout.strip().splitlines()[-1] if out.stdout.strip() else out.stderr
        print(f"certify {'all' if args.all else args.file}: {elapsed:.1f} s ({last})")


if __name__ == "__main__":
    main()
