"""Write a report document as LaTeX: a complete article for lecture notes (pdflatex; amsmath,
amssymb, xcolor, hyperref and other standard packages only).  Also the LaTeX of math boxes, which
the Markdown writer uses for GitHub's math.

Everything from the proof file goes through `text` (text mode) or is built from boxes whose
names were checked by the lexer; nothing reaches the output unescaped.
"""

from __future__ import annotations

from urllib.parse import quote

from .boxes import INVISIBLE_TIMES, BigOp, Fenced, Frac, Ident, Number, Op, Row, Scripts, Sqrt, Text
from .model import Cite, Document, Item, Row as DocRow

__all__ = ["write", "math", "text"]

MARKS = {"verified": r"$\checkmark$ verified", "failed": r"$\times$ failed",
         "expected_failure": r"$\times$ expected failure", "unknown": "? unknown",
         "unchecked": "-- not checked"}
COLOURS = {"verified": "1A7F37", "failed": "CF222E", "expected_failure": "9A6700",
           "unknown": "8250DF", "unchecked": "57606A"}

_GREEK = {
    "α": "alpha", "β": "beta", "γ": "gamma", "δ": "delta", "ε": "epsilon", "ζ": "zeta",
    "η": "eta", "θ": "theta", "ι": "iota", "κ": "kappa", "λ": "lambda", "μ": "mu", "ν": "nu",
    "ξ": "xi", "π": "pi", "ρ": "rho", "σ": "sigma", "τ": "tau", "υ": "upsilon", "φ": "phi",
    "χ": "chi", "ψ": "psi", "ω": "omega", "Γ": "Gamma", "Δ": "Delta", "Θ": "Theta",
    "Λ": "Lambda", "Ξ": "Xi", "Π": "Pi", "Σ": "Sigma", "Υ": "Upsilon", "Φ": "Phi", "Ψ": "Psi",
    "Ω": "Omega",
}
_OPS = {"≤": r"\le", "≥": r"\ge", "≠": r"\ne", "−": "-", "·": r"\cdot", INVISIBLE_TIMES: "",
        "∗": r"\ast", "∧": r"\land", "∨": r"\lor", "⇒": r"\Rightarrow", "⇔": r"\Leftrightarrow",
        "→": r"\to", "∑": r"\sum", "≔": r"\mathrel{:=}", "[": "[", "]": "]", "=": "=", "<": "<",
        ">": ">", "+": "+", ",": ",", "/": "/"}
_FENCES = {"(": (r"\left(", r"\right)"), "⟨": (r"\left\langle ", r"\right\rangle "),
           "‖": (r"\left\lVert ", r"\right\rVert "), "|": (r"\left\lvert ", r"\right\rvert "),
           "⌊": (r"\left\lfloor ", r"\right\rfloor "), "⌈": (r"\left\lceil ", r"\right\rceil ")}

# Text mode: the ASCII specials, and the Unicode a proof's comments use; any other character
# outside Latin-1 is written as its code point (pdflatex would stop at it).
_TEXT = {"\\": r"\textbackslash{}", "{": r"\{", "}": r"\}", "$": r"\$", "&": r"\&",
         "#": r"\#", "^": r"\textasciicircum{}", "_": r"\_", "%": r"\%",
         "~": r"\textasciitilde{}", "<": r"\textless{}", ">": r"\textgreater{}",
         "|": r"\textbar{}", '"': r"\textquotedbl{}", "`": r"\textasciigrave{}",
         "'": r"\textquotesingle{}", "-": "-{}", "\t": " ",
         "“": "``", "”": "''", "‘": "`", "’": "'", "–": "--", "—": "---", "…": r"\ldots{}",
         "−": r"\ensuremath{-}",
         "×": r"\ensuremath{\times}", "÷": r"\ensuremath{\div}", "·": r"\ensuremath{\cdot}",
         "⟨": r"\ensuremath{\langle}", "⟩": r"\ensuremath{\rangle}", "‖": r"\ensuremath{\Vert}",
         "√": r"\ensuremath{\surd}", "²": r"\textsuperscript{2}", "³": r"\textsuperscript{3}",
         "⋆": r"\ensuremath{\star}", "∗": r"\ensuremath{\ast}", "✓": r"\ensuremath{\checkmark}",
         "✔": r"\ensuremath{\checkmark}"}
_TEXT.update({c: rf"\ensuremath{{{_OPS[c]}}}" for c in "≤≥≠∧∨⇒⇔→∑"})
_TEXT.update({c: rf"\ensuremath{{\{name}}}" for c, name in _GREEK.items()})


def text(value: str) -> str:
    """Text from a proof file, safe in LaTeX text mode."""
    out = []
    for c in str(value):
        if c in _TEXT:
            out.append(_TEXT[c])
        elif " " <= c <= "~" or ("\u00c0" <= c <= "\u00ff"):
            out.append(c)
        elif c in "\n\r":
            out.append(" ")
        elif ord(c) < 32 or 0x7f <= ord(c) < 0xa0:
            out.append(" ")
        else:
            out.append(rf"\texttt{{[U+{ord(c):04X}]}}")
    return "".join(out)


def math(box) -> str:
    """The LaTeX (math mode) of a box."""
    if isinstance(box, Ident):
        return _ident(box)
    if isinstance(box, Number):
        return box.text if all(c in "0123456789." for c in box.text) else \
            rf"\text{{{text(box.text)}}}"
    if isinstance(box, Op):
        return _OPS.get(box.text, rf"\text{{{text(box.text)}}}")
    if isinstance(box, Row):
        return " ".join(filter(None, (math(item) for item in box.items)))
    if isinstance(box, Scripts):
        out = "{" + math(box.base) + "}"
        if box.sub is not None:
            out += "_{" + math(box.sub) + "}"
        if box.sup is not None:
            out += "^{" + math(box.sup) + "}"
        return out
    if isinstance(box, Frac):
        return rf"\frac{{{math(box.num)}}}{{{math(box.den)}}}"
    if isinstance(box, Sqrt):
        return rf"\sqrt{{{math(box.body)}}}"
    if isinstance(box, Fenced):
        if box.open not in _FENCES:
            return rf"\text{{{text(box.open)}}}{math(box.body)}\text{{{text(box.close)}}}"
        opening, closing = _FENCES[box.open]
        return f"{opening}{math(box.body)}{closing}"
    if isinstance(box, BigOp):
        op = _OPS.get(box.op, text(box.op))
        return f"{op}_{{{math(box.under)}}}^{{{math(box.over)}}}"
    if isinstance(box, Text):
        return rf"\text{{\ttfamily {text(box.text)}}}"
    raise TypeError(f"not a box: {box!r}")


def _ident(box: Ident) -> str:
    name = box.text
    if name in _GREEK:
        return "\\" + _GREEK[name] + " "
    if box.style == "operator":
        return rf"\operatorname{{{text(name)}}}"
    if len(name) == 1 and name.isascii() and name.isalpha() and box.style == "italic":
        return name
    return rf"\mathrm{{{text(name)}}}"


# ---------------------------------------------------------------------- the document

PREAMBLE = r"""\documentclass[11pt]{article}
\usepackage[T1]{fontenc}
\usepackage[utf8]{inputenc}
\usepackage{amsmath,amssymb}
\usepackage[margin=2cm]{geometry}
\usepackage{xcolor}
\usepackage{longtable}
\usepackage[colorlinks=true,linkcolor=blue!50!black,urlcolor=blue!50!black]{hyperref}
%COLOURS%
\newcommand{\nvkmark}[2]{\textcolor{#1}{\textbf{#2}}}
\newcommand{\nvkline}[1]{\makebox[2.2em][r]{\scriptsize\textcolor{gray}{#1}}\hspace{0.8em}}
\newcommand{\nvkcomment}[1]{{\small\itshape\leftskip=3em\relax\textcolor{black!65}{#1}\par}}
\newcommand{\nvkremark}[1]{\quad{\small\itshape\textcolor{black!65}{#1}}}
\setlength{\parindent}{0pt}
\setlength{\parskip}{2pt}
\setlength{\emergencystretch}{3em}
"""


def write(doc: Document) -> str:
    colours = "\n".join(rf"\definecolor{{{_colour(k)}}}{{HTML}}{{{v}}}"
                        for k, v in COLOURS.items())
    out = [PREAMBLE.replace("%COLOURS%", colours)]
    out.append(rf"\hypersetup{{pdftitle={{{text(doc.title)}}}}}")
    out.append(r"\begin{document}")
    out.append(rf"\section*{{{text(doc.title)}}}")
    out.append(rf"\texttt{{{text(doc.path)}}}\par")
    out.append(_verdict(doc) + r"\par")
    out.append(r"{\small Marks: " + r", ".join(
        _mark(s) for s in ("verified", "failed", "expected_failure", "unknown")) + r".}\par")
    if doc.summary:
        out.append(_summary(doc))
    if doc.error is not None:
        out.append(_error(doc))
    for paragraph in doc.intro:
        out.append(rf"\nvkcomment{{{text(paragraph)}}}")
    for item in doc.items:
        out.append(_item(item))
    if doc.listing:
        out.append(_listing(doc.listing, doc.error))
    out.append(r"\end{document}")
    return "\n".join(out) + "\n"


def _colour(status: str) -> str:
    return "st" + "".join(c for c in status if c.isalpha())


def _mark(status: str | None) -> str:
    if status is None:
        return ""
    return rf"\nvkmark{{{_colour(status)}}}{{{MARKS.get(status, text(status))}}}"


def _verdict(doc: Document) -> str:
    if doc.status == "not-checked":
        return rf"\nvkmark{{{_colour('unknown')}}}{{not checked}}: {text(doc.not_checked)}"
    c = doc.counts
    verdict = {"ok": ("verified", "every lemma verified or failing as expected"),
               "failed": ("failed", "a check failed or could not be decided"),
               "malformed": ("failed", "the file is malformed")}[doc.status]
    return (rf"\nvkmark{{{_colour(verdict[0])}}}{{{verdict[1]}}}. "
            rf"{c['lemmas']} lemmas: {c['verified']} verified, {c['failing_as_expected']} "
            rf"failing as expected, {c['not_verified']} not verified; {c['checks']} checks: "
            rf"{c['checks_verified']} verified, {c['checks_expected_failures']} expected "
            rf"failures, {c['checks_failed']} failed, {c['checks_unknown']} unknown.")


def _target(id_: str) -> str:
    """hyperref's name of an anchor (names have no '.', so '_' -> '.' is one to one)."""
    return id_.replace("_", ".")


def _summary(doc: Document) -> str:
    out = [r"\subsection*{Grading summary}", r"\begin{longtable}{@{}llrp{0.55\linewidth}@{}}",
           r"\textbf{lemma} & \textbf{points} & \textbf{max} & \textbf{note}\\ \hline"]
    for name, earned, maximum, note, anchor in doc.summary:
        shown = rf"\texttt{{{text(name)}}}"
        if anchor is not None:
            shown = rf"\hyperlink{{{_target(anchor)}}}{{{shown}}}"
        out.append(rf"{shown} & {text(earned)} & {text(maximum)} & {text(note)}\\")
    out.append(r"\end{longtable}")
    return "\n".join(out)


def _error(doc: Document) -> str:
    e = doc.error
    return (r"\medskip\fcolorbox{stfailed}{stfailed!8}{\parbox{\dimexpr\linewidth-2\fboxsep"
            r"-2\fboxrule}{" + _mark("failed").replace(r"$\times$ failed", r"$\times$ malformed")
            + rf" \texttt{{{text(f'{e.file}:{e.line}:{e.column}')}}}: {text(e.message)}"
            + (rf"\par\texttt{{{text(e.text)}}}" if e.text else "") + r"}}\par\medskip")


def _listing(listing: list, error) -> str:
    out = [r"\subsection*{Source}", r"{\small"]
    for number, line in listing:
        bad = error is not None and number == error.line
        body = _verbatim(line)
        if bad:
            body = rf"\colorbox{{stfailed!15}}{{{body or '~'}}}"
        out.append(rf"\nvkline{{{number}}}{body}\par")
        if bad:  # a caret under the column of the error
            caret = _verbatim(" " * max(0, error.column - 1) + "^ " + error.message)
            out.append(rf"\nvkline{{}}\textcolor{{stfailed}}{{\bfseries {caret}}}\par")
    out.append("}")
    return "\n".join(out)


def _verbatim(line: str) -> str:
    """Source text in typewriter type, its spaces kept (they indent)."""
    return rf"\texttt{{{text(line).replace(' ', '~')}}}" if line else ""


_KINDS = {"setting": "Setting", "lemma": "Lemma", "theorem": "Theorem", "claim": "Claim",
          "import": "Import"}


def _item(item: Item) -> str:
    out = []
    if item.kind == "import":
        links = ", ".join(_cite(c) for row in item.rows for c in row.cites)
        return rf"\nvkline{{{item.line}}}from \texttt{{{text(item.name)}}} import {links}\par"
    title = rf"{_KINDS.get(item.kind, text(item.kind))} \texttt{{{text(item.name)}}}"
    out.append(rf"\subsection*{{\hypertarget{{{_target(item.anchor)}}}{{}}{title}"
               rf"\hfill{{\normalsize {_mark(item.status)}}}}}")
    for paragraph in item.comments:
        out.append(rf"\nvkcomment{{{text(paragraph)}}}")
    if item.prose:
        out.append(rf"\emph{{{text(item.prose)}}}\par")
    for row in item.head:
        out.append(_row(row, None))
    if item.status in ("failed", "expected_failure", "unknown") and item.reason:
        out.append(rf"{{\small Not verified: {text(item.reason)}}}\par")
    if item.error is not None:
        e = item.error
        out.append(rf"{_mark('failed')}: \texttt{{{text(f'{e.file}:{e.line}:{e.column}')}}}: "
                   rf"{text(e.message)}\par")
    if item.listing:
        out.append(_listing(item.listing, item.error).replace(r"\subsection*{Source}", ""))
    first = None
    for row in item.rows:
        if row.kind == "chain":
            first = row
        out.append(_row(row, first if row.kind == "continue" else None))
    if item.other_checks:
        out.append(r"\emph{Other checks:}\par")
        out += [_notes([c]) for c in item.other_checks]
    return "\n".join(out)


def _row(row: DocRow, chain: DocRow | None) -> str:
    out = [rf"\nvkcomment{{{text(p)}}}" for p in row.comments]
    indent = rf"\hspace*{{{1.2 * row.depth:.1f}em}}"
    if row.kind == "statement":
        body = (rf"\emph{{Statement.}} $\displaystyle {math(row.rhs)}$" if row.rhs is not None
                else rf"\emph{{{text(row.label)}}} \texttt{{{text(row.source)}}}")
    elif row.kind == "given":
        body = rf"\emph{{given}} \texttt{{{text(row.label)}}}: $\displaystyle {math(row.rhs)}$"
    elif row.kind in ("heading", "case"):
        body = rf"\emph{{{text(row.label)}}}" + (
            rf" $\displaystyle {math(row.rhs)}$" if row.rhs is not None else "") + ":"
    elif row.kind == "chain":
        body = _label(row) + rf"$\displaystyle {math(row.lhs)} {math(row.rhs)}$"
    elif row.kind == "continue":
        shown = _label(chain) + rf"$\displaystyle {math(chain.lhs)}$" if chain else ""
        body = rf"\phantom{{{shown}}}$\displaystyle {{}} {math(row.rhs)}$"
    elif row.kind == "formula":
        body = _label(row) + rf"$\displaystyle {math(row.rhs)}$"
    elif row.kind == "setting":
        anchor = rf"\hypertarget{{{_target(row.anchor)}}}{{}}" if row.anchor else ""
        label = rf"\texttt{{{text(row.label)}}}" if row.anchor else rf"\emph{{{text(row.label)}}}"
        body = rf"{anchor}{label}: $\displaystyle {math(row.rhs)}$"
    elif row.cites and not row.source:
        body = ", ".join(_cite(c) for c in row.cites)
    else:
        body = rf"\texttt{{{text(row.source)}}}"
    by = ""
    if row.cites and row.kind != "text":
        by = r"{\small by " + ", ".join(_cite(c) for c in row.cites) + "}"
    if row.xfail:
        by += r" {\small\textsf{xfail}}"
    if row.remark:
        body += rf"\nvkremark{{{text(row.remark)}}}"
    line = rf"\nvkline{{{row.line if row.line is not None else ''}}}"
    out.append(rf"{line}{indent}{body}\hfill\mbox{{{by}}}\enspace{{\small {_mark(row.status)}}}"
               r"\par")
    notes = [c for c in row.checks if c.status != "verified"]
    if notes:
        out.append(_notes(notes))
    return "\n".join(out)


def _label(row: DocRow) -> str:
    return rf"\emph{{{text(row.label)}}} " if row.label else ""


def _cite(cite: Cite) -> str:
    shown = rf"\textsf{{{text(cite.name)}}}"
    if cite.at is not None:
        shown += "$[" + ", ".join(f"{math(var)} := {math(value)}"
                                  for var, value in cite.at) + "]$"
    if cite.args:
        shown += "$(" + ", ".join(math(a) for a in cite.args) + ")$"
    if cite.href is None:
        return shown
    where, id_ = cite.href
    if where == "here":
        return rf"\hyperlink{{{_target(id_)}}}{{{shown}}}"
    # hyperref reads % and # in a URL only escaped; quote() leaves no other special.
    url = (quote(f"{where}.pdf") + "#" + _target(id_)).replace("%", r"\%").replace("#", r"\#")
    return rf"\href{{{url}}}{{{shown}}}"


def _notes(checks: list) -> str:
    out = [r"{\small\leftskip=3.8em\relax"]
    for check in checks:
        s = check.step
        where = rf"\texttt{{{text(f'{s.file}:{s.line}:{s.column}')}}}"
        head = rf"{_mark(s.status)} at {where}"
        if check.context:
            head += rf": \texttt{{{text(check.context)}}}"
        out.append(head + r"\par")
        if check.why:
            out.append(rf"\textbf{{why:}} {text(check.why)}\par")
        if check.domain is not None:
            out.append(rf"\textbf{{condition of meaning that may fail:}} ${math(check.domain)}$"
                       r"\par")
        if check.hint:
            out.append(r"\textbf{hint:} it would hold with: "
                       + ", ".join(_cite(c) for c in check.hint) + r"\par")
        if check.counterexample:
            rows = r" \\ ".join(rf"${math(k)}$ & ${math(v)}$" for k, v in check.counterexample)
            out.append(r"\textbf{counterexample:}\par"
                       r"\begin{tabular}{@{}l@{\quad}l@{}}\hline " + rows + r" \\ \hline"
                       r"\end{tabular}\par")
    out.append(r"\medskip}")
    return "\n".join(out)
