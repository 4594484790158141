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
import xml.etree.ElementTree as ET
from html import escape
from pathlib import Path

from .assignment import format_points
from .results import FAILURES, ClassResult, StudentResult

__all__ = ["output_stem", "write_documents", "write_summary_csv", "gradescope_results",
           "write_gradescope", "write_junit", "class_table", "printable"]

_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


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


def summary_csv(result: ClassResult) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["student", "score", "max_score"] + [_csv_cell(n) for n, _, _ in result.items])
    for student in result.students:
        earned = {r.name: r.points for r in student.items}
        writer.writerow([_csv_cell(student.name), format_points(student.score),
                         format_points(result.max_score)]
                        + [format_points(earned[name]) for name, _, _ in result.items])
    return out.getvalue()


def write_summary_csv(out_dir: Path, result: ClassResult) -> Path:
    path = out_dir / "summary.csv"
    path.write_text(summary_csv(result), encoding="utf-8")
    return path


def _number(value):
    """A JSON number: an int when whole, else a float (points are whole or decimal)."""
    return int(value) if value.denominator == 1 else float(value)


def gradescope_results(student: StudentResult) -> dict:
    """Gradescope's results.json for one student: the score and one test per item."""
    tests = [{"name": r.name, "score": _number(r.points), "max_score": _number(r.max_points),
              "status": "passed" if r.earned else "failed", "output": r.note,
              "visibility": "visible"} for r in student.items]
    output = [f"{format_points(student.score)} / {format_points(student.max_score)} points"]
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


def junit_xml(result: ClassResult) -> bytes:
    failures = sum(1 for s in result.students for r in s.items if not r.earned)
    tests = sum(len(s.items) for s in result.students)
    root = ET.Element("testsuites", name=_xml_text(f"novikoff grade: {result.assignment}"),
                      tests=str(tests), failures=str(failures))
    for student in result.students:
        failed = [r for r in student.items if not r.earned]
        suite = ET.SubElement(root, "testsuite", name=_xml_text(student.name),
                              tests=str(len(student.items)), failures=str(len(failed)))
        properties = ET.SubElement(suite, "properties")
        for key, value in (("score", format_points(student.score)),
                           ("max_score", format_points(student.max_score))):
            ET.SubElement(properties, "property", name=key, value=value)
        for r in student.items:
            case = ET.SubElement(suite, "testcase", classname=_xml_text(student.name),
                                 name=_xml_text(r.name))
            if not r.earned:
                failure = ET.SubElement(case, "failure", type=r.failure,
                                        message=_xml_text(FAILURES.get(r.failure, r.failure)))
                failure.text = _xml_text(r.note)
    ET.indent(root)
    return ET.tostring(root, encoding="utf-8", xml_declaration=True) + b"\n"


def write_junit(out_dir: Path, result: ClassResult) -> Path:
    path = out_dir / "junit.xml"
    path.write_bytes(junit_xml(result))
    return path


def printable(text: str) -> str:
    """Text safe to print on a terminal: control characters (escape sequences, line breaks)
    shown as escapes."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def class_table(result: ClassResult) -> str:
    """The class at a glance: per item, how many earned it and the most common failure; then
    the students whose file could not be checked."""
    n = len(result.students)
    mean = sum((s.score for s in result.students), 0) / n if n else 0
    lines = [f"{printable(result.assignment)}: {n} student{'s' if n != 1 else ''}, mean score "
             f"{float(mean):.2f} / {format_points(result.max_score)}"]
    rows = [("item", "points", "earned", "most common failure")]
    for name, _, points in result.items:
        failure, count = result.most_common_failure(name)
        rows.append((printable(name), format_points(points), f"{result.earned_by(name)}/{n}",
                     f"{FAILURES.get(failure, failure)} ({count})" if failure else "-"))
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    for i, row in enumerate(rows):
        lines.append("  ".join(cell.ljust(w) for cell, w in zip(row, widths)) + "  " + row[3])
        if i == 0:
            lines.append("  ".join("-" * w for w in widths) + "  " + "-" * len(row[3]))
    problems = [s for s in result.students if s.problem]
    if problems:
        lines.append("")
        lines.append(f"not checked ({len(problems)}):")
        lines += [f"  {printable(s.name)}: {printable(s.problem)}" for s in problems]
    return "\n".join(line.rstrip() for line in lines)
