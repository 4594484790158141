"""`novikoff grade`: what earns a lemma, isolation, limits, outputs, determinism, the CLI.

The reference is tests/data/grade/assignment.proof (10 points: w_star_nonzero 1, progress 3,
norm_growth 3, mistake_bound 2, mistake_bound_unit 1); each student of the class below changes
it in one way and the test states the score that change must get.
"""

from __future__ import annotations

import csv
import io
import json
import os
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from novikoff.cli import main
from novikoff.errors import InvalidArgument
from novikoff.grade import (DEFAULT_FILE_BUDGET, DEFAULT_LEMMA_BUDGET, DEFAULT_RLIMIT,
                            grade_class)

DATA = Path(__file__).parent / "data" / "grade"
REFERENCE = DATA / "assignment.proof"
REF = REFERENCE.read_text(encoding="utf-8")
ITEMS = ["w_star_nonzero", "progress", "norm_growth", "mistake_bound", "mistake_bound_unit"]

# A true inequality whose Z3 check costs about 300,000 rlimit units (the reference's costliest
# check costs about 12,000): under TEST_RLIMIT it cannot be verified, under the default it is.
HEAVY = "  have heavy: (gamma + R + k)^5 >= 3^5*gamma*R*k*(gamma*R + R*k + k*gamma)/3\n"
TEST_RLIMIT = 60_000

# A name with what breaks shells, HTML, CSV and spreadsheets.
SPECIAL = "=HYPERLINK(\"x\"),<img src=x onerror=alert(1)> $(touch pwned);'"


def _edit(old: str, new: str, text: str = REF) -> str:
    assert old in text, old
    return text.replace(old, new, 1)


def _without(lemma_comment: str, next_comment: str, text: str = REF) -> str:
    """The reference without the block from one comment to the next."""
    return text[:text.index(lemma_comment)] + text[text.index(next_comment):]


def _one_student(tmp_path: Path, text: str = REF, name: str = "s") -> Path:
    subs = tmp_path / "subs"
    subs.mkdir(exist_ok=True)
    (subs / f"{name}.proof").write_text(text, encoding="utf-8")
    return subs


UNIT_PROOF = """  k <= R^2 * ||w_star||^2 / gamma^2          by mistake_bound
    = 1/gamma^2                              by unit_radius, unit_w_star"""

# student -> (the file's text, the points expected per item)
CLASS = {
    "correct": (REF, [1, 3, 3, 2, 1]),
    # one false step in a lemma no other lemma cites
    "partly_wrong": (_edit(">= gamma               by margin", ">= 2*gamma             by margin"),
                     [0, 3, 3, 2, 1]),
    # a type error in one step: a positioned error, and the rest is still checked
    "type_error": (_edit(">= gamma               by margin", ">= gamma + x           by margin"),
                   [0, 3, 3, 2, 1]),
    # a syntax error inside one lemma: that lemma fails, the others are still checked
    "syntax_in_lemma": (_edit(">= gamma               by margin",
                              ">= gamma ((            by margin"),
                        [0, 3, 3, 2, 1]),
    # a syntax error in the setting: the file does not check at all
    "malformed": (_edit("setting perceptron:", "setting perceptron"), [0, 0, 0, 0, 0]),
    # a weaker statement (a larger bound), verified
    "weakened": (_edit(UNIT_PROOF, UNIT_PROOF + "\n    <= 2/gamma^2",
                       _edit("theorem mistake_bound_unit: k <= 1/gamma^2",
                             "theorem mistake_bound_unit: k <= 2/gamma^2")),
                 [1, 3, 3, 2, 0]),
    # an extra (consistent) assumption in the setting: nothing earns, used or not
    "extra_assumption": (_edit("  assume   radius:  ||x|| <= R\n",
                               "  assume   radius:  ||x|| <= R\n  assume   cheat:   gamma > R\n"),
                         [0, 0, 0, 0, 0]),
    # a changed declaration (R may now be zero)
    "changed_kind": (_edit("real     gamma > 0, R > 0", "real     gamma > 0, R >= 0"),
                     [0, 0, 0, 0, 0]),
    # an extra given on a lemma no other lemma cites
    "extra_given": (_edit("  given unit_w_star: ||w_star|| = 1\n",
                          "  given unit_w_star: ||w_star|| = 1\n  given small: gamma <= 1\n"),
                    [1, 3, 3, 2, 0]),
    # mistake_bound cites the student's own helper, which is not verified
    "cites_unverified": (_edit("<= ||w_star|| * sqrt(k) * R        by norm_growth",
                               "<= ||w_star|| * sqrt(k) * R        by helper",
                               _edit("# points: 2\ntheorem mistake_bound",
                                     "lemma helper: ||w[k]||^2 <= k*R^2\nproof:\n"
                                     "  ||w[k]||^2 <= k*R^2        by radius\n\n"
                                     "# points: 2\ntheorem mistake_bound")),
                         [1, 3, 3, 0, 0]),
    # a step marked xfail: an expected failure is not a proof
    "xfail": (_edit("  ||w_star|| * ||x|| >= y*<w_star, x>       by cauchy_schwarz(w_star, x)",
                    "  ||w_star|| * ||x|| >= 2*y*<w_star, x>     by cauchy_schwarz(w_star, x)  "
                    "xfail\n"
                    "  ||w_star|| * ||x|| >= y*<w_star, x>       by cauchy_schwarz(w_star, x)"),
              [0, 3, 3, 2, 1]),
    # a true step that needs far more than TEST_RLIMIT
    "greedy": (_edit("lemma w_star_nonzero: ||w_star|| > 0\nproof:\n",
                     "lemma w_star_nonzero: ||w_star|| > 0\nproof:\n" + HEAVY),
               [0, 3, 3, 2, 1]),
    # imports another student's file (there, `correct.proof` is beside it)
    "alice": ("from correct import progress\n"
              + _without("# Each update adds", "# points: 3\nlemma norm_growth"),
              [0, 0, 0, 0, 0]),
    SPECIAL: (REF, [1, 3, 3, 2, 1]),
    "ctrl\x1b[31mred": (REF, [1, 3, 3, 2, 1]),
}


def _build_class(folder: Path) -> None:
    folder.mkdir()
    for name, (text, _) in CLASS.items():
        (folder / f"{name}.proof").write_text(text, encoding="utf-8")
    # A directory student whose library is a link to another student's file: not followed.
    eve = folder / "eve"
    eve.mkdir()
    (eve / "assignment.proof").write_text(
        "from lib import progress\n" + _without("# Each update adds",
                                                "# points: 3\nlemma norm_growth"),
        encoding="utf-8")
    (eve / "lib.proof").symlink_to(folder / "correct.proof")
    # A directory student with their file nested, and a link to outside the folder.
    dana = folder / "dana"
    (dana / "hw").mkdir(parents=True)
    (dana / "hw" / "assignment.proof").write_text(REF, encoding="utf-8")
    (dana / "passwd").symlink_to("/etc/passwd")
    # A directory student with two files and none named like the assignment.
    (folder / "undecided").mkdir()
    (folder / "undecided" / "a.proof").write_text(REF, encoding="utf-8")
    (folder / "undecided" / "b.proof").write_text(REF, encoding="utf-8")
    # A student whose submission is a link to another's file.
    (folder / "mallory.proof").symlink_to(folder / "correct.proof")
    # A file and a directory for one student; a hidden file (not a student).
    (folder / "zoe.proof").write_text(REF, encoding="utf-8")
    (folder / "zoe").mkdir()
    (folder / "zoe" / "assignment.proof").write_text(REF, encoding="utf-8")
    (folder / ".hidden.proof").write_text(REF, encoding="utf-8")
    # A file over the size limit, and binary garbage.
    (folder / "huge.proof").write_text(REF + "#" * (1100 << 10), encoding="utf-8")
    (folder / "garbage.proof").write_bytes(bytes(range(256)) * 64)


# A student's name as shown everywhere: control characters as escapes (readable_name).
EXPECTED = {name.replace("\x1b", "\\u001b"): points for name, (_, points) in CLASS.items()}
EXPECTED.update({"eve": [0] * 5, "dana": [1, 3, 3, 2, 1], "undecided": [0] * 5,
                 "mallory": [0] * 5, "huge": [0] * 5, "garbage": [0] * 5, "zoe": [0] * 5})


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    root = tmp_path_factory.mktemp("grade")
    _build_class(root / "subs")
    result = grade_class(root / "subs", REFERENCE, root / "out", jobs=2, rlimit=TEST_RLIMIT,
                         gradescope=True, junit=True)
    return root, result


def _student(result, name):
    return next(s for s in result.students if s.name == name)


def _note(result, name, item):
    return next(r.note for r in _student(result, name).items if r.name == item)


# ---------------------------------------------------------------------------- what earns a lemma

def test_each_student_gets_the_expected_points(graded):
    _, result = graded
    got = {s.name: [int(r.points) for r in s.items] for s in result.students}
    assert got == EXPECTED
    assert [name for name, _, _ in result.items] == ITEMS
    assert [int(p) for _, _, p in result.items] == [1, 3, 3, 2, 1]
    assert result.max_score == 10


def test_failure_kinds_say_why(graded):
    _, result = graded
    kinds = {s.name: {r.name: r.failure for r in s.items} for s in result.students}
    assert kinds["correct"] == dict.fromkeys(ITEMS, "")
    assert kinds["partly_wrong"]["w_star_nonzero"] == "not-verified"
    assert kinds["weakened"]["mistake_bound_unit"] == "statement"
    assert kinds["extra_given"]["mistake_bound_unit"] == "givens"
    assert kinds["extra_assumption"]["progress"] == "setting"
    assert kinds["changed_kind"]["progress"] == "setting"
    assert kinds["cites_unverified"]["mistake_bound"] == "unverified-citation"
    assert kinds["cites_unverified"]["mistake_bound_unit"] == "unverified-citation"
    assert kinds["xfail"]["w_star_nonzero"] == "xfail"
    assert kinds["greedy"]["w_star_nonzero"] == "timed-out"
    assert kinds["malformed"]["progress"] == "file"
    assert "cheat: gamma > R" in _note(result, "extra_assumption", "progress")
    assert "sign constraint" in _note(result, "changed_kind", "progress")
    assert "small: gamma <= 1" in _note(result, "extra_given", "mistake_bound_unit")
    assert "k <= 2/gamma^2" in _note(result, "weakened", "mistake_bound_unit")
    assert "helper" in _note(result, "cites_unverified", "mistake_bound")
    assert f"timed out: could not verify within the grading limits (Z3: {TEST_RLIMIT:,} units " \
           f"per check" in _note(result, "greedy", "w_star_nonzero")


def test_step_errors_are_positioned_and_the_rest_is_checked(graded):
    root, result = graded
    line = REF.splitlines().index("                     >= gamma               by margin") + 1
    assert _note(result, "type_error", "w_star_nonzero").startswith(f"line {line}: ")
    assert "cannot add a vector and a scalar" in _note(result, "type_error", "w_star_nonzero")
    assert _note(result, "syntax_in_lemma", "w_star_nonzero").startswith(f"line {line}: ")
    assert "unexpected '('" in _note(result, "syntax_in_lemma", "w_star_nonzero")
    malformed = _note(result, "malformed", "progress")
    assert "malformed.proof:6:" in malformed
    report = (root / "out" / "malformed.md").read_text(encoding="utf-8")
    assert "malformed.proof:6:" in report


def test_the_greedy_step_verifies_under_the_default_rlimit(tmp_path):
    """The same file earns everything when the rlimit allows its costly step: what it lost
    above was the limit's doing, deterministically."""
    (tmp_path / "subs").mkdir()
    (tmp_path / "subs" / "greedy.proof").write_text(CLASS["greedy"][0], encoding="utf-8")
    result = grade_class(tmp_path / "subs", REFERENCE, tmp_path / "out", jobs=1)
    assert [int(r.points) for r in result.students[0].items] == [1, 3, 3, 2, 1]


# ---------------------------------------------------------------------------- isolation

def test_importing_another_students_file_fails_with_a_positioned_error(graded):
    root, result = graded
    note = _note(result, "alice", "progress")
    assert "alice.proof:1:1: no file correct.proof to import from" in note
    assert "alice.proof:1:1" in (root / "out" / "alice.md").read_text(encoding="utf-8")


def test_imports_cannot_climb_out_of_the_private_directory(tmp_path, monkeypatch):
    """The private copies live in the temporary directory: `from ...outside import progress`
    must not reach TMPDIR/outside.proof, which is not the student's."""
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    (temporary / "outside.proof").write_text(REF, encoding="utf-8")
    monkeypatch.setenv("TMPDIR", str(temporary))  # the grading host makes its copies there
    text = "from ...outside import progress\n" + _without("# Each update adds",
                                                          "# points: 3\nlemma norm_growth")
    result = grade_class(_one_student(tmp_path, text, "climber"), REFERENCE,
                         tmp_path / "out", jobs=1)
    assert int(result.students[0].score) == 0
    assert "climber.proof:1:1:" in _note(result, "climber", "progress")
    assert "outside.proof" in _note(result, "climber", "progress")


def test_a_confined_checker_refuses_imports_from_outside(tmp_path):
    """Checker(confine=DIR): an import that resolves outside DIR is refused, with the same
    message whether or not the file exists (a student cannot probe the grader's disk)."""
    from novikoff.checker import Checker

    (tmp_path / "elsewhere.proof").write_text(REF, encoding="utf-8")
    inside = tmp_path / "private"
    inside.mkdir()
    body = _without("# Each update adds", "# points: 3\nlemma norm_growth")
    notes = []
    for module in ("elsewhere", "absent"):
        path = inside / f"{module}_importer.proof"
        path.write_text(f"from ..{module} import progress\n" + body, encoding="utf-8")
        assert Checker().check_file(path).error is not None or module == "elsewhere"
        report = Checker(confine=inside).check_file(path)
        assert report.lemmas == [] and report.error.line == 1
        notes.append(report.error.message.replace(module, "MODULE"))
    assert notes[0] == notes[1] == ("cannot import from MODULE.proof: it is outside the "
                                    "submission's directory")
    unconfined = Checker().check_file(inside / "elsewhere_importer.proof")
    assert unconfined.error is None  # without confine, the parent's file is imported


def test_symbolic_links_are_not_followed(graded):
    _, result = graded
    eve = _student(result, "eve")
    assert any("lib.proof: a symbolic link" in note for note in eve.notes)
    assert "no file lib.proof to import from" in _note(result, "eve", "progress")
    dana = _student(result, "dana")
    assert any("passwd: a symbolic link" in note for note in dana.notes)
    mallory = _student(result, "mallory")
    assert "symbolic link" in mallory.problem


def test_which_file_huge_and_binary_submissions(graded):
    _, result = graded
    assert _student(result, "undecided").problem.startswith("which file? undecided/ has 2")
    assert _student(result, "zoe").problem == ("which file? zoe/ and zoe.proof are both "
                                               "submissions of zoe: keep one")
    assert "larger than the limit of 1.0 MB" in _student(result, "huge").problem
    assert "the file cannot be read (garbage.proof:3:115: the file is not UTF-8 text" in \
        _note(result, "garbage", "progress")
    assert "save the file as UTF-8" in _note(result, "garbage", "progress")


def test_a_witness_outside_the_students_directory_is_refused(tmp_path):
    """Claims are items too: a student must refute the claim with a run of their own."""
    subs = tmp_path / "subs"
    subs.mkdir()
    claims = (DATA / "claims" / "claims.proof").read_text(encoding="utf-8")
    witness = (DATA / "claims" / "witnesses" / "normalise.json").read_text(encoding="utf-8")
    own = subs / "own"
    (own / "witnesses").mkdir(parents=True)
    (own / "claims.proof").write_text(claims, encoding="utf-8")
    (own / "witnesses" / "normalise.json").write_text(witness, encoding="utf-8")
    # Points at own's witness, then at the instructor's, through paths that leave the directory.
    (subs / "borrower.proof").write_text(
        claims.replace("witnesses/normalise.json", "own/witnesses/normalise.json"),
        encoding="utf-8")
    escaper = subs / "escaper"
    escaper.mkdir()
    (escaper / "claims.proof").write_text(
        claims.replace("witnesses/normalise.json", "../own/witnesses/normalise.json"),
        encoding="utf-8")
    linker = subs / "linker"
    (linker / "witnesses").mkdir(parents=True)
    (linker / "claims.proof").write_text(claims, encoding="utf-8")
    (linker / "witnesses" / "normalise.json").symlink_to(
        DATA / "claims" / "witnesses" / "normalise.json")
    # A run that refutes another claim of the catalogue earns nothing here.
    other = subs / "other"
    (other / "witnesses").mkdir(parents=True)
    (other / "claims.proof").write_text(claims, encoding="utf-8")
    (other / "witnesses" / "normalise.json").write_text(
        (Path(__file__).parents[1] / "proofs" / "seeds" / "witnesses" /
         "seed003_batch_stop.json").read_text(encoding="utf-8"), encoding="utf-8")
    result = grade_class(subs, DATA / "claims" / "claims.proof", tmp_path / "out", jobs=2)
    got = {s.name: [int(r.points) for r in s.items] for s in result.students}
    assert got == {"own": [2, 1], "borrower": [2, 0], "escaper": [2, 0], "linker": [2, 0],
                   "other": [2, 0]}
    assert "own/witnesses/normalise.json: cannot read" in _note(result, "borrower",
                                                                "normalising_is_harmless")
    assert "must be in the directory of the .proof file" in _note(result, "escaper",
                                                                 "normalising_is_harmless")
    assert any("normalise.json: a symbolic link" in n for n in _student(result, "linker").notes)
    assert "another claim" in _note(result, "other", "normalising_is_harmless")


def test_special_names_are_escaped_in_every_output(graded):
    root, result = graded
    out = root / "out"
    html = (out / f"{SPECIAL}.html").read_text(encoding="utf-8")
    assert "<img src=x onerror" not in html
    assert (out / f"{SPECIAL}.md").is_file()
    rows = list(csv.reader(io.StringIO((out / "summary.csv").read_text(encoding="utf-8"))))
    names = [row[0] for row in rows[1:]]
    assert "'" + SPECIAL in names  # a leading apostrophe: no spreadsheet formula
    assert "ctrl\\u001b[31mred" in names  # an escape sequence, shown, never sent to a terminal
    assert not (out / "pwned").exists() and not Path("pwned").exists()
    ET.parse(out / "junit.xml")  # the control character did not break the XML


# ---------------------------------------------------------------------------- outputs

def test_summary_csv(graded):
    root, result = graded
    rows = list(csv.reader(io.StringIO((root / "out" / "summary.csv").read_text("utf-8"))))
    assert rows[0] == ["student", "score", "max_score"] + ITEMS
    body = {row[0].lstrip("'"): row[1:] for row in rows[1:]}
    assert len(body) == len(EXPECTED)
    for name, points in EXPECTED.items():
        assert body[name] == [str(sum(points)), "10"] + [str(p) for p in points], name
    names = [s.name for s in result.students]
    assert names == sorted(names)


def test_gradescope_results(graded):
    root, result = graded
    for student in result.students:
        data = json.loads((root / "out" / f"{student.name}.results.json").read_text("utf-8"))
        assert set(data) >= {"score", "tests"}
        assert data["score"] == sum(EXPECTED[student.name])
        assert [t["name"] for t in data["tests"]] == ITEMS
        for test, points, item in zip(data["tests"], EXPECTED[student.name], student.items):
            assert set(test) == {"name", "score", "max_score", "status", "output",
                                 "output_format", "visibility"}
            assert test["output_format"] == "md" and test["output"].startswith(item.note)
            assert test["score"] == points and test["max_score"] == int(item.max_points)
            assert test["status"] == ("passed" if item.earned else "failed")
            assert test["visibility"] == "visible" and isinstance(test["output"], str)


def test_gradescope_autograder_results_for_one_submission(tmp_path):
    (tmp_path / "subs").mkdir()
    (tmp_path / "subs" / "me.proof").write_text(CLASS["partly_wrong"][0], encoding="utf-8")
    (tmp_path / "autograder").mkdir()
    grade_class(tmp_path / "subs", REFERENCE, tmp_path / "out", gradescope=True,
                gradescope_results_dir=tmp_path / "autograder")
    data = json.loads((tmp_path / "autograder" / "results.json").read_text(encoding="utf-8"))
    assert data["score"] == 9
    assert data == json.loads((tmp_path / "out" / "me.results.json").read_text("utf-8"))


def test_junit_xml(graded):
    root, result = graded
    tree = ET.parse(root / "out" / "junit.xml").getroot()
    assert tree.tag == "testsuites"
    suites = {s.get("name"): s for s in tree.findall("testsuite")}
    assert len(suites) == len(result.students)
    wrong = suites["partly_wrong"]
    assert [c.get("name") for c in wrong.findall("testcase")] == ITEMS
    failures = [c for c in wrong.findall("testcase") if c.find("failure") is not None]
    assert [c.get("name") for c in failures] == ["w_star_nonzero"]
    assert "does not follow" in failures[0].find("failure").text
    assert suites["correct"].get("failures") == "0"


def test_reports_for_every_student(graded):
    root, result = graded
    for student in result.students:
        md = (root / "out" / f"{student.name}.md").read_text(encoding="utf-8")
        assert (root / "out" / f"{student.name}.html").is_file()
        assert "Grading summary" in md or student.problem in md


def test_the_class_table_shows_common_failures(graded):
    from novikoff.grade import class_table

    _, result = graded
    table = class_table(result)
    assert "progress" in table and f"/{len(EXPECTED)}" in table
    assert "\x1b" not in table  # control characters are escaped
    assert "not checked" in table and "undecided" in table


# ---------------------------------------------------------------------------- determinism, limits

def test_grading_is_deterministic(graded, tmp_path):
    root, _ = graded
    again = grade_class(root / "subs", REFERENCE, tmp_path / "once", jobs=1, rlimit=TEST_RLIMIT)
    first = (root / "out" / "summary.csv").read_text(encoding="utf-8")
    assert (tmp_path / "once" / "summary.csv").read_text(encoding="utf-8") == first
    assert len(again.students) == len(EXPECTED)


def test_running_out_of_memory_is_a_grade_not_a_crash(tmp_path):
    (tmp_path / "subs").mkdir()
    for name in ("a", "b"):
        (tmp_path / "subs" / f"{name}.proof").write_text(REF, encoding="utf-8")
    result = grade_class(tmp_path / "subs", REFERENCE, tmp_path / "out", jobs=2, memory_mb=1)
    assert [s.score for s in result.students] == [0, 0]
    for s in result.students:
        assert "memory" in s.problem
        assert all(r.failure == "stopped" for r in s.items)
        assert "memory" in (tmp_path / "out" / f"{s.name}.md").read_text(encoding="utf-8")


def test_workers_report_death_time_and_memory():
    import signal
    import time

    from novikoff.grade.workers import Budget, Task, run_isolated

    def die(_):
        os.kill(os.getpid(), signal.SIGKILL)

    def sleep(_):
        time.sleep(30)

    def hog(_):
        return bytearray(1 << 30)

    def fine(x):
        return x * 2

    seen = {}
    status = Path("/proc/self/status").read_text(encoding="utf-8")
    in_use_mb = int(status.split("VmSize:")[1].split()[0]) >> 10
    cap = in_use_mb + 300  # room for `fine`, not for `hog`'s 1 GB

    def record(task, outcome):
        seen[task.key] = outcome
        return None

    run_isolated([Task("die", die, 0), Task("sleep", sleep, 0), Task("hog", hog, 0),
                  Task("fine", fine, 21)], record, workers=2, memory_mb=cap,
                 budget=Budget(1000, 1000, 1000),
                 wall_seconds=3)
    assert seen["die"].status == "died" and seen["die"].value == -signal.SIGKILL
    assert seen["sleep"].status == "time"
    assert seen["hog"].status == "memory"
    assert (seen["fine"].status, seen["fine"].value) == ("ok", 42)


def test_the_rlimit_makes_a_costly_check_unknown_never_verified(tmp_path):
    from novikoff.checker import Checker
    from novikoff.kernel.solver import LIMITS

    path = tmp_path / "heavy.proof"
    setting = REF[:REF.index("# points: 1")]
    statement = HEAVY.split("have heavy: ")[1]
    path.write_text(f"{setting}lemma heavy_alone: {statement}proof:\n  {statement}",
                    encoding="utf-8")
    assert LIMITS.rlimit == 0
    try:
        LIMITS.rlimit = TEST_RLIMIT
        limited = Checker().check_file(path)
    finally:
        LIMITS.rlimit = 0
    heavy = next(lemma for lemma in limited.lemmas if lemma.name == "heavy_alone")
    assert heavy.status == "failed"
    assert [s.status for s in heavy.steps] == ["unknown"]
    free = Checker().check_file(path)
    assert next(lemma for lemma in free.lemmas if lemma.name == "heavy_alone").status == \
        "verified"


@pytest.mark.e2e  # the whole library again, under the grading limits
def test_bundled_proofs_still_check_under_the_default_budgets():
    from novikoff.checker import bundled_proofs_dir, check_paths
    from novikoff.checker import exit_code
    from novikoff.grade.workers import Budget

    try:  # forked workers inherit the limits
        Budget(DEFAULT_RLIMIT, DEFAULT_LEMMA_BUDGET, DEFAULT_FILE_BUDGET).apply()
        limited = check_paths([bundled_proofs_dir()], jobs=2)
    finally:
        Budget(0, 0, 0).apply()
    # As without a limit (`novikoff check proofs/` exits 0): every lemma verified or failing as
    # marked, no step unknown.
    assert exit_code(limited) == 0
    assert not [s for r in limited for s in r.steps if s.status == "unknown"]


# ---------------------------------------------------------------------------- points, reference



def test_points_from_a_toml_file(tmp_path):
    reference = tmp_path / "hw.proof"
    reference.write_text(REF.replace("# points: 3\n", ""), encoding="utf-8")
    (tmp_path / "hw.toml").write_text("[points]\nprogress = 2.5\nnorm_growth = 4\n",
                                      encoding="utf-8")
    result = grade_class(_one_student(tmp_path), reference, tmp_path / "out", jobs=1)
    assert [(n, str(p)) for n, _, p in result.items] == [
        ("w_star_nonzero", "1"), ("progress", "5/2"), ("norm_growth", "4"),
        ("mistake_bound", "2"), ("mistake_bound_unit", "1")]
    rows = (tmp_path / "out" / "summary.csv").read_text(encoding="utf-8").splitlines()
    assert rows[1] == "s,10.5,10.5,1,2.5,4,2,1"


def test_points_default_to_one(tmp_path):
    reference = tmp_path / "hw.proof"
    reference.write_text("\n".join(line for line in REF.splitlines()
                                   if not line.startswith("# points")), encoding="utf-8")
    result = grade_class(_one_student(tmp_path), reference, tmp_path / "out", jobs=1)
    assert [int(p) for _, _, p in result.items] == [1, 1, 1, 1, 1]


@pytest.mark.parametrize("change, toml, message", [
    (("# points: 2\n", "# points: two\n"), None, "points must be a number"),
    (("# points: 1\nlemma w_star", "# points: 1\n\nlemma w_star"), None,
     "must be directly above a lemma"),
    (("", ""), "[points]\nnope = 1\n", "'nope' is not a lemma"),
    (("", ""), "[points]\nprogress = 2\n", "gives progress 2 points but"),
    (("", ""), "[grades]\nprogress = 2\n", "unknown key 'grades'"),
    (("", ""), "[points]\nprogress = -1\n", "must be a number >= 0"),
])
def test_malformed_points_are_refused(tmp_path, change, toml, message):
    reference = tmp_path / "hw.proof"
    reference.write_text(REF.replace(*change, 1) if change[0] else REF, encoding="utf-8")
    if toml is not None:
        (tmp_path / "hw.toml").write_text(toml, encoding="utf-8")
    with pytest.raises(InvalidArgument, match=message):
        grade_class(_one_student(tmp_path), reference, tmp_path / "out", jobs=1)


def test_an_unverified_reference_is_refused_naming_the_lemma(tmp_path, capsys):
    reference = tmp_path / "hw.proof"
    reference.write_text(CLASS["cites_unverified"][0], encoding="utf-8")
    code = main(["grade", str(_one_student(tmp_path)), "--reference", str(reference), "-o",
                 str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 2
    assert "lemma helper (line" in err and "is not verified" in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


# ---------------------------------------------------------------------------- CLI and API

def test_cli_grades_and_exits_zero(tmp_path, capsys):
    subs = _one_student(tmp_path, CLASS["partly_wrong"][0])
    out = subs / "graded"  # inside the folder: not a student
    code = main(["grade", str(subs), "--reference", str(REFERENCE), "-o", str(out),
                 "--jobs", "1", "--junit", "--progress"])
    captured = capsys.readouterr()
    assert code == 0
    assert "w_star_nonzero" in captured.out and "0/1" in captured.out
    assert "1/1" in captured.err  # the progress bar
    assert sorted(p.name for p in out.iterdir()) == ["junit.xml", "s.html", "s.md",
                                                     "summary.csv"]
    assert main(["grade", str(subs), "--reference", str(REFERENCE), "-o", str(out), "-q"]) == 0
    assert (out / "summary.csv").read_text(encoding="utf-8").splitlines()[1:] == [
        "s,9,10,0,3,3,2,1"]


@pytest.mark.parametrize("args, message", [
    (["{missing}"], "is not a directory"),
    (["{empty}"], "has no submissions"),
    (["{subs}", "--jobs", "0"], "jobs=0"),
    (["{subs}", "--rlimit", "-5"], "rlimit=-5"),
    (["{subs}", "--memory-mb", "0"], "memory_mb=0"),
    (["{subs}", "--support", "/etc/passwd"], "support='/etc/passwd'"),
])
def test_cli_usage_errors_exit_two(tmp_path, capsys, args, message):
    subs = _one_student(tmp_path)
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "README.txt").write_text("not a submission", encoding="utf-8")
    paths = {"missing": tmp_path / "missing", "empty": tmp_path / "empty", "subs": subs}
    argv = ["grade"] + [a.format(**paths) for a in args] + [
        "--reference", str(REFERENCE), "-o", str(tmp_path / "out")]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_cli_requires_reference_and_out(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["grade", "somewhere"])
    assert exc.value.code == 2


def test_api_arguments_are_checked(tmp_path):
    subs = _one_student(tmp_path)
    with pytest.raises(ValueError, match="reference='nope.txt'"):
        grade_class(subs, "nope.txt", tmp_path / "out")
    with pytest.raises(ValueError, match="wall_timeout_s=0"):
        grade_class(subs, REFERENCE, tmp_path / "out", wall_timeout_s=0)
    with pytest.raises(ValueError, match="jobs=True"):
        grade_class(subs, REFERENCE, tmp_path / "out", jobs=True)


def test_support_files_are_given_to_every_student_and_nothing_else(tmp_path):
    """--support: a library beside the reference that students may import; without it, the
    same import fails (the reference's directory is not theirs)."""
    ref_dir = tmp_path / "ref"
    ref_dir.mkdir()
    library = REF[:REF.index("# points: 1")] + REF[REF.index("# Each update adds"):
                                                  REF.index("# points: 3\nlemma norm_growth")]
    (ref_dir / "lib.proof").write_text(library, encoding="utf-8")
    body = "from lib import progress\n" + _without("# Each update adds",
                                                   "# points: 3\nlemma norm_growth")
    (ref_dir / "hw.proof").write_text(body, encoding="utf-8")
    subs = _one_student(tmp_path, body, "importer")
    with_lib = grade_class(subs, ref_dir / "hw.proof", tmp_path / "out1", jobs=1,
                           support=[ref_dir / "lib.proof"])
    assert [n for n, _, _ in with_lib.items] == [
        "w_star_nonzero", "norm_growth", "mistake_bound", "mistake_bound_unit"]
    assert int(with_lib.students[0].score) == 7  # 1 + 3 + 2 + 1
    without = grade_class(subs, ref_dir / "hw.proof", tmp_path / "out2", jobs=1)
    assert int(without.students[0].score) == 0
    assert "no file lib.proof to import from" in without.students[0].items[0].note


# ---------------------------------------------------------------------------- red-team findings

def test_python_files_in_a_submission_are_never_imported(tmp_path):
    # A student directory holding argparse.py (imported lazily by the reports, after the worker
    # moved into the student's copy) once ran its code in the worker and in the host.
    subs = tmp_path / "subs"
    (subs / "mallory").mkdir(parents=True)
    (subs / "mallory" / "assignment.proof").write_text("setting nothing:\n  real a\n",
                                                       encoding="utf-8")
    marker = tmp_path / "PWNED"
    payload = f"open({str(marker)!r}, 'a').write('ran\\n')\nraise SystemExit(0)\n"
    for module in ("argparse", "html", "json", "csv", "fractions", "novikoff"):
        (subs / "mallory" / f"{module}.py").write_text(payload, encoding="utf-8")
    (subs / "alice.proof").write_text(REF, encoding="utf-8")
    result = grade_class(subs, REFERENCE, tmp_path / "out", jobs=1)
    assert not marker.exists()
    scores = {s.name: s.score for s in result.students}
    assert scores == {"alice": 10, "mallory": 0}


def test_names_that_are_not_utf8_do_not_stop_the_class(tmp_path):
    subs = tmp_path / "subs"
    subs.mkdir()
    (subs / "alice.proof").write_text(REF, encoding="utf-8")
    os.mkdir(os.path.join(os.fsencode(subs), b"eve"))
    with open(os.path.join(os.fsencode(subs), b"eve", b"\xff.proof"), "wb") as f:
        f.write(REF.encode())
    with open(os.path.join(os.fsencode(subs), b"m\xffallory.proof"), "wb") as f:
        f.write(REF.encode())
    (subs / "zoe.proof").write_text(REF, encoding="utf-8")
    result = grade_class(subs, REFERENCE, tmp_path / "out")
    by_name = {s.name: s for s in result.students}
    assert by_name["alice"].score == by_name["zoe"].score == 10
    assert by_name["m\ufffdallory"].score == 0 and "not valid UTF-8" in \
        by_name["m\ufffdallory"].problem
    assert by_name["eve"].score == 0
    assert (tmp_path / "out" / "summary.csv").is_file()


@pytest.mark.parametrize("name, shown", [("mallory\rbob", "mallory\\u000dbob"),
                                         ("alice\u200b", "alice\\u200b"),
                                         ("a\u202eevil", "a\\u202eevil")])
def test_control_and_invisible_characters_in_names_are_shown_as_escapes(tmp_path, name, shown):
    subs = _one_student(tmp_path, name=name)
    (subs / "alice.proof").write_text(REF, encoding="utf-8")
    grade_class(subs, REFERENCE, tmp_path / "out")
    rows = list(csv.reader(io.StringIO((tmp_path / "out" / "summary.csv").read_text())))
    assert [r[0] for r in rows[1:]] == sorted(["alice", shown])
    assert len(rows) == 3  # no row split by a line break in a name
