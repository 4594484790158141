"""What grading writes: feedback documents, summary.csv, Gradescope results, JUnit XML, a table.

Every name here comes from a student's file or directory name, so it may hold anything a file
name can: quotes, commas, `<script>`, control characters.  The CSV module quotes it (and a cell
that a spreadsheet would read as a formula gets a leading apostrophe), JSON escapes it, XML text
drops the characters XML 1.0 cannot hold, HTML escaping is the document renderer's, and the
terminal shows control characters as escapes.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import math
import xml.etree.ElementTree as ET
from fractions import Fraction
from html import escape
from pathlib import Path

from .assignment import format_points
from .results import FAILURES, ClassResult, StudentResult

__all__ = ["output_stem", "write_documents", "write_summary_csv", "gradescope_results",
           "write_gradescope", "write_junit", "class_table", "printable", "histogram",
           "LATE_NOTE"]

_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
LATE_NOTE = "Late submission (marked by the instructor)."


def output_stem(name: str) -> str:
    """The name of a student's output files: their name, shortened (with a digest, so that two
    long names stay apart) when it would not fit a file name."""
    if len(name.encode("utf-8")) <= 200:
        return name
    digest = hashlib.sha256(name.encode("utf-8")).hexdigest()[:10]
    short = name.encode("utf-8")[:180].decode("utf-8", "ignore")
    return f"{short}-{digest}"


def write_documents(out_dir: Path, student: StudentResult) -> list:
    """STUDENT.md and STUDENT.html.  A document that could not be rendered is replaced by a
    short page with the grade, so that every student gets a file."""
    written = []
    for fmt in ("md", "html"):
        text = student.documents.get(fmt)
        if text is None:
            text = _plain_document(student, fmt)
        path = out_dir / f"{output_stem(student.name)}.{fmt}"
        path.write_text(text, encoding="utf-8")
        written.append(path)
    return written


def _plain_document(student: StudentResult, fmt: str) -> str:
    lines = [f"{student.name}: {format_points(student.score)} / "
             f"{format_points(student.max_score)} points"]
    if student.late:
        lines.append(LATE_NOTE)
    if student.problem:
        lines.append(student.problem)
    lines += [f"{r.name}: {format_points(r.points)} / {format_points(r.max_points)} — {r.note}"
              for r in student.items]
    lines += student.notes
    if fmt == "html":
        body = "\n".join(f"<p>{escape(line)}</p>" for line in lines)
        return f"<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"></head><body>\n{body}\n" \
               f"</body></html>\n"
    return "\n\n".join(lines) + "\n"


def _csv_cell(text: str) -> str:
    return f"'{text}" if text.startswith(_FORMULA_START) else text


def summary_csv(result: ClassResult, previous=None) -> str:
    """One row per student, sorted by name: this run's students, and the rows of previous (a
    previous.PreviousSummary of the same assignment) of the students not graded in this run,
    as they were (their names in result.kept).  A last column `late` (yes/no) when the run
    knows which submissions are late (result.late_marks); a kept row without a mark gets ""."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    late = result.late_marks
    writer.writerow(["student", "score", "max_score"] + [_csv_cell(n) for n, _, _ in result.items]
                    + (["late"] if late else []))
    rows = []
    for student in result.students:
        earned = {r.name: r.points for r in student.items}
        rows.append((student.name, [_csv_cell(student.name), format_points(student.score),
                                    format_points(result.max_score)]
                     + [format_points(earned[name]) for name, _, _ in result.items]
                     + (["yes" if student.late else "no"] if late else [])))
    graded = {s.name for s in result.students}
    kept = [(name, list(cells)) for name, cells in (previous.rows if previous else [])
            if name not in graded]
    for _, cells in kept:
        if late and not previous.late:
            cells.append("")
    result.kept = sorted(name for name, _ in kept)
    for _, cells in sorted(rows + kept, key=lambda row: row[0]):
        writer.writerow(cells)
    return out.getvalue()


def write_summary_csv(out_dir: Path, result: ClassResult, previous=None) -> Path:
    path = out_dir / "summary.csv"
    path.write_text(summary_csv(result, previous), encoding="utf-8")
    return path


def _number(value):
    """A JSON number: an int when whole, else a float (points are whole or decimal)."""
    return int(value) if value.denominator == 1 else float(value)


def gradescope_results(student: StudentResult) -> dict:
    """Gradescope's results.json for one student: the score and one test per item."""
    tests = [{"name": r.name, "score": _number(r.points), "max_score": _number(r.max_points),
              "status": "passed" if r.earned else "failed",
              "output": r.note + (f"\n\n{r.detail}" if r.detail else ""),
              "output_format": "md", "visibility": "visible"} for r in student.items]
    output = [f"{format_points(student.score)} / {format_points(student.max_score)} points"]
    output += [LATE_NOTE] if student.late else []
    output += [student.problem] if student.problem else []
    output += student.notes
    return {"score": _number(student.score), "output": "\n".join(output),
            "visibility": "visible", "tests": tests}


def write_gradescope(out_dir: Path, student: StudentResult, results_dir: Path | None) -> list:
    """OUT_DIR/STUDENT.results.json, and results_dir/results.json when given (inside a
    Gradescope autograder, for the one submission graded)."""
    text = json.dumps(gradescope_results(student), indent=2, ensure_ascii=False) + "\n"
    path = out_dir / f"{output_stem(student.name)}.results.json"
    path.write_text(text, encoding="utf-8")
    written = [path]
    if results_dir is not None:
        autograder = Path(results_dir) / "results.json"
        autograder.write_text(text, encoding="utf-8")
        written.append(autograder)
    return written


def _xml_text(text: str) -> str:
    """Text XML 1.0 can hold: other characters (control characters, lone surrogates) become
    U+FFFD."""
    def ok(c: str) -> bool:
        n = ord(c)
        return n in (0x9, 0xA, 0xD) or 0x20 <= n <= 0xD7FF or 0xE000 <= n <= 0xFFFD \
            or 0x10000 <= n <= 0x10FFFF
    return "".join(c if ok(c) else "\ufffd" for c in text)


def junit_xml(result: ClassResult, previous=None) -> bytes:
    """One testsuite per student, sorted by name: this run's students, and the testsuites of
    previous (a previous.PreviousJunit of the same assignment) of the students not graded in
    this run, as they were."""
    graded = {_xml_text(s.name) for s in result.students}
    kept = previous.kept(graded) if previous is not None else []
    suites = []
    for student in result.students:
        failed = [r for r in student.items if not r.earned]
        suite = ET.Element("testsuite", name=_xml_text(student.name),
                           tests=str(len(student.items)), failures=str(len(failed)))
        suites.append((_xml_text(student.name), suite))
        properties = ET.SubElement(suite, "properties")
        marks = (("score", format_points(student.score)),
                 ("max_score", format_points(student.max_score)))
        if result.late_marks:
            marks += (("late", "yes" if student.late else "no"),)
        for key, value in marks:
            ET.SubElement(properties, "property", name=key, value=value)
        for r in student.items:
            case = ET.SubElement(suite, "testcase", classname=_xml_text(student.name),
                                 name=_xml_text(r.name))
            if not r.earned:
                failure = ET.SubElement(case, "failure", type=r.failure,
                                        message=_xml_text(FAILURES.get(r.failure, r.failure)))
                failure.text = _xml_text(r.note)

    def count(suite, key: str) -> int:
        value = suite.get(key, "0")
        return int(value) if value.isdigit() else 0

    everyone = sorted(suites + kept, key=lambda pair: pair[0])
    root = ET.Element("testsuites", name=_xml_text(f"novikoff grade: {result.assignment}"),
                      tests=str(sum(count(s, "tests") for _, s in everyone)),
                      failures=str(sum(count(s, "failures") for _, s in everyone)))
    root.extend(suite for _, suite in everyone)
    ET.indent(root)
    return ET.tostring(root, encoding="utf-8", xml_declaration=True) + b"\n"


def write_junit(out_dir: Path, result: ClassResult, previous=None) -> Path:
    path = out_dir / "junit.xml"
    path.write_bytes(junit_xml(result, previous))
    return path


def printable(text: str) -> str:
    """Text safe to print on a terminal: control characters (escape sequences, line breaks)
    shown as escapes."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def class_table(result: ClassResult) -> str:
    """The class at a glance: per item, how many earned it (and what percent of the class), the
    most common failure; a histogram of the scores; the late submissions, the instructor's
    overrides, the rows kept from an earlier run; then the students whose file could not be
    checked."""
    n = len(result.students)
    scores = sorted(s.score for s in result.students)
    mean = sum(scores, Fraction(0)) / n if n else 0
    head = (f"{printable(result.assignment)}: {n} student{'s' if n != 1 else ''}, mean score "
            f"{float(mean):.2f} / {format_points(result.max_score)}")
    if n:
        head += f", median {_median(scores)}"
    lines = [head]
    if result.partial_credit:
        credited = sum(1 for s in result.students for r in s.items
                       if not r.earned and r.points > 0 and r.overridden is None)
        lines.append(f"partial credit per step: on ({credited} lemma"
                     f"{'s' if credited != 1 else ''} credited in part)")
    rows = [("item", "points", "earned", "most common failure")]
    for name, _, points in result.items:
        failure, count = result.most_common_failure(name)
        earned = result.earned_by(name)
        rows.append((printable(name), format_points(points),
                     f"{earned}/{n} {_percent(earned, n):>4}",
                     f"{FAILURES.get(failure, failure)} ({count})" if failure else "-"))
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    for i, row in enumerate(rows):
        lines.append("  ".join(cell.ljust(w) for cell, w in zip(row, widths)) + "  " + row[3])
        if i == 0:
            lines.append("  ".join("-" * w for w in widths) + "  " + "-" * len(row[3]))
    if n and result.max_score > 0:
        lines.append("")
        lines += histogram(scores, result.max_score)
    late = [s for s in result.students if s.late]
    if late:
        lines.append("")
        lines.append(f"late ({len(late)}): " + ", ".join(printable(s.name) for s in late))
    if result.overrides:
        lines.append("")
        lines.append(f"overridden by the instructor ({len(result.overrides)}):")
        lines += [f"  {printable(o.student)} {printable(o.item)}: {format_points(o.points)} "
                  f"(was {format_points(o.was)}) -- {printable(o.reason)} ({printable(o.where)})"
                  for o in result.overrides]
    if result.skipped_overrides:
        k = len(result.skipped_overrides)
        lines.append(f"{k} override{'s' if k != 1 else ''} of students not graded in this run "
                     f"not applied (their rows are kept as they were)")
    if result.kept:
        k = len(result.kept)
        lines.append("")
        lines.append(f"summary.csv also keeps {k} student{'s' if k != 1 else ''} not graded in "
                     f"this run, as an earlier run graded {'them' if k != 1 else 'it'} "
                     f"({n + k} rows)")
    if result.not_submitted:
        lines.append("")
        lines.append(f"on the roster without a submission ({len(result.not_submitted)}): "
                     + ", ".join(printable(name) for name in result.not_submitted))
    problems = [s for s in result.students if s.problem]
    if problems:
        lines.append("")
        lines.append(f"not checked ({len(problems)}):")
        lines += [f"  {printable(s.name)}: {printable(s.problem)}" for s in problems]
    return "\n".join(line.rstrip() for line in lines)


def _percent(k: int, n: int) -> str:
    """k of n as a whole percent, rounded half up ("-" when n is 0)."""
    if not n:
        return "-"
    return f"{math.floor(Fraction(100 * k, n) + Fraction(1, 2))}%"


def _median(scores: list) -> str:
    mid = len(scores) // 2
    value = scores[mid] if len(scores) % 2 else (scores[mid - 1] + scores[mid]) / 2
    return format_points(Fraction(math.floor(value * 100), 100))


def _bin_width(max_score: Fraction) -> Fraction:
    """1 point for up to 20 points; above, the smallest of 1, 2, 5, 10, 20, 50... that makes at
    most 20 bins."""
    width = Fraction(1)
    while max_score / width > 20:
        for factor in (2, Fraction(5, 2), 2):
            width *= factor
            if max_score / width <= 20:
                break
    return width


HISTOGRAM_WIDTH = 40  # the longest bar, in characters


def histogram(scores: list, max_score: Fraction) -> list:
    """Text bars of the scores: a bin [a, b) per point (wider when the maximum is over 20
    points, see _bin_width), from 0 up, then the full score alone; each bar with its count."""
    width = _bin_width(max_score)
    bins = []  # (label, count)
    low = Fraction(0)
    while low < max_score:
        high = min(low + width, max_score)
        bins.append((f"[{format_points(low)}, {format_points(high)})",
                     sum(1 for s in scores if low <= s < high)))
        low = high
    bins.append((format_points(max_score), sum(1 for s in scores if s >= max_score)))
    most = max(count for _, count in bins)
    scale = min(Fraction(1), Fraction(HISTOGRAM_WIDTH, most)) if most else Fraction(1)
    label_width = max(len(label) for label, _ in bins)
    lines = [f"scores ({len(scores)} student{'s' if len(scores) != 1 else ''}):"]
    for label, count in bins:
        bar = "#" * (math.ceil(count * scale) if count else 0)
        lines.append(f"  {label.rjust(label_width)}  {bar}{' ' if bar else ''}{count}")
    return lines
