"""Reading a witness file: strict JSON, exact rationals, every field checked, one-line errors."""

from __future__ import annotations

import json
import re
import stat
from fractions import Fraction
from pathlib import Path

from ..errors import NovikoffError

__all__ = [
    "FORMAT",
    "MAX_STEPS",
    "MAX_VISITS",
    "MAX_WORK",
    "Fields",
    "WitnessError",
    "rational",
    "read_json",
]

FORMAT = "novikoff-witness/1"
MAX_STEPS = 100_000        # cap on epochs / iterations a file may ask for
_MAX_ORDER = 10_000        # cap on the length of an order
MAX_VISITS = 1_000_000     # cap on the examples a replay may visit (epochs x pass length)
MAX_WORK = 2_000_000       # cap on visits x dimension: exact dot products take about a second per million entries
_RATIONAL = re.compile(r"[+-]?[0-9]{1,200}(/[0-9]{1,200})?")


class WitnessError(NovikoffError):
    """A witness file is unreadable, corrupt, mis-typed or inconsistent; the message is one line."""


def _no_duplicates(pairs):
    obj = {}
    for key, value in pairs:
        if key in obj:
            raise WitnessError(f"duplicate field {key!r}")
        obj[key] = value
    return obj


def _no_constant(name):
    raise WitnessError(f"{name} is not a number")


MAX_BYTES = 1 << 20


def read_json(path: Path) -> dict:
    """The top-level JSON object of ``path`` (duplicate keys, NaN and Infinity refused)."""
    try:
        info = Path(path).stat()
        if not stat.S_ISREG(info.st_mode):  # a device or a pipe could block or never end
            raise WitnessError("not a regular file")
        if info.st_size > MAX_BYTES:
            raise WitnessError(f"larger than {MAX_BYTES} bytes: a witness is a small run")
        text = Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise WitnessError("not UTF-8 text") from None
    except OSError as exc:
        raise WitnessError(f"cannot read: {exc.strerror or exc}") from None
    try:
        obj = json.loads(text, object_pairs_hook=_no_duplicates, parse_constant=_no_constant)
    except json.JSONDecodeError as exc:
        raise WitnessError(f"bad JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") \
            from None
    except RecursionError:
        raise WitnessError("bad JSON: nested too deeply") from None
    except ValueError as exc:  # e.g. an integer literal with too many digits
        raise WitnessError(f"bad JSON: {str(exc).split(';')[0]}") from None
    if not isinstance(obj, dict):
        raise WitnessError(f"the file must hold a JSON object, not {_kind(obj)}")
    return obj


def _kind(v) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean",
            float: "a float", int: "an integer", type(None): "null"}.get(type(v), type(v).__name__)


def rational(v, where: str) -> Fraction:
    """An exact rational: a JSON integer or a string "p" or "p/q"; floats are refused."""
    if isinstance(v, bool):
        raise WitnessError(f"{where}: {json.dumps(v)} is a boolean, not a number")
    if isinstance(v, int):
        return Fraction(v)
    if isinstance(v, float):
        raise WitnessError(f"{where}: {v!r} is a JSON float, which is not exact; write an "
                           f"integer or a string such as \"1/2\"")
    if isinstance(v, str):
        if not _RATIONAL.fullmatch(v):
            raise WitnessError(f"{where}: {v!r} is not an exact rational (write \"3\", "
                               f"\"-1/2\")")
        num, _, den = v.partition("/")
        if den and int(den) == 0:
            raise WitnessError(f"{where}: {v!r} has a zero denominator")
        return Fraction(int(num), int(den) if den else 1)
    raise WitnessError(f"{where}: expected a rational number, got {_kind(v)}")


class Fields:
    """The fields of one witness object: each read once, typed, range-checked."""

    def __init__(self, obj: dict, required: tuple[str, ...], optional: tuple[str, ...]):
        unknown = [k for k in obj if k not in required and k not in optional]
        if unknown:
            raise WitnessError(f"unknown field {unknown[0]!r} (allowed: "
                               f"{', '.join(required + optional)})")
        for k in required:
            if k not in obj:
                raise WitnessError(f"missing field {k!r}")
        self.obj = obj

    def has(self, key: str) -> bool:
        return key in self.obj

    def positive(self, key: str) -> Fraction:
        q = rational(self.obj[key], key)
        if q <= 0:
            raise WitnessError(f"{key} must be > 0, got {q}")
        return q

    def number(self, key: str) -> Fraction:
        return rational(self.obj[key], key)

    def count(self, key: str) -> int:
        v = self.obj[key]
        if isinstance(v, bool) or not isinstance(v, int):
            raise WitnessError(f"{key}: expected a positive integer, got {_kind(v)}")
        if not 1 <= v <= MAX_STEPS:
            raise WitnessError(f"{key} must be between 1 and {MAX_STEPS}, got {v}")
        return v

    def data(self) -> tuple[list[tuple[Fraction, ...]], list[int]]:
        """X (non-empty, rectangular, no zero row) and y (labels +1/-1, one per row)."""
        X, y = self.obj["X"], self.obj["y"]
        if not isinstance(X, list) or not X:
            raise WitnessError("X must be a non-empty list of rows" if isinstance(X, list)
                               else f"X: expected a list of rows, got {_kind(X)}")
        rows = []
        for i, row in enumerate(X):
            if not isinstance(row, list) or not row:
                raise WitnessError(f"X[{i}] must be a non-empty list of numbers")
            if len(row) != len(X[0]):
                raise WitnessError(f"ragged rows: X[{i}] has {len(row)} entries, X[0] has "
                                   f"{len(X[0])}")
            rows.append(tuple(rational(v, f"X[{i}][{j}]") for j, v in enumerate(row)))
            if not any(rows[-1]):
                raise WitnessError(f"X[{i}] is the zero vector (an example must be non-zero)")
        if not isinstance(y, list):
            raise WitnessError(f"y: expected a list of labels, got {_kind(y)}")
        if len(y) != len(rows):
            raise WitnessError(f"y has {len(y)} labels for {len(rows)} rows of X")
        for i, v in enumerate(y):
            if isinstance(v, bool) or v not in (1, -1) or not isinstance(v, int):
                raise WitnessError(f"y[{i}]: labels must be the integers 1 or -1, got "
                                   f"{json.dumps(v)}")
        return rows, list(y)

    def positives(self, key: str, n: int) -> list[Fraction]:
        v = self.obj[key]
        if not isinstance(v, list) or len(v) != n:
            raise WitnessError(f"{key} must be a list of {n} positive numbers, one per example")
        out = [rational(a, f"{key}[{i}]") for i, a in enumerate(v)]
        for i, q in enumerate(out):
            if q <= 0:
                raise WitnessError(f"{key}[{i}] must be > 0, got {q}")
        return out

    def vector(self, key: str, d: int) -> tuple[Fraction, ...]:
        v = self.obj[key]
        if not isinstance(v, list):
            raise WitnessError(f"{key}: expected a list of {d} numbers, got {_kind(v)}")
        if len(v) != d:
            raise WitnessError(f"{key} has {len(v)} entries, the rows of X have {d}")
        return tuple(rational(a, f"{key}[{j}]") for j, a in enumerate(v))

    def order(self, n: int) -> list[int]:
        """Example indices visited in one pass (repeats allowed); every example at least once."""
        if not self.has("order"):
            return list(range(n))
        v = self.obj["order"]
        if not isinstance(v, list) or not v:
            raise WitnessError("order must be a non-empty list of example indices")
        if len(v) > _MAX_ORDER:
            raise WitnessError(f"order has {len(v)} entries (at most {_MAX_ORDER})")
        for k, i in enumerate(v):
            if isinstance(i, bool) or not isinstance(i, int):
                raise WitnessError(f"order[{k}]: expected an example index, got {_kind(i)}")
            if not 0 <= i < n:
                raise WitnessError(f"order[{k}] = {i} is out of range: there are {n} "
                                   f"examples (indices 0..{n - 1})")
        missing = sorted(set(range(n)) - set(v))
        if missing:
            raise WitnessError(f"order never visits example {missing[0]} (a pass must visit "
                               f"every example)")
        return list(v)
