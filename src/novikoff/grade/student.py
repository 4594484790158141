"""Grade one student, in a worker process: copy their files, check, judge, write the feedback.

Runs inside the forked child of workers.py, which has already capped its memory and bounded Z3;
the assignment (with the reference's kernel objects) is inherited from the host by the fork.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from ..checker import Checker, FileReport
from ..errors import ProofSyntaxError
from ..language.lexer import read_source
from ..notes import NOTES_SUFFIXES
from .assignment import Assignment, format_points
from .credit import record_steps
from .judge import judge, not_checked
from .results import StudentResult
from .submissions import Submission, prepare, readable_name

__all__ = ["StudentTask", "grade_student", "stopped_student", "FORMATS"]

FORMATS = ("md", "html")


@dataclass(frozen=True)
class StudentTask:
    submission: Submission
    private: str  # an empty directory of this student's own
    assignment: Assignment
    support: tuple  # (source path, relative path) of files every student gets
    max_file_bytes: int
    query_timeout_ms: int
    budget: object  # workers.Budget


def grade_student(task: StudentTask) -> StudentResult:
    """Check the student's file in their private directory and judge it."""
    sub, assignment = task.submission, task.assignment
    private = Path(task.private)
    prepared = prepare(sub, private, assignment.file_name, task.max_file_bytes, task.support)
    os.chdir(private)  # this process only: paths in the reports read as the student wrote them
    result = StudentResult(sub.name, readable_name(sub.shown), [], prepared.graded,
                           notes=prepared.notes)
    if prepared.unreadable:
        result.grader_problem = (f"the grader could not read {', '.join(prepared.unreadable)} "
                                 f"(check the files' permissions and grade again)")
    if prepared.graded is None:
        result.problem = prepared.problem
        result.items = not_checked(assignment, "file", prepared.problem)
        report = _failure_report(prepared.problem, readable_name(sub.shown))
    else:
        report = Checker(timeout_ms=task.query_timeout_ms, confine=private,
                         parts=assignment.parts).check_file(
            prepared.graded)
        # The checks' statuses ride along for partial credit (applied, if asked, by the host).
        result.items = record_steps(assignment, report, judge(assignment, report, task.budget))
    result.documents = feedback(result, assignment, report)
    return result


def stopped_student(task: StudentTask, problem: str, failure: str,
                    grader_fault: bool) -> StudentResult:
    """The grade and feedback of a student whose check stopped (memory, time, a crash): nothing
    earned (failure: "stopped" or "timed-out"), and a report saying so.  grader_fault: the
    grader failed, not the student's file.  Runs in a fresh worker of its own."""
    sub, assignment = task.submission, task.assignment
    os.chdir(task.private)  # nothing else is read: the report is the problem alone
    result = StudentResult(sub.name, readable_name(sub.shown),
                           not_checked(assignment, failure, problem), problem=problem,
                           grader_problem=problem if grader_fault else "")
    report = _failure_report(problem, readable_name(sub.shown))
    result.documents = feedback(result, assignment, report)
    return result


def _failure_report(problem: str, where: str) -> FileReport:
    return FileReport(where, not_checked=problem)


def _notes_source(report: FileReport, graded) -> str | None:
    """The text of a graded Markdown or LaTeX submission (read in the student's private
    directory), None for a .proof file or a file that was not checked."""
    if graded is None or Path(graded).suffix not in NOTES_SUFFIXES or report.not_checked:
        return None
    try:
        return read_source(graded)
    except (OSError, ProofSyntaxError):  # not UTF-8: the report says why, with no copy
        return ""


def summary_rows(result: StudentResult) -> list:
    """(item, points earned, max points, note) rows for the feedback document."""
    rows = [(r.name, format_points(r.points), format_points(r.max_points), r.note)
            for r in result.items]
    rows += [("(files)", "", "", note) for note in result.notes]
    return rows


def feedback(result: StudentResult, assignment: Assignment, report: FileReport) -> dict:
    """The feedback documents (format -> text; None for a format that failed to render)."""
    from ..report.document import render
    from ..report.notes import feedback_document

    title = (f"{assignment.name}: {result.name} — {format_points(result.score)} / "
             f"{format_points(result.max_score)} points")
    rows = summary_rows(result)
    source = _notes_source(report, result.graded_file)
    out = {}
    for fmt in FORMATS:
        try:
            if source is not None:  # a Markdown or LaTeX submission: its own text, annotated
                markdown = Path(result.graded_file).suffix == ".md"
                out[fmt] = feedback_document(report, source, markdown, fmt, title=title,
                                             summary=rows)
            else:
                out[fmt] = render(report, fmt, summary=rows, title=title)
        except Exception as exc:  # noqa: BLE001 -- the grade stands without its document
            out[fmt] = None
            result.notes.append(f"the {fmt} report could not be written "
                                f"({type(exc).__name__}: {exc})")
    return out
