"""`novikoff grade`'s outputs as an instructor uses them: regrading some students into the class's
OUT_DIR, the class table at a glance (score histogram, success rates), late submissions, the
instructor's overrides and partial credit per step (docs/teaching.md, sections 5 and 8).

One class is graded once from the command line with every option (COURSE), then one student is
fixed and regraded through the API; the tests read the snapshots of both runs.  Usage errors are
refused before anything is graded, so their tests grade nothing.
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import xml.etree.ElementTree as ET
from fractions import Fraction
from pathlib import Path

import pytest

from novikoff.cli import main
from novikoff.errors import InvalidArgument
from novikoff.grade import ClassResult, ItemResult, StudentResult, class_table, grade_class

DATA = Path(__file__).parent / "data" / "grade"
REFERENCE = DATA / "assignment.proof"
REF = REFERENCE.read_text(encoding="utf-8")
ITEMS = ["w_star_nonzero", "progress", "norm_growth", "mistake_bound", "mistake_bound_unit"]
HEADER = ["student", "score", "max_score"] + ITEMS


def _edit(old: str, new: str, text: str = REF) -> str:
    assert old in text, old
    return text.replace(old, new, 1)


UNIT_PROOF = """  k <= R^2 * ||w_star||^2 / gamma^2          by mistake_bound
    = 1/gamma^2                              by unit_radius, unit_w_star"""
# One false step (line 24) in w_star_nonzero, whose proof has 4 checks: 3 of them verified.
SLIP = _edit(">= gamma               by margin", ">= 2*gamma             by margin")
# Every proof right, in a setting with an extra assumption: nothing earns, partial credit none.
CHEAT = _edit("  assume   radius:  ||x|| <= R\n",
              "  assume   radius:  ||x|| <= R\n  assume   cheat:   gamma > R\n")
# A weaker statement of mistake_bound_unit (k <= 2/gamma^2) whose proof has a false step: not
# verified, and not the assignment's statement, so no partial credit either.
WEAK_AND_WRONG = _edit(UNIT_PROOF, UNIT_PROOF.replace(", unit_w_star", "") + "\n    <= 2/gamma^2",
                       _edit("theorem mistake_bound_unit: k <= 1/gamma^2",
                             "theorem mistake_bound_unit: k <= 2/gamma^2"))

CLASS = {"ada": REF, "ben": SLIP, "cy": CHEAT, "dee": WEAK_AND_WRONG}
ROSTER = "student,email,late\nada,ada@uni.example,no\ndee,dee@uni.example,YES\n" \
         "ghost,ghost@uni.example,yes\n"
OVERRIDES = ("student,item,points,reason\n"
             "cy,progress,2,\"the extra assumption is not used, a slip of the setting\"\n"
             "ada,mistake_bound_unit,0,copied from the solutions\n")


def _grade_cli(argv: list) -> tuple:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["grade"] + [str(a) for a in argv])
    return code, out.getvalue(), err.getvalue()


def _rows(text: str) -> dict:
    rows = list(csv.reader(io.StringIO(text)))
    return {"header": rows[0], **{row[0]: row[1:] for row in rows[1:]}}


def _bins(lines: list) -> dict:
    """{bin label: count} of the histogram's lines."""
    return {(line[:line.index(")") + 1] if "[" in line else line.split()[0]).strip():
            int(line.split()[-1]) for line in lines}


def _read(out: Path) -> dict:
    """Every file of OUT_DIR, as text."""
    return {p.name: p.read_text(encoding="utf-8") for p in sorted(out.iterdir())}


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    root = tmp_path_factory.mktemp("course")
    subs, out = root / "subs", root / "graded"
    subs.mkdir()
    for name, text in CLASS.items():
        (subs / f"{name}.proof").write_text(text, encoding="utf-8")
    (root / "roster.csv").write_text(ROSTER, encoding="utf-8")
    (root / "overrides.csv").write_text(OVERRIDES, encoding="utf-8")
    # 1. The class, from the command line, with every option.
    first = _grade_cli([subs, "--reference", REFERENCE, "-o", out, "--jobs", "2", "--junit",
                        "--gradescope", "--roster", root / "roster.csv", "--late", "ben",
                        "--overrides", root / "overrides.csv", "--partial-credit"])
    before = _read(out)
    # 2. ben resubmits a fixed file; the instructor regrades ben alone, from Python.
    (subs / "ben.proof").write_text(REF, encoding="utf-8")
    again = grade_class(subs, REFERENCE, out, jobs=1, junit=True, gradescope=True,
                        students=["ben"])
    return {"root": root, "out": out, "first": first, "before": before, "again": again,
            "after": _read(out)}


# ---------------------------------------------------------------------------- the first run

def test_the_first_run_writes_the_class(course):
    code, table, err = course["first"]
    assert code == 0, err
    assert err == ""
    rows = _rows(course["before"]["summary.csv"])
    assert rows["header"] == HEADER + ["late"]
    assert set(rows) == {"header", "ada", "ben", "cy", "dee"}
    # ada: the instructor took back mistake_bound_unit; late: no (roster).
    assert rows["ada"] == ["9", "10", "1", "3", "3", "2", "0", "no"]
    # cy: nothing earned (extra assumption), but progress overridden to 2.
    assert rows["cy"] == ["2", "10", "0", "2", "0", "0", "0", "no"]
    # dee: late on the roster ("YES"); mistake_bound_unit states something weaker: 0.
    assert rows["dee"][-2:] == ["0", "yes"] and rows["dee"][0] == "9"
    assert rows["ben"][-1] == "yes"  # --late ben


def test_late_submissions_are_marked_everywhere(course):
    _, table, _ = course["first"]
    before = course["before"]
    assert "late (2): ben, dee" in table
    for name, late in (("ben", True), ("dee", True), ("ada", False), ("cy", False)):
        output = json.loads(before[f"{name}.results.json"])["output"]
        assert ("Late submission (marked by the instructor)." in output) == late, name
        assert ("Late submission" in before[f"{name}.md"]) == late, name
        assert ("Late submission" in before[f"{name}.html"]) == late, name
    suites = {s.get("name"): s for s in ET.fromstring(before["junit.xml"]).findall("testsuite")}
    marks = {name: suite.find("properties/property[@name='late']").get("value")
             for name, suite in suites.items()}
    assert marks == {"ada": "no", "ben": "yes", "cy": "no", "dee": "yes"}
    # A late mark is a mark: no points are taken.
    assert json.loads(before["dee.results.json"])["score"] == 9
    # The roster's students without a submission are listed, not an error.
    assert "on the roster without a submission (1): ghost" in table


def test_overrides_are_applied_shown_and_explained(course):
    _, table, _ = course["first"]
    before = course["before"]
    assert "overridden by the instructor (2):" in table
    assert "cy progress: 2 (was 0) -- the extra assumption is not used" in table
    assert "ada mistake_bound_unit: 0 (was 1) -- copied from the solutions" in table
    # The student's report: the title's score, the row, the note with the grader's note.
    md = before["ada.md"]
    assert md.splitlines()[0] == "# assignment: ada — 9 / 10 points"
    row = next(line for line in md.splitlines() if "`mistake_bound_unit`" in line
               and line.startswith("| "))
    assert "| 0 | 1 | overridden by the instructor: copied from the solutions \\(was 1\\)" in row
    html = before["ada.html"]
    assert "<h1>assignment: ada — 9 / 10 points</h1>" in html
    assert "overridden by the instructor: copied from the solutions (was 1)" in html
    tests = {t["name"]: t for t in json.loads(before["ada.results.json"])["tests"]}
    assert tests["mistake_bound_unit"]["score"] == 0
    assert tests["mistake_bound_unit"]["status"] == "failed"
    assert "overridden by the instructor" in tests["mistake_bound_unit"]["output"]
    cy = {t["name"]: t for t in json.loads(before["cy.results.json"])["tests"]}
    assert cy["progress"]["score"] == 2 and "(was 0)" in cy["progress"]["output"]
    assert "extra or changed assumption" in cy["progress"]["output"]  # the grader's note kept
    suites = {s.get("name"): s for s in ET.fromstring(before["junit.xml"]).findall("testsuite")}
    cases = {c.get("name"): c for c in suites["ada"].findall("testcase")}
    assert cases["mistake_bound_unit"].find("failure").get("type") == "overridden"
    cases = {c.get("name"): c for c in suites["cy"].findall("testcase")}
    assert cases["progress"].find("failure").get("type") == "setting"  # fewer than all points


def test_the_table_shows_the_class_at_a_glance(course):
    _, table, _ = course["first"]
    lines = table.splitlines()
    assert lines[0].startswith("assignment: 4 students, mean score ")
    assert "partial credit per step: on" in table
    progress = next(line for line in lines if line.startswith("progress "))
    assert "3/4  75%" in progress
    assert "scores (4 students):" in table
    bins = _bins(lines[lines.index("scores (4 students):") + 1:][:11])
    assert list(bins) == [f"[{i}, {i + 1})" for i in range(10)] + ["10"]
    assert bins["[2, 3)"] == 1  # cy, with the override
    assert bins["[9, 10)"] == 3 and sum(bins.values()) == 4


def test_partial_credit_needs_the_assignments_statement_and_setting(course):
    before = course["before"]
    rows = _rows(before["summary.csv"])
    # cy (another setting) and dee (another statement) get no partial credit, wired or not.
    assert rows["cy"][2:7] == ["0", "2", "0", "0", "0"]
    assert rows["dee"][6] == "0"
    assert rows["ben"][:3] == ["9.75", "10", "0.75"]
    assert "partial credit: 3 of 4 checks verified, 0.75 of 1 point" in before["ben.html"]
    assert "9\\.75 / 10 points" in before["ben.md"].splitlines()[0]
    tests = {t["name"]: t for t in json.loads(before["ben.results.json"])["tests"]}
    assert tests["w_star_nonzero"]["score"] == 0.75
    assert tests["w_star_nonzero"]["status"] == "failed"  # partly credited, not verified


# ---------------------------------------------------------------------------- regrading one student

def test_regrading_one_student_keeps_the_rest_of_the_class(course):
    again, before, after = course["again"], course["before"], course["after"]
    assert [s.name for s in again.students] == ["ben"]
    assert again.kept == ["ada", "cy", "dee"]
    old, new = _rows(before["summary.csv"]), _rows(after["summary.csv"])
    assert new["header"] == old["header"]
    assert list(new) == list(old)  # same students, same order
    for name in ("ada", "cy", "dee"):
        assert new[name] == old[name], name
    # ben: everything earned now, still late (the earlier run's mark: this run said nothing).
    assert new["ben"] == ["10", "10", "1", "3", "3", "2", "1", "yes"]
    # The other students' files are untouched; ben's are rewritten.
    for name in before:
        if not name.startswith("ben") and name not in ("summary.csv", "junit.xml"):
            assert after[name] == before[name], name
    assert after["ben.md"] != before["ben.md"]
    assert "10 / 10" in after["ben.md"].splitlines()[0]
    assert json.loads(after["ben.results.json"])["score"] == 10


def test_regrading_keeps_the_other_junit_testsuites(course):
    old = ET.fromstring(course["before"]["junit.xml"])
    new = ET.fromstring(course["after"]["junit.xml"])
    names = [s.get("name") for s in new.findall("testsuite")]
    assert names == ["ada", "ben", "cy", "dee"]
    for suite in old.findall("testsuite"):
        if suite.get("name") != "ben":
            twin = new.find(f"testsuite[@name='{suite.get('name')}']")
            assert ET.tostring(twin) == ET.tostring(suite)
    ben = new.find("testsuite[@name='ben']")
    assert ben.get("failures") == "0"
    assert new.get("tests") == "20"
    assert int(new.get("failures")) == sum(int(s.get("failures"))
                                           for s in new.findall("testsuite"))


def test_another_assignments_summary_is_refused_when_regrading_some(tmp_path):
    subs = tmp_path / "subs"
    subs.mkdir()
    (subs / "ada.proof").write_text(REF, encoding="utf-8")
    out = tmp_path / "out"
    out.mkdir()
    other = "student,score,max_score,lemma_a,lemma_b\nzed,3,5,1,2\n"
    (out / "summary.csv").write_text(other, encoding="utf-8")
    code, _, err = _grade_cli([subs, "--reference", REFERENCE, "-o", out, "--student", "ada"])
    assert code == 2
    assert "summary.csv is of another assignment (its items: lemma_a, lemma_b;" in err
    assert "grade the whole class" in err and "Traceback" not in err
    assert (out / "summary.csv").read_text(encoding="utf-8") == other  # nothing lost
    assert not (out / "ada.md").exists()
    # An unreadable one is refused at once, before anything is graded.
    (out / "summary.csv").write_bytes(b"\xff\xfe garbage")
    code, _, err = _grade_cli([subs, "--reference", REFERENCE, "-o", out, "--student", "ada"])
    assert code == 2 and "cannot be read as a summary (it is not UTF-8 text)" in err


def test_a_full_run_replaces_another_assignments_outputs_with_a_warning(tmp_path):
    subs = tmp_path / "subs"
    subs.mkdir()
    (subs / "ada.proof").write_text(REF, encoding="utf-8")
    out = tmp_path / "out"
    out.mkdir()
    (out / "summary.csv").write_text("student,score,max_score,lemma_a\nzed,1,1,1\n",
                                     encoding="utf-8")
    (out / "junit.xml").write_text("<testsuites><testsuite", encoding="utf-8")
    code, table, err = _grade_cli([subs, "--reference", REFERENCE, "-o", out, "--junit"])
    assert code == 0
    assert "warning:" in err and "summary.csv is of another assignment" in err
    assert "junit.xml cannot be read as JUnit results" in err
    assert (out / "summary.csv").read_text(encoding="utf-8").splitlines() == [
        ",".join(HEADER), "ada,10,10,1,3,3,2,1"]
    assert [s.get("name") for s in ET.parse(out / "junit.xml").getroot()] == ["ada"]
    assert "also keeps" not in table


# ---------------------------------------------------------------------------- refused input

@pytest.mark.parametrize("extra, files, message", [
    (["--student", "bne"], {}, "students=['bne']: no submission of 'bne' (did you mean "
                               "'ben'?) in the folder"),
    (["--student", "ben", "--student", "x"], {}, "no submission of 'x' in the folder"),
    (["--late", "zoe"], {}, "late=['zoe']: no submission of 'zoe'"),
    (["--roster", "{dir}/nope.csv"], {}, "roster='{dir}/nope.csv' cannot be read"),
    (["--roster", "{dir}/r.csv"], {"r.csv": "student,email\nben,b@x\n"},
     "r.csv:1: no column late"),
    (["--roster", "{dir}/r.csv"], {"r.csv": "student,late\nben,maybe\n"},
     "r.csv:2: late='maybe' must be yes or no"),
    (["--roster", "{dir}/r.csv"], {"r.csv": "student,late\nben,yes\n\nben,no\n"},
     "r.csv:4: 'ben' is on the roster twice (line 2)"),
    (["--roster", "{dir}/r.csv"], {"r.csv": b"student,late\nb\xe9n,yes\n"},
     "r.csv:2: not UTF-8 text"),
    (["--overrides", "{dir}/o.csv"], {"o.csv": "student,item,points\nben,progress,1\n"},
     "o.csv:1: no column reason"),
    (["--overrides", "{dir}/o.csv"], {"o.csv": "student,item,points,reason\nbenn,progress,1,r\n"},
     "o.csv:2: no submission of 'benn' in the folder (did you mean 'ben'?)"),
    (["--overrides", "{dir}/o.csv"], {"o.csv": "student,item,points,reason\nben,progress,-1,r\n"},
     "o.csv:2: points='-1' must be a number >= 0"),
    (["--overrides", "{dir}/o.csv"], {"o.csv": "student,item,points,reason\nben,progress,2,\n"},
     "o.csv:2: no reason"),
    (["--overrides", "{dir}/o.csv"],
     {"o.csv": "student,item,points,reason\nben,progress,2,r\nben,progress,1,s\n"},
     "o.csv:3: ben's progress is overridden twice (line 2)"),
    (["--overrides", "{dir}/o.csv"], {"o.csv": "student,item,points,reason\nben,a,1,r,extra\n"},
     "o.csv:2: 5 cells, but the header has 4 columns"),
])
def test_bad_options_and_files_exit_two_naming_them(tmp_path, extra, files, message):
    subs = tmp_path / "subs"
    subs.mkdir()
    (subs / "ben.proof").write_text(REF, encoding="utf-8")
    for name, text in files.items():
        data = text if isinstance(text, bytes) else text.encode("utf-8")
        (tmp_path / name).write_bytes(data)
    argv = [subs, "--reference", REFERENCE, "-o", tmp_path / "out"] + [
        a.format(dir=tmp_path) for a in extra]
    code, _, err = _grade_cli(argv)
    assert code == 2
    assert message.format(dir=tmp_path) in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert not (tmp_path / "out" / "summary.csv").exists()


def test_overrides_of_unknown_items_or_too_many_points_name_the_line(tmp_path):
    subs = tmp_path / "subs"
    subs.mkdir()
    (subs / "ben.proof").write_text(REF, encoding="utf-8")
    fix = tmp_path / "fix.csv"
    fix.write_text("student,item,points,reason\nben,progres,1,typo\n"
                   "ben,norm_growth,3.5,generous\nben,progress,3,fine\n", encoding="utf-8")
    code, _, err = _grade_cli([subs, "--reference", REFERENCE, "-o", tmp_path / "out",
                               "--overrides", fix])
    assert code == 2
    assert f"{fix}:2: no item 'progres' in the assignment (did you mean 'progress'?)" in err
    assert f"{fix}:3: points=3.5 is more than norm_growth's 3" in err
    assert ":4:" not in err and "Traceback" not in err
    assert not (tmp_path / "out" / "ben.md").exists()


@pytest.mark.parametrize("kwargs, message", [
    ({"students": "ben"}, "students='ben' must be a list of student names"),
    ({"students": []}, "students=[] names no student"),
    ({"students": [3]}, "students=[3] must be a list"),
    ({"late": "ben"}, "late='ben' must be a list"),
    ({"partial_credit": "yes"}, "partial_credit='yes' must be True or False"),
    ({"overrides": "/nonexistent/o.csv"}, "overrides='/nonexistent/o.csv' cannot be read"),
])
def test_api_arguments_are_checked(tmp_path, kwargs, message):
    subs = tmp_path / "subs"
    subs.mkdir()
    (subs / "ben.proof").write_text(REF, encoding="utf-8")
    with pytest.raises(InvalidArgument, match=message.replace("[", r"\[").replace("(", r"\(")):
        grade_class(subs, REFERENCE, tmp_path / "out", **kwargs)


# ---------------------------------------------------------------------------- the parts alone

def _item(name: str, points, max_points, failure="", note="verified", steps=()):
    return ItemResult(name, "lemma", Fraction(points), Fraction(max_points), failure, note,
                      steps=steps)


def test_partial_credit_shares_a_lemmas_points_over_its_checks():
    from novikoff.grade.credit import partial_credit

    slip = _item("a", 0, 3, "not-verified", "line 4: failed", ("verified",) * 2 + ("failed",))
    credited = partial_credit(slip)
    assert credited.points == 2 and credited.failure == "not-verified"
    assert credited.note == ("line 4: failed; partial credit: 2 of 3 checks verified, 2 of 3 "
                             "points")
    # Rounded down to a hundredth: 2/3 of a point is 0.66, never the full point.
    third = partial_credit(_item("b", 0, 1, "timed-out", "x", ("verified", "verified",
                                                               "unknown")))
    assert third.points == Fraction(66, 100)
    nearly = partial_credit(_item("c", 0, 1, "not-verified", "x",
                                  ("verified",) * 999 + ("failed",)))
    assert nearly.points == Fraction(99, 100)
    # No steps recorded (another statement or setting), a claim, an earned item, a failure
    # partial credit does not soften: unchanged.
    for item in (_item("d", 0, 3, "not-verified", "x"),
                 _item("e", 0, 3, "statement", "x", ("verified",)),
                 _item("f", 3, 3, "", "verified", ("verified",)),
                 ItemResult("g", "claim", Fraction(0), Fraction(2), "not-refuted", "x",
                            steps=("verified",))):
        assert partial_credit(item) == item
    # Statuses may also be passed in (the judge's other way to call it).
    assert partial_credit(_item("h", 0, 2, "xfail", "x"), ["verified", "expected_failure"]) \
        .points == 1


def test_record_steps_only_for_the_assignments_statement_in_its_setting(tmp_path):
    """What the worker records for partial credit, checked here in-process: ben's slip (the
    assignment's statement and setting: recorded), cy's extra assumption and dee's weaker
    statement (nothing recorded, although steps of theirs are verified)."""
    from novikoff.checker import Checker
    from novikoff.grade.assignment import load_assignment
    from novikoff.grade.credit import partial_credit, record_steps
    from novikoff.grade.judge import not_checked

    assignment = load_assignment(REFERENCE, Checker().check_file(REFERENCE), REF)
    recorded = {}
    for name in ("ben", "cy", "dee"):
        path = tmp_path / f"{name}.proof"
        path.write_text(CLASS[name], encoding="utf-8")
        report = Checker().check_file(path)
        items = record_steps(assignment, report, not_checked(assignment, "not-verified", "x"))
        recorded[name] = {r.name: r.steps for r in items}
    assert recorded["ben"]["w_star_nonzero"] == ("verified", "failed", "verified", "verified")
    assert recorded["ben"]["progress"] == ("verified",) * 5
    assert all(steps == () for steps in recorded["cy"].values())
    assert recorded["dee"]["mistake_bound_unit"] == ()
    assert recorded["dee"]["progress"] != ()
    ben = _item("w_star_nonzero", 0, 1, "not-verified", "line 24: failed",
                recorded["ben"]["w_star_nonzero"])
    assert partial_credit(ben).points == Fraction(3, 4)


def _class(scores: list, max_points=(1, 3, 3, 2, 1)) -> ClassResult:
    items = [(name, "lemma", Fraction(p)) for name, p in zip(ITEMS, max_points)]
    students = []
    for i, score in enumerate(scores):
        left, results = Fraction(score), []
        for name, _, p in items:
            got = min(p, left)
            left -= got
            results.append(ItemResult(name, "lemma", got, p, "" if got == p else "not-verified",
                                      "x"))
        students.append(StudentResult(f"s{i:02d}", f"s{i:02d}.proof", results))
    return ClassResult("hw", items, students, Path("."))


def test_the_histogram_bins():
    from novikoff.grade.outputs import histogram

    lines = histogram([Fraction(s) for s in (0, 0, 3, 9, 9.5, 10)], Fraction(10))
    assert lines[0] == "scores (6 students):"
    bins = _bins(lines[1:])
    assert bins["[0, 1)"] == 2 and bins["[9, 10)"] == 2 and bins["10"] == 1
    assert bins["[3, 4)"] == 1 and bins["[5, 6)"] == 0
    # Over 20 points: bins of 5 for 50 points, 10 bins and the full score.
    wide = histogram([Fraction(7), Fraction(50)], Fraction(50))
    assert len(wide) == 1 + 10 + 1 and wide[1].strip().startswith("[0, 5)")
    # A decimal maximum: the last bin is shorter.
    assert histogram([Fraction(21, 2)], Fraction(21, 2))[-2].strip().startswith("[10, 10.5)")
    # Bars are scaled to 40 characters at most.
    many = histogram([Fraction(1)] * 200, Fraction(2))
    assert max(len(line) for line in many) < 60 and "#" * 40 in many[2]


def test_the_table_rounds_success_rates_and_lists_what_was_kept():
    result = _class([10, 10, 0])
    result.kept = ["old1", "old2"]
    table = class_table(result)
    assert "2/3  67%" in table.splitlines()[3]
    assert "median 10" in table.splitlines()[0]
    assert "summary.csv also keeps 2 students not graded in this run" in table
    assert "(5 rows)" in table


def test_previous_summaries_are_compared_with_the_assignment(tmp_path):
    from novikoff.grade.previous import read_previous_summary

    items = [(name, "lemma", Fraction(p)) for name, p in zip(ITEMS, (1, 3, 3, 2, 1))]
    (tmp_path / "summary.csv").write_text(
        ",".join(HEADER) + "\n'=x,10,10,1,3,3,2,1\nzoe,9,10,1,3,3,2,0\n", encoding="utf-8")
    same = read_previous_summary(tmp_path)
    assert same.mismatch(items, Fraction(10)) == ""
    assert [name for name, _ in same.rows] == ["=x", "zoe"]  # the apostrophe is not the name
    assert "the points changed" in same.mismatch(items, Fraction(11))
    (tmp_path / "summary.csv").write_text(",".join(HEADER) + "\nzoe,9,10,1\n", encoding="utf-8")
    short = read_previous_summary(tmp_path)
    assert "line 2 has 4 cells, the header 8" in short.mismatch(items, Fraction(10))
    (tmp_path / "summary.csv").write_text("name,grade\n", encoding="utf-8")
    assert "cannot be read as a summary" in read_previous_summary(tmp_path).mismatch(
        items, Fraction(10))
    assert read_previous_summary(tmp_path / "none").mismatch(items, Fraction(10)) == ""


def test_names_are_matched_as_summary_csv_writes_them():
    from novikoff.grade.roster import match_name

    names = {"=x", "ben", "'quoted"}
    assert match_name(" ben ", names) == "ben"
    assert match_name("'=x", names) == "=x" and match_name("=x", names) == "=x"
    assert match_name("'quoted", names) == "'quoted"
    assert match_name("'ben", names) is None and match_name("Ben", names) is None


def test_documents_in_an_unknown_shape_get_the_changes_as_a_paragraph():
    from novikoff.grade.adjust import adjust_student
    from novikoff.grade.roster import Override

    items = [ItemResult("progress", "lemma", Fraction(0), Fraction(3), "not-verified", "n")]
    student = StudentResult("ben", "ben.proof", items,
                            documents={"md": "# something else\n\ntext\n",
                                       "html": "<html><body><p>x</p></body></html>"})
    applied = adjust_student(student, "hw", overrides=[
        Override("ben", "progress", Fraction(2), "kind", "o.csv:2")], late=True)
    assert [o.was for o in applied] == [0]
    md = student.documents["md"]
    assert "**Late submission \\(marked by the instructor\\)\\.**" in md
    assert "- `progress`: 2 / 3 points — overridden by the instructor: kind \\(was 0\\)" in md
    assert "<strong>Late submission (marked by the instructor).</strong>" in \
        student.documents["html"]
    assert student.score == 2 and student.late
