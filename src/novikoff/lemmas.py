"""Checked lemma records for the runtime monitor and the fuzzer: one statement, three uses.

``load_lemmas`` gives every lemma of some .proof files as a ``LemmaInfo``: its statement as a
kernel formula, its setting, and its status.  A LemmaInfo is ``verified`` only when this module
made it from a verified result: a lemma the checker reports verified in this process (its
``LemmaReport.status`` asks the kernel), or a cache entry that this user's novikoff sealed after
such a check.  A LemmaInfo built by hand, or copied with a field changed, is never verified.

The cache (novikoff.lemma_cache; docs/trust.md says what it may claim) keeps, per file, the
outcome of its check: each lemma's name, line, statement text, status and the assumptions its
proof rests on, keyed by the file's bytes, the bytes of everything it imports (transitively),
the novikoff version and the source of the code that judges (kernel, front end, checker).  A hit
re-reads the statements from the file's own text with the parser and the elaborator, so a cache
entry supplies no formula, only the outcome of the check.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import sympy
import z3

from . import __version__, lemma_cache
from .checker import Checker, display_path, proof_files
from .errors import KernelError, ProofSyntaxError
from .kernel import Implication
from .language.elaborate import read_setting
from .language.lexer import BOM, source_lines
from .language.parser import parse, parse_term

__all__ = ["LemmaInfo", "SettingInfo", "files_read", "load_lemmas"]

# The code whose behaviour a cached status stands for: a change to any of it is a new judge.
_JUDGING_SOURCES = ("kernel", "language", "checker.py", "diagnostics.py", "quantities.py",
                    "errors.py", "lemmas.py")
# A file modified this recently may have changed while it was checked: its outcome is not
# stored (file systems stamp modifications coarsely; the same precaution as git's "racy" files).
_RACY_SECONDS = lemma_cache.RACY_SECONDS
# Seals the records this module makes; made at import, so forked workers share it.
_SEAL_KEY = os.urandom(32)


@dataclass(frozen=True)
class SettingInfo:
    """What a consumer needs to bind a lemma's symbols to a run's state."""

    name: str
    kinds: dict  # name -> vector | vector_sequence | real | real_sequence | label | nat
    per_update: frozenset  # names
    assumptions: dict  # name -> kernel formula
    bindings: tuple = ()  # the `bind` lines: novikoff.quantities.Binding


@dataclass(frozen=True)
class LemmaInfo:
    """A checked lemma: its statement (a kernel formula), its setting and its status.

    ``verified`` holds only for a record that load_lemmas made from a verified result; the
    status string alone proves nothing."""

    name: str
    file: str
    line: int
    text: str
    statement: object
    setting: SettingInfo
    status: str  # verified | failed | expected_failure
    hypotheses: dict  # name -> formula: the assumptions the proof rests on (all, if unverified)
    # Whether the status comes from the cache (a check by an earlier process) rather than a check
    # in this one.  Set by load_lemmas only, as is the seal.
    cached: bool = field(default=False, init=False, compare=False)
    _seal: bytes = field(default=b"", init=False, repr=False, compare=False)

    @property
    def verified(self) -> bool:
        """Whether the kernel certified this lemma's proof (here, or as the cache records)."""
        return self.status == "verified" and hmac.compare_digest(self._seal, _seal_of(self))


def _seal_of(info: LemmaInfo) -> bytes:
    try:
        statement = hash(info.statement)
    except TypeError:  # not a kernel formula (those are hashable): its printed form
        statement = repr(info.statement)
    about = repr((info.name, info.file, info.line, info.text, info.status, statement,
                  getattr(info.setting, "name", None), tuple(info.hypotheses)))
    return hmac.new(_SEAL_KEY, about.encode("utf-8"), hashlib.sha256).digest()


def _sealed(info: LemmaInfo, cached: bool) -> LemmaInfo:
    object.__setattr__(info, "cached", cached)
    object.__setattr__(info, "_seal", _seal_of(info))
    return info


def load_lemmas(paths, timeout_ms: int = 5000) -> list:
    """Every lemma of the .proof files (or directories) under paths, checked, as LemmaInfo.

    Lemmas of files imported by the given ones are included once, before the lemmas of the files
    that import them.  Raises ProofSyntaxError for a malformed file.  The outcome is taken from
    the cache when every file it rests on is unchanged; otherwise the files are checked and the
    cache is updated.  Results are also kept in this process while the files' stamps stay the
    same, so a caller may ask again at every run.
    """
    paths = [paths] if isinstance(paths, (str, os.PathLike)) else list(paths)
    memo_key = _memo_key(paths, timeout_ms)
    hit = _MEMO.get(memo_key)
    # With the cache off, only what was checked in this process is reused.
    if (hit is not None and lemma_cache.stamps_hold(hit[0])
            and (lemma_cache.enabled() or not any(info.cached for info in hit[1]))):
        return list(hit[1])
    files = proof_files(paths)
    fingerprint = _fingerprint(timeout_ms)
    contents: dict = {}  # resolved path -> bytes, read once per call
    found = _from_cache(files, fingerprint, contents)
    if found is None:
        for f in files:  # their bytes before the check: what the memo may compare with later
            try:
                _digest(str(Path(f).resolve()), contents)
            except OSError:
                pass
        found = _by_checking(files, timeout_ms, fingerprint)
    lemmas, resolved = found
    if len(_MEMO) > 16:
        _MEMO.clear()
    listed = [d for p in paths if Path(p).is_dir() for d, _, _ in os.walk(p)]
    digests = {p: hashlib.sha256(data).hexdigest() for p, data in contents.items()}
    _MEMO[memo_key] = (lemma_cache.file_stamps([*resolved, *listed], digests), tuple(lemmas))
    return list(lemmas)


_MEMO: dict = {}


def files_read(paths, timeout_ms: int = 5000) -> list:
    """The resolved paths of the .proof files that load_lemmas(paths) reads: the files and
    every file they import (what a consumer's cache of their lemmas must be keyed by)."""
    paths = [paths] if isinstance(paths, (str, os.PathLike)) else list(paths)
    load_lemmas(paths, timeout_ms)
    _, stamped = _MEMO[_memo_key(paths, timeout_ms)][0]
    return [p for p, *_ in stamped if os.path.isfile(p)]


def _memo_key(paths: list, timeout_ms: int) -> tuple:
    try:
        here = os.getcwd()  # files are shown relative to it
    except OSError:  # the working directory was removed
        here = None
    return tuple(str(p) for p in paths), timeout_ms, here


# ------------------------------------------------------------------ checking

def _by_checking(files: list, timeout_ms: int, fingerprint: str) -> tuple:
    """(lemmas, resolved paths of every file read) from the checker; store each file's outcome."""
    started = time.time()
    checker = Checker(timeout_ms=timeout_ms)
    for path in files:
        report = checker.check_file(path)
        if report.error is not None:
            raise report.error
    out, outcomes = [], {}
    for key, report in checker.reports.items():
        if report.error is not None:
            raise ProofSyntaxError(report.error.message, report.error.file, report.error.line,
                                   report.error.column, report.error.text)
        outcomes[key] = []
        for lemma in report.lemmas:
            if lemma.formula is None:
                continue
            scope = lemma.scope
            setting = _setting_info(scope)
            if lemma.theorem is not None:
                used = {n: f for n, f in scope.assumptions.items() if f in lemma.theorem.hyps}
            else:
                used = dict(scope.assumptions)
            status = lemma.status  # the kernel's judgement, in this process
            out.append(_sealed(LemmaInfo(lemma.name, report.path, lemma.line, lemma.statement,
                                         lemma.formula, setting, status, used), cached=False))
            outcomes[key].append({
                "name": lemma.name, "line": lemma.line, "setting": scope.name,
                "text": lemma.statement, "givens": [g.partition(": ")[2] for g in lemma.givens],
                "status": status, "hypotheses": list(used)})
    if lemma_cache.enabled():
        # The files as they are now (not as an earlier look at the cache read them): what was
        # checked, unless modified since the check started, which _store looks for.
        _store(checker.imports, outcomes, fingerprint, {}, started)
    return out, list(checker.reports)


def _store(imports: dict, outcomes: dict, fingerprint: str, contents: dict, started: float):
    for key, records in outcomes.items():
        closure = _closure(key, imports)
        try:
            racy = any(os.stat(p).st_mtime > started - _RACY_SECONDS for p in [key, *closure])
            digests = [[p, _digest(p, contents)] for p in closure]
            own = _digest(key, contents)
            settings = _setting_lines(contents[key], {r["setting"] for r in records})
        except (OSError, ValueError, ProofSyntaxError):
            continue
        if racy:
            continue
        lemma_cache.store(_entry_key(fingerprint, key, own),
                          {"file": key, "imports": imports.get(key, []), "closure": digests,
                           "settings": settings, "lemmas": records})


def _setting_lines(data: bytes, names: set) -> list:
    """[name, line of its header] of the settings named, in the file's text."""
    tree = parse(_text(data), "<cached>")
    return [[node.name, node.pos.line] for node in tree.settings if node.name in names]


def _text(data: bytes) -> str:
    text = data.decode("utf-8")
    return text[len(BOM):] if text.startswith(BOM) else text


def _closure(key: str, imports: dict) -> list:
    """The files key imports, directly or not (sorted)."""
    seen, todo = set(), list(imports.get(key, []))
    while todo:
        p = todo.pop()
        if p not in seen:
            seen.add(p)
            todo += imports.get(p, [])
    seen.discard(key)
    return sorted(seen)


# ------------------------------------------------------------------ the cache

def _from_cache(files: list, fingerprint: str, contents: dict):
    """(lemmas, resolved paths) when every file and its imports have a valid entry; else None."""
    if not lemma_cache.enabled():
        return None
    entries, order = {}, []

    def visit(key: str) -> bool:  # imports first, as the checker reports them
        if key in entries:
            return True
        entry = _entry(key, fingerprint, contents)
        if entry is None:
            return False
        entries[key] = entry
        if not all(isinstance(p, str) and visit(p) for p in entry["imports"]):
            return False
        order.append(key)
        return True

    try:
        if not all(visit(str(Path(f).resolve())) for f in files):
            return None
        out = []
        for key in order:
            lemmas = _read_again(key, entries[key], contents[key])
            if lemmas is None:
                return None
            out += lemmas
        return out, order
    except (ProofSyntaxError, KernelError, OSError, KeyError, TypeError, ValueError,
            AttributeError, RecursionError):
        return None  # an entry that does not fit its file: check the file instead


def _entry(key: str, fingerprint: str, contents: dict):
    """The valid entry for the file at key, or None (none stored, or a file it rests on
    changed)."""
    try:
        own = _digest(key, contents)
    except OSError:
        return None
    entry = lemma_cache.load(_entry_key(fingerprint, key, own))
    if entry is None or entry.get("file") != key or not isinstance(entry.get("imports"), list):
        return None
    try:
        for p, digest in entry["closure"]:
            if _digest(p, contents) != digest:
                return None
    except (OSError, TypeError, ValueError):
        return None
    if set(entry["imports"]) - {p for p, _ in entry["closure"]}:
        return None
    return entry


def _read_again(key: str, entry: dict, data: bytes):
    """The entry's lemmas as LemmaInfo, their statements read again from the file's text (only
    the settings and the statements, not the proofs, are parsed); None when the entry does not
    describe this text."""
    shown = display_path(key)
    lines = source_lines(_text(data))
    numbered = {i: t.strip() for i, t in enumerate(lines, start=1)}
    scopes, settings = {}, {}
    for name, first in entry["settings"]:
        block = "\n" * (first - 1) + "\n".join(_setting_block(lines, first))
        (node,) = parse(block, shown).settings  # at its own line numbers
        if node.name != name:
            return None
        scopes[name] = read_setting(node, shown, numbered)[0]
        settings[name] = _setting_info(scopes[name])
    out = []
    for record in entry["lemmas"]:
        if record["status"] not in ("verified", "failed", "expected_failure"):
            return None
        scope = scopes[record["setting"]]
        goal = scope.statement(parse_term(record["text"], True, shown))
        givens = tuple(scope.formula(parse_term(g, True, shown)) for g in record["givens"])
        formula = Implication(givens, goal) if givens else goal
        used = {n: scope.assumptions[n] for n in record["hypotheses"]}
        out.append(_sealed(LemmaInfo(record["name"], shown, record["line"], record["text"],
                                     formula, settings[record["setting"]], record["status"],
                                     used), cached=True))
    return out


def _setting_block(lines: list, first: int) -> list:
    """The lines of the setting whose header is line `first`: it, and the indented, blank and
    comment lines after it (a setting is an indented block)."""
    end = first
    while end < len(lines) and (not lines[end].strip() or lines[end][:1] in " \t#"):
        end += 1
    return lines[first - 1:end]


def _entry_key(fingerprint: str, key: str, digest: str) -> str:
    return lemma_cache.entry_key(fingerprint, key, digest)


def _digest(path: str, contents: dict) -> str:
    if path not in contents:
        contents[path] = Path(path).read_bytes()
    return hashlib.sha256(contents[path]).hexdigest()


def _fingerprint(timeout_ms: int) -> str:
    """What a cached outcome was judged by: novikoff's version, the judging code's source, the
    solver and algebra versions, the Python version and the solver timeout."""
    if "sources" not in _SOURCES:
        root = Path(__file__).resolve().parent
        _SOURCES["sources"] = lemma_cache.sources_digest(root, _JUDGING_SOURCES)
    return lemma_cache.entry_key(__version__, _SOURCES["sources"], z3.get_version_string(),
                                 sympy.__version__, "%d.%d" % sys.version_info[:2],
                                 str(int(timeout_ms)))


_SOURCES: dict = {}


def _setting_info(scope) -> SettingInfo:
    return SettingInfo(scope.name, dict(scope.kinds), frozenset(str(s) for s in scope.per_update),
                       dict(scope.assumptions), tuple(scope.bindings.values()))
