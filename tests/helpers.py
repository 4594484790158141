"""Shared helpers for the checker tests: write a .proof file and check it."""

from __future__ import annotations

import functools
import os
import textwrap
from pathlib import Path

from novikoff.checker import Checker

PERCEPTRON = """\
setting perceptron:
  vectors  w_star, x
  sequence w
  real     gamma > 0, R > 0
  label    y
  nat      k
  per update: x, y
  assume start:    w[0] = 0
  assume update:   w[k+1] = w[k] + y*x
  assume mistake:  y*<w[k], x> <= 0
  assume margin:   y*<w_star, x> >= gamma
  assume radius:   ||x|| <= R
"""


def check_text(tmp_path, body: str, setting: str = PERCEPTRON, name: str = "t.proof"):
    """Check setting + body; return the FileReport."""
    path = tmp_path / name
    path.write_text(setting + "\n" + textwrap.dedent(body), encoding="utf-8")
    return Checker(timeout_ms=5000).check_file(path)


def steps_of(report, lemma: str) -> list:
    for lem in report.lemmas:
        if lem.name == lemma:
            return lem.steps
    raise AssertionError(f"no lemma {lemma}: {[l.name for l in report.lemmas]}")


def lemma_of(report, lemma: str):
    for lem in report.lemmas:
        if lem.name == lemma:
            return lem
    raise AssertionError(f"no lemma {lemma}")


def run_cli(*args, cwd=None):
    """`novikoff ARGS` in this process: a CompletedProcess with its exit code, stdout, stderr.

    Much cheaper than a fresh interpreter (no imports, and the checked lemma library is reused);
    the tests marked e2e run the command line in a fresh process.
    """
    import contextlib
    import io
    import os
    import subprocess

    from novikoff.cli import main

    out, err = io.StringIO(), io.StringIO()
    here = os.getcwd()
    try:
        if cwd is not None:
            os.chdir(cwd)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main([str(a) for a in args])
            except SystemExit as stop:  # argparse's usage errors
                code = stop.code if isinstance(stop.code, int) else 1
    finally:
        os.chdir(here)
    return subprocess.CompletedProcess(list(args), code, out.getvalue(), err.getvalue())


@functools.lru_cache(maxsize=None)
def bundled_reports() -> dict:
    """{resolved path: FileReport} of every bundled .proof file (proofs/, the seeds included),
    checked once per test session, as `novikoff check proofs/` checks them (worker processes).
    The library tests, the report tests and the runtime's lemmas all read the same proofs: one
    check serves them."""
    from novikoff.checker import bundled_proofs_dir, check_paths, proof_files

    files = proof_files([bundled_proofs_dir()])
    reports = check_paths(files, jobs=os.cpu_count() or 1)
    return {Path(f).resolve(): report for f, report in zip(files, reports)}


def cli(argv, capsys):
    """`novikoff ARGV` in this process through its entry point: (exit code, stdout, stderr)."""
    from novikoff.cli import main
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err
