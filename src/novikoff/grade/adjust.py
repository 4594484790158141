"""After grading, before writing: partial credit, the instructor's overrides, the late mark.

A student's grade comes back from their worker with its feedback documents already rendered
(the worker had the kernel's report; the grading process does not).  When the grade changes
here, the documents are amended in place: the title's score, and each changed row of the
"Grading summary" table, found by its exact old text (so nothing else can be touched); a change
that cannot be found that way, and the late mark, are said in a paragraph right after the
table.
"""

from __future__ import annotations

from html import escape

from ..errors import InvalidArgument
from .assignment import format_points
from .credit import partial_credit
from .outputs import LATE_NOTE
from .roster import apply_overrides

__all__ = ["Instructions", "adjust_student", "amend_documents"]


def adjust_student(student, assignment_name: str, *, partial: bool = False, overrides=(),
                   late: bool = False) -> list:
    """Apply partial credit (when partial), the overrides of this student and the late mark to
    the StudentResult, amend its documents, and return the overrides applied."""
    before = list(student.items)
    if partial:
        student.items = [partial_credit(r) for r in student.items]
    applied = apply_overrides(student, overrides) if overrides else []
    student.late = student.late or late
    if student.items != before or student.late:
        amend_documents(student, assignment_name, before)
    return applied


def _title(assignment_name: str, name: str, score, max_score) -> str:
    # as student.feedback writes it
    return (f"{assignment_name}: {name} — {format_points(score)} / {format_points(max_score)} "
            f"points")


def amend_documents(student, assignment_name: str, before: list) -> None:
    """Rewrite the Markdown and HTML documents of a student whose items were `before` when the
    documents were rendered."""
    old_score = sum((r.points for r in before), 0)
    old_title = _title(assignment_name, student.name, old_score, student.max_score)
    new_title = _title(assignment_name, student.name, student.score, student.max_score)
    changed = [(old, new) for old, new in zip(before, student.items) if old != new]
    for fmt, amend in (("md", _amend_markdown), ("html", _amend_html)):
        text = student.documents.get(fmt)
        if text:
            student.documents[fmt] = amend(text, old_title, new_title, changed, student.late)


def _amend_markdown(text: str, old_title: str, new_title: str, changed: list,
                    late: bool) -> str:
    from ..report.markdown import text as md

    lines = text.split("\n")
    if lines and lines[0] == f"# {md(old_title)}":
        lines[0] = f"# {md(new_title)}"
    start = lines.index("## Grading summary") if "## Grading summary" in lines else None
    left = []
    for old, new in changed:
        suffix = f" | {md(format_points(old.points))} | {md(format_points(old.max_points))} | " \
                 f"{md(old.note)} |"
        where = next((i for i in range(start or 0, len(lines)) if start is not None
                      and lines[i].startswith("| ") and f"`{old.name}`" in lines[i]
                      and lines[i].endswith(suffix)), None)
        if where is None:
            left.append(new)
            continue
        lines[where] = (lines[where][:-len(suffix)] + f" | {md(format_points(new.points))} | "
                        f"{md(format_points(new.max_points))} | {md(new.note)} |")
    extra = ([f"**{md(LATE_NOTE)}**"] if late else []) + [
        f"- `{r.name}`: {md(format_points(r.points))} / {md(format_points(r.max_points))} "
        f"points — {md(r.note)}" for r in left]
    if extra:
        at = _end_of_table(lines, start)
        lines[at:at] = ["\n".join(extra), ""]
    return "\n".join(lines)


def _end_of_table(lines: list, start) -> int:
    """The line after the summary table (after the title when there is none)."""
    if start is None:
        return 2 if len(lines) > 2 else len(lines)
    i = start + 2
    while i < len(lines) and lines[i].startswith("|"):
        i += 1
    return i + 1 if i < len(lines) else i


def _amend_html(text: str, old_title: str, new_title: str, changed: list, late: bool) -> str:
    for tag in ("title", "h1"):
        text = text.replace(f"<{tag}>{escape(old_title)}</{tag}>",
                            f"<{tag}>{escape(new_title)}</{tag}>", 1)
    start = text.find('<table class="summary">')
    end = text.find("</table>", start) if start >= 0 else -1
    left = []
    for old, new in changed:
        old_cells = (f'<td class="points">{escape(format_points(old.points))}</td>'
                     f'<td class="points">{escape(format_points(old.max_points))}</td>'
                     f"<td>{escape(old.note)}</td></tr>")
        new_cells = (f'<td class="points">{escape(format_points(new.points))}</td>'
                     f'<td class="points">{escape(format_points(new.max_points))}</td>'
                     f"<td>{escape(new.note)}</td></tr>")
        row = f"<code>{escape(old.name)}</code>"
        at = -1
        if end >= 0:
            for line_start in _line_starts(text, start, end):
                line_end = text.find("\n", line_start)
                line = text[line_start:line_end if line_end >= 0 else len(text)]
                if row in line and line.endswith(old_cells):
                    at = line_start + len(line) - len(old_cells)
                    break
        if at < 0:
            left.append(new)
            continue
        text = text[:at] + new_cells + text[at + len(old_cells):]
        end = text.find("</table>", start)
    extra = ([f'<p class="late"><strong>{escape(LATE_NOTE)}</strong></p>'] if late else []) + [
        f"<p><code>{escape(r.name)}</code>: {escape(format_points(r.points))} / "
        f"{escape(format_points(r.max_points))} points — {escape(r.note)}</p>" for r in left]
    if extra:
        if end >= 0:
            at = end + len("</table>")
        else:
            header = text.find("</header>")
            at = header + len("</header>") if header >= 0 else len(text)
        text = text[:at] + "\n" + "\n".join(extra) + text[at:]
    return text


def _line_starts(text: str, start: int, end: int):
    i = start
    while 0 <= i < end:
        yield i
        nxt = text.find("\n", i)
        i = nxt + 1 if nxt >= 0 else -1


class Instructions:
    """What the instructor asked of this run beyond grading: which students (students=), late
    marks (late=, roster=), overrides (overrides=), partial credit, and the earlier outputs of
    OUT_DIR to keep.  grade_class makes it before grading (prepare: every argument and file
    checked, InvalidArgument otherwise), calls start when the assignment is known, adjust for
    each student before writing their files, and hands previous_summary / previous_junit to
    the writers of summary.csv and junit.xml."""

    def __init__(self, submissions: list, out_dir, *, students=None, late=(), roster=None,
                 overrides=None, partial_credit: bool = False, junit: bool = False):
        from .previous import read_previous_junit, read_previous_summary
        from .roster import (late_students, read_overrides, read_roster, select_students)

        if not isinstance(partial_credit, bool):
            raise InvalidArgument(f"partial_credit={partial_credit!r} must be True or False")
        names = {s.name for s in submissions}
        self.out_dir = out_dir
        self.selection = students is not None
        self.submissions = select_students(submissions, students)
        self.partial = partial_credit
        self.late = late_students(late, names) if late is not None else set()
        self.roster, self.not_submitted = read_roster(roster, names) if roster is not None \
            else ({}, [])
        self.told_late = bool(self.late) or roster is not None
        self.overrides_path = overrides
        self.overrides = read_overrides(overrides, names) if overrides is not None else []
        self.previous_summary = read_previous_summary(out_dir)
        self.previous_junit = read_previous_junit(out_dir) if junit else None
        if self.selection:
            for previous in self._previous():
                if previous.problem:
                    raise InvalidArgument(self._refusal(out_dir, previous, previous.mismatch(
                        [], 0)))

    def _previous(self) -> list:
        return [p for p in (self.previous_summary, self.previous_junit) if p is not None]

    def _refusal(self, out_dir, previous, why: str) -> str:
        return (f"out_dir={str(out_dir)!r}: its {previous.path.name} {why}: grading only some "
                f"students would lose the other students' rows; grade the whole class (which "
                f"replaces it), or write to another OUT_DIR")

    def start(self, result) -> None:
        """The assignment is known (result.items): check the overrides' items and whether the
        earlier outputs are of this assignment (refused when only some students are graded,
        replaced with a warning otherwise)."""
        from .roster import check_overrides

        if self.overrides:
            check_overrides(self.overrides_path, self.overrides, result.items)
        for previous in self._previous():
            why = previous.mismatch(result.items, result.max_score)
            if not why:
                continue
            if self.selection:
                raise InvalidArgument(self._refusal(self.out_dir, previous, why))
            result.warnings.append(f"{previous.path} {why}: replaced by this run's grades")
            previous.discard()
        chosen = {s.name for s in self.submissions}
        result.skipped_overrides = [o for o in self.overrides if o.student not in chosen]
        result.partial_credit = self.partial
        result.late_marks = self.told_late or self.previous_summary.late
        result.not_submitted = list(self.not_submitted)

    def is_late(self, name: str) -> bool:
        if self.told_late:
            return name in self.late or self.roster.get(name, False)
        return self.previous_summary.marks.get(name, False)

    def adjust(self, result, student) -> None:
        """Partial credit, overrides and the late mark for one student of this run."""
        result.overrides += adjust_student(student, result.assignment, partial=self.partial,
                                           overrides=self.overrides,
                                           late=self.is_late(student.name))
