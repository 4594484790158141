"""The `novikoff` command: check proofs, run and audit perceptrons, fuzz them."""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import sys

from . import lemma_cache

__all__ = ["main", "build_parser"]

# Every subcommand lives beside its subsystem, in a module with register(subparsers).  A module is
# imported only when one of its commands is asked for: `novikoff --help` pays for no SymPy,
# `novikoff check` for no numpy.
_SUBCOMMANDS = {
    "check": ("novikoff.check_cli", "check .proof files (default: the bundled proofs/)"),
    "run": ("novikoff.runtime.cli", "run a perceptron with every lemma of proofs/ checked at "
                                    "every update"),
    "audit": ("novikoff.runtime.cli", "check a trace of any perceptron implementation"),
    "replay": ("novikoff.runtime.cli", "re-run a saved run in exact rational arithmetic"),
    "fuzz": ("novikoff.fuzz.cli", "fuzz the lemma invariants and the catalogue of buggy "
                                  "perceptrons"),
    "witness": ("novikoff.witness.cli", "replay or find runs that refute claims about perceptrons"),
    "report": ("novikoff.report.cli", "write an annotated proof document (HTML, LaTeX, Markdown) "
                                      "for each .proof file"),
    "certify": ("novikoff.certify.cli", "search and store certificates for the verified steps "
                                        "of .proof files"),
    "grade": ("novikoff.grade.cli", "grade a folder of students' .proof files against a reference "
                                    "assignment"),
    "cache": ("novikoff.cache_cli", "show or clear the cache of checked lemmas"),
}
# The commands that load the lemma library to monitor it, and so may take its checked outcome
# from the cache (novikoff.lemmas): each takes --no-cache.
_LOAD_LEMMAS = ("run", "audit", "replay", "fuzz")
_NO_CACHE_HELP = ("check the lemmas' proofs again instead of taking their outcome from the "
                  "cache of checked lemmas (which is then neither read nor written)")


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # usage errors: one line, exit 2, no traceback
        print(f"novikoff: error: {message} (`{self.prog} --help` lists the options)",
              file=sys.stderr)
        raise SystemExit(2)


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The argument parser; only the module of `command` (if any) is imported."""
    parser = _Parser(prog="novikoff", description=__doc__)
    parser.add_argument("--no-cache", action="store_true", help=_NO_CACHE_HELP)
    sub = parser.add_subparsers(dest="command", parser_class=_Parser)
    wanted = _SUBCOMMANDS.get(command, (None,))[0]
    if wanted is not None:
        importlib.import_module(wanted).register(sub)
        if command in _LOAD_LEMMAS:
            # SUPPRESS: unless given here, `novikoff --no-cache CMD` keeps its value.
            sub.choices[command].add_argument("--no-cache", action="store_true",
                                              default=argparse.SUPPRESS, help=_NO_CACHE_HELP)
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
        with lemma_cache.disabled() if args.no_cache else contextlib.nullcontext():
            return args.handler(args)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # `novikoff check | head`: the reader left; say nothing more
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1


if __name__ == "__main__":
    sys.exit(main())
