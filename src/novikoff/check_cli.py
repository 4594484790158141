"""`novikoff check`: check .proof files and print their verdicts.

The check never reads the cache of checked lemmas: every step is judged by the kernel in this
run (docs/trust.md).
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

from .checker import bundled_proofs_dir, check_paths, exit_code, proof_files
from .crosscheck import install as install_cross_check
from .errors import CheckingStopped
from .report import check_json, render_check
from .solver_budget import add_timeout_option

__all__ = ["register"]


def register(sub) -> None:
    check = sub.add_parser("check", help="check .proof files (default: the bundled proofs/)")
    check.add_argument("paths", nargs="*", help="files or directories")
    check.add_argument("--json", action="store_true", help="print one JSON document")
    add_timeout_option(check)
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
    check.add_argument("--require-certificates", action="store_true",
                       help="count a step as verified only if every decision it rests on is "
                            "backed by a stored certificate (`novikoff certify`), none by a "
                            "solver alone")
    check.set_defaults(handler=_check)


def _check(args) -> int:
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
    if args.cross_check and not _have_cvc5():
        print("novikoff: error: --cross-check needs cvc5: pip install 'novikoff[cvc5]'",
              file=sys.stderr)
        return 2
    if args.smt2 is not None:
        try:
            Path(args.smt2).mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            print(f"novikoff: error: --smt2 {args.smt2}: {exc.strerror or exc}", file=sys.stderr)
            return 2
    install_cross_check(args.cross_check, Path(args.smt2) if args.smt2 is not None else None)
    from .kernel.certified import LEDGER

    # For this command only: a process that goes on (a test, a notebook) checks as before.
    required, LEDGER.required = LEDGER.required, args.require_certificates
    start = time.perf_counter()
    try:
        # (expected failures are explained only where the output shows why)
        reports = check_paths(paths, timeout_ms=args.timeout, jobs=os.cpu_count() or 1,
                              notes=notes, explain_expected=args.json or args.verbose)
    except CheckingStopped as exc:
        print(f"novikoff: error: {exc}", file=sys.stderr)
        return 2
    finally:
        LEDGER.required = required
    elapsed = time.perf_counter() - start
    if args.json:
        print(json.dumps(check_json(reports, elapsed), indent=2))
    else:
        level = "verbose" if args.verbose else "quiet" if args.quiet else "default"
        print(render_check(reports, elapsed, level))
    return exit_code(reports)


def _have_cvc5() -> bool:
    try:
        import cvc5  # noqa: F401  (an optional dependency: the cvc5 extra)
    except ImportError:
        return False
    return True
