"""Each kind of false step is rejected with a correct counterexample or hint; valid ones pass."""

from __future__ import annotations

from fractions import Fraction

import pytest

from helpers import check_text, lemma_of, steps_of

NOVIKOFF = """
lemma progress: <w_star, w[k]> >= k*gamma
proof by induction on k:
  base:
    <w_star, w[0]> = 0                                   by start
  step:
    <w_star, w[k+1]> = <w_star, w[k] + y*x>              by update
                     = <w_star, w[k]> + y*<w_star, x>    by algebra
                     >= k*gamma + gamma                  by ih, margin
                     = (k+1)*gamma

lemma norm_growth: ||w[k]||^2 <= k*R^2
proof by induction on k:
  base:
    ||w[0]||^2 = 0   by start
               <= 0*R^2
  step:
    ||w[k+1]||^2 = ||w[k] + y*x||^2                          by update
                 = ||w[k]||^2 + 2*y*<w[k], x> + y^2*||x||^2
                 <= ||w[k]||^2 + R^2                         by mistake, radius
                 <= k*R^2 + R^2                              by ih
                 = (k+1)*R^2

theorem mistake_bound: k <= R^2 * ||w_star||^2 / gamma^2
proof:
  k*gamma <= <w_star, w[k]>               by progress
          <= ||w_star|| * ||w[k]||        by cauchy_schwarz
          <= ||w_star|| * sqrt(k) * R     by norm_growth
  hence k <= R^2 * ||w_star||^2 / gamma^2
"""


def test_the_novikoff_proof_verifies(tmp_path):
    report = check_text(tmp_path, NOVIKOFF)
    assert report.error is None
    assert [l.status for l in report.lemmas] == ["verified"] * 3
    assert all(s.status == "verified" for s in report.steps)


def _single_failure(report, lemma="t"):
    bad = [s for s in steps_of(report, lemma) if s.status != "verified"]
    assert len(bad) >= 1, [s.status for s in steps_of(report, lemma)]
    assert lemma_of(report, lemma).status == "failed"
    return bad[0]


def _values(cex):
    return {k: Fraction(v) for k, v in cex.items()}


def test_missing_square_is_rejected_with_a_counterexample(tmp_path):
    report = check_text(tmp_path, """
        lemma t: <x, x> <= R
        proof:
          <x, x> <= R    by radius
        """)
    step = _single_failure(report)
    assert step.status == "failed" and step.counterexample
    v = _values(step.counterexample)
    # The counterexample satisfies ||x|| <= R and violates <x, x> <= R.
    assert v["<x, x>"] > v["R"] and v["<x, x>"] <= v["R"] ** 2
    assert (step.line, step.column) == (17, 10)


def test_the_square_makes_it_valid(tmp_path):
    report = check_text(tmp_path, """
        lemma t: <x, x> <= R^2
        proof:
          <x, x> <= R^2    by radius
        """)
    assert lemma_of(report, "t").status == "verified"


def test_flipped_relation_is_rejected(tmp_path):
    report = check_text(tmp_path, """
        lemma t: <w_star, w[k]> + y*<w_star, x> <= <w_star, w[k]> + gamma
        proof:
          <w_star, w[k]> + y*<w_star, x> <= <w_star, w[k]> + gamma   by margin
        """)
    step = _single_failure(report)
    v = _values(step.counterexample)
    assert v["y"] * v["<w_star, x>"] > v["gamma"]


def test_wrong_constant_is_rejected(tmp_path):
    report = check_text(tmp_path, """
        lemma t: <w_star, w[k]> + y*<w_star, x> >= k*gamma + 2*gamma
        given hyp: <w_star, w[k]> >= k*gamma
        proof:
          <w_star, w[k]> + y*<w_star, x> >= k*gamma + 2*gamma   by hyp, margin
        """)
    step = _single_failure(report)
    v = _values(step.counterexample)
    progress = v[f"<w_star, w[{v['k']}]>"]  # shown at the index it denotes
    assert progress >= v["k"] * v["gamma"]
    assert progress + v["y"] * v["<w_star, x>"] < v["k"] * v["gamma"] + 2 * v["gamma"]


def test_a_counterexample_shows_each_element_once_at_the_index_it_denotes(tmp_path):
    """At T = 0, a[T] is a[0]: shown once, as a[0], and a[T + 1] as a[1]."""
    report = check_text(tmp_path, """
        lemma t: a[T] >= 2
        proof:
          a[T] >= 2     by start, grow
        """, setting="""
setting s:
  real sequence a
  nat T
  assume start: a[0] = 1
  assume grow: a[T+1] = a[T] + 1
""")
    step = _single_failure(report)
    v = _values(step.counterexample)
    assert v["T"] == 0 and v["a[0]"] == 1 and v["a[1]"] == 2
    assert not any("T" in name for name in v if name != "T"), v


def test_uncited_hypothesis_is_named(tmp_path):
    report = check_text(tmp_path, """
        lemma t: y*<w_star, x> >= gamma/2
        proof:
          y*<w_star, x> >= gamma/2
        """)
    step = _single_failure(report)
    assert step.missing == ["margin"]
    assert "it would hold with: margin" in step.reason


def test_uncited_vector_definition_is_named(tmp_path):
    report = check_text(tmp_path, """
        lemma t: <w_star, w[k+1]> = <w_star, w[k]> + y*<w_star, x>
        proof:
          <w_star, w[k+1]> = <w_star, w[k]> + y*<w_star, x>
        """)
    step = _single_failure(report)
    assert step.missing == ["update"]


def test_division_by_a_possibly_zero_quantity(tmp_path):
    report = check_text(tmp_path, """
        lemma t: gamma/(R - 1) = gamma/(R - 1)
        proof:
          gamma/(R - 1) = gamma/(R - 1)
        """)
    step = _single_failure(report)
    assert "division by" in step.reason and "may be zero" in step.reason
    assert _values(step.counterexample)["R"] == 1


def test_division_by_a_nonzero_quantity_is_fine(tmp_path):
    report = check_text(tmp_path, """
        lemma t: k*gamma/gamma = k
        proof:
          k*gamma/gamma = k
        """)
    assert lemma_of(report, "t").status == "verified"


def test_sqrt_of_a_possibly_negative_quantity(tmp_path):
    report = check_text(tmp_path, """
        lemma t: sqrt(R - 1) >= 0
        proof:
          sqrt(R - 1) >= 0
        """)
    step = _single_failure(report)
    assert "square root of" in step.reason and "negative" in step.reason
    assert _values(step.counterexample)["R"] < 1


SEQUENCES = """
setting s:
  real sequence a
  sequence x
  nat T
"""


@pytest.mark.parametrize("term, shown", [
    ("1/abs(a[i])", "abs(a[i]) != 0"),
    ("sqrt(||x[i]|| - 1)", "||x[i]|| - 1 >= 0"),
    ("sqrt(||2*x[i] - x[i+1]|| - 1)", "||2*x[i] - x[i + 1]|| - 1 >= 0"),
    ("1/<x[i], x[i]>", "<x[i], x[i]> != 0"),
    ("1/max(a[i], 0)", "max(0, a[i]) != 0"),
])
def test_a_sum_whose_terms_mean_nothing_somewhere_names_them_as_written(tmp_path, term, shown):
    """The kernel's refusal shows the failing condition in the notation of .proof files, not in
    SymPy's (Abs(a(i)), Norm(((x(i), 1),)), Inner(x(i), x(i)))."""
    report = check_text(tmp_path, f"""
        lemma t: sum(i < T, {term}) >= 0
        proof:
          sum(i < T, {term}) >= 0
        """, setting=SEQUENCES)
    reason = lemma_of(report, "t").reason + " ".join(s.reason for s in steps_of(report, "t"))
    assert f"but {shown} is not seen to hold for every i" in reason, reason
    assert not any(internal in reason for internal in ("Abs(", "Norm(", "Inner(", "(i)"))


def test_vacuous_hypotheses_are_reported(tmp_path):
    setting = """\
setting s:
  real gamma > 0
  assume big:   gamma > 1
  assume small: gamma < 1/2
"""
    report = check_text(tmp_path, """
        lemma t: gamma >= 100
        proof:
          gamma >= 100   by big, small
        """, setting=setting)
    step = _single_failure(report)
    assert step.reason.startswith("vacuous")
    assert "(big, small)" in step.reason


def test_chain_that_does_not_reach_the_statement(tmp_path):
    report = check_text(tmp_path, """
        lemma t: y*<w_star, x> >= gamma
        proof:
          y*<w_star, x> >= gamma    by margin
                        >= gamma/2
        """)
    bad = [s for s in steps_of(report, "t") if s.status == "failed"]
    assert len(bad) == 1 and "the goal is" in bad[0].reason
    assert lemma_of(report, "t").status == "failed"


def test_chain_mixing_directions_does_not_compose(tmp_path):
    report = check_text(tmp_path, """
        lemma t: gamma <= 2*gamma
        proof:
          gamma <= 2*gamma
                >= gamma
        """)
    bad = [s for s in steps_of(report, "t") if s.status == "failed"]
    assert any("does not compose" in s.reason for s in bad)


def test_cauchy_schwarz_needed_but_not_cited(tmp_path):
    report = check_text(tmp_path, """
        lemma t: <w_star, w[k]> <= ||w_star|| * ||w[k]||
        proof:
          <w_star, w[k]> <= ||w_star|| * ||w[k]||
        """)
    step = _single_failure(report)
    assert step.counterexample is None  # no real vectors violate it
    assert "cauchy_schwarz" in step.missing


def test_cauchy_schwarz_with_explicit_vectors(tmp_path):
    report = check_text(tmp_path, """
        lemma t: y*<w_star, x - w[k]> <= ||w_star|| * ||x - w[k]||
        proof:
          y*<w_star, x - w[k]> <= ||w_star|| * ||x - w[k]||   by cauchy_schwarz(w_star, x - w[k])
        """)
    assert lemma_of(report, "t").status == "verified"


def test_triangle_inequality(tmp_path):
    report = check_text(tmp_path, """
        lemma t: ||w[k] + y*x|| <= ||w[k]|| + ||x||
        proof:
          ||w[k] + y*x|| <= ||w[k]|| + ||y*x||   by triangle
                         = ||w[k]|| + ||x||
        """)
    assert lemma_of(report, "t").status == "verified", steps_of(report, "t")


def test_case_split_must_cover(tmp_path):
    report = check_text(tmp_path, """
        lemma t: abs(gamma - 1) >= 0
        proof:
          cases:
            case low: gamma < 1
              abs(gamma - 1) >= 0
            case high: gamma > 1
              abs(gamma - 1) >= 0
        """)
    cover = [s for s in steps_of(report, "t") if s.text.startswith("cases")]
    assert cover and cover[0].status == "failed"
    assert _values(cover[0].counterexample)["gamma"] == 1


def test_case_split_hinge_squaring(tmp_path):
    setting = """\
setting hinge:
  real gamma > 0, TD >= 0
  nat M
"""
    # A bound on M is a `given`: as an assumption it would have to hold at every M.
    report = check_text(tmp_path, """
        lemma squaring_as_written: M >= gamma^2*M^2 - 2*gamma*M*TD
          given combined: sqrt(M) >= gamma*M - TD
        proof:
          M >= (gamma*M - TD)^2    by combined   xfail
            >= gamma^2*M^2 - 2*gamma*M*TD

        lemma bound: M <= 1/gamma^2 + 2*TD/gamma
          given combined: sqrt(M) >= gamma*M - TD
        proof by cases:
          case small: gamma*M <= TD
            M <= TD/gamma                  by small
              <= 1/gamma^2 + 2*TD/gamma
          case large: gamma*M > TD
            M <= 1/gamma^2 + 2*TD/gamma    by combined, large
        """, setting=setting)
    assert lemma_of(report, "squaring_as_written").status == "expected_failure"
    xf = [s for s in steps_of(report, "squaring_as_written") if s.xfail][0]
    assert xf.status == "expected_failure"
    v = _values(xf.counterexample)
    assert v["gamma"] * v["M"] < v["TD"]  # the case the seed forgot
    assert lemma_of(report, "bound").status == "verified"


def test_xfail_step_that_verifies_is_an_error(tmp_path):
    report = check_text(tmp_path, """
        lemma t: y*<w_star, x> >= gamma
        proof:
          y*<w_star, x> >= gamma   by margin   xfail
        """)
    step = steps_of(report, "t")[0]
    assert step.status == "failed" and "verifies" in step.reason


def test_induction_refuses_per_update_statement(tmp_path):
    report = check_text(tmp_path, """
        lemma t: y*<w[k], x> >= 0
        proof by induction on k:
          base:
            y*<w[0], x> = 0   by start
                        >= 0
          step:
            y*<w[k+1], x> = y*<w[k], x> + y^2*<x, x>   by update
                          >= 0                          by ih
        """)
    assert lemma_of(report, "t").status == "failed"
    assert any("per update" in s.reason for s in steps_of(report, "t"))


def test_citing_an_unverified_lemma_taints(tmp_path):
    report = check_text(tmp_path, """
        lemma wrong: gamma >= R
        proof:
          gamma >= R
        lemma uses: 2*gamma >= 2*R
        proof:
          2*gamma >= 2*R   by wrong
        """)
    assert lemma_of(report, "wrong").status == "failed"
    uses = lemma_of(report, "uses")
    # The step holds only relative to the unverified lemma, and says so.
    (step,) = uses.steps
    assert step.status == "failed" and "holds only if wrong holds" in step.reason
    assert uses.status == "failed" and "wrong" in uses.reason


def test_nats_are_whole_numbers(tmp_path):
    # No nat lies strictly between two consecutive integers; nat_cases still documents it.
    report = check_text(tmp_path, """
        lemma needs_integrality: sqrt(k) <= k
        proof:
          sqrt(k) <= k
        lemma with_cases: sqrt(k) <= k
        proof:
          sqrt(k) <= k   by nat_cases
        lemma between: (k-1)*(k-2) >= 0
        proof:
          (k-1)*(k-2) >= 0
        lemma false_for_reals: k*(2*k - 3) >= -1
        proof:
          k*(2*k - 3) >= -1
        lemma false: k*(2*k - 3) >= 0
        proof:
          k*(2*k - 3) >= 0   xfail
        """)
    for name in ("needs_integrality", "with_cases", "between", "false_for_reals"):
        assert lemma_of(report, name).status == "verified", name
    wrong = steps_of(report, "false")[0]
    assert wrong.status == "expected_failure"
    assert wrong.counterexample["k"] == "1"


def test_given_hypotheses_are_discharged(tmp_path):
    report = check_text(tmp_path, """
        lemma t: ||w[k]|| + 1/(2*||w[k]||) >= ||w[k]||
        given nonzero: ||w[k]|| > 0
        proof:
          ||w[k]|| + 1/(2*||w[k]||) >= ||w[k]||   by nonzero
        lemma without: ||w[k]|| + 1/(2*||w[k]||) >= ||w[k]||
        proof:
          ||w[k]|| + 1/(2*||w[k]||) >= ||w[k]||
        """)
    assert lemma_of(report, "t").status == "verified"
    bad = steps_of(report, "without")[0]
    assert "division by" in bad.reason


def test_division_by_a_square_root(tmp_path):
    setting = "setting s:\n  real a > 0, b > 0\n"
    report = check_text(tmp_path, """
        lemma half: a/sqrt(b) >= 0
        proof:
          a/sqrt(b) >= 0
        """, setting=setting)
    assert lemma_of(report, "half").status == "verified"


def test_counterexample_respects_equal_indices(tmp_path):
    setting = "setting s:\n  sequence w\n  nat j, k\n"
    report = check_text(tmp_path, """
        lemma alias: ||w[j]||^2 <= ||w[k]||^2
        proof:
          ||w[j]||^2 <= ||w[k]||^2      xfail
        """, setting=setting)
    step = steps_of(report, "alias")[0]
    assert step.status == "expected_failure"
    v = _values(step.counterexample)
    # Equal indices would name one vector: a real counterexample has j != k.
    assert v["j"] != v["k"]


def test_unicode_and_ascii_notation_agree(tmp_path):
    ascii_text = """
        lemma t: <w_star, w[k]> + y*<w_star, x> >= k*gamma + gamma
        given hyp: <w_star, w[k]> >= k*gamma
        proof:
          <w_star, w[k]> + y*<w_star, x> >= k*gamma + gamma   by hyp, margin
        """
    unicode_text = """
        lemma t: ⟨w⋆, w[k]⟩ + y·⟨w⋆, x⟩ ≥ k·γ + γ
        given hyp: ⟨w⋆, w[k]⟩ ≥ k·γ
        proof:
          ⟨w⋆, w[k]⟩ + y·⟨w⋆, x⟩ ≥ k·γ + γ   by hyp, margin
        """
    a = check_text(tmp_path, ascii_text, name="a.proof")
    u = check_text(tmp_path, unicode_text, name="u.proof")
    assert lemma_of(a, "t").formula == lemma_of(u, "t").formula
    assert lemma_of(u, "t").status == "verified"
    sq = check_text(tmp_path, """
        lemma t: ‖x‖² ≤ R²
        proof:
          ‖x‖² ≤ R^2   by radius
        lemma r: √(‖x‖²) ≤ R
        proof:
          √(‖x‖²) = ‖x‖
                  ≤ R    by radius
        """, name="s.proof")
    assert [l.status for l in sq.lemmas] == ["verified", "verified"]


def test_setting_assumptions_must_be_meaningful_and_consistent(tmp_path):
    setting = """\
setting s:
  real gamma > 0, R
  assume inv: 1/(gamma - 1) > 0
  assume root: sqrt(R) >= 0
"""
    report = check_text(tmp_path, "", setting=setting)
    checks = report.lemmas[0].steps
    assert report.lemmas[0].name == "setting s"
    assert {s.line for s in checks} == {3, 4}
    assert all(s.status == "failed" for s in checks)
    contradictory = """\
setting c:
  real gamma > 0
  assume neg: gamma < 0
"""
    report = check_text(tmp_path, "", setting=contradictory, name="c.proof")
    assert "contradict" in report.lemmas[0].steps[0].reason


def test_a_meaningless_left_side_is_reported_once(tmp_path):
    setting = "setting s:\n  real a, b > 0, c\n"
    report = check_text(tmp_path, """
        lemma d: 1/a >= c
        proof:
          1/a = 1/a            xfail
              >= c             xfail
        """, setting=setting)
    first, second = steps_of(report, "d")[:2]
    assert "division by a" in first.reason
    # The next step supposes 1/a meaningful and is judged on its own terms (c is arbitrary).
    assert "division" not in second.reason and "supposing its left side" in second.reason
    v = _values(second.counterexample)
    assert v["a"] != 0 and 1 / v["a"] < v["c"]
    assert lemma_of(report, "d").status == "expected_failure"


@pytest.mark.parametrize("binding", [
    "lemma t: gamma > 0\n  given sq_nonneg: gamma > 1\nproof:\n  gamma > 0   by sq_nonneg\n",
    "lemma t: gamma > 0\nproof:\n  have algebra: gamma > -1\n  gamma > 0   by algebra\n",
    "lemma cauchy_schwarz: gamma > 0\nproof:\n  gamma > 0\n",
    "lemma t: gamma > 0\nproof by cases:\n  case ih: gamma > 1\n    gamma > 0\n"
    "  case other: gamma <= 1\n    gamma > 0\n",
])
def test_a_hypothesis_named_like_a_built_in_fact_is_refused(tmp_path, binding):
    report = check_text(tmp_path, binding)
    if report.error is not None:
        assert "name" in report.error.message
        return
    (lemma,) = report.lemmas
    assert lemma.status == "failed"
    assert any(s.reason.startswith("error: ") and "name" in s.reason for s in lemma.steps)


def test_a_hence_after_a_broken_chain_is_still_judged(tmp_path):
    report = check_text(tmp_path, """
        lemma t: gamma <= R + gamma
        proof:
          gamma <= gamma + 1
                >= gamma
          hence gamma <= R + gamma
        """)
    assert report.error is None
    steps = steps_of(report, "t")
    assert any("does not compose" in s.reason for s in steps)
    assert lemma_of(report, "t").status == "failed"


def test_equality_composes_with_not_equal(tmp_path):
    report = check_text(tmp_path, """
        lemma t: 2*gamma != 0
        proof:
          2*gamma = gamma + gamma
                  != 0
        """)
    assert lemma_of(report, "t").status == "verified"


def test_a_verified_status_set_outside_the_kernel_is_refused(tmp_path, monkeypatch):
    report = check_text(tmp_path, """
        lemma good: gamma > 0
        proof:
          gamma > 0
        lemma bad: gamma > R
        proof:
          gamma > R
        """)
    good, bad = lemma_of(report, "good"), lemma_of(report, "bad")
    assert good.status == "verified" and bad.status == "failed"
    bad.outcome = "verified"  # a status string proves nothing ...
    assert bad.status == "failed"
    bad.theorem = good.theorem  # ... nor a genuine theorem of another statement
    assert bad.status == "failed"

    # The runtime monitor reads the same certified status.
    from novikoff import checker
    from novikoff.lemmas import load_lemmas

    real_run = checker._LemmaCheck.run

    def forge(self):
        out = real_run(self)
        out.outcome = "verified"
        return out

    monkeypatch.setattr(checker._LemmaCheck, "run", forge)
    path = tmp_path / "t.proof"
    lemmas = {info.name: info for info in load_lemmas([path])}
    assert lemmas["good"].verified and not lemmas["bad"].verified


SUM_SLIPS = ["s02_average_lower_from_upper_false", "s03_average_over_T_plus_1_unsigned_false",
             "s06_weighted_unsigned_weight_false", "s13_sum_over_mistakes_every_round_false"]


@pytest.mark.parametrize("name", SUM_SLIPS)
def test_a_false_step_with_a_sum_is_a_slip_with_a_counterexample_in_its_setting(name):
    # The counterexample's sums read elements at indices < 0 (a[T - 3] at T = 2): the
    # assumptions say nothing there, so they neither refute it nor are shown.
    from pathlib import Path

    from novikoff.checker import Checker

    path = (Path(__file__).parent / "soundness" / "cases" / "redteam4_sums" / f"{name}.proof")
    report = Checker().check_file(path)
    (step,) = [s for s in report.steps if s.status != "verified"]
    assert step.judgement == "slip", step.reason
    assert step.counterexample
    values = {k: Fraction(v) for k, v in step.counterexample.items()}
    for shown in step.counterexample:
        for nat in ("T", "k"):
            if nat in values and f"[{nat} - " in shown:
                offset = int(shown.split(f"[{nat} - ")[1].split("]")[0])
                assert values[nat] - offset >= 0, (shown, values)


def test_lines_after_an_error_in_a_chain_are_reported_not_checked(tmp_path):
    """A chain line with an error (a vector added to a scalar) fails; the lines that go on
    from it are each reported, not dropped, and not counted as verified."""
    setting = "setting s:\n  vector w\n  real a, b\n"
    report = check_text(tmp_path, """
        lemma claim: a = b
          given h: a = b
        proof:
          a = a + 0
            = a + w
            = b          by h
            = b + 0
        """, setting=setting)
    steps = steps_of(report, "claim")
    first = steps[0].line
    assert [(s.line - first, s.status) for s in steps] == [(0, "verified"), (1, "failed"),
                                                          (2, "failed"), (3, "failed")]
    assert "cannot add a vector and a scalar" in steps[1].reason
    assert all(f"not checked: it goes on from line {first + 1}" in s.reason for s in steps[2:])
    assert lemma_of(report, "claim").status == "failed"


def test_a_vector_identity_is_a_step_of_its_own(tmp_path):
    """eta*w + eta*x = eta*(w + x) holds for every eta: no vector needs to be alone."""
    setting = "setting s:\n  vectors v, w, x\n  real eta\n"
    report = check_text(tmp_path, """
        lemma claim: <v, eta*w + eta*x> = eta*<v, w> + eta*<v, x>
        proof:
          have e: eta*w + eta*x = eta*(w + x)
          <v, eta*w + eta*x> = <v, eta*(w + x)>    by e
                             = eta*<v, w> + eta*<v, x>
        """, setting=setting)
    assert lemma_of(report, "claim").status == "verified"


def test_a_counterexample_that_breaks_a_cited_assumption_elsewhere_is_not_shown():
    """Values that meet `c[t] <= 1` at the symbolic t but not at an index they show (c[0] = 2)
    are no counterexample to `c[0] + c[1] <= 2` as cited: the cited assumption holds at every
    t, so the search must not show them (the step is then undecided, never called false)."""
    import sympy as sp

    from novikoff.diagnostics import explain_failure
    from novikoff.kernel import Relation

    t = sp.Symbol("t", real=True)
    c = sp.Function("c", real=True)
    cb = Relation("<=", c(t), sp.Integer(1))
    goal = Relation("<=", c(0) + c(1), sp.Integer(2))
    as_cited = explain_failure([cb], goal, nats={t}, everywhere=[cb], whole=False)
    assert as_cited.counterexample is None
    alone = explain_failure([cb], goal, nats={t}, whole=False)  # cb at t only: c[0] = 2 is one
    assert alone.counterexample is not None


def test_a_cited_assumption_is_taken_at_the_indices_the_step_reads(tmp_path):
    """`c[0] + c[1] <= 2  by cb` with cb: c[t] <= 1 at every t: "by cb" at t := 0 and 1."""
    setting = "setting s:\n  real sequence c\n  nat t\n  assume cb: c[t] <= 1\n"
    report = check_text(tmp_path, """
        lemma claim: c[0] + c[1] <= 2
        proof:
          c[0] + c[1] <= 2     by cb
        """, setting=setting)
    assert lemma_of(report, "claim").status == "verified"


def test_an_undecided_givens_check_says_why(tmp_path):
    """The kernel's reason reaches the report: here the givens read an index 13 past the
    number the assumptions read, farther than the check walks."""
    report = check_text(tmp_path, """
        lemma t: a[13] <= 20
          given g: a[13] = 5
        proof:
          a[13] <= 20    by g
        """, setting="setting s:\n  real sequence a\n  nat k\n  assume start: a[0] = 0\n"
                     "  assume up: a[k+1] = a[k] + 1\n")
    assert lemma_of(report, "t").status != "verified"
    reasons = " ".join(s.reason for s in steps_of(report, "t"))
    assert "could not show the givens consistent" in reasons, reasons
    assert "could not check the givens across" in reasons, reasons


def test_a_counterexample_never_shows_a_vector_a_given_defines(tmp_path):
    """A cited lemma's vector given (v = x) is told in the step's terms, where a given defines v
    (2*v = 2*x + c*u): the counterexample then speaks of x, u and c, never of v's own inner
    products, which were free to the solver and broke the given."""
    report = check_text(tmp_path, """
        lemma same: <v, v> = <x, v>
          given eq: v = x
        proof:
          <v, v> = <x, v>   by eq

        lemma t: <v, v> = <x, v>
          given h: 2*v = 2*x + c*u
        proof:
          <v, v> = <x, v>   by same, h
        """, setting="setting s:\n  vectors v, x, u\n  real c\n")
    step = steps_of(report, "t")[0]
    assert step.status == "failed" and step.counterexample, step
    assert not any("v" in name.replace("<", " ").replace(">", " ").replace(",", " ").split()
                   for name in step.counterexample), step.counterexample


def test_a_counterexample_must_extend_to_the_elements_it_does_not_show(tmp_path):
    """c[t] >= abs(a[t]) and a[t] >= 1 at every t: values with c[0] = 0 leave a[0] unshown, but
    no a[0] meets both there, so they are no counterexample (the step is undecided, not failed;
    a bound through abs is not summed over the terms, so the step does not verify)."""
    report = check_text(tmp_path, """
        lemma pos: 1/sum(i < T + 1, c[i]) > 0
        proof:
          1/sum(i < T + 1, c[i]) > 0    by ca, cc
        """, setting="setting s:\n  real sequence a, c\n  nat t, T\n  assume ca: a[t] >= 1\n"
                     "  assume cc: c[t] >= abs(a[t])\n")
    step = steps_of(report, "pos")[0]
    assert step.status != "verified"
    assert not (step.counterexample and step.counterexample.get("c[0]") == "0"), step


def test_a_counterexample_must_meet_a_per_update_assumption_at_the_indices_it_shows(tmp_path):
    """TD[k+1] >= TD[k] + d with d >= 0 per update: TD[0] = 0, TD[1] = -1 breaks it at k = 0
    whatever that update's d was, so it is no counterexample to TD[k] >= 0 (a theorem of the
    setting, which one line cannot show: undecided, never 'false in its setting')."""
    report = check_text(tmp_path, """
        lemma nn: TD[k] >= 0
        proof:
          TD[k] >= 0    by loss_start, loss_step
        """, setting="setting s:\n  real sequence TD\n  real d >= 0\n  nat k\n  per update: d\n"
                     "  assume loss_start: TD[0] = 0\n  assume loss_step: TD[k+1] >= TD[k] + d\n")
    step = steps_of(report, "nn")[0]
    assert step.status == "unknown" and not step.counterexample, step


def test_a_counterexample_must_meet_a_vector_equation_without_a_nat(tmp_path):
    """w[0] = 0: values with <w[0], w[0]> = 1 or <u, w[0]> = -1 are no counterexample to the
    unrolled <u, w[T]> >= T*gamma (a theorem of the setting, by induction)."""
    report = check_text(tmp_path, """
        lemma gain: <u, w[T]> >= T*gamma
        proof:
          <u, w[T]> >= T*gamma    by start, grows
        """, setting="setting s:\n  vector u\n  sequence w\n  real gamma > 0\n  nat k, T\n"
                     "  assume start: w[0] = 0\n  assume grows: <u, w[k+1]> >= <u, w[k]> + gamma\n")
    step = steps_of(report, "gain")[0]
    assert step.status == "unknown" and not step.counterexample, step
