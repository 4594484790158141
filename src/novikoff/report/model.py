"""The annotated document of one checked .proof file, before it is written in any format.

The structure comes from parsing the file again (the checker's reports keep positions and text,
not trees); the outcome of every check comes from the FileReport and is placed on the row of the
line it was made at.  Every formula is typeset here (math boxes); the writers only serialise.
Nothing here judges anything: a status is the checker's.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from ..checker import FileReport, StepReport, exit_code  # the verdict is `novikoff check`'s
from ..errors import ProofSyntaxError, UnreadableSource
from ..language import ast as A
from ..language.elaborate import BUILTIN_FACTS
from ..language.lexer import read_source, source_lines
from ..language.parser import parse, parse_term
from .terminal import summary_counts
from .boxes import Number, Op, Row as MathRow, Text, joined
from .notation import Typesetter, symbol

__all__ = ["Document", "Item", "Row", "Cite", "Check", "build", "anchor", "worst",
           "STATUSES"]

# The order of gravity: a row shows the worst of its checks.
STATUSES = ("failed", "unknown", "expected_failure", "verified", "unchecked")
DECLARATIONS = {  # kind -> (one, several)
    "vector": ("vector", "vectors"),
    "vector_sequence": ("sequence of vectors", "sequences of vectors"),
    "real": ("real", "reals"), "real_sequence": ("sequence of reals", "sequences of reals"),
    "label_sequence": ("sequence of labels", "sequences of labels"),
    "label": ("label in {−1, +1}", "labels in {−1, +1}"),
    "label01": ("label in {0, 1}", "labels in {0, 1}"),
    "label01_sequence": ("sequence of labels in {0, 1}", "sequences of labels in {0, 1}"),
    "nat": ("natural number", "natural numbers")}
_DOMAIN = re.compile(r"(division by|square root of|index|a sum of) (.+?)(?: terms)?, which may "
                     r"be (?:zero|negative)")
_HINT = "; it would hold with: "


def worst(statuses) -> str | None:
    present = [s for s in statuses if s is not None]
    return min(present, key=lambda s: STATUSES.index(s) if s in STATUSES else 0, default=None)


def anchor(kind: str, *names: str) -> str:
    """An anchor id made of ASCII letters, digits, '_' and '-' (names are proof names, but a
    lemma that did not parse may be called '<lemma at line 5>')."""
    parts = [kind] + ["".join(c if c.isascii() and (c.isalnum() or c == "_") else "-"
                              for c in n) for n in names]
    return "-".join(parts)


@dataclass
class Cite:
    """A citation: its name, where it links to, and what it is applied to (boxes)."""

    name: str
    href: tuple | None = None  # ("here", anchor) or (document name, anchor)
    args: tuple = ()
    at: tuple | None = None  # (the nat, the value): NAME[k := e]


@dataclass
class Check:
    """One of the checker's StepReports, with what a reader needs beside its status."""

    step: StepReport
    why: str = ""  # the reason, without the hint (shown apart, with links)
    hint: list = field(default_factory=list)  # Cites: the facts that would make it hold
    domain: object = None  # the failed condition of meaning as a box (2‖wᵢ‖ ≠ 0)
    counterexample: list = field(default_factory=list)  # (box, box)
    context: str = ""  # what was checked, when it is not the row's own line

    @property
    def status(self) -> str:
        return self.step.status


@dataclass
class Row:
    """A line of the document: a step of a proof, a heading, a line of a setting."""

    kind: str  # statement | given | chain | continue | formula | heading | case | setting | text
    depth: int = 0
    line: int | None = None
    label: str = ""
    lhs: object = None  # box: the left side of a chain's first line
    rhs: object = None  # box: "REL rhs" of a chain line, or a formula
    cites: list = field(default_factory=list)
    xfail: bool = False
    source: str = ""  # the line as written (shown for rows with no math)
    anchor: str | None = None
    comments: list = field(default_factory=list)  # paragraphs of the comments above the line
    remark: str = ""  # the comment at the end of the line
    checks: list = field(default_factory=list)

    @property
    def status(self) -> str | None:
        return worst(c.status for c in self.checks)

    @property
    def basis(self) -> str:
        """What a verified line rests on: 'certified' when every check of it replayed a
        certificate, 'solver' when one rests on a solver alone; '' when not verified."""
        if self.status != "verified":
            return ""
        bases = {getattr(c.step, "basis", "") for c in self.checks}
        return "certified" if bases == {"certified"} else "solver"


@dataclass
class Item:
    """A setting, a lemma or theorem, a claim, or an import."""

    kind: str  # setting | lemma | theorem | claim | import
    name: str
    anchor: str
    line: int
    status: str | None = None
    reason: str = ""
    prose: str = ""  # a claim's statement, in words
    head: list = field(default_factory=list)  # Rows: the statement and the givens
    rows: list = field(default_factory=list)  # Rows: the proof, or the setting's lines
    comments: list = field(default_factory=list)
    error: ProofSyntaxError | None = None
    listing: list = field(default_factory=list)  # (line, text): the source of a broken item
    other_checks: list = field(default_factory=list)  # Checks made at no row's line


@dataclass
class Document:
    title: str
    path: str
    status: str  # ok | failed | malformed: what `novikoff check` would exit with; not-checked
    counts: dict
    error: ProofSyntaxError | None = None
    intro: list = field(default_factory=list)  # paragraphs of the file's first comment
    items: list = field(default_factory=list)
    listing: list = field(default_factory=list)  # (line, text): a file that does not parse
    summary: list = field(default_factory=list)  # (name, earned, max, note, anchor or None)
    not_checked: str = ""  # why the file was not checked (unreadable, timed out), with status


def build(report: FileReport, *, title: str | None = None, summary=None,
          document_name=None) -> Document:
    """The document of a checked file.  `document_name(path)`: the name (no extension) of the
    document of another .proof file, for links to imported lemmas (default: its stem)."""
    code = exit_code([report])
    doc = Document(title if title is not None else Path(report.path).name, report.path,
                   {0: "ok", 1: "failed"}.get(code, "malformed"), summary_counts([report], 0.0),
                   error=report.error)
    unreadable = isinstance(report.error, UnreadableSource)
    if report.not_checked or unreadable:  # said as such, never as a malformed file
        doc.status, doc.error = "not-checked", None
        doc.not_checked = report.not_checked or str(report.error)
    source = _read(report.path)
    tree = None
    if source is not None:
        try:
            tree = parse(source, report.path)
        except (ProofSyntaxError, RecursionError):
            tree = None
    lines = {n: text for n, text in enumerate(source_lines(source or ""), start=1)}
    builder = _Builder(report, lines, document_name)
    if tree is None:
        doc.listing = sorted(lines.items()) if source is not None else []
        doc.items = [builder.from_report(lr) for lr in report.lemmas]
    else:
        doc.intro = builder.comments.intro()
        doc.items = builder.items(tree)
    names = {i.name: i.anchor for i in doc.items if i.kind in ("lemma", "theorem", "claim")}
    doc.summary = [(*row, names.get(row[0])) for row in (summary or [])]
    return doc


def _read(path: str) -> str | None:
    try:
        return read_source(path)
    except (OSError, ProofSyntaxError):
        return None


def read_expression(text: str, formula: bool = False):
    """What the checker prints in .proof notation (a counterexample's `<w[m], w[m]>`, the
    `2*||w[i]||` of "division by 2*||w[i]||"), parsed back for typesetting; None if it does
    not parse (SymPy may print what the language does not have, like Abs(x))."""
    if "#" in text or "\n" in text or "\r" in text:
        return None
    try:
        return parse_term(text, formula, "<checker>")
    except (ProofSyntaxError, RecursionError):
        return None


class _Comments:
    """The comments of a source file, attached to the line below them (or the line they end)."""

    def __init__(self, lines: dict):
        self.lines = lines
        self.used: set = set()

    def intro(self) -> list:
        """The comment block the file starts with, if a blank line separates it from the code."""
        block = []
        for n in sorted(self.lines):
            text = self.lines[n].strip()
            if not text:
                break
            if not text.startswith("#"):
                return []
            block.append(n)
        self.used.update(block)
        return _paragraphs(self.lines[n] for n in block)

    def above(self, line: int | None) -> list:
        """The paragraphs of the comment lines just above a line."""
        if line is None:
            return []
        block = []
        n = line - 1
        while n in self.lines and self.lines[n].strip().startswith("#") and n not in self.used:
            block.insert(0, n)
            n -= 1
        self.used.update(block)
        return _paragraphs(self.lines[n] for n in block)

    def trailing(self, line: int | None) -> str:
        """The comment a line of code ends with."""
        text = self.lines.get(line, "")
        if "#" not in text or text.strip().startswith("#") or ("end", line) in self.used:
            return ""
        self.used.add(("end", line))  # two rows of one line (proof by cases:) show it once
        return " ".join(_paragraphs(["#" + text.split("#", 1)[1]]))


def _paragraphs(texts) -> list:
    """Comment lines as paragraphs: a line with only '#' separates two."""
    out, current = [], []
    for text in texts:
        body = text.strip()[1:]
        body = body[1:] if body.startswith(" ") else body
        if not body.strip():
            if current:
                out.append(" ".join(current))
            current = []
        else:
            current.append(body.strip())
    if current:
        out.append(" ".join(current))
    return out


class _Builder:
    """Builds the items of a document, and knows what each name cited in a lemma refers to."""

    def __init__(self, report: FileReport, lines: dict, document_name):
        self.report = report
        self.lines = lines
        self.math = Typesetter(lines)
        self.comments = _Comments(lines)
        self.document_name = document_name or (lambda path: Path(path).stem)
        self.by_line = {lr.line: lr for lr in report.lemmas}
        self.starts: list = []  # the lines where top-level items start
        self.imported: dict = {}  # name -> (document name, anchor)
        self.lemma_names: set = set()
        self.settings: dict = {}
        self.setting = None  # the setting of the lemma being built
        self.local: set = set()  # givens, haves, cases and ih of the lemma being built

    # ------------------------------------------------------------------ the file

    def items(self, tree: A.ProofFile) -> list:
        top = sorted([(i.pos.line, "import", i) for i in tree.imports]
                     + [(s.pos.line, "setting", s) for s in tree.settings]
                     + [(lemma.pos.line, "lemma", lemma) for lemma in tree.lemmas]
                     + [(c.pos.line, "claim", c) for c in tree.claims], key=lambda t: t[0])
        self.starts = [line for line, _, _ in top]
        self.imported = self._imports(tree.imports)
        self.lemma_names = {lemma.name for lemma in tree.lemmas}
        self.settings = {s.name: s for s in tree.settings}
        out = []
        for line, kind, node in top:
            comments = self.comments.above(line)
            item = getattr(self, f"_{kind}")(node)
            item.comments = comments + item.comments
            out.append(item)
        matched = {i.line for i in out}
        out += [self.from_report(lr) for lr in self.report.lemmas if lr.line not in matched]
        if self.report.error is not None and not self.report.lemmas:
            self._mark_error(out, self.report.error)
        return out

    def _mark_error(self, items: list, error: ProofSyntaxError) -> None:
        """An error that stopped the whole file (in a setting, an import) also marks the row
        of its line, so that the reader sees where it is."""
        rows = [r for item in items for r in item.head + item.rows if r.line == error.line]
        if rows:
            step = StepReport(error.file, error.line, error.column, "", error.text, "failed",
                              f"error: {error.message}")
            rows[-1].checks.append(self._check(step, rows[-1]))

    def _imports(self, imports) -> dict:
        """name -> (document name, anchor) of each imported lemma."""
        here = Path(self.report.path).parent
        out = {}
        for imp in imports:
            dots = len(imp.module) - len(imp.module.lstrip("."))
            base = here
            for _ in range(max(0, dots - 1)):
                base = base.parent
            target = base / (imp.module.lstrip(".") + ".proof")
            for name, _ in imp.names:
                out[name] = (self.document_name(target), anchor("lemma", name))
        return out

    def _body(self, line: int) -> range:
        """The source lines of the top-level item starting at line."""
        later = [s for s in self.starts if s > line]
        return range(line, (later[0] if later else max(self.lines, default=line) + 1))

    def _import(self, node: A.Import) -> Item:
        item = Item("import", node.module, anchor("import", str(node.pos.line)), node.pos.line)
        item.rows = [Row("text", 0, node.pos.line, cites=[Cite(name, self.imported.get(name))])
                     for name, _ in node.names]
        return item

    # ------------------------------------------------------------------ settings

    def _setting(self, node: A.Setting) -> Item:
        lr = self.by_line.get(node.pos.line)
        lr = lr if lr is not None and lr.kind == "setting" else None
        item = Item("setting", node.name, anchor("setting", node.name), node.pos.line,
                    status=lr.status if lr is not None else None,
                    reason=lr.reason if lr is not None else "")
        entries = []  # (line, Row)
        by_line: dict = {}
        for decl in node.decls:
            by_line.setdefault(decl.pos.line, []).append(decl)
        for line, decls in by_line.items():
            kind = decls[0].kind
            names = [self._declared(d) for d in decls]
            one, several = DECLARATIONS.get(kind, (kind.replace("_", " "),) * 2)
            label = one if len(decls) == 1 else several
            entries.append((line, Row("setting", 1, line, label=label, rhs=joined(names))))
        if node.per_update:
            line = node.per_update[0][1].line
            names = [symbol(name) for name, _ in node.per_update]
            entries.append((line, Row("setting", 1, line, label="per update",
                                      rhs=joined(names))))
        for bind in node.binds:  # what the runtime binds the symbol to (the checker ignores it)
            index = "" if bind.offset is None else f"[j{bind.offset:+d}]" if bind.offset else "[j]"
            rhs = MathRow((symbol(bind.symbol), Text(index), Op("\u21a6"),
                           Text(bind.quantity + ("" if bind.offset is None else "[j]"))))
            entries.append((bind.pos.line, Row("setting", 1, bind.pos.line, label="run binding",
                                               rhs=rhs)))
        for define in node.defines:
            rhs = MathRow((symbol(define.name), Op("="), self.math.expr(define.body)))
            entries.append((define.pos.line, Row("setting", 1, define.pos.line, label="define",
                                                 rhs=rhs)))
        for assume in node.assumptions:
            entries.append((assume.pos.line, Row(
                "setting", 1, assume.pos.line, label=assume.name,
                rhs=self.math.formula(assume.formula),
                anchor=anchor("assume", node.name, assume.name))))
        known = {line for line, _ in entries}
        for line in self._body(node.pos.line):  # lines of a kind this report has no rule for
            text = self.lines.get(line, "").split("#", 1)[0].strip()
            if line != node.pos.line and text and line not in known:
                entries.append((line, Row("text", 1, line, source=text)))
        entries.sort(key=lambda e: e[0])
        item.rows = [row for _, row in entries]
        for row in item.rows:
            row.comments = self.comments.above(row.line)
            row.remark = self.comments.trailing(row.line)
        self._place(item, lr.steps if lr is not None else [])
        return item

    def _declared(self, decl: A.Decl):
        if decl.constraint is None:
            return symbol(decl.name)
        op, value = decl.constraint
        return MathRow((symbol(decl.name), self.math.relation(op), Number(str(value))))

    # ------------------------------------------------------------------ lemmas

    def _lemma(self, node: A.Lemma) -> Item:
        lr = self.by_line.get(node.pos.line)
        lr = lr if lr is not None and lr.kind != "setting" else None
        status = lr.status if lr is not None else "unchecked"
        item = Item(node.kind, node.name, anchor("lemma", node.name), node.pos.line,
                    status=status, reason=lr.reason if lr is not None else "",
                    error=node.error)
        self.setting = self.settings.get(node.setting)
        formula = node.statement
        if node.error is not None:  # the lemma did not parse; its statement alone may
            formula = read_expression(node.statement.text, formula=True) or formula
        statement = Row("statement", 0, node.pos.line, label=node.kind,
                        rhs=self.math.formula(formula),
                        remark=self.comments.trailing(node.pos.line))
        item.head = [statement]
        for name, formula, pos in node.givens:
            item.head.append(Row("given", 0, pos.line, label=name,
                                 rhs=self.math.formula(formula),
                                 comments=self.comments.above(pos.line),
                                 remark=self.comments.trailing(pos.line)))
        self.local = {name for name, _, _ in node.givens} | {"ih"}
        if node.proof is not None:
            item.rows = self._proof(node.proof)
        steps = lr.steps if lr is not None else []
        if node.error is not None:  # shown once: the error, then the lemma's source
            item.listing = [(n, self.lines.get(n, "")) for n in self._body(node.pos.line)
                            if self.lines.get(n, "").strip()]
            item.reason = ""
            steps = [s for s in steps if s.reason != f"error: {node.error.message}"]
        self._place(item, steps)
        return item

    def _proof(self, proof: A.Proof) -> list:
        if proof.method == "induction":
            var = symbol(proof.var.id)
            rows = [Row("heading", 0, proof.pos.line, label="Proof by induction on", rhs=var)]
            rows.append(Row("heading", 1, None, label="Base case",
                            rhs=MathRow((var, Op("="), Number("0")))))
            rows += self._items(proof.base, 2)
            rows.append(Row("heading", 1, None, label="Induction step",
                            rhs=MathRow((var, Op("→"), var, Op("+"), Number("1")))))
            rows += self._items(proof.step, 2)
            return rows
        return [Row("heading", 0, proof.pos.line, label="Proof")] + self._items(proof.items, 1)

    def _items(self, items: list, depth: int) -> list:
        rows = []
        for item in items:
            if isinstance(item, A.Chain):
                if item.name is not None:
                    self.local.add(item.name)
                for i, step in enumerate(item.steps):
                    rhs = MathRow((self.math.relation(step.op), self.math.expr(step.rhs)))
                    rows.append(self._row(
                        "chain" if i == 0 else "continue", depth, step.pos.line, rhs=rhs,
                        lhs=self.math.expr(item.first) if i == 0 else None,
                        label=f"have {item.name}" if i == 0 and item.name else "",
                        cites=step.cites, xfail=step.xfail, source=step.text))
            elif isinstance(item, A.Hence):
                rows.append(self._row("formula", depth, item.pos.line, label="hence",
                                      rhs=self.math.formula(item.formula), cites=item.cites,
                                      xfail=item.xfail, source=item.text))
            elif isinstance(item, A.Claim):
                if item.name is not None:
                    self.local.add(item.name)
                rows.append(self._row("formula", depth, item.pos.line,
                                      label=f"have {item.name}" if item.name else "",
                                      rhs=self.math.formula(item.formula), cites=item.cites,
                                      xfail=item.xfail, source=item.text))
            elif isinstance(item, A.Contradiction):
                rows.append(self._row("heading", depth, item.pos.line, label="Contradiction",
                                      cites=item.cites, source=item.text))
            elif isinstance(item, A.Cases):
                rows.append(self._row("heading", depth, item.pos.line, label="Cases",
                                      cites=item.cites, source=item.text))
                for case in item.branches:
                    self.local.add(case.name)
                    rows.append(self._row("case", depth + 1, case.pos.line,
                                          label=f"Case {case.name}",
                                          rhs=self.math.formula(case.condition)))
                    rows += self._items(case.items, depth + 2)
            else:  # a proof item this report has no rule for: as written
                line = getattr(getattr(item, "pos", None), "line", None)
                rows.append(self._row("text", depth, line, source=self.math.source(item)))
        return rows

    def _row(self, kind, depth, line, cites=(), **fields) -> Row:
        return Row(kind, depth, line, cites=[self._cite(c) for c in cites],
                   comments=self.comments.above(line), remark=self.comments.trailing(line),
                   **fields)

    def _cite(self, cite: A.Cite) -> Cite:
        args = tuple(self.math.expr(a) for a in cite.args)
        at = None
        if cite.at is not None:
            at = tuple((symbol(var.id), self.math.expr(value)) for var, value in cite.at)
        return Cite(cite.name, self._target(cite.name), args, at)

    def _target(self, name: str):
        """Where a citation links to: the lemma or assumption it names (as the checker looks
        names up: local facts first, then the setting's assumptions, then lemmas)."""
        if name in self.local or name in BUILTIN_FACTS:
            return None
        setting = self.setting
        if setting is not None and any(a.name == name for a in setting.assumptions):
            return ("here", anchor("assume", setting.name, name))
        if name in self.lemma_names:
            return ("here", anchor("lemma", name))
        return self.imported.get(name)

    # ------------------------------------------------------------------ claims

    def _claim(self, node: A.RunClaim) -> Item:
        lr = self.by_line.get(node.pos.line)
        item = Item("claim", node.name, anchor("lemma", node.name), node.pos.line,
                    status=lr.status if lr is not None else "unchecked",
                    reason=lr.reason if lr is not None else "")
        item.prose = lr.statement if lr is not None and lr.statement != \
            self.lines.get(node.pos.line, "").strip() else ""
        item.head = [Row("statement", 0, node.pos.line, label="refuted by run",
                         source=node.path)]
        self._place(item, lr.steps if lr is not None else [])
        return item

    # ------------------------------------------------------------------ the checks

    def _place(self, item: Item, steps: list) -> None:
        """Put each check on the last row of its line (a `cases:` line after the proof's
        heading); a check made at no row's line is listed after the item."""
        rows = item.head + item.rows
        for step in steps:
            row = next((r for r in reversed(rows) if r.line == step.line), None)
            check = self._check(step, row)
            if row is None:
                item.other_checks.append(check)
            else:
                row.checks.append(check)
        if any(step.reason == item.reason for step in steps):
            item.reason = ""  # a claim's reason is its one check's: shown there

    def _check(self, step: StepReport, row: Row | None) -> Check:
        why = step.reason
        hint = []
        if step.missing and _HINT in why:
            why = why[:why.index(_HINT)]
            hint = [Cite(name, self._target(name)) for name in step.missing]
        domain = None
        found = _DOMAIN.search(step.reason)
        if found is not None and step.status != "verified":
            node = read_expression(found.group(2))
            term = self.math.expr(node) if node is not None else Text(found.group(2))
            zero = found.group(1) == "division by"
            domain = MathRow((term, Op("≠" if zero else "≥"), Number("0")))
        counterexample = []
        for key, value in (step.counterexample or {}).items():
            k, v = read_expression(str(key)), read_expression(str(value))
            counterexample.append((self.math.expr(k) if k is not None else Text(str(key)),
                                   self.math.expr(v) if v is not None else Text(str(value))))
        own = row is not None and (row.source.strip() == step.text.strip() or (
            row.kind in ("statement", "given", "setting") and
            self.lines.get(step.line, "").strip() == step.text.strip()))
        return Check(step, why, hint, domain, counterexample, "" if own else step.text)

    # ------------------------------------------------------------------ no syntax tree

    def from_report(self, lr) -> Item:
        """A lemma from its report alone (the file could not be read or parsed again)."""
        kind = lr.kind if lr.kind in ("setting", "claim", "theorem") else "lemma"
        name = lr.name[len("setting "):] if lr.kind == "setting" else lr.name
        item = Item(kind, name, anchor("setting" if kind == "setting" else "lemma", name),
                    lr.line, status=lr.status, reason=lr.reason)
        if kind not in ("setting", "claim"):
            node = read_expression(lr.statement, formula=True)
            item.head = [Row("statement", 0, lr.line, label=kind,
                             rhs=self.math.formula(node) if node is not None
                             else Text(lr.statement))]
        elif kind == "claim":
            item.prose = lr.statement
        for step in lr.steps:
            if not any(r.line == step.line for r in item.head + item.rows):
                item.rows.append(Row("text", 1, step.line, source=step.text))
        self._place(item, lr.steps)
        return item

