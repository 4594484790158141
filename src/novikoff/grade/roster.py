"""What the instructor tells the grader about the class: which students to grade (--student),
which submissions are late (--late, --roster FILE.csv) and which grades they override
(--overrides FILE.csv).

Every name is a student's name as the grader shows it (summary.csv's `student` column; a name
written there with a leading apostrophe, which keeps spreadsheets from reading it as a formula,
may be written either way).  A bad argument or file raises InvalidArgument naming the argument
and, for a file, FILE:LINE.
"""

from __future__ import annotations

import csv
import difflib
import io
import re
from dataclasses import dataclass, replace
from fractions import Fraction
from pathlib import Path

from ..errors import InvalidArgument
from .assignment import format_points
from .results import StudentResult

__all__ = ["Override", "select_students", "late_students", "read_roster", "read_overrides",
           "check_overrides", "apply_overrides", "LATE_VALUES"]

LATE_VALUES = {"yes": True, "no": False, "true": True, "false": False, "1": True, "0": False,
               "": False}
_NUMBER = re.compile(r"^\d+(\.\d+)?$")
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_MAX_SHOWN = 5  # problems of a file listed in one message


@dataclass(frozen=True)
class Override:
    """An instructor's grade for one item of one student: points, why (reason), and where it
    was written (FILE:LINE).  was: the points the grader gave, once applied."""

    student: str
    item: str
    points: Fraction
    reason: str
    where: str
    was: Fraction | None = None


def _names_list(argument: str, value) -> list:
    """value as a list of names, or InvalidArgument."""
    names = None
    if not isinstance(value, (str, bytes)):
        try:
            names = list(value)
        except TypeError:
            names = None
    if names is None or not all(isinstance(v, str) for v in names):
        raise InvalidArgument(f"{argument}={value!r} must be a list of student names, like "
                              f"['ada', 'ben']")
    return names


def _suggest(name: str, names) -> str:
    close = difflib.get_close_matches(name, list(names), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def match_name(text: str, names) -> str | None:
    """The student a name written by the instructor stands for: itself, or without the
    apostrophe summary.csv puts before a name that starts like a formula."""
    text = text.strip()
    if text in names:
        return text
    if text.startswith("'") and text[1:].startswith(_FORMULA_START) and text[1:] in names:
        return text[1:]
    return None


def _known(argument: str, value, wanted: list, names) -> list:
    """wanted, as the students' names, or InvalidArgument naming every unknown one."""
    out, unknown = [], []
    for name in wanted:
        found = match_name(name, names)
        if found is None:
            unknown.append(f"{name!r}{_suggest(name.strip(), names)}")
        else:
            out.append(found)
    if unknown:
        raise InvalidArgument(f"{argument}={value!r}: no submission of {', '.join(unknown)} in "
                              f"the folder")
    return out


def select_students(submissions: list, students) -> list:
    """The submissions of the students named (all of them when students is None)."""
    if students is None:
        return submissions
    wanted = _names_list("students", students)
    if not wanted:
        raise InvalidArgument(f"students={wanted!r} names no student (None grades them all)")
    chosen = set(_known("students", wanted, wanted, {s.name for s in submissions}))
    return [s for s in submissions if s.name in chosen]


def late_students(late, names) -> set:
    """The students --late names (each must have a submission)."""
    wanted = _names_list("late", late)
    return set(_known("late", wanted, wanted, set(names)))


# ---------------------------------------------------------------------------- CSV files

def _rows(argument: str, path) -> tuple:
    """(header as lower-case names, [(line, {column: cell})]) of a CSV file (UTF-8, with or
    without a byte-order mark; commas, or semicolons as some spreadsheets write)."""
    shown = str(path)
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise InvalidArgument(f"{argument}={shown!r} cannot be read "
                              f"({exc.strerror or exc})") from None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[:exc.start].count(b"\n") + 1
        raise InvalidArgument(f"{argument}={shown!r}: {shown}:{line}: not UTF-8 text (save the "
                              f"file as UTF-8 CSV)") from None
    first = text.split("\n", 1)[0]
    delimiter = ";" if ";" in first and "," not in first else ","
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    try:
        header = next(reader, None)
        if header is None:
            raise InvalidArgument(f"{argument}={shown!r}: {shown}:1: the file is empty (it "
                                  f"needs a header line)")
        header = [cell.strip().lower() for cell in header]
        rows = []
        for cells in reader:
            if not any(cell.strip() for cell in cells):
                continue
            if len(cells) > len(header):
                raise InvalidArgument(f"{argument}={shown!r}: {shown}:{reader.line_num}: "
                                      f"{len(cells)} cells, but the header has {len(header)} "
                                      f"columns")
            cells += [""] * (len(header) - len(cells))
            rows.append((reader.line_num, dict(zip(header, cells))))
    except csv.Error as exc:
        raise InvalidArgument(f"{argument}={shown!r}: {shown}:{reader.line_num}: not CSV "
                              f"({exc})") from None
    return header, rows


def _require(argument: str, path, header: list, columns: tuple) -> None:
    missing = [c for c in columns if c not in header]
    if missing:
        raise InvalidArgument(f"{argument}={str(path)!r}: {path}:1: no column "
                              f"{', '.join(missing)} (the header must name the columns "
                              f"{', '.join(columns)}; it has {', '.join(header) or 'none'})")
    twice = sorted({c for c in header if c and header.count(c) > 1})
    if twice:
        raise InvalidArgument(f"{argument}={str(path)!r}: {path}:1: the column {twice[0]} "
                              f"appears twice")


def _refuse(argument: str, path, problems: list) -> None:
    if problems:
        more = len(problems) - _MAX_SHOWN
        shown = "; ".join(problems[:_MAX_SHOWN]) + (f"; and {more} more" if more > 0 else "")
        raise InvalidArgument(f"{argument}={str(path)!r}: {shown}")


def read_roster(path, names) -> tuple:
    """({student: late} for the students of the folder on the roster, [names on the roster
    without a submission]).  The roster is a CSV file with a `student` and a `late` column
    (yes/no, true/false, 1/0, any case; empty is no); other columns are ignored."""
    header, rows = _rows("roster", path)
    _require("roster", path, header, ("student", "late"))
    marks, absent, seen, problems = {}, [], {}, []
    for line, row in rows:
        where = f"{path}:{line}"
        written = row["student"].strip()
        value = row["late"].strip().lower()
        if not written:
            problems.append(f"{where}: no student name")
            continue
        if value not in LATE_VALUES:
            problems.append(f"{where}: late={row['late'].strip()!r} must be yes or no (or "
                            f"true/false, 1/0)")
            continue
        name = match_name(written, names)
        key = name if name is not None else written
        if key in seen:
            problems.append(f"{where}: {written!r} is on the roster twice (line {seen[key]})")
            continue
        seen[key] = line
        if name is None:
            absent.append(written)
        else:
            marks[name] = LATE_VALUES[value]
    _refuse("roster", path, problems)
    return marks, absent


def read_overrides(path, names) -> list:
    """The overrides of a CSV file with the columns student, item, points, reason (others are
    ignored): each student must have a submission, points must be a number >= 0, the reason
    must be given, and a student's item is overridden once.  The items and their maximum are
    checked against the assignment by check_overrides."""
    header, rows = _rows("overrides", path)
    _require("overrides", path, header, ("student", "item", "points", "reason"))
    out, seen, problems = [], {}, []
    for line, row in rows:
        where = f"{path}:{line}"
        written, item = row["student"].strip(), row["item"].strip()
        points, reason = row["points"].strip(), " ".join(row["reason"].split())
        name = match_name(written, names)
        if name is None:
            problems.append(f"{where}: no submission of {written!r} in the folder"
                            f"{_suggest(written, names)}" if written else
                            f"{where}: no student name")
            continue
        if not item:
            problems.append(f"{where}: no item name")
            continue
        if not _NUMBER.match(points):
            problems.append(f"{where}: points={points!r} must be a number >= 0 (like 2 or 1.5)")
            continue
        if not reason:
            problems.append(f"{where}: no reason (the student reads it in their report)")
            continue
        if (name, item) in seen:
            problems.append(f"{where}: {name}'s {item} is overridden twice (line "
                            f"{seen[name, item]})")
            continue
        seen[name, item] = line
        out.append(Override(name, item, Fraction(points), reason, where))
    _refuse("overrides", path, problems)
    return out


def check_overrides(path, overrides: list, items: list) -> None:
    """Every override names an item of the assignment (items: (name, kind, points)) and gives
    at most its points."""
    points = {name: p for name, _, p in items}
    problems = []
    for o in overrides:
        if o.item not in points:
            problems.append(f"{o.where}: no item {o.item!r} in the assignment"
                            f"{_suggest(o.item, points)} (its items: {', '.join(points)})")
        elif o.points > points[o.item]:
            problems.append(f"{o.where}: points={format_points(o.points)} is more than "
                            f"{o.item}'s {format_points(points[o.item])}")
    _refuse("overrides", path, problems)


def apply_overrides(student: StudentResult, overrides: list) -> list:
    """Give the student's items the points of their overrides; the note says so and what the
    grader gave.  Returns the overrides applied (with was)."""
    mine = {o.item: o for o in overrides if o.student == student.name}
    applied, items = [], []
    for r in student.items:
        o = mine.get(r.name)
        if o is None:
            items.append(r)
            continue
        was = r.points
        note = (f"overridden by the instructor: {o.reason} (was {format_points(was)}) — the "
                f"grader's note: {r.note}")
        # Full points earn the item; fewer keep the grader's reason (the class table's most
        # common failure), or say "overridden" for an item the grader had given in full.
        failure = "" if o.points == r.max_points else (r.failure or "overridden")
        items.append(replace(r, points=o.points, note=note, failure=failure, overridden=was))
        applied.append(replace(o, was=was))
    student.items = items
    return applied
