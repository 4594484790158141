"""Red team: Markdown/LaTeX notes whose checked claim is not the displayed one, and submission
folders that try to game `novikoff grade`.

Each test states what a reader (or an instructor) would take from the document or the grade,
and asserts what novikoff must then say.  A test that fails today is a strict xfail whose
reason names the finding: the fix flips it.
"""

from __future__ import annotations

import csv
import os
from pathlib import Path

import pytest

from novikoff.checker import Checker
from novikoff.grade import grade_class

# ---------------------------------------------------------------------------- notes

MD_SETTING = """```novikoff
setting s:
  real a, b
  assume h: a <= b
reasons:
  "hyp" -> h
lemma claim
```
"""

TEX_SETTING = r"""\documentclass{article}
\begin{document}
% novikoff
% setting s:
%   real a, b
%   assume h: a <= b
% reasons:
%   "hyp" -> h
% lemma claim
"""


def _check(tmp_path: Path, name: str, text: str):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return Checker(timeout_ms=5000).check_file(path)


def _claim_status(report) -> str:
    found = [lemma for lemma in report.lemmas if lemma.name == "claim"]
    return found[0].status if found else "missing"


def _not_verified(report) -> bool:
    """The document's claim is refused: an error, or the claim not verified."""
    return report.error is not None or _claim_status(report) != "verified"


# The visible display is false (a <= b - 5 does not follow from a <= b); a display hidden from
# the reader holds the true a <= b.  The claim named by the lemma line is the visible display
# as the reader sees it, so it must not be reported verified.
HIDDEN_MARKDOWN = {
    "html_comment_block": "<!--\n$$ a \\leq b $$\n\nby hyp.\n-->\n\n$$ a \\leq b - 5 $$\n",
    "html_comment_inline": "<!-- $$ a \\leq b $$ -->\n\nby hyp.\n\n$$ a \\leq b - 5 $$\n",
    "indented_code_block": "    $$ a \\leq b $$\n\nby hyp.\n\n$$ a \\leq b - 5 $$\n",
    "inline_code_span": "`$$ a \\leq b $$`\n\nby hyp.\n\n$$ a \\leq b - 5 $$\n",
    "link_reference_comment": "[//]: # ($$ a \\leq b $$)\n\nby hyp.\n\n$$ a \\leq b - 5 $$\n",
    "display_none_span": ("<span style=\"display:none\">\n\n$$ a \\leq b $$\n\nby hyp.\n\n"
                          "</span>\n\n$$ a \\leq b - 5 $$\n"),
}


@pytest.mark.parametrize("case", sorted(HIDDEN_MARKDOWN))
def test_a_hidden_markdown_display_is_not_the_claim(tmp_path, case):
    report = _check(tmp_path, "n.md", MD_SETTING + "\n" + HIDDEN_MARKDOWN[case])
    assert _not_verified(report), (case, [(l.name, l.status, l.statement)
                                          for l in report.lemmas])


@pytest.mark.parametrize("fence", ["```", "~~~", "````"])
def test_a_fenced_code_display_is_not_the_claim(tmp_path, fence):
    """Control: a display inside a fenced code block is skipped, so the visible false display
    is the claim and fails."""
    report = _check(tmp_path, "n.md", MD_SETTING + f"\n{fence}\n$$ a \\leq b $$\n{fence}\n\n"
                    "by hyp.\n\n$$ a \\leq b - 5 $$\n\nby hyp.\n")
    assert _not_verified(report)


def test_an_escaped_dollar_display_is_not_the_claim(tmp_path):
    """Control: `\\$\\$ a \\leq b \\$\\$` is text, not a display."""
    report = _check(tmp_path, "n.md", MD_SETTING + "\n\\$\\$ a \\leq b \\$\\$\n\nby hyp.\n\n"
                    "$$ a \\leq b - 5 $$\n\nby hyp.\n")
    assert _not_verified(report)


def test_a_claim_cannot_cite_itself(tmp_path):
    """Control: `\\text{by claim}` inside claim's own display is not a citation of a proved lemma."""
    report = _check(tmp_path, "n.md", MD_SETTING + "\n$$ a \\leq b - 5 \\text{by claim} $$\n")
    assert _not_verified(report)


def test_a_novikoff_block_hidden_in_an_html_comment_is_not_read(tmp_path):
    text = ("<!--\n```novikoff\nsetting s:\n  real a, b\n  assume cheat: a <= b - 5\n"
            "reasons:\n  \"the hypothesis\" -> cheat\nlemma claim\n```\n-->\n\n"
            "We show $a \\leq b - 5$ for all reals.\n\n$$ a \\leq b - 5 $$\n\n"
            "by the hypothesis.\n")
    report = _check(tmp_path, "n.md", text)
    assert _not_verified(report)


HIDDEN_LATEX = {
    "iffalse": "\\iffalse\n\\[ a \\leq b \\text{by hyp} \\]\n\\fi\n",
    "comment_environment": "\\begin{comment}\n\\[ a \\leq b \\text{by hyp} \\]\n\\end{comment}\n",
    "verbatim": "\\begin{verbatim}\n\\[ a \\leq b \\text{by hyp} \\]\n\\end{verbatim}\n",
}


@pytest.mark.parametrize("case", sorted(HIDDEN_LATEX))
def test_a_hidden_latex_display_is_not_the_claim(tmp_path, case):
    text = (TEX_SETTING + HIDDEN_LATEX[case] + "\\[ a \\leq b - 5 \\text{by hyp} \\]\n"
            "\\end{document}\n")
    report = _check(tmp_path, "n.tex", text)
    assert _not_verified(report), case


@pytest.mark.parametrize("definition", [r"\renewcommand{\leq}{>}", r"\let\leq\geq",
                                        r"\def\leq{>}"])
def test_a_redefined_relation_is_refused(tmp_path, definition):
    text = TEX_SETTING + definition + "\n\\[ a \\leq b \\text{by hyp} \\]\n\\end{document}\n"
    report = _check(tmp_path, "n.tex", text)
    assert _not_verified(report)


def test_a_latex_comment_inside_a_display_is_dropped_as_latex_drops_it(tmp_path):
    """Control: `% - 5` is not typeset, and not read."""
    report = _check(tmp_path, "n.tex", TEX_SETTING + "\\[ a \\leq b % - 5\n\\text{by hyp} \\]\n"
                    "\\end{document}\n")
    assert report.error is None and _claim_status(report) == "verified"


def test_an_escaped_percent_is_not_a_comment(tmp_path):
    """Control: `\\%` is typeset, so it must not be silently dropped."""
    report = _check(tmp_path, "n.tex", TEX_SETTING + "\\[ a \\leq b \\% - 5\n\\text{by hyp} \\]\n"
                    "\\end{document}\n")
    assert _not_verified(report)


def _notation_doc(row: str, display: str) -> str:
    return ("```novikoff\nsetting s:\n  real a, b\n  sequence x\n  vector u\n"
            "  assume h: a <= b\nnotation:\n  " + row + "\nreasons:\n  \"hyp\" -> h\n"
            "lemma claim\n```\n\n$$ " + display + " $$\n\nby hyp.\n")


def test_a_notation_row_that_drops_its_hole_is_refused(tmp_path):
    report = _check(tmp_path, "n.md", _notation_doc(
        r"\mathbf{x}_{#} -> x[0]", r"\langle u, \mathbf{x}_{1} \rangle = "
                                   r"\langle u, \mathbf{x}_{2} \rangle"))
    assert _not_verified(report)


@pytest.mark.parametrize("row", ["5 -> 0", "b - 5 -> b"])
def test_a_notation_row_cannot_rewrite_arithmetic(tmp_path, row):
    report = _check(tmp_path, "n.md", _notation_doc(row, r"a \leq b - 5"))
    assert _not_verified(report)


def test_a_notation_row_cannot_rewrite_a_relation(tmp_path):
    """Control: relations are not notation (the row is refused)."""
    report = _check(tmp_path, "n.md", _notation_doc(r"\geq -> <=", r"a \geq b"))
    assert _not_verified(report)


@pytest.mark.parametrize("relation", [r"\not\leq", r"\nleq", r"\stackrel{?}{\leq}",
                                      r"\overset{?}{\leq}", r"\lesssim", r"\approx", r"\ll",
                                      r"\coloneqq"])
def test_relations_that_are_not_read_are_refused(tmp_path, relation):
    """Control: a negated, approximate or questioned relation is never read as <=."""
    report = _check(tmp_path, "n.md", MD_SETTING + "\n$$ a " + relation + " b $$\n\nby hyp.\n")
    assert _not_verified(report)


# ---------------------------------------------------------------------------- grading

REFERENCE = """\
setting perceptron:
  vectors  w_star, x
  sequence w
  real     gamma > 0
  label    y
  nat      k
  per update: x, y
  assume   update:  w[k+1] = w[k] + y*x
  assume   margin:  y*<w_star, x> >= gamma

# points: 2
lemma one_step: <w_star, w[k+1]> >= <w_star, w[k]> + gamma
proof:
  <w_star, w[k+1]> = <w_star, w[k]> + y*<w_star, x>    by update
                   >= <w_star, w[k]> + gamma           by margin
"""
SETTING_TEXT = REFERENCE.split("# points")[0]


def _grade(tmp_path: Path, students: dict) -> dict:
    """{student: points of one_step} for submissions {student: file text}."""
    reference = tmp_path / "hw.proof"
    reference.write_text(REFERENCE, encoding="utf-8")
    subs = tmp_path / "subs"
    subs.mkdir()
    for name, text in students.items():
        (subs / f"{name}.proof").write_text(text, encoding="utf-8")
    grade_class(subs, reference, tmp_path / "out", jobs=1)
    with open(tmp_path / "out" / "summary.csv", encoding="utf-8") as f:
        return {row["student"]: row["one_step"] for row in csv.DictReader(f)}


WEAKER = {
    "trivial": "lemma one_step: 1 > 0\nproof:\n  1 > 0\n",
    "weaker_bound": ("lemma one_step: <w_star, w[k+1]> >= <w_star, w[k]>\nproof:\n"
                     "  <w_star, w[k+1]> = <w_star, w[k]> + y*<w_star, x>    by update\n"
                     "                   >= <w_star, w[k]>                   by margin\n"),
    "extra_given": ("lemma one_step: <w_star, w[k+1]> >= <w_star, w[k]> + gamma\n"
                    "  given extra: <w_star, x> = 5*y\nproof:\n"
                    "  <w_star, w[k+1]> = <w_star, w[k]> + y*<w_star, x>    by update\n"
                    "                   >= <w_star, w[k]> + gamma           by margin\n"),
}


@pytest.mark.parametrize("student", sorted(WEAKER))
def test_a_weaker_statement_earns_nothing_even_when_the_item_is_one_step(tmp_path, student):
    """`1 > 0`, a weaker bound or an extra given is not 'equivalent in the setting' to an item
    that follows from the assumptions in one step (it earned full points before main fixed
    grade/judge.py _equivalent)."""
    points = _grade(tmp_path, {student: SETTING_TEXT + WEAKER[student]})
    assert points[student] == "0", points


def test_the_goal_restated_as_an_assumption_earns_nothing(tmp_path):
    """Control: assuming the item forfeits it (a setting that is not the assignment's)."""
    cheat = SETTING_TEXT.replace("assume   margin:", "assume   cheat: <w_star, w[k+1]> >= "
                                 "<w_star, w[k]> + gamma\n  assume   margin:")
    text = cheat + ("lemma one_step: <w_star, w[k+1]> >= <w_star, w[k]> + gamma\nproof:\n"
                    "  <w_star, w[k+1]> >= <w_star, w[k]> + gamma    by cheat\n")
    assert _grade(tmp_path, {"cheat": text}) == {"cheat": "0"}


def test_a_per_update_symbol_made_constant_earns_nothing(tmp_path):
    """Control: with x, y constant the update is one vector added k times; the setting differs."""
    text = SETTING_TEXT.replace("  per update: x, y\n", "") + REFERENCE.split("# points: 2\n")[1]
    assert _grade(tmp_path, {"constant": text}) == {"constant": "0"}


def test_a_duplicate_lemma_earns_nothing(tmp_path):
    """Control: the item twice (a true proof, then a false one) makes the file malformed."""
    body = REFERENCE.split("# points: 2\n")[1]
    false = body.replace("+ gamma           by margin", "+ 2*gamma         by margin")
    assert _grade(tmp_path, {"dup": SETTING_TEXT + body + "\n" + false}) == {"dup": "0"}


def test_a_symlink_to_the_reference_earns_nothing(tmp_path):
    """Control: a submission that is a symbolic link is not followed."""
    reference = tmp_path / "hw.proof"
    reference.write_text(REFERENCE, encoding="utf-8")
    subs = tmp_path / "subs"
    subs.mkdir()
    os.symlink(reference, subs / "linked.proof")
    (subs / "other").mkdir()
    os.symlink(reference, subs / "other" / "hw.proof")
    grade_class(subs, reference, tmp_path / "out", jobs=1)
    with open(tmp_path / "out" / "summary.csv", encoding="utf-8") as f:
        rows = {row["student"]: row["one_step"] for row in csv.DictReader(f)}
    assert all(points == "0" for points in rows.values()), rows


def test_an_import_from_outside_the_submission_earns_nothing(tmp_path):
    """Control: `from ..hw import one_step` (the reference, one folder up) is refused."""
    text = "from ..hw import one_step\n\n" + SETTING_TEXT
    assert _grade(tmp_path, {"climb": text}) == {"climb": "0"}


def test_a_helper_file_with_a_cheating_setting_earns_nothing(tmp_path):
    """Control: the item proved by citing a lemma of the student's own helper file, whose
    setting assumes the item: the helper's assumption is not one of the assignment's."""
    reference = tmp_path / "hw.proof"
    reference.write_text(REFERENCE, encoding="utf-8")
    eve = tmp_path / "subs" / "eve"
    eve.mkdir(parents=True)
    cheat = SETTING_TEXT.replace("  assume   margin:", "  assume   cheat: <w_star, w[k+1]> >= "
                                 "<w_star, w[k]> + gamma\n  assume   margin:")
    (eve / "helper.proof").write_text(
        cheat + "lemma step1: <w_star, w[k+1]> >= <w_star, w[k]> + gamma\nproof:\n"
                "  <w_star, w[k+1]> >= <w_star, w[k]> + gamma    by cheat\n", encoding="utf-8")
    (eve / "hw.proof").write_text(
        "from helper import step1\n\n" + SETTING_TEXT +
        "lemma one_step: <w_star, w[k+1]> >= <w_star, w[k]> + gamma\nproof:\n"
        "  <w_star, w[k+1]> >= <w_star, w[k]> + gamma    by step1\n", encoding="utf-8")
    # forged certificates beside the files change nothing (they are checked, and skipped)
    (eve / ".certificates").mkdir()
    (eve / ".certificates" / "hw.proof.json").write_text(
        '{"format": "novikoff-certificates/1", "certificates": {}}', encoding="utf-8")
    grade_class(tmp_path / "subs", reference, tmp_path / "out", jobs=1)
    with open(tmp_path / "out" / "summary.csv", encoding="utf-8") as f:
        rows = {row["student"]: row["one_step"] for row in csv.DictReader(f)}
    assert rows == {"eve": "0"}, rows


# ---------------------------------------------------------------------------- .proof unicode

@pytest.mark.parametrize("statement", ["2²² = 16", "2³² = 2^6", "a²³ = a^6"])
def test_superscript_digits_read_as_the_number_they_show(tmp_path, statement):
    """`2²²` reads 2^22 (it was read as (2^2)^2, so `2²² = 16` was verified, before main's fix)."""
    path = tmp_path / "u.proof"
    path.write_text(f"setting s:\n  real a\n\nlemma claim: {statement}\nproof:\n  {statement}\n",
                    encoding="utf-8")
    report = Checker(timeout_ms=5000).check_file(path)
    assert _not_verified(report)


@pytest.mark.parametrize("statement", ["a² = a^2", "(−a)² = a^2", "√4·a = 2*a"])
def test_single_superscripts_and_unicode_minus_read_as_shown(tmp_path, statement):
    """Control."""
    path = tmp_path / "u.proof"
    path.write_text(f"setting s:\n  real a\n\nlemma claim: {statement}\nproof:\n  {statement}\n",
                    encoding="utf-8")
    report = Checker(timeout_ms=5000).check_file(path)
    assert report.error is None and _claim_status(report) == "verified"


# TeX's \sqrt without braces covers one token: \sqrt16 typesets as sqrt(1)*6 and \sqrt a^2 as
# (sqrt a)^2.  A display must be read as the reader sees it typeset (redteam 13: both were read
# as sqrt(16) and sqrt(a^2), and a false display verified).
SQRT_AS_TYPESET = {
    "digits": ("setting s:\n  nat k\nlemma claim", "\\sqrt16\\, k \\le 4k"),
    "superscript": ("setting s:\n  real a\nlemma claim\n  given neg: a <= -1",
                    "\\sqrt a^2 \\ge 1"),
}


@pytest.mark.parametrize("case", sorted(SQRT_AS_TYPESET))
def test_a_square_root_without_braces_is_read_as_typeset(tmp_path, case):
    block, display = SQRT_AS_TYPESET[case]
    report = _check(tmp_path, "n.md", f"```novikoff\n{block}\n```\n\n$$\n{display}\n$$\n")
    assert _not_verified(report)


def test_a_square_root_of_one_token_reads_as_in_tex(tmp_path):
    """\\sqrt a^2 is (sqrt a)^2, which is a for a >= 0 (sqrt(a^2) would be |a| too)."""
    report = _check(tmp_path, "n.md", "```novikoff\nsetting s:\n  real a\nlemma claim\n"
                                      "  given pos: a >= 0\n  by pos\n```\n\n$$\n"
                                      "\\sqrt a^2 = a\n$$\n")
    assert _claim_status(report) == "verified"


def test_several_unicode_superscript_digits_are_refused_with_a_position(tmp_path):
    report = _check(tmp_path, "n.md", "```novikoff\nsetting s:\n  nat k\nlemma claim\n```\n\n"
                                      "$$\nk²² = k^4\n$$\n")
    assert _not_verified(report)
    failed = [s for lemma in report.lemmas for s in lemma.steps if s.status != "verified"]
    assert failed and "several superscript digits" in failed[0].reason
