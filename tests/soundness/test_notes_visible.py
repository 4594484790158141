"""What a reader of a Markdown or LaTeX note sees is what novikoff checks: more spellings of the
red team's tricks (tests/soundness/test_redteam3_notes.py), and the true documents that must
keep working.

Each attack hides a true display `a <= b` where a reader does not see it, or rewrites what is
typeset, while the visible claim is the false `a <= b - 5`: the claim must not be verified, and
where the document is refused the error names a line and a column.
"""

from __future__ import annotations


import pytest

from test_redteam3_notes import (MD_SETTING, TEX_SETTING, _check,  # noqa: E402,F401
                                 _claim_status, _not_verified)


def _positioned(report, path_name: str) -> bool:
    """The document is refused with file:line:col."""
    import re
    return report.error is not None and re.search(re.escape(path_name) + r":\d+:\d+: ",
                                                  str(report.error)) is not None


# ---------------------------------------------------------------- Markdown: what is not rendered

HIDDEN_MARKDOWN = {
    "div_hidden": "<div hidden>\n\n$$ a \\leq b $$\n\nby hyp.\n\n</div>\n\n$$ a \\leq b - 5 $$\n",
    "details": ("<details><summary>proof</summary>\n\n$$ a \\leq b $$\n\nby hyp.\n\n"
                "</details>\n\n$$ a \\leq b - 5 $$\n"),
    "double_backtick_span": "``$$ a \\leq b $$``\n\nby hyp.\n\n$$ a \\leq b - 5 $$\n",
    "comment_mid_line": "Text <!-- $$ a \\leq b $$ --> more.\n\nby hyp.\n\n$$ a \\leq b - 5 $$\n",
    "comment_over_lines": "Text <!--\n\n$$ a \\leq b $$\n\n-->\n\nby hyp.\n\n$$ a \\leq b - 5 $$\n",
    "link_definition_angle": "[comment]: <> ($$ a \\leq b $$)\n\nby hyp.\n\n$$ a \\leq b - 5 $$\n",
    "indented_after_paragraph_end": ("Text.\n\n        $$ a \\leq b $$\n\nby hyp.\n\n"
                                     "$$ a \\leq b - 5 $$\n"),
    "unclosed_comment": "<!--\n$$ a \\leq b $$\n\nby hyp.\n",
}


@pytest.mark.parametrize("case", sorted(HIDDEN_MARKDOWN))
def test_another_hidden_markdown_display_is_not_the_claim(tmp_path, case):
    report = _check(tmp_path, "n.md", MD_SETTING + "\n" + HIDDEN_MARKDOWN[case] + "\nby hyp.\n")
    assert _not_verified(report), (case, [(l.name, l.status) for l in report.lemmas])


@pytest.mark.parametrize("case", ["div_hidden", "details", "unclosed_comment"])
def test_math_in_raw_html_is_refused_with_a_position(tmp_path, case):
    report = _check(tmp_path, "n.md", MD_SETTING + "\n" + HIDDEN_MARKDOWN[case])
    assert _positioned(report, "n.md"), report.error


VISIBLE_MARKDOWN = {
    "after_a_comment": "<!-- a note to the grader -->\n\n$$ a \\leq b $$\n\nby hyp.\n",
    "after_inline_code": "The claim `claim`:\n\n$$ a \\leq b $$\n\nby hyp.\n",
    "in_a_list_item": "1. The claim:\n\n   $$ a \\leq b $$\n\n   by hyp.\n",
    "html_without_math": "Some <b>bold</b> prose.\n\n$$ a \\leq b $$\n\nby hyp.\n",
    "continues_a_paragraph": "The claim\n    $$ a \\leq b $$\n\nby hyp.\n",
}


@pytest.mark.parametrize("case", sorted(VISIBLE_MARKDOWN))
def test_a_visible_markdown_display_is_still_the_claim(tmp_path, case):
    """Control: a true display that a reader sees is read and verified."""
    report = _check(tmp_path, "n.md", MD_SETTING + "\n" + VISIBLE_MARKDOWN[case])
    assert report.error is None and _claim_status(report) == "verified", (case, report.error)


# ---------------------------------------------------------------- Markdown: hidden novikoff blocks

CHEAT_BLOCK = ("```novikoff\nsetting s:\n  real a, b\n  assume cheat: a <= b - 5\nreasons:\n"
               "  \"the hypothesis\" -> cheat\nlemma claim\n```\n")


@pytest.mark.parametrize("wrap", [("<!--\n", "-->\n"), ("<div hidden>\n\n", "\n</div>\n"),
                                  ("<div style=\"display:none\">\n\n", "\n</div>\n")])
def test_a_hidden_novikoff_block_is_refused_with_a_position(tmp_path, wrap):
    text = (wrap[0] + CHEAT_BLOCK.replace("```novikoff", "~~~novikoff").replace("```", "~~~")
            + wrap[1] + "\nWe show $a \\leq b - 5$.\n\n$$ a \\leq b - 5 $$\n\nby the hypothesis.\n")
    report = _check(tmp_path, "n.md", text)
    assert _not_verified(report) and _positioned(report, "n.md"), report.error


def test_a_novikoff_block_quoted_in_a_code_fence_is_an_example_not_a_setting(tmp_path):
    """Control: docs show a novikoff block inside a longer fence; it is code, never read."""
    text = (MD_SETTING + "\n````\n" + CHEAT_BLOCK + "````\n\n$$ a \\leq b - 5 $$\n\n"
            "by the hypothesis.\n")
    report = _check(tmp_path, "n.md", text)
    assert _not_verified(report)


# ---------------------------------------------------------------- LaTeX: what is not typeset

HIDDEN_LATEX = {
    "iftrue_else": "\\iftrue\n\\else\n\\[ a \\leq b \\text{by hyp} \\]\n\\fi\n",
    "iffalse_nested": ("\\iffalse\n\\ifx\\a\\b\\fi\n\\[ a \\leq b \\text{by hyp} \\]\n\\fi\n"),
    "lstlisting": "\\begin{lstlisting}\n\\[ a \\leq b \\text{by hyp} \\]\n\\end{lstlisting}\n",
    "minted": "\\begin{minted}{latex}\n\\[ a \\leq b \\text{by hyp} \\]\n\\end{minted}\n",
    "excludecomment": ("\\excludecomment{hide}\n\\begin{hide}\n\\[ a \\leq b \\text{by hyp} \\]\n"
                       "\\end{hide}\n"),
    "verb": "\\verb|\\[ a \\leq b \\text{by hyp} \\]|\n",
    "percent_comment": "Text.\n% \\[ a \\leq b \\text{by hyp} \\]\n",
    "unsure_conditional": "\\ifdefined\\foo\n\\[ a \\leq b \\text{by hyp} \\]\n\\fi\n",
}


@pytest.mark.parametrize("case", sorted(HIDDEN_LATEX))
def test_another_hidden_latex_display_is_not_the_claim(tmp_path, case):
    text = (TEX_SETTING + HIDDEN_LATEX[case] + "\\[ a \\leq b - 5 \\text{by hyp} \\]\n"
            "\\end{document}\n")
    report = _check(tmp_path, "n.tex", text)
    assert _not_verified(report), case


def test_a_display_after_end_document_is_not_read(tmp_path):
    text = (TEX_SETTING + "\\[ a \\leq b - 5 \\text{by hyp} \\]\n\\end{document}\n"
            "\\[ a \\leq b \\text{by hyp} \\]\n")
    report = _check(tmp_path, "n.tex", text.replace("% lemma claim\n", "% lemma claim\n", 1))
    assert _not_verified(report)
    assert report.error is not None or [l.statement for l in report.lemmas if l.name == "claim"]


def test_a_display_in_a_conditional_that_is_not_read_is_refused_with_a_position(tmp_path):
    report = _check(tmp_path, "n.tex", TEX_SETTING + HIDDEN_LATEX["unsure_conditional"] +
                    "\\end{document}\n")
    assert _positioned(report, "n.tex"), report.error


@pytest.mark.parametrize("wrap", [("\\iftrue\n", "\\else\n\\fi\n"), ("\\iffalse\n\\else\n", "\\fi\n")])
def test_the_branch_latex_typesets_is_read(tmp_path, wrap):
    """Control: the typeset branch of \\iftrue / \\iffalse ... \\else is the claim."""
    text = TEX_SETTING + wrap[0] + "\\[ a \\leq b \\text{by hyp} \\]\n" + wrap[1] + \
        "\\end{document}\n"
    report = _check(tmp_path, "n.tex", text)
    assert report.error is None and _claim_status(report) == "verified", report.error


# ---------------------------------------------------------------- redefined commands

@pytest.mark.parametrize("definition", [r"\renewcommand*{\le}{>}", r"\let\leq=\geq",
                                        r"\newcommand\leq{>}", r"\DeclareMathOperator{\sqrt}{x}",
                                        r"\def~{-5}", r"\mathcode`\<=\string""313E",
                                        r"\providecommand{\leq}{>}", r"\gdef\leq{>}",
                                        r"\expandafter\def\csname leq\endcsname{>}"])
def test_another_redefinition_is_refused_with_a_position(tmp_path, definition):
    text = TEX_SETTING + definition + "\n\\[ a \\leq b \\text{by hyp} \\]\n\\end{document}\n"
    report = _check(tmp_path, "n.tex", text)
    assert _positioned(report, "n.tex"), (definition, report.error)


@pytest.mark.parametrize("definition", [r"\renewcommand{\leq}{>}", r"\let\leq\geq"])
def test_a_redefinition_in_the_preamble_is_refused(tmp_path, definition):
    """The preamble is not typeset, but its definitions hold in the whole document."""
    text = (TEX_SETTING.replace("\\begin{document}", definition + "\n\\begin{document}")
            + "\\[ a \\leq b \\text{by hyp} \\]\n\\end{document}\n")
    report = _check(tmp_path, "n.tex", text)
    assert _positioned(report, "n.tex"), (definition, report.error)


def test_a_redefinition_in_markdown_math_is_refused(tmp_path):
    """MathJax's macros are global to the page: a \\def in an inline formula changes a display."""
    report = _check(tmp_path, "n.md", MD_SETTING + "\nLet $\\def\\leq{>}$ be.\n\n"
                    "$$ a \\leq b $$\n\nby hyp.\n")
    assert _positioned(report, "n.md"), report.error


def test_a_new_command_the_reader_does_not_interpret_is_allowed(tmp_path):
    """Control: a preamble's own macros are fine (a display that uses one is not understood)."""
    text = (TEX_SETTING.replace("\\begin{document}", "\\newcommand{\\R}{\\mathbb{R}}\n"
                                "\\DeclareMathOperator{\\sign}{sign}\n\\begin{document}")
            + "\\[ a \\leq b \\text{by hyp} \\]\n\\end{document}\n")
    report = _check(tmp_path, "n.tex", text)
    assert report.error is None and _claim_status(report) == "verified", report.error


def test_a_redefinition_in_a_latex_comment_is_not_a_redefinition(tmp_path):
    """Control: LaTeX does not read a `%` comment."""
    text = TEX_SETTING + "\nText.\n% \\renewcommand{\\leq}{>}\n\\[ a \\leq b \\text{by hyp} \\]\n" \
        "\\end{document}\n"
    report = _check(tmp_path, "n.tex", text)
    assert report.error is None and _claim_status(report) == "verified", report.error


# ---------------------------------------------------------------- notation rows

def _notation_doc(row: str, display: str) -> str:
    return ("```novikoff\nsetting s:\n  real a, b\n  sequence x\n  vector u\n"
            "  assume h: a <= b\nnotation:\n  " + row + "\nreasons:\n  \"hyp\" -> h\n"
            "lemma claim\n```\n\n$$ " + display + " $$\n\nby hyp.\n")


@pytest.mark.parametrize("row, display", [
    ("x_{#} -> x[0]", r"\langle u, x_{1} \rangle = \langle u, x_{2} \rangle"),
    ("x^{(#)} -> x[1]", r"\langle u, x^{(1)} \rangle = \langle u, x^{(2)} \rangle"),
    ("x_1 -> x[#]", r"\langle u, x_1 \rangle = \langle u, x_1 \rangle"),
])
def test_a_notation_row_whose_holes_differ_is_refused(tmp_path, row, display):
    report = _check(tmp_path, "n.md", _notation_doc(row, display))
    assert _positioned(report, "n.md"), report.error


@pytest.mark.parametrize("row", ["2 -> 1", "a + 5 -> a", r"\frac{b}{2} -> b", "b^2 -> b",
                                 "-5 -> 0", r"|#| -> #", r"\sqrt{b} -> b",
                                 r"\langle u, # \rangle -> 0", "x_{t+1} -> x[t]"])
def test_a_notation_row_that_is_not_a_spelling_is_refused(tmp_path, row):
    report = _check(tmp_path, "n.md", _notation_doc(row, r"a \leq b - 5"))
    assert _positioned(report, "n.md"), (row, report.error)


@pytest.mark.parametrize("row, display", [
    (r"\mathbf{a} -> a", r"\mathbf{a} \leq b"),
    (r"\alpha_{\text{new}} -> a", r"\alpha_{\text{new}} \leq b"),
    (r"AB -> a", r"AB \leq b"),
    ("c -> a", r"c \leq b"),
])
def test_a_notation_row_that_spells_a_symbol_is_read(tmp_path, row, display):
    """Control: names, decorated names and names side by side are notation."""
    report = _check(tmp_path, "n.md", _notation_doc(row, display))
    assert report.error is None and _claim_status(report) == "verified", (row, report.error)
