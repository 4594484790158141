"""Elaborate syntax into kernel terms: scopes, types (scalar or vector), positioned errors."""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

from ..errors import KernelError, ProofSyntaxError
from ..kernel import (Conjunction, Disjunction, Equivalence, Implication, Setting,
                      make_setting)
from ..kernel import written as W
from ..quantities import Binding, check_binding
from . import ast as A
from .lexer import KEYWORDS

__all__ = ["Scope", "elaborate_setting", "read_setting", "Typed", "BUILTIN_FACTS"]

KINDS = ("vector", "vector_sequence", "real", "real_sequence", "label", "label01", "nat",
         "label_sequence", "label01_sequence")
# Names a proof cites without declaring them: a hypothesis may not take one of these names.
BUILTIN_FACTS = frozenset({"algebra", "sq_nonneg", "sqrt_mono", "norm_nonneg", "cauchy_schwarz",
                           "triangle", "nat_cases", "ih"})
RESERVED = KEYWORDS | BUILTIN_FACTS | {"sqrt", "abs", "max", "min", "floor", "ceil", "sum"}


@dataclass(frozen=True)
class Typed:
    """An elaborated expression: a written kernel term, scalar or vector."""

    kind: str  # 'scalar' or 'vector'
    value: object  # a term of kernel.written
    literal_zero: bool = False


@dataclass
class Scope:
    """A setting, elaborated: symbol kinds, definitions, assumptions, the kernel's Setting."""

    name: str
    path: str
    kinds: dict = field(default_factory=dict)  # name -> kind
    positions: dict = field(default_factory=dict)
    defines: dict = field(default_factory=dict)  # name -> Typed
    assumptions: dict = field(default_factory=dict)  # name -> kernel formula
    assumption_pos: dict = field(default_factory=dict)
    per_update: set = field(default_factory=set)
    bindings: dict = field(default_factory=dict)  # name -> quantities.Binding (`bind` lines)
    setting: Setting | None = None
    vectors_seen: list = field(default_factory=list)  # Vecs under <,> and || || of the last term
    sum_index: str | None = None  # inside the terms of a sum: the name of its index
    lines: dict = field(default_factory=dict)  # line number -> text, for error messages

    # ------------------------------------------------------------------ errors

    def error(self, message: str, pos: A.Pos) -> ProofSyntaxError:
        return ProofSyntaxError(message, self.path, pos.line, pos.col,
                                self.lines.get(pos.line, ""))

    # ------------------------------------------------------------------ symbols

    def symbol(self, name: str):
        return W.symbol(name, self.kinds[name])

    def allowed_hypotheses(self) -> frozenset:
        return self.setting.allowed()

    # ------------------------------------------------------------------ expressions

    def expr(self, node) -> Typed:
        if isinstance(node, A.Num):
            return Typed("scalar", W.Num(node.value), literal_zero=node.value == 0)
        if isinstance(node, A.Name):
            return self._name(node)
        if isinstance(node, A.Index):
            return self._index(node)
        if isinstance(node, A.Neg):
            t = self.expr(node.operand)
            return Typed(t.kind, W.Neg(t.value))
        if isinstance(node, A.BinOp):
            return self._binop(node)
        if isinstance(node, A.InnerE):
            u = self.vector(node.left, "the inner product <u, v> takes two vectors")
            v = self.vector(node.right, "the inner product <u, v> takes two vectors")
            self.vectors_seen += [self.meaning(u, node.left.pos), self.meaning(v, node.right.pos)]
            return Typed("scalar", W.InnerOf(u, v))
        if isinstance(node, A.NormE):
            v = self.vector(node.operand, "||v|| takes a vector (write abs(e) for a scalar)")
            self.vectors_seen.append(self.meaning(v, node.operand.pos))
            return Typed("scalar", W.NormOf(v))
        if isinstance(node, A.SumE):
            return self._sum(node)
        if isinstance(node, A.Call):
            args = [self.scalar(a, f"{node.func} takes scalars") for a in node.args]
            fn = {"sqrt": W.Sqrt, "abs": W.Abs, "max": W.Max, "min": W.Min, "floor": W.Floor,
                  "ceil": W.Ceil}[node.func]
            return Typed("scalar", fn(*args))
        raise self.error(f"cannot elaborate {type(node).__name__}", getattr(node, "pos",
                                                                             A.Pos(0, 0)))

    def meaning(self, term, pos: A.Pos):
        """The kernel's reading of a written term (a SymPy scalar or a Vec)."""
        try:
            return W.interpret(term).value
        except KernelError as exc:
            raise self.error(str(exc), pos) from None

    def scalar(self, node, message: str):
        t = self.expr(node)
        if t.kind != "scalar":
            raise self.error(f"{message}, but this is a vector", node.pos)
        return t.value

    def vector(self, node, message: str):
        t = self.expr(node)
        if t.kind == "vector":
            return t.value
        if t.literal_zero:
            return W.ZeroVector()
        raise self.error(f"{message}, but this is a scalar", node.pos)

    def _sum(self, node: A.SumE) -> Typed:
        name = node.var.id
        if self.sum_index is not None:
            raise self.error("a sum inside the terms of a sum is not supported", node.pos)
        # A nat's name may be reused for the index, as notes write sum_{t < T} with t the
        # iteration: inside the terms it is the index (the count still reads the nat).
        if (name in self.kinds and self.kinds[name] != "nat") or name in self.defines \
                or name in RESERVED:
            raise self.error(f"{name} is already a name here: give the sum's index a new name",
                             node.var.pos)
        count = self.scalar(node.count, "the number of terms of a sum is a natural number")
        for s in self.meaning(count, node.count.pos).free_symbols:
            if self.kinds.get(str(s)) != "nat":
                raise self.error(f"the number of terms of a sum may mention only nat "
                                 f"variables, not {s}", node.count.pos)
        self.sum_index = name
        seen = list(self.vectors_seen)
        try:
            terms = self.expr(node.terms)
        finally:
            self.sum_index = None
            self.vectors_seen = seen  # a sum's vectors depend on its index: no named fact
        total = W.SumOf(count, terms.value)
        self.meaning(total, node.pos)  # the kernel's conditions on the terms
        return Typed(terms.kind, total)

    def _per_update_in(self, typed: Typed, pos: A.Pos) -> bool:
        value = self.meaning(typed.value, pos)
        if hasattr(value, "terms"):  # a vector: its atoms and coefficients
            exprs = [e for atom, c in value.terms for e in (atom, c)]
        else:
            exprs = [value]
        return any(str(s) in self.per_update for e in exprs for s in e.free_symbols)

    def _name(self, node: A.Name) -> Typed:
        if node.id == self.sum_index:
            return Typed("scalar", W.Sym(node.id, "bound"))
        if self.sum_index is not None and node.id in self.per_update:
            raise self.error(f"{node.id} is declared per update: it is update k's, the same in "
                             f"every term of the sum; to sum over examples, declare a sequence "
                             f"and write {node.id}[{self.sum_index}]", node.pos)
        if node.id in self.defines:
            defined = self.defines[node.id]
            if self.sum_index is not None and self._per_update_in(defined, node.pos):
                raise self.error(f"{node.id} is defined with a symbol declared per update: it "
                                 f"is update k's, the same in every term of the sum", node.pos)
            return defined
        if node.id not in self.kinds:
            raise self.error(f"unknown name {node.id!r}", node.pos)
        kind = self.kinds[node.id]
        if kind.endswith("sequence"):
            raise self.error(f"{node.id} is a sequence: write {node.id}[k]", node.pos)
        return Typed("vector" if kind == "vector" else "scalar", W.Sym(node.id, kind))

    def _index(self, node: A.Index) -> Typed:
        name = node.base.id
        if name not in self.kinds:
            raise self.error(f"unknown name {name!r}", node.base.pos)
        kind = self.kinds[name]
        if not kind.endswith("sequence"):
            raise self.error(f"{name} is a {kind}, not a sequence: it takes no index",
                             node.pos)
        index = self.scalar(node.index, "an index is a natural number")
        value = self.meaning(index, node.index.pos)
        for s in value.free_symbols - {W.BOUND}:  # the index of a sum is a nat too
            if self.kinds.get(str(s)) != "nat":
                raise self.error(f"an index may mention only nat variables, not {s}",
                                 node.index.pos)
        element = W.Elem(name, kind, index)
        self.meaning(element, node.index.pos)  # an integer polynomial in nats
        return Typed("vector" if kind == "vector_sequence" else "scalar", element)

    def _binop(self, node: A.BinOp) -> Typed:
        op = node.op
        left, right = self.expr(node.left), self.expr(node.right)
        if op in "+-":
            make = W.Add if op == "+" else W.Sub
            if left.kind == right.kind:
                return Typed(left.kind, make(left.value, right.value))
            # 0 is also the zero vector.
            if left.literal_zero or right.literal_zero:
                lv = W.ZeroVector() if left.kind == "scalar" else left.value
                rv = W.ZeroVector() if right.kind == "scalar" else right.value
                return Typed("vector", make(lv, rv))
            raise self.error(f"cannot {'add' if op == '+' else 'subtract'} a vector and a "
                             f"scalar", node.pos)
        if op == "*":
            if left.kind == "vector" and right.kind == "vector":
                raise self.error("cannot multiply two vectors: write <u, v> for the inner "
                                 "product", node.pos)
            kind = "scalar" if left.kind == right.kind == "scalar" else "vector"
            return Typed(kind, W.Mul(left.value, right.value))
        if op == "/":
            if right.kind == "vector":
                raise self.error("cannot divide by a vector", node.pos)
            return Typed(left.kind, W.Div(left.value, right.value))
        if op == "^":
            if left.kind == "vector":
                raise self.error("cannot raise a vector to a power: write ||v||^2 or "
                                 "<v, v>", node.pos)
            exponent = self._exponent(node.right)
            if abs(exponent) > 16 or exponent.denominator not in (1, 2):
                raise self.error("exponents are integers up to 16 or halves", node.right.pos)
            return Typed("scalar", W.Pow(left.value, exponent))
        raise self.error(f"unknown operator {op!r}", node.pos)

    def _exponent(self, node) -> Fraction:
        """An exponent is a number as written: 2, -1, 1/2, (3/2)."""
        if isinstance(node, A.Num):
            return node.value
        if isinstance(node, A.Neg):
            return -self._exponent(node.operand)
        if isinstance(node, A.BinOp) and node.op in "+-*/":
            a, b = self._exponent(node.left), self._exponent(node.right)
            if node.op == "/" and b == 0:
                raise self.error("an exponent divides by zero", node.pos)
            return {"+": a + b, "-": a - b, "*": a * b}[node.op] if node.op != "/" else a / b
        raise self.error("an exponent is a number", node.pos)

    # ------------------------------------------------------------------ formulas

    def relation(self, rel: A.Rel):
        """A scalar relation (what a step, statement or condition is)."""
        lhs = self.scalar(rel.lhs, "a step relates scalars")
        rhs = self.scalar(rel.rhs, "a step relates scalars")
        return self.written_formula(rel.op, lhs, rhs, rel.pos)

    def written_formula(self, op: str, lhs, rhs, pos: A.Pos):
        """The kernel's formula for two written terms, its domain collected as written."""
        try:
            return W.formula_of(op, lhs, rhs)
        except KernelError as exc:
            raise self.error(str(exc), pos) from None

    def statement(self, node):
        """A formula: a relation, relations joined by and, or, =>, <=>, or (alone) a vector
        equation `u = v` with a vector or sequence element alone on one side."""
        if isinstance(node, A.Rel):
            if self.is_vector_equation(node):
                return self.formula(node)
            return self.relation(node)
        parts = tuple(self.statement(p) for p in node.parts)
        if node.op == "and":
            return Conjunction(parts)
        if node.op == "or":
            return Disjunction(parts)
        if node.op == "=>":
            return Implication((parts[0],), parts[1])
        return Equivalence(*parts)

    def is_vector_equation(self, rel: A.Rel) -> bool:
        """Whether a relation is `=` between vectors (then it is a vector equation)."""
        return rel.op == "=" and "vector" in (self.expr(rel.lhs).kind, self.expr(rel.rhs).kind)

    def formula(self, rel):
        """A statement, or a vector definition (assumptions and givens)."""
        if isinstance(rel, A.Connective):
            return self.statement(rel)
        left, right = self.expr(rel.lhs), self.expr(rel.rhs)
        if left.kind == "scalar" and right.kind == "scalar":
            return self.written_formula(rel.op, left.value, right.value, rel.pos)
        if rel.op != "=":
            raise self.error(f"vectors can only be equated, not compared with {rel.op!r}",
                             rel.pos)
        lv = left.value if left.kind == "vector" else self.vector(rel.lhs, "")
        rv = right.value if right.kind == "vector" else self.vector(rel.rhs, "")
        try:
            return W.formula_of("=", lv, rv)
        except KernelError:
            raise self.error("a vector equation must define a vector: write 'v = expression' "
                             "with a vector or sequence element alone on one side",
                             rel.pos) from None

    def zero_difference(self, rel: A.Rel):
        """||u - v||^2 = 0 for the vectors u = v: what a vector equation means, as a relation
        (for a line that need not define a vector: a link of a chain, never cited alone)."""
        lv, rv = self.vector(rel.lhs, ""), self.vector(rel.rhs, "")
        return self.written_formula("=", W.Pow(W.NormOf(W.Sub(lv, rv)), Fraction(2)),
                                    W.Num(Fraction(0)), rel.pos)


def _elaborate_bind(scope: Scope, bind: A.Bind) -> None:
    """A `bind` line names a declared symbol and a run quantity of a kind that fits it; the
    kernel never reads bindings (they only tell the runtime what to monitor)."""
    if bind.symbol not in scope.kinds:
        raise scope.error(f"unknown name {bind.symbol!r} in 'bind' (declare it first)", bind.pos)
    if bind.symbol in scope.bindings:
        raise scope.error(f"{bind.symbol} is bound twice", bind.pos)
    kind = scope.kinds[bind.symbol]
    binding = Binding(bind.symbol, bind.quantity, bind.offset or 0)
    why = check_binding(binding, kind)
    if why is None and (bind.offset is None) == kind.endswith("sequence"):
        why = (f"{bind.symbol} is a {kind.replace('_', ' ')}: bind it "
               + ("with an index, as in theta[k+1] to weights[k]" if bind.offset is None
                  else "without an index"))
    if why is not None:
        raise scope.error(why, bind.pos)
    scope.bindings[bind.symbol] = binding


def elaborate_setting(node: A.Setting, path: str, lines: dict, timeout_ms: int = 5000) -> Scope:
    """Check a setting's declarations, elaborate its definitions and assumptions, and have the
    kernel make (and check) the Setting."""
    scope, constraints = read_setting(node, path, lines)
    try:
        scope.setting = make_setting(node.name, scope.kinds, constraints, scope.per_update,
                                     scope.assumptions, timeout_ms)
    except KernelError as exc:
        raise scope.error(str(exc), node.pos) from None
    return scope


def read_setting(node: A.Setting, path: str, lines: dict) -> tuple:
    """(scope, sign constraints): a setting's declarations checked, its definitions and
    assumptions elaborated, without the kernel's Setting (scope.setting stays None).  Enough to
    read statements in it again; the kernel's checks of the setting are elaborate_setting's."""
    scope = Scope(node.name, path, lines=lines)
    constraints = {}
    for decl in node.decls:
        if decl.name in RESERVED:
            raise scope.error(f"{decl.name!r} is a reserved word", decl.pos)
        if decl.name in scope.kinds:
            first = scope.positions[decl.name]
            raise scope.error(f"{decl.name} is declared twice (first at line {first.line})",
                              decl.pos)
        scope.kinds[decl.name] = decl.kind
        scope.positions[decl.name] = decl.pos
        if decl.constraint is not None:
            constraints[decl.name] = decl.constraint
    for name, pos in node.per_update:
        if name not in scope.kinds:
            raise scope.error(f"unknown name {name!r} in 'per update'", pos)
        if scope.kinds[name] not in ("vector", "real", "label", "label01"):
            raise scope.error(f"only vectors, reals and labels can be per update, not a "
                              f"{scope.kinds[name].replace('_', ' ')}", pos)
        scope.per_update.add(name)
    for bind in node.binds:
        _elaborate_bind(scope, bind)
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
    return scope, constraints
