"""Start-up: how long a command takes before and while it does its work, against the targets.

    python benchmarks/bench_startup.py [--repeat 5]

Each command runs as a fresh process (`python -m novikoff ...`, wall time, best of `repeat`):
`--help`; `run iris` (the bundled data set), `run` on the same 150 x 4 data saved as .npz, and a
40-visit `audit`, with the cache of checked lemmas warm and cold (emptied before each run: every
proof of the library is checked again).  In-process: loading the library's lemmas by checking,
from the cache on disk, and again in the same process; compiling them into the monitor's records
and reading those from the cache on disk (what a warm command does: no SymPy, Z3 or kernel); a
`run()` call on 1,000 rows, which loads the library's lemmas, against the same call with the
lemma list passed in (median of interleaved calls).  A ratio is measured wall time / target: <= 1 meets it; the CPU time beside it is what
the wall time is on a quiet machine.  The cache is a temporary directory, never
the user's.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TARGET_COMMAND_S = 1.0  # `novikoff run iris`, a small audit: under a second
TARGET_RUN_RATIO = 1.1  # a run() call costs what the run costs


def _wall(argv: list, env: dict, repeat: int, before=None) -> tuple:
    """(wall, CPU) seconds of `python -m novikoff ARGV`, each the best of repeat runs (before()
    ahead of each).  On a loaded machine the CPU time (user + system) is what the wall time would
    be on a quiet one (the commands use one core, but for forked checks on a cold cache)."""
    return _best([sys.executable, "-m", "novikoff", *map(str, argv)], env, repeat, before)


def _best(command: list, env: dict, repeat: int, before=None) -> tuple:
    wall = cpu = float("inf")
    for _ in range(repeat):
        if before is not None:
            before()
        used = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        done = subprocess.run(command, env=env, capture_output=True, text=True)
        elapsed = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if done.returncode not in (0, 1):
            raise SystemExit(f"{' '.join(command)} failed:\n{done.stderr}")
        wall = min(wall, elapsed)
        cpu = min(cpu, after.ru_utime - used.ru_utime + after.ru_stime - used.ru_stime)
    return wall, cpu


def _files(directory: Path) -> dict:
    """The data the commands read: iris as .npz, and a 40-visit trace of the textbook run."""
    import numpy as np

    from novikoff.runtime import load_dataset

    X, y = load_dataset("iris")[:2]
    np.savez(directory / "iris.npz", X=X, y=y)
    rng = np.random.default_rng(7)
    Xs = rng.normal(size=(20, 3))
    ys = np.where(Xs @ np.array([1.0, -2.0, 0.5]) > 0, 1.0, -1.0)
    Xs += 0.3 * ys[:, None] * np.array([1.0, -2.0, 0.5])  # a margin
    order = np.tile(np.arange(20), 2)  # 40 visits
    w, trace = np.zeros(3), []
    for i in order:
        if ys[i] * (w @ Xs[i]) <= 0:
            w = w + ys[i] * Xs[i]
        trace.append(w.copy())
    np.savez(directory / "small.npz", X=Xs, y=ys)
    np.savez(directory / "trace.npz", order=order, w=np.array(trace))
    return {"iris": directory / "iris.npz", "data": directory / "small.npz",
            "trace": directory / "trace.npz"}


def command_rows(repeat: int) -> list:
    scratch = Path(tempfile.mkdtemp(prefix="novikoff-bench-startup-"))
    cache = scratch / "cache"
    env = dict(os.environ, NOVIKOFF_CACHE_DIR=str(cache))
    # As a user's Python runs: modules compiled once to bytecode (the first run writes it), not
    # compiled from source in every process.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    files = _files(scratch)
    audit = ["audit", "--data", files["data"], "--trace", files["trace"]]
    rows = [f"{'command (fresh process)':<44} {'cache':>6} {'wall s':>7} {'cpu s':>7} "
            f"{'target':>7} {'ratio':>6}"]

    def row(what, cache_state, measured, target=TARGET_COMMAND_S):
        wall, cpu = measured
        rows.append(f"{what:<44} {cache_state:>6} {wall:>7.3f} {cpu:>7.3f} {target:>7.2f} "
                    f"{wall / target:>6.2f}")

    def empty():
        shutil.rmtree(cache, ignore_errors=True)

    try:
        row("python -c pass (the interpreter)", "-", _wall_python(repeat))
        row("novikoff --help", "-", _wall(["--help"], env, repeat))
        _wall(["run", "iris"], env, 1)  # fills the cache
        row("novikoff run iris", "warm", _wall(["run", "iris"], env, repeat))
        row("novikoff run iris.npz (150 x 4, no sklearn)", "warm",
            _wall(["run", files["iris"]], env, repeat))
        row("novikoff audit (40 visits)", "warm", _wall(audit, env, repeat))
        cold = max(1, repeat // 3)
        row("novikoff run iris", "cold", _wall(["run", "iris"], env, cold, before=empty))
        row("novikoff audit (40 visits)", "cold", _wall(audit, env, cold, before=empty))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return rows


def _wall_python(repeat: int) -> tuple:
    return _best([sys.executable, "-c", "pass"], dict(os.environ), repeat)


def in_process_rows(repeat: int) -> list:
    """Loading the library in a process, and a run() call that loads it, in a cache of their
    own."""
    rows = []
    before = os.environ.get("NOVIKOFF_CACHE_DIR")
    with tempfile.TemporaryDirectory(prefix="novikoff-bench-cache-") as cache:
        os.environ["NOVIKOFF_CACHE_DIR"] = cache
        try:
            rows += _in_process(repeat)
        finally:
            if before is None:
                del os.environ["NOVIKOFF_CACHE_DIR"]
            else:
                os.environ["NOVIKOFF_CACHE_DIR"] = before
    return rows


def _in_process(repeat: int) -> list:
    import numpy as np

    from novikoff import lemmas
    from novikoff.runtime import _library, default_proof_paths, load_lemmas, run

    rows = []
    paths = default_proof_paths()
    lemmas._MEMO.clear()
    start = time.perf_counter()
    library = load_lemmas(paths)
    checked = time.perf_counter() - start
    from_disk = float("inf")
    for _ in range(repeat):
        lemmas._MEMO.clear()
        start = time.perf_counter()
        load_lemmas(paths)
        from_disk = min(from_disk, time.perf_counter() - start)
    again = min(_timed(load_lemmas) for _ in range(200))
    rows.append(f"load the library's {len(library)} lemmas: checked {checked:.3f} s, from "
                f"the cache on disk {from_disk:.3f} s ({checked / from_disk:.0f} x faster), "
                f"again in the process {again * 1e6:.0f} us")
    # What a run monitors: the lemmas compiled into checks (runtime._library), kept on disk.
    _library._MEMO.clear()
    _library._RECORDS.clear()
    start = time.perf_counter()
    _library.library(paths)  # the lemmas come from the memo above: this is the compiling
    compiled = time.perf_counter() - start
    records = float("inf")
    for _ in range(repeat):
        _library._MEMO.clear()
        start = time.perf_counter()
        _library.library(paths)
        records = min(records, time.perf_counter() - start)
    rows.append(f"the monitor's records of them: compiled {compiled:.3f} s, from the cache on "
                f"disk {records * 1e3:.1f} ms")

    rng = np.random.default_rng(0)
    w = rng.normal(size=5)
    X = rng.normal(size=(1400, 5))
    X = X[np.abs(X @ w) > 0.3][:1000]
    y = np.sign(X @ w)
    run(X, y)
    run(X, y, lemmas=library)
    loading, given = [], []
    for _ in range(max(50, 20 * repeat)):  # interleaved: the machine's load hits both
        loading.append(_timed(lambda: run(X, y)))
        given.append(_timed(lambda: run(X, y, lemmas=library)))
    ratio = statistics.median(loading) / statistics.median(given)
    rows.append(f"run() on {len(X)} x 5: {statistics.median(loading) * 1e3:.2f} ms loading "
                f"the library, {statistics.median(given) * 1e3:.2f} ms with the lemmas "
                f"given: {ratio:.3f} (target <= {TARGET_RUN_RATIO}; ratio to target "
                f"{ratio / TARGET_RUN_RATIO:.2f})")
    return rows


def _timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def startup_rows(repeat: int) -> list:
    """Every row of this benchmark (bench_all.py prints them too)."""
    return command_rows(repeat) + [""] + in_process_rows(repeat)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args(argv)
    print(f"cpus: {os.cpu_count()}; load average: {os.getloadavg()[0]:.2f}")
    for line in startup_rows(args.repeat):
        print(line, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
