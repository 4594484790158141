"""The assignment: the reference file's lemmas and claims, their points, and what each one states.

An assignment is a `.proof` file whose every lemma the instructor has proved (the reference): its
lemmas (and `claim ... refuted by run` lines) are the items students must prove (or refute), in
the reference's settings.  Points come from a comment directly above an item,

    # points: 3
    lemma progress: <w_star, w[k]> >= k*gamma

or from ASSIGNMENT.toml beside ASSIGNMENT.proof (`[points]` then `progress = 3`); an item with
neither is worth 1 point.  The reference must check cleanly: every lemma verified, every claim
refuted by its run; otherwise there is nothing to grade against (AssignmentError).

What an item states is kept as the kernel elaborated it (its formula and its setting's kinds,
declarations and assumptions), so that a submission is compared with the kernel's equality of
formulas, never with source text (see judge.py).
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path

from ..errors import NovikoffError

__all__ = ["AssignmentError", "Item", "Assignment", "load_assignment", "read_points",
           "read_policy", "POLICIES",
           "setting_signature", "format_points", "ITEM_KINDS"]

ITEM_KINDS = ("lemma", "theorem", "claim")
DEFAULT_POINTS = Fraction(1)
# A comment line: `#` (a .proof file, a novikoff block), `%` or `% #` (LaTeX, and a `% novikoff`
# comment block).
_COMMENT = r"^\s*(?:%\s*#?|#)\s*"
_DIRECTIVE = re.compile(_COMMENT + r"points\s*:(.*)$", re.IGNORECASE)
_POLICY = re.compile(_COMMENT + r"policy\s*:(.*)$", re.IGNORECASE)
# The grading policies an assignment may set, with their defaults: cite_earlier_parts, "you may
# use the result of an earlier part even if you did not prove it".
POLICIES = {"cite_earlier_parts": False}
_YES_NO = {"yes": True, "true": True, "on": True, "no": False, "false": False, "off": False}
_NUMBER = re.compile(r"^\d+(\.\d+)?$")


class AssignmentError(NovikoffError):
    """The reference cannot be graded against: it does not check cleanly, or its points are
    malformed.  The message is one line and names the lemma or the line."""


@dataclass
class Item:
    """One lemma (or claim) of the assignment, as the reference's kernel elaborated it.

    formula: the kernel formula the lemma states (givens => statement), None for a claim;
    signature: setting_signature() of its setting, None for a claim; scope: the reference's
    elaborated setting (its source lines name assumptions in feedback); statement: for a lemma
    the source text (for messages only), for a claim the catalogue sentence its run refutes
    (compared as such: it comes from the witness catalogue, not from the student's text).
    """

    name: str
    kind: str
    line: int
    points: Fraction
    statement: str
    givens: tuple = ()
    formula: object = None
    signature: tuple | None = None
    scope: object = None

    @property
    def is_claim(self) -> bool:
        return self.kind == "claim"


@dataclass
class Assignment:
    path: str  # the reference as given
    name: str  # its stem: the assignment's name in titles
    file_name: str  # the name a student's file should have (ASSIGNMENT.proof)
    items: list
    policy: dict = field(default_factory=lambda: dict(POLICIES))

    @property
    def parts(self) -> tuple:
        """(name, statement) of the lemmas a later lemma may cite unproved (the checker's
        parts), in order: all of them under cite_earlier_parts, else none."""
        if not self.policy["cite_earlier_parts"]:
            return ()
        return tuple((item.name, item.formula) for item in self.items if not item.is_claim)

    @property
    def max_score(self) -> Fraction:
        return sum((item.points for item in self.items), Fraction(0))


def setting_signature(setting) -> tuple:
    """What a setting means to the kernel: every symbol with its kind (per update included), the
    declarations the kernel derived (sign constraints among them), and the assumptions' formulas.
    Two settings with equal signatures give the same lemmas; names of settings and assumptions do
    not matter, nor does their order."""
    return (frozenset((name, setting.kind_of(name)) for name in setting.kinds),
            frozenset(setting.declarations),
            frozenset(setting.assumptions.values()))


def format_points(value: Fraction) -> str:
    """3 -> '3', 5/2 -> '2.5' (points are whole or decimal numbers, so the expansion ends)."""
    if value.denominator == 1:
        return str(value.numerator)
    whole, rest = divmod(value.numerator, value.denominator)
    digits = []
    while rest and len(digits) < 12:
        rest *= 10
        digit, rest = divmod(rest, value.denominator)
        digits.append(str(digit))
    return f"{whole}.{''.join(digits)}"


def _points_value(text: str, where: str) -> Fraction:
    if not _NUMBER.match(text):
        raise AssignmentError(f"{where}: points must be a number >= 0 (like 3 or 2.5), not "
                              f"{text!r}")
    return Fraction(text)


def read_points(reference: Path, source: str, items: list) -> dict:
    """Points per item name: the `# points: N` comment directly above the item (only comments
    between), then ASSIGNMENT.toml's [points] table; 1 for an item with neither.

    items: (name, line) of the reference's lemmas and claims.  Raises AssignmentError for a
    points comment that is above no item, two for one item, a malformed number, an unknown name
    or key in the TOML file, or a comment and the TOML file that disagree.
    """
    lines = source.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    at_line = {line: name for name, line in items}
    from_comments: dict = {}
    for number, text in enumerate(lines, start=1):
        match = _DIRECTIVE.match(text)
        if match is None:
            continue
        where = f"{reference.name}:{number}"
        value = _points_value(match.group(1).strip(), where)
        below = number + 1
        while below <= len(lines) and lines[below - 1].lstrip().startswith(("#", "%")) \
                and below not in at_line:
            below += 1
        owner = at_line.get(below)
        if owner is None:
            raise AssignmentError(f"{where}: a '# points:' comment must be directly above a "
                                  f"lemma or claim (only comment lines between)")
        if owner in from_comments:
            raise AssignmentError(f"{where}: lemma {owner} has two '# points:' comments")
        from_comments[owner] = value
    from_toml = _toml_points(reference, {name for name, _ in items})
    points = {}
    for name, _ in items:
        if name in from_toml and name in from_comments and from_toml[name] != from_comments[name]:
            raise AssignmentError(
                f"{reference.with_suffix('.toml').name} gives {name} "
                f"{format_points(from_toml[name])} points but {reference.name} says "
                f"{format_points(from_comments[name])}: keep one")
        points[name] = from_toml.get(name, from_comments.get(name, DEFAULT_POINTS))
    return points


def _toml(reference: Path) -> dict:
    """ASSIGNMENT.toml's tables ({} when there is none)."""
    path = reference.with_suffix(".toml")
    if not path.is_file():
        return {}
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise AssignmentError(f"{path.name}: cannot be read ({exc})") from None


def read_policy(reference: Path, source: str) -> dict:
    """The grading policies (POLICIES): `# policy: NAME = yes|no` lines of the reference, then
    ASSIGNMENT.toml's [policy] table (`NAME = true`).  Raises AssignmentError for an unknown
    policy, a value that is not yes or no, or the two places disagreeing."""
    from_comments: dict = {}
    for number, line in enumerate(source.replace("\r\n", "\n").split("\n"), start=1):
        match = _POLICY.match(line)
        if match is None:
            continue
        where = f"{reference.name}:{number}"
        name, equals, value = (part.strip() for part in match.group(1).partition("="))
        if name not in POLICIES:
            raise AssignmentError(f"{where}: unknown policy {name!r} (known: "
                                  f"{', '.join(POLICIES)})")
        if not equals or value.lower() not in _YES_NO:
            raise AssignmentError(f"{where}: write '# policy: {name} = yes' (or no)")
        from_comments[name] = _YES_NO[value.lower()]
    table = _toml(reference).get("policy", {})
    toml_name = reference.with_suffix(".toml").name
    if not isinstance(table, dict):
        raise AssignmentError(f"{toml_name}: 'policy' must be a table ([policy])")
    policy = dict(POLICIES)
    for name, value in table.items():
        if name not in POLICIES:
            raise AssignmentError(f"{toml_name}: unknown policy {name!r} (known: "
                                  f"{', '.join(POLICIES)})")
        if not isinstance(value, bool):
            raise AssignmentError(f"{toml_name}: policy {name} must be true or false, not "
                                  f"{value!r}")
        if name in from_comments and from_comments[name] != value:
            raise AssignmentError(f"{toml_name} and {reference.name} disagree on policy "
                                  f"{name}: keep one")
        policy[name] = value
    for name, value in from_comments.items():
        policy[name] = value
    return policy


def _toml_points(reference: Path, names: set) -> dict:
    path = reference.with_suffix(".toml")
    data = _toml(reference)
    unknown = sorted(set(data) - {"points", "policy"})
    if unknown:
        raise AssignmentError(f"{path.name}: unknown key {unknown[0]!r} (expected a [points] "
                              f"or a [policy] table)")
    table = data.get("points", {})
    if not isinstance(table, dict):
        raise AssignmentError(f"{path.name}: 'points' must be a table ([points])")
    out = {}
    for name, value in table.items():
        if name not in names:
            raise AssignmentError(f"{path.name}: {name!r} is not a lemma or claim of "
                                  f"{reference.name}")
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0 \
                or value != value or value == float("inf"):
            raise AssignmentError(f"{path.name}: points of {name} must be a number >= 0, not "
                                  f"{value!r}")
        out[name] = Fraction(str(value)) if isinstance(value, float) else Fraction(value)
    return out


def load_assignment(reference: Path, report, source: str) -> Assignment:
    """The assignment of a reference file checked into `report` (a FileReport made in this
    process: its lemmas still hold the kernel's objects).  Raises AssignmentError, naming the
    lemma, when the reference does not check cleanly."""
    name = reference.name
    if report.error is not None:
        raise AssignmentError(f"{name} does not check: {report.error.file}:{report.error.line}:"
                              f"{report.error.column}: {report.error.message}")
    for lemma in report.lemmas:
        if lemma.kind == "setting":
            problem = next((s.reason for s in lemma.steps if not s.ok), lemma.reason)
            raise AssignmentError(f"{name}: {lemma.name} has problems: {problem}")
    found = [lemma for lemma in report.lemmas if lemma.kind in ITEM_KINDS]
    if not found:
        raise AssignmentError(f"{name} has no lemmas to grade")
    for lemma in found:
        wanted = "expected_failure" if lemma.kind == "claim" else "verified"
        if lemma.status != wanted:
            what = "is not refuted by its run" if lemma.kind == "claim" else "is not verified"
            failing = next((s for s in lemma.steps if not s.ok), None)
            why = (f"line {failing.line}: {failing.reason}" if failing is not None
                   else lemma.reason)
            if failing is not None and failing.status == "unknown":
                why += " (the reference is checked under the students' limits: see --rlimit)"
            raise AssignmentError(f"{name}: {lemma.kind} {lemma.name} (line {lemma.line}) {what}"
                                  f"{f': {why}' if why else ''}")
    points = read_points(reference, source, [(lemma.name, lemma.line) for lemma in found])
    items = []
    for lemma in found:
        scope = lemma.scope
        items.append(Item(lemma.name, lemma.kind, lemma.line, points[lemma.name],
                          lemma.statement, lemma.givens, lemma.formula,
                          None if lemma.kind == "claim" else setting_signature(scope.setting),
                          scope))
    return Assignment(str(reference), reference.stem, reference.name, items,
                      read_policy(reference, source))
