"""Annotated proof documents: one checked .proof file as HTML (MathML), LaTeX or Markdown.

    render(report, "html")                       # a standalone page
    render(report, "tex", title="Homework 3")    # a complete LaTeX article
    render(report, "md", summary=[("progress", "4", "5", "base case missing")])

`summary` (the hook of `novikoff grade`) is a table of (lemma name, points earned, max points,
note) at the top of the document; a row whose name is a lemma of the file links to it.
"""

from __future__ import annotations

from ..checker import FileReport
from ..errors import InvalidArgument
from . import html, latex, markdown
from .model import build

__all__ = ["render", "render_documents", "FORMATS"]

FORMATS = {"html": html.write, "tex": latex.write, "md": markdown.write}


def render(report: FileReport, fmt: str, *, summary: list[tuple[str, str, str, str]] | None = None,
           title: str | None = None) -> str:
    """The document of a checked file in format fmt ("html", "tex" or "md").

    Raises ValueError (InvalidArgument) naming the argument for a report that is not a
    FileReport, an unknown format, a summary that is not a list of four strings per row, or a
    title that is not a string.
    """
    return render_document(report, fmt, summary=summary, title=title)


def render_document(report: FileReport, fmt: str, *, summary=None, title=None,
                    document_name=None) -> str:
    """render(), with `document_name(path)`: the name (without extension) of the document of
    another .proof file, which links to imported lemmas use (`novikoff report` gives the names
    it writes; default: the file's stem)."""
    return render_documents(report, (fmt,), summary=summary, title=title,
                            document_name=document_name)[fmt]


def render_documents(report: FileReport, formats, *, summary=None, title=None,
                     document_name=None) -> dict:
    """format -> the document, for several formats of one file (its source is read and parsed
    once)."""
    for fmt in formats:
        _validate(report, fmt, summary, title)
    doc = build(report, title=title, summary=[tuple(row) for row in summary or []],
                document_name=document_name)
    return {fmt: FORMATS[fmt](doc) for fmt in formats}


def _validate(report, fmt, summary, title) -> None:
    if not isinstance(report, FileReport):
        raise InvalidArgument(f"report={report!r} is not a FileReport")
    if not isinstance(fmt, str) or fmt not in FORMATS:
        raise InvalidArgument(f"fmt={fmt!r} is not one of {', '.join(map(repr, FORMATS))}")
    if title is not None and not isinstance(title, str):
        raise InvalidArgument(f"title={title!r} is not a string")
    if summary is None:
        return
    if not isinstance(summary, (list, tuple)):
        raise InvalidArgument(f"summary={summary!r} is not a list of (lemma, points, max, "
                              f"note) rows")
    for i, row in enumerate(summary):
        if not isinstance(row, (list, tuple)) or len(row) != 4 or \
                not all(isinstance(cell, str) for cell in row):
            raise InvalidArgument(f"summary[{i}]={row!r} is not four strings (lemma, points, "
                                  f"max, note)")
