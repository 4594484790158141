"""Check .proof files: elaborate each proof and pass every step through the kernel.

This module is untrusted glue.  It decides nothing itself: a step is verified only when the kernel
returns a Theorem for it, and a lemma only when the kernel accepts its final Theorem.  A step that
fails is *assumed* (a hypothetical Theorem) so that checking can go on; the assumption stays among
the hypotheses of everything built on it, which is what keeps the lemma unverified.
"""

from __future__ import annotations

import gc
import hashlib
import hmac
import itertools
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

import sympy as sp
# SymPy's Add imports this module on its first use: imported here, once, rather than in each
# worker that check_paths forks (measured: 0.27 of 5.5 s of CPU over the bundled files).
import sympy.tensor.tensor  # noqa: F401

from . import kernel as K
from .diagnostics import explain_failure
from .errors import CheckingStopped, KernelError, ProofSyntaxError
from .library_path import bundled_proofs_dir  # noqa: F401  (novikoff.checker.bundled_proofs_dir)
from .certify.store import CertificateFileError, load_certificates
from .kernel.certified import LEDGER
from .display import display_name
from .kernel.formulas import free_symbols, sides
from .kernel.solver import AUDIT, LIMITS, atom_name
from .kernel.sums import at_least_zero
from .kernel.terms import count, exact_subs
from .language import ast as A
from .language.elaborate import BUILTIN_FACTS, Scope, elaborate_setting
from .language.lexer import read_source, source_lines
from .language.parser import parse, parse_term
from .notes import NOTES_SUFFIXES, has_block, read_notes

__all__ = ["StepReport", "LemmaReport", "FileReport", "Checker", "check_paths",
           "bundled_proofs_dir", "proof_files", "display_path", "exit_code"]

NO_OP_FACTS = {"algebra", "sq_nonneg", "sqrt_mono"}
VECTOR_FACTS = {"cauchy_schwarz", "triangle", "norm_nonneg"}
NAMED_FACTS = NO_OP_FACTS | VECTOR_FACTS | {"nat_cases"}
DIAGNOSTIC_TIMEOUT_MS = 2000
# A step may read a sequence at most this many places further along than a fact it cites
# (checker._shifted): a few updates at once, as notes unfold them.
_SHIFTS = 3
# A cited fact is taken at most at this many other indices that a step reads: every term of a
# sum written out (terms._UNROLL: sum(i < 6, c[i]) >= 6 by c[t] >= 1 reads c[0] .. c[5]).
_OTHER_INDICES = 16
# At most this many comparisons of sums under a root or a power for one step (_sums_compared).
_COMPARISONS = 4


@dataclass
class StepReport:
    """One check the kernel made: a step, a `hence`, a case split's coverage, a conclusion."""

    file: str
    line: int
    column: int
    lemma: str
    text: str
    status: str  # verified | failed | unknown | expected_failure
    reason: str = ""
    counterexample: dict | None = None
    missing: list = field(default_factory=list)
    xfail: bool = False
    seconds: float = 0.0  # time spent on this check, diagnostics included
    # Of a step that does not follow from what it cites: "slip" (false in its setting, with a
    # counterexample satisfying every fact in force) or "under-justified" (true in its
    # setting: it needs more citations); "" otherwise.
    judgement: str = ""
    # Of a verified check: "certified" (every decision it made rests on a certificate the
    # kernel replayed) or "solver" (one rests on Z3 or on SymPy's normal form alone).
    basis: str = ""

    def to_json(self) -> dict:
        return {"file": self.file, "line": self.line, "column": self.column,
                "lemma": self.lemma, "text": self.text, "status": self.status,
                "reason": self.reason, "counterexample": self.counterexample,
                "missing": list(self.missing), "judgement": self.judgement,
                "basis": self.basis}

    @property
    def ok(self) -> bool:
        return self.status in ("verified", "expected_failure")


# Seals the statuses that workers of check_paths settle: made when this module is imported, so
# the forked workers share it with the parent that reads their reports, and nothing else has it.
_SEAL_KEY = os.urandom(32)


@dataclass
class LemmaReport:
    """A lemma's outcome.  `status` is 'verified' only when the kernel certifies the theorem for
    the statement, and the statement and givens as written read as that formula: an outcome
    string, a theorem made elsewhere or a statement text changed afterwards cannot make a lemma
    verified.  A worker of check_paths settles its reports (settle): the status the kernel gave
    there, sealed with the statement it is about."""

    name: str
    kind: str
    file: str
    line: int
    statement: str
    outcome: str = "failed"  # what the checker found: verified | failed | expected_failure
    reason: str = ""
    steps: list = field(default_factory=list)
    theorem: object = None
    formula: object = None
    scope: Scope | None = None
    givens: tuple = ()  # "name: formula" of each `given`: the statement holds under them
    parts_cited: tuple = ()  # assignment parts cited unproved (Checker parts): formula is
    # then (their statements and the givens) => statement
    # (status, formula_text, seal), set by settle() only; and (text, givens) -> whether they read
    # as the formula, computed once.
    _settled: tuple | None = field(default=None, init=False, repr=False, compare=False)
    _read_as: tuple = field(default=(), init=False, repr=False, compare=False)

    @property
    def status(self) -> str:
        """verified | failed | expected_failure."""
        if self._settled is not None:
            status, shown, seal = self._settled
            return status if hmac.compare_digest(seal, self._seal(status, shown)) else "failed"
        if self.outcome == "verified":
            return ("verified" if K.certifies(self.theorem, self.formula) and self._written_as_read()
                    else "failed")
        return self.outcome

    @property
    def settled(self) -> str | None:
        """The status a worker process settled (read-only); None where the lemma was checked."""
        return None if self._settled is None else self.status

    @property
    def formula_text(self) -> str | None:
        """The statement as the kernel read it ((parts cited and) givens => statement), printed:
        what `status` is about."""
        if self._settled is not None:
            return self._settled[1]
        return None if self.formula is None else _show(self.formula)

    def settle(self) -> "LemmaReport":
        """Fix the status as the kernel gives it in this process, sealed with the statement it is
        about, and drop the kernel's objects (which cannot leave the process): what a worker of
        check_paths sends back.  Settling again changes nothing."""
        if self._settled is None:
            status, shown = self.status, self.formula_text
            self._settled = (status, shown, self._seal(status, shown))
        self.theorem = self.formula = self.scope = None
        return self

    def _seal(self, status: str, shown) -> bytes:
        about = repr((self.name, self.kind, self.file, self.line, self.statement,
                      tuple(self.givens), tuple(self.parts_cited), status, shown))
        return hmac.new(_SEAL_KEY, about.encode("utf-8"), hashlib.sha256).digest()

    def _written_as_read(self) -> bool:
        """Whether the statement and givens as written elaborate, in the lemma's setting, to the
        formula the kernel certified (so the text shown beside 'verified' is what was proved)."""
        key = (self.statement, tuple(self.givens), self.formula)
        if not self._read_as or self._read_as[0] != key:
            self._read_as = (key, self._reads_as_formula())
        return self._read_as[1]

    def _reads_as_formula(self) -> bool:
        scope, formula = self.scope, self.formula
        if scope is None:
            return False
        premises, goal = (), formula
        if self.givens or self.parts_cited:
            if not isinstance(formula, K.Implication):
                return False
            premises, goal = formula.premises, formula.conclusion
        if len(premises) != len(self.parts_cited) + len(self.givens):
            return False
        seen, index = list(scope.vectors_seen), scope.sum_index
        try:
            read = [scope.statement(parse_term(self.statement, True, self.file))]
            for given in self.givens:
                read.append(scope.formula(parse_term(given.partition(": ")[2], True,
                                                     self.file)))
        except (ProofSyntaxError, KernelError, RecursionError):
            return False
        finally:  # the elaborator's state, as the checker left it
            scope.vectors_seen, scope.sum_index = seen, index
        return read == [goal, *premises[len(self.parts_cited):]]

    def to_json(self) -> dict:
        return {"name": self.name, "kind": self.kind, "file": self.file, "line": self.line,
                "statement": self.statement, "givens": list(self.givens),
                "formula": self.formula_text, "status": self.status, "reason": self.reason}


@dataclass
class FileReport:
    """A checked file.  error: why it is malformed (or unreadable: UnreadableSource);
    not_checked: why it was not checked at all (set by callers such as `novikoff grade` for a
    file that timed out or could not be chosen), "" when it was."""

    path: str
    lemmas: list = field(default_factory=list)
    error: ProofSyntaxError | None = None
    not_checked: str = ""
    notes: dict | None = None  # of a Markdown or LaTeX document: what was read, not checked


    @property
    def steps(self) -> list:
        return [s for lemma in self.lemmas for s in lemma.steps]


def proof_files(paths, notes: bool = False) -> list:
    """Expand files and directories into a sorted list of .proof files (notes: and the .md and
    .tex documents that hold a novikoff block)."""
    out = []
    for p in paths:
        p = Path(p)
        if p.is_dir():
            out += sorted(q for q in p.rglob("*.proof") if q.is_file())
            if notes:
                out += sorted(q for q in p.rglob("*") if is_notes_document(q))
        else:
            out.append(p)
    return out


class Checker:
    """Checks files, caching each file's outcome so that imports are checked once."""

    def __init__(self, timeout_ms: int = 5000, confine=None, parts=(),
                 explain_expected: bool = True):
        """parts: (name, statement formula) of an assignment's lemmas in order (`novikoff
        grade` with the policy that earlier parts may be cited unproved): in the file checked
        (not in what it imports), a lemma named like a part may cite an earlier part that is
        not verified in the file, or not there at all, as the part's statement; the lemma then
        states `parts cited => statement` (LemmaReport.parts_cited), which the kernel checks
        like any statement.  explain_expected: search a counterexample (and the facts it
        would need) for a step marked xfail too; its status is expected_failure either way,
        and only -v and --json show the explanation (measured: a third of the CPU time of
        `novikoff check proofs/`)."""
        self.timeout_ms = timeout_ms
        self.explain_expected = explain_expected
        self.parts = tuple(parts)
        # A directory that imports may not leave (`novikoff grade`: a student's private copy,
        # whose parent directories hold files that are not the student's).
        self.confine = Path(confine).resolve() if confine is not None else None
        self.reports: dict = {}
        # A file's resolved path -> the resolved paths it imports from, in order (what a cached
        # result depends on: novikoff.lemmas).
        self.imports: dict = {}
        self._loading: list = []
        # A failed step's formula, assumed so checking goes on -> (cause, description).
        self.hypothetical: dict = {}

    # ------------------------------------------------------------------ files

    def check_file(self, path) -> FileReport:
        key = str(Path(path).resolve())
        if key in self.reports:
            return self.reports[key]
        display = display_path(path)
        report = FileReport(display)
        try:
            source = read_source(path, display)
        except ProofSyntaxError as exc:  # not UTF-8: positioned at the first bad byte
            report.error = exc
            self.reports[key] = report
            return report
        except OSError as exc:
            report.error = ProofSyntaxError(f"cannot read the file ({exc.strerror or exc})",
                                            display, 1, 1)
            self.reports[key] = report
            return report
        if not self._loading:  # an imported file's checks count toward the importing file's
            LIMITS.start_file()
        # A file's decisions replay its own certificates only (an imported file's, its own):
        # with a store that grew with whatever the process checked before, a decision shared
        # by two files was certified or not by the order a pool of workers took the files in.
        outer, searcher = LEDGER.store, LEDGER.model_searcher
        LEDGER.model_searcher = searcher or _search_model
        try:
            LEDGER.store = {**LEDGER.shared, **load_certificates(Path(path))}
        except CertificateFileError as exc:
            report.error = ProofSyntaxError(str(exc), display, 1, 1)
            self.reports[key] = report
            LEDGER.model_searcher = searcher
            return report
        self._loading.append(key)
        try:
            self._check_source(source, display, Path(path), report)
        except ProofSyntaxError as exc:
            report.error = exc
            report.lemmas = []
        except RecursionError:
            report.error = ProofSyntaxError("the file nests too deeply", display, 1, 1)
            report.lemmas = []
        finally:
            self._loading.pop()
            LEDGER.store, LEDGER.model_searcher = outer, searcher
        self.reports[key] = report
        return report

    def _check_source(self, source: str, display: str, path: Path, report: FileReport):
        if path.suffix in NOTES_SUFFIXES:  # Markdown or LaTeX notes: the same tree
            tree = read_notes(source, display, markdown=path.suffix == ".md")
            report.notes = {**tree.summary, "not understood": list(tree.not_understood)}
        else:
            tree = parse(source, display)
        lines = {i: text.strip() for i, text in enumerate(source_lines(source), start=1)}
        imported, first_at = {}, {}
        for imp in tree.imports:
            lemmas = self._import(imp, path, display, lines)
            for name, pos in imp.names:
                if name in imported:  # a second import must not silently replace the first
                    raise ProofSyntaxError(f"{name} is imported twice (first at line "
                                           f"{first_at[name]})", display, pos.line, pos.col,
                                           lines.get(pos.line, ""))
                imported[name], first_at[name] = lemmas[name], pos.line
        scopes = {}
        for setting in tree.settings:
            if setting.name in scopes:
                raise ProofSyntaxError(f"setting {setting.name} is defined twice", display,
                                       setting.pos.line, setting.pos.col,
                                       lines.get(setting.pos.line, ""))
            AUDIT.label = f"{display}:{setting.pos.line}:setting-{setting.name}"
            LIMITS.start_lemma()
            scopes[setting.name] = elaborate_setting(setting, display, lines, self.timeout_ms)
            checked = self._check_setting(scopes[setting.name], setting, display)
            if checked.steps:
                report.lemmas.append(checked)
        names = {}
        for lemma in tree.lemmas:
            if lemma.name in names or lemma.name in imported:
                raise ProofSyntaxError(f"lemma {lemma.name} is defined twice", display,
                                       lemma.pos.line, lemma.pos.col,
                                       lines.get(lemma.pos.line, ""))
            if lemma.name in BUILTIN_FACTS:
                raise ProofSyntaxError(f"{lemma.name} is the name of a built-in fact: choose "
                                       f"another name for this {lemma.kind}", display,
                                       lemma.pos.line, lemma.pos.col,
                                       lines.get(lemma.pos.line, ""))
            names[lemma.name] = lemma
        done = dict(imported)
        for lemma in tree.lemmas:
            scope = scopes[lemma.setting]
            clash = lemma.name in scope.assumptions or lemma.name in scope.kinds
            if clash:
                raise scope.error(f"{lemma.name} is already a name in setting {scope.name}",
                                  lemma.pos)
            later = {n: l.pos.line for n, l in names.items() if n not in done}
            outcome = _LemmaCheck(self, scope, lemma, done, later, display).run()
            report.lemmas.append(outcome)
            done[lemma.name] = outcome
            if lemma.error is not None and report.error is None:
                report.error = lemma.error  # the file is malformed; the rest is still checked
        for claim in tree.claims:
            if claim.name in names or claim.name in imported:
                raise ProofSyntaxError(f"{claim.name} is already a lemma's name", display,
                                       claim.pos.line, claim.pos.col,
                                       lines.get(claim.pos.line, ""))
            names[claim.name] = claim
            report.lemmas.append(_run_claim(claim, path, display, lines))

    def _check_setting(self, scope: Scope, node: A.Setting, display: str) -> LemmaReport:
        """Report the problems the kernel found in a setting (undefined or contradictory
        assumptions, a nat constrained by itself), as the checks of a pseudo-lemma."""
        report = LemmaReport(f"setting {scope.name}", "setting", display, node.pos.line,
                             f"setting {scope.name}", outcome="failed", scope=scope)
        for name, status, message in scope.setting.problems:
            pos = scope.assumption_pos[name] if name is not None else node.pos
            text = scope.lines.get(pos.line, "") if name is not None else f"setting {scope.name}:"
            report.steps.append(StepReport(display, pos.line, pos.col, report.name, text,
                                           status, message))
        report.reason = "its assumptions are not all meaningful and consistent"
        return report

    def _import(self, imp: A.Import, path: Path, display: str, lines: dict) -> dict:
        dots = len(imp.module) - len(imp.module.lstrip("."))
        base = path.absolute().parent  # `..` from a file named relatively climbs for real
        for _ in range(max(0, dots - 1)):
            base = base.parent
        target = base / (imp.module.lstrip(".") + ".proof")
        text = lines.get(imp.pos.line, "")
        if self.confine is not None and not target.resolve().is_relative_to(self.confine):
            raise ProofSyntaxError(f"cannot import from {target.name}: it is outside the "
                                   f"submission's directory", display, imp.pos.line,
                                   imp.pos.col, text)
        if not target.is_file():
            raise ProofSyntaxError(f"no file {target.name} to import from (looked in "
                                   f"{display_path(target.parent)})", display, imp.pos.line,
                                   imp.pos.col, text)
        key = str(target.resolve())
        importer = self.imports.setdefault(str(path.resolve()), [])
        if key not in importer:
            importer.append(key)
        if key in self._loading:
            chain = " -> ".join(Path(k).name for k in self._loading[self._loading.index(key):])
            raise ProofSyntaxError(f"circular import: {chain} -> {target.name}", display,
                                   imp.pos.line, imp.pos.col, text)
        other = self.check_file(target)
        if other.error is not None:
            raise ProofSyntaxError(f"cannot import from {target.name}: {other.error}",
                                   display, imp.pos.line, imp.pos.col, text)
        available = {lemma.name: lemma for lemma in other.lemmas}
        out = {}
        for name, pos in imp.names:
            if name not in available:
                raise ProofSyntaxError(f"{target.name} has no lemma {name!r}", display,
                                       pos.line, pos.col, text)
            out[name] = available[name]
        return out


class _LemmaCheck:
    """Check one lemma's proof, recording a StepReport for every obligation."""

    def __init__(self, checker: Checker, scope: Scope, lemma: A.Lemma, done: dict,
                 later: dict, display: str):
        self.checker = checker
        self.scope = scope
        self.setting = scope.setting
        self.lemma = lemma
        self.done = done
        self.later = later
        self.display = display
        self.report = LemmaReport(lemma.name, lemma.kind, display, lemma.pos.line,
                                  lemma.statement.text, scope=scope,
                                  givens=tuple(f"{name}: {rel.text}"
                                               for name, rel, _ in lemma.givens))
        self.unverified_cites: dict = {}  # supposed theorem -> the unverified lemma it stands for
        self.parts = self._earlier_parts()  # name -> statement: citable unproved
        self.parts_cited: dict = {}  # name -> statement, in the order first cited
        self.part_theorems: set = set()  # their hypothetical theorems
        self.supposed: list = []  # the theorems of the givens and of the cases' conditions
        # The kernel's count of uncertified decisions when the last check was recorded.
        self.ledger_mark = LEDGER.uncertified

    # ------------------------------------------------------------------ entry

    def run(self) -> LemmaReport:
        """Check the lemma.  An error in its statement, its givens or the frame of its proof
        (a positioned error, like a type error) fails this lemma only."""
        LIMITS.start_lemma()
        if self.lemma.error is not None:  # a syntax error: nothing to check
            self._record_error(self.lemma.error)
            self.report.reason = f"line {self.lemma.error.line}: {self.lemma.error.message}"
            if self.lemma.stated:  # only the proof is broken: citable, as not verified
                try:
                    self.report.formula = self._statement()
                except ProofSyntaxError:
                    pass
            return self.report
        try:
            return self._run()
        except ProofSyntaxError as exc:
            self._record_error(exc)
            self.report.outcome = "failed"
            self.report.reason = f"line {exc.line}: {exc.message}"
            return self.report
        except KernelError as exc:  # a rule refused what the proof built: this lemma fails
            self._record(self.lemma.pos, self.lemma.statement.text, "failed", f"error: {exc}")
            self.report.outcome = "failed"
            self.report.reason = str(exc)
            return self.report
        except RecursionError:
            raise
        except Exception as exc:  # noqa: BLE001 -- a bug in novikoff fails this lemma, visibly
            message = f"internal error, please report it: {type(exc).__name__}: {exc}"
            self._record(self.lemma.pos, self.lemma.statement.text, "failed", message)
            self.report.outcome = "failed"
            self.report.reason = message
            return self.report

    def _run(self) -> LemmaReport:
        scope, lemma, setting = self.scope, self.lemma, self.setting
        AUDIT.label = f"{self.display}:{lemma.pos.line}:lemma-{lemma.name}"
        goal = scope.statement(lemma.statement)
        facts = {name: K.assume(setting, f) for name, f in scope.assumptions.items()}
        givens = []
        for gname, grel, gpos in lemma.givens:
            if gname in facts or gname in scope.kinds or gname in BUILTIN_FACTS:
                raise scope.error(f"{gname} is already a name in this setting", gpos)
            g = scope.formula(grel)
            self._check_meaningful(g, list(facts.values()), gpos, f"given {gname}")
            givens.append(g)
            facts[gname] = K.assume(setting, g)
            self.supposed.append(facts[gname])
        verdict = (K.givens_consistency(setting, K.Implication(tuple(givens), goal),
                                        self.checker.timeout_ms) if givens else None)
        consistency = verdict.answer if verdict is not None else "invalid"
        if consistency != "invalid":  # the kernel then refuses the lemma: say why here
            first = lemma.givens[0][2]
            self._record(first, "given: " + ", ".join(g[0] for g in lemma.givens),
                         "failed" if consistency == "valid" else "unknown",
                         "vacuous: the givens contradict each other or the setting's "
                         "assumptions, so the lemma would hold vacuously"
                         if consistency == "valid" else
                         "could not show the givens consistent with the setting's assumptions "
                         + ("by a stored model, and certificates are required (`novikoff "
                            "certify` searches one)" if LEDGER.required else
                            f"({verdict.reason})" if verdict.reason
                            else "(no values satisfying all of them were found in time)")
                         + ", so the lemma might hold only vacuously")
        proof = lemma.proof
        if proof.method == "induction":
            thm = self._induction(proof, goal, facts)
        else:
            thm = self._items(proof.items, goal, facts, proof.pos)
        statement = goal
        premises = tuple(self.parts_cited.values()) + tuple(givens)
        if premises:
            thm = K.discharge(setting, thm, premises)
            statement = K.Implication(premises, goal)
        self.report.formula = statement
        self.report.parts_cited = tuple(self.parts_cited)
        ok, extra = K.accepts(setting, thm, statement, self.checker.timeout_ms,
                              givens=bool(premises))
        # A failing check that the final theorem happens not to use still fails the lemma.
        if ok and all(s.status == "verified" for s in self.report.steps):
            self.report.outcome = "verified"
            self.report.theorem = thm
            return self.report
        checks_ok = all(s.ok for s in self.report.steps)
        expected = any(s.status == "expected_failure" for s in self.report.steps)
        supposed = all(isinstance(h, K.Supposition) for h in extra)
        self.report.outcome = ("expected_failure" if checks_ok and expected and supposed
                               else "failed")
        reasons = []
        failing = [f"{s.line}" + (" (expected)" if s.status == "expected_failure" else "")
                   for s in self.report.steps if not s.status == "verified"]
        if failing:
            reasons.append(f"checks at line{'s' if len(failing) > 1 else ''} "
                           f"{', '.join(failing)} did not verify")
        for h in extra:
            cause = self.checker.hypothetical.get(h)
            if cause is None:
                reasons.append(f"depends on '{_show(h)}', which is not an assumption of "
                               f"setting {scope.name}")
            elif cause[1].startswith("cites") and cause[1] not in reasons:
                reasons.append(cause[1])
        if setting.problems:
            reasons.append(f"setting {scope.name} has problems (see its checks)")
        if not reasons and K.conclusion_matches(thm.concl, statement, setting.labels):
            reasons.append("the statement may mean nothing where its hypotheses hold ("
                           + self._meaningless(statement, facts) + ")")
        if not reasons:
            reasons.append("the kernel does not accept the proof of this statement")
        self.report.reason = "; ".join(reasons)
        if self.report.outcome == "failed" and (checks_ok or any(
                self.checker.hypothetical.get(h) is None for h in extra)):
            self._record(lemma.pos, lemma.statement.text, "failed", self.report.reason)
        return self.report

    def _earlier_parts(self) -> dict:
        """The assignment parts before this lemma, if it is one, in the file being checked."""
        names = [name for name, _ in self.checker.parts]
        if len(self.checker._loading) != 1 or self.lemma.name not in names:
            return {}
        return dict(self.checker.parts[:names.index(self.lemma.name)])

    def _meaningless(self, statement, facts: dict) -> str:
        """Which condition of the statement's meaning fails where its hypotheses hold, with an
        instance when one is found (the statement as written, its givens as premises)."""
        goal, premises = statement, list(facts.values())
        while isinstance(goal, K.Implication):
            premises += [K.assume(self.setting, p) for p in goal.premises]
            goal = goal.conclusion
        for obligation in K.domain_obligations(goal):
            try:
                found = self._search(premises, obligation)
            except KernelError:
                continue
            if found.holds:
                continue
            what = K.describe_obligation(obligation, goal, _show_expr)
            if found.counterexample:
                at = ", ".join(f"{k} = {v}" for k, v in found.counterexample.items())
                return f"{what}: at {at}"
            return what
        return ("a division by zero, a square root of a negative number or a negative index in "
                "its terms as written")

    def _statement(self):
        """The lemma's statement as the kernel reads it (givens => statement)."""
        goal = self.scope.statement(self.lemma.statement)
        givens = tuple(self.scope.formula(rel) for _, rel, _ in self.lemma.givens)
        return K.Implication(givens, goal) if givens else goal

    def _check_meaningful(self, formula, premises: list, pos: A.Pos, what: str) -> None:
        """A given must mean something under the setting and the givens above it."""
        for obligation in K.domain_obligations(formula):
            d = K.decide(self.setting, premises, obligation, timeout_ms=self.checker.timeout_ms)
            if d.status != "verified":
                reason = (K.describe_obligation(obligation, formula, _show_expr)
                          if d.kind != "vacuous" else d.reason)
                self._record(pos, f"{what}: {_show(formula)}", d.status, f"{what}: {reason}")

    def _induction(self, proof: A.Proof, goal: K.Relation, facts: dict):
        var_name = proof.var.id
        if self.scope.kinds.get(var_name) != "nat":
            raise self.scope.error(f"induction on {var_name}, which is not declared nat",
                                   proof.var.pos)
        var = self.scope.symbol(var_name)
        try:
            at_zero, at_next = goal.subs(var, 0), goal.subs(var, var + 1)
        except ValueError as exc:  # a floor of an irrational number at 0 (terms.exact_subs)
            raise self.scope.error(f"induction on {var_name}: {exc}", proof.var.pos) from None
        base = self._items(proof.base, at_zero, facts, proof.pos)
        ih = K.assume(self.setting, goal)
        step = self._items(proof.step, at_next, dict(facts, ih=ih), proof.pos)
        try:
            return K.induction(self.setting, var, goal, base, step, self.checker.timeout_ms)
        except KernelError as exc:
            self._record(proof.pos, f"proof by induction on {var_name}", "failed", str(exc))
            return self._hypothetical(goal, "failed", f"the induction at line {proof.pos.line}"
                                      f" is invalid")

    # ------------------------------------------------------------------ items

    def _items(self, items: list, goal, facts: dict, pos: A.Pos):
        facts = dict(facts)
        last = None
        last_pos = pos
        broken = None  # the first item with an error in its terms or citations
        for item in items:
            try:
                last, last_pos = self._item(item, goal, facts, last, broken)
            except ProofSyntaxError as exc:
                # A type error, an unknown name or citation: this item fails, the rest is
                # still checked.  What it would have shown is unknown.
                xfail = _xfail_at(item, exc.line)
                self._record_error(exc, xfail)
                broken = broken or (exc, xfail)
                last, last_pos = None, item.pos
                if isinstance(item, A.Chain):  # its later lines go on from the broken one
                    for step in item.steps:
                        if step.pos.line > exc.line:
                            self._record(step.pos, step.text,
                                         "expected_failure" if step.xfail else "failed",
                                         f"not checked: it goes on from line {exc.line}, "
                                         f"which has an error", xfail=step.xfail)
        if last is not None and K.conclusion_matches(last.concl, goal, self.setting.labels):
            return last
        if last is not None and broken is None:
            # The last line in another form (gamma^2*k <= R^2 for k <= R^2/gamma^2): the goal
            # follows from it and the declarations, as a textbook's closing "hence".
            closing = K.decide(self.setting, [last], goal, timeout_ms=self.checker.timeout_ms)
            # and with the givens and the case's condition in scope (a = b*c closes a/c = b
            # given c != 0), tried second so that what closes alone rests on nothing more
            in_scope = [t for t in facts.values() if any(t is p for p in self.supposed)]
            if closing.status != "verified" and in_scope:
                closing = K.decide(self.setting, [last, *in_scope], goal,
                                   timeout_ms=self.checker.timeout_ms)
            if closing.status == "verified":
                self._record(last_pos, f"goal: {_show(goal)}", "verified",
                             "follows from the line above")
                return closing.theorem
        if broken is not None:
            exc, xfail = broken
            return self._hypothetical(goal, "expected" if xfail else "failed",
                                      f"the line {exc.line} has an error")
        shown = "nothing" if last is None else f"'{_show(last.concl)}'"
        reason = f"the proof shows {shown}, but the goal is '{_show(goal)}'"
        if last is not None and _show(last.concl) == _show(goal):
            reason += (" (the goal's terms as written mean something in fewer places: a "
                       "division, a square root or an index that the proof's terms lack)")
        self._record(last_pos, f"goal: {_show(goal)}", "failed", reason)
        return self._hypothetical(goal, "failed", f"the proof ending at line {last_pos.line} "
                                                  f"does not reach its goal")

    def _item(self, item, goal, facts: dict, last, broken):
        """Check one proof item; (its result, a Theorem, and the position of its end)."""
        if isinstance(item, A.Chain):
            thm = self._chain(item, facts)
            if item.name is not None:
                self._bind(facts, item.name, thm, item.pos)
            return thm, item.steps[-1].pos
        if isinstance(item, A.Hence):
            if last is None and broken is None:
                raise self.scope.error("'hence' needs a fact above it", item.pos)
            # After an item with an error, `hence` goes on from what it cites alone.
            thm = self._step(self.scope.statement(item.formula), item.cites, item.xfail,
                             item.pos, item.text, facts, extra=[last] if last else [],
                             vectors=list(self.scope.vectors_seen))
            return thm, item.pos
        if isinstance(item, A.Claim):
            self.scope.vectors_seen = []
            formula = self.scope.statement(item.formula)
            thm = self._step(formula, item.cites, item.xfail, item.pos, item.text, facts,
                             vectors=list(self.scope.vectors_seen))
            if item.name is not None:
                self._bind(facts, item.name, thm, item.pos)
            return thm, item.pos
        if isinstance(item, A.Contradiction):
            return self._absurd(item, goal, facts), item.pos
        return self._cases(item, goal, facts), item.pos

    def _absurd(self, item: A.Contradiction, goal, facts: dict):
        """`contradiction by ...`: the goal, from cited facts that contradict each other."""
        AUDIT.label = f"{self.display}:{item.pos.line}:{item.pos.col}"
        started = time.perf_counter()
        premises, instances, cited = self._resolve(item.cites, facts,
                                                   list(self.scope.vectors_seen))
        try:
            decision = K.absurd(self.setting, premises, goal, facts=instances,
                                timeout_ms=self.checker.timeout_ms)
        except KernelError as exc:
            raise self.scope.error(str(exc), item.pos) from None
        unverified = self._unverified_citations(premises)
        status, reason = decision.status, decision.reason
        if status == "verified" and unverified:
            status = "failed"
            reason = f"holds only if {', '.join(unverified)} hold, which are not verified"
        elif status == "verified" and item.xfail:
            status, reason = "failed", "marked xfail, but the contradiction verifies"
        elif status != "verified" and decision.kind == "contradiction":
            reason = f"no contradiction among {_cited(cited)}: {reason}"
            if item.xfail and status == "failed":
                status = "expected_failure"
        self._record(item.pos, item.text, status, reason, xfail=item.xfail)
        self.report.steps[-1].seconds = time.perf_counter() - started
        if decision.status == "verified":
            return decision.theorem
        cause = "expected" if status == "expected_failure" else "failed"
        return self._hypothetical(goal, cause, f"the contradiction at line {item.pos.line} "
                                               f"fails")

    def _bind(self, facts: dict, name: str, thm, pos: A.Pos):
        if name in facts or name in self.scope.kinds or name in BUILTIN_FACTS:
            raise self.scope.error(f"{name} is already a name here", pos)
        facts[name] = thm

    def _chain(self, chain: A.Chain, facts: dict):
        """The chain's result; when its steps do not compose, a supposition of what it claims
        (the failure is recorded), so that what follows is still judged.  A chain of vector
        equations is _vector_chain's."""
        self.scope.vectors_seen = []
        first = chain.steps[0]
        equation = A.Rel(first.op, chain.first, first.rhs, chain.pos, first.text)
        if self.scope.is_vector_equation(equation):
            return self._vector_chain(chain, facts)
        first = self.scope.scalar(chain.first, "a chain relates scalars")
        prev = first
        prev_vectors = list(self.scope.vectors_seen)
        result = None
        broken = None
        meaningless = ()  # the left side's domain conditions, when the step above failed them
        for step in chain.steps:
            self.scope.vectors_seen = []
            rhs = self.scope.scalar(step.rhs, "a chain relates scalars")
            vectors = prev_vectors + list(self.scope.vectors_seen)
            formula = self.scope.written_formula(step.op, prev, rhs, step.pos)
            thm = self._step(formula, step.cites, step.xfail, step.pos, step.text, facts,
                             vectors=vectors, supposed=meaningless)
            meaningless = self._supposed_meaningful(rhs, step)
            if result is None:
                result = thm
            elif broken is None:
                try:
                    result = K.trans(self.setting, result, thm)
                except KernelError as exc:
                    self._record(step.pos, step.text, "failed",
                                 f"the chain does not compose: {exc}")
                    broken = step
            prev, prev_vectors = rhs, list(self.scope.vectors_seen)
        self.scope.vectors_seen = prev_vectors
        if broken is not None:
            claimed = self.scope.written_formula(chain.steps[-1].op, first, prev, chain.pos)
            return self._hypothetical(claimed, "failed", f"the chain at line {chain.pos.line} "
                                                         f"does not compose")
        return result

    def _vector_chain(self, chain: A.Chain, facts: dict):
        """u = v1 = v2 ... of vectors: each link a vector equation proved on its own line, then
        u = (the last) decided by the kernel from the links alone (each link defines a vector
        or is an equation ||lhs - rhs||^2 = 0 of its own)."""
        links = []
        previous = chain.first
        for step in chain.steps:
            link = A.Rel(step.op, previous, step.rhs, step.pos, step.text)
            try:
                formula = self.scope.formula(link)
            except ProofSyntaxError:  # no vector alone (eta*(w + x) = eta*v): ||u - v||^2 = 0
                if len(chain.steps) == 1 or step.op != "=":
                    raise
                formula = self.scope.zero_difference(link)
            links.append(self._step(formula, step.cites, step.xfail, step.pos, step.text,
                                    facts))
            previous = step.rhs
        if len(links) == 1:
            return links[0]
        last = chain.steps[-1]
        claimed = self.scope.formula(A.Rel("=", chain.first, last.rhs, chain.pos, last.text))
        decision = K.decide(self.setting, links, claimed, timeout_ms=self.checker.timeout_ms)
        if decision.status == "verified":
            return decision.theorem
        self._record(last.pos, last.text, "failed", f"the chain does not compose: "
                                                    f"{_show(claimed)} does not follow from its "
                                                    f"links ({decision.reason})")
        return self._hypothetical(claimed, "failed", f"the chain at line {chain.pos.line} "
                                                     f"does not compose")

    def _supposed_meaningful(self, rhs, step: A.Step) -> tuple:
        """After a step whose right side may be meaningless (1/0, sqrt(-1)), the next step of
        the chain supposes it meaningful, so that it is judged on its own terms.  The
        suppositions are labelled: a lemma resting on them is never verified."""
        last = self.report.steps[-1] if self.report.steps else None
        if last is None or last.line != step.pos.line or last.status == "verified" or \
                not last.reason.startswith(("division by", "square root of", "index ")):
            return ()
        cause = "expected" if last.status == "expected_failure" else "failed"
        obligations = K.written.interpret(rhs).obligations
        return tuple(self._hypothetical(o, cause, f"the step at line {step.pos.line} fails")
                     for o in obligations)

    def _cases(self, item: A.Cases, goal, facts: dict):
        premises, _, _ = self._resolve(item.cites, facts, [])
        branches = []
        for case in item.branches:
            condition = self.scope.statement(case.condition)
            sub = dict(facts)
            supposed = K.assume(self.setting, condition)
            self.supposed.append(supposed)
            self._bind(sub, case.name, supposed, case.pos)
            branches.append((condition, self._items(case.items, goal, sub, case.pos)))
        conditions = " or ".join(_show(c) for c, _ in branches)
        try:
            cover, thm = K.cases(self.setting, goal, branches, premises,
                                 timeout_ms=self.checker.timeout_ms)
        except KernelError as exc:
            self._record(item.pos, item.text, "failed", f"the case split is invalid: {exc}")
            return self._hypothetical(goal, "failed", f"the case split at line {item.pos.line} "
                                                      f"is invalid")
        if cover.status == "verified":
            self._record(item.pos, item.text, "verified", f"the cases cover: {conditions}")
            return thm
        reason, cex = self._explain(cover, f"the cases do not cover every possibility "
                                           f"({conditions})")
        self._record(item.pos, item.text, cover.status, reason, cex)
        return self._hypothetical(goal, "failed", f"the case split at line {item.pos.line} "
                                                  f"does not cover")

    # ------------------------------------------------------------------ one step

    def _step(self, goal: K.Relation, cites: list, xfail: bool, pos: A.Pos, text: str,
              facts: dict, extra=(), vectors=(), supposed=()):
        started = time.perf_counter()
        AUDIT.label = f"{self.display}:{pos.line}:{pos.col}"
        premises, instances, cited = self._resolve(cites, facts, vectors)
        premises = list(extra) + premises + list(supposed)
        try:
            decision = K.decide(self.setting, premises, goal, facts=instances,
                                timeout_ms=self.checker.timeout_ms)
            squares = [] if "norm_nonneg" in cited else self._default_instances(
                "norm_nonneg", list(vectors) + _expanded_squares(premises))
            if decision.status != "verified" and decision.kind == "goal" and squares:
                # A square of the norm of a sum of vectors is >= 0, which its expansion into
                # inner products no longer shows: told only when the step needs it.
                again = K.decide(self.setting, premises, goal, facts=instances + squares,
                                 timeout_ms=self.checker.timeout_ms)
                if again.status == "verified":
                    decision = again
            shifted = self._shifted(premises, goal) if decision.kind == "goal" and \
                decision.status != "verified" else []
            if shifted:
                again = K.decide(self.setting, premises + shifted, goal, facts=instances,
                                 timeout_ms=self.checker.timeout_ms)
                if again.status == "verified":
                    decision = again
            # (not after a decision the solver could not make: each comparison is one more,
            # with the same facts in force)
            compared = self._sums_compared(premises, goal, instances) \
                if decision.kind == "goal" and decision.status == "failed" else []
            if compared:
                again = K.decide(self.setting, premises + compared, goal, facts=instances,
                                 timeout_ms=self.checker.timeout_ms)
                if again.status == "verified":
                    decision = again
        except KernelError as exc:  # a citation the kernel refuses (a symbol of another kind)
            raise self.scope.error(str(exc), pos) from None
        unverified = self._unverified_citations(premises)
        if decision.status == "verified" and unverified:
            # The step holds only relative to a lemma that is not verified: not verified.
            reason = (f"holds only if {', '.join(unverified)} "
                      f"{'holds' if len(unverified) == 1 else 'hold'}, which "
                      f"{'is' if len(unverified) == 1 else 'are'} not verified")
            self._record(pos, text, "expected_failure" if xfail else "failed", reason,
                         xfail=xfail)
            self.report.steps[-1].seconds = time.perf_counter() - started
            return decision.theorem
        if decision.status == "verified":
            if xfail:
                self._record(pos, text, "failed", "marked xfail, but the step verifies",
                             xfail=True)
            else:
                self._record(pos, text, "verified", "")
            self.report.steps[-1].seconds = time.perf_counter() - started
            return decision.theorem
        base = f"does not follow from {_cited(cited, bool(extra))}"
        if supposed:
            base += " (supposing its left side meaningful, which the step above could not show)"
        if decision.kind == "domain":
            base = K.describe_obligation(decision.obligation, goal, _show_expr)
        status, judgement, reason, cex = decision.status, "", base, None
        explained = not xfail or self.checker.explain_expected
        if explained and decision.kind == "goal" and status == "failed":
            status, judgement, reason, cex = self._in_setting(goal, premises, instances, facts,
                                                              base, cited)
        elif explained and decision.kind == "domain" and status == "failed":
            status, reason, cex = self._domain_counterexample(decision.obligation, premises,
                                                              instances, base, cited)
        elif explained:
            reason, cex = self._explain(decision, base, [c for c in cites if c.name in facts])
        missing = []
        # An expected failure with its counterexample needs no hint (the slip is known): the
        # search for facts that would make it hold cost 7% of `novikoff check proofs/`.
        if explained and decision.kind != "vacuous" and decision.status == "failed" \
                and not (xfail and cex):
            missing = self._missing(decision.obligation, premises, instances, cited, facts,
                                    vectors)
            if missing:
                reason += f"; it would hold with: {', '.join(missing)}"
        if xfail and status in ("failed", "unknown"):  # not verified, as the xfail says
            status = "expected_failure"
        self._record(pos, text, status, reason, cex, missing, xfail=xfail,
                     judgement=judgement)
        self.report.steps[-1].seconds = time.perf_counter() - started
        cause = "expected" if status == "expected_failure" else "failed"
        return self._hypothetical(goal, cause, f"the step at line {pos.line} "
                                               f"{'fails (expected)' if xfail else 'fails'}")

    def _shifted(self, premises, goal) -> list:
        """The cited facts that hold at every value of a nat k, again at k+1, ..., k+c, when the
        goal reads a sequence c places further along than they do (`w[k+2]` by the update rule):
        what a textbook's "by the update rule" means over two updates; and at the other indices
        the goal reads (`c[0] + c[1] <= 2  by cb` with cb at every t: at t := 0 and 1; w[T+1]
        by the update rule in k: at k := T).  Then once more at the indices the moved facts read
        (the update at k := T reads x[T] and y[T], where the margin meets them).  The kernel
        (instantiate) decides whether each fact may move; a fact that may not is left as it
        is."""
        read = _read_elements(goal)
        moved, tried = [], set()
        for _ in range(2):
            for thm in premises:
                for k in sorted(free_symbols(thm.concl) & self.setting.nats, key=str):
                    for value in _moves(read, thm.concl, k, self.setting.nats):
                        if (thm, k, value) in tried:
                            continue
                        tried.add((thm, k, value))
                        # (T - 1 is a nat where a cited given says T >= 1)
                        shown_by = () if at_least_zero(value, self.setting.nats) else premises
                        try:
                            _, instance = K.instantiate(self.setting, thm, k, value, shown_by,
                                                        timeout_ms=self.checker.timeout_ms)
                        except KernelError:  # it does not hold at every k
                            break
                        if instance is not None:
                            moved.append(instance)
            read = read.union(*(_read_elements(t.concl) for t in moved))
        return moved

    def _sums_compared(self, premises, goal, instances) -> list:
        """Two sums of one count that the goal holds inside a root or a power (or a sum of the
        goal and the sum of what a cited fact equates its terms with), compared term by
        term from what the step cites (sum(r[i]^2) = sum(c[i]) by r[t]^2 = c[t], for
        sqrt(sum(r[i]^2)) = sqrt(sum(c[i]))): the kernel's termwise rule reads a goal linear in
        its sums only.  Each comparison is a kernel decision of its own."""
        inner = {s for side in sides(goal) for p in side.atoms(sp.Pow)
                 for s in p.base.atoms(sp.Sum)}
        out = []
        pairs = [(a, b) for a, b in itertools.combinations(sorted(inner, key=sp.default_sort_key),
                                                           2) if count(a) == count(b)]
        # (a partner sum for any sum of the goal: sum(r)^2 <= T*sum(c) by r[t]^2 = c[t] needs
        # sum(r^2) = sum(c), the sum outside the power)
        pairs += self._partner_sums(premises, {s for side in sides(goal)
                                               for s in side.atoms(sp.Sum)})
        # At most _COMPARISONS decisions in all: each is a whole decision, and hard givens made
        # the 24 of 8 pairs take minutes.
        tries = [(a, b, rel) for a, b in pairs for rel in ("=", "<=", ">=")][:_COMPARISONS]
        done = set()
        for a, b, rel in tries:
            if (a, b) in done:
                continue
            compared = K.decide(self.setting, premises, K.Relation(rel, a, b),
                                facts=instances, timeout_ms=self.checker.timeout_ms)
            if compared.status == "verified":
                out.append(compared.theorem)
                done.add((a, b))
        return out

    def _partner_sums(self, premises, sums) -> list:
        """(S', S) for each sum S and each cited fact `A = B` (or `<=`, `>=`) in a nat k whose
        side B at k := S's index is S's term: S' the sum of A over S's count (sum(i < T,
        r[i]^2) for sum(i < T, c[i]) by r[t]^2 = c[t]), which the goal need not mention (a
        Cauchy-Schwarz fact for sums brings it in)."""
        out = []
        for total in sorted(sums, key=sp.default_sort_key):
            (index, *_), = total.limits
            for thm in premises:
                f = thm.concl
                if not (isinstance(f, K.Relation) and f.rel in ("=", "<=", ">=")):
                    continue
                for k in sorted(free_symbols(f) & self.setting.nats, key=str):
                    for side, other in ((f.rhs, f.lhs), (f.lhs, f.rhs)):
                        if other.has(sp.Sum):  # (its index would be captured)
                            continue
                        try:
                            if exact_subs(side, k, index) != total.function:
                                continue
                            partner = total.func(exact_subs(other, k, index), *total.limits)
                        except ValueError:  # not exactly at that index (terms.exact_subs)
                            continue
                        if partner != total and (partner, total) not in out:
                            out.append((partner, total))
        return out[:_SHIFTS]

    def _in_setting(self, goal, premises, instances, facts: dict, base: str,
                    cited=()) -> tuple:
        """Why a step that does not follow from what it cites fails: (status, judgement,
        reason, counterexample).  A counterexample that satisfies every assumption, given,
        case condition and fact in force makes it a slip (false in its setting, 'failed'); if
        those facts imply it, it is under-justified (true in its setting, 'failed': it needs
        more citations); otherwise it is undecided ('unknown')."""
        in_force = [t for t in facts.values()
                    if not any(isinstance(h, K.Supposition) for h in t.hyps)]
        try:
            # One search (measured: a decide() with every fact in force cost 13% of checking
            # the library, for its 33 expected failures).
            found = self._search(in_force + list(premises), goal, instances)
        except KernelError as exc:
            return "unknown", "", f"could not decide: it {base} ({exc})", None
        if found.counterexample is not None:
            return ("failed", "slip", f"{base} (false in its setting: the counterexample "
                                      f"satisfies every assumption and fact in force)",
                    found.counterexample)
        if found.holds:  # what it needs: the facts _missing finds (cauchy_schwarz among them)
            return "failed", "under-justified", f"true in this setting, but it {base}", None
        # (a cited assumption holds at every k: at every index the counterexample shows)
        as_cited = self._search(premises, goal, instances, whole=False,
                                everywhere=self._assumptions_among(cited))
        if as_cited.counterexample is not None:  # it fails as cited; false in its setting or not
            return ("failed", "", f"{base} (the counterexample satisfies what it cites; none "
                                  f"that satisfies the whole setting was confirmed: "
                                  f"{found.note})", as_cited.counterexample)
        return "unknown", "", f"could not decide: it {base}, and no counterexample in its " \
                              f"setting was confirmed ({found.note})", None

    def _domain_counterexample(self, obligation, premises, instances, base: str, cited):
        """(status, reason, counterexample) of a condition of meaning the step could not show:
        values that meet what it cites (the sums' termwise facts told, a cited assumption at
        every index they show) and break the condition; else undecided, since values that break
        a cited fact are no counterexample (c[0] = 0 against a cited c[t] >= 1)."""
        try:
            found = self._search(premises, obligation, instances,
                                 everywhere=self._assumptions_among(cited))
        except KernelError as exc:
            return "unknown", f"could not decide whether {base} ({exc})", None
        if found.counterexample is not None:
            return "failed", base, found.counterexample
        if found.holds:  # (for reals: the note says what to cite)
            return "failed", f"{base} ({found.note})", None
        return "unknown", f"could not decide whether {base}: no counterexample that meets " \
                          f"what it cites was confirmed ({found.note})", None

    def _assumptions_among(self, cited) -> list:
        """The setting's assumptions that the step cites (they hold at every k)."""
        return [self.scope.assumptions[n] for n in cited if n in self.scope.assumptions]

    def _search(self, premises, goal, instances=(), whole: bool = True, everywhere=None):
        """A counterexample search (diagnostics) over what decide() would tell the solver;
        whole: one of the whole setting (see explain_failure).  everywhere: the assumptions it
        must meet at every index it shows (default: all of them)."""
        hyps, target = K.told_for(self.setting, premises, goal, facts=instances)
        # the setting's assumptions hold at every k: a counterexample must meet them at every
        # index it shows (w[0] = 0 refuses <w[0], w[0]> = 1), one with a per-update symbol with
        # another example at another index, which meets the declarations and the assumptions
        # that speak of one example alone
        assumptions = list(self.scope.assumptions.values() if everywhere is None
                           else everywhere)
        per_update = self.setting.per_update_symbols
        of_one = [f for f in [*self.setting.declarations, *assumptions]
                  if free_symbols(f) & per_update and not free_symbols(f) & self.setting.nats]
        return explain_failure(hyps, target, nats=self.setting.nats,
                               everywhere=assumptions + self._label_declarations(),
                               examples=(per_update, of_one), whole=whole,
                               timeout_ms=DIAGNOSTIC_TIMEOUT_MS)

    def _label_declarations(self) -> list:
        """y[k]^2 = 1 (m[k]^2 = m[k] in {0, 1}) for each label sequence, at a nat k, so that a
        counterexample meets the declarations at every index it shows (m[0] = 7 does not)."""
        nat = min(self.setting.nats, key=str, default=None)
        if nat is None:  # then every element is at a number, and its declaration is told
            return []
        out = []
        for name, kind in self.setting.kinds.items():
            if kind in ("label_sequence", "label01_sequence"):
                element = self.scope.symbol(name)(nat)
                out.append(K.Relation("=", element ** 2, element if kind == "label01_sequence"
                                      else sp.Integer(1)))
        return out

    def _unverified_citations(self, premises) -> list:
        """The unverified lemmas that a step cites directly."""
        return list(dict.fromkeys(self.unverified_cites[t] for t in premises
                                  if t in self.unverified_cites))

    def _explain(self, decision: K.Decision, base: str, cited=()):
        if decision.kind == "vacuous":
            core = self._contradiction(cited)
            names = f" ({', '.join(core)})" if core else ""
            return f"vacuous: {decision.reason}{names}", None
        if decision.status == "unknown":
            return f"could not verify: {decision.reason or 'the solver gave up'}", None
        goal = decision.obligation
        explanation = explain_failure(decision.hypotheses, goal, nats=self.setting.nats,
                                      timeout_ms=DIAGNOSTIC_TIMEOUT_MS)
        reason = base
        if explanation.note:
            reason += f" ({explanation.note})"
        return reason, explanation.counterexample

    def _contradiction(self, cites) -> list:
        """A minimal set of cited facts that contradict each other (with the declarations)."""
        facts = {c.name: self.scope.assumptions.get(c.name) for c in cites}
        facts = {n: f for n, f in facts.items() if f is not None}

        def contradictory(names) -> bool:
            hyps = list(self.setting.declarations) + [facts[n] for n in names]
            return K.entails(hyps, None, DIAGNOSTIC_TIMEOUT_MS,
                             self.setting.nats).answer == "valid"

        needed = list(facts)
        if not needed or not contradictory(needed):
            return []
        for name in list(needed):
            trial = [n for n in needed if n != name]
            if contradictory(trial):
                needed = trial
        return needed

    def _missing(self, goal, premises, instances, cited, facts, vectors) -> list:
        """Named facts in scope that would make the step hold (a minimal set)."""
        mentioned = free_symbols(goal)
        candidates = [(name, thm) for name, thm in facts.items()
                      if name not in cited and free_symbols(thm.concl) & mentioned]
        named = [] if "cauchy_schwarz" in cited else [("cauchy_schwarz", inst) for inst in
                                                      self._default_instances(
                                                          "cauchy_schwarz", vectors)]
        if "nat_cases" not in cited:
            named += [("nat_cases", ("nat_cases", k))
                      for k in sorted(self.setting.nats, key=str)]
        pool = candidates + [(n, None) for n in dict.fromkeys(n for n, _ in named)]
        if not pool:
            return []

        def holds(subset) -> bool:
            thms = [t for n, t in subset if t is not None]
            extra = [i for n, i in named if any(n == m for m, _ in subset)]
            d = K.decide(self.setting, list(premises) + thms, goal,
                         facts=list(instances) + extra, timeout_ms=DIAGNOSTIC_TIMEOUT_MS)
            return d.status == "verified"

        try:
            if not holds(pool):
                return []
            needed = list(pool)
            for entry in list(pool):
                trial = [e for e in needed if e is not entry]
                if holds(trial):
                    needed = trial
        except KernelError:
            return []
        return [n for n, _ in needed]

    def _resolve(self, cites: list, facts: dict, vectors):
        premises, instances, cited = [], [], []
        elsewhere = []  # (cite, theorem) of NAME[k := e]
        for cite in cites:
            name = cite.name
            cited.append(name)
            if cite.at is not None and name in NAMED_FACTS:
                raise self.scope.error(f"{name} holds everywhere already: it takes no "
                                       f"[k := e]", cite.pos)
            if cite.at is not None and name == "ih":
                raise self.scope.error("the induction hypothesis holds at k only: it takes no "
                                       "[k := e]", cite.pos)
            if name in NO_OP_FACTS:
                if cite.args:
                    raise self.scope.error(f"{name} takes no arguments", cite.pos)
                continue
            if name in VECTOR_FACTS:
                if cite.args:
                    arity = 1 if name == "norm_nonneg" else 2
                    if len(cite.args) != arity:
                        raise self.scope.error(f"{name} takes {'one vector' if arity == 1 else 'two vectors'}", cite.pos)
                    instances.append((name, *(
                        self.scope.meaning(self.scope.vector(a, f"{name} takes vectors"),
                                           a.pos) for a in cite.args)))
                else:
                    instances += self._default_instances(name, vectors)
                continue
            if name == "nat_cases":
                instances += self._nat_instances(cite, vectors)
                continue
            if cite.args:
                raise self.scope.error(f"{name} takes no arguments", cite.pos)
            if name == self.lemma.name:
                raise self.scope.error(f"{name} cites itself"
                                       + ("; cite ih for the induction hypothesis"
                                          if self.lemma.proof.method == "induction" else ""),
                                       cite.pos)
            if name in facts or name in self.done:
                thm = (facts[name] if name in facts
                       else self._lemma_theorem(self.done[name], cite.pos))
                if cite.at is None:
                    premises.append(thm)
                else:
                    elsewhere.append((cite, thm))
            elif name in self.parts:  # a part the file does not have (or has later)
                if cite.at is None:
                    premises.append(self._part(name))
                else:
                    elsewhere.append((cite, self._part(name)))
            elif name in self.later:
                raise self.scope.error(f"{name} is proved later (line {self.later[name]}); a "
                                       f"proof may cite only earlier lemmas", cite.pos)
            elif name == "ih":
                raise self.scope.error("ih is available only in the step of an induction",
                                       cite.pos)
            else:
                raise self.scope.error(f"unknown fact {name!r}", cite.pos)
        premises += [self._elsewhere(cite, thm, premises) for cite, thm in elsewhere]
        return premises, instances, cited

    def _elsewhere(self, cite: A.Cite, thm, premises: list):
        """NAME[k := e, a := f]: the cited fact at other values of its symbols, one after the
        other, where the step's other citations show each value fit (k - 1 >= 0 for a nat; for
        a real, its sign constraint; a value that means something)."""
        names = [var.id for var, _ in cite.at]
        if thm in self.unverified_cites:
            raise self.scope.error(f"{cite.name} is not verified: it cannot be used at another "
                                   f"value of {names[0]}", cite.pos)
        if thm in self.part_theorems:
            raise self.scope.error(f"{cite.name} is cited as the assignment states it, not "
                                   f"proved here: it holds at {names[0]} only; prove it to use "
                                   f"it at another value of {names[0]}", cite.pos)
        for i, (var, expr) in enumerate(cite.at):
            kind = self.scope.kinds.get(var.id)
            if kind is None:
                raise self.scope.error(f"{var.id} is not a symbol of setting "
                                       f"{self.scope.name}", var.pos)
            if var.id in names[:i]:
                raise self.scope.error(f"{var.id} is given two values", var.pos)
            value = self._value_of(var.id, kind, expr)
            shown = (value.__name__ if kind.endswith("sequence") else
                     _show_vec(value) if kind == "vector" else _show_expr(value))
            later = set(names[i + 1:]) & _names_in(value)
            if later:
                raise self.scope.error(f"{sorted(later)[0]} is replaced after {var.id}: the "
                                       f"values are put in one after another, so write it in "
                                       f"another order (or in two steps)", expr.pos)
            label = f"{cite.name}[{var.id} := {shown}]"
            move = K.instantiate if kind == "nat" else K.specialize
            # Before another value, the fit shown from the declarations alone if it can be: the
            # step's facts it would rest on could be ones the next value moves (a given about k
            # or g: only what rests on the setting moves to another k).
            later = i + 1 < len(cite.at)
            try:
                shown_fit, instance = move(self.setting, thm, self.scope.symbol(var.id), value,
                                           () if later else premises, self.checker.timeout_ms)
                if instance is None and later and premises:
                    shown_fit, instance = move(self.setting, thm, self.scope.symbol(var.id),
                                               value, premises, self.checker.timeout_ms)
            except KernelError as exc:
                raise self.scope.error(f"{label}: {exc}", cite.pos) from None
            if instance is None:
                needed = shown_fit.obligation
                what = (f"{shown} may be negative" if kind == "nat" else
                        f"it needs {_show(needed)} ({var.id}'s declaration, and where the "
                        f"value means something)" if needed is not None else
                        f"{shown} may not meet {var.id}'s declaration")
                raise self.scope.error(f"{label}: {what}; cite what shows it in the same step",
                                       cite.pos)
            thm = instance
        return thm

    def _value_of(self, name: str, kind: str, expr):
        """The kernel's value for NAME := expr: a term of name's kind."""
        if kind.endswith("sequence"):
            if not isinstance(expr, A.Name) or self.scope.kinds.get(expr.id) != kind:
                raise self.scope.error(f"{name} is a {kind.replace('_', ' ')}: its value is "
                                       f"another {kind.replace('_', ' ')} of the setting",
                                       expr.pos)
            return self.scope.symbol(expr.id)
        if kind == "vector":
            return self.scope.meaning(self.scope.vector(expr, f"{name} is a vector"), expr.pos)
        message = "a nat's value is a number" if kind == "nat" else f"{name} is a scalar"
        return self.scope.meaning(self.scope.scalar(expr, message), expr.pos)

    def _nat_instances(self, cite: A.Cite, vectors) -> list:
        if cite.args:
            out = []
            for a in cite.args:
                k = self.scope.meaning(self.scope.scalar(a, "nat_cases takes nat variables"),
                                       a.pos)
                if k not in self.setting.nats:
                    raise self.scope.error("nat_cases takes nat variables", a.pos)
                out.append(("nat_cases", k))
            return out
        return [("nat_cases", k) for k in sorted(self.setting.nats, key=str)]

    def _default_instances(self, name: str, vectors) -> list:
        unique = []
        for v in vectors:
            if not v.is_zero() and v not in unique:
                unique.append(v)
        out = []
        if name == "norm_nonneg":
            # The squared norms of the step's sums of vectors (a single vector's is known), and
            # of the sums and differences of two of its vectors (2<u, v> <= ||u||^2 + ||v||^2).
            out = [(name, v) for v in unique if len(v.terms) > 1]
            if len(unique) <= 4:
                out += [(name, u + v.scale(sp.Integer(sign))) for i, u in enumerate(unique)
                        for v in unique[i + 1:] for sign in (1, -1)]
        elif name == "cauchy_schwarz":
            for i in range(len(unique)):
                for j in range(i + 1, len(unique)):
                    out.append((name, unique[i], unique[j]))
        else:
            for v in unique:
                if len(v.terms) > 1:
                    for atom, coeff in v.terms:
                        part = K.Vec.atom(atom).scale(coeff)
                        out.append((name, part, v - part))
        return out[:24]

    def _lemma_theorem(self, outcome: LemmaReport, pos: A.Pos):
        """The theorem of a cited lemma, or its statement supposed if it is not verified."""
        if outcome.formula is None:
            raise self.scope.error(f"{outcome.name} cannot be cited: its statement or givens "
                                   f"have an error (line {outcome.line})", pos)
        if outcome.scope is not self.scope:
            self._check_compatible(outcome, pos)
        if outcome.name in self.parts and (
                outcome.parts_cited or outcome.status != "verified"
                or not all(self.setting.allows(h) for h in outcome.theorem.hyps)):
            # proved only from other parts, not at all, or not in this setting
            return self._part(outcome.name)
        if outcome.status == "verified":
            return outcome.theorem
        thm = self._hypothetical(outcome.formula, "cites",
                                 f"cites {outcome.name}, which is not verified")
        self.unverified_cites[thm] = outcome.name
        return thm

    def _part(self, name: str):
        """An earlier assignment part, cited unproved: its statement (the assignment's) as a
        hypothesis, which becomes a premise of this lemma's statement."""
        self.parts_cited[name] = self.parts[name]
        thm = K.assume(self.setting, self.parts[name])
        self.part_theorems.add(thm)
        return thm

    def _check_compatible(self, outcome: LemmaReport, pos: A.Pos):
        """A lemma of another setting means the same here only if every symbol it mentions
        has the same kind here (per update included); the kernel checks it again."""
        theirs, mine = outcome.scope.setting, self.setting
        for e in free_symbols(outcome.formula):
            name = e.func.__name__ if isinstance(e, sp.core.function.AppliedUndef) else str(e)
            if name not in theirs.kinds:
                continue
            kind = theirs.kind_of(name).replace("_", " ")
            if name not in mine.kinds:
                raise self.scope.error(f"{outcome.name} ({outcome.file}) mentions {name} (a "
                                       f"{kind}), which is not declared here", pos)
            here = mine.kind_of(name).replace("_", " ")
            if here != kind:
                raise self.scope.error(f"{outcome.name} ({outcome.file}) uses {name} as a "
                                       f"{kind}, but here it is a {here}", pos)

    # ------------------------------------------------------------------ bookkeeping

    def _hypothetical(self, formula, cause: str, description: str):
        label = f"{self.display}:{self.lemma.name}:{len(self.checker.hypothetical)}"
        thm = K.assume(self.setting, formula, label=label)
        (supposition,) = thm.hyps
        self.checker.hypothetical[supposition] = (cause, description)
        return thm

    def _record_error(self, exc: ProofSyntaxError, xfail: bool = False):
        """A positioned error (a type error, an unknown name) as a check of this lemma."""
        self.report.steps.append(StepReport(
            self.display, exc.line, exc.column, self.lemma.name,
            exc.text or self.scope.lines.get(exc.line, ""),
            "expected_failure" if xfail else "failed", f"error: {exc.message}", xfail=xfail))

    def _record(self, pos: A.Pos, text: str, status: str, reason: str = "",
                counterexample=None, missing=(), xfail: bool = False, judgement: str = ""):
        # What the check rests on: the decisions the kernel made since the last record.
        basis = ("certified" if LEDGER.uncertified == self.ledger_mark else "solver") \
            if status == "verified" else ""
        self.ledger_mark = LEDGER.uncertified
        self.report.steps.append(StepReport(self.display, pos.line, pos.col, self.lemma.name,
                                            text, status, reason, counterexample,
                                            list(missing), xfail, judgement=judgement,
                                            basis=basis))


def _run_claim(claim: A.RunClaim, path: Path, display: str, lines: dict) -> LemmaReport:
    """`claim NAME: refuted by run FILE`: replay the witness run exactly (novikoff.witness) and
    report the claim as failing as expected when the run refutes it.  Nothing here verifies
    anything: a refuted claim is an expected failure, never a verified lemma."""
    from .witness import WitnessError, check_witness  # replays only when a file cites a run

    text = lines.get(claim.pos.line, "")
    report = LemmaReport(claim.name, "claim", display, claim.pos.line, text, outcome="failed")
    started = time.perf_counter()
    try:
        here = path.parent.resolve()
        try:
            target = (here / claim.path).resolve()
        except (OSError, RuntimeError) as exc:  # a loop of symbolic links
            raise WitnessError(f"{claim.path}: cannot be resolved ({exc})") from None
        if not target.is_relative_to(here):  # a proof file reads only what lies beside it
            raise WitnessError(f"{claim.path}: a witness file must be in the directory of the "
                               f".proof file or below it")
        found = check_witness(path.parent / claim.path)
    except WitnessError as exc:
        status, reason = "failed", f"error: {exc}"
    else:
        report.statement = found.statement
        status = "expected_failure" if found.refuted else "failed"
        reason = (f"refuted by run {claim.path}: {found.summary}" if found.refuted else
                  f"the run {claim.path} does not refute it: {found.summary}")
    report.outcome, report.reason = status, reason
    report.steps.append(StepReport(display, claim.pos.line, claim.pos.col, claim.name, text,
                                   status, reason, xfail=True,
                                   seconds=time.perf_counter() - started))
    return report


def _read_elements(formula) -> set:
    """The (sequence, index) pairs a formula reads."""
    return {(e.func, e.args[0]) for e in free_symbols(formula)
            if isinstance(e, sp.core.function.AppliedUndef) and len(e.args) == 1}


def _moves(read: set, formula, k, nats) -> list:
    """The values of the nat k at which a fact about k reaches the (sequence, index) pairs a
    goal reads: k + 1, ..., k + c when the goal reads c places further along, or k - 1, ...,
    k - c when it reads c places before (at most _SHIFTS), then the other indices it reads (at most _OTHER_INDICES), whole numbers >= 0 or
    polynomials in the other nats."""
    own = {(e.func, sp.expand(e.args[0] - k)) for e in free_symbols(formula)
           if isinstance(e, sp.core.function.AppliedUndef) and len(e.args) == 1
           and sp.expand(e.args[0] - k).is_Integer}
    reach = max((int(index - k) for func, index in read
                 if sp.expand(index - k).is_Integer), default=None)
    furthest = max((int(offset) for _, offset in own), default=None)
    shifts = ([k + c for c in range(1, min(reach - furthest, _SHIFTS) + 1)]
              if reach is not None and furthest is not None else [])
    # and back, k - 1, ..., k - c when the goal reads c places before (w[k - 1], as notes that
    # count from 1 write the update: a given k >= 1 shows k - 1 >= 0)
    least = min((int(index - k) for func, index in read
                 if sp.expand(index - k).is_Integer), default=None)
    nearest = min((int(offset) for _, offset in own), default=None)
    shifts += ([k - c for c in range(1, min(nearest - least, _SHIFTS) + 1)]
               if least is not None and nearest is not None else [])
    others = {sp.expand(index - offset) for func, index in read
              for other, offset in own if other == func}
    others = sorted((v for v in others if k not in v.free_symbols and v.free_symbols <= nats
                     and not (v.is_Integer and v < 0)), key=sp.default_sort_key)
    return shifts + others[:_OTHER_INDICES]


def _xfail_at(item, line: int) -> bool:
    """Whether the line of a proof item where an error is has `xfail`."""
    steps = item.steps if isinstance(item, A.Chain) else [item]
    return any(getattr(step, "xfail", False) and step.pos.line == line for step in steps)


def _expanded_squares(premises) -> list:
    """The vectors u + c/(2a)*v whose squared norms the cited facts hold expanded: a fact with
    a*<u, u> and c*<u, v> among its terms (||a[k] - alpha*a_hat||^2 cited from a lemma is
    <a[k], a[k]> - 2*alpha*<a[k], a_hat> + alpha^2*<a_hat, a_hat>).  Only candidates for
    norm_nonneg, which is true of every vector."""
    out = []
    for thm in premises:
        for side in sides(thm.concl) if isinstance(thm.concl, K.Relation) else ():
            expr = sp.expand(side)
            for inner in expr.atoms(K.Inner):
                c = expr.coeff(inner)
                if inner.args[0] == inner.args[1] or c == 0 or c.has(K.Inner):
                    continue
                for u, v in (inner.args, inner.args[::-1]):
                    a = expr.coeff(K.Inner(u, u))
                    if a != 0 and not a.has(K.Inner):
                        out.append(K.Vec.atom(u) + K.Vec.atom(v).scale(sp.cancel(c / (2 * a))))
    return out


def _cited(cited: list, previous: bool = False) -> str:
    names = (["the fact above"] if previous else []) + [n for n in cited if n != "algebra"]
    return "the declarations" if not names else ", ".join(names) + " and the declarations"


def _show_expr(expr) -> str:
    """Print a kernel term in the notation of .proof files."""
    mapping = {}
    for a in expr.atoms(K.Inner):
        mapping[a] = sp.Symbol(display_name(a))
    for a in expr.atoms(sp.core.function.AppliedUndef):
        if not isinstance(a, K.Inner):
            mapping.setdefault(a, sp.Symbol(atom_name(a)))
    for n in expr.atoms(K.Norm):
        mapping[n] = sp.Symbol(f"||{_show_vec(n.vector())}||")
    for s in expr.atoms(sp.Sum):  # xreplace replaces a sum whole, before its elements
        mapping[s] = sp.Symbol(display_name(s))
    text = str(expr.xreplace(mapping)) if mapping else str(expr)
    return text.replace("**", "^")


def _names_in(value) -> set:
    """The names a value of a substitution mentions (symbols and sequences)."""
    if isinstance(value, sp.core.function.UndefinedFunction):
        return {value.__name__}
    exprs = [e for a, c in value.terms for e in (a, c)] if hasattr(value, "terms") else [value]
    names = set()
    for e in exprs:
        names |= {str(x) for x in e.free_symbols}
        names |= {f.func.__name__ for f in e.atoms(sp.core.function.AppliedUndef)}
    return names


def _show_vec(v) -> str:
    parts = []
    for atom, coeff in v.terms:
        name = display_name(atom)
        parts.append(name if coeff == 1 else f"-{name}" if coeff == -1
                     else f"({_show_expr(coeff)})*{name}")
    return " + ".join(parts).replace("+ -", "- ") or "0"


def _show(formula) -> str:
    """Print a kernel formula in the notation of .proof files."""
    if isinstance(formula, K.Relation):
        return f"{_show_expr(formula.lhs)} {formula.rel} {_show_expr(formula.rhs)}"
    if isinstance(formula, K.Implication):
        return " and ".join(_show_part(p) for p in formula.premises) + " => " + \
            _show_part(formula.conclusion)
    if isinstance(formula, K.Disjunction):
        return " or ".join(_show_part(d) for d in formula.disjuncts)
    if isinstance(formula, K.Conjunction):
        return " and ".join(_show_part(p) for p in formula.parts)
    if isinstance(formula, K.Equivalence):
        return f"{_show_part(formula.left)} <=> {_show_part(formula.right)}"
    return str(formula)


def _show_part(formula) -> str:
    text = _show(formula)
    return text if isinstance(formula, K.Relation) else f"({text})"


def display_path(path) -> str:
    """The path as reports show it: relative to the working directory when it is below it."""
    p = Path(path)
    try:
        return str(p.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(p)


def exit_code(reports) -> int:
    """0: every lemma verified or failing as expected; 1: a failure or unknown; 2: malformed.

    A lemma that rests on an unverified lemma is not verified, so it counts as a failure unless
    the step that cites it is marked xfail.
    """
    if any(r.error is not None for r in reports):
        return 2
    if any(not s.ok for r in reports for s in r.steps):
        return 1
    if any(lemma.status == "failed" for r in reports for lemma in r.lemmas):
        return 1
    return 0


def is_notes_document(path: Path) -> bool:
    """Whether path is a .md or .tex document with a novikoff block (what a folder's notes are)."""
    if path.suffix not in NOTES_SUFFIXES or not path.is_file():
        return False
    try:
        return has_block(read_source(path), path.suffix == ".md")
    except (OSError, ProofSyntaxError):
        return True  # unreadable: listed, so that checking it says why


def check_paths(paths, timeout_ms: int = 5000, jobs: int = 1, notes: bool = False,
                explain_expected: bool = True) -> list:
    """Check every .proof file under paths; one FileReport each, in order.

    jobs > 1: the files are checked by that many worker processes (forked, so each has its own
    kernel, which judges its files; a report comes back with its statuses settled).  Measured:
    `novikoff check proofs/` 2.7 -> 1.7 s in-process on two cores.  Each file gets a fresh fork:
    what Z3 decided before in a process changes how it searches (a consistency check of
    averaged.proof that takes 0.1 s in a fresh process ran past 20 s after some other files), so
    a file's verdicts must not depend on which files its worker happened to check before it.
    """
    files = proof_files(paths, notes)
    if jobs <= 1 or len(files) <= 1 or AUDIT.second_opinion is not None:
        checker = Checker(timeout_ms=timeout_ms, explain_expected=explain_expected)
        return [checker.check_file(p) for p in files]
    # The largest files first, so that the workers finish together.
    by_size = sorted(range(len(files)), key=lambda i: -Path(files[i]).stat().st_size)
    reports = _each_in_a_fork([(files[i], timeout_ms, explain_expected) for i in by_size],
                              jobs)
    out = [None] * len(files)
    for i, report in zip(by_size, reports):
        out[i] = report
    return out


def _each_in_a_fork(jobs: list, workers: int) -> list:
    """_checked_file(job) for each job, each in a fresh fork of this process, at most `workers`
    at a time; the reports in the order of jobs."""
    import multiprocessing

    context = multiprocessing.get_context("fork")
    # The parent's objects (SymPy's, the kernel's caches) are kept out of the workers'
    # collections, which would walk them and so copy their pages (copy on write).  Measured: 3-5%
    # of the workers' CPU over the bundled files.
    gc.freeze()
    try:
        return _forked_reports(context, jobs, workers)
    finally:
        gc.unfreeze()


def _forked_reports(context, jobs: list, workers: int) -> list:
    from multiprocessing.connection import wait

    reports = [None] * len(jobs)
    waiting = list(enumerate(jobs))
    running = {}  # the end a child sends its report on -> (its job's place, the child)
    while waiting or running:
        while waiting and len(running) < workers:
            place, job = waiting.pop(0)
            receive, send = context.Pipe(duplex=False)
            child = context.Process(target=_send_checked_file, args=(job, send), daemon=True)
            child.start()
            send.close()
            running[receive] = (place, child)
        for receive in wait(list(running)):
            place, child = running.pop(receive)
            try:
                answer = receive.recv()
            except EOFError:  # the child died without a word (killed, out of memory)
                child.join()
                answer = CheckingStopped(f"checking {jobs[place][0]} stopped: its process "
                                         f"ended with exit code {child.exitcode} and no report")
            receive.close()
            child.join()
            if isinstance(answer, BaseException):
                for other in running.values():
                    other[1].kill()
                raise answer
            reports[place] = answer
    return reports


def _send_checked_file(job, send) -> None:
    try:
        answer = _checked_file(job)
    except BaseException as exc:  # reaches the parent, which raises it as a pool would
        answer = exc
    send.send(answer)
    send.close()


def _checked_file(job) -> FileReport:
    path, timeout_ms, explain_expected = job
    report = Checker(timeout_ms=timeout_ms, explain_expected=explain_expected).check_file(path)
    report.lemmas = [lemma.settle() for lemma in report.lemmas]
    return report


# The model search's budget when a consistency check is undecided (measured: 0.2 s for a
# kernel-perceptron setting whose check Z3 gave up on after 50 s).
_MODEL_TIMEOUT_MS, _MODEL_BUDGET_S = 3000, 10.0


def _search_model(statement_text: str):
    """A model of a consistency check that the solver could not decide (untrusted: the kernel's
    checker accepts it or not), or None; none without Z3, nor where the solver's checks are
    bounded in its deterministic units (`novikoff grade`): this search's budget is wall-clock."""
    if LIMITS.lemma_units:
        return None
    try:
        from .certify.models import find_model  # Z3 is optional
    except ImportError:
        return None
    return find_model(statement_text, _MODEL_TIMEOUT_MS, _MODEL_BUDGET_S)
