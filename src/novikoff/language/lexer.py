"""Split .proof text into indented lines of tokens, normalising Unicode notation to ASCII."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..errors import ProofSyntaxError, UnreadableSource

__all__ = ["Token", "Line", "tokenize", "source_lines", "read_source", "KEYWORDS",
           "RELATION_TOKENS", "CONNECTIVES"]

BOM = "\ufeff"  # a byte-order mark: Windows editors start UTF-8 files with it

GREEK = {
    "α": "alpha", "β": "beta", "γ": "gamma", "δ": "delta", "ε": "epsilon", "ϵ": "epsilon",
    "ζ": "zeta", "η": "eta", "θ": "theta", "ϑ": "theta", "ι": "iota", "κ": "kappa",
    "λ": "lambda", "μ": "mu", "ν": "nu", "ξ": "xi", "π": "pi", "ρ": "rho", "σ": "sigma",
    "τ": "tau", "υ": "upsilon", "φ": "phi", "ϕ": "phi", "χ": "chi", "ψ": "psi", "ω": "omega",
    "Γ": "Gamma", "Δ": "Delta", "Θ": "Theta", "Λ": "Lambda", "Ξ": "Xi", "Π": "Pi",
    "Σ": "Sigma", "Φ": "Phi", "Ψ": "Psi", "Ω": "Omega",
    "⋆": "_star",  # w⋆ is w_star
}

# Longest first: the lexer takes the first that matches.
SYMBOLS = [
    ("<=>", "<=>"), ("=>", "=>"), ("⇔", "<=>"), ("⟺", "<=>"), ("⇒", "=>"), ("⟹", "=>"),
    ("∧", "and"), ("∨", "or"),
    ("**", "^"), ("<=", "<="), (">=", ">="), ("!=", "!="), ("==", "="), ("||", "||"),
    ("≤", "<="), ("≥", ">="), ("≠", "!="), ("‖", "||"), ("⟨", "⟨"), ("⟩", "⟩"),
    ("·", "*"), ("⋅", "*"), ("×", "*"), ("√", "√"), ("²", "²"), ("³", "³"), ("−", "-"),
    ("=", "="), ("<", "<"), (">", ">"), ("+", "+"), ("-", "-"), ("*", "*"), ("/", "/"),
    ("^", "^"), ("(", "("), (")", ")"), ("[", "["), ("]", "]"), (",", ","), (":", ":"),
    ("{", "{"), ("}", "}"),
    (".", "."),
]

# The symbols that may start at a character, in SYMBOLS' order (what the lexer tries there).
_SYMBOLS_AT = {}
for _text, _value in SYMBOLS:
    _SYMBOLS_AT.setdefault(_text[0], []).append((_text, _value))
RELATION_TOKENS = frozenset({"=", "!=", "<", "<=", ">", ">="})

KEYWORDS = frozenset({
    "setting", "vector", "vectors", "sequence", "real", "reals", "label", "labels", "nat",
    "nats", "per", "define", "assume", "lemma", "theorem", "given", "proof", "by",
    "induction", "on", "base", "step", "cases", "case", "have", "hence", "xfail", "from",
    "import", "algebra", "ih", "and", "or",
})
CONNECTIVES = frozenset({"and", "or", "=>", "<=>"})

MAX_NAME = 64


@dataclass(frozen=True)
class Token:
    kind: str  # NAME, NUMBER, OP; ERROR: a character that cannot be read (value: why)
    value: str
    line: int
    col: int


@dataclass(frozen=True)
class Line:
    indent: int
    tokens: tuple
    number: int
    text: str  # the source line without its comment, stripped


_DIGITS = frozenset("0123456789")


def _is_name_start(ch: str) -> bool:
    return ch == "_" or ch.isalpha()


def _is_name_char(ch: str) -> bool:
    return ch == "_" or ch == "⋆" or ch.isalpha() or ch in _DIGITS


# What str.splitlines() also takes for a line break.  A .proof file breaks lines at \n (and \r\n,
# \r) only; these are refused, so that no text an editor shows as a comment is read as code.
_OTHER_LINE_BREAKS = frozenset("\v\f\x1c\x1d\x1e\x85\u2028\u2029")


def source_lines(source: str) -> list:
    """The lines of a .proof file: broken at \n, \r\n and \r only."""
    return source.replace("\r\n", "\n").replace("\r", "\n").split("\n")


def read_source(path, shown: str | None = None) -> str:
    """The text of a .proof file: UTF-8, without a leading byte-order mark.  A file that is not
    UTF-8 raises UnreadableSource (a ProofSyntaxError) at the first byte that is not (line and column of the text
    before it); a file that cannot be read raises OSError."""
    data = Path(path).read_bytes()
    shown = str(path) if shown is None else shown
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        before = source_lines(data[:exc.start].decode("utf-8"))
        raise UnreadableSource(f"the file is not UTF-8 text: byte 0x{data[exc.start]:02x} at "
                               f"byte offset {exc.start} cannot be read: save the file as "
                               f"UTF-8", shown, len(before), len(before[-1]) + 1) from None
    return text[len(BOM):] if text.startswith(BOM) else text


def tokenize(source: str, path: str = "<string>") -> list:
    """Return the non-blank lines of source as Line objects."""
    if source.startswith(BOM):  # invisible: column 1 is the first character one sees
        source = source[len(BOM):]
    if "\x00" in source:
        raise ProofSyntaxError("the file contains a NUL byte", path, 1, 1)
    lines = []
    for number, raw in enumerate(source_lines(source), start=1):
        for col, char in enumerate(raw, start=1):
            if char in _OTHER_LINE_BREAKS:
                raise ProofSyntaxError(f"the character U+{ord(char):04X} breaks lines in some "
                                       f"editors and not in others: remove it", path, number,
                                       col, raw.strip())
        code = raw.split("#", 1)[0].rstrip()
        if not code.strip():
            continue
        indent = 0
        for ch in code:
            if ch == " ":
                indent += 1
            elif ch == "\t":
                indent += 8 - indent % 8
            else:
                break
        tokens = []
        try:
            _tokenize_line(code, number, path, tokens)
        except ProofSyntaxError as exc:
            # Kept as an ERROR token after what was read: the parser raises it when it reads
            # the line, so a bad character in a step fails that lemma only.
            tokens.append(Token("ERROR", exc.message, number, exc.column))
        lines.append(Line(indent, tuple(tokens), number, code.strip()))
    return lines


def _tokenize_line(code: str, number: int, path: str, tokens: list) -> list:
    """Append the tokens of one line to tokens (those before an error stay there)."""
    i, n = 0, len(code)
    while i < n:
        ch = code[i]
        if ch in " \t\r\f\v":
            i += 1
            continue
        col = i + 1
        if _is_name_start(ch):
            j = i
            while j < n and _is_name_char(code[j]):
                j += 1
            raw = code[i:j]
            name = "".join(GREEK.get(c, c) for c in raw)
            if not name.isascii():
                raise ProofSyntaxError("names use ASCII letters, digits, _ and Greek letters",
                                       path, number, col, raw)
            if len(name) > MAX_NAME:
                raise ProofSyntaxError(f"a name is longer than {MAX_NAME} characters",
                                       path, number, col, raw[:MAX_NAME] + "...")
            tokens.append(Token("NAME", name, number, col))
            i = j
            continue
        if ch in _DIGITS or (ch == "." and i + 1 < n and code[i + 1] in _DIGITS):
            j = i
            while j < n and code[j] in _DIGITS:
                j += 1
            if j < n and code[j] == "." and j + 1 < n and code[j + 1] in _DIGITS:
                j += 1
                while j < n and code[j] in _DIGITS:
                    j += 1
            if j - i > 40:
                raise ProofSyntaxError("a number has more than 40 digits", path, number, col,
                                       code[i:j])
            tokens.append(Token("NUMBER", code[i:j], number, col))
            i = j
            continue
        for text, value in _SYMBOLS_AT.get(ch, ()):
            if code.startswith(text, i):
                tokens.append(Token("OP", value, number, col))
                i += len(text)
                break
        else:
            raise ProofSyntaxError(f"unexpected character {ch!r}", path, number, col,
                                   code.strip())
    return tokens
