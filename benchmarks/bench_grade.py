"""Time `novikoff grade` on a class of 200 submissions of a 5-lemma assignment.

The assignment is tests/data/grade/assignment.proof; the submissions are made from it, one kind
of change in turn (correct, a false step, a type error, a syntax error, a weaker statement, an
extra assumption, an extra given, a citation of an unverified helper, an xfail step), each with a
comment of its own so that no two files are the same.  A share of them (--hard-share, 10%) are
correct proofs with --hard-lines (12) helper lemmas before them, each a legal but very hard step
(HARD: Z3 cannot decide it within any grading budget): the per-lemma and per-file budgets must
keep such a file from holding a core, and its honest lemmas must still earn.  Prints the wall
time of the whole command (interpreter start included; target: under 2 minutes on the 2-core
development machine), files per second, the hard files' scores, and the same for
`novikoff check FILE` run on the same files one by one (a sample of them, in the same script),
with the ratio.

Usage: python benchmarks/bench_grade.py [--students N] [--hard-share F] [--hard-lines N]
                                        [--check-sample N] [--jobs N]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = ROOT / "tests" / "data" / "grade" / "assignment.proof"


def _variants(ref: str) -> list:
    """One text per kind of submission (the changes of tests/test_grade.py)."""
    def edit(old, new, text=ref):
        assert old in text, old
        return text.replace(old, new, 1)

    step = "                     >= gamma               by margin"
    return [
        ref,
        edit(step, step.replace(">= gamma   ", ">= 2*gamma ")),
        edit(step, step.replace(">= gamma   ", ">= gamma+x ")),
        edit(step, step.replace(">= gamma   ", ">= gamma(( ")),
        edit("theorem mistake_bound_unit: k <= 1/gamma^2",
             "theorem mistake_bound_unit: k <= 2/gamma^2",
             edit("    = 1/gamma^2                              by unit_radius, unit_w_star",
                  "    = 1/gamma^2                              by unit_radius, unit_w_star\n"
                  "    <= 2/gamma^2")),
        edit("  assume   radius:  ||x|| <= R\n",
             "  assume   radius:  ||x|| <= R\n  assume   cheat:   gamma > R\n"),
        edit("  given unit_w_star: ||w_star|| = 1\n",
             "  given unit_w_star: ||w_star|| = 1\n  given small: gamma <= 1\n"),
        edit("<= ||w_star|| * sqrt(k) * R        by norm_growth",
             "<= ||w_star|| * sqrt(k) * R        by helper",
             edit("# points: 2\ntheorem mistake_bound",
                  "lemma helper: ||w[k]||^2 <= k*R^2\nproof:\n  ||w[k]||^2 <= k*R^2   by radius\n"
                  "\n# points: 2\ntheorem mistake_bound")),
        edit("  ||w_star|| * ||x|| >= y*<w_star, x>       by cauchy_schwarz(w_star, x)",
             "  ||w_star|| * ||x|| >= 2*y*<w_star, x>     by cauchy_schwarz(w_star, x)  xfail\n"
             "  ||w_star|| * ||x|| >= y*<w_star, x>       by cauchy_schwarz(w_star, x)"),
    ]


HARD = "(gamma^2 + R^2 + k + 1)^8 >= (2*gamma*R)^8 + (gamma*R)^7 - k"


def _with_hard_lines(ref: str, lines: int) -> str:
    """The correct proofs, after `lines` helper lemmas of one hard step each."""
    helpers = "".join(f"lemma hard{i}: {HARD}\nproof:\n  {HARD}\n\n" for i in range(lines))
    anchor = "# points: 1\nlemma w_star_nonzero"
    return ref.replace(anchor, helpers + anchor, 1)


def make_class(folder: Path, students: int, hard_share: float, hard_lines: int) -> tuple:
    """The submissions' paths, and the names of the students with hard lines."""
    ref = REFERENCE.read_text(encoding="utf-8")
    kinds = _variants(ref)
    every = round(1 / hard_share) if hard_share > 0 else 0
    files, hard = [], []
    for i in range(students):
        path = folder / f"student_{i:03d}.proof"
        text = kinds[i % len(kinds)]
        if every and i % every == every - 1:
            text = _with_hard_lines(ref, hard_lines)
            hard.append(path.stem)
        path.write_text(f"# submission {i}\n" + text, encoding="utf-8")
        files.append(path)
    return files, hard


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=200)
    parser.add_argument("--hard-share", type=float, default=0.1,
                        help="the share of submissions with hard lines (default 0.1)")
    parser.add_argument("--hard-lines", type=int, default=12,
                        help="hard lines in each of them, one per helper lemma (default 12)")
    parser.add_argument("--check-sample", type=int, default=20,
                        help="how many of the files `novikoff check` is timed on, one by one")
    parser.add_argument("--jobs", type=int, default=None)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "submissions"
        folder.mkdir()
        files, hard = make_class(folder, args.students, args.hard_share, args.hard_lines)
        command = [sys.executable, "-m", "novikoff", "grade", str(folder), "--reference",
                   str(REFERENCE), "-o", str(Path(tmp) / "out"), "-q"]
        if args.jobs is not None:
            command += ["--jobs", str(args.jobs)]
        start = time.perf_counter()
        done = subprocess.run(command, check=False)
        grade_wall = time.perf_counter() - start
        if done.returncode != 0:
            sys.exit(f"novikoff grade exited with {done.returncode}")
        rows = (Path(tmp) / "out" / "summary.csv").read_text(encoding="utf-8").splitlines()
        assert len(rows) == args.students + 1
        scores = {row.split(",")[0]: row.split(",")[1] for row in rows[1:]}
        hard_scores = sorted({scores[name] for name in hard})

        sample = files[:args.check_sample]
        start = time.perf_counter()
        for path in sample:
            subprocess.run([sys.executable, "-m", "novikoff", "check", "-q", str(path)],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        check_wall = time.perf_counter() - start

    grade_rate = args.students / grade_wall
    check_rate = len(sample) / check_wall
    print(f"novikoff grade, {args.students} submissions of a 5-lemma assignment, {len(hard)} "
          f"with {args.hard_lines} hard lines each: {grade_wall:.1f} s wall (target 120 s -> "
          f"{grade_wall / 120:.2f} x), {grade_rate:.1f} files/s")
    print(f"scores of the submissions with hard lines (correct proofs otherwise, 10 points): "
          f"{', '.join(hard_scores) or '-'}")
    print(f"novikoff check FILE, one by one ({len(sample)} of the same files): "
          f"{check_wall:.1f} s, {check_rate:.2f} files/s")
    print(f"grade / check one by one: {grade_rate / check_rate:.1f} x the files per second")


if __name__ == "__main__":
    main()
