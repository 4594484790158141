"""The homework of tests/homework/: a reference (assignment.md, with its .proof twin) and 20
students' submissions written in Markdown and LaTeX (notes/), each with a .proof twin (proof/)
that proves (or misproves) the same way.  Grading both folders gives every twin the same points
on every item, and the points written down below (each student's mistake is in the comment).
"""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import pytest

from novikoff.errors import InvalidArgument
from novikoff.grade import grade_class
from novikoff.grade.assignment import read_points
from novikoff.grade.submissions import Submission, find_submissions, prepare

HOMEWORK = Path(__file__).resolve().parent / "homework"
ITEMS = ("w_star_nonzero", "progress", "norm_growth", "mistake_bound", "mistake_bound_unit")

# Points per item, in ITEMS' order (the assignment's: 1, 3, 3, 2, 1), written before grading.
EXPECTED = {
    "ada": (1, 3, 3, 2, 1),    # right; \mathbf, \langle u, v\rangle (Markdown)
    "bao": (1, 3, 3, 2, 1),    # right; \boldsymbol{\theta}^{(k)}, u \cdot v, \|v\|_2 (LaTeX)
    "cai": (1, 3, 3, 2, 1),    # right; plain w_k, w^*; the bound as (R||w*||/gamma)^2
    "dana": (1, 3, 3, 2, 1),   # right; `% novikoff` comment blocks (LaTeX)
    "eli": (1, 3, 0, 0, 0),    # a wrong sign in the norm's expansion; 4 and 5 rest on it
    "fay": (1, 0, 3, 0, 0),    # a missing justification: the margin is not cited
    "gus": (1, 3, 3, 0, 0),    # an unjustified step: k*gamma <= ||w*|| sqrt(k) R by progress
    "hana": (1, 0, 3, 0, 0),   # restates the goal of 2 "by the margin"
    "ivan": (1, 3, 0, 0, 0),   # cites a false lemma (the norm does not grow)
    "jo": (0, 0, 0, 0, 0),     # weakens the setting: assume ||w*|| = 1 (every proof verified)
    "kim": (0, 0, 0, 0, 0),    # changes an assumption: ||x|| = R
    "lea": (1, 3, 3, 0, 0),    # 4 and 5 hidden in prose (inline math, no claim)
    "max": (1, 3, 3, 0, 0),    # a wrong index: sqrt(k+1), then the conclusion does not follow
    "nia": (1, 3, 3, 2, 1),    # right; \vec, |v| as a norm; a false bonus lemma nothing cites
    "omar": (1, 3, 3, 2, 0),   # 5 proved weaker: k <= 2/gamma^2
    "pia": (1, 3, 3, 2, 1),    # 2 stated the other way round (equivalent), derived upwards
    "quinn": (0, 3, 3, 2, 1),  # a line that cannot be read (\min_i) in 1: that lemma only
    "rui": (1, 3, 0, 2, 1),    # 3 named norm_grow
    "sam": (1, 3, 3, 0, 0),    # a justification in no row of the reasons table (Cauchy–Schwarz)
    "tess": (1, 3, 3, 0, 0),   # 4 in one step "by progress and norm growth"
}


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    out = tmp_path_factory.mktemp("homework")
    notes = grade_class(HOMEWORK / "notes", HOMEWORK / "assignment.md", out / "notes", jobs=2)
    proofs = grade_class(HOMEWORK / "proof", HOMEWORK / "assignment.proof", out / "proof",
                         jobs=2)
    return notes, proofs


def _points(result) -> dict:
    return {s.name: tuple(int(r.points) for r in s.items) for s in result.students}


def test_the_class_is_twenty_notes_submissions_each_with_a_proof_twin():
    notes = sorted(p for p in (HOMEWORK / "notes").iterdir())
    assert len(notes) == 20 and {p.suffix for p in notes} == {".md", ".tex"}
    assert sorted(p.stem for p in notes) == sorted(EXPECTED)
    assert sorted(p.stem for p in (HOMEWORK / "proof").iterdir()) == sorted(EXPECTED)


def test_the_references_are_the_same_assignment(graded):
    notes, proofs = graded
    assert notes.items == proofs.items
    assert [name for name, _, _ in notes.items] == list(ITEMS)
    assert notes.max_score == proofs.max_score == 10


def test_every_twin_gets_the_same_points_as_written_down(graded):
    notes, proofs = graded
    assert _points(notes) == _points(proofs) == EXPECTED


def test_every_twin_fails_for_the_same_reason(graded):
    notes, proofs = graded
    kinds = {s.name: [r.failure for r in s.items] for s in notes.students}
    twins = {s.name: [r.failure for r in s.items] for s in proofs.students}
    # sam's mistake_bound has a line that cannot be read; its statement is what its display
    # shows, so it has none, and mistake_bound_unit cannot cite it ("not verified") where the
    # .proof twin, whose statement stands, "rests on an unverified lemma".
    assert kinds.pop("sam")[3:] == ["not-verified", "not-verified"]
    assert twins.pop("sam")[3:] == ["not-verified", "unverified-citation"]
    assert kinds == twins
    assert kinds["jo"] == kinds["kim"] == ["setting"] * 5
    assert kinds["eli"][2] == "not-verified" and kinds["eli"][3] == "unverified-citation"
    assert kinds["ivan"][2] == "unverified-citation"
    assert kinds["lea"][3:] == ["missing", "missing"]
    assert kinds["omar"][4] == "statement"
    assert kinds["rui"][2] == "missing"


def test_a_notes_submission_gets_its_document_annotated(graded):
    notes, _ = graded
    jo = next(s for s in notes.students if s.name == "jo")
    assert "extra or changed assumption: `assume unit: ||w_star|| = 1`" in jo.items[0].note
    md = (notes.out_dir / "sam.md").read_text(encoding="utf-8")
    assert md.startswith("# assignment: sam — 7 / 10 points")
    assert "\\begin{novikoff}" in md and "% novikoff: theorem mistake_bound: FAILED" in md
    html = (notes.out_dir / "eli.html").read_text(encoding="utf-8")
    assert "Grading summary" in html and "novikoff: lemma norm_growth: FAILED" in html


@pytest.mark.e2e
def test_notes_graded_against_the_proof_reference_score_the_same(tmp_path):
    result = grade_class(HOMEWORK / "notes", HOMEWORK / "assignment.proof", tmp_path, jobs=2)
    assert _points(result) == EXPECTED
    assert sum((s.score for s in result.students), Fraction(0)) == sum(map(sum, EXPECTED.values()))


@pytest.mark.e2e
def test_with_certificates_required_every_twin_still_scores_the_same(tmp_path):
    import shutil

    from novikoff.certify.cli import certify_file

    copy = tmp_path / "homework"
    shutil.copytree(HOMEWORK, copy)
    # (the search's budget is wall-clock time: generous, so that a busy machine finds them too)
    for reference in ("assignment.md", "assignment.proof"):
        assert certify_file(copy / reference, budget_s=180.0)["left"] == 0
    notes = grade_class(copy / "notes", copy / "assignment.md", tmp_path / "n", jobs=2,
                        require_certificates=True)
    proofs = grade_class(copy / "proof", copy / "assignment.proof", tmp_path / "p", jobs=2,
                         require_certificates=True)
    assert _points(notes) == _points(proofs)
    assert _points(notes)["ada"] == EXPECTED["ada"]


BLOCK = "```novikoff\nsetting s:\n  real a\n```\n"
TEX_BLOCK = "\\begin{novikoff}\nsetting s:\n  real a\n\\end{novikoff}\n"


def test_the_folder_s_markdown_and_latex_files_are_submissions(tmp_path):
    for name in ("alice.md", "bob.tex", "carl.proof", "notes.txt", ".hidden.md", "dee.md"):
        (tmp_path / name).write_text(BLOCK, encoding="utf-8")
    (tmp_path / "dee").mkdir()
    found = {s.name: s for s in find_submissions(tmp_path)}
    assert sorted(found) == ["alice", "bob", "carl", "dee"]
    assert "which file? dee/ and dee.md are both submissions of dee" in found["dee"].problem


@pytest.mark.parametrize("files, graded", [
    ({"hw3.tex": TEX_BLOCK, "README.md": "# read me"}, "hw3.tex"),  # the assignment, as LaTeX
    ({"hw3.md": BLOCK, "hw3.proof": "", "hw3.tex": TEX_BLOCK}, "hw3.md"),  # its own name first
    ({"answers.tex": BLOCK}, None),  # a Markdown fence is no novikoff block in LaTeX
    ({"answers.md": BLOCK, "README.md": "no block here"}, "answers.md"),  # the only document
    ({"sub/hw3.md": BLOCK, "README.md": "# read me"}, "sub/hw3.md"),
    ({"a.md": BLOCK, "b.proof": ""}, None),  # two candidates, neither named hw3
    ({"README.md": "# no block"}, None),
])
def test_a_students_directory_grades_the_assignment_in_any_format(tmp_path, files, graded):
    student = tmp_path / "student"
    for name, text in files.items():
        (student / name).parent.mkdir(parents=True, exist_ok=True)
        (student / name).write_text(text, encoding="utf-8")
    private = tmp_path / "private"
    private.mkdir()
    prepared = prepare(Submission("student", str(student), "directory"), private, "hw3.md",
                       1 << 20)
    assert prepared.graded == graded
    if graded is None:
        assert prepared.problem.startswith("which file?")


def test_points_of_a_latex_reference_come_from_percent_comments(tmp_path):
    source = "\n".join([
        "% novikoff",
        "% setting s:",
        "%   real a",
        "% # points: 2",
        "% lemma first",
        "",
        "% points: 3",
        "% a comment line between",
        r"\begin{lemma}\label{lem:second}",
    ])
    points = read_points(tmp_path / "hw.tex", source, [("first", 5), ("second", 9)])
    assert points == {"first": 2, "second": 3}


def test_a_reference_must_be_a_proof_file_or_notes(tmp_path):
    (tmp_path / "hw.txt").write_text("x", encoding="utf-8")
    (tmp_path / "subs").mkdir()
    with pytest.raises(InvalidArgument, match="reference='.*hw.txt' is not a .proof file"):
        grade_class(tmp_path / "subs", tmp_path / "hw.txt", tmp_path / "out")


def test_the_assignment_rewritten_as_latex_is_the_same_reference(tmp_path):
    """`novikoff report --format tex` of the Markdown assignment is a LaTeX reference with the
    same items and points, against which the same submissions earn the same points."""
    from novikoff.notes.convert import markdown_to_latex

    (tmp_path / "assignment.tex").write_text(
        markdown_to_latex((HOMEWORK / "assignment.md").read_text(encoding="utf-8")),
        encoding="utf-8")
    (tmp_path / "class").mkdir()
    for name in ("ada.md", "jo.md", "omar.tex"):
        (tmp_path / "class" / name).write_bytes((HOMEWORK / "notes" / name).read_bytes())
    result = grade_class(tmp_path / "class", tmp_path / "assignment.tex", tmp_path / "out",
                         jobs=2)
    assert [(name, points) for name, _, points in result.items] == \
        list(zip(ITEMS, (1, 3, 3, 2, 1)))
    assert _points(result) == {name: EXPECTED[name] for name in ("ada", "jo", "omar")}
