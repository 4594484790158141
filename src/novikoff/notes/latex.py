"""Read the LaTeX math of derivations into an untyped tree.  Hand-written recursive descent: no
eval, no sympy.parsing.latex; every node knows its offset in the document.

The tree is untyped: `x_i` is a script of the letter x, `u^\\top v` an inner product, `u \\cdot v`
a `cdot` whose meaning (inner product or product) the notation table and the setting decide
(notation.py).  What this module cannot read raises NotUnderstood at an offset.
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["NotUnderstood", "Tok", "Node", "tokenize", "parse_line", "parse_pattern", "split_lines",
           "RELATIONS", "ARROWS", "INTERPRETED"]

MAX_DEPTH = 200  # nesting of braces and parentheses: deeper input is refused, not recursed into


_DIGITS = frozenset("0123456789")


class NotUnderstood(Exception):
    """Math that the grammar cannot read: message and the offset (in the document) it is about."""

    def __init__(self, message: str, offset: int):
        super().__init__(message)
        self.message = message
        self.offset = offset


@dataclass(frozen=True)
class Tok:
    kind: str  # CMD (\name), CHAR (one character), NUM, HOLE (#, in notation patterns)
    value: str
    offset: int


@dataclass(frozen=True)
class Node:
    """kind: sym num hole font script pow T + - neg mul cdot / sqrt norm abs inner func sum text;
    args: child nodes or strings.  Equality ignores the offset (notation patterns match)."""

    kind: str
    args: tuple
    offset: int = field(default=0, compare=False)


RELATIONS = {"=": "=", "<": "<", ">": ">", r"\le": "<=", r"\leq": "<=", r"\leqslant": "<=",
             r"\ge": ">=", r"\geq": ">=", r"\geqslant": ">=", r"\ne": "!=", r"\neq": "!=",
             "≤": "<=", "≥": ">=", "≠": "!="}
ARROWS = {r"\Rightarrow", r"\implies", r"\Longrightarrow", r"\therefore", r"\rightarrow", "⇒",
          r"\to"}
GREEK = {"alpha", "beta", "gamma", "delta", "epsilon", "varepsilon", "zeta", "eta", "theta",
         "vartheta", "iota", "kappa", "lambda", "mu", "nu", "xi", "pi", "rho", "sigma", "tau",
         "phi", "varphi", "chi", "psi", "omega", "Gamma", "Delta", "Theta", "Lambda", "Sigma",
         "Phi", "Psi", "Omega", "ell"}
FONTS = {r"\mathbf", r"\boldsymbol", r"\bm", r"\underline", r"\vec", r"\mathit", r"\hat",
         r"\tilde", r"\bar", r"\mathbb", r"\mathcal", r"\mathsf", r"\overline"}
TEXTS = {r"\text", r"\mathrm", r"\operatorname", r"\textrm", r"\textbf", r"\mbox"}
SPACES = {r"\,", r"\;", r"\:", r"\!", r"\quad", r"\qquad", r"\ ", "~", r"\displaystyle",
          r"\nonumber", r"\notag", r"\left", r"\right", r"\big", r"\Big", r"\bigg", r"\Bigg",
          r"\bigl", r"\bigr", r"\Bigl", r"\Bigr", r"\limits"}
STARS = {"*", r"\star", r"\ast", "⋆"}
TRANSPOSES = {r"\top", r"\intercal", "T", r"\mathsf{T}"}
FUNCTIONS = {"sqrt", "abs", "max", "min", "floor", "ceil"}
# Every command this grammar (or the reader around it) gives a meaning to: a document that
# redefines one would typeset something else than what is checked.
INTERPRETED = ({c for c in RELATIONS if c.startswith("\\")} | {c for c in ARROWS if c.startswith("\\")}
               | {"\\" + g for g in GREEK} | FONTS | TEXTS | {c for c in SPACES if c.startswith("\\")}
               | {c for c in STARS | TRANSPOSES if c.startswith("\\")}
               | {"\\frac", "\\dfrac", "\\tfrac", "\\sqrt", "\\|", "\\lVert", "\\rVert", "\\Vert",
                  "\\lvert", "\\rvert", "\\vert", "\\langle", "\\rangle", "\\lceil", "\\rceil",
                  "\\lfloor", "\\rfloor", "\\underbrace", "\\min", "\\max", "\\sum", "\\cdot",
                  "\\times", "\\\\", "\\tag", "\\label", "\\begin", "\\end", "\\mathsf", "\\textrm",
                  "\\mbox", "\\leqslant", "\\geqslant"})
# Letters that lost their backslash in a conversion: "\boldsymbol" read as "\b" + "oldsymbol".
_LOST = {"oldsymbol": r"\boldsymbol", "heta": r"\theta", "egin": r"\begin", "ight": r"\right",
         "amma": r"\gamma", "rac": r"\frac", "ext": r"\text", "athbf": r"\mathbf"}


def tokenize(text: str, start: int = 0, holes: bool = False) -> list:
    """The tokens of text (offsets from start): commands, characters, numbers; `%` starts a
    comment to the end of the line; `#` is a hole only in notation patterns."""
    out, i, n = [], 0, len(text)
    while i < n:
        ch = text[i]
        if ch in " \t\r\n":
            i += 1
        elif ch == "%":
            while i < n and text[i] != "\n":
                i += 1
        elif ch == "\\":
            j = i + 1
            while j < n and text[j].isalpha() and text[j].isascii():
                j += 1
            if j == i + 1:
                j = min(i + 2, n)
            out.append(Tok("CMD", text[i:j], start + i))
            i = j
        elif ch in _DIGITS:  # (not str.isdigit, which holds for ² too)
            j = i
            while j < n and text[j] in _DIGITS:
                j += 1
            if j + 1 < n and text[j] == "." and text[j + 1] in _DIGITS:
                j += 1
                while j < n and text[j] in _DIGITS:
                    j += 1
            out.append(Tok("NUM", text[i:j], start + i))
            i = j
        elif ch == "#" and holes:
            out.append(Tok("HOLE", "#", start + i))
            i += 1
        else:
            out.append(Tok("CHAR", ch, start + i))
            i += 1
    return out


def split_lines(toks: list) -> list:
    r"""The lines of a display (split at top-level `\\`), alignment marks `&` dropped."""
    lines, cur, depth = [], [], 0
    for t in toks:
        if t.value == "{":
            depth += 1
        elif t.value == "}":
            depth -= 1
        if t.value == "\\\\" and depth <= 0:
            lines.append(cur)
            cur = []
        elif t.value != "&":
            cur.append(t)
    lines.append(cur)
    return [ln for ln in lines if ln]


class _Reader:
    def __init__(self, toks: list, end: int):
        self.toks = [t for t in toks if t.value not in SPACES]
        self.i = 0
        self.end = end  # offset reported at the end of the tokens
        self.depth = 0

    def peek(self, k: int = 0):
        j = self.i + k
        return self.toks[j] if j < len(self.toks) else None

    def at(self, *values) -> bool:
        t = self.peek()
        return t is not None and t.value in values

    def next(self) -> Tok:
        t = self.peek()
        if t is None:
            raise NotUnderstood("the math ends too early", self.end)
        self.i += 1
        return t

    def expect(self, value: str, what: str) -> Tok:
        t = self.peek()
        if t is None or t.value != value:
            raise NotUnderstood(f"expected {what}", t.offset if t else self.end)
        self.i += 1
        return t

    def offset(self) -> int:
        t = self.peek()
        return t.offset if t is not None else self.end

    # ------------------------------------------------------------- expressions

    def expr(self, stop=()) -> Node:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise NotUnderstood("the math nests too deeply", self.offset())
        try:
            off = self.offset()
            if self.at("-"):
                self.next()
                node = Node("neg", (self.term(stop),), off)
            else:
                if self.at("+"):
                    self.next()
                node = self.term(stop)
            while self.at("+", "-") and not self.at(*stop):
                op = self.next()
                node = Node(op.value, (node, self.term(stop)), op.offset)
            return node
        finally:
            self.depth -= 1

    def term(self, stop=()) -> Node:
        """Factors joined by juxtaposition, \\cdot, `.`, \\times, `*` or `/`."""
        factors, ops = [self.factor()], []
        while True:
            t = self.peek()
            if t is None or t.value in stop:
                break
            if t.value in (r"\cdot", ".", "⋅", "·"):
                nxt = self.peek(1)
                if t.value == "." and (nxt is None or not self._starts_factor(nxt)):
                    break
                self.next()
                ops.append("cdot")
            elif t.value in (r"\times", "*", "×"):
                self.next()
                ops.append("mul")
            elif t.value == "/":
                self.next()
                ops.append("/")
            elif self._starts_factor(t):
                ops.append("jux")
            else:
                break
            factors.append(self.factor())
        # u^\top v: a transpose followed by a factor is an inner product, before anything else.
        k = 0
        while k < len(factors):
            f = factors[k]
            if f.kind == "T" and k + 1 < len(factors) and ops[k] in ("jux", "cdot"):
                factors[k:k + 2] = [Node("inner", (f.args[0], factors[k + 1]), f.offset)]
                del ops[k]
            else:
                k += 1
        node = factors[0]
        for op, f in zip(ops, factors[1:]):
            kind = {"jux": "mul", "mul": "mul"}.get(op, op)
            node = Node(kind, (node, f), f.offset)
        return node

    def _starts_factor(self, t: Tok) -> bool:
        if t.kind in ("NUM", "HOLE"):
            return True
        if t.kind == "CHAR":
            return t.value.isalpha() or t.value in "({|" or t.value == "√"
        v = t.value
        return (v[1:] in GREEK or v in FONTS or v in TEXTS or v in (
            r"\frac", r"\dfrac", r"\tfrac", r"\sqrt", r"\|", r"\lVert", r"\Vert", r"\langle",
            r"\sum", r"\underbrace", r"\lceil", r"\lfloor", r"\min", r"\max", r"\lvert",
            r"\vert", r"\sign", r"\mathsf"))

    def factor(self) -> Node:
        node = self.atom()
        while True:
            t = self.peek()
            if t is None:
                return node
            if t.value == "_":
                self.next()
                node = self._script(node, sub=self._script_arg())
            elif t.value == "^":
                self.next()
                node = self._superscript(node)
            elif t.value in ("²", "³"):
                self.next()
                after = self.peek()
                if after is not None and after.value in ("²", "³", "¹", "⁰", "⁴", "⁵", "⁶",
                                                          "⁷", "⁸", "⁹"):
                    raise NotUnderstood("several superscript digits (k²² reads as k to the "
                                        "22nd): write ^{...}", t.offset)
                node = Node("pow", (node, Node("num", ("2" if t.value == "²" else "3",),
                                               t.offset)), t.offset)
            else:
                return node

    def _script(self, node: Node, sub=None, sup=None) -> Node:
        if node.kind == "script":
            base, s0, p0 = node.args
            if (sub is not None and s0 is not None) or (sup is not None and p0 is not None):
                raise NotUnderstood("a double subscript or superscript", node.offset)
            return Node("script", (base, sub if sub is not None else s0,
                                   sup if sup is not None else p0), node.offset)
        if node.kind not in ("sym", "font", "num"):
            raise NotUnderstood("a subscript on an expression", node.offset)
        return Node("script", (node, sub, sup), node.offset)

    def _superscript(self, node: Node) -> Node:
        t = self.peek()
        if t is None:
            raise NotUnderstood("a superscript with nothing after it", self.end)
        # ^\top, ^T, ^{\top}, ^{\mathsf{T}}: a transpose.
        save = self.i
        inner = self._raw_group_values()
        if inner in ([r"\top"], [r"\intercal"], ["T"], [r"\mathsf", "{", "T", "}"]):
            return Node("T", (node,), t.offset)
        self.i = save
        if inner and len(inner) == 1 and inner[0] in STARS:
            self._raw_group_values()
            return self._script(node, sup=Node("sym", ("*",), t.offset))
        if inner and inner[0] == "(" and inner[-1] == ")" and node.kind in ("sym", "font",
                                                                            "script"):
            arg = self._script_arg()
            return self._script(node, sup=Node("paren", (arg,), t.offset))
        exponent = self._script_arg()
        if node.kind == "T":
            raise NotUnderstood("a power of a transpose", t.offset)
        return Node("pow", (node, exponent), t.offset)

    def _raw_group_values(self) -> list:
        """The token values of the next script argument (a token or a {group}), consumed."""
        t = self.next()
        return self._to_closing_brace() if t.value == "{" else [t.value]

    def _to_closing_brace(self) -> list:
        """The token values up to the brace that closes the one just consumed, which is
        consumed too."""
        values, depth = [], 1
        while True:
            u = self.next()
            if u.value == "{":
                depth += 1
            elif u.value == "}":
                depth -= 1
                if depth == 0:
                    return values
            values.append(u.value)

    def _script_arg(self) -> Node:
        t = self.peek()
        if t is None:
            raise NotUnderstood("a script with nothing after it", self.end)
        if t.value == "{":
            self.next()
            if self.at(*STARS) and self.peek(1) is not None and self.peek(1).value == "}":
                star = self.next()
                self.next()
                return Node("sym", ("*",), star.offset)
            node = self.expr()
            self.expect("}", "'}' closing the script")
            return node
        if t.value in STARS:
            self.next()
            return Node("sym", ("*",), t.offset)
        if t.kind == "NUM":  # x_12 is x_{1}2 in LaTeX: one digit
            self.next()
            if len(t.value) > 1:
                raise NotUnderstood(f"a script of several digits written without braces "
                                    f"({t.value}): write _{{{t.value}}}", t.offset)
            return Node("num", (t.value,), t.offset)
        return self.atom()

    def group(self, what: str) -> Node:
        self.expect("{", f"'{{' after {what}")
        node = self.expr()
        self.expect("}", f"'}}' closing {what}")
        return node

    def text_arg(self, what: str) -> tuple:
        """The raw text of a {group}: (text, offset)."""
        self.expect("{", f"'{{' after {what}")
        off = self.offset()
        return " ".join(self._to_closing_brace()).strip(), off

    def atom(self) -> Node:
        t = self.peek()
        if t is None:
            raise NotUnderstood("expected an expression", self.end)
        v, off = t.value, t.offset
        if t.kind == "HOLE":
            self.next()
            return Node("hole", (), off)
        if t.kind == "NUM":
            self.next()
            return Node("num", (v,), off)
        if t.kind == "CHAR":
            if v.isalpha():
                self._check_lost_backslash()
                self.next()
                return Node("sym", (v,), off)
            if v == "(" or v == "[":
                self.next()
                node = self.expr()
                self.expect(")" if v == "(" else "]", f"'{')' if v == '(' else ']'}' closing "
                                                      f"the parenthesis")
                return node
            if v == "{":
                self.next()
                node = self.expr()
                self.expect("}", "'}'")
                return node
            if v == "|":
                self.next()
                if self.at("|"):  # ||x||: the ASCII norm
                    self.next()
                    node = self.expr(stop=("|",))
                    self.expect("|", "'||' closing the norm")
                    self.expect("|", "'||' closing the norm")
                    return self._norm_sub(node, off)
                node = self.expr(stop=("|",))
                self.expect("|", "'|' closing the absolute value")
                return Node("abs", (node,), off)
            if v == "√":
                self.next()
                return Node("sqrt", (self.factor(),), off)
            raise NotUnderstood(f"{v!r} where an expression should start", off)
        # commands
        name = v[1:]
        if name in GREEK:
            self.next()
            return Node("sym", (name,), off)
        if v in FONTS:
            self.next()
            inner = self.group(v) if self.at("{") else self.atom()
            return Node("font", (name, inner), off)
        if v in (r"\frac", r"\dfrac", r"\tfrac"):
            self.next()
            num = self.group(r"\frac's numerator")
            den = self.group(r"\frac's denominator")
            return Node("/", (num, den), off)
        if v == r"\sqrt":
            self.next()
            if self.at("["):
                raise NotUnderstood(r"a root other than the square root (\sqrt[n])", off)
            if self.at("{"):
                return Node("sqrt", (self.group(r"\sqrt"),), off)
            # Without braces TeX takes one token: \sqrt16 is sqrt(1)*6, \sqrt a^2 is (sqrt a)^2.
            t = self.peek()
            if t is not None and (t.kind == "NUM" and len(t.value) == 1
                                  or t.kind == "CHAR" and t.value.isalpha()
                                  or t.value[1:] in GREEK):
                return Node("sqrt", (self.atom(),), off)
            shown = t.value if t is not None else ""
            raise NotUnderstood(f"\\sqrt without braces covers one token in TeX ({shown!r} "
                                f"here is more, or none): put its argument in braces, "
                                f"\\sqrt{{...}}", off)
        if v in (r"\|", r"\lVert", r"\Vert"):
            self.next()
            node = self.expr(stop=(r"\|", r"\rVert", r"\Vert"))
            if not self.at(r"\|", r"\rVert", r"\Vert"):
                raise NotUnderstood(r"expected \| closing the norm", self.offset())
            self.next()
            return self._norm_sub(node, off)
        if v in (r"\lvert", r"\vert"):
            self.next()
            node = self.expr(stop=(r"\rvert", r"\vert"))
            if not self.at(r"\rvert", r"\vert"):
                raise NotUnderstood(r"expected \rvert closing the absolute value", self.offset())
            self.next()
            return Node("abs", (node,), off)
        if v == r"\langle":
            self.next()
            left = self.expr(stop=(",",))
            self.expect(",", r"',' between the vectors of \langle u, v \rangle")
            right = self.expr(stop=(r"\rangle",))
            self.expect(r"\rangle", r"\rangle closing the inner product")
            return Node("inner", (left, right), off)
        if v in (r"\lceil", r"\lfloor"):
            self.next()
            closing = r"\rceil" if v == r"\lceil" else r"\rfloor"
            node = self.expr(stop=(closing,))
            self.expect(closing, closing)
            return Node("func", ("ceil" if v == r"\lceil" else "floor", (node,)), off)
        if v == r"\underbrace":
            self.next()
            node = self.group(r"\underbrace")
            if self.at("_"):
                self.next()
                if self.at("{"):
                    self.text_arg(r"\underbrace's note")
                else:
                    self.next()
            return node
        if v in TEXTS:
            self.next()
            text, toff = self.text_arg(v)
            word = text.replace(" ", "")
            if word in FUNCTIONS and self.at("("):
                return Node("func", (word, self._arguments()), off)
            return Node("text", (text,), toff)
        if v in (r"\min", r"\max"):
            self.next()
            if self.at("_"):
                raise NotUnderstood(f"{v} over a set (a minimum over the data is two "
                                    f"assumptions in the setting)", off)
            return Node("func", (name, self._arguments()), off)
        if v == r"\sum":
            return self._sum()
        raise NotUnderstood(f"{v}", off)

    def _check_lost_backslash(self) -> None:
        """A run of letters that spells a command without its first letters and backslash
        (`oldsymbol`, `heta`: "\\b" and "\\t" read as control characters) is refused."""
        run, j = "", self.i
        while (t := self.peek(j - self.i)) is not None and t.kind == "CHAR" and \
                t.value.isalpha() and (not run or t.offset == self.toks[j - 1].offset + 1):
            run += t.value
            j += 1
        if j > self.i and self.i > 0 and self.toks[self.i - 1].kind == "CHAR" and \
                self.toks[self.i - 1].value.isalpha() and \
                self.toks[self.i - 1].offset + 1 == self.toks[self.i].offset:
            return  # inside a run already checked at its start
        for lost, command in _LOST.items():
            if run.startswith(lost):
                raise NotUnderstood(f"{lost} (a backslash seems lost: {command})",
                                    self.toks[self.i].offset)

    def _arguments(self) -> tuple:
        self.expect("(", "'(' after the function")
        args = [self.expr(stop=(",",))]
        while self.at(","):
            self.next()
            args.append(self.expr(stop=(",",)))
        self.expect(")", "')' closing the arguments")
        return tuple(args)

    def _norm_sub(self, node: Node, off: int) -> Node:
        sub = None
        if self.at("_"):
            self.next()
            sub = self._script_arg()
        return Node("norm", (node, sub), off)

    def _sum(self) -> Node:
        t = self.next()
        if not self.at("_"):
            raise NotUnderstood(r"\sum without its index (\sum_{i=1}^{n})", t.offset)
        self.next()
        self.expect("{", r"'{' after \sum_")
        var = self.next()
        if var.kind != "CHAR" or not var.value.isalpha():
            raise NotUnderstood(r"\sum's index should be a letter", var.offset)
        if self.at("}"):
            raise NotUnderstood(r"\sum without its range (\sum_{i=1}^{n})", var.offset)
        self.expect("=", r"'=' in \sum_{i=...}")
        low = self.expr()
        self.expect("}", r"'}' closing \sum's index")
        self.expect("^", r"'^' with \sum's upper end")
        high = self._script_arg()
        body = self.term(stop=())
        return Node("sum", (var.value, low, high, body), t.offset)


def parse_line(toks: list, end: int) -> list:
    """A line of a derivation: [expr, rel-token, expr, ...] split also at arrows (\\Rightarrow):
    a list of ('expr', Node) | ('rel', op, offset) | ('arrow', offset)."""
    reader = _Reader(toks, end)
    out = []
    expecting_expr = True
    while reader.peek() is not None:
        t = reader.peek()
        if t.value in RELATIONS:
            reader.next()
            out.append(("rel", RELATIONS[t.value], t.offset))
            expecting_expr = True
        elif t.value in ARROWS:
            reader.next()
            out.append(("arrow", t.offset))
            expecting_expr = True
        elif expecting_expr:
            node = reader.expr(stop=tuple(RELATIONS) + tuple(ARROWS))
            out.append(("expr", node))
            expecting_expr = False
        else:
            raise NotUnderstood(f"{t.value} after the expression", t.offset)
    return out


def parse_pattern(text: str, start: int = 0) -> Node:
    """A notation pattern: LaTeX with `#` holes, one expression."""
    toks = tokenize(text, start, holes=True)
    reader = _Reader(toks, start + len(text))
    node = reader.expr()
    if reader.peek() is not None:
        raise NotUnderstood(f"{reader.peek().value} after the pattern", reader.peek().offset)
    return node
