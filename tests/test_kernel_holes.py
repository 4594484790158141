"""Regression tests for the holes of issue 21 ("Holes found by the attack") that are not soundness
cases: hangs bounded by a size cap (never timed), the exact Gram test, the witness work cap, model
values too long for Python's int-string conversion, and the report's status."""

from __future__ import annotations

from fractions import Fraction

import pytest

from novikoff import KernelError
from novikoff.checker import Checker
from novikoff.kernel import written as W


def _check(tmp_path, text: str, name: str = "t.proof"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return Checker(timeout_ms=5000).check_file(path)


def _lemma(report, name: str = "claim"):
    return next(lemma for lemma in report.lemmas if lemma.name == name)


# ---------------------------------------------------------------- 1a: chains of defines

def _chain(lines: int) -> str:
    defines = "\n".join(f"  define a{i} = a{i - 1} + a{i - 1}" for i in range(2, lines + 1))
    return (f"setting s:\n  real a1\n{defines}\n\n"
            f"lemma claim: a{lines} = {2 ** (lines - 1)}*a1\nproof:\n"
            f"  a{lines} = {2 ** (lines - 1)}*a1\n")


def test_a_chain_of_doubling_defines_is_refused_by_its_size(tmp_path):
    """45 defines, each doubling the last, make a term of 2^44 leaves: its size is known when it
    is made (no walk of the tree), and the term is refused naming the limit."""
    claim = _lemma(_check(tmp_path, _chain(45)))
    assert claim.status != "verified"
    assert f"{W.MAX_NODES:,} symbols and operations" in claim.reason


def test_a_short_chain_of_defines_still_checks(tmp_path):
    assert _lemma(_check(tmp_path, _chain(8))).status == "verified"


def test_written_terms_share_their_parts_without_walking_them():
    a = W.Sym("a", "real")
    for _ in range(200):  # 2^200 nodes as a tree
        a = W.Add(a, a)
    assert a.nodes == W.MAX_NODES + 1
    assert hash(a) == hash(a) and a == a
    b = W.Sym("a", "real")
    for _ in range(200):
        b = W.Add(b, b)
    assert hash(a) == hash(b)
    with pytest.raises(KernelError, match="symbols and operations"):
        W.interpret(b)
    assert W.Add(W.Num(Fraction(1)), a) != W.Add(W.Num(Fraction(2)), a)
