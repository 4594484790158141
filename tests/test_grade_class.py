"""`novikoff grade` as an instructor uses it: a course folder, the citing policy, statements
written another way, encodings, hard lines under the budgets, feedback students can act on.

Each student below stands for a case of the class an instructor graded; the fair score of each
was written down first (EXPECTED), and the notes say why.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from novikoff.cli import main
from novikoff.grade import grade_class
from novikoff.grade.judge import POLICY_OFF, POLICY_ON
from novikoff.grade.submissions import Submission

DATA = Path(__file__).parent / "data" / "grade"
REF = (DATA / "assignment.proof").read_text(encoding="utf-8")
ITEMS = ["w_star_nonzero", "progress", "norm_growth", "mistake_bound", "mistake_bound_unit"]
POLICY_LINE = "# policy: cite_earlier_parts = yes\n"

# Budgets small enough to keep the tests fast and large enough for every honest lemma of the
# assignment (each needs under 12,000 units; benchmarks/measure_rlimit.py).
BUDGETS = dict(rlimit=60_000, lemma_budget=200_000, file_budget=300_000)
# A true step whose check costs about 300,000 units: over every budget above.
HEAVY = "  have heavy: (gamma + R + k)^5 >= 3^5*gamma*R*k*(gamma*R + R*k + k*gamma)/3\n"

BASE = """  base:
    ||w[0]||^2 = 0                                       by start
"""
NORM_GROWTH = REF[REF.index("# points: 3\nlemma norm_growth"):REF.index("# points: 2\ntheorem")]


def _edit(old: str, new: str, text: str = REF) -> str:
    assert old in text, old
    return text.replace(old, new, 1)


def _helpers(n: int) -> str:
    """n helper lemmas, each with a step over every budget, before the assignment's lemmas."""
    return "".join(f"lemma hard{i}: gamma > 0\nproof:\n{HEAVY}  gamma > 0\n\n" for i in range(n))


SETTING_END = "  assume   radius:  ||x|| <= R\n"

# student -> (the file's bytes, the points expected per item)
CLASS = {
    "correct": (REF, [1, 3, 3, 2, 1]),
    # norm_growth's induction has no base case; the later parts cite it
    "no_base": (_edit(BASE, ""), [1, 3, 0, 2, 1]),
    # norm_growth left out altogether
    "skipped": (_edit(NORM_GROWTH, ""), [1, 3, 0, 2, 1]),
    # the statements mirrored or rewritten: equivalent in the setting
    "mirrored": (_edit("lemma progress: <w_star, w[k]> >= k*gamma",
                       "lemma progress: k*gamma <= <w_star, w[k]>",
                       _edit("theorem mistake_bound: k <= R^2 * ||w_star||^2 / gamma^2",
                             "theorem mistake_bound: k <= (R*||w_star||/gamma)^2",
                             _edit("  hence k <= R^2 * ||w_star||^2 / gamma^2",
                                   "  hence k <= (R*||w_star||/gamma)^2"))),
                 [1, 3, 3, 2, 1]),
    # a weaker statement is not equivalent
    "weaker": (_edit("theorem mistake_bound: k <= R^2 * ||w_star||^2 / gamma^2",
                     "theorem mistake_bound: k <= 2 * R^2 * ||w_star||^2 / gamma^2",
                     _edit("  hence k <= R^2 * ||w_star||^2 / gamma^2",
                           "  hence k <= 2 * R^2 * ||w_star||^2 / gamma^2")),
               [1, 3, 3, 0, 0]),
    # a typo in a lemma's name
    "typo": (_edit("lemma norm_growth:", "lemma norm_grow:",
                   _edit("by norm_growth", "by norm_grow")), [1, 3, 0, 2, 1]),
    # Windows editors: a byte-order mark
    "bom": ("\ufeff" + REF, [1, 3, 3, 2, 1]),
    # a file saved as Latin-1
    "latin1": (_edit("# Homework 3", "# Homéwork 3").encode("latin-1"), [0, 0, 0, 0, 0]),
    # a step over every budget in a graded lemma: that lemma times out, the others earn
    "hard_item": (_edit("lemma w_star_nonzero: ||w_star|| > 0\nproof:\n",
                        "lemma w_star_nonzero: ||w_star|| > 0\nproof:\n" + HEAVY),
                  [0, 3, 3, 2, 1]),
    # twelve helper lemmas with such steps before the graded ones: the graded ones still earn
    "many_hard": (_edit("\n\n# points: 1\nlemma w_star_nonzero",
                        "\n\n" + _helpers(12) + "# points: 1\nlemma w_star_nonzero"),
                  [1, 3, 3, 2, 1]),
}


def _write_class(folder: Path) -> None:
    folder.mkdir(parents=True)
    for name, (text, _) in CLASS.items():
        data = text if isinstance(text, bytes) else text.encode("utf-8")
        (folder / f"{name}.proof").write_bytes(data)


def _grade(tmp: Path, policy: bool):
    course = tmp / ("on" if policy else "off")
    (course / "assignment").mkdir(parents=True)
    (course / "assignment" / "assignment.proof").write_text(
        (POLICY_LINE if policy else "") + REF, encoding="utf-8")
    _write_class(course / "submissions")
    return grade_class(course / "submissions", course / "assignment" / "assignment.proof",
                       course / "graded", jobs=2, gradescope=True, **BUDGETS)


@pytest.fixture(scope="module")
def policy_on(tmp_path_factory):
    return _grade(tmp_path_factory.mktemp("class"), policy=True)


def _student(result, name):
    return next(s for s in result.students if s.name == name)


def _items(result, name) -> dict:
    return {r.name: r for r in _student(result, name).items}


@pytest.mark.parametrize("name", sorted(CLASS))
def test_each_student_gets_the_fair_score(policy_on, name):
    points = [int(r.points) for r in _student(policy_on, name).items]
    assert points == CLASS[name][1], {r.name: r.note for r in _student(policy_on, name).items}


def test_citing_an_earlier_part_unproved_is_credited_under_the_policy(policy_on):
    for name in ("no_base", "skipped"):
        items = _items(policy_on, name)
        assert items["mistake_bound"].note == (
            f"verified on its own steps, citing norm_growth as the assignment states it "
            f"({POLICY_ON})")
        assert "citing mistake_bound as the assignment states it" in \
            items["mistake_bound_unit"].note
    assert "the induction has no base case" in _items(policy_on, "no_base")["norm_growth"].note


def test_without_the_policy_a_citation_of_an_unproved_part_earns_nothing(tmp_path):
    result = _grade(tmp_path, policy=False)
    assert [int(r.points) for r in _student(result, "no_base").items] == [1, 3, 0, 0, 0]
    note = _items(result, "no_base")["mistake_bound"].note
    assert "holds only if norm_growth holds, which is not verified" in note
    assert POLICY_OFF in note
    # a part that is not in the file at all cannot be cited without the policy
    assert [int(r.points) for r in _student(result, "skipped").items] == [1, 3, 0, 0, 0]
    # everyone else is graded the same either way
    assert [int(r.points) for r in _student(result, "mirrored").items] == [1, 3, 3, 2, 1]


def test_the_policy_never_credits_a_lemma_that_does_not_follow(tmp_path):
    """A later part citing an earlier one must still be right on its own steps."""
    wrong = _edit("<= ||w_star|| * sqrt(k) * R        by norm_growth",
                  "<= ||w_star|| * sqrt(k) * R / 2    by norm_growth", _edit(BASE, ""))
    course = tmp_path / "c"
    (course / "subs").mkdir(parents=True)
    (course / "assignment.proof").write_text(POLICY_LINE + REF, encoding="utf-8")
    (course / "subs" / "s.proof").write_text(wrong, encoding="utf-8")
    result = grade_class(course / "subs", course / "assignment.proof", course / "out", jobs=1,
                         **BUDGETS)
    items = _items(result, "s")
    assert items["mistake_bound"].points == 0
    assert items["mistake_bound_unit"].points == 1  # it cites mistake_bound as stated


def test_equivalent_statements_earn_and_say_so(policy_on):
    items = _items(policy_on, "mirrored")
    assert items["progress"].note.startswith("verified; stated differently")
    assert "equivalent to the assignment's" in items["mistake_bound"].note
    assert items["norm_growth"].note == "verified"
    weaker = _items(policy_on, "weaker")["mistake_bound"]
    assert weaker.failure == "statement"
    assert "verified, but it states" in weaker.note


def test_a_typo_in_a_name_gets_did_you_mean(policy_on):
    note = _items(policy_on, "typo")["norm_growth"].note
    assert note.startswith("no lemma named norm_growth in the file: did you mean `norm_growth`?")
    assert "your `norm_grow`" in note and "states the assignment's norm_growth" in note


def test_encodings(policy_on, tmp_path):
    assert _student(policy_on, "bom").score == 10
    note = _items(policy_on, "latin1")["progress"].note
    assert note.startswith("the file cannot be read (latin1.proof:1:")
    assert "byte 0xe9" in note and "save the file as UTF-8" in note
    md = (policy_on.out_dir / "latin1.md").read_text(encoding="utf-8")
    assert "not checked" in md and "malformed" not in md
    # `novikoff check` reads a file with a byte-order mark too, and names a bad byte
    (tmp_path / "bom.proof").write_text("\ufeff" + REF, encoding="utf-8")
    assert main(["check", str(tmp_path / "bom.proof"), "-q"]) == 0
    (tmp_path / "latin1.proof").write_bytes(CLASS["latin1"][0])
    assert main(["check", str(tmp_path / "latin1.proof"), "-q"]) == 2


def test_a_hard_step_times_out_its_lemma_only(policy_on):
    item = _items(policy_on, "hard_item")["w_star_nonzero"]
    assert item.failure == "timed-out"
    assert item.note.startswith("line 23: timed out: could not verify within the grading "
                                "limits")
    results = json.loads((policy_on.out_dir / "hard_item.results.json").read_text("utf-8"))
    assert "malformed" not in json.dumps(results)
    md = (policy_on.out_dir / "many_hard.md").read_text(encoding="utf-8")
    assert "timed out" in md and "malformed" not in md


# ---------------------------------------------------------------------------- a course folder

def _course(root: Path) -> Path:
    (root / "assignment").mkdir(parents=True)
    (root / "assignment" / "hw4.proof").write_text(REF, encoding="utf-8")
    (root / "submissions").mkdir()
    (root / "submissions" / "ada.proof").write_text(REF, encoding="utf-8")
    (root / "submissions" / "ben.proof").write_text(_edit(BASE, ""), encoding="utf-8")
    return root


LAYOUTS = {
    # run from the course folder, every path relative
    "relative": (".", ["submissions", "--reference", "assignment/hw4.proof", "-o", "graded"],
                 "graded"),
    # run from the assignment's folder, outputs beside the course
    "from_the_reference": ("assignment", ["../submissions", "--reference", "hw4.proof", "-o",
                                          "../../elsewhere/out"], "../elsewhere/out"),
    # absolute paths, run from anywhere
    "absolute": ("/", ["{root}/submissions", "--reference", "{root}/assignment/hw4.proof",
                       "-o", "{root}/abs_out"], "abs_out"),
}


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_every_layout_an_instructor_uses(tmp_path, monkeypatch, capsys, layout):
    root = _course(tmp_path / "course")
    where, args, out = LAYOUTS[layout]
    monkeypatch.chdir(root / where if where != "/" else "/")
    args = [a.format(root=root) for a in args]
    code = main(["grade", *args, "--jobs", "2", "-q"])
    assert code == 0, capsys.readouterr().err
    summary = (root / out / "summary.csv").resolve().read_text(encoding="utf-8").splitlines()
    assert summary[1:] == ["ada,10,10,1,3,3,2,1", "ben,4,10,1,3,0,0,0"]


def test_a_file_the_grader_cannot_read_is_loud(tmp_path, monkeypatch, capsys):
    """Not the student's fault: a warning names the student, and the command exits 1."""
    root = _course(tmp_path / "course")
    gone = Submission("cy", str(root / "submissions" / "cy.proof"), "file")

    def listed(folder, skip=()):
        from novikoff.grade.submissions import find_submissions
        return find_submissions(folder, skip) + [gone]  # listed, then removed before reading

    monkeypatch.setattr("novikoff.grade.run.find_submissions", listed)
    code = main(["grade", str(root / "submissions"), "--reference",
                 str(root / "assignment" / "hw4.proof"), "-o", str(root / "out"), "-q"])
    err = capsys.readouterr().err
    assert code == 1
    assert "warning: cy was not graded fairly: the grader could not read cy.proof" in err
    assert "ada" not in err
    result_rows = (root / "out" / "summary.csv").read_text(encoding="utf-8").splitlines()
    assert "ada,10,10,1,3,3,2,1" in result_rows


def test_gradescope_output_shows_the_failing_step_and_its_counterexample(policy_on):
    results = json.loads((policy_on.out_dir / "weaker.results.json").read_text("utf-8"))
    unit = next(t for t in results["tests"] if t["name"] == "mistake_bound_unit")
    assert unit["output_format"] == "md" and unit["status"] == "failed"
    assert "**line 69**: `k <= R^2 * ||w_star||^2 / gamma^2" in unit["output"]
    assert "- counterexample: `" in unit["output"]


@pytest.mark.parametrize("line, toml, message", [
    ("# policy: cite_later_parts = yes\n", None, "unknown policy 'cite_later_parts'"),
    ("# policy: cite_earlier_parts = maybe\n", None,
     "write '# policy: cite_earlier_parts = yes' (or no)"),
    ("", "[policy]\ncite_earlier_parts = 'yes'\n", "must be true or false"),
    ("# policy: cite_earlier_parts = no\n", "[policy]\ncite_earlier_parts = true\n",
     "disagree on policy cite_earlier_parts"),
])
def test_a_malformed_policy_is_refused(tmp_path, capsys, line, toml, message):
    root = _course(tmp_path / "course")
    reference = root / "assignment" / "hw4.proof"
    reference.write_text(line + REF, encoding="utf-8")
    if toml is not None:
        reference.with_suffix(".toml").write_text(toml, encoding="utf-8")
    code = main(["grade", str(root / "submissions"), "--reference", str(reference), "-o",
                 str(root / "out"), "-q"])
    assert code == 2
    assert message in capsys.readouterr().err


# ---------------------------------------------------------------------------- red-team findings

def _one(tmp_path: Path, reference: str, submission: str, **options):
    course = tmp_path / "c"
    (course / "subs").mkdir(parents=True)
    (course / "assignment.proof").write_text(reference, encoding="utf-8")
    (course / "subs" / "s.proof").write_text(submission, encoding="utf-8")
    result = grade_class(course / "subs", course / "assignment.proof", course / "out", jobs=1,
                         **BUDGETS, **options)
    return _items(result, "s")


def test_a_stray_character_in_a_step_fails_that_lemma_only(tmp_path):
    items = _one(tmp_path, REF, _edit("  hence ||w_star|| > 0\n", "  hence ||w_star|| > 0 $\n"))
    assert [int(r.points) for r in items.values()] == [0, 3, 3, 2, 1]
    assert "unexpected character '$'" in items["w_star_nonzero"].note


def test_a_part_verified_only_in_another_setting_is_cited_as_the_assignment_states_it(tmp_path):
    """Under the policy, the student's progress and norm_growth hold only in a setting of
    their own (with extra assumptions): mistake_bound, in the assignment's setting, rests on
    the parts as the assignment states them."""
    setting = REF[REF.index("setting perceptron:"):REF.index("\n\n\n# points: 1")]
    cheat = setting.replace("setting perceptron:", "setting cheat:") + \
        "\n  assume   pg: <w_star, w[k]> >= k*gamma\n  assume   ng: ||w[k]||^2 <= k*R^2\n"
    lemmas = ("\nlemma progress: <w_star, w[k]> >= k*gamma\nproof:\n  <w_star, w[k]> >= k*gamma"
              "   by pg\n\nlemma norm_growth: ||w[k]||^2 <= k*R^2\nproof:\n"
              "  ||w[k]||^2 <= k*R^2   by ng\n\n")
    bound = REF[REF.index("# points: 2\ntheorem mistake_bound"):REF.index("# points: 1\ntheorem")]
    submission = cheat + lemmas + setting + "\n\n" + bound
    items = _one(tmp_path, POLICY_LINE + REF, submission)
    assert items["progress"].points == 0  # its setting is not the assignment's (or vacuous)
    assert items["mistake_bound"].points == 2, items["mistake_bound"].note
    assert "citing progress, norm_growth as the assignment states them" in \
        items["mistake_bound"].note


def test_a_part_cited_at_another_value_says_why_it_cannot_be(tmp_path):
    reference = POLICY_LINE + REF + (
        "\n\n# points: 1\nlemma next: <w_star, w[k+1]> >= (k+1)*gamma\nproof:\n"
        "  <w_star, w[k+1]> >= (k+1)*gamma     by progress[k := k+1]\n")
    setting = REF[:REF.index("\n\n\n# points: 1")]
    submission = setting + ("\n\nlemma next: <w_star, w[k+1]> >= (k+1)*gamma\nproof:\n"
                            "  <w_star, w[k+1]> >= (k+1)*gamma     by progress[k := k+1]\n")
    note = _one(tmp_path, reference, submission)["next"].note
    assert "progress is cited as the assignment states it, not proved here: it holds at k " \
           "only" in note


def test_equivalence_uses_the_settings_assumptions(tmp_path):
    reference = ("setting s:\n  real a, b\n  assume ha: a >= 1\n  assume hb: b >= 2\n\n"
                 "lemma L: a >= 0 and b >= 0\nproof:\n  a >= 0 and b >= 0   by ha, hb\n")
    submission = reference.replace("lemma L: a >= 0 and b >= 0\nproof:\n  a >= 0 and b >= 0",
                                   "lemma L: a >= 1 and b >= 0\nproof:\n  a >= 1 and b >= 0")
    item = _one(tmp_path, reference, submission)["L"]
    assert item.points == 1 and "stated differently" in item.note
