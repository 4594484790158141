"""The notes front end: LaTeX derivations in Markdown and LaTeX documents, read into the .proof
syntax tree and checked by the same kernel."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from novikoff.checker import Checker, check_paths, proof_files
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
    (r"y_i\, \mathbf{w}_T \cdot \mathbf{x}_i", ["y * <w[T], x>"]),  # as a .proof file writes it
    (r"2 y_i \mathbf{w}_T \cdot \mathbf{x}_i", ["2 * y * <w[T], x>"]),
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


@pytest.fixture(scope="module")
def checked_notes():
    """check_paths([path], notes=True) of a document no test changes, once per module: the
    seeds' notes are checked once for the two tests that read them (and the scheduler in
    conftest.py runs this module's tests on one worker, where this fixture lives)."""
    done = {}

    def check(path: Path) -> list:
        key = Path(path).resolve()
        if key not in done:
            done[key] = check_paths([key], notes=True)
        return done[key]
    return check


def test_the_seeds_notes_reach_the_seeds_verdicts(checked_notes):
    """Every claim that proofs/notes and proofs/seeds both contain (by name) gets the same
    verdict, and the notes parse at least 90% of their derivation links."""
    notes = [report for path in proof_files([NOTES], True) for report in checked_notes(path)]
    assert len(notes) == 5
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


INDUCTION = r"""```novikoff
setting s:
  vectors  w_star, x
  sequence w
  real     gamma > 0
  label    y
  nat      T
  per update: x, y
  assume   start: w[0] = 0
  assume   update: w[T+1] = w[T] + y*x
  assume   margin: y*<w_star, x> >= gamma
notation:
  \mathbf{w}_* -> w_star
  \mathbf{w}_{#} -> w[#]
  \mathbf{x}_i -> x
  y_i -> y
reasons:
  "the update" -> update
  "the margin" -> margin
  "induction hypothesis" -> ih
lemma progress: <w_star, w[T]> >= T*gamma
  induction on T: base by start
```

$$ \mathbf{w}_*^\top\mathbf{w}_{T+1} = \mathbf{w}_*^\top\mathbf{w}_{T} + y_i\mathbf{w}_*^\top\mathbf{x}_i \text{by the update} $$
$$ \geq T\gamma + \gamma \text{by the induction hypothesis and the margin} $$
"""


@pytest.mark.parametrize("last, verified", [(r"= (T+1)\gamma", True), (r"\geq T\gamma", False)])
def test_an_induction_step_shown_as_a_derivation_must_reach_the_statement_at_k_plus_1(
        tmp_path, last, verified):
    report = _check_text(tmp_path, "n.md", INDUCTION + f"$$ {last} $$\n")
    assert report.error is None
    (lemma,) = [lemma for lemma in report.lemmas if lemma.kind != "setting"]
    assert (lemma.status == "verified") == verified
    assert [s.status for s in lemma.steps][0] == "verified"  # the base, by start
    if not verified:
        assert any("but the goal is" in s.reason for s in lemma.steps)


def test_an_induction_step_shown_as_a_derivation_needs_the_statement(tmp_path):
    text = INDUCTION.replace("lemma progress: <w_star, w[T]> >= T*gamma", "lemma progress")
    report = _check_text(tmp_path, "n.md", text)
    assert "needs the statement on the lemma line" in report.error.message


def test_a_reasons_row_for_an_induction_names_its_step():
    text = INDUCTION.replace('"induction hypothesis" -> ih',
                             '"every update" -> induction on T: base by start')
    with pytest.raises(ProofSyntaxError, match="a reasons row is"):
        read_notes(text, "n.md")


HOMEWORK = Path(__file__).resolve().parent / "homework"


@pytest.mark.parametrize("path", [
    NOTES / "seed_000_lecture8.md",  # sums, tags, xfail, inductions
    NOTES / "seed_001_perceptron_notes.md",
    Path(__file__).parent / "data" / "notes_lemma_environment.tex",  # lemma and proof
    HOMEWORK / "notes" / "dana.tex",  # `% novikoff` comment blocks, align*
    HOMEWORK / "notes" / "bao.tex",  # novikoff environments
    HOMEWORK / "notes" / "quinn.tex",  # a line not understood
    HOMEWORK / "notes" / "nia.md",  # |v| as a norm, a failing lemma
], ids=lambda p: p.name)
def test_the_report_in_the_other_markup_checks_again_the_same(tmp_path, path, checked_notes):
    from novikoff.cli import main

    other = "tex" if path.suffix == ".md" else "md"
    out = tmp_path / "out"
    main(["report", str(path), "-o", str(out), "--format", f"{other},html"])
    written = out / f"{path.stem}.{other}"
    again = check_paths([written], notes=True)
    original = checked_notes(path)
    assert _statuses(again) == _statuses(original)
    assert again[0].notes["links"] == original[0].notes["links"]
    assert [m for _, _, m in again[0].notes["not understood"]] == \
        [m for _, _, m in original[0].notes["not understood"]]
    text = written.read_text(encoding="utf-8")
    if other == "tex":
        assert text.startswith(r"\documentclass{article}") and r"\begin{novikoff}" in text
        assert "% novikoff: " in text and "\n> " not in text
    else:
        assert "```novikoff" in text and "> novikoff: " in text
        assert r"\documentclass" not in text and r"\begin{align*}" not in text
    # and back: the twice rewritten document still reads the same
    back = tmp_path / f"back.{path.suffix[1:]}"
    from novikoff.notes.convert import latex_to_markdown, markdown_to_latex

    back.write_text(markdown_to_latex(text) if other == "md" else latex_to_markdown(text),
                    encoding="utf-8")
    assert _statuses(check_paths([back], notes=True)) == _statuses(original)


def test_the_html_page_typesets_the_documents_own_math_and_reads_without_it(tmp_path):
    from novikoff.report.notes import MATHJAX, annotate_html

    source = SETTING + r"""
Some prose <script>alert(1)</script> with $\gamma$ inline.

$$ \mathbf{w}_*^\top\mathbf{w}_{T+1} \geq \mathbf{w}_*^\top\mathbf{w}_{T} + 2\gamma $$

by the update and the margin.
"""
    path = tmp_path / "n.md"
    path.write_text(source)
    page = annotate_html(Checker(timeout_ms=5000).check_file(path), source, True)
    assert MATHJAX in page and "'[-]': ['html']" in page and "ui/safe" in page
    # the display as written (the fallback when MathJax cannot load), then its marks
    display = (r'<div class="display">$$ \mathbf{w}_*^\top\mathbf{w}_{T+1} \geq '
               r"\mathbf{w}_*^\top\mathbf{w}_{T} + 2\gamma $$</div>")
    assert display in page
    assert page.index(display) < page.index('<pre class="marks failed">novikoff: lemma '
                                            'one_step: FAILED')
    assert "<script>alert" not in page and "&lt;script&gt;alert(1)" in page
    assert "<pre>```novikoff\nsetting s:" in page  # the block is code, never typeset


PER_LINK = INDUCTION.replace('''lemma progress: <w_star, w[T]> >= T*gamma
  induction on T: base by start''', '''lemma one_step
  link 1 by update
  link 2 by margin''').replace('''$$ \\mathbf{w}_*^\\top\\mathbf{w}_{T+1} = \\mathbf{w}_*^\\top\\mathbf{w}_{T} + y_i\\mathbf{w}_*^\\top\\mathbf{x}_i \\text{by the update} $$
$$ \\geq T\\gamma + \\gamma \\text{by the induction hypothesis and the margin} $$''', '''$$ \\mathbf{w}_*^\\top\\mathbf{w}_{T+1} = \\mathbf{w}_*^\\top\\mathbf{w}_{T} + y_i\\mathbf{w}_*^\\top\\mathbf{x}_i \\geq \\mathbf{w}_*^\\top\\mathbf{w}_{T} + \\gamma $$''')


@pytest.mark.parametrize("options, statuses", [
    ("  link 1 by update\n  link 2 by margin", ["verified", "verified"]),
    ("  link 1 by update", ["verified", "failed"]),  # link 2 has no justification
    ("  link 1 by margin\n  link 2 by update", ["failed", "failed"]),
])
def test_link_n_by_cites_for_that_link_only(tmp_path, options, statuses):
    assert "link 1 by update\n  link 2 by margin" in PER_LINK
    text = PER_LINK.replace("  link 1 by update\n  link 2 by margin", options)
    report = _check_text(tmp_path, "n.md", text)
    assert report.error is None
    (lemma,) = [lemma for lemma in report.lemmas if lemma.kind != "setting"]
    assert [s.status for s in lemma.steps] == statuses


def test_link_n_by_beyond_the_display_is_an_error(tmp_path):
    report = _check_text(tmp_path, "n.md", PER_LINK.replace("link 2 by", "link 3 by"))
    assert "link 3: the display has 2 link(s)" in report.error.message


@pytest.mark.parametrize("cites, status", [("update, margin", "verified"),
                                           ("update", "failed")])
def test_holds_by_makes_a_stated_claim_of_one_link(tmp_path, cites, status):
    text = INDUCTION.replace('''lemma progress: <w_star, w[T]> >= T*gamma
  induction on T: base by start
```''', f'''lemma one_step: <w_star, w[T+1]> >= <w_star, w[T]> + gamma
  holds by {cites}
```''').split("```\n\n$$")[0] + "```\n"
    report = _check_text(tmp_path, "n.md", text)
    assert report.error is None
    (lemma,) = [lemma for lemma in report.lemmas if lemma.kind != "setting"]
    assert lemma.status == status and len(lemma.steps) == 1
    assert report.notes["claims"] == 1


def test_holds_by_needs_a_statement():
    text = INDUCTION.replace('''lemma progress: <w_star, w[T]> >= T*gamma
  induction on T: base by start''', '''lemma progress
  holds by update''')
    with pytest.raises(ProofSyntaxError, match="`holds by` needs the statement"):
        read_notes(text, "n.md")


_PIECES = ["$$", "$", r"\[", r"\]", r"\begin{align}", r"\end{align}", r"\begin{align*}",
           r"\end{align*}", r"\begin{novikoff}", r"\end{novikoff}", r"\begin{lemma}",
           r"\end{lemma}", r"\begin{proof}", r"\end{proof}", "x", " ", "\n"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=30).map("".join))
def test_displays_blocks_and_proofs_are_found_as_the_lazy_regexes_find_them(text):
    """The linear scans (a flood of openings with no closing made the regexes quadratic) find
    what `OPEN(.*?)CLOSE` finds."""
    import re

    from novikoff.notes.document import DISPLAY_ENVS, _OPENING, _display_closing, delimited
    from novikoff.notes.reader import _proof_environments

    display = re.compile(r"\$\$(.*?)\$\$|\\\[(.*?)\\\]|\\begin\{(?P<env>" +
                         "|".join(re.escape(e) for e in DISPLAY_ENVS) +
                         r")\}(.*?)\\end\{(?P=env)\}", re.S)
    assert [(m.start(), m.end()) for m in display.finditer(text)] == \
        [(a, b) for a, b, _, _ in delimited(text, _OPENING, _display_closing)]
    block = re.compile(r"\\begin\{novikoff\}(.*?)\\end\{novikoff\}", re.S)
    assert [(m.start(), m.end(), m.start(1), m.end(1)) for m in block.finditer(text)] == \
        delimited(text, r"\begin{novikoff}", r"\end{novikoff}")
    proof = re.compile(r"\\begin\{(?P<env>lemma|theorem|proposition|corollary|claim)\}"
                       r"(?P<statement>.*?)\\end\{(?P=env)\}\s*"
                       r"\\begin\{proof\}(?P<proof>.*?)\\end\{proof\}", re.S)
    assert [(m.start(), m.group("statement"), m.start("proof"), m.end("proof"))
            for m in proof.finditer(text)] == \
        [(p.start, p.statement, p.proof_start, p.proof_end) for p in _proof_environments(text)]
