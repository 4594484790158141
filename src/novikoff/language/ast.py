"""The syntax tree of .proof files; every node carries its source position (line, column)."""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

__all__ = [
    "Pos", "Num", "Name", "Index", "BinOp", "Neg", "InnerE", "NormE", "Call", "Rel", "Connective",
    "Cite", "Step", "Chain", "Claim", "Hence", "Case", "Cases", "Proof", "Lemma", "Decl", "Define",
    "Assume", "Setting", "Import", "ProofFile",
]


@dataclass(frozen=True)
class Pos:
    line: int
    col: int


# ------------------------------------------------------------------ expressions

@dataclass(frozen=True)
class Num:
    value: Fraction
    pos: Pos


@dataclass(frozen=True)
class Name:
    id: str
    pos: Pos


@dataclass(frozen=True)
class Index:
    base: Name
    index: object
    pos: Pos


@dataclass(frozen=True)
class BinOp:
    op: str  # + - * / ^
    left: object
    right: object
    pos: Pos


@dataclass(frozen=True)
class Neg:
    operand: object
    pos: Pos


@dataclass(frozen=True)
class InnerE:
    left: object
    right: object
    pos: Pos


@dataclass(frozen=True)
class NormE:
    operand: object
    pos: Pos


@dataclass(frozen=True)
class Call:
    func: str  # sqrt abs max min floor ceil
    args: tuple
    pos: Pos


@dataclass(frozen=True)
class SumE:
    """sum(var < count, terms)."""

    var: "Name"
    count: object
    terms: object
    pos: Pos


@dataclass(frozen=True)
class Rel:
    op: str
    lhs: object
    rhs: object
    pos: Pos
    text: str = ""


@dataclass(frozen=True)
class Connective:
    """parts joined by one connective: 'and', 'or' (two or more parts), '=>', '<=>' (two)."""

    op: str
    parts: tuple
    pos: Pos
    text: str = ""


# ------------------------------------------------------------------ proofs

@dataclass(frozen=True)
class Cite:
    name: str
    args: tuple
    pos: Pos
    at: tuple | None = None  # NAME[k := e, a := f]: ((the symbol's Name, the expression), ...)


@dataclass
class Step:
    op: str
    rhs: object
    cites: list
    xfail: bool
    pos: Pos
    text: str


@dataclass
class Chain:
    name: str | None
    first: object
    steps: list
    pos: Pos


@dataclass
class Claim:
    """`[have NAME:] FORMULA [by CITES] [xfail]` for a formula with connectives."""

    name: str | None
    formula: Connective
    cites: list
    xfail: bool
    pos: Pos
    text: str


@dataclass
class Hence:
    formula: Rel
    cites: list
    xfail: bool
    pos: Pos
    text: str


@dataclass(frozen=True)
class Contradiction:
    """`contradiction by CITES`: the cited facts contradict each other, so the goal holds (in a
    case that cannot happen, or the assumed negation of a goal)."""

    cites: list
    xfail: bool
    pos: Pos
    text: str


@dataclass
class Case:
    name: str
    condition: Rel
    items: list
    pos: Pos


@dataclass
class Cases:
    cites: list
    branches: list
    pos: Pos
    text: str


@dataclass
class Proof:
    method: str  # 'direct' or 'induction'
    items: list = field(default_factory=list)  # direct
    var: Name | None = None
    base: list = field(default_factory=list)
    step: list = field(default_factory=list)
    pos: Pos = Pos(0, 0)


@dataclass
class Lemma:
    kind: str  # 'lemma' or 'theorem'
    name: str
    statement: Rel
    givens: list  # (name, Rel, Pos)
    proof: Proof | None
    setting: str
    pos: Pos
    error: object = None  # a ProofSyntaxError: the lemma could not be parsed (then no proof)
    stated: bool = True  # whether its statement and givens parsed (when error: only the proof
    # has it, and the lemma can be cited as not verified)


# ------------------------------------------------------------------ settings and files

@dataclass(frozen=True)
class Decl:
    kind: str  # vector, vector_sequence, real, real_sequence, label, nat
    name: str
    constraint: tuple | None  # (op, Num) e.g. ('>', 0)
    pos: Pos


@dataclass(frozen=True)
class Define:
    name: str
    body: object
    pos: Pos


@dataclass(frozen=True)
class Assume:
    name: str
    formula: Rel
    pos: Pos


@dataclass(frozen=True)
class Bind:
    """`bind theta[k+1] to weights[k]`: symbol[j + offset] stands for the run's quantity[j]
    (offset None: a symbol that is not a sequence)."""

    symbol: str
    offset: int | None
    quantity: str
    pos: Pos


@dataclass
class Setting:
    name: str
    decls: list
    per_update: list  # (name, Pos)
    defines: list
    assumptions: list
    pos: Pos
    binds: list = field(default_factory=list)


@dataclass(frozen=True)
class Import:
    module: str  # leading dots for parents, like Python
    names: tuple  # (name, Pos)
    pos: Pos


@dataclass(frozen=True)
class RunClaim:
    """`claim NAME: refuted by run PATH`: a claim about what an algorithm does, refuted by the
    witness run saved at PATH (relative to the .proof file)."""

    name: str
    path: str
    pos: Pos


@dataclass
class ProofFile:
    path: str
    imports: list
    settings: list
    lemmas: list
    claims: list = field(default_factory=list)
