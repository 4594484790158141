"""Read a Markdown or LaTeX document into the .proof syntax tree, and count what was read.

The document's novikoff blocks hold the setting (in .proof syntax), a notation table, a reasons
table and lemma lines; the display after a lemma line, or a display tagged `\\tag{NAME}` or
`\\label{NAME}`, is a claim, checked link by link.  Every other display is read and counted, not
checked.  A claim with a line the grammar cannot read becomes a lemma with that positioned error
(so the document is reported malformed, never partly passed).
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field
from fractions import Fraction

from ..errors import ProofSyntaxError
from ..language import ast as A
from ..language.parser import parse, parse_citations, parse_formula_at
from .document import Block, Display, Positions, Prose, scan
from .latex import ARROWS, RELATIONS, NotUnderstood, parse_line, split_lines, tokenize
from .notation import Typer, read_row, replace_name, show

__all__ = ["NotesFile", "read_notes"]

_TAG = re.compile(r"\\(?:tag|label)\*?\{([^{}]*)\}")
_CLAIM_TAG = re.compile(r"^(?:[A-Za-z]+:)?([A-Za-z][A-Za-z0-9_-]*)$")
_JUSTIFY = re.compile(r"\\(?:text|textrm|mbox)\{\s*\(?\s*((?:by|since|using|from)\b[^{}]*)\}"
                      r"[\s.,;]*$")
_PROSE_REASON = re.compile(r"^\s*(by|since)\b", re.I)
_REASON_ROW = re.compile(r'^"([^"]+)"\s*->\s*(.+)$')
_ENV_OPEN = re.compile(r"\\begin\{(lemma|theorem|proposition|corollary|claim)\}")
_END_PROOF = r"\end{proof}"
_LABEL = re.compile(r"\\label\{([^{}]*)\}")
_INNER_ENV = re.compile(r"\\(?:begin|end)\{(?:aligned|split|gathered)\}")
_MARKS = ("> novikoff:", ">   ")  # the lines `novikoff report` adds to a Markdown copy
# `induction on k: base by A; step by B` (the step one link, from the hypothesis and B), or
# `induction on k: base by A` on a lemma line that states the claim: the display after it is
# the step's derivation, from the statement at k+1's left side to its right side.
_INDUCTION = re.compile(r"^induction on ([A-Za-z_][A-Za-z0-9_]*)\s*:\s*base by (.+?)"
                        r"(?:\s*;\s*step by (.+))?$")


@dataclass
class NotesFile(A.ProofFile):
    """A document read as a proof file, with what was read and what was not."""

    summary: dict = field(default_factory=dict)
    not_understood: list = field(default_factory=list)  # (line, col, message) of unread links


@dataclass(frozen=True)
class _ProofEnv:
    """A lemma (theorem, ...) environment followed by its proof environment: offsets."""

    env: str
    start: int
    statement: str
    proof_start: int
    proof_end: int


def _proof_environments(source: str) -> list:
    """Each `\\begin{lemma}...\\end{lemma} \\begin{proof}...\\end{proof}`, left to right, the
    nearest ends first (as a lazy regex would find them, without its quadratic rescans)."""
    out, pos, exhausted = [], 0, set()
    while True:
        m = _ENV_OPEN.search(source, pos)
        if m is None:
            return out
        env = m.group(1)
        joint = None if env in exhausted else re.compile(
            r"\\end\{" + env + r"\}\s*\\begin\{proof\}").search(source, m.end())
        if joint is None:
            exhausted.add(env)
            pos = m.start() + 1
            continue
        end = source.find(_END_PROOF, joint.end())
        if end < 0:  # no later environment has a proof that ends either
            return out
        out.append(_ProofEnv(env, m.start(), source[m.end():joint.start()], joint.end(), end))
        pos = end + len(_END_PROOF)


@dataclass
class _LemmaLine:
    kind: str
    name: str
    statement: object  # a Rel/Connective, or None: the derivation's conclusion
    givens: list
    cites: list
    xfail: set
    induction: tuple | None  # (var, base cites, step cites or None: the display is the step)
    pos: A.Pos
    setting: str
    link_cites: dict = field(default_factory=dict)  # link number (from 1) -> its own citations
    holds: list | None = None  # `holds by CITES`: the statement in one link, with no display


@dataclass
class _Tables:
    rows: list = field(default_factory=list)
    reasons: list = field(default_factory=list)  # (text lowercased, value, offset)


@dataclass
class _Link:
    op: str  # a relation, or "hence"
    rhs: object
    pos: A.Pos
    text: str
    cites: list = field(default_factory=list)


def read_notes(source: str, path: str, markdown: bool | None = None) -> NotesFile:
    """Read a .md (markdown=True) or .tex document.  Raises ProofSyntaxError for an error in a
    novikoff block (the whole document is then unreadable)."""
    if markdown is None:
        markdown = not path.endswith(".tex")
    return _Reader(source, path, markdown).read()


class _Reader:
    def __init__(self, source: str, path: str, markdown: bool):
        self.source = source
        self.path = path
        self.markdown = markdown
        self.position = Positions(source)
        self.lines = source.split("\n")
        self.tables = _Tables()
        self.kinds_of: dict = {}  # setting name -> {symbol: kind}
        self.setting: str | None = None
        self.pending: _LemmaLine | None = None
        self.out = NotesFile(path, [], [], [])
        self.counts = {"displays": 0, "inline math": 0, "derivations": 0, "links": 0,
                       "links read": 0, "links not understood": 0, "claims": 0,
                       "links checked": 0, "displays not checked": 0}

    def pos(self, offset: int) -> A.Pos:
        return A.Pos(*self.position(offset))

    def error(self, message: str, offset: int) -> ProofSyntaxError:
        line, col = self.position(offset)
        return ProofSyntaxError(message, self.path, line, col,
                                self.lines[line - 1].strip() if line <= len(self.lines) else "")

    # ------------------------------------------------------------------ the document

    def read(self) -> NotesFile:
        events, inline = scan(self.source, self.markdown)
        self.counts["inline math"] = inline
        self._settings(events)
        groups = []  # [displays], the prose after them, the lemma line before them
        # LaTeX's lemma and proof environments, also where a Markdown document keeps them (a
        # LaTeX document rewritten as Markdown, `novikoff report --format md`)
        proofs = _proof_environments(self.source)
        for k, event in enumerate(events):
            if isinstance(event, Block):
                self._block(event)
            elif isinstance(event, Display):
                self.counts["displays"] += 1
                continues = self._starts_with_relation(event)
                proof = next((m for m in proofs if m.proof_start <= event.offset
                              < m.proof_end), None)
                if proof is not None and self.pending is None:
                    if groups and groups[-1].get("proof") is proof:
                        continues = True
                    else:  # the first display of a lemma environment's proof: its claim
                        self.pending = self._environment_lemma(proof)
                if continues and groups and groups[-1]["open"] and self.pending is None:
                    groups[-1]["displays"].append(event)
                    groups[-1]["prose"].append(None)
                else:
                    if groups:
                        groups[-1]["open"] = False
                    groups.append({"displays": [event], "prose": [None], "open": True,
                                   "lemma": self.pending, "setting": self.setting,
                                   "proof": proof,
                                   "rows": list(self.tables.rows),
                                   "reasons": list(self.tables.reasons)})
                    self.pending = None
            elif isinstance(event, Prose):
                if event.text.startswith(_MARKS):  # a report's marks: read as if absent
                    continue
                # "by ..." / "since ..." right after a display justifies its links
                if groups and groups[-1]["open"] and groups[-1]["prose"][-1] is None and \
                        _PROSE_REASON.match(event.text):
                    groups[-1]["prose"][-1] = event
                if not _PROSE_REASON.match(event.text) and len(event.text) > 80 and groups:
                    groups[-1]["open"] = False  # a paragraph ends a derivation
        if self.pending is not None:
            raise self.error(f"{self.pending.kind} {self.pending.name} has no display after it",
                             self._offset_of(self.pending.pos))
        for group in groups:
            self._group(group)
        self.out.lemmas.sort(key=lambda lemma: (lemma.pos.line, lemma.pos.col))
        self.out.summary = dict(self.counts)
        return self.out

    def _environment_lemma(self, m) -> _LemmaLine:
        """The claim of a lemma (theorem, ...) environment followed by its proof: named by its
        \\label (`lem:progress` is `progress`), else by the environment and its line."""
        if self.setting is None:
            raise self.error(f"the {m.env} needs a novikoff block with a setting above it",
                             m.start)
        line, _ = self.position(m.start)
        label = _LABEL.search(m.statement)
        name = f"{m.env}_line_{line}"
        if label is not None and _CLAIM_TAG.match(label.group(1).strip()):
            name = _CLAIM_TAG.match(label.group(1).strip()).group(1).replace("-", "_")
        kind = "theorem" if m.env == "theorem" else "lemma"
        return _LemmaLine(kind, name, None, [], [], set(), None, self.pos(m.start),
                          self.setting)

    def _offset_of(self, pos: A.Pos) -> int:
        return self.position.starts[pos.line - 1] + pos.col - 1

    @staticmethod
    def _starts_with_relation(display: Display) -> bool:
        toks = [t for t in tokenize(_INNER_ENV.sub(" ", display.text)) if t.value != "&"]
        return bool(toks) and (toks[0].value in RELATIONS or toks[0].value in ARROWS)

    # ------------------------------------------------------------------ novikoff blocks

    def _settings(self, events) -> None:
        """Every setting and import of every block, parsed as .proof text in place."""
        text = [""] * len(self.lines)
        shift = {}  # line -> columns the line's text starts after (a `%` comment block's "% ")
        for event in events:
            if not isinstance(event, Block):
                continue
            inside = False  # in a setting's indented body
            for raw, off in event.lines:
                if not raw.strip():
                    continue
                top = raw[:1] not in (" ", "\t")
                if top:  # a setting or an import starts; anything else ends a setting
                    inside = raw.split(" ", 1)[0] == "setting"
                    if not inside and raw.split(" ", 1)[0] != "from":
                        continue
                elif not inside:
                    continue
                line, col = self.position(off)
                text[line - 1] = raw
                shift[line] = col - 1
        pseudo = "\n".join(text)
        if not pseudo.strip():
            raise ProofSyntaxError("no novikoff block with a setting: a document is checked "
                                   "against the setting its novikoff block declares",
                                   self.path, 1, 1)
        try:
            tree = _shifted(parse(pseudo, self.path), shift)
        except ProofSyntaxError as exc:
            raise ProofSyntaxError(exc.message, exc.file, exc.line,
                                   exc.column + shift.get(exc.line, 0), exc.text) from None
        self.out.imports, self.out.settings = tree.imports, tree.settings
        for setting in tree.settings:
            kinds = {d.name: d.kind for d in setting.decls}
            kinds.update({d.name: "real" for d in setting.defines})
            self.kinds_of[setting.name] = kinds

    def _block(self, block: Block) -> None:
        section = None
        self._finish_pending()
        for raw, off in block.lines:
            stripped = raw.strip()
            if not stripped or stripped.startswith("#"):
                continue
            lead = len(raw) - len(raw.lstrip())
            start = off + lead
            indented = lead > 0
            if not indented:
                head = stripped.split(" ", 1)[0].rstrip(":")
                if head == "setting":
                    name = stripped[len("setting"):].strip().rstrip(":").strip()
                    if self.pending is not None:
                        raise self.error(f"{self.pending.kind} {self.pending.name} has no "
                                         f"display after it", start)
                    self.setting, section = name, "setting"
                elif head == "from":
                    section = "from"
                elif stripped in ("notation:", "reasons:"):
                    section = stripped[:-1]
                elif head in ("lemma", "theorem"):
                    section = "lemma"
                    self._finish_pending()
                    self._lemma_line(stripped, start)
                else:
                    raise self.error("expected a setting, 'notation:', 'reasons:' or a lemma "
                                     "line in a novikoff block", start)
                continue
            if section == "notation":
                self.tables.rows.append(read_row(stripped, start, self.path, self.position))
            elif section == "reasons":
                self._reason_row(stripped, start)
            elif section == "lemma":
                self._lemma_option(stripped, start)
            elif section not in ("setting", "from"):
                raise self.error("unexpected indentation in a novikoff block", start)
        self._finish_pending()

    def _finish_pending(self) -> None:
        """A lemma line with a statement proved by induction, or that `holds by` what it cites,
        needs no display: check it now."""
        head = self.pending
        if head is None or head.statement is None:
            return
        if head.holds is None and (head.induction is None or head.induction[2] is None):
            return  # the display after it is the claim (or the induction step's derivation)
        self.pending = None
        self.counts["claims"] += 1
        lemma = A.Lemma(head.kind, head.name, head.statement, list(head.givens), None,
                        head.setting, head.pos)
        try:
            if head.holds is not None:
                if head.induction is not None:
                    raise self.error("a claim holds by its citations or by an induction, not "
                                     "both", self._offset_of(head.pos))
                lemma.proof = self._one_link(head)
            else:
                lemma.proof = self._induction(head.statement, head.induction, head.pos,
                                              head.xfail)
        except ProofSyntaxError as exc:
            lemma.error = exc
        self.out.lemmas.append(lemma)

    def _one_link(self, head: _LemmaLine) -> A.Proof:
        """`lemma NAME: STATEMENT` with `holds by CITES`: one link, the statement by them."""
        statement = head.statement
        if not isinstance(statement, A.Rel):
            raise self.error("`holds by` proves a single relation", self._offset_of(head.pos))
        bad = sorted(n for n in head.xfail | set(head.link_cites) if n != 1)
        if bad:
            raise self.error(f"link {bad[0]}: a claim that holds by its citations has 1 link",
                             self._offset_of(head.pos))
        step = A.Step(statement.op, statement.rhs, list(head.holds) + head.link_cites.get(1, []),
                      1 in head.xfail, head.pos, show(statement))
        return A.Proof("direct", items=[A.Chain(None, statement.lhs, [step], head.pos)],
                       pos=head.pos)

    def _reason_row(self, text: str, offset: int) -> None:
        m = _REASON_ROW.match(text)
        value = None if m is None else self._reason_value(m.group(2).strip(),
                                                          offset + m.start(2))
        if value is None or (value[0] == "induction" and value[3] is None):
            raise self.error('a reasons row is `"prose" -> names` (or `-> induction on k: '
                             'base by ...; step by ...`)', offset)
        self.tables.reasons.append((m.group(1).lower(), value, offset))

    def _reason_value(self, value: str, offset: int):
        ind = _INDUCTION.match(value)
        line, col = self.position(offset)
        if ind is not None:
            base = parse_citations(ind.group(2), self.path, line, col + ind.start(2))
            step = None if ind.group(3) is None else \
                parse_citations(ind.group(3), self.path, line, col + ind.start(3))
            return ("induction", ind.group(1), base, step)
        return ("cites", parse_citations(value, self.path, line, col))

    def _lemma_line(self, text: str, offset: int) -> None:
        if self.setting is None:
            raise self.error("a lemma line needs a setting above it", offset)
        if self.pending is not None:
            raise self.error(f"{self.pending.kind} {self.pending.name} has no display after it",
                             offset)
        kind, rest = text.split(" ", 1) if " " in text else (text, "")
        name, _, statement = rest.partition(":")
        name = name.strip()
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
            raise self.error(f"expected the {kind}'s name", offset)
        formula = None
        if statement.strip():
            line, col = self.position(offset + text.index(":") + 1)
            formula = parse_formula_at(statement, self.path, line, col)
        self.pending = _LemmaLine(kind, name, formula, [], [], set(), None, self.pos(offset),
                                  self.setting)

    def _lemma_option(self, text: str, offset: int) -> None:
        lemma = self.pending
        if lemma is None:
            raise self.error("an indented line with no lemma line above it", offset)
        line, col = self.position(offset)
        word = text.split(" ", 1)[0]
        rest = text[len(word):].strip()
        rest_col = col + len(text) - len(rest)
        if word == "by":
            lemma.cites += parse_citations(rest, self.path, line, rest_col)
        elif word == "holds" and rest.split(" ", 1)[0] == "by":
            if lemma.statement is None:
                raise self.error("`holds by` needs the statement on the lemma line "
                                 "(`lemma NAME: STATEMENT`)", offset)
            after = rest[2:].strip()
            lemma.holds = (lemma.holds or []) + parse_citations(
                after, self.path, line, rest_col + len(rest) - len(after))
        elif word == "link":
            m = re.match(r"^(\d+)\s+by\s+(.+)$", rest)
            if m is None or int(m.group(1)) < 1:
                raise self.error("write `link N by NAMES` (N counts the display's links from 1)",
                                 offset)
            lemma.link_cites.setdefault(int(m.group(1)), []).extend(parse_citations(
                m.group(2), self.path, line, rest_col + m.start(2)))
        elif word == "given":
            name, _, formula = rest.partition(":")
            fcol = rest_col + rest.index(":") + 1 if ":" in rest else rest_col
            lemma.givens.append((name.strip(), parse_formula_at(formula, self.path, line, fcol),
                                 A.Pos(line, rest_col)))
        elif word == "xfail":
            try:
                lemma.xfail |= {int(n) for n in rest.replace(",", " ").split()}
            except ValueError:
                raise self.error("xfail takes the numbers of the links expected to fail "
                                 "(1 is the display's first)", offset) from None
        elif word == "induction":
            value = self._reason_value(text, offset)
            if value[0] != "induction":
                raise self.error("expected `induction on k: base by ...; step by ...`", offset)
            lemma.induction = value[1:]
        else:
            raise self.error("a lemma line takes `by NAMES`, `link N by NAMES`, `given NAME: "
                             "FORMULA`, `xfail N`, `holds by NAMES` or `induction on k: base "
                             "by ...; step by ...`", offset)

    # ------------------------------------------------------------------ displays

    def _group(self, group: dict) -> None:
        displays, lemma_line = group["displays"], group["lemma"]
        setting = group["setting"]
        kinds = self.kinds_of.get(setting, {}) if setting else None
        typer = Typer(kinds or {}, group["rows"], self.position) if kinds is not None else None
        reasons = group["reasons"]
        tag = None
        parsed_lines, problems, links = [], [], 0
        for index, display in enumerate(displays):
            body = display.text
            for m in _TAG.finditer(body):
                found = _CLAIM_TAG.match(m.group(1).strip())
                if found is not None and tag is None:
                    tag = found.group(1).replace("-", "_")
            body = _TAG.sub(lambda m: " " * len(m.group(0)), body)
            body = _INNER_ENV.sub(lambda m: " " * len(m.group(0)), body)
            for line_toks in split_lines(tokenize(body, display.offset)):
                parsed = self._line(line_toks, display, typer, reasons)
                parsed["display"] = index
                links += parsed["links"]
                if parsed["error"] is not None:
                    problems.append(parsed["error"])
                parsed_lines.append(parsed)
        claim = lemma_line is not None or tag is not None
        self.counts["links"] += links
        if links >= 2:
            self.counts["derivations"] += 1
        unread = sum(p["links"] for p in parsed_lines if p["error"] is not None)
        self.counts["links not understood"] += unread
        self.counts["links read"] += links - unread
        for off, message in problems:
            line, col = self.position(off)
            self.out.not_understood.append((line, col, message))
        if not claim:
            self.counts["displays not checked"] += len(displays)
            return
        self.counts["claims"] += 1
        if lemma_line is None:
            if setting is None:
                raise self.error(f"the claim {tag} needs a novikoff block with a setting "
                                 f"above it", displays[0].offset)
            lemma_line = _LemmaLine("lemma", tag, None, [], [], set(), None,
                                    self.pos(displays[0].offset), setting)
        self.out.lemmas.append(self._lemma(lemma_line, parsed_lines, problems, group, reasons))
        self.counts["links checked"] += links if not problems else 0

    def _line(self, toks: list, display: Display, typer, reasons) -> dict:
        """One line of a display: its parts, the justification at its end, its links."""
        first, last = toks[0].offset, toks[-1].offset
        text = self.source[first:last + len(toks[-1].value)].strip()
        cites, error = [], None
        raw = self.source[first:last + len(toks[-1].value)]
        m = _JUSTIFY.search(raw)
        if m is not None:
            cut = first + m.start()
            toks = [t for t in toks if t.offset < cut]
            try:
                cites = self._reasons_for(m.group(1), first + m.start(1), reasons)
            except ProofSyntaxError as exc:
                error = (first + m.start(1), exc.message)
        # trailing punctuation of the sentence the display ends
        while toks and toks[-1].value in (".", ",", ";"):
            toks = toks[:-1]
        links = sum(1 for t in toks if t.value in RELATIONS)  # a link: one relation
        parts = []
        if error is None and toks:
            try:
                for part in parse_line(toks, last + 1):
                    if part[0] == "expr" and typer is not None:
                        parts.append(("expr", typer.convert(part[1]), part[1].offset))
                    elif part[0] == "expr":
                        parts.append(("expr", None, part[1].offset))
                    else:
                        parts.append(part)
            except NotUnderstood as exc:
                error = (exc.offset, f"not understood: {exc.message}")
            except RecursionError:
                error = (first, "not understood: the math nests too deeply")
        end = toks[-1].offset + len(toks[-1].value) if toks else first
        return {"parts": parts, "cites": cites, "error": error, "links": links, "text": text,
                "offset": first, "end": end}

    def _reasons_for(self, prose: str, offset: int, reasons) -> list:
        """The citations a prose justification stands for, through the reasons table."""
        low = prose.lower()
        cites = []
        for key, value, _ in reasons:
            if key in low:
                if value[0] != "cites":
                    raise self.error(f"an induction (\"{key}\") justifies a claim of its own, "
                                     f"not a link", offset)
                cites += value[1]
        if cites:
            return cites
        words = re.sub(r"^\s*(by|since|using|from)\s+", "", prose, flags=re.I).strip()
        if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*(\s*,\s*[A-Za-z_][A-Za-z0-9_]*)*", words):
            line, col = self.position(offset + prose.index(words))
            return parse_citations(words, self.path, line, col)
        raise self.error(f"not understood: the justification \"{prose.strip()}\" is in no row "
                         f"of the reasons table", offset)

    def _induction_for(self, prose, reasons):
        low = prose.lower()
        for key, value, _ in reasons:
            if key in low and value[0] == "induction":
                return value[1:]
        return None

    # ------------------------------------------------------------------ lemmas

    def _lemma(self, head: _LemmaLine, lines: list, problems: list, group: dict,
               reasons) -> A.Lemma:
        lemma = A.Lemma(head.kind, head.name, head.statement, list(head.givens), None,
                        head.setting, head.pos)
        try:
            if problems:
                off, message = problems[0]
                raise self.error(message, off)
            shared = list(head.cites)
            induction = head.induction
            proses = group["prose"]
            if len(proses) == 1 and proses[0] is not None and induction is None:
                induction = self._induction_for(proses[0].text, reasons)
            for line in lines:  # the prose after a display justifies each of its links
                prose = proses[line["display"]]
                if prose is not None and not (induction is not None and len(proses) == 1):
                    line["prose cites"] = self._reasons_for(prose.text, prose.offset, reasons)
            stepwise = induction is not None and induction[2] is None
            items, last = self._items(lines, shared, head.xfail if induction is None or stepwise
                                      else set(), head.link_cites)
            if stepwise and head.statement is None:
                raise self.error("an induction whose step is the display needs the statement "
                                 "on the lemma line (`lemma NAME: STATEMENT`)",
                                 self._offset_of(head.pos))
            if head.statement is None:
                lemma.statement = last
            if stepwise:
                lemma.proof = self._induction(lemma.statement, induction, head.pos, steps=items)
            elif induction is not None:
                lemma.proof = self._induction(lemma.statement, induction, head.pos, head.xfail)
            else:
                lemma.proof = A.Proof("direct", items=items, pos=head.pos)
        except ProofSyntaxError as exc:
            if lemma.statement is None:
                lemma.statement = A.Rel("=", None, None, head.pos, "")
                lemma.stated = False
            lemma.error = exc
        return lemma

    def _items(self, lines: list, shared: list, xfail: set, link_cites=None) -> tuple:
        """The chains and hence lines of a claim's displays; the formula they show."""
        chains = []  # [first expr, [links], is_hence, pos]
        for line in lines:
            parts, after_arrow = line["parts"], False
            if not parts:
                continue
            if parts[0][0] == "rel" and not chains:
                raise self.error("a continuation line with no chain above it", line["offset"])
            for k, part in enumerate(parts):
                if part[0] == "arrow":
                    after_arrow = bool(chains)  # an arrow that opens the claim: a chain
                elif part[0] == "expr":
                    if k == 0 or parts[k - 1][0] == "arrow":
                        chains.append([part[1], [], after_arrow, self.pos(part[2])])
                        after_arrow = False
                elif part[0] == "rel":
                    if k + 1 >= len(parts) or parts[k + 1][0] != "expr":
                        raise self.error("a relation with nothing after it", part[2])
                    chains[-1][1].append(_Link(part[1], parts[k + 1][1], self.pos(part[2]),
                                               self._link_text(parts, k, line),
                                               list(line.get("prose cites", []))))
            if chains and chains[-1][1]:
                chains[-1][1][-1].cites += line["cites"]
        items, last, number = [], None, 0
        for first, links, is_hence, pos in chains:
            if not links:
                raise self.error("an expression with no relation", self._offset_of(pos))
            if is_hence and len(links) == 1:
                number += 1
                link = links[0]
                rel = A.Rel(link.op, first, link.rhs, pos, "")
                rel = dataclasses.replace(rel, text=show(rel))
                own = (link_cites or {}).get(number, [])
                items.append(A.Hence(rel, self._cites(link.cites + own + shared),
                                     number in xfail, pos, link.text))
                last = rel
                continue
            steps = []
            for link in links:
                number += 1
                own = (link_cites or {}).get(number, [])
                steps.append(A.Step(link.op, link.rhs, self._cites(link.cites + own + shared),
                                    number in xfail, link.pos, link.text))
            items.append(A.Chain(None, first, steps, pos))
            rel = A.Rel(_weakest([s.op for s in steps], pos, self), first, steps[-1].rhs, pos,
                        "")
            last = dataclasses.replace(rel, text=show(rel))
        if last is None:
            raise self.error("the claim's display has no relation", 0)
        bad = sorted(n for n in xfail if n > number)
        if bad:
            raise self.error(f"xfail {bad[0]}: the display has {number} link(s)",
                             self._offset_of(chains[0][3]))
        bad = sorted(n for n in (link_cites or {}) if n > number)
        if bad:
            raise self.error(f"link {bad[0]}: the display has {number} link(s)",
                             self._offset_of(chains[0][3]))
        return items, last

    def _link_text(self, parts: list, k: int, line: dict) -> str:
        """The source of one link: from its relation to the next relation (or the line's end)."""
        start = parts[k][2]
        ends = [p[2] if p[0] != "arrow" else p[1] for p in parts[k + 1:] if p[0] != "expr"]
        end = ends[0] if ends else line["end"]
        return " ".join(self.source[start:end].split()).rstrip(".,; ")

    @staticmethod
    def _cites(cites: list) -> list:
        seen, out = set(), []
        for c in cites:
            key = (c.name, c.args, c.at)
            if key not in seen:
                seen.add(key)
                out.append(c)
        return out

    def _induction(self, statement, induction: tuple, pos: A.Pos, xfail=(),
                   steps=None) -> A.Proof:
        """A proof by induction from the claim: the base by its citations, the step from the
        statement at var (ih) and the step's citations (xfail 1: the base, 2: the step), or
        the step's derivation `steps` (the display's chains, which may cite ih)."""
        var, base_cites, step_cites = induction
        if not isinstance(statement, A.Rel):
            raise self.error("an induction proves a single relation", self._offset_of(pos))
        name = A.Name(var, pos)
        at_zero = replace_name(statement, var, A.Num(Fraction(0), pos))
        at_next = replace_name(statement, var, A.BinOp("+", name, A.Num(Fraction(1), pos), pos))
        ih = A.Cite("ih", (), pos)
        base = [A.Chain(None, at_zero.lhs, [A.Step(at_zero.op, at_zero.rhs, list(base_cites),
                                                   1 in xfail, pos, show(at_zero))], pos)]
        step = steps if steps is not None else \
            [A.Chain(None, at_next.lhs, [A.Step(at_next.op, at_next.rhs, [ih] + list(step_cites),
                                                2 in xfail, pos, show(at_next))], pos)]
        return A.Proof("induction", var=name, base=base, step=step, pos=pos)


def _shifted(tree, shift: dict):
    """tree with the column of every position on a shifted line moved right by its shift."""
    if isinstance(tree, A.Pos):
        return A.Pos(tree.line, tree.col + shift.get(tree.line, 0))
    if isinstance(tree, list):
        return [_shifted(t, shift) for t in tree]
    if isinstance(tree, tuple):
        return tuple(_shifted(t, shift) for t in tree)
    if dataclasses.is_dataclass(tree):
        return dataclasses.replace(tree, **{f.name: _shifted(getattr(tree, f.name), shift)
                                            for f in dataclasses.fields(tree) if f.init})
    return tree


def _weakest(ops: list, pos: A.Pos, reader: _Reader) -> str:
    kinds = set(ops) - {"="}
    if not kinds:
        return "="
    if kinds <= {"<", "<="}:
        return "<" if "<" in kinds else "<="
    if kinds <= {">", ">="}:
        return ">" if ">" in kinds else ">="
    if kinds == {"!="} and ops.count("!=") == 1:
        return "!="
    raise reader.error("the chain mixes relations that do not compose (<= with >=, or !=)",
                       reader._offset_of(pos))
