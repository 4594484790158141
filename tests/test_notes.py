"""The notes front end: LaTeX derivations in Markdown and LaTeX documents, read into the .proof
syntax tree and checked by the same kernel."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from novikoff.checker import Checker, check_paths
from novikoff.errors import ProofSyntaxError
from novikoff.notes import read_notes
from novikoff.notes.latex import NotUnderstood, parse_line, tokenize
from novikoff.notes.notation import Typer, read_row, show

from helpers import bundled_reports  # noqa: E402  (tests/ is on sys.path)

ROOT = Path(__file__).resolve().parents[1]
NOTES = ROOT / "proofs" / "notes"
SEEDS = ROOT / "proofs" / "seeds"

KINDS = {"w_star": "vector", "x": "vector", "w": "vector_sequence", "y": "label",
         "gamma": "real", "T": "nat", "R": "real", "TD": "real"}
ROWS = [r"\mathbf{w}_* -> w_star", r"\mathbf{w}_{#} -> w[#]", r"\mathbf{x}_i -> x", "y_i -> y",
        r"|#| -> ||#|| for vectors", r"TD_\gamma -> TD"]


def typed(latex: str, rows=ROWS) -> list:
    """The .proof text of each expression of one line of LaTeX."""
    positions = lambda offset: (1, offset + 1)  # noqa: E731
    table = [read_row(r, 0, "<test>", positions) for r in rows]
    typer = Typer(KINDS, table, positions)
    parts = parse_line(tokenize(latex), len(latex))
    return [show(typer.convert(p[1])) if p[0] == "expr" else p[1] for p in parts
            if p[0] != "arrow"]


@pytest.mark.parametrize("latex, expected", [
    (r"\mathbf{w}_*^\top\mathbf{w}_{T+1}", ["<w_star, w[T + 1]>"]),
    (r"y_i\mathbf{w}_*^\top\mathbf{x}_i \geq \gamma", ["y * <w_star, x>", ">=", "gamma"]),
    (r"\|\mathbf{w}_T\|_2^2 \le T R^2", ["||w[T]||^2", "<=", "T * R^2"]),
    (r"\langle \mathbf{w}_*, \mathbf{x}_i \rangle", ["<w_star, x>"]),
    (r"\mathbf{w}_T \cdot \mathbf{x}_i", ["<w[T], x>"]),
    (r"\gamma \cdot T", ["gamma * T"]),
    (r"\frac{1}{\gamma^2}", ["1 / gamma^2"]),
    (r"\sqrt{T} R", ["sqrt(T) * R"]),
    (r"\left( \frac{R}{\gamma} \right)^2", ["(R / gamma)^2"]),
    (r"|\mathbf{w}_T|", ["||w[T]||"]),
    (r"|\gamma - R|", ["abs(gamma - R)"]),
    (r"\underbrace{\gamma T}_{\text{progress}}", ["gamma * T"]),
    (r"\sum_{i=1}^{T} i", ["sum(i < T, i + 1)"]),
    (r"a = b \Rightarrow c", None),
    (r"2\gamma T TD_\gamma", ["2 * gamma * T * TD"]),
    (r"\frac{2TD_\gamma}{\gamma}", ["2 * TD / gamma"]),
])
def test_latex_reads_into_proof_notation(latex, expected):
    if expected is None:
        with pytest.raises(NotUnderstood):
            typed(latex)
        return
    assert typed(latex) == expected


@pytest.mark.parametrize("latex, message", [
    (r"oldsymbol{ heta}", "backslash seems lost"),
    (r"\mathbf{z}_i", "z is not a sequence"),
    (r"q", "q is not a symbol"),
    (r"\min_{i} \gamma", "over a set"),
    (r"\frac{1}{", "expected"),
    (r"\mathbf{w}_*^\top", "transpose"),
])
def test_what_is_not_understood_says_why(latex, message):
    with pytest.raises(NotUnderstood) as info:
        typed(latex)
    assert message in info.value.message


def _check_text(tmp_path, name: str, text: str):
    path = tmp_path / name
    path.write_text(text)
    return Checker(timeout_ms=5000).check_file(path)


SETTING = """```novikoff
setting s:
  vectors  w_star, x
  sequence w
  real     gamma > 0
  label    y
  nat      T
  per update: x, y
  assume   update: w[T+1] = w[T] + y*x
  assume   margin: y*<w_star, x> >= gamma
notation:
  \\mathbf{w}_* -> w_star
  \\mathbf{w}_{#} -> w[#]
  \\mathbf{x}_i -> x
  y_i -> y
reasons:
  "the update" -> update
  "the margin" -> margin
lemma one_step
```
"""


def test_a_markdown_derivation_is_checked_link_by_link(tmp_path):
    report = _check_text(tmp_path, "n.md", SETTING + r"""
$$ \mathbf{w}_*^\top\mathbf{w}_{T+1} = \mathbf{w}_*^\top\mathbf{w}_{T} + y_i\mathbf{w}_*^\top\mathbf{x}_i \geq \mathbf{w}_*^\top\mathbf{w}_{T} + \gamma $$

by the update and the margin.
""")
    assert report.error is None
    (lemma,) = report.lemmas
    assert lemma.status == "verified"
    assert [s.status for s in lemma.steps] == ["verified", "verified"]
    assert report.notes["links checked"] == 2


def test_a_false_link_fails_with_a_counterexample(tmp_path):
    report = _check_text(tmp_path, "n.md", SETTING + r"""
$$ \mathbf{w}_*^\top\mathbf{w}_{T+1} \geq \mathbf{w}_*^\top\mathbf{w}_{T} + 2\gamma $$

by the update and the margin.
""")
    (lemma,) = report.lemmas
    assert lemma.status == "failed"
    (step,) = lemma.steps
    assert step.status == "failed" and step.counterexample


def test_without_its_justification_a_link_does_not_verify(tmp_path):
    report = _check_text(tmp_path, "n.md", SETTING + r"""
$$ \mathbf{w}_*^\top\mathbf{w}_{T+1} = \mathbf{w}_*^\top\mathbf{w}_{T} + y_i\mathbf{w}_*^\top\mathbf{x}_i $$
""")
    (lemma,) = report.lemmas
    assert lemma.status == "failed"


def test_an_unreadable_claim_is_positioned_and_never_partly_passed(tmp_path):
    report = _check_text(tmp_path, "notes.md", SETTING + "\n$$ oldsymbol{ heta} = 0 $$\n")
    assert report.error is not None
    assert (report.error.line, report.error.column) == (22, 4)
    assert "backslash seems lost" in report.error.message
    assert all(lemma.status != "verified" for lemma in report.lemmas)


def test_a_justification_outside_the_reasons_table_is_refused(tmp_path):
    report = _check_text(tmp_path, "n.md", SETTING + r"""
$$ \mathbf{w}_*^\top\mathbf{w}_{T+1} \geq \mathbf{w}_*^\top\mathbf{w}_{T} + \gamma $$

by a theorem nobody wrote down.
""")
    assert report.error is not None and "reasons table" in report.error.message


def test_latex_documents_read_the_novikoff_environment(tmp_path):
    body = SETTING.replace("```novikoff", r"\begin{novikoff}").replace("```", r"\end{novikoff}")
    report = _check_text(tmp_path, "n.tex", body + r"""
\begin{align*}
\mathbf{w}_*^\top\mathbf{w}_{T+1} &= \mathbf{w}_*^\top\mathbf{w}_{T} + y_i\mathbf{w}_*^\top\mathbf{x}_i \text{by update} \\
&\geq \mathbf{w}_*^\top\mathbf{w}_{T} + \gamma \text{by margin}
\end{align*}
""")
    assert report.error is None
    (lemma,) = report.lemmas
    assert [s.status for s in lemma.steps] == ["verified", "verified"]


def test_a_document_without_a_setting_is_an_error(tmp_path):
    with pytest.raises(ProofSyntaxError):
        read_notes("# nothing\n\n$$ a = b $$\n", "x.md")


def test_the_seeds_notes_reach_the_seeds_verdicts():
    """Every claim that proofs/notes and proofs/seeds both contain (by name) gets the same
    verdict, and the notes parse at least 90% of their derivation links."""
    notes = check_paths([NOTES], notes=True)
    seeds = [r for path, r in bundled_reports().items() if SEEDS in path.parents]
    seed_status = {(Path(r.path).stem, l.name): l.status for r in seeds for l in r.lemmas}
    compared = 0
    for report in notes:
        assert report.error is None, report.error
        for lemma in report.lemmas:
            key = (Path(report.path).stem, lemma.name)
            if key in seed_status:
                compared += 1
                assert lemma.status == seed_status[key], key
    assert compared >= 8
    links = sum(r.notes["links"] for r in notes)
    read = sum(r.notes["links read"] for r in notes)
    assert read >= 0.9 * links
    unread = [m for r in notes for m in r.notes["not understood"]]
    assert unread and all(m.startswith("not understood: ") for _, _, m in unread)


_LATEX_PIECES = [r"\frac{", "}", "{", r"\sqrt", r"\|", "|", r"\langle", r"\rangle", ",", "^",
                 "_", r"\top", "x", "y", "1", "2", "+", "-", "=", r"\le", r"\geq", "(", ")",
                 r"\left(", r"\right)", r"\sum_{i=1}^{n}", r"\mathbf{w}", r"\cdot", "&",
                 r"\\", r"\text{by update}", r"\Rightarrow", r"\gamma", "oldsymbol", "#",
                 r"\underbrace{", "%", "$", r"\tag{a}", "."]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(_LATEX_PIECES), max_size=40) | st.text(max_size=60))
def test_random_latex_gets_positioned_errors_never_tracebacks(pieces):
    latex = pieces if isinstance(pieces, str) else " ".join(pieces)
    text = SETTING + "\n$$ " + latex.replace("$", "") + " $$\n\nby the update.\n"
    try:
        tree = read_notes(text, "fuzz.md")
    except ProofSyntaxError as exc:
        assert exc.line >= 1 and exc.column >= 1
        return
    for line, col, message in tree.not_understood:
        assert line >= 1 and col >= 1 and message
    for lemma in tree.lemmas:
        if lemma.error is not None:
            assert lemma.error.line >= 1 and lemma.error.column >= 1


TEX = r"""\documentclass{article}
\begin{document}
% novikoff
% setting s:
%   vectors  w_star, x
%   sequence w
%   real     gamma > 0
%   label    y
%   nat      T
%   per update: x, y
%   assume   update: w[T+1] = w[T] + y*x
%   assume   margin: y*<w_star, x> >= gamma
% notation:
%   \mathbf{w}_* -> w_star
%   \mathbf{w}_{#} -> w[#]
%   \mathbf{x} -> x
% lemma one_step
\begin{align*}
\mathbf{w}_*^\top\mathbf{w}_{T+1} &= \mathbf{w}_*^\top\mathbf{w}_{T} + y\,\mathbf{w}_*^\top\mathbf{x} && \text{by update} \\
&\geq \mathbf{w}_*^\top\mathbf{w}_{T} + 2\gamma && \text{by margin}
\end{align*}
\end{document}
"""


def _statuses(reports) -> list:
    return [(l.name, l.status, [s.status for s in l.steps]) for r in reports for l in r.lemmas]


@pytest.mark.parametrize("name, text, fmt", [
    ("hw.tex", TEX, "tex"),
    ("notes.md", SETTING + r"""
$$ \mathbf{w}_*^\top\mathbf{w}_{T+1} = \mathbf{w}_*^\top\mathbf{w}_{T} + y_i\mathbf{w}_*^\top\mathbf{x}_i \geq \mathbf{w}_*^\top\mathbf{w}_{T} + 2\gamma $$

by the update and the margin.
""", "md"),
])
def test_the_annotated_report_marks_each_link_and_checks_again(tmp_path, capsys, name, text,
                                                               fmt):
    from novikoff.cli import main

    source = tmp_path / name
    source.write_text(text)
    out = tmp_path / "out"
    assert main(["report", str(source), "-o", str(out), "--format", f"{fmt},html"]) == 1
    annotated = (out / name).read_text()
    assert "lemma one_step: FAILED" in annotated and "verified: =" in annotated
    assert "counterexample:" in annotated
    assert (out / name).with_suffix(".html").exists()
    again = check_paths([out / name], notes=True)
    assert _statuses(again) == _statuses(check_paths([source], notes=True))
    assert _statuses(again)[0][2] == ["verified", "failed"]


def test_a_lemma_environment_with_its_proof_is_a_claim(tmp_path):
    source = (Path(__file__).parent / "data" / "notes_lemma_environment.tex").read_text()
    report = _check_text(tmp_path, "env.tex", source)
    assert report.error is None
    (lemma,) = report.lemmas
    assert lemma.name == "one_step" and lemma.status == "verified"
    assert [s.line for s in lemma.steps] == [23, 25]
    broken = source.replace(r"+ \gamma \text{by margin}", r"+ 2\gamma \text{by margin}")
    (lemma,) = _check_text(tmp_path, "env2.tex", broken).lemmas
    assert lemma.status == "failed"


def test_check_prints_what_was_not_checked_and_not_understood(capsys):
    from novikoff.cli import main

    code = main(["check", "-v", str(NOTES / "seed_003_eaton_slides.md")])
    out = capsys.readouterr().out
    assert code == 0
    assert "2 display(s) not checked; 2 of 7 link(s) read, 0 checked" in out
    assert "seed_003_eaton_slides.md:24:3: not understood: egin (a backslash seems lost" in out


@pytest.mark.parametrize("mark", [r"\tag{one_step}", r"\label{eq:one_step}"])
def test_a_tagged_display_is_a_claim_and_a_numbered_one_is_not(tmp_path, mark):
    setting = SETTING.replace("lemma one_step\n", "")
    chain = (r"\mathbf{w}_*^\top\mathbf{w}_{T+1} = \mathbf{w}_*^\top\mathbf{w}_{T} + "
             r"y_i\mathbf{w}_*^\top\mathbf{x}_i \geq \mathbf{w}_*^\top\mathbf{w}_{T} + \gamma")
    report = _check_text(tmp_path, "t.md", setting + f"\n$$ {chain} {mark} $$\n\n"
                                                     "by the update and the margin.\n")
    (lemma,) = report.lemmas
    assert lemma.name == "one_step" and lemma.status == "verified"
    numbered = _check_text(tmp_path, "n.md", setting + f"\n$$ {chain} \\tag{{2}} $$\n")
    assert numbered.lemmas == [] and numbered.notes["displays not checked"] == 1
    assert numbered.notes["links read"] == 2


def test_an_aligned_display_that_starts_with_a_relation_continues_the_derivation(tmp_path):
    report = _check_text(tmp_path, "a.md", SETTING + r"""
$$ \mathbf{w}_*^\top\mathbf{w}_{T+1} = \mathbf{w}_*^\top\mathbf{w}_{T} + y_i\mathbf{w}_*^\top\mathbf{x}_i $$

by the update

$$\begin{aligned} &\geq \mathbf{w}_*^\top\mathbf{w}_{T} + \gamma \end{aligned}$$

by the margin.
""")
    (lemma,) = report.lemmas
    assert lemma.status == "verified" and len(lemma.steps) == 2
