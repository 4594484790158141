"""Failing cases saved losslessly (npz: float64 arrays bit for bit) and replayed."""

from __future__ import annotations

import os
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

__all__ = ["Case", "save_case", "load_case"]


@dataclass(frozen=True)
class Case:
    """One run: the data, the separator, the order of visits and the weights after each visit."""

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


def save_case(path, case: Case) -> str:
    """Write ``case`` to ``path`` (.npz); gamma is stored as an exact fraction and as float.hex."""
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    g = Fraction(case.gamma)
    np.savez(path, X=case.X, y=case.y, w_star=case.w_star, order=case.order, w=case.W,
             gamma=np.array(float(g)), gamma_exact=np.array(f"{g.numerator}/{g.denominator}"),
             gamma_hex=np.array(float(g).hex()), name=np.array(case.name),
             variant=np.array(case.variant), lemma=np.array(case.lemma),
             visit=np.array(case.visit))
    return str(path)


def load_case(path) -> Case:
    """Read a case written by ``save_case``."""
    with np.load(path, allow_pickle=False) as z:
        num, den = str(z["gamma_exact"]).split("/")
        return Case(name=str(z["name"]), variant=str(z["variant"]), X=z["X"], y=z["y"],
                    w_star=z["w_star"], gamma=Fraction(int(num), int(den)), order=z["order"],
                    W=z["w"], lemma=str(z["lemma"]), visit=int(z["visit"]))
