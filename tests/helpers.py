"""Shared helpers for the checker tests: write a .proof file and check it."""

from __future__ import annotations

import textwrap

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
