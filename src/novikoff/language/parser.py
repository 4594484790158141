"""Parse .proof text into a syntax tree.  Hand-written: no eval, no sympify, positions everywhere."""

from __future__ import annotations

import dataclasses
from fractions import Fraction

from ..errors import ProofSyntaxError
from . import ast as A
from .lexer import CONNECTIVES, KEYWORDS, RELATION_TOKENS, Line, Token, tokenize

__all__ = ["parse"]

FUNCTIONS = {"sqrt": 1, "abs": 1, "max": 2, "min": 2, "floor": 1, "ceil": 1}
DECL_KINDS = {"vector": "vector", "vectors": "vector", "real": "real", "reals": "real",
              "label": "label", "labels": "label", "nat": "nat", "nats": "nat",
              "sequence": "vector_sequence"}
CONSTRAINT_OPS = {">", ">=", "<", "<=", "!="}


class _Tokens:
    """A cursor over the tokens of one line (or of a few joined lines)."""

    def __init__(self, tokens, path: str, line: Line):
        self.toks = list(tokens)
        self.i = 0
        self.path = path
        self.line = line

    def peek(self, offset: int = 0) -> Token | None:
        j = self.i + offset
        return self.toks[j] if j < len(self.toks) else None

    def at(self, value: str, kind: str | None = None) -> bool:
        t = self.peek()
        return t is not None and t.value == value and (kind is None or t.kind == kind)

    def at_keyword(self, word: str) -> bool:
        return self.at(word, "NAME")

    def next(self) -> Token:
        t = self.peek()
        if t is None:
            self.error("unexpected end of line")
        self.i += 1
        return t

    def expect(self, value: str, what: str | None = None) -> Token:
        t = self.peek()
        if t is None or t.value != value:
            self.error(f"expected {what or repr(value)}", t)
        self.i += 1
        return t

    def name(self, what: str = "a name") -> Token:
        t = self.peek()
        if t is None or t.kind != "NAME" or t.value in KEYWORDS:
            self.error(f"expected {what}", t)
        self.i += 1
        return t

    def done(self) -> bool:
        return self.i >= len(self.toks)

    def end(self) -> None:
        if not self.done():
            t = self.peek()
            hint = ""
            if t.kind in ("NAME", "NUMBER") or t.value in ("(", "||", "⟨", "√"):
                hint = " (write '*' for a product: there is no implicit multiplication)"
            self.error(f"unexpected {t.value!r}{hint}", t)

    def error(self, message: str, tok: Token | None = None):
        if tok is None:
            tok = self.peek()
        if tok is None:
            line, col = self.line.number, len(self.line.text) + self.line.indent + 1
        else:
            line, col = tok.line, tok.col
        raise ProofSyntaxError(message, self.path, line, col, self.line.text)

    def pos(self) -> A.Pos:
        t = self.peek()
        if t is None:
            return A.Pos(self.line.number, self.line.indent + len(self.line.text) + 1)
        return A.Pos(t.line, t.col)


# --------------------------------------------------------------------------- expressions

_BINARY = {"+": 10, "-": 10, "*": 20, "/": 20}


def _expr(ts: _Tokens, min_bp: int = 0):
    left = _prefix(ts)
    while True:
        t = ts.peek()
        if t is None or t.kind != "OP":
            return left
        if t.value in _BINARY and _BINARY[t.value] > min_bp:
            ts.next()
            right = _expr(ts, _BINARY[t.value])
            left = A.BinOp(t.value, left, right, A.Pos(t.line, t.col))
            continue
        return left


def _prefix(ts: _Tokens):
    t = ts.peek()
    if t is not None and t.value == "-" and t.kind == "OP":
        ts.next()
        return A.Neg(_expr(ts, 20), A.Pos(t.line, t.col))
    if t is not None and t.value == "+" and t.kind == "OP":
        ts.next()
        return _expr(ts, 20)
    return _power(ts)


def _power(ts: _Tokens):
    base = _postfix(ts)
    t = ts.peek()
    if t is not None and t.kind == "OP" and t.value == "^":
        ts.next()
        exponent = _prefix_power(ts)
        return A.BinOp("^", base, exponent, A.Pos(t.line, t.col))
    return base


def _prefix_power(ts: _Tokens):
    t = ts.peek()
    if t is not None and t.value == "-" and t.kind == "OP":
        ts.next()
        return A.Neg(_prefix_power(ts), A.Pos(t.line, t.col))
    return _power(ts)


def _postfix(ts: _Tokens):
    node = _atom(ts)
    while True:
        t = ts.peek()
        if t is not None and t.kind == "OP" and t.value in ("²", "³"):
            ts.next()
            after = ts.peek()
            if after is not None and after.kind == "OP" and after.value in ("²", "³"):
                # A reader takes 2²² for 2^22; as powers of powers it would be (2^2)^2.
                ts.error(f"two superscripts in a row ({t.value}{after.value}): write the power "
                         f"with '^' (x^22), or (x{t.value}){after.value} for a power of a power",
                         after)
            exp = A.Num(Fraction(2 if t.value == "²" else 3), A.Pos(t.line, t.col))
            node = A.BinOp("^", node, exp, A.Pos(t.line, t.col))
            continue
        return node


def _sum(ts: _Tokens, pos: A.Pos):
    """sum(i < n, terms): the terms at i = 0, 1, ..., n-1, added."""
    ts.expect("(", "'('")
    var = ts.name("the index of the sum (sum(i < n, terms))")
    ts.expect("<", "'<' after the index of the sum (sum(i < n, terms))")
    count = _expr(ts)
    ts.expect(",", "',' between the number of terms and the terms of the sum")
    terms = _expr(ts)
    ts.expect(")", "')' closing the sum")
    return A.SumE(A.Name(var.value, A.Pos(var.line, var.col)), count, terms, pos)


def _atom(ts: _Tokens):
    t = ts.peek()
    if t is None:
        ts.error("expected an expression")
    pos = A.Pos(t.line, t.col)
    if t.kind == "NUMBER":
        ts.next()
        return A.Num(Fraction(t.value), pos)
    if t.kind == "NAME":
        if t.value in KEYWORDS:
            ts.error(f"expected an expression, found the keyword {t.value!r}", t)
        ts.next()
        if t.value == "sum" and ts.at("("):
            return _sum(ts, pos)
        if t.value in FUNCTIONS and ts.at("("):
            args = _arguments(ts)
            if len(args) != FUNCTIONS[t.value]:
                ts.error(f"{t.value} takes {FUNCTIONS[t.value]} argument(s), not {len(args)}", t)
            return A.Call(t.value, tuple(args), pos)
        name = A.Name(t.value, pos)
        if ts.at("["):
            ts.next()
            index = _expr(ts)
            ts.expect("]", "']'")
            return A.Index(name, index, pos)
        return name
    if t.value == "(":
        ts.next()
        inner = _expr(ts)
        ts.expect(")", "')'")
        return inner
    if t.value == "||":
        ts.next()
        inner = _expr(ts)
        ts.expect("||", "'||' closing the norm")
        return A.NormE(inner, pos)
    if t.value in ("<", "⟨"):
        ts.next()
        left = _expr(ts)
        ts.expect(",", "',' between the two vectors of an inner product")
        right = _expr(ts)
        closing = ">" if t.value == "<" else "⟩"
        nxt = ts.peek()
        if closing == ">" and nxt is not None and nxt.value == ">=":
            # '<u, v>=0' is '<u, v> = 0': split the token.
            ts.toks[ts.i] = Token("OP", "=", nxt.line, nxt.col + 1)
        else:
            ts.expect(closing, f"'{closing}' closing the inner product")
        return A.InnerE(left, right, pos)
    if t.value == "√":
        ts.next()
        return A.Call("sqrt", (_postfix(ts),), pos)
    ts.error(f"expected an expression, found {t.value!r}", t)


def _arguments(ts: _Tokens) -> tuple:
    """'(' expr {',' expr} ')'."""
    ts.expect("(", "'('")
    args = [_expr(ts)]
    while ts.at(","):
        ts.next()
        args.append(_expr(ts))
    ts.expect(")", "')'")
    return tuple(args)


def _relation(ts: _Tokens, text: str = "") -> A.Rel:
    pos = ts.pos()
    lhs = _expr(ts)
    t = ts.peek()
    if t is None or t.kind != "OP" or t.value not in RELATION_TOKENS:
        _expected_relation(ts, t)
    ts.next()
    rhs = _expr(ts)
    return A.Rel(t.value, lhs, rhs, pos, text)


def _formula(ts: _Tokens, text: str = ""):
    """A relation, or relations joined by `and`, `or`, `=>`, `<=>` (binding in that order,
    `and` tightest; `a => b => c` is `a => (b => c)`; parentheses group)."""
    pos = ts.pos()
    parts = [_joined(ts, "or", lambda: _joined(ts, "and", lambda: _formula_atom(ts)))]
    ops = []
    while (t := ts.peek()) is not None and t.value in ("=>", "<=>"):
        ts.next()
        ops.append(t)
        parts.append(_joined(ts, "or", lambda: _joined(ts, "and", lambda: _formula_atom(ts))))
    if len(ops) > 1 and any(t.value == "<=>" for t in ops):
        ts.error("write parentheses: this formula chains '<=>' with another '=>' or '<=>'",
                 ops[1])
    formula = parts[-1]
    for t, left in zip(reversed(ops), reversed(parts[:-1])):
        formula = A.Connective(t.value, (left, formula), pos)
    return dataclasses.replace(formula, text=text) if text else formula


def _joined(ts: _Tokens, op: str, part):
    pos = ts.pos()
    parts = [part()]
    while ts.at(op):
        ts.next()
        parts.append(part())
    return parts[0] if len(parts) == 1 else A.Connective(op, tuple(parts), pos)


def _formula_atom(ts: _Tokens):
    """A relation, or a parenthesised formula: `(a + b) <= c` is the first, `(a <= b)` the
    second.  When neither parses, the error is the one that got further."""
    start, tokens = ts.i, list(ts.toks)  # the parse may split a token: restore them
    try:
        return _relation(ts)
    except ProofSyntaxError as exc:
        if tokens[start:start + 1] == [] or tokens[start].value != "(":
            raise
        relation_error, relation_end = exc, ts.i
    ts.i, ts.toks = start, tokens
    try:
        ts.expect("(")
        inner = _formula(ts)
        ts.expect(")", "')' closing the formula")
        return inner
    except ProofSyntaxError:
        if ts.i >= relation_end:
            raise
        raise relation_error from None


def _expected_relation(ts: _Tokens, t: Token | None):
    hint = ""
    if t is not None and (t.kind in ("NAME", "NUMBER") or t.value in ("(", "||", "⟨", "√")):
        hint = " (write '*' for a product: there is no implicit multiplication)"
    ts.error(f"expected a relation (=, <=, >=, <, >, !=){hint}", t)


# --------------------------------------------------------------------------- files

class _Parser:
    def __init__(self, lines: list, path: str):
        self.lines = lines
        self.path = path
        self.i = 0

    def error(self, message: str, line: Line, col: int | None = None):
        raise ProofSyntaxError(message, self.path, line.number,
                               col if col is not None else line.indent + 1, line.text)

    def cursor(self, line: Line) -> _Tokens:
        self.readable(line)
        return _Tokens(line.tokens, self.path, line)

    def readable(self, line: Line) -> None:
        """Raise the lexer's error of a line that has one (at its position)."""
        bad = next((t for t in line.tokens if t.kind == "ERROR"), None)
        if bad is not None:
            raise ProofSyntaxError(bad.value, self.path, bad.line, bad.col, line.text)

    def peek(self) -> Line | None:
        return self.lines[self.i] if self.i < len(self.lines) else None

    def block(self, parent_indent: int) -> list:
        """The lines indented deeper than parent_indent, starting here."""
        out = []
        while self.i < len(self.lines) and self.lines[self.i].indent > parent_indent:
            out.append(self.lines[self.i])
            self.i += 1
        return out

    def parse_file(self) -> A.ProofFile:
        pf = A.ProofFile(self.path, [], [], [])
        setting_name = None
        while self.i < len(self.lines):
            line = self.lines[self.i]
            if line.indent != 0:
                self.error("unexpected indentation", line)
            head = line.tokens[0]
            if head.kind == "ERROR":
                self.readable(line)
            if head.value == "from" and head.kind == "NAME":
                pf.imports.append(self.parse_import(line))
                self.i += 1
            elif head.value == "setting" and head.kind == "NAME":
                setting = self.parse_setting(line)
                pf.settings.append(setting)
                setting_name = setting.name
            elif head.value in ("lemma", "theorem") and head.kind == "NAME":
                if setting_name is None:
                    self.error(f"a {head.value} needs a setting above it", line)
                pf.lemmas.append(self.parse_lemma_or_error(line, setting_name))
            elif head.value == "claim" and head.kind == "NAME":
                pf.claims.append(self.parse_claim(line))
                self.i += 1
            else:
                self.error("expected 'from', 'setting', 'lemma', 'theorem' or 'claim'", line,
                           head.col)
        return pf

    def parse_claim(self, line: Line) -> A.RunClaim:
        """claim NAME: refuted by run PATH (the path is the rest of the line, as written)."""
        ts = self.cursor(line)
        ts.next()
        name = ts.name("the claim's name")
        ts.expect(":", "':' after the claim's name")
        for word in ("refuted", "by", "run"):
            t = ts.peek()
            if t is None or t.value != word:
                self.error("expected 'refuted by run FILE' after the claim's name", line,
                           t.col if t is not None else None)
            ts.next()
        t = ts.peek()
        if t is None:
            self.error("expected the witness file after 'refuted by run'", line)
        path = line.text[t.col - 1:].strip()  # a top-level line: its text starts at column 1
        return A.RunClaim(name.value, path, A.Pos(name.line, name.col))

    def parse_import(self, line: Line) -> A.Import:
        ts = self.cursor(line)
        ts.next()
        module = ""
        while ts.at("."):
            module += "."
            ts.next()
        t = ts.next()
        if t.kind != "NAME":
            ts.error("expected a module name", t)
        module += t.value
        ts.expect("import", "'import'")
        names = [ts.name("a lemma name")]
        while ts.at(","):
            ts.next()
            names.append(ts.name("a lemma name"))
        ts.end()
        return A.Import(module, tuple((t.value, A.Pos(t.line, t.col)) for t in names),
                        A.Pos(line.number, line.indent + 1))

    def parse_setting(self, line: Line) -> A.Setting:
        ts = self.cursor(line)
        ts.next()
        name = ts.name("the setting's name")
        ts.expect(":", "':' after the setting's name")
        ts.end()
        self.i += 1
        setting = A.Setting(name.value, [], [], [], [], A.Pos(line.number, 1))
        body = self.block(line.indent)
        if not body:
            self.error("a setting needs an indented body of declarations", line)
        for ln in body:
            self.parse_setting_line(ln, setting)
        return setting

    def parse_setting_line(self, ln: Line, setting: A.Setting) -> None:
        ts = self.cursor(ln)
        head = ts.next()
        word = head.value if head.kind == "NAME" else ""
        if word in ("real", "label") and ts.at_keyword("sequence"):
            ts.next()
            kind = f"{word}_sequence"
        elif word in DECL_KINDS:
            kind = DECL_KINDS[word]
        elif word == "per":
            if not (ts.peek() is not None and ts.peek().value == "update"):
                ts.error("expected 'per update: names'")
            ts.next()
            ts.expect(":", "':' after 'per update'")
            setting.per_update.append(self._pos_name(ts.name()))
            while ts.at(","):
                ts.next()
                setting.per_update.append(self._pos_name(ts.name()))
            ts.end()
            return
        elif word == "bind":
            setting.binds.append(self._bind(ts))
            while ts.at(","):
                ts.next()
                setting.binds.append(self._bind(ts))
            ts.end()
            return
        elif word == "define":
            name = ts.name("the name being defined")
            ts.expect("=", "'=' in a definition")
            body = _expr(ts)
            ts.end()
            setting.defines.append(A.Define(name.value, body, A.Pos(name.line, name.col)))
            return
        elif word == "assume":
            name = ts.name("the assumption's name")
            ts.expect(":", "':' after the assumption's name")
            formula = _relation(ts, self._text_from(ln, ts))
            ts.end()
            setting.assumptions.append(A.Assume(name.value, formula,
                                                A.Pos(name.line, name.col)))
            return
        else:
            ts.error("expected a declaration (vectors, sequence, real, label, nat, per update, "
                     "bind, define, assume)", head)
        decls = []
        while True:
            name = ts.name(f"a {kind.replace('_', ' ')} name")
            constraint = None
            t = ts.peek()
            if t is not None and t.kind == "OP" and t.value in CONSTRAINT_OPS | {"="}:
                if kind != "real":
                    ts.error(f"only reals take a sign constraint, not a {kind}", t)
                if t.value == "=":
                    ts.error("a sign constraint is > 0, >= 0, < 0, <= 0 or != 0", t)
                ts.next()
                num = ts.next()
                if num.kind != "NUMBER" or Fraction(num.value) != 0:
                    ts.error("a sign constraint compares with 0 (use an assumption for "
                             "other bounds)", num)
                constraint = (t.value, 0)
            decls.append((name, constraint))
            if not ts.at(","):
                break
            ts.next()
        if kind in ("label", "label_sequence") and ts.at("in"):
            if self._label_values(ts) == "label01":  # in {0, 1}
                kind = {"label": "label01", "label_sequence": "label01_sequence"}[kind]
        ts.end()
        for name, constraint in decls:
            setting.decls.append(A.Decl(kind, name.value, constraint,
                                        A.Pos(name.line, name.col)))

    @staticmethod
    def _bind(ts: _Tokens) -> A.Bind:
        """`SYMBOL to QUANTITY` or `SEQ[j + c] to QUANTITY[j]` (c an integer, j any name)."""
        symbol = ts.name("the name of a symbol to bind")
        offset = index = None
        if ts.at("["):
            ts.next()
            index = ts.name("an index name (as in theta[k+1] to weights[k])")
            offset = 0
            if ts.at("+") or ts.at("-"):
                sign = 1 if ts.next().value == "+" else -1
                num = ts.next()
                if num.kind != "NUMBER" or not num.value.isdigit():
                    ts.error("the offset of a bound index is a whole number", num)
                offset = sign * int(num.value)
            ts.expect("]", "']' (a bound index is a name plus or minus a whole number)")
        if not ts.at_keyword("to"):
            ts.error("expected 'to' and a run quantity (as in 'bind theta_star to separator')")
        ts.next()
        quantity = ts.next()  # a NAME, keywords included: `label` is a run quantity
        if quantity.kind != "NAME":
            ts.error("expected a run quantity", quantity)
        if index is not None:
            ts.expect("[", f"'[{index.value}]' after {quantity.value}: a sequence binds to a "
                           f"sequence")
            same = ts.name("the index name")
            if same.value != index.value:
                ts.error(f"expected the index {index.value} of the left side", same)
            ts.expect("]", "']'")
        elif ts.at("["):
            ts.error(f"{symbol.value} has no index, so the quantity takes none either")
        return A.Bind(symbol.value, offset, quantity.value, A.Pos(symbol.line, symbol.col))

    @staticmethod
    def _label_values(ts: _Tokens) -> str:
        """`label y in {0, 1}` (kind label01) or `in {-1, 1}` (the default, kind label)."""
        ts.next()
        ts.expect("{", "'{' after 'in' (labels are in {-1, 1} or {0, 1})")
        values = []
        while True:
            sign = -1 if ts.at("-") else 1
            if sign < 0:
                ts.next()
            t = ts.next()
            if t.kind != "NUMBER":
                ts.error("labels are in {-1, 1} or {0, 1}", t)
            values.append(sign * Fraction(t.value))
            if not ts.at(","):
                break
            ts.next()
        ts.expect("}", "'}'")
        if sorted(values) == [0, 1]:
            return "label01"
        if sorted(values) == [-1, 1]:
            return "label"
        ts.error("labels are in {-1, 1} or {0, 1}")

    @staticmethod
    def _pos_name(tok: Token):
        return (tok.value, A.Pos(tok.line, tok.col))

    @staticmethod
    def _text_from(ln: Line, ts: _Tokens) -> str:
        t = ts.peek()
        if t is None:
            return ""
        return ln.text[max(0, t.col - 1 - ln.indent):]

    # ------------------------------------------------------------------- lemmas and proofs

    def parse_lemma_or_error(self, line: Line, setting: str) -> A.Lemma:
        """A lemma; one with a syntax error is kept with the error, and parsing goes on at
        the next line that starts a lemma, a setting or an import.  When only its proof has the
        error, its statement and givens are kept (it can still be cited, as not verified)."""
        start = self.i
        lemma = None
        try:
            lemma = self.parse_lemma_head(line, setting)
            ln = self.peek()
            if ln is None or ln.indent != 0 or ln.tokens[0].value != "proof":
                where = ln if ln is not None else line
                self.error(f"{lemma.kind} {lemma.name} has no proof: expected 'proof:'", where)
            lemma.proof = self.parse_proof(ln)
            return lemma
        except ProofSyntaxError as exc:
            self.i = start + 1
            while (ln := self.peek()) is not None and not (
                    ln.indent == 0 and ln.tokens[0].kind == "NAME"
                    and ln.tokens[0].value in ("lemma", "theorem", "setting", "from")):
                self.i += 1
            if lemma is not None:
                lemma.proof, lemma.error = None, exc
                return lemma
            kind = line.tokens[0].value
            name = line.tokens[1] if len(line.tokens) > 1 else None
            name = (name.value if name is not None and name.kind == "NAME"
                    and name.value not in KEYWORDS else f"<{kind} at line {line.number}>")
            text = line.text.split(":", 1)[1].strip() if ":" in line.text else line.text
            statement = A.Rel("=", None, None, A.Pos(line.number, 1), text)
            return A.Lemma(kind, name, statement, [], None, setting, A.Pos(line.number, 1),
                           error=exc, stated=False)

    def parse_lemma_head(self, line: Line, setting: str) -> A.Lemma:
        """The lemma's first line and its givens (the proof is parsed after them)."""
        ts = self.cursor(line)
        kind = ts.next().value
        name = ts.name(f"the {kind}'s name")
        ts.expect(":", f"':' after the {kind}'s name")
        statement = _formula(ts, self._text_from(line, ts))
        ts.end()
        self.i += 1
        lemma = A.Lemma(kind, name.value, statement, [], None, setting,
                        A.Pos(line.number, 1))
        while (ln := self.peek()) is not None and ln.tokens[0].value == "given":
            gts = self.cursor(ln)
            gts.next()
            gname = gts.name("the hypothesis's name")
            gts.expect(":", "':' after the hypothesis's name")
            lemma.givens.append((gname.value, _formula(gts, self._text_from(ln, gts)),
                                 A.Pos(gname.line, gname.col)))
            gts.end()
            self.i += 1
        return lemma

    def parse_proof(self, line: Line) -> A.Proof:
        ts = self.cursor(line)
        ts.next()
        pos = A.Pos(line.number, 1)
        self.i += 1
        if ts.at_keyword("by"):
            ts.next()
            if ts.at_keyword("induction"):
                ts.next()
                ts.expect("on", "'on'")
                var = ts.name("the induction variable")
                ts.expect(":", "':'")
                ts.end()
                proof = A.Proof("induction", var=A.Name(var.value, A.Pos(var.line, var.col)),
                                pos=pos)
                body = self.block(line.indent)
                self.parse_induction(body, proof, line)
                return proof
            if ts.at_keyword("cases"):
                head = ts.next()
                cites = self.parse_cites_until_colon(ts)
                ts.end()
                body = self.block(line.indent)
                if not body:
                    self.error("expected indented 'case' blocks", line)
                cases = self.parse_cases(body, cites, A.Pos(head.line, head.col), line.text)
                return A.Proof("direct", items=[cases], pos=pos)
            ts.error("expected 'induction on NAME' or 'cases'")
        ts.expect(":", "':' after 'proof'")
        ts.end()
        body = self.block(line.indent)
        if not body:
            self.error("the proof is empty", line)
        return A.Proof("direct", items=self.parse_items(body), pos=pos)

    def parse_induction(self, body: list, proof: A.Proof, line: Line) -> None:
        if not body:
            self.error("expected indented 'base:' and 'step:' blocks", line)
        sub = _Parser(body, self.path)
        seen = set()
        while sub.i < len(body):
            ln = body[sub.i]
            if ln.indent != body[0].indent:
                sub.error("unexpected indentation", ln)
            word = ln.tokens[0].value
            if word not in ("base", "step") or len(ln.tokens) != 2 or ln.tokens[1].value != ":":
                sub.error("expected 'base:' or 'step:'", ln)
            if word in seen:
                sub.error(f"a second '{word}:' block", ln)
            seen.add(word)
            sub.i += 1
            block = sub.block(ln.indent)
            if not block:
                sub.error(f"the {word} case is empty", ln)
            items = sub.parse_items(block)
            if word == "base":
                proof.base = items
            else:
                proof.step = items
        for word in ("base", "step"):
            if word not in seen:
                case = "base case" if word == "base" else "inductive step"
                self.error(f"the induction has no {case} (a '{word}:' block)", line)

    def parse_items(self, lines: list) -> list:
        sub = _Parser(lines, self.path)
        items = []
        indent = lines[0].indent
        while sub.i < len(lines):
            ln = lines[sub.i]
            if ln.indent != indent:
                first = ln.tokens[0]
                if ln.indent > indent and first.kind == "OP" and first.value in RELATION_TOKENS:
                    sub.error("a continuation line with no chain above it", ln)
                sub.error("unexpected indentation", ln)
            head = ln.tokens[0]
            if head.kind == "NAME" and head.value == "hence":
                items.append(sub.parse_hence(ln))
                sub.i += 1
            elif head.kind == "NAME" and head.value == "contradiction" and (
                    len(ln.tokens) == 1 or ln.tokens[1].value in ("by", "xfail")):
                ts = sub.cursor(ln)
                ts.next()
                cites, xfail = sub.parse_justification(ts)
                items.append(A.Contradiction(cites, xfail, A.Pos(ln.number, ln.indent + 1),
                                             ln.text))
                sub.i += 1
            elif head.kind == "NAME" and head.value == "cases":
                ts = sub.cursor(ln)
                ts.next()
                cites = sub.parse_cites_until_colon(ts)
                ts.end()
                sub.i += 1
                body = sub.block(ln.indent)
                if not body:
                    sub.error("expected indented 'case' blocks", ln)
                items.append(sub.parse_cases(body, cites, A.Pos(ln.number, head.col), ln.text))
            elif head.kind == "NAME" and head.value == "case":
                sub.error("'case' belongs inside a 'cases:' block", ln)
            else:
                items.append(sub.parse_chain(ln))
        return items

    def parse_cites_until_colon(self, ts: _Tokens) -> list:
        cites = []
        if ts.at_keyword("by"):
            ts.next()
            cites = self.parse_cites(ts)
        ts.expect(":", "':'")
        return cites

    def parse_cases(self, body: list, cites: list, pos: A.Pos, text: str) -> A.Cases:
        sub = _Parser(body, self.path)
        branches = []
        while sub.i < len(body):
            ln = body[sub.i]
            if ln.indent != body[0].indent or ln.tokens[0].value != "case":
                sub.error("expected 'case NAME: condition'", ln)
            ts = sub.cursor(ln)
            ts.next()
            name = ts.name("the case's name")
            ts.expect(":", "':' after the case's name")
            condition = _formula(ts, self._text_from(ln, ts))
            ts.end()
            sub.i += 1
            block = sub.block(ln.indent)
            if not block:
                sub.error(f"case {name.value} has no proof", ln)
            branches.append(A.Case(name.value, condition, sub.parse_items(block),
                                   A.Pos(name.line, name.col)))
        if len(branches) < 2:
            self.error("a case split needs at least two cases", body[0])
        return A.Cases(cites, branches, pos, text)

    def parse_hence(self, ln: Line) -> A.Hence:
        ts = self.cursor(ln)
        ts.next()
        text = self._text_from(ln, ts)
        formula = _formula(ts, text)
        cites, xfail = self.parse_justification(ts)
        return A.Hence(formula, cites, xfail, A.Pos(ln.number, ln.indent + 1), ln.text)

    def parse_chain(self, ln: Line) -> A.Chain:
        ts = self.cursor(ln)
        name = None
        if ts.at_keyword("have"):
            ts.next()
            name = ts.name("the fact's name").value
            ts.expect(":", "':' after the fact's name")
        pos = ts.pos()
        claim = self._try_claim(ts, ln, name, pos)
        if claim is not None:
            self.i += 1
            return claim
        first = _expr(ts)
        chain = A.Chain(name, first, [], pos)
        self.i += 1
        chain.steps.append(self.parse_step(ts, ln, first_line=True))
        while (nxt := self.peek()) is not None and nxt.indent > ln.indent:
            head = nxt.tokens[0]
            if not (head.kind == "OP" and head.value in RELATION_TOKENS):
                self.error("expected a continuation line starting with a relation", nxt)
            chain.steps.append(self.parse_step(self.cursor(nxt), nxt, first_line=False))
            self.i += 1
        return chain

    def _try_claim(self, ts: _Tokens, ln: Line, name, pos: A.Pos):
        """A line `FORMULA [by ...]` whose formula has connectives, or None (a chain: a chain
        has no connective)."""
        if not any(t.value in CONNECTIVES for t in ts.toks[ts.i:]):
            return None
        formula = _formula(ts, self._text_from(ln, ts))
        cites, xfail = self.parse_justification(ts)
        return A.Claim(name, formula, cites, xfail, pos, ln.text)

    def parse_step(self, ts: _Tokens, ln: Line, first_line: bool) -> A.Step:
        t = ts.peek()
        if t is None or t.kind != "OP" or t.value not in RELATION_TOKENS:
            _expected_relation(ts, t)
        ts.next()
        pos = A.Pos(t.line, t.col)
        rhs = _expr(ts)
        cites, xfail = self.parse_justification(ts)
        return A.Step(t.value, rhs, cites, xfail, pos, ln.text)

    def parse_justification(self, ts: _Tokens):
        cites = []
        if ts.at_keyword("by"):
            ts.next()
            cites = self.parse_cites(ts)
        xfail = False
        if ts.at_keyword("xfail"):
            ts.next()
            xfail = True
        ts.end()
        return cites, xfail

    def parse_cites(self, ts: _Tokens) -> list:
        cites = [self.parse_cite(ts)]
        while ts.at(","):
            ts.next()
            cites.append(self.parse_cite(ts))
        return cites

    def parse_cite(self, ts: _Tokens) -> A.Cite:
        t = ts.peek()
        if t is None or t.kind != "NAME" or (t.value in KEYWORDS and t.value not in
                                              ("algebra", "ih")):
            ts.error("expected the name of a fact to cite", t)
        ts.next()
        at = None
        if ts.at("["):  # NAME[k := e, a := f]: the fact at other values of its symbols
            ts.next()
            pairs = []
            while True:
                var = ts.name("a symbol (NAME[k := e])")
                ts.expect(":", "':=' after the symbol")
                ts.expect("=", "':=' after the symbol")
                pairs.append((A.Name(var.value, A.Pos(var.line, var.col)), _expr(ts)))
                if not ts.at(","):
                    break
                ts.next()
            ts.expect("]", "']'")
            at = tuple(pairs)
        args = _arguments(ts) if ts.at("(") else ()
        return A.Cite(t.value, args, A.Pos(t.line, t.col), at)


def parse_term(text: str, formula: bool = False, path: str = "<string>"):
    """Parse one line of .proof notation: a term, or a formula with formula=True (what the
    checker prints, read back by the reports).  Raises ProofSyntaxError."""
    lines = tokenize(text, path)
    if len(lines) != 1:
        raise ProofSyntaxError("expected one line of notation", path, 1, 1, text)
    ts = _Parser(lines, path).cursor(lines[0])
    node = _formula(ts) if formula else _expr(ts)
    ts.end()
    return node


def parse(source: str, path: str = "<string>") -> A.ProofFile:
    """Parse the text of a .proof file."""
    lines = tokenize(source, path)
    if not lines:
        raise ProofSyntaxError("the file is empty: expected a setting and lemmas", path, 1, 1)
    return _Parser(lines, path).parse_file()


def parse_citations(text: str, path: str = "<string>", line: int = 1, col: int = 1) -> list:
    """Parse `NAME, NAME[k := e], NAME(u, v)` (what follows `by`) written at line:col of path
    (the notes front end reads citations out of Markdown and LaTeX).  Raises ProofSyntaxError."""
    lines = tokenize("\n" * (line - 1) + " " * (col - 1) + text, path)
    if len(lines) != 1:
        raise ProofSyntaxError("expected the names of facts to cite", path, line, col, text)
    ts = _Parser(lines, path).cursor(lines[0])
    cites = _Parser(lines, path).parse_cites(ts)
    ts.end()
    return cites


def parse_formula_at(text: str, path: str = "<string>", line: int = 1, col: int = 1):
    """Parse a formula written at line:col of path (positions as in that file).  Raises
    ProofSyntaxError."""
    lines = tokenize("\n" * (line - 1) + " " * (col - 1) + text, path)
    if len(lines) != 1:
        raise ProofSyntaxError("expected a formula", path, line, col, text)
    ts = _Parser(lines, path).cursor(lines[0])
    node = _formula(ts, text.strip())
    ts.end()
    return node
