"""`novikoff witness`: replay witness runs (`check`) or search for one (`find`)."""

from __future__ import annotations

import sys
from pathlib import Path

__all__ = ["register"]


def register(subparsers) -> None:
    """Add the ``witness`` subcommand with ``check`` and ``find``."""
    from ._replay import CLAIMS

    p = subparsers.add_parser(
        "witness", help="replay or find runs that refute claims about what a perceptron does",
        description="A witness is a small data set and run, saved as exact JSON, whose exact "
                    "replay refutes a claim about what the perceptron does.")
    sub = p.add_subparsers(dest="witness_command", parser_class=type(p))
    check = sub.add_parser("check", help="replay witness files exactly; exit 0 if every one "
                                         "refutes its claim, 1 if one does not, 2 on bad input")
    check.add_argument("files", nargs="+", metavar="FILE")
    check.set_defaults(handler=_check)
    find = sub.add_parser("find", help="search small integer data for a refuting run and "
                                       "write it")
    find.add_argument("kind", choices=sorted(CLAIMS), metavar="KIND",
                      help="one of: " + ", ".join(CLAIMS))
    find.add_argument("-o", "--output", required=True, metavar="FILE")
    find.add_argument("--seed", type=int, default=0, help="search seed (default 0)")
    find.set_defaults(handler=_find)
    p.set_defaults(handler=lambda args: (p.print_help(sys.stderr), 2)[1])


def _print(path, o) -> None:
    print(f"{path}: {o.claim}: {'REFUTED' if o.refuted else 'not refuted'}")
    print(f"  claim: {o.statement}")
    print(f"  replay: {o.summary}")


def _check(args) -> int:
    from . import WitnessError, check_witness

    code = 0
    for f in args.files:
        try:
            o = check_witness(Path(f))
        except WitnessError as err:
            print(f"novikoff witness: {err}", file=sys.stderr)
            code = 2
            continue
        _print(f, o)
        if not o.refuted:
            code = max(code, 1)
    return code


def _find(args) -> int:
    from ._find import dumps, find_witness
    from ._read import WitnessError

    try:
        obj, o = find_witness(args.kind, seed=args.seed)
    except WitnessError as err:
        print(f"novikoff witness: {err}", file=sys.stderr)
        return 1
    try:
        Path(args.output).write_text(dumps(obj), encoding="utf-8")
    except OSError as err:
        print(f"novikoff witness: {args.output}: {err.strerror or err}", file=sys.stderr)
        return 2
    _print(args.output, o)
    return 0
