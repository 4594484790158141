"""Regression tests for the holes of issue 21 ("Holes found by the attack") that are not soundness
cases: hangs bounded by a size cap (never timed), the exact Gram test, the witness work cap, model
values too long for Python's int-string conversion, and the report's status."""

from __future__ import annotations

from fractions import Fraction

import pytest

from novikoff import KernelError
from novikoff.checker import Checker
from novikoff.kernel import written as W


def _check(tmp_path, text: str, name: str = "t.proof"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return Checker(timeout_ms=5000).check_file(path)


def _lemma(report, name: str = "claim"):
    return next(lemma for lemma in report.lemmas if lemma.name == name)


# ---------------------------------------------------------------- 1a: chains of defines

def _chain(lines: int) -> str:
    defines = "\n".join(f"  define a{i} = a{i - 1} + a{i - 1}" for i in range(2, lines + 1))
    return (f"setting s:\n  real a1\n{defines}\n\n"
            f"lemma claim: a{lines} = {2 ** (lines - 1)}*a1\nproof:\n"
            f"  a{lines} = {2 ** (lines - 1)}*a1\n")


def test_a_chain_of_doubling_defines_is_refused_by_its_size(tmp_path):
    """45 defines, each doubling the last, make a term of 2^44 leaves: its size is known when it
    is made (no walk of the tree), and the term is refused naming the limit."""
    claim = _lemma(_check(tmp_path, _chain(45)))
    assert claim.status != "verified"
    assert f"{W.MAX_NODES:,} symbols and operations" in claim.reason


def test_a_short_chain_of_defines_still_checks(tmp_path):
    assert _lemma(_check(tmp_path, _chain(8))).status == "verified"


def test_written_terms_share_their_parts_without_walking_them():
    a = W.Sym("a", "real")
    for _ in range(200):  # 2^200 nodes as a tree
        a = W.Add(a, a)
    assert a.nodes == W.MAX_NODES + 1
    assert hash(a) == hash(a) and a == a
    b = W.Sym("a", "real")
    for _ in range(200):
        b = W.Add(b, b)
    assert hash(a) == hash(b)
    with pytest.raises(KernelError, match="symbols and operations"):
        W.interpret(b)
    assert W.Add(W.Num(Fraction(1)), a) != W.Add(W.Num(Fraction(2)), a)


# ---------------------------------------------------------------- 1b: the exact Gram test

def _principal_minors_psd(m) -> bool:
    import itertools

    import sympy as sp
    n = len(m)
    return all(sp.Matrix([[m[i][j] for j in rows] for i in rows]).det() >= 0
               for order in range(1, n + 1) for rows in itertools.combinations(range(n), order))


@pytest.mark.parametrize("seed", range(40))
def test_the_gram_test_agrees_with_all_principal_minors(seed):
    import random
    rng = random.Random(seed)
    n, rank = rng.randint(1, 5), rng.randint(0, 5)
    vectors = [[Fraction(rng.randint(-3, 3)) for _ in range(rank)] for _ in range(n)]
    gram = [[sum((p * q for p, q in zip(u, v)), Fraction(0)) for v in vectors] for u in vectors]
    if seed % 2:  # perturb: often no longer a Gram matrix (zero pivots with non-zero rows too)
        i, j = rng.randrange(n), rng.randrange(n)
        delta = Fraction(rng.randint(-2, 2), rng.randint(1, 3))
        gram[i][j] += delta
        if i != j:
            gram[j][i] += delta
    from novikoff.diagnostics import _is_psd
    assert _is_psd(gram) == _principal_minors_psd(gram)


def test_the_gram_test_handles_zero_pivots():
    from novikoff.diagnostics import _is_psd
    F = Fraction
    assert _is_psd([[F(0), F(0)], [F(0), F(1)]])
    assert not _is_psd([[F(0), F(1)], [F(1), F(1)]])  # leading minors 0, -1: not PSD
    assert not _is_psd([[F(0), F(0)], [F(0), F(-1)]])  # leading minors 0, 0: not PSD either
    assert _is_psd([[F(1), F(1)], [F(1), F(1)]])


def test_the_counterexample_recheck_is_polynomial_in_the_vectors():
    """24 vectors: 2^24 principal minors before; an elimination of 24 rows now (the work is
    bounded by construction, so nothing is timed)."""
    import sympy as sp

    from novikoff.diagnostics import _gram_psd
    from novikoff.kernel import Inner
    atoms = [sp.Symbol(f"v{i}") for i in range(24)]
    values = {Inner(a, b): sp.Rational(1 if a == b else 0) for a in atoms for b in atoms}
    assert _gram_psd(atoms, values) is True
    values[Inner(atoms[3], atoms[5])] = sp.Rational(2)  # |<v3, v5>| > ||v3|| ||v5||
    assert _gram_psd(atoms, values) is False


# ---------------------------------------------------------------- 1d: model values of 9,000 digits

def test_a_model_value_too_long_for_python_is_left_out():
    import z3

    from novikoff.kernel.solver import model_number
    assert model_number(z3.RealVal("1" + "0" * 5000)) is None  # int() refuses 4,300+ digits
    assert model_number(z3.RealVal("1/" + "3" * 5000)) is None
    assert model_number(z3.IntVal(-12)) == -12
    assert model_number(z3.RealVal("-7/2")) == Fraction(-7, 2)


HUGE_MODEL = """setting s:
  real a, b, c

lemma claim: c < 0
  given ga: a >= 1000000000000000000000000000000000000000
  given gb: b >= a^16
  given gc: c >= b^16
proof:
  c < 0    by ga, gb, gc
"""


def test_cross_check_of_a_model_with_a_value_of_thousands_of_digits(tmp_path, monkeypatch):
    """z3's model gives c about 10^9700: pinning it for cvc5 raised ValueError (an internal
    error); now the value is not pinned, and the step fails cleanly (or is unknown)."""
    pytest.importorskip("cvc5")
    from novikoff.crosscheck import CrossCheck
    from novikoff.kernel import solver
    monkeypatch.setattr(solver, "AUDIT",
                        solver.Audit(second_opinion=CrossCheck(cross_check=True)))
    claim = _lemma(_check(tmp_path, HUGE_MODEL))
    (step,) = claim.steps
    assert step.status in ("failed", "unknown")
    assert "internal error" not in step.reason and "ValueError" not in step.reason


# ---------------------------------------------------------------- 2b: unknown is not consistent

def test_a_setting_whose_consistency_is_unknown_has_a_problem():
    """floor(a)^2 = 2*floor(b)^2 with floor(b) >= 1 has no solution (sqrt(2) is irrational), which
    the solver cannot show: the setting must not count as consistent."""
    import sympy as sp

    from novikoff import kernel as K
    a, b = sp.Symbol("a", real=True), sp.Symbol("b", real=True)
    s = K.make_setting("root", {"a": "real", "b": "real"}, {}, (),
                       {"root": K.Relation("=", sp.floor(a) ** 2, 2 * sp.floor(b) ** 2),
                        "pos": K.Relation(">=", sp.floor(b), 1)}, timeout_ms=200)
    assert [(name, status) for name, status, _ in s.problems] == [(None, "unknown")]
    assert "could not show the assumptions consistent" in s.problems[0][2]
    trivial = K.decide(s, [], K.Relation("=", a, a)).theorem
    assert not K.accepts(s, trivial, K.Relation("=", a, a))[0]


def test_no_lemma_of_a_setting_of_unknown_consistency_is_verified(tmp_path):
    path = tmp_path / "t.proof"
    path.write_text("setting s:\n  real a, b\n"
                    "  assume root: floor(a)*floor(a) = 2*floor(b)*floor(b)\n"
                    "  assume pos: floor(b) >= 1\n\n"
                    "lemma claim: a = a\nproof:\n  a = a\n", encoding="utf-8")
    report = Checker(timeout_ms=200).check_file(path)
    assert _lemma(report).status != "verified"


def test_the_nats_of_a_diophantine_setting_are_refused_first():
    """k*k = 2*j*j and j >= 1 for nats j, k: both bound a nat by itself (no consistency check
    needed to refuse them)."""
    import sympy as sp

    from novikoff import kernel as K
    j, k = sp.Symbol("j", real=True), sp.Symbol("k", real=True)
    s = K.make_setting("root", {"j": "nat", "k": "nat"}, {}, (),
                       {"root": K.Relation("=", k * k, 2 * j * j),
                        "pos": K.Relation(">=", j, 1)}, timeout_ms=200)
    assert [name for name, _, _ in s.problems] == ["root", "pos"]


# ---------------------------------------------------------------- 3: a report's status

TWO_LEMMAS = """setting s:
  real a, b
  assume pos: a > 0

lemma good: a >= 0
proof:
  a >= 0    by pos

lemma given_ok: a + b > 0
  given g: b >= 0
proof:
  a + b > 0    by pos, g

lemma bad: a >= 1
proof:
  a >= 1    by pos
"""


def _reports(tmp_path):
    report = _check(tmp_path, TWO_LEMMAS)
    return {lemma.name: lemma for lemma in report.lemmas}


def test_a_status_cannot_be_set_through_the_api(tmp_path):
    from novikoff.checker import LemmaReport
    lemmas = _reports(tmp_path)
    bad = lemmas["bad"]
    assert bad.status == "failed"
    with pytest.raises(AttributeError):
        bad.settled = "verified"
    with pytest.raises(TypeError):
        LemmaReport("x", "lemma", "f", 1, "a >= 1", settled="verified")
    bad.outcome = "verified"  # the checker's word is not the kernel's
    assert bad.status == "failed"
    bad._settled = ("verified", "a >= 1", b"forged")  # nor is a status without its seal
    assert bad.status == "failed" and bad.settled == "failed"


def test_the_statement_shown_is_the_one_proved(tmp_path):
    lemmas = _reports(tmp_path)
    good, given_ok = lemmas["good"], lemmas["given_ok"]
    assert good.status == given_ok.status == "verified"
    assert good.to_json()["formula"] == "a >= 0"
    assert given_ok.to_json()["formula"] == "b >= 0 => a + b > 0"
    good.statement = "a >= 1"  # text that is not what the kernel proved
    assert good.status == "failed"
    good.statement = "a >= 0"
    assert good.status == "verified"
    given_ok.givens = ("g: b >= 1",)
    assert given_ok.status == "failed"


def test_a_settled_status_is_sealed_with_its_statement(tmp_path):
    lemmas = _reports(tmp_path)
    good, bad = lemmas["good"].settle(), lemmas["bad"].settle()
    assert good.theorem is None and good.status == "verified" and good.settled == "verified"
    assert good.formula_text == "a >= 0" and bad.status == "failed"
    good.statement = "a >= 1"
    assert good.status == "failed"
    status, shown, seal = bad._settled
    bad._settled = ("verified", shown, seal)
    assert bad.status == "failed"


def test_worker_processes_settle_what_their_kernel_certified(tmp_path):
    from novikoff.checker import check_paths
    (tmp_path / "one.proof").write_text(TWO_LEMMAS, encoding="utf-8")
    (tmp_path / "two.proof").write_text("setting t:\n  real c\n\nlemma sq: c^2 >= 0\nproof:\n"
                                        "  c^2 >= 0\n", encoding="utf-8")
    reports = check_paths([tmp_path], jobs=2)
    statuses = {lemma.name: lemma.status for r in reports for lemma in r.lemmas}
    assert statuses == {"good": "verified", "given_ok": "verified", "bad": "failed",
                        "sq": "verified"}
    assert all(lemma.settled is not None for r in reports for lemma in r.lemmas)
    sq = reports[1].lemmas[0]
    assert sq.to_json()["formula"] == "c^2 >= 0"
    sq.statement = "c^2 >= 1"
    assert sq.status == "failed"
