"""Elaborate syntax into kernel terms: scopes, types (scalar or vector), positioned errors."""

from __future__ import annotations

from dataclasses import dataclass, field

import sympy as sp

from ..errors import ProofSyntaxError
from ..kernel import Relation, Signature, Vec, VectorEq, ip, norm
from . import ast as A
from .lexer import KEYWORDS

__all__ = ["Scope", "elaborate_setting", "Typed"]

KINDS = ("vector", "vector_sequence", "real", "real_sequence", "label", "nat")
RESERVED = KEYWORDS | {"sqrt", "abs", "max", "min", "cauchy_schwarz", "triangle", "sq_nonneg",
                       "sqrt_mono", "norm_nonneg"}


@dataclass(frozen=True)
class Typed:
    """An elaborated expression: a scalar SymPy term or a vector (Vec)."""

    kind: str  # 'scalar' or 'vector'
    value: object
    literal_zero: bool = False


@dataclass
class Scope:
    """A setting, elaborated: symbol kinds, definitions, assumptions, the kernel signature."""

    name: str
    path: str
    kinds: dict = field(default_factory=dict)  # name -> kind
    positions: dict = field(default_factory=dict)
    defines: dict = field(default_factory=dict)  # name -> Typed
    assumptions: dict = field(default_factory=dict)  # name -> kernel formula
    assumption_pos: dict = field(default_factory=dict)
    per_update: set = field(default_factory=set)
    signature: Signature | None = None
    vectors_seen: list = field(default_factory=list)  # Vecs under <,> and || || of the last term
    lines: dict = field(default_factory=dict)  # line number -> text, for error messages

    # ------------------------------------------------------------------ errors

    def error(self, message: str, pos: A.Pos) -> ProofSyntaxError:
        return ProofSyntaxError(message, self.path, pos.line, pos.col,
                                self.lines.get(pos.line, ""))

    # ------------------------------------------------------------------ symbols

    def symbol(self, name: str) -> sp.Basic:
        kind = self.kinds[name]
        if kind in ("vector",):
            return sp.Symbol(name)
        if kind == "vector_sequence":
            return sp.Function(name)
        if kind == "real_sequence":
            return sp.Function(name, real=True)
        return sp.Symbol(name, real=True)

    def allowed_hypotheses(self) -> frozenset:
        return frozenset(self.assumptions.values()) | frozenset(self.signature.declarations)

    # ------------------------------------------------------------------ expressions

    def expr(self, node) -> Typed:
        if isinstance(node, A.Num):
            return Typed("scalar", sp.Rational(node.value.numerator, node.value.denominator),
                         literal_zero=node.value == 0)
        if isinstance(node, A.Name):
            return self._name(node)
        if isinstance(node, A.Index):
            return self._index(node)
        if isinstance(node, A.Neg):
            t = self.expr(node.operand)
            return Typed(t.kind, -t.value if t.kind == "scalar" else -t.value)
        if isinstance(node, A.BinOp):
            return self._binop(node)
        if isinstance(node, A.InnerE):
            u = self.vector(node.left, "the inner product <u, v> takes two vectors")
            v = self.vector(node.right, "the inner product <u, v> takes two vectors")
            self.vectors_seen += [u, v]
            return Typed("scalar", ip(u, v))
        if isinstance(node, A.NormE):
            v = self.vector(node.operand, "||v|| takes a vector (write abs(e) for a scalar)")
            self.vectors_seen.append(v)
            return Typed("scalar", norm(v))
        if isinstance(node, A.Call):
            args = [self.scalar(a, f"{node.func} takes scalars") for a in node.args]
            fn = {"sqrt": sp.sqrt, "abs": sp.Abs, "max": sp.Max, "min": sp.Min}[node.func]
            return Typed("scalar", fn(*args))
        raise self.error(f"cannot elaborate {type(node).__name__}", getattr(node, "pos",
                                                                             A.Pos(0, 0)))

    def scalar(self, node, message: str) -> sp.Expr:
        t = self.expr(node)
        if t.kind != "scalar":
            raise self.error(f"{message}, but this is a vector", node.pos)
        return t.value

    def vector(self, node, message: str) -> Vec:
        t = self.expr(node)
        if t.kind == "vector":
            return t.value
        if t.literal_zero:
            return Vec.zero()
        raise self.error(f"{message}, but this is a scalar", node.pos)

    def _name(self, node: A.Name) -> Typed:
        if node.id in self.defines:
            return self.defines[node.id]
        if node.id not in self.kinds:
            raise self.error(f"unknown name {node.id!r}", node.pos)
        kind = self.kinds[node.id]
        if kind.endswith("sequence"):
            raise self.error(f"{node.id} is a sequence: write {node.id}[k]", node.pos)
        if kind == "vector":
            return Typed("vector", Vec.atom(self.symbol(node.id)))
        return Typed("scalar", self.symbol(node.id))

    def _index(self, node: A.Index) -> Typed:
        name = node.base.id
        if name not in self.kinds:
            raise self.error(f"unknown name {name!r}", node.base.pos)
        kind = self.kinds[name]
        if not kind.endswith("sequence"):
            raise self.error(f"{name} is a {kind}, not a sequence: it takes no index",
                             node.pos)
        index = self.scalar(node.index, "an index is a natural number")
        for s in index.free_symbols:
            if self.kinds.get(str(s)) != "nat":
                raise self.error(f"an index may mention only nat variables, not {s}",
                                 node.index.pos)
        if not _is_natural_index(index):
            raise self.error("an index is a natural number such as 0, k or k+1",
                             node.index.pos)
        element = self.symbol(name)(index)
        if kind == "vector_sequence":
            return Typed("vector", Vec.atom(element))
        return Typed("scalar", element)

    def _binop(self, node: A.BinOp) -> Typed:
        op = node.op
        left, right = self.expr(node.left), self.expr(node.right)
        if op in "+-":
            if left.kind == right.kind:
                if left.kind == "scalar":
                    return Typed("scalar", left.value + right.value if op == "+"
                                 else left.value - right.value)
                return Typed("vector", left.value + right.value if op == "+"
                             else left.value - right.value)
            # 0 is also the zero vector.
            if left.literal_zero or right.literal_zero:
                v = left.value if left.kind == "vector" else right.value
                if op == "-" and left.literal_zero:
                    v = -v
                return Typed("vector", v)
            raise self.error(f"cannot {'add' if op == '+' else 'subtract'} a vector and a "
                             f"scalar", node.pos)
        if op == "*":
            if left.kind == "scalar" and right.kind == "scalar":
                return Typed("scalar", left.value * right.value)
            if left.kind == "vector" and right.kind == "vector":
                raise self.error("cannot multiply two vectors: write <u, v> for the inner "
                                 "product", node.pos)
            s, v = (left, right) if left.kind == "scalar" else (right, left)
            return Typed("vector", v.value.scale(s.value))
        if op == "/":
            if right.kind == "vector":
                raise self.error("cannot divide by a vector", node.pos)
            if left.kind == "vector":
                return Typed("vector", left.value.scale(1 / right.value))
            return Typed("scalar", left.value / right.value)
        if op == "^":
            if left.kind == "vector":
                raise self.error("cannot raise a vector to a power: write ||v||^2 or "
                                 "<v, v>", node.pos)
            if right.kind != "scalar" or not right.value.is_Rational:
                raise self.error("an exponent is a number", node.right.pos)
            if abs(right.value) > 16 or (not right.value.is_Integer and right.value.q != 2):
                raise self.error("exponents are integers up to 16 or halves", node.right.pos)
            return Typed("scalar", left.value ** right.value)
        raise self.error(f"unknown operator {op!r}", node.pos)

    # ------------------------------------------------------------------ formulas

    def relation(self, rel: A.Rel) -> Relation:
        """A scalar relation (what a step, statement or condition is)."""
        lhs = self.scalar(rel.lhs, "a step relates scalars")
        rhs = self.scalar(rel.rhs, "a step relates scalars")
        return Relation(rel.op, lhs, rhs)

    def formula(self, rel: A.Rel):
        """A relation, or a vector definition (assumptions only)."""
        left, right = self.expr(rel.lhs), self.expr(rel.rhs)
        if left.kind == "scalar" and right.kind == "scalar":
            return Relation(rel.op, left.value, right.value)
        if rel.op != "=":
            raise self.error(f"vectors can only be equated, not compared with {rel.op!r}",
                             rel.pos)
        lv = left.value if left.kind == "vector" else self.vector(rel.lhs, "")
        rv = right.value if right.kind == "vector" else self.vector(rel.rhs, "")
        for atom_side, other in ((lv, rv), (rv, lv)):
            if len(atom_side.terms) == 1 and atom_side.terms[0][1] == 1:
                atom = atom_side.terms[0][0]
                if atom not in other.atoms():
                    return VectorEq(atom, other)
        raise self.error("a vector equation must define a vector: write 'v = expression' "
                         "with a vector or sequence element alone on one side", rel.pos)


def _is_natural_index(index: sp.Expr) -> bool:
    """An integer polynomial in nat variables (k, k+1, 2*k), or a non-negative integer."""
    if not index.free_symbols:
        return bool(index.is_Integer and index >= 0)
    try:
        poly = sp.Poly(index, *sorted(index.free_symbols, key=str))
    except sp.PolynomialError:
        return False
    return all(c.is_Integer for c in poly.coeffs())


def elaborate_setting(node: A.Setting, path: str, lines: dict) -> Scope:
    """Check a setting's declarations and elaborate its definitions and assumptions."""
    scope = Scope(node.name, path, lines=lines)
    declarations = []
    labels, nats = set(), set()
    for decl in node.decls:
        if decl.name in RESERVED:
            raise scope.error(f"{decl.name!r} is a reserved word", decl.pos)
        if decl.name in scope.kinds:
            first = scope.positions[decl.name]
            raise scope.error(f"{decl.name} is declared twice (first at line {first.line})",
                              decl.pos)
        scope.kinds[decl.name] = decl.kind
        scope.positions[decl.name] = decl.pos
        sym = scope.symbol(decl.name)
        if decl.kind == "label":
            labels.add(sym)
            declarations.append(Relation("=", sym ** 2, sp.Integer(1)))
        elif decl.kind == "nat":
            nats.add(sym)
            declarations.append(Relation(">=", sym, sp.Integer(0)))
        if decl.constraint is not None:
            declarations.append(Relation(decl.constraint[0], sym, sp.Integer(0)))
    for name, pos in node.per_update:
        if name not in scope.kinds:
            raise scope.error(f"unknown name {name!r} in 'per update'", pos)
        if scope.kinds[name] not in ("vector", "real", "label"):
            raise scope.error(f"only vectors, reals and labels can be per update, not a "
                              f"{scope.kinds[name].replace('_', ' ')}", pos)
        scope.per_update.add(scope.symbol(name))
    scope.signature = Signature(tuple(declarations), frozenset(labels), frozenset(nats),
                                frozenset(scope.per_update))
    for define in node.defines:
        if define.name in scope.kinds or define.name in scope.defines:
            raise scope.error(f"{define.name} is already declared", define.pos)
        if define.name in RESERVED:
            raise scope.error(f"{define.name!r} is a reserved word", define.pos)
        scope.defines[define.name] = scope.expr(define.body)
    for assumption in node.assumptions:
        if assumption.name in scope.assumptions:
            raise scope.error(f"assumption {assumption.name} is stated twice", assumption.pos)
        if assumption.name in RESERVED or assumption.name in scope.kinds:
            raise scope.error(f"{assumption.name!r} is already a name in this setting",
                              assumption.pos)
        scope.assumptions[assumption.name] = scope.formula(assumption.formula)
        scope.assumption_pos[assumption.name] = assumption.pos
    return scope
