"""Compiled checks: the IR a lemma's statement compiles to, and the monitor's record of a lemma.

Nothing here imports SymPy or the kernel: a run whose lemmas come compiled from the cache
(``_library``) loads neither.  ``_compile`` walks kernel formulas into this IR; the slots, the
places a formula is evaluated and the IR's nodes are described there.
"""

from __future__ import annotations

import hashlib
import hmac
import math
import os
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from ._program import Program, Verdict

__all__ = ["Check", "MonitoredLemma", "SameObjects", "exact_interval", "slot_names", "classify", "inner_slot",
           "encode_lemma", "decode_lemma"]

VECTOR_ATOMS = ("w_star", "w0", "x", "u", "w[k]", "w[k+1]",
                "wv[t]", "s[0]", "s[t]", "s[t+1]", "a[t+1]")  # the last five: averaged runs
# Real sequences of the run, and which of them are 0 at index 0 (sums over no update).
SEQUENCES = ("TD", "m", "C", "Q", "votes", "vote_counts", "vote_counts_total", "visits_before")
ZERO_AT_START = ("TD", "C", "Q", "vote_counts_total", "visits_before")
# The sequences known only at the update of their index (m[k], the count of w[k] in the vote).
AT_UPDATE_ONLY = ("m", "vote_counts")
# The setting names only a batch run gives values, and those only a run with one example per
# update gives (the monitor tells a lemma that needs the other kind of run apart).
BATCH_NAMES = frozenset({"u", "m", "C", "Q", "n"})
SINGLE_EXAMPLE_NAMES = frozenset({"x", "y", "d", "TD"})
# The names only a voted run gives values (variant='voted': the vote it keeps).
VOTED_NAMES = frozenset({"votes", "vote_counts", "vote_counts_total", "visits_before"})
# The names only an averaged run gives values: its points are visits, indexed by t (t, t+1; s at
# 0), and kt is known at the visit being checked only.
AVERAGED_NAMES = frozenset({"t", "wv", "s", "a", "kt", "KT", "RT"})
VISIT_SEQUENCES = ("kt", "KT", "RT")
VISIT_VECTORS = ("wv", "s", "a")
# The inner products of the start vector that every engine supplies (start_slots in _bounds):
# constants of the run.  A product with the example or the weights would cost every engine a
# dot product per update for no lemma of the library.
START_SLOTS = frozenset({"<w0, w0>", "<w_star, w0>"})
STATE_SLOTS = frozenset({"k", "M", "TD[k]", "C[k]", "Q[k]", "<w_star, w[k]>", "<w[k], w[k]>",
                         "votes[k]", "vote_counts_total[k]", "visits_before[k]"})


def inner_slot(a: str, b: str) -> str:
    a, b = sorted((a, b), key=VECTOR_ATOMS.index)
    return f"<{a}, {b}>"


# --------------------------------------------------------------------------- exact intervals

def _isqrt_interval(q: Fraction, bits: int):
    """Rational lo <= sqrt(q) <= hi with hi - lo about 2**-bits (exact for perfect squares)."""
    if q <= 0:
        return Fraction(0), Fraction(0)
    n, d = q.numerator, q.denominator
    rn, rd = math.isqrt(n), math.isqrt(d)
    if rn * rn == n and rd * rd == d:
        r = Fraction(rn, rd)
        return r, r
    scale = 1 << (2 * bits)
    s = math.isqrt(n * scale // d)
    return Fraction(s, 1 << bits), Fraction(s + 1, 1 << bits)


def exact_interval(node, env: dict, bits: int):
    """Rational bounds (lo, hi) of an IR expression at one point, or (None, None) where it is
    undefined (a divisor that may be zero, the square root of a negative number).

    env: slot -> Fraction, or ('sqrt', q) for an irrational constant such as R; square roots
    are bracketed to about 2**-bits.
    """
    tag = node[0]
    if tag == "const":
        return node[1], node[1]
    if tag == "slot":
        v = env[node[1]]
        return _isqrt_interval(v[1], bits) if isinstance(v, tuple) else (v, v)
    if tag in ("add", "mul", "max", "min"):
        parts = [exact_interval(a, env, bits) for a in node[1]]
        if any(lo is None for lo, _ in parts):
            return None, None
        lo, hi = parts[0]
        for lo2, hi2 in parts[1:]:
            if tag == "add":
                lo, hi = lo + lo2, hi + hi2
            elif tag == "mul":
                if lo == hi and lo2 == hi2:
                    lo = hi = lo * lo2
                else:
                    c = (lo * lo2, lo * hi2, hi * lo2, hi * hi2)
                    lo, hi = min(c), max(c)
            elif tag == "max":
                lo, hi = max(lo, lo2), max(hi, hi2)
            else:
                lo, hi = min(lo, lo2), min(hi, hi2)
        return lo, hi
    lo, hi = exact_interval(node[1], env, bits)
    if lo is None:
        return None, None
    if tag == "recip":
        return (None, None) if lo <= 0 <= hi else (1 / hi, 1 / lo)
    if tag == "ipow":
        n = node[2]
        a, b = lo ** n, hi ** n
        if n % 2 or lo >= 0:
            return a, b
        return (b, a) if hi <= 0 else (Fraction(0), max(a, b))
    if tag == "sqrt":
        if not node[2] and hi < 0:  # a Gram form (node[2]) is >= 0; anything else may not be
            return None, None
        if lo == hi:
            return _isqrt_interval(lo, bits)
        return _isqrt_interval(max(lo, Fraction(0)), bits)[0], _isqrt_interval(hi, bits)[1]
    if tag == "abs":
        if lo < 0 < hi:
            return Fraction(0), max(-lo, hi)
        return min(abs(lo), abs(hi)), max(abs(lo), abs(hi))
    raise ValueError(f"unknown IR node {tag!r}")



# --------------------------------------------------------------------------- checks

_EXACT_BITS = (64, 256, 1024)


def _decide_exact(rel, left, right):
    (ll, lh), (rl, rh) = left, right
    if ll is None or rl is None:
        return None
    if rel in (">=", ">"):
        if (ll >= rh) if rel == ">=" else (ll > rh):
            return True
        if (lh < rl) if rel == ">=" else (lh <= rl):
            return False
    elif rel in ("<=", "<"):
        if (lh <= rl) if rel == "<=" else (lh < rl):
            return True
        if (ll > rh) if rel == "<=" else (ll >= rh):
            return False
    else:
        if ll == lh == rl == rh:
            return rel == "="
        if lh < rl or rh < ll:
            return rel == "!="
    return None


def _eval_exact(node, env, tie):
    """(verdict, lhs, rhs, premises held) at one point, in rational arithmetic; tie(fm, env)
    decides a relation between irrational values that the intervals cannot separate (None:
    undetermined)."""
    tag = node[0]
    if tag == "rel":
        _, rel, fm, il, ir = node
        for bits in _EXACT_BITS:
            left, right = exact_interval(il, env, bits), exact_interval(ir, env, bits)
            r = _decide_exact(rel, left, right)
            if r is not None:
                return r, left[0], right[0], True
        sign = tie(fm, env) if tie is not None and fm is not None else None
        if sign is None:
            return None, left[0], right[0], True
        ok = {"=": sign == 0, "!=": sign != 0, "<": sign < 0, "<=": sign <= 0,
              ">": sign > 0, ">=": sign >= 0}[rel]
        return ok, left[0], right[0], True
    if tag == "imp":
        prem = [_eval_exact(p, env, tie)[0] for p in node[1]]
        c = _eval_exact(node[2], env, tie)
        if any(p is False for p in prem):
            return True, c[1], c[2], False
        if all(p is True for p in prem):
            return c[0], c[1], c[2], True
        return (True if c[0] is True else None), c[1], c[2], False
    ds = [_eval_exact(d, env, tie) for d in node[1]]
    if any(d[0] is True for d in ds):
        return True, ds[0][1], ds[0][2], True
    if all(d[0] is False for d in ds):
        return False, ds[0][1], ds[0][2], True
    return None, ds[0][1], ds[0][2], True


@dataclass(frozen=True, eq=False)  # eq=False: a check is its own key (hashed by identity)
class Check:
    """A compiled formula: which slots it reads, where it is evaluated, its IR tree, and what a
    report needs of the formula: the relation its lhs and rhs belong to, whether it is a vector
    definition (w[k+1] = w[k] + y*x), whether it bounds the number of updates (k <= e)."""

    slots: frozenset
    where: str  # 'constant', 'example', 'state' or 'update'
    tree: tuple = field(repr=False)
    relation: str = ">="
    vector_eq: bool = False
    bounds_k: bool = False
    formula: object = field(default=None, repr=False)  # the kernel formula, when compiled here
    tie: object = field(default=None, repr=False)  # decides an irrational tie (needs formula)

    def evaluate(self, env: dict, shape) -> Verdict:
        """Decide the formula at every point of env (slot -> (values, error bounds))."""
        length = int(np.prod(shape))
        return Program((self,)).judge(env, length).verdict(self)

    def evaluate_exact(self, env: dict):
        """(verdict, lhs, rhs, premises held) at one point; env: slot -> Fraction/('sqrt', q)."""
        return _eval_exact(self.tree, env, self.tie)


def _slot_atoms(slot: str) -> list:
    return slot[1:-1].split(", ") if slot.startswith("<") else []


def slot_names(slots) -> set:
    """The setting names behind slots: '<x, w[k]>' -> {'x', 'w'}, 'TD[k]' -> {'TD'}."""
    out = set()
    for s in slots:
        for part in (_slot_atoms(s) or [s]):
            out.add(part.split("[")[0])
    return out


def classify(slots) -> str:
    """Where a formula reading these slots is evaluated (see the module docstring)."""
    per_update = "y" in slots or "d" in slots or "m[k]" in slots or \
        "vote_counts[k]" in slots or any(a in ("x", "u") for s in slots for a in _slot_atoms(s))
    next_index = any("k+1" in s or "t+1" in s for s in slots)
    state = any(s in STATE_SLOTS for s in slots) or any("w[k]" in s or "[t]" in s or s == "t"
                                                        for s in slots)
    if next_index or (per_update and state):
        return "update"
    if per_update:
        return "example"
    if state:
        return "state"
    return "constant"



class SameObjects:
    """A dict key for a sequence of objects, compared by identity: the lemma objects of
    load_lemmas are unhashable (they hold dicts), and equal lemmas would cost a deep comparison
    per run.  The key holds the objects, so their identities stay theirs while it lives."""

    __slots__ = ("objects", "_hash")

    def __init__(self, objects):
        self.objects = tuple(objects)
        self._hash = hash(tuple(map(id, self.objects)))

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other) -> bool:
        return isinstance(other, SameObjects) and len(self.objects) == len(other.objects) and \
            all(a is b for a, b in zip(self.objects, other.objects))



# The beginnings of the reasons other_run gives (the command line counts them in one line).
BATCH_ONLY = "about the batch perceptron only"
SINGLE_ONLY = "about one example per update"
VOTED_ONLY = "about the voted perceptron only"
AVERAGED_ONLY = "about the averaged perceptron only"
NOT_AT_VISITS = "not about an averaged run's visits"


def other_run(compiled, engine: str) -> str | None:
    """Why a compiled lemma cannot be monitored on this kind of run, or None if it can."""
    check, hyps = compiled
    names = slot_names(check.slots).union(*(slot_names(h.slots) for _, h in hyps))
    averaged = sorted(names & AVERAGED_NAMES)
    if averaged and engine != "averaged":
        return (f"{AVERAGED_ONLY}: it mentions {', '.join(averaged)}, quantities of the visits "
                f"of an averaged run (variant='averaged')")
    if engine == "averaged":  # the visits' monitor: the training run's lemmas are checked apart
        other = sorted(names - AVERAGED_NAMES - {"gamma", "R", "w_star"})
        if not averaged or other:
            return (f"{NOT_AT_VISITS}: it mentions "
                    f"{', '.join(other) or 'no quantity of the visits'}")
        return None
    voted = sorted(names & VOTED_NAMES)
    if voted and engine != "voted":
        return (f"{VOTED_ONLY}: it mentions {', '.join(voted)}, quantities of the vote "
                f"(variant='voted')")
    if engine == "batch":
        bad = sorted(names & SINGLE_EXAMPLE_NAMES)
        if bad:
            return (f"{SINGLE_ONLY}: it mentions {', '.join(bad)}, and a batch step has no "
                    f"single example")
        return None
    bad = sorted(names & BATCH_NAMES)
    if bad:
        return (f"{BATCH_ONLY}: it mentions {', '.join(bad)}, quantities of batch steps "
                f"(variant='batch')")
    return None


# ------------------------------------------------------------------ the monitor's record of a lemma

# Seals the records this process makes from verified lemmas (as novikoff.lemmas seals its own).
_SEAL_KEY = os.urandom(32)


@dataclass(frozen=True, eq=False)
class MonitoredLemma:
    """What the monitor needs of a lemma: where it comes from, and its statement and assumptions
    compiled for a run (``run``) and for judging a trace (``trace``: gated by the assumptions
    about the data only), each (Check, ((name, Check), ...)) or the reason it cannot be bound.

    ``verified`` holds only for a record sealed from a lemma the kernel verified (in this
    process, or as a sealed cache entry records): one built by hand is never verified."""

    name: str
    file: str
    line: int
    shown: str
    run: object
    trace: object
    # Why the lemma's assumptions do not describe the textbook rule from w[0] = 0 with step y*x
    # (None when they do): what an audit of such a trace skips (_compile.declared_rule_breaks).
    default_rule: str | None = None
    # The source lemma (LemmaInfo or Lemma) when compiled in this process, for what only its
    # formulas can decide (the declared rule of an audit); None for a record from the cache.
    source: object = field(default=None, repr=False)
    _seal: bytes = field(default=b"", init=False, repr=False)

    @property
    def verified(self) -> bool:
        return hmac.compare_digest(self._seal, _seal_of(self))

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}" if self.file else "<python>"


def _seal_of(rec: MonitoredLemma) -> bytes:
    about = repr((rec.name, rec.file, rec.line, rec.shown, id(rec.run), id(rec.trace),
                  rec.default_rule))
    return hmac.new(_SEAL_KEY, about.encode("utf-8"), hashlib.sha256).digest()


def sealed_verified(rec: MonitoredLemma) -> MonitoredLemma:
    """Mark a record verified: only for a record made from a kernel-verified lemma."""
    object.__setattr__(rec, "_seal", _seal_of(rec))
    return rec


# ------------------------------------------------------------------ records as JSON (the cache)

def _encode_node(node):
    tag = node[0]
    if tag == "const":
        return ["const", str(node[1])]
    if tag == "slot":
        return ["slot", node[1]]
    if tag in ("add", "mul", "max", "min"):
        return [tag, [_encode_node(a) for a in node[1]]]
    if tag in ("recip", "abs"):
        return [tag, _encode_node(node[1])]
    if tag in ("ipow", "sqrt"):
        return [tag, _encode_node(node[1]), node[2]]
    if tag == "rel":
        return ["rel", node[1], _encode_node(node[3]), _encode_node(node[4])]
    if tag == "imp":
        return ["imp", [_encode_node(p) for p in node[1]], _encode_node(node[2])]
    return ["or", [_encode_node(d) for d in node[1]]]


def _decode_node(node):
    tag = node[0]
    if tag == "const":
        return ("const", Fraction(node[1]))
    if tag == "slot":
        if not isinstance(node[1], str):
            raise ValueError("a slot is named by a string")
        return ("slot", node[1])
    if tag in ("add", "mul", "max", "min"):
        return (tag, tuple(_decode_node(a) for a in node[1]))
    if tag in ("recip", "abs"):
        return (tag, _decode_node(node[1]))
    if tag == "ipow":
        return (tag, _decode_node(node[1]), int(node[2]))
    if tag == "sqrt":
        return (tag, _decode_node(node[1]), bool(node[2]))
    if tag == "rel":
        if node[1] not in (">=", ">", "<=", "<", "=", "!="):
            raise ValueError(f"unknown relation {node[1]!r}")
        return ("rel", node[1], None, _decode_node(node[2]), _decode_node(node[3]))
    if tag == "imp":
        return ("imp", [_decode_node(p) for p in node[1]], _decode_node(node[2]))
    if tag == "or":
        return ("or", [_decode_node(d) for d in node[1]])
    raise ValueError(f"unknown IR node {tag!r}")


def _encode_check(c: Check) -> list:
    return [sorted(c.slots), c.where, _encode_node(c.tree), c.relation, c.vector_eq, c.bounds_k]


def _decode_check(data, interned: dict) -> Check:
    key = repr(data)  # equal checks are one object, as compile_formula's cache makes them
    if key not in interned:
        slots, where, tree, relation, vector_eq, bounds_k = data
        if where not in ("constant", "example", "state", "update"):
            raise ValueError(f"unknown place {where!r}")
        interned[key] = Check(frozenset(slots), where, _decode_node(tree), relation,
                              bool(vector_eq), bool(bounds_k))
    return interned[key]


def _encode_compiled(compiled):
    if isinstance(compiled, str):
        return compiled
    check, hyps = compiled
    return [_encode_check(check), [[name, _encode_check(h)] for name, h in hyps]]


def _decode_compiled(data, interned: dict):
    if isinstance(data, str):
        return data
    check, hyps = data
    return (_decode_check(check, interned),
            tuple((str(name), _decode_check(h, interned)) for name, h in hyps))


def encode_lemma(rec: MonitoredLemma) -> dict:
    return {"name": rec.name, "file": rec.file, "line": rec.line, "shown": rec.shown,
            "verified": rec.verified, "run": _encode_compiled(rec.run),
            "trace": _encode_compiled(rec.trace), "default_rule": rec.default_rule}


def decode_lemma(data: dict, interned: dict) -> MonitoredLemma:
    """A record from its JSON form; verified when the form says so (the caller trusts it only
    from a sealed cache entry)."""
    rec = MonitoredLemma(str(data["name"]), str(data["file"]), int(data["line"]),
                         str(data["shown"]), _decode_compiled(data["run"], interned),
                         _decode_compiled(data["trace"], interned),
                         None if data["default_rule"] is None else str(data["default_rule"]))
    return sealed_verified(rec) if data["verified"] is True else rec
