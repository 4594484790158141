"""Statements with `and`, `or`, `=>`, `<=>`: parsing, checking, failure messages."""

from __future__ import annotations

import pytest

from helpers import check_text, lemma_of, steps_of
from novikoff.errors import ProofSyntaxError
from novikoff.language import ast as A
from novikoff.language.parser import parse

SCALARS = """\
setting s:
  real a, b
  label y
  nat k
"""


def _statement(text: str):
    lemma = parse(SCALARS + f"lemma l: {text}\nproof:\n  a = a\n").lemmas[0]
    if lemma.error is not None:
        raise lemma.error
    return lemma.statement


def _shape(node):
    if isinstance(node, A.Rel):
        return node.op
    return (node.op, *(_shape(p) for p in node.parts))


@pytest.mark.parametrize("text, shape", [
    ("a <= b and b <= 1 or a = 0", ("or", ("and", "<=", "<="), "=")),
    ("a = 0 or b = 0 and a = 1", ("or", "=", ("and", "=", "="))),
    ("a >= 0 => b >= 0 => a*b >= 0", ("=>", ">=", ("=>", ">=", ">="))),
    ("(a >= 0 => b >= 0) => a >= 0", ("=>", ("=>", ">=", ">="), ">=")),
    ("a > 0 <=> (a >= 0 and a != 0)", ("<=>", ">", ("and", ">=", "!="))),
    ("(a + b) <= 1 and (a <= b)", ("and", "<=", "<=")),
    ("a ≥ 0 ∧ b ≥ 0 ⇒ a·b ≥ 0", ("=>", ("and", ">=", ">="), ">=")),
    ("a = 0 ∨ a ≠ 0 ⇔ b = b", ("<=>", ("or", "=", "!="), "=")),
])
def test_connectives_bind_and_before_or_before_implication(text, shape):
    assert _shape(_statement(text)) == shape


@pytest.mark.parametrize("text, col", [
    ("a >= 0 <=> b >= 0 <=> a = b", 28),
    ("a >= 0 => b >= 0 <=> a = b", 27),
    ("a >= 0 and", 20),
    ("(a >= 0 and b >= 0", 28),
])
def test_malformed_connectives_are_positioned_errors(text, col):
    with pytest.raises(ProofSyntaxError) as err:
        _statement(text)
    assert err.value.line == 5 and err.value.column == col


def test_and_or_are_reserved_words(tmp_path):
    report = check_text(tmp_path, "", setting="setting s:\n  real and\n")
    assert report.error is not None and "and" in str(report.error)


def test_a_compound_step_verifies_and_a_false_one_has_a_counterexample(tmp_path):
    report = check_text(tmp_path, """
        lemma equiv: y*a > 0 <=> (y = 1 and a > 0 or y = -1 and a < 0)
        proof:
          y*a > 0 <=> (y = 1 and a > 0 or y = -1 and a < 0)

        lemma weak: y*a >= 0 <=> a >= 0
        proof:
          y*a >= 0 <=> a >= 0
        """, setting=SCALARS)
    assert lemma_of(report, "equiv").status == "verified"
    (step,) = steps_of(report, "weak")
    assert step.status == "failed"
    cex = step.counterexample
    assert cex["y"] == "-1" and cex["a"] != "0"


def test_undefined_term_in_a_consequent_is_judged_strictly(tmp_path):
    report = check_text(tmp_path, """
        lemma guarded: k >= 1 => 1/k <= 1
        proof:
          k >= 1 => 1/k <= 1

        lemma unguarded: k >= 0 => 1/k <= 1
        proof:
          k >= 0 => 1/k <= 1
        """, setting=SCALARS)
    assert lemma_of(report, "guarded").status == "verified"
    (step,) = steps_of(report, "unguarded")
    assert step.status == "failed" and step.counterexample["k"] == "0"


def test_have_names_a_compound_fact_for_later_steps(tmp_path):
    report = check_text(tmp_path, """
        lemma split: a*b = 0 => a = 0 or b = 0
        proof:
          have zero: a*b = 0 => a = 0 or b = 0
          hence a*b = 0 => a = 0 or b = 0

        lemma used: a*b = 0 and a != 0 => b = 0
        proof:
          a*b = 0 and a != 0 => b = 0    by split
        """, setting=SCALARS)
    assert lemma_of(report, "split").status == "verified"
    assert lemma_of(report, "used").status == "verified"


def test_compound_givens_and_case_conditions(tmp_path):
    report = check_text(tmp_path, """
        lemma product: a*b >= 0
          given same_sign: a >= 0 and b >= 0 or a <= 0 and b <= 0
        proof by cases by same_sign:
          case pos: a >= 0 and b >= 0
            a*b >= 0    by pos
          case neg: a <= 0 and b <= 0
            a*b >= 0    by neg
        """, setting=SCALARS)
    lemma = lemma_of(report, "product")
    assert lemma.status == "verified", [s.reason for s in lemma.steps]


def test_a_compound_xfail_step_is_an_expected_failure(tmp_path):
    report = check_text(tmp_path, """
        lemma slip: a > 0 or a < 0
        proof:
          a > 0 or a < 0    xfail
        """, setting=SCALARS)
    lemma = lemma_of(report, "slip")
    assert lemma.status == "expected_failure"
    assert lemma.steps[0].counterexample["a"] == "0"
