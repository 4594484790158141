"""The `--timeout MS` option of the commands that ask the solvers (check, certify, report)."""

from __future__ import annotations

import argparse

__all__ = ["add_timeout_option"]


def add_timeout_option(parser: argparse.ArgumentParser) -> None:
    """--timeout MS: a positive whole number of milliseconds (default 5000); anything else is a
    usage error, named by argparse, before any file is read."""
    parser.add_argument("--timeout", type=_milliseconds, default=5000, metavar="MS",
                        help="solver budget per obligation in milliseconds, counted in Z3's "
                        "resource units so that verdicts do not depend on the machine's speed "
                        "or load (default 5000)")


def _milliseconds(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text} is not a whole number of milliseconds") \
            from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"{text} is not a positive number of milliseconds")
    return value
