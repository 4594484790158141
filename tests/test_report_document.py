"""`novikoff report` and novikoff.report.document.render: annotated proof documents in HTML
(MathML), LaTeX and Markdown, every status marked, the math typeset from the syntax tree, and
everything from the proof file escaped."""

from __future__ import annotations

import dataclasses
import inspect
import re
import shutil
import struct
import subprocess
import textwrap
import xml.etree.ElementTree as ET
import zlib
from pathlib import Path

import pytest

import helpers
from helpers import check_text
from novikoff.checker import Checker, FileReport, bundled_proofs_dir, proof_files
from novikoff.cli import main
from novikoff.language import ast as A
from novikoff.language.parser import parse
from novikoff.report import latex
from novikoff.report.boxes import Text, plain
from novikoff.report.document import render
from novikoff.report.html import mathml
from novikoff.report.model import read_expression
from novikoff.report.notation import Typesetter

XHTML = "{http://www.w3.org/1999/xhtml}"
MATHML = "{http://www.w3.org/1998/Math/MathML}"

MIXED = """\
lemma fine: <w_star, w[k]> >= k*gamma
proof by induction on k:
  base:
    <w_star, w[0]> = 0                                   by start
  step:
    <w_star, w[k+1]> = <w_star, w[k] + y*x>              by update
                     = <w_star, w[k]> + y*<w_star, x>
                     >= k*gamma + gamma                  by ih, margin
                     = (k+1)*gamma

lemma slip: <w_star, w[k+1]> >= <w_star, w[k]> + 2*gamma
proof:
  <w_star, w[k+1]> = <w_star, w[k]> + y*<w_star, x>     by update
                   >= <w_star, w[k]> + 2*gamma          by margin   xfail

lemma wrong: ||w[k+1]||^2 <= ||w[k]||^2 + R^2
proof:
  ||w[k+1]||^2 = ||w[k]||^2 + 2*y*<w[k], x> + ||x||^2    by update
               <= ||w[k]||^2 + R^2                       by radius

lemma uses: <w_star, w[k]> + 1 >= k*gamma
proof:
  <w_star, w[k]> + 1 >= k*gamma + 1                      by fine
                     >= k*gamma
"""


@pytest.fixture(scope="module")
def mixed(tmp_path_factory) -> FileReport:
    return check_text(tmp_path_factory.mktemp("mixed"), MIXED)


def lemma_steps(report, name):
    return next(lemma for lemma in report.lemmas if lemma.name == name).steps


def xml(html: str):
    return ET.fromstring(html)


def text_of(element) -> str:
    return "".join(element.itertext())


# ---------------------------------------------------------------------- the API


def test_render_has_the_signature_grade_relies_on():
    signature = inspect.signature(render)
    assert list(signature.parameters) == ["report", "fmt", "summary", "title"]
    assert signature.parameters["summary"].kind is inspect.Parameter.KEYWORD_ONLY
    assert signature.parameters["title"].kind is inspect.Parameter.KEYWORD_ONLY
    assert signature.parameters["summary"].default is None
    assert signature.parameters["title"].default is None


@pytest.mark.parametrize("kwargs, named", [
    ({"fmt": "pdf"}, "fmt='pdf'"),
    ({"fmt": None}, "fmt=None"),
    ({"title": 3}, "title=3"),
    ({"summary": "progress 5/5"}, "summary='progress 5/5'"),
    ({"summary": [("progress", "5", "5")]}, "summary[0]="),
    ({"summary": [("progress", 5, "5", "")]}, "summary[0]="),
])
def test_bad_arguments_raise_value_error_naming_them(mixed, kwargs, named):
    kwargs = {"fmt": "html", **kwargs}
    fmt = kwargs.pop("fmt")
    with pytest.raises(ValueError, match=re.escape(named)):
        render(mixed, fmt, **kwargs)


def test_a_report_that_is_not_a_file_report_is_refused():
    with pytest.raises(ValueError, match="report='proofs/novikoff.proof'"):
        render("proofs/novikoff.proof", "html")


# ---------------------------------------------------------------------- structure


def test_html_is_a_standalone_xhtml_page_with_mathml(mixed):
    page = render(mixed, "html")
    root = xml(page)
    assert root.tag == f"{XHTML}html"
    assert root.find(f"{XHTML}head/{XHTML}style") is not None
    assert root.findall(f".//{MATHML}math")
    # No script, no network: nothing is loaded from anywhere.
    assert not root.findall(f".//{XHTML}script") and not root.findall(f".//{XHTML}link")
    assert not [e for e in root.iter() if "src" in e.attrib]
    assert not [e for e in root.iter() if e.get("href", "").startswith(("http", "//"))]
    assert "default-src 'none'" in page
    sections = {s.get("id"): s for s in root.iter(f"{XHTML}section")}
    assert {"lemma-fine", "lemma-slip", "lemma-wrong", "lemma-uses",
            "setting-perceptron"} <= set(sections)


def test_latex_is_a_complete_document_with_standard_packages_only(mixed):
    tex = render(mixed, "tex")
    assert tex.startswith(r"\documentclass")
    assert tex.count(r"\begin{document}") == 1 and tex.rstrip().endswith(r"\end{document}")
    packages = set()
    for names in re.findall(r"\\usepackage(?:\[[^]]*\])?\{([^}]*)\}", tex):
        packages |= set(names.split(","))
    assert packages <= {"fontenc", "inputenc", "amsmath", "amssymb", "geometry", "xcolor",
                        "longtable", "hyperref"}
    assert _braces_balance(tex)
    assert r"\frac" in tex or r"\langle" in tex


def _braces_balance(tex: str) -> bool:
    depth = 0
    for match in re.finditer(r"\\.|[{}]", tex):
        token = match.group()
        depth += {"{": 1, "}": -1}.get(token, 0)
        if depth < 0:
            return False
    return depth == 0


@pytest.mark.skipif(shutil.which("pdflatex") is None, reason="pdflatex is not installed")
def test_latex_compiles_with_pdflatex(mixed, tmp_path):
    (tmp_path / "doc.tex").write_text(render(mixed, "tex"), encoding="utf-8")
    done = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "doc.tex"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-2000:]
    assert (tmp_path / "doc.pdf").stat().st_size > 1000


def test_markdown_has_a_table_per_lemma_github_math_and_a_plain_fallback(mixed):
    md = render(mixed, "md")
    assert md.startswith("# ")
    assert md.count("| line | | | by | status |") == 5  # the setting and four lemmas
    assert "$`\\left\\langle {w}^{\\ast} , {w}_{k}\\right\\rangle  \\ge k \\gamma `$" in md
    assert "<details><summary>plain text</summary>" in md
    assert "⟨w*, wₖ⟩ ≥ k·γ" in md


# ---------------------------------------------------------------------- statuses


def test_every_status_is_marked_with_a_colour_and_a_word(mixed):
    report = dataclasses.replace(mixed, lemmas=[dataclasses.replace(lemma) for lemma in
                                                mixed.lemmas])
    uses = next(lemma for lemma in report.lemmas if lemma.name == "uses")
    uses.steps = [dataclasses.replace(s) for s in uses.steps]
    uses.steps[-1].status = "unknown"  # the solver gave up: what a report must show too
    uses.steps[-1].reason = "could not verify: the solver gave up"
    statuses = {s.status for s in report.steps}
    assert statuses == {"verified", "failed", "expected_failure", "unknown"}

    root = xml(render(report, "html"))
    marks = {text_of(e) for e in root.iter(f"{XHTML}span") if "mark" in e.get("class", "")}
    assert {"✓ verified", "✗ failed", "✗ expected failure", "? unknown"} <= marks
    rows = [e for e in root.iter(f"{XHTML}tr") if e.get("class", "").startswith("chain")
            or e.get("class", "").startswith("continue")]
    assert {r.get("class").split()[-1] for r in rows if " " in r.get("class")} == {
        "st-verified", "st-failed", "st-expected_failure", "st-unknown"}

    tex = render(report, "tex")
    for colour, word in [("stverified", "verified"), ("stfailed", "failed"),
                         ("stexpectedfailure", "expected failure"), ("stunknown", "unknown")]:
        assert re.search(rf"\\nvkmark\{{{colour}\}}\{{[^}}]*{word}\}}", tex), word
    md = render(report, "md")
    for mark in ("✅ verified", "❌ failed", "⚠️ expected failure", "❔ unknown"):
        # a verified line says what it rests on: "✅ verified (solver)" or "(certified)"
        assert re.search(rf"\| {re.escape(mark)}( \((solver|certified)\))? \|", md), mark
    for word in ("✓ verified", "✗ FAILED", "✗ expected failure", "? unknown"):
        assert word in md  # the plain text fallback reads in black and white


def test_a_lemmas_status_is_in_its_heading(mixed):
    root = xml(render(mixed, "html"))
    heading = {s.get("id"): text_of(s.find(f"{XHTML}h2")) for s in root.iter(f"{XHTML}section")}
    assert "✓ verified" in heading["lemma-fine"]
    assert "✗ expected failure" in heading["lemma-slip"]
    assert "✗ failed" in heading["lemma-wrong"]
    md = render(mixed, "md")
    assert "Lemma `slip` — ⚠️ expected failure" in md


# ---------------------------------------------------------------------- counterexamples, hints


def test_a_counterexample_is_a_table_of_values(mixed):
    (failing,) = [s for s in lemma_steps(mixed, "slip") if s.status == "expected_failure"]
    assert failing.counterexample and failing.judgement == "slip"
    root = xml(render(mixed, "html"))
    (table,) = [t for t in root.iter(f"{XHTML}table") if t.get("class") == "cex"
                and t.find(f".//{MATHML}math") is not None
                and any("γ" in text_of(td) for td in t.iter(f"{XHTML}td"))
                and _in_section(root, t, "lemma-slip")]
    rows = table.findall(f"{XHTML}tr")
    assert len(rows) == 1 + len(failing.counterexample)
    tex = render(mixed, "tex")
    assert r"\textbf{counterexample:}" in tex and r"\begin{tabular}" in tex
    md = render(mixed, "md")
    # slip's only: wrong's step is true in its setting (it needs `mistake`), so it has none
    assert md.count("| symbol | value |") == 1
    (wrong,) = [s for s in lemma_steps(mixed, "wrong") if s.status == "failed"]
    assert wrong.judgement == "under-justified" and wrong.counterexample is None


def _in_section(root, element, section_id) -> bool:
    section = next(s for s in root.iter(f"{XHTML}section") if s.get("id") == section_id)
    return any(e is element for e in section.iter())


def test_the_hint_names_the_facts_that_would_make_a_step_hold_with_links(tmp_path):
    report = check_text(tmp_path, """\
        lemma forgot: ||w[k+1]||^2 <= ||w[k]||^2 + ||x||^2
        proof:
          ||w[k+1]||^2 = ||w[k]||^2 + 2*y*<w[k], x> + ||x||^2    by update
                       <= ||w[k]||^2 + ||x||^2
        """)
    (failing,) = [s for s in report.steps if s.status == "failed"]
    assert failing.missing == ["mistake"] and "it would hold with: mistake" in failing.reason
    root = xml(render(report, "html"))
    hints = [p for p in root.iter(f"{XHTML}p") if text_of(p).startswith("hint:")]
    assert [text_of(h) for h in hints] == ["hint: it would hold with: mistake"]
    (link,) = hints[0].iter(f"{XHTML}a")
    assert link.get("href") == "#assume-perceptron-mistake"
    assert any(e.get("id") == "assume-perceptron-mistake" for e in root.iter())
    whys = [text_of(p) for p in root.iter(f"{XHTML}p") if text_of(p).startswith("why:")]
    assert whys and "would hold" not in whys[0]  # said once, by the hint
    assert "hint: it would hold with: [`mistake`](#assume-perceptron-mistake)" in render(
        report, "md")
    assert r"it would hold with: \hyperlink{assume-perceptron-mistake}" in render(report, "tex")


def test_the_condition_of_meaning_that_failed_is_shown_as_math(tmp_path):
    report = check_text(tmp_path, """\
        lemma divides: k/k = 1
        proof:
          k/k = 1
        """)
    assert any("division by k" in s.reason for s in report.steps)
    root = xml(render(report, "html"))
    (condition,) = [p for p in root.iter(f"{XHTML}p")
                    if text_of(p).startswith("condition of meaning that may fail:")]
    assert text_of(condition.find(f"{MATHML}math")) == "k≠0"
    assert r"\textbf{condition of meaning that may fail:} $k \ne 0$" in render(report, "tex")
    assert "condition of meaning that may fail: $`k \\ne 0`$" in render(report, "md")


# ---------------------------------------------------------------------- citations


def test_citations_link_to_the_lemmas_and_assumptions_they_cite(mixed):
    root = xml(render(mixed, "html"))
    ids = {e.get("id") for e in root.iter() if e.get("id")}
    links = {text_of(a): a.get("href") for a in root.iter(f"{XHTML}a")}
    assert links["fine"] == "#lemma-fine"
    assert links["update"] == "#assume-perceptron-update"
    assert {href[1:] for href in links.values() if href.startswith("#")} <= ids
    assert "ih" not in links  # the induction hypothesis is not a place in the document
    assert r"\hyperlink{lemma-fine}{\textsf{fine}}" in render(mixed, "tex")
    assert r"\hypertarget{lemma-fine}" in render(mixed, "tex")
    assert "[`fine`](#lemma-fine)" in render(mixed, "md")


def test_an_imported_lemma_links_to_the_other_files_document(tmp_path):
    from helpers import PERCEPTRON

    here = tmp_path / "x"
    here.mkdir()
    (here / "base.proof").write_text(PERCEPTRON + textwrap.dedent("""
        lemma start_zero: <w_star, w[0]> = 0
        proof:
          <w_star, w[0]> = 0    by start
        """), encoding="utf-8")
    (here / "uses.proof").write_text("from base import start_zero\n\n" + PERCEPTRON
                                     + textwrap.dedent("""
        lemma again: <w_star, w[0]> >= 0
        proof:
          <w_star, w[0]> = 0    by start_zero
        """), encoding="utf-8")
    report = Checker().check_file(here / "uses.proof")
    assert all(s.status == "verified" for s in report.steps)
    root = xml(render(report, "html"))
    assert {a.get("href") for a in root.iter(f"{XHTML}a") if text_of(a) == "start_zero"} == {
        "base.html#lemma-start_zero"}
    assert "[`start_zero`](base.md#lemma-start_zero)" in render(report, "md")
    assert r"\href{base.pdf\#lemma-start.zero}" in render(report, "tex")
    # `novikoff report` names the documents it writes; the link follows the name.
    (tmp_path / "y").mkdir()
    (tmp_path / "y" / "base.proof").write_text((here / "base.proof").read_text(),
                                               encoding="utf-8")
    assert main(["report", str(tmp_path), "-o", str(tmp_path / "out"), "--format", "html"]) == 0
    written = sorted(p.name for p in (tmp_path / "out").iterdir())
    assert written == ["uses.html", "x__base.html", "y__base.html"]
    page = (tmp_path / "out" / "uses.html").read_text(encoding="utf-8")
    assert 'href="x__base.html#lemma-start_zero"' in page


def test_document_names_are_stems_unless_shared():
    from novikoff.report.cli import document_names

    names = document_names(["s/alice/hw.proof", "s/bob/hw.proof", "s/bob/extra.proof",
                            "s/alice__hw.proof"])
    assert sorted(names.values()) == ["alice__hw", "alice__hw-2", "bob__hw", "extra"]


# ---------------------------------------------------------------------- symbols


def typeset(text: str, formula: bool = False):
    node = read_expression(text, formula=formula)
    assert node is not None, text
    return Typesetter().formula(node) if formula else Typesetter().expr(node)


@pytest.mark.parametrize("source, shown", [
    ("w_star", "w*"),
    ("theta_star", "θ*"),
    ("gamma_geom", "γ_geom"),
    ("gamma", "γ"),
    ("Delta", "Δ"),
    ("x0", "x₀"),
    ("x[k]", "xₖ"),
    ("w[k+1]", "wₖ₊₁"),
    ("w_star[k]", "wₖ*"),
    ("<a, b>", "⟨a, b⟩"),
    ("||v||", "‖v‖"),
    ("||w[k]||^2", "‖wₖ‖²"),
    ("sqrt(k)*R", "√k·R"),
    ("R^2 * ||w_star||^2 / gamma^2", "(R²·‖w*‖²)/γ²"),
    ("(R/gamma_geom)^2", "(R/γ_geom)²"),
    ("sum(i < n, loss[i])", "∑(i=0..n−1) lossᵢ"),
    ("sum(j < k+1, e[j])", "∑(j=0..k) eⱼ"),
    ("floor(1/gamma^2)", "⌊1/γ²⌋"),
    ("ceil(T)", "⌈T⌉"),
    ("abs(<w, x>)", "|⟨w, x⟩|"),
    ("max(a, b) - -c", "max(a, b) − (−c)"),
    ("2*y*<w[k], x>", "2y·⟨wₖ, x⟩"),
    ("0.5*a", "0.5a"),
])
def test_symbols_render_as_a_reader_expects(source, shown):
    assert plain(typeset(source)) == shown


@pytest.mark.parametrize("source, shown", [
    ("a >= 0 and b <= 1", "a ≥ 0 ∧ b ≤ 1"),
    ("a > 0 or a < 0", "a > 0 ∨ a < 0"),
    ("k >= 1 => 1/k <= 1", "k ≥ 1 ⇒ 1/k ≤ 1"),
    ("a != 0 <=> (a > 0 or a < 0)", "a ≠ 0 ⇔ (a > 0 ∨ a < 0)"),
])
def test_connectives_render_as_symbols(source, shown):
    assert plain(typeset(source, formula=True)) == shown


def test_a_power_of_a_fraction_keeps_its_parentheses():
    box = typeset("(R/gamma)^2")
    assert latex.math(box) == r"{\left(\frac{R}{\gamma }\right)}^{2}"
    assert "<msup><mrow><mo" in mathml(box) and "<mfrac>" in mathml(box)


def test_mathml_and_latex_use_real_math_constructs():
    box = typeset("sum(i < n, loss[i]) <= sqrt(k)*R^2/gamma_geom + <w_star, w[k+1]>",
                  formula=True)
    ml = mathml(box)
    for element in ("munderover", "msqrt", "mfrac", "msup", "msub", "mo"):
        assert f"<{element}>" in ml or f"<{element} " in ml, element
    assert ET.fromstring(ml).tag == f"{MATHML}math"
    tex = latex.math(box)
    for command in (r"\sum_{i = 0}^{n - 1}", r"\sqrt{k}", r"\frac{", r"\left\langle",
                    r"{w}^{\ast}", r"{w}_{k + 1}", r"{\gamma }_{\mathrm{geom}}",
                    r"\mathrm{loss}"):
        assert command in tex, command


# ---------------------------------------------------------------------- every node kind


def _nodes(value):
    """Every syntax tree node reachable from value."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        yield value
        for f in dataclasses.fields(value):
            yield from _nodes(getattr(value, f.name))
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _nodes(item)


EXPRESSION_KINDS = (A.Num, A.Name, A.Index, A.BinOp, A.Neg, A.InnerE, A.NormE, A.Call, A.SumE,
                    A.Rel, A.Connective)


def _holds_text(box) -> bool:
    if isinstance(box, Text):
        return True
    return any(_holds_text(child) for child in (getattr(box, "items", None) or ())) or any(
        _holds_text(getattr(box, name)) for name in ("base", "sub", "sup", "num", "den", "body",
                                                     "under", "over")
        if getattr(box, name, None) is not None)


def test_every_node_kind_of_the_bundled_proofs_goes_through_the_renderer():
    seen = set()
    for path in proof_files([bundled_proofs_dir()]):
        source = path.read_text(encoding="utf-8")
        lines = dict(enumerate(source.splitlines(), start=1))
        math = Typesetter(lines)
        for node in _nodes(parse(source, str(path))):
            seen.add(type(node))
            if not isinstance(node, EXPRESSION_KINDS) or (
                    isinstance(node, A.Rel) and node.lhs is None):
                continue
            box = math.formula(node) if isinstance(node, (A.Rel, A.Connective)) \
                else math.expr(node)
            assert not _holds_text(box), (path, node)  # every kind has a rule
            assert mathml(box) and latex.math(box) and plain(box)
    assert set(EXPRESSION_KINDS) <= seen
    assert {A.Chain, A.Step, A.Hence, A.Claim, A.Cases, A.Case, A.Cite, A.Proof, A.Lemma,
            A.Setting, A.Decl, A.Define, A.Assume, A.RunClaim} <= seen


def test_a_node_kind_with_no_rule_is_shown_as_its_escaped_source():
    @dataclasses.dataclass(frozen=True)
    class Interval:  # a construct the language might gain
        low: object
        high: object
        pos: A.Pos

    math = Typesetter({3: "  x in [a, <b>] # why"})
    box = math.expr(Interval(A.Name("a", A.Pos(3, 9)), A.Name("b", A.Pos(3, 13)), A.Pos(3, 8)))
    assert box == Text("[a, <b>]")
    assert "<mtext class=\"source\">[a, &lt;b&gt;]</mtext>" in mathml(box)
    assert r"\textless{}b\textgreater{}" in latex.math(box)
    summed = math.expr(A.BinOp("+", A.Num(1, A.Pos(3, 1)), Interval(None, None, A.Pos(3, 8)),
                               A.Pos(3, 1)))
    assert plain(summed) == "1 + [a, <b>]"


@pytest.fixture(scope="module")
def bundled_reports():
    return list(helpers.bundled_reports().values())  # checked once per session


def test_every_bundled_proof_renders_in_every_format(bundled_reports):
    for report in bundled_reports:
        xml(render(report, "html"))
        assert _braces_balance(render(report, "tex"))
        assert render(report, "md").startswith("# ")


def test_a_seed_with_expected_failures_shows_each_of_them(bundled_reports):
    seed = next(r for r in bundled_reports if r.path.endswith("seed_004_virtue_slides.proof"))
    expected = [s for s in seed.steps if s.status == "expected_failure"]
    root = xml(render(seed, "html"))
    notes = [d for d in root.iter(f"{XHTML}div") if d.get("class") == "note st-expected_failure"]
    assert len(notes) == len(expected) > 0


# ---------------------------------------------------------------------- escaping

HOSTILE = "<script>alert(1)</script> \\input{/etc/passwd} ](javascript:alert(1)) `x` $y$ | %&#_"


@pytest.fixture
def hostile(tmp_path) -> FileReport:
    body = f"""\
        # {HOSTILE}
        lemma shown: gamma > 0     # {HOSTILE}
        proof:
          gamma > 0                # {HOSTILE}
        """
    return check_text(tmp_path, body, name="a&<b>.proof")


def test_html_escapes_everything_from_the_proof_file(hostile):
    page = render(hostile, "html", title=HOSTILE, summary=[("shown", "1", "1", HOSTILE)])
    root = xml(page)
    tags = {e.tag.split("}")[-1] for e in root.iter()}
    assert "script" not in tags
    assert HOSTILE in text_of(root)  # shown as text, as written
    assert not [a for a in root.iter(f"{XHTML}a") if "javascript" in a.get("href", "")]


def test_latex_escapes_everything_from_the_proof_file(hostile):
    tex = render(hostile, "tex", title=HOSTILE, summary=[("shown", "1", "1", HOSTILE)])
    assert "\\input{" not in tex
    assert "\\textbackslash{}input\\{/etc/passwd\\}" in tex
    assert tex.count(r"\end{document}") == 1
    assert "%&#" not in tex and r"\%\&\#\_" in tex
    assert _braces_balance(tex)


def test_markdown_escapes_everything_from_the_proof_file(hostile):
    md = render(hostile, "md", title=HOSTILE, summary=[("shown", "1", "1", HOSTILE)])
    assert "<script>" not in md and "](javascript:" not in md
    assert r"\<script\>alert\(1\)\</script\>" in md
    assert r"\]\(javascript:alert\(1\)\)" in md
    assert r"\`x\` \$y\$ \| %\&\#\_" in md


@pytest.mark.skipif(shutil.which("pdflatex") is None, reason="pdflatex is not installed")
def test_latex_of_hostile_text_still_compiles(hostile, tmp_path):
    (tmp_path / "doc.tex").write_text(render(hostile, "tex", title=HOSTILE), encoding="utf-8")
    done = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error",
                           "-no-shell-escape", "doc.tex"], cwd=tmp_path, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-2000:]


# ---------------------------------------------------------------------- summary and title


def test_the_summary_is_a_table_at_the_top_in_every_format(mixed):
    summary = [("fine", "5", "5", "complete"), ("wrong", "1", "5", "the radius step"),
               ("missing", "0", "5", "not attempted")]
    root = xml(render(mixed, "html", summary=summary, title="Homework 3"))
    assert text_of(root.find(f"{XHTML}head/{XHTML}title")) == "Homework 3"
    body = list(root.find(f"{XHTML}body"))
    (table,) = [e for e in root.iter(f"{XHTML}table") if e.get("class") == "summary"]
    first_section = next(i for i, e in enumerate(body) if e.tag == f"{XHTML}main")
    assert body.index(table) < first_section
    rows = [[text_of(td) for td in tr] for tr in table.findall(f"{XHTML}tr")]
    assert rows[1:] == [list(r) for r in summary]
    links = {text_of(a): a.get("href") for a in table.iter(f"{XHTML}a")}
    assert links == {"fine": "#lemma-fine", "wrong": "#lemma-wrong"}  # "missing" is no lemma

    md = render(mixed, "md", summary=summary, title="Homework 3")
    assert md.startswith("# Homework 3\n")
    assert md.index("## Grading summary") < md.index("Setting `perceptron`")
    assert "| [`fine`](#lemma-fine) | 5 | 5 | complete |" in md
    assert "| `missing` | 0 | 5 | not attempted |" in md

    tex = render(mixed, "tex", summary=summary, title="Homework 3")
    assert r"\section*{Homework 3}" in tex
    assert tex.index("Grading summary") < tex.index("Setting")
    assert r"\hyperlink{lemma-fine}{\texttt{fine}} & 5 & 5 & complete\\" in tex


def test_no_summary_no_table(mixed):
    assert "summary" not in render(mixed, "html").split("<main>")[0].split("</style>")[1]
    assert "Grading summary" not in render(mixed, "md")


# ---------------------------------------------------------------------- malformed files


def test_a_file_that_does_not_parse_shows_the_positioned_error_and_its_source(tmp_path):
    path = tmp_path / "broken.proof"
    path.write_text("setting s:\n  real a > 0\n  assume pos: a >= (0\n", encoding="utf-8")
    report = Checker().check_file(path)
    assert report.error is not None and not report.lemmas
    where = f"{report.error.file}:3:{report.error.column}"
    root = xml(render(report, "html"))
    page = text_of(root)
    assert where in page and "expected ')'" in page
    assert "the file is malformed" in page
    listing = next(e for e in root.iter(f"{XHTML}pre") if e.get("class") == "listing")
    assert "assume pos: a >= (0" in text_of(listing)
    md = render(report, "md")
    assert where in md and "assume pos: a >= (0" in md
    tex = render(report, "tex")
    assert latex.text(where) in tex and r"\subsection*{Source}" in tex


def test_a_lemma_that_does_not_parse_is_shown_with_the_rest_of_the_file(tmp_path):
    report = check_text(tmp_path, """\
        lemma fine: gamma > 0
        proof:
          gamma > 0

        lemma broken: gamma >= 0
        proof:
          gamma >= = 0
        """)
    assert report.error is not None
    root = xml(render(report, "html"))
    sections = {s.get("id"): s for s in root.iter(f"{XHTML}section")}
    assert "✓ verified" in text_of(sections["lemma-fine"])
    broken = text_of(sections["lemma-broken"])
    assert "✗ failed" in broken and "expected an expression" in broken
    assert sections["lemma-broken"].find(f".//{MATHML}math") is not None  # the statement


def test_an_error_in_a_setting_marks_its_line(tmp_path):
    report = check_text(tmp_path, "", setting="setting s:\n  real a\n  assume pos: b > 0\n"
                        "lemma l: a >= a\nproof:\n  a >= a\n")
    assert report.error is not None and not report.lemmas
    root = xml(render(report, "html"))
    (row,) = [tr for tr in root.iter(f"{XHTML}tr") if tr.get("id") == "assume-s-pos"]
    assert "st-failed" in row.get("class")
    assert "unknown name 'b'" in text_of(root)
    assert "– not checked" in text_of(root)  # the lemma was not checked


def test_a_report_whose_source_cannot_be_read_is_shown_from_the_report_alone(mixed):
    moved = dataclasses.replace(mixed, path="nowhere/t.proof")
    root = xml(render(moved, "html"))
    sections = {s.get("id"): s for s in root.iter(f"{XHTML}section")}
    assert "✗ failed" in text_of(sections["lemma-wrong"])
    assert sections["lemma-wrong"].find(f".//{MATHML}math") is not None  # its statement
    assert "true in this setting" in text_of(sections["lemma-wrong"])
    assert render(moved, "md") and _braces_balance(render(moved, "tex"))


# ---------------------------------------------------------------------- the command


def run_report(capsys, *argv):
    code = main(["report", *map(str, argv)])
    captured = capsys.readouterr()
    return code, captured.out.splitlines(), captured.err


def test_report_writes_the_three_formats_and_exits_like_check(tmp_path, capsys):
    good = tmp_path / "in" / "good.proof"
    good.parent.mkdir()
    good.write_text("setting s:\n  real a > 0\nlemma l: a >= 0\nproof:\n  a >= 0\n",
                    encoding="utf-8")
    code, out, err = run_report(capsys, good, "-o", tmp_path / "out")
    assert code == 0 and not err
    assert out == [f"wrote {tmp_path / 'out' / f'good.{fmt}'}" for fmt in ("html", "tex", "md")]
    xml((tmp_path / "out" / "good.html").read_text(encoding="utf-8"))

    (tmp_path / "in" / "bad.proof").write_text(
        "setting s:\n  real a > 0\nlemma l: a >= 1\nproof:\n  a >= 1\n", encoding="utf-8")
    code, out, _ = run_report(capsys, tmp_path / "in", "-o", tmp_path / "out", "--format",
                              "md")
    assert code == 1 and len(out) == 2 and all(line.endswith(".md") for line in out)

    (tmp_path / "in" / "ugly.proof").write_text("setting s:\n  real a >\n", encoding="utf-8")
    code, out, _ = run_report(capsys, tmp_path / "in", "-o", tmp_path / "out")
    assert code == 2 and len(out) == 9  # the malformed file has its documents too
    assert "expected" in (tmp_path / "out" / "ugly.html").read_text(encoding="utf-8")


def test_files_that_share_a_stem_get_their_paths_as_names(tmp_path, capsys):
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "hw.proof").write_text(
            "setting s:\n  real a > 0\nlemma l: a >= 0\nproof:\n  a >= 0\n", encoding="utf-8")
    (tmp_path / "a" / "solo.proof").write_text(
        "setting s:\n  real a > 0\nlemma l: a >= 0\nproof:\n  a >= 0\n", encoding="utf-8")
    code, out, _ = run_report(capsys, tmp_path, "-o", tmp_path / "out", "--format", "html")
    assert code == 0
    names = sorted(Path(line.split(" ", 1)[1]).name for line in out)
    assert names == ["a__hw.html", "b__hw.html", "solo.html"]


@pytest.mark.parametrize("argv, message", [
    (["missing.proof", "-o", "{out}"], "no such file or directory: missing.proof"),
    (["{empty}", "-o", "{out}"], "no .proof files (or notes) in"),
    (["{proof}", "-o", "{file}/sub"], "cannot write in"),
])
def test_usage_errors_exit_2_with_one_line(tmp_path, capsys, argv, message):
    (tmp_path / "empty").mkdir()
    (tmp_path / "file").write_text("not a directory", encoding="utf-8")
    proof = tmp_path / "p.proof"
    proof.write_text("setting s:\n  real a > 0\nlemma l: a >= 0\nproof:\n  a >= 0\n",
                     encoding="utf-8")
    argv = [a.format(out=tmp_path / "out", empty=tmp_path / "empty", file=tmp_path / "file",
                     proof=proof) for a in argv]
    code, out, err = run_report(capsys, *argv)
    assert code == 2 and not out
    assert len(err.strip().splitlines()) == 1 and message in err and "Traceback" not in err


@pytest.mark.parametrize("argv", [["p.proof"], ["p.proof", "-o", "x", "--format", "pdf"],
                                  ["p.proof", "-o", "x", "--format", ","]])
def test_bad_options_are_usage_errors(capsys, argv):
    with pytest.raises(SystemExit) as exit_:
        main(["report", *argv])
    assert exit_.value.code == 2
    assert "Traceback" not in capsys.readouterr().err


# ---------------------------------------------------------------------- a real browser


def _png_summary(data: bytes):
    """(width, height, number of distinct byte values in the pixel data) of a PNG."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    chunks, i = [], 8
    while i < len(data):
        length, kind = struct.unpack(">I4s", data[i:i + 8])
        if kind == b"IDAT":
            chunks.append(data[i + 8:i + 8 + length])
        i += 12 + length
    pixels = zlib.decompress(b"".join(chunks))
    return width, height, len(set(pixels))


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("chromium") is None, reason="chromium is not installed")
def test_headless_chromium_renders_a_report_with_its_math(tmp_path):
    seed = bundled_proofs_dir() / "seeds" / "seed_004_virtue_slides.proof"
    page = tmp_path / "seed.html"
    page.write_text(render(Checker().check_file(seed), "html"), encoding="utf-8")
    shot = tmp_path / "seed.png"
    subprocess.run(["chromium", "--headless", "--no-sandbox", "--disable-gpu",
                    "--hide-scrollbars", f"--screenshot={shot}", "--window-size=1200,1600",
                    page.as_uri()], capture_output=True, timeout=300, check=False)
    width, height, shades = _png_summary(shot.read_bytes())
    assert (width, height) == (1200, 1600)
    assert shades > 64  # text, colours and math: not a blank or one-colour page


LAYOUT_PROBE = """<script>
const NS = "http://www.w3.org/1998/Math/MathML";
const all = (tag) => [...document.getElementsByTagNameNS(NS, tag)];
const box = (e) => e.getBoundingClientRect();
const fractions = all("mfrac"), subscripts = all("msub");
const stacked = fractions.filter(f => box(f.children[0]).bottom <= box(f.children[1]).top + 1);
const lowered = subscripts.filter(s => box(s.children[1]).bottom > box(s.children[0]).bottom);
document.title = `mathml ${fractions.length} ${stacked.length} ${subscripts.length} ` +
                 `${lowered.length}`;
</script>"""


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("chromium") is None, reason="chromium is not installed")
def test_chromium_lays_the_mathml_out_as_math(tmp_path):
    """Numerators above denominators, subscripts below their base: MathML Core at work (a
    copy of the page with a measuring script; the page itself forbids scripts)."""
    report = Checker().check_file(bundled_proofs_dir() / "seeds" / "seed_004_virtue_slides.proof")
    page = render(report, "html")
    page = re.sub(r'<meta http-equiv="Content-Security-Policy"[^>]*/>', "", page)
    probe = tmp_path / "probe.html"
    probe.write_text(page.replace("</body>", LAYOUT_PROBE + "</body>"), encoding="utf-8")
    done = subprocess.run(["chromium", "--headless", "--no-sandbox", "--disable-gpu",
                           "--dump-dom", probe.as_uri()], capture_output=True, text=True,
                          timeout=300, check=False)
    found = re.search(r"<title>mathml (\d+) (\d+) (\d+) (\d+)</title>", done.stdout)
    assert found, done.stdout[:500]
    fractions, stacked, subscripts, lowered = map(int, found.groups())
    assert fractions > 0 and stacked == fractions
    assert subscripts > 0 and lowered == subscripts
