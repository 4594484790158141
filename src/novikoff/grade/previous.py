"""What an earlier run left in OUT_DIR: summary.csv's rows and junit.xml's testsuites.

Grading some students of a class (`--student NAME`) into the class's OUT_DIR updates their rows
and keeps everyone else's: the rows of summary.csv and the testsuites of junit.xml of the
students not graded in this run are kept as they are, when the files are of the same assignment
(the same item columns, in the same order, and the same maximum score).  A file of another
assignment, or one that cannot be read, is never merged: run.py refuses it when only some
students are graded (replacing it would lose the others' rows) and replaces it, with a warning,
when the whole folder is graded.
"""

from __future__ import annotations

import copy
import csv
import io
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

from .assignment import format_points

__all__ = ["PreviousSummary", "PreviousJunit", "read_previous_summary", "read_previous_junit",
           "unquote_name"]

_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_HEAD = ["student", "score", "max_score"]


def unquote_name(cell: str) -> str:
    """A student's name from summary.csv's student column (without the apostrophe written
    before a name that starts like a formula)."""
    return cell[1:] if cell.startswith("'") and cell[1:].startswith(_FORMULA_START) else cell


def _items_text(names) -> str:
    return ", ".join(names) or "none"


@dataclass
class PreviousSummary:
    """summary.csv as an earlier run wrote it.  exists: there is a file; problem: why it cannot
    be read as one ("" when it can); items: its item columns; rows: (student, cells) in file
    order; late: the column 'late' is there (its marks in marks)."""

    path: Path
    exists: bool = False
    problem: str = ""
    items: list = field(default_factory=list)
    rows: list = field(default_factory=list)
    max_scores: set = field(default_factory=set)
    late: bool = False
    marks: dict = field(default_factory=dict)

    def mismatch(self, items: list, max_score) -> str:
        """Why its rows cannot be kept beside this assignment's (items: (name, kind, points)),
        "" when they can (or there are none)."""
        if not self.exists:
            return ""
        if self.problem:
            return f"cannot be read as a summary ({self.problem})"
        names = [_csv_name(name) for name, _, _ in items]
        if self.items != names:
            return (f"is of another assignment (its items: {_items_text(self.items)}; this "
                    f"assignment's: {_items_text(names)})")
        other = self.max_scores - {format_points(max_score)}
        if other:
            return (f"has max_score {sorted(other)[0]}, where this assignment's is "
                    f"{format_points(max_score)} (the points changed)")
        return ""

    def discard(self) -> None:
        """Nothing of it is kept (it is replaced)."""
        self.rows, self.late, self.marks = [], False, {}


def _csv_name(text: str) -> str:
    return f"'{text}" if text.startswith(_FORMULA_START) else text


def read_previous_summary(out_dir: Path) -> PreviousSummary:
    previous = PreviousSummary(Path(out_dir) / "summary.csv")
    path = previous.path
    if not path.exists() and not path.is_symlink():
        return previous
    previous.exists = True
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except OSError as exc:
        previous.problem = exc.strerror or str(exc)
        return previous
    except UnicodeDecodeError:
        previous.problem = "it is not UTF-8 text"
        return previous
    try:
        table = list(csv.reader(io.StringIO(text, newline="")))
    except csv.Error as exc:
        previous.problem = f"not CSV: {exc}"
        return previous
    if not table or table[0][:3] != _HEAD:
        previous.problem = "its first line is not student,score,max_score,..."
        return previous
    header = table[0]
    previous.late = header[-1] == "late"
    previous.items = header[3:-1] if previous.late else header[3:]
    for number, cells in enumerate(table[1:], start=2):
        if not cells:
            continue
        if len(cells) != len(header):
            previous.problem = (f"line {number} has {len(cells)} cells, the header "
                                f"{len(header)}")
            previous.rows = []
            return previous
        name = unquote_name(cells[0])
        previous.rows.append((name, cells))
        previous.max_scores.add(cells[2])
        if previous.late:
            previous.marks[name] = cells[-1].strip().lower() == "yes"
    return previous


@dataclass
class PreviousJunit:
    """junit.xml as an earlier run wrote it: its testsuites (one per student) in file order."""

    path: Path
    exists: bool = False
    problem: str = ""
    suites: list = field(default_factory=list)  # (student, testsuite element)

    def mismatch(self, items: list, max_score) -> str:
        if not self.exists:
            return ""
        if self.problem:
            return f"cannot be read as JUnit results ({self.problem})"
        names = [name for name, _, _ in items]
        for student, suite in self.suites:
            cases = [case.get("name") for case in suite.findall("testcase")]
            if cases != names:
                return (f"is of another assignment ({student}'s testcases: "
                        f"{_items_text(cases)}; this assignment's items: {_items_text(names)})")
            top = suite.find("properties/property[@name='max_score']")
            if top is not None and top.get("value") != format_points(max_score):
                return (f"has max_score {top.get('value')}, where this assignment's is "
                        f"{format_points(max_score)} (the points changed)")
        return ""

    def discard(self) -> None:
        self.suites = []

    def kept(self, graded: set) -> list:
        """Copies of the testsuites of students not in graded."""
        return [(name, copy.deepcopy(suite)) for name, suite in self.suites
                if name not in graded]


def read_previous_junit(out_dir: Path) -> PreviousJunit:
    previous = PreviousJunit(Path(out_dir) / "junit.xml")
    path = previous.path
    if not path.exists() and not path.is_symlink():
        return previous
    previous.exists = True
    try:
        root = ET.parse(path).getroot()
    except OSError as exc:
        previous.problem = exc.strerror or str(exc)
        return previous
    except ET.ParseError as exc:
        previous.problem = f"not XML: {exc}"
        return previous
    if root.tag != "testsuites":
        previous.problem = f"its root is <{root.tag}>, not <testsuites>"
        return previous
    previous.suites = [(suite.get("name", ""), suite) for suite in root.findall("testsuite")]
    return previous
