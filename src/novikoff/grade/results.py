"""The grades: per item, per student, per class (plain data, passed between processes)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path

__all__ = ["FAILURES", "ItemResult", "StudentResult", "ClassResult"]

# The kinds of failure, for the class table ("most common failure"); each note says more.
FAILURES = {
    "missing": "no lemma of that name",
    "file": "the file does not check",
    "stopped": "the checker stopped (memory or a crash)",
    "kind": "a claim where a lemma is due (or the reverse)",
    "xfail": "marked xfail",
    "unverified-citation": "rests on an unverified lemma",
    "timed-out": "timed out (the grading limits)",
    "not-verified": "not verified",
    "statement": "states something else",
    "givens": "different givens",
    "setting": "different setting",
    "not-refuted": "claim not refuted",
    "overridden": "overridden by the instructor",
}


@dataclass(frozen=True)
class ItemResult:
    """One item for one student: the points earned (all or nothing, unless partial credit or an
    override says otherwise), why not all of them (failure: a key of FAILURES, "" when earned)
    and the note the student reads.  steps: the statuses of the student's lemma's checks, in
    order, recorded (credit.record_steps) only when that lemma states the assignment's
    statement in the assignment's setting, for partial credit; () otherwise.  overridden: the
    points before the instructor's override, None when not overridden."""

    name: str
    kind: str
    points: Fraction
    max_points: Fraction
    failure: str
    note: str
    steps: tuple = ()
    overridden: Fraction | None = None
    detail: str = ""  # Markdown: the failing step, its counterexample and the hint

    @property
    def earned(self) -> bool:
        return not self.failure


@dataclass
class StudentResult:
    """A student's grade.  problem: why their file was not checked, or why checking stopped
    ("" when it ran); notes: files left out of their private copy; documents: format ->
    feedback text (None where it could not be rendered); grader_problem: why the grade may be
    unfair to the student through no fault of theirs (the grader could not read their files,
    the grading host stopped), "" when none: such a run is reported loudly.  late: the
    instructor marked the submission late (--late, --roster); marked, never penalised."""

    name: str
    submission: str
    items: list
    graded_file: str | None = None
    problem: str = ""
    notes: list = field(default_factory=list)
    documents: dict = field(default_factory=dict)
    grader_problem: str = ""
    late: bool = False

    @property
    def score(self) -> Fraction:
        return sum((r.points for r in self.items), Fraction(0))

    @property
    def max_score(self) -> Fraction:
        return sum((r.max_points for r in self.items), Fraction(0))


@dataclass
class ClassResult:
    """Every student's grade, sorted by name, and the files written.

    students are those graded in this run; kept: the names of the students whose rows of
    summary.csv (and junit.xml) were kept from an earlier run (not graded in this one);
    overrides: the roster.Override applied; skipped_overrides: those of students not graded in
    this run; partial_credit: whether partial credit per step was on; late_marks: whether the
    run was told which submissions are late (--late, --roster, or an earlier run's marks);
    not_submitted: names on the roster with no submission; warnings: what the instructor should
    know (an earlier summary.csv replaced), printed by the command."""

    assignment: str
    items: list  # (name, kind, max points) of the assignment, in the reference's order
    students: list
    out_dir: Path
    files: list = field(default_factory=list)
    kept: list = field(default_factory=list)
    overrides: list = field(default_factory=list)
    skipped_overrides: list = field(default_factory=list)
    partial_credit: bool = False
    late_marks: bool = False
    not_submitted: list = field(default_factory=list)
    warnings: list = field(default_factory=list)

    @property
    def max_score(self) -> Fraction:
        return sum((points for _, _, points in self.items), Fraction(0))

    @property
    def grader_problems(self) -> list:
        """The students whose grade the grader could not make fairly (see
        StudentResult.grader_problem)."""
        return [s for s in self.students if s.grader_problem]

    def earned_by(self, item: str) -> int:
        """How many students earned the item."""
        return sum(1 for s in self.students for r in s.items if r.name == item and r.earned)

    def most_common_failure(self, item: str) -> tuple:
        """(failure key, count) of the item's most common failure; ("", 0) if none failed."""
        counts = Counter(r.failure for s in self.students for r in s.items
                         if r.name == item and r.failure)
        if not counts:
            return "", 0
        return min(counts.items(), key=lambda kv: (-kv[1], kv[0]))
