"""Failing cases saved losslessly (npz: float64 arrays bit for bit) and replayed."""

from __future__ import annotations

import os
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

__all__ = ["Case", "save_case", "load_case"]


@dataclass(frozen=True)
class Case:
    """One run: the data, the separator, the order of visits and the weights after each visit
    (batch: after each step, order empty; kernel: the dual counts, the separator's beta;
    averaged and voted: also the averages or the vote, ``extra``);
    ``td`` the TD the learner reported after each visit (None: it reported none); ``lemma``,
    ``visit`` and ``kind`` ("lemma", "td", "rule", "average" or "vote") the finding."""

    name: str
    variant: str
    X: np.ndarray
    y: np.ndarray
    w_star: np.ndarray
    gamma: Fraction
    order: np.ndarray
    W: np.ndarray
    lemma: str = ""
    visit: int = -1
    td: np.ndarray | None = None
    kind: str = "lemma"
    kernel: str = ""  # kernel runs: the declared kernel (W: the dual counts, w_star: beta)
    converged: bool = False  # batch runs: the learner stopped because it found no mistake
    # averaged and voted runs: "average", or "vectors" and "counts" (saved under these names,
    # those of the audit's trace file), and the convention the learner declared
    extra: dict | None = None
    convention: str = ""


# the arrays of every case; an extra array may not take one of these names
_FIELDS = ("X", "y", "w_star", "order", "w", "gamma", "gamma_exact", "gamma_hex", "name",
           "variant", "lemma", "visit", "kind", "kernel", "converged", "td", "extra_names",
           "convention")


def save_case(path, case: Case) -> str:
    """Write ``case`` to ``path`` (.npz); gamma is stored as an exact fraction and as float.hex,
    ``td`` (float64, lossless) only when the case has one, under the name ``novikoff audit``
    reads from a trace file."""
    g = Fraction(case.gamma)
    extra = {} if case.td is None else {"td": np.asarray(case.td, dtype=np.float64)}
    arrays = dict(case.extra or {})
    clash = sorted(set(arrays) & set(_FIELDS))
    if clash:
        raise ValueError(f"extra={sorted(arrays)!r}: {clash[0]!r} is a field of every case")
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    np.savez(path, X=case.X, y=case.y, w_star=case.w_star, order=case.order, w=case.W,
             gamma=np.array(float(g)), gamma_exact=np.array(f"{g.numerator}/{g.denominator}"),
             gamma_hex=np.array(float(g).hex()), name=np.array(case.name),
             variant=np.array(case.variant), lemma=np.array(case.lemma),
             visit=np.array(case.visit), kind=np.array(case.kind),
             kernel=np.array(case.kernel), converged=np.array(case.converged),
             extra_names=np.array(",".join(arrays)), convention=np.array(case.convention),
             **extra, **arrays)
    return str(path)


def load_case(path) -> Case:
    """Read a case written by ``save_case`` (files written before ``td`` and ``kind`` existed
    load with td=None and kind "lemma"; before ``extra`` and ``convention``, with None and
    "")."""
    with np.load(path, allow_pickle=False) as z:
        num, den = str(z["gamma_exact"]).split("/")
        names = str(z["extra_names"]).split(",") if "extra_names" in z.files else []
        extra = {k: z[k] for k in names if k} or None
        return Case(name=str(z["name"]), variant=str(z["variant"]), X=z["X"], y=z["y"],
                    w_star=z["w_star"], gamma=Fraction(int(num), int(den)), order=z["order"],
                    W=z["w"], lemma=str(z["lemma"]), visit=int(z["visit"]),
                    td=z["td"] if "td" in z.files else None,
                    kind=str(z["kind"]) if "kind" in z.files else "lemma",
                    kernel=str(z["kernel"]) if "kernel" in z.files else "",
                    converged=bool(z["converged"]) if "converged" in z.files else False,
                    extra=extra,
                    convention=str(z["convention"]) if "convention" in z.files else "")
