"""The trusted kernel: terms, formulas, decision procedures and the rules that make Theorems.

Nothing outside this package can create a Theorem; everything else in novikoff is an untrusted
helper whose output passes through these rules.
"""

from .formulas import RELATIONS, Disjunction, Implication, Relation, VectorEq, compose_relations
from .logic import (Decision, Signature, Supposition, Theorem, accepts, assume, cases, cauchy_schwarz,
                    conclusion_matches, decide, discharge, domain_obligations, induction,
                    nat_cases, triangle, trans)
from .solver import Verdict, atom_name, entails
from .terms import Inner, Norm, Vec, ip, label_reduce, norm, normal_form, same_term

__all__ = [
    "RELATIONS", "Disjunction", "Implication", "Relation", "VectorEq", "compose_relations",
    "Decision", "Signature", "Supposition", "Theorem", "accepts", "assume", "cases", "cauchy_schwarz",
    "conclusion_matches", "decide", "discharge", "domain_obligations", "induction", "nat_cases",
    "triangle",
    "trans", "Verdict", "atom_name", "entails", "Inner", "Norm", "Vec", "ip", "label_reduce",
    "norm", "normal_form", "same_term",
]
