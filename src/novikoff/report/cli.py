"""`novikoff report PATH... -o DIR`: check .proof files and write an annotated document of each,
DIR/NAME.html, DIR/NAME.tex and DIR/NAME.md (NAME: the file's stem; files that share a stem are
named by their paths from the directory they have in common, `/` -> `__`).

Exit codes are those of `novikoff check`: 0 every lemma verified or failing as expected, 1 a
failure or unknown, 2 malformed input or a usage error (one line on stderr, never a traceback).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

from ..checker import check_paths, exit_code, proof_files
from ..notes import NOTES_SUFFIXES
from .document import render_documents
from ..notes.convert import latex_to_markdown, markdown_to_latex
from ..solver_budget import add_timeout_option
from .notes import annotate, annotate_html

__all__ = ["register", "document_names"]

FORMATS = ("html", "tex", "md")


def register(subparsers) -> None:
    """Add the ``report`` subcommand to an argparse subparsers object."""
    p = subparsers.add_parser(
        "report", help="write an annotated proof document (HTML, LaTeX, Markdown) for each "
                       ".proof file",
        description="Check .proof files and write, for each, a document with every setting, "
                    "lemma and step typeset as mathematics and marked verified, failed, "
                    "expected failure or unknown, with counterexamples and hints: NAME.html "
                    "(MathML, standalone), NAME.tex (LaTeX) and NAME.md (Markdown) in DIR.")
    p.add_argument("paths", nargs="+", metavar="PATH", help=".proof files or directories")
    p.add_argument("-o", "--output", required=True, metavar="DIR",
                   help="the directory to write the documents in (created if missing)")
    p.add_argument("--format", type=_formats, default=FORMATS, metavar="FORMATS",
                   help="comma-separated formats among html, tex, md (default: all three)")
    add_timeout_option(p)
    p.set_defaults(handler=_report)


def _formats(value: str) -> tuple:
    wanted = [f.strip() for f in value.split(",") if f.strip()]
    unknown = [f for f in wanted if f not in FORMATS]
    if not wanted or unknown:
        raise argparse.ArgumentTypeError(f"{value!r}: formats are a comma-separated list of "
                                         f"{', '.join(FORMATS)}")
    return tuple(dict.fromkeys(wanted))


def document_names(files: list) -> dict:
    """Resolved path -> document name: the file's stem; for files that share a stem, their path
    relative to the deepest directory they have in common, without the suffix, '/' replaced by
    '__' (a/hw.proof and b/hw.proof: a__hw and b__hw)."""
    paths = [Path(f).resolve() for f in files]
    by_stem: dict = {}
    for p in paths:
        by_stem.setdefault(p.stem, []).append(p)
    names, taken = {}, set()
    for p in paths:
        name = p.stem
        sharing = by_stem[p.stem]
        if len(sharing) > 1:
            common = Path(os.path.commonpath([str(q.parent) for q in sharing]))
            name = "__".join(p.relative_to(common).with_suffix("").parts)
        base, n = name, 2
        while name in taken:  # a__hw.proof beside a/hw.proof: then a counter
            name, n = f"{base}-{n}", n + 1
        taken.add(name)
        names[p] = name
    return names


def _fail(message: str) -> int:
    print(f"novikoff report: error: {message}", file=sys.stderr)
    return 2


def _report(args) -> int:
    for p in args.paths:
        if not Path(p).exists():
            return _fail(f"no such file or directory: {p}")
    files = list({Path(f).resolve(): f for f in proof_files(args.paths, notes=True)}.values())
    if not files:
        return _fail(f"no .proof files (or notes) in {', '.join(args.paths)}")
    out = Path(args.output)
    problem = _writable(out)
    if problem:
        return _fail(f"cannot write in {out}: {problem}")
    reports = check_paths(files, timeout_ms=args.timeout, jobs=os.cpu_count() or 1,
                          notes=True)
    names = document_names(files)

    def document_name(path) -> str:
        return names.get(Path(path).resolve(), Path(path).stem)

    for f, report in zip(files, reports):
        if report.notes is not None or Path(f).suffix in NOTES_SUFFIXES:
            documents = _annotated_notes(f, report, args.format)
        else:
            documents = render_documents(report, args.format, document_name=document_name)
        for fmt, text in documents.items():
            target = out / f"{names[Path(f).resolve()]}.{fmt}"
            try:
                target.write_text(text, encoding="utf-8", newline="\n")
            except OSError as exc:
                return _fail(f"cannot write {target}: {exc.strerror or exc}")
            print(f"wrote {target}")
    return exit_code(reports)


def _annotated_notes(path, report, formats) -> dict:
    """format -> the annotated copy of a Markdown or LaTeX document: in its own markup, in the
    other one (rewritten so that it reads and checks the same), and html."""
    try:
        source = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        source = ""
    own = "md" if Path(path).suffix == ".md" else "tex"
    out = {}
    for fmt in formats:
        if fmt == "html":
            out[fmt] = annotate_html(report, source, own == "md")
        elif fmt == own:
            out[fmt] = annotate(report, source, own == "md")
        elif fmt == "md":
            out[fmt] = latex_to_markdown(annotate(report, source, False))
        else:
            out[fmt] = markdown_to_latex(annotate(report, source, True))
    return out


def _writable(directory: Path) -> str:
    """Why documents cannot be written in directory (created if missing), or ''."""
    try:
        directory.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=directory):
            pass
    except OSError as exc:
        return exc.strerror or str(exc)
    return ""
