"""The `novikoff` command: check proofs, run and audit perceptrons, fuzz them."""

from __future__ import annotations

import argparse
import importlib
import os
import json
import sys
import time
from pathlib import Path

__all__ = ["main", "exit_code"]

# Subcommands that live beside their subsystems; each module has register(subparsers).  A module
# is imported only when one of its commands is asked for: `novikoff check` must not pay for numpy.
_SUBCOMMANDS = {
    "run": ("novikoff.runtime.cli", "run a perceptron with every lemma of proofs/ checked at "
                                    "every update"),
    "audit": ("novikoff.runtime.cli", "check a trace of any perceptron implementation"),
    "replay": ("novikoff.runtime.cli", "re-run a saved run in exact rational arithmetic"),
    "fuzz": ("novikoff.fuzz.cli", "fuzz the lemma invariants and the catalogue of buggy "
                                  "perceptrons"),
    "witness": ("novikoff.witness.cli", "replay or find runs that refute claims about perceptrons"),
    "report": ("novikoff.report.cli", "write an annotated proof document (HTML, LaTeX, Markdown) "
                                      "for each .proof file"),
    "grade": ("novikoff.grade.cli", "grade a folder of students' .proof files against a reference "
                                    "assignment"),
}


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # usage errors: one line, exit 2, no traceback
        self.print_usage(sys.stderr)
        print(f"novikoff: error: {message}", file=sys.stderr)
        raise SystemExit(2)


def exit_code(reports) -> int:
    """0: every lemma verified or failing as expected; 1: a failure or unknown; 2: malformed.

    A lemma that rests on an unverified lemma is not verified, so it counts as a failure unless
    the step that cites it is marked xfail.
    """
    if any(r.error is not None for r in reports):
        return 2
    if any(not s.ok for r in reports for s in r.steps):
        return 1
    if any(lemma.status == "failed" for r in reports for lemma in r.lemmas):
        return 1
    return 0


def _check(args) -> int:
    from .checker import bundled_proofs_dir, check_paths, proof_files
    from .report import check_json, render_check

    paths = args.paths or [bundled_proofs_dir()]
    for p in paths:
        if not Path(p).exists():
            print(f"novikoff: error: no such file or directory: {p}", file=sys.stderr)
            return 2
    notes = bool(args.paths)  # notes in the folders named; the bundled check is the library
    if not proof_files(paths, notes=notes):
        print(f"novikoff: error: no .proof files or notes in {', '.join(map(str, paths))}",
              file=sys.stderr)
        return 2
    from .kernel.solver import AUDIT

    if args.cross_check:
        try:
            import cvc5  # noqa: F401
        except ImportError:
            print("novikoff: error: --cross-check needs cvc5: pip install 'novikoff[cvc5]'",
                  file=sys.stderr)
            return 2
    if args.smt2 is not None:
        try:
            Path(args.smt2).mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            print(f"novikoff: error: --smt2 {args.smt2}: {exc.strerror or exc}", file=sys.stderr)
            return 2
    AUDIT.cross_check = args.cross_check
    AUDIT.smt2_dir = Path(args.smt2) if args.smt2 is not None else None
    start = time.perf_counter()
    reports = check_paths(paths, timeout_ms=args.timeout, jobs=os.cpu_count() or 1,
                          notes=notes)
    elapsed = time.perf_counter() - start
    if args.json:
        print(json.dumps(check_json(reports, elapsed), indent=2))
    else:
        level = "verbose" if args.verbose else "quiet" if args.quiet else "default"
        print(render_check(reports, elapsed, level))
    return exit_code(reports)


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The argument parser; only the module of `command` (if any) is imported."""
    parser = _Parser(prog="novikoff", description=__doc__)
    sub = parser.add_subparsers(dest="command", parser_class=_Parser)
    check = sub.add_parser("check", help="check .proof files (default: the bundled proofs/)")
    check.add_argument("paths", nargs="*", help="files or directories")
    check.add_argument("--json", action="store_true", help="print one JSON document")
    check.add_argument("--timeout", type=int, default=5000, metavar="MS",
                       help="solver timeout per obligation in milliseconds (default 5000)")
    level = check.add_mutually_exclusive_group()
    level.add_argument("-q", "--quiet", action="store_true",
                       help="print only the steps that failed and the summary")
    level.add_argument("-v", "--verbose", action="store_true",
                       help="print every lemma and every step (expected failures included)")
    check.add_argument("--cross-check", action="store_true",
                       help="decide every obligation again with cvc5; a disagreement makes the "
                            "step unknown (needs the cvc5 extra)")
    check.add_argument("--smt2", metavar="DIR",
                       help="write every obligation as a self-contained SMT-LIB 2 file in DIR")
    check.set_defaults(handler=_check)
    wanted = _SUBCOMMANDS.get(command, (None,))[0]
    if wanted is not None:
        importlib.import_module(wanted).register(sub)
    for name, (module, text) in _SUBCOMMANDS.items():
        if module != wanted:
            sub.add_parser(name, help=text)
    return parser


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    command = next((a for a in argv if not a.startswith("-")), None)
    parser = build_parser(command)
    args = parser.parse_args(argv)
    if getattr(args, "handler", None) is None:
        parser.print_help(sys.stderr)
        return 2
    try:
        return args.handler(args)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # `novikoff check | head`: the reader left; say nothing more
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1


if __name__ == "__main__":
    sys.exit(main())
