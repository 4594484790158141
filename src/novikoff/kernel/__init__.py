"""The trusted kernel: written terms, formulas, decision procedures, settings and theorems.

Nothing outside this package can create a Setting or a Theorem; everything else in novikoff is an
untrusted helper whose output passes through these rules.  docs/trust.md lists the trusted base.
"""

from . import written
from .formulas import (RELATIONS, Conjunction, Disjunction, Equivalence, Implication, Relation,
                       VectorEq, compose_relations)
from .logic import (Decision, absurd, Everywhere, Setting, Supposition, Theorem, accepts, assume, cases, certifies,
                    cauchy_schwarz, conclusion_matches, decide, describe_obligation, discharge, domain_obligations,
                    induction, instantiate, make_setting, told_for, nat_cases, rewrite_vectors, trans, triangle,
                    givens_consistency, specialize)
from .solver import Verdict, atom_name, entails
from .terms import Inner, Norm, Vec, ip, label_reduce, norm, normal_form, same_term

__all__ = [
    "written", "RELATIONS", "Conjunction", "Disjunction", "Equivalence", "Implication",
    "Relation", "VectorEq",
    "compose_relations", "Decision", "absurd", "Everywhere", "Setting", "Supposition", "Theorem", "accepts", "assume",
    "cases", "certifies", "cauchy_schwarz", "conclusion_matches", "decide", "describe_obligation", "discharge", "domain_obligations",
    "induction", "instantiate", "make_setting", "told_for", "givens_consistency", "specialize", "nat_cases", "rewrite_vectors", "trans", "triangle", "Verdict",
    "atom_name", "entails", "Inner", "Norm", "Vec", "ip", "label_reduce", "norm", "normal_form",
    "same_term",
]
