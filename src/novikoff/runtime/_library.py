"""The lemmas a run monitors, compiled: from this process, from the cache on disk, or checked.

A run of the bundled library needs, of each lemma, its record (``_checks.MonitoredLemma``: the
statement and assumptions compiled into checks).  Making one means checking the proof files (or
taking their outcome from the cache of checked lemmas) and compiling kernel formulas, which
imports SymPy, Z3 and the kernel: about 1 s of CPU.  So the records of a list of proof files are
kept in the cache of checked lemmas (``novikoff.lemma_cache``), sealed and keyed as
docs/trust.md, "The compiled monitor", says: an entry is written only from records made in this
process from lemmas that ``novikoff.lemmas.load_lemmas`` returned, so a record is ``verified``
only when the kernel verified its proof; an entry whose seal does not match, or that does not
describe the files as they are, is ignored.

SymPy's side (``_compile``, ``_lemmas``) is imported by name, on a cache miss only: that is
what keeps it out of a warm start (as the command line imports a subcommand's module).
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import os
import sys
import time
from pathlib import Path

from .. import __version__, lemma_cache
from ..library_path import bundled_proofs_dir
from ._checks import MonitoredLemma, SameObjects, decode_lemma, encode_lemma

__all__ = ["bundled_proofs_dir", "declared_rule_breaks", "default_proof_paths", "library",
           "monitored", "source_of"]

_COMPILER = "novikoff.runtime._compile"
_CHECKED = "novikoff.runtime._lemmas"
_FORMAT = "novikoff-monitor-1"
# The code whose output an entry holds: the judge (as novikoff.lemmas lists it), the compiler of
# checks and the records' form.  A change to any of it is a new entry.
_SOURCES = ("kernel", "language", "checker.py", "diagnostics.py", "quantities.py", "errors.py",
            "lemmas.py", "lemma_cache.py", "runtime/_compile.py", "runtime/_checks.py",
            "runtime/_library.py", "runtime/_lemmas.py")
_RACY_SECONDS = lemma_cache.RACY_SECONDS  # a file modified this recently is not stored


def default_proof_paths() -> list:
    """The .proof files of the bundled library (proofs/, $NOVIKOFF_PROOFS)."""
    # bundled_proofs_dir resolves a path, which costs more than a small run's checks: ask it
    # again only when what it reads changes.
    where = (os.environ.get("NOVIKOFF_PROOFS"), os.getcwd())
    if _LISTED.get("where") != where:
        _LISTED.clear()
        _LISTED.update(where=where, directory=bundled_proofs_dir())
    directory = _LISTED["directory"]
    try:
        mtime_ns = directory.stat().st_mtime_ns  # changes when a file comes or goes
    except OSError:
        return []
    # A listing made within a coarse time stamp of the directory's change may miss a file that
    # came in the same tick: list again until the change is older than that.
    if (_LISTED.get("key") != (str(directory), mtime_ns)
            or _LISTED["at"] - mtime_ns / 1e9 < _RACY_SECONDS):
        _LISTED.update(key=(str(directory), mtime_ns), at=time.time(),
                       files=tuple(sorted(directory.glob("*.proof"))))
    return list(_LISTED["files"])


_LISTED: dict = {}


def monitored(lemmas) -> tuple:
    """The records of lemmas given as records, objects of load_lemmas or runtime.Lemma; the same
    records for the same objects."""
    key = SameObjects(lemmas)
    hit = _RECORDS.get(key)
    if hit is None:
        if all(isinstance(obj, MonitoredLemma) for obj in key.objects):
            hit = key.objects
        else:
            compiler = importlib.import_module(_COMPILER)
            hit = tuple(obj if isinstance(obj, MonitoredLemma) else compiler.monitored_lemma(obj)
                        for obj in key.objects)
        if len(_RECORDS) > 64:
            _RECORDS.clear()
        _RECORDS[key] = hit
    return hit


_RECORDS: dict = {}


def library(paths=None, *, formulas: bool = False) -> tuple:
    """The records of every lemma of the .proof files (default: the bundled library): kept in
    this process while the files' stamps hold, else read from the cache, else checked and
    compiled (and stored).  formulas=True: compiled in this process from their kernel formulas
    (an exact run: a record from the cache leaves a tie between irrational values undetermined,
    where a formula lets SymPy decide it)."""
    paths = default_proof_paths() if paths is None else [Path(p) for p in paths]
    if formulas:
        return monitored(importlib.import_module(_CHECKED).load_lemmas(paths))
    memo_key = (tuple(map(str, paths)), _here())
    hit = _MEMO.get(memo_key)
    if (hit is not None and lemma_cache.stamps_hold(hit[0])
            and (lemma_cache.enabled() or not hit[2])):
        return hit[1]
    contents: dict = {}  # path -> the digest of its bytes, as read before any check
    found = _from_cache(paths, contents)
    cached = found is not None
    if found is None:
        found = _by_checking(paths)
    if len(_MEMO) > 16:
        _MEMO.clear()
    _MEMO[memo_key] = (lemma_cache.file_stamps(found[0], contents), found[1], cached)
    return found[1]


_MEMO: dict = {}  # paths -> (stamps of every file read, records, from the cache on disk)


def source_of(rec: MonitoredLemma):
    """The lemma (novikoff.lemmas.LemmaInfo, or the Lemma it was compiled from) a record
    stands for, for what only formulas decide; a record from the cache finds its lemma by
    checking (or reading from the cache of checked lemmas) the files it came from."""
    if rec.source is not None:
        return rec.source
    paths = _FROM.get(id(rec), (None, None))
    if paths[0] is not rec:
        raise LookupError(f"lemma {rec.name}: no source")
    for lem in importlib.import_module(_CHECKED).load_lemmas(paths[1]):
        if (lem.name, lem.file, lem.line) == (rec.name, rec.file, rec.line):
            return lem
    raise LookupError(f"lemma {rec.name}: not in {paths[1]}")


_FROM: dict = {}  # id(record from the cache) -> (the record, the paths it was read for)


def declared_rule_breaks(rec: MonitoredLemma, nonzero_start: bool, eta: float):
    """Why the lemma's assumptions about the learner's start or step do not describe a trace's
    declared rule (start w0 non-zero or not, step eta*y*x), or None."""
    compiler = importlib.import_module(_COMPILER)
    return compiler.declared_rule_breaks(compiler.as_lemma(source_of(rec)), nonzero_start, eta)


# ------------------------------------------------------------------ the cache on disk

def _key(paths: list, contents: dict) -> str:
    """The files as given and their bytes, and the working directory: reports show a lemma's
    file relative to it (novikoff.checker.display_path)."""
    files = [[str(p), _digest(str(p.resolve()), contents)] for p in paths]
    return lemma_cache.entry_key(_FORMAT, _fingerprint(), files, _here())


def _here() -> str:
    try:
        return str(Path.cwd().resolve())
    except OSError:  # the working directory was removed
        return ""


def _from_cache(paths: list, contents: dict):
    """(files read, records) from a valid entry, or None."""
    if not lemma_cache.enabled():
        return None
    try:
        entry = lemma_cache.load(_key(paths, contents))
        if entry is None or entry.get("monitor") != _FORMAT:
            return None
        for p, digest in entry["closure"]:
            if _digest(p, contents) != digest:
                return None
        interned: dict = {}
        records = tuple(decode_lemma(data, interned) for data in entry["lemmas"])
    except (OSError, KeyError, TypeError, ValueError, AttributeError, RecursionError,
            ZeroDivisionError):
        return None  # an entry that does not fit: check the files instead
    if len(_FROM) > 4096:
        _FROM.clear()
    for rec in records:
        _FROM[id(rec)] = (rec, list(paths))
    return [p for p, _ in entry["closure"]], records


def _by_checking(paths: list):
    """(files read, records) by checking the files (or taking their outcome from the cache of
    checked lemmas) and compiling their lemmas; the records are stored when the files did not
    change meanwhile."""
    started = time.time()
    checked = importlib.import_module(_CHECKED)
    records = monitored(checked.load_lemmas(paths))
    read = checked.files_read(paths)
    if lemma_cache.enabled():
        _store(paths, read, records, started, {})  # the files as they are after the check
    return read, records


def _store(paths: list, read: list, records: tuple, started: float, contents: dict) -> None:
    """Store the records, unless a file they rest on was modified since shortly before the
    check began (it may have changed while it was read)."""
    try:
        if any(os.stat(p).st_mtime > started - _RACY_SECONDS for p in read):
            return
        closure = [[p, _digest(p, contents)] for p in read]
        key = _key(paths, contents)
    except OSError:
        return
    lemma_cache.store(key, {"monitor": _FORMAT, "closure": closure,
                            "lemmas": [encode_lemma(r) for r in records]})


def _digest(path: str, contents: dict) -> str:
    if path not in contents:
        contents[path] = hashlib.sha256(Path(path).read_bytes()).hexdigest()
    return contents[path]


def _fingerprint() -> str:
    """novikoff's version, the source of the judging and compiling code, the installed SymPy
    and Z3 (found, not imported: their files' stamps) and the Python version."""
    if "fingerprint" not in _FINGERPRINT:
        digest = hashlib.sha256(lemma_cache.sources_digest(Path(__file__).resolve().parents[1],
                                                           _SOURCES).encode())
        for module in ("sympy", "z3"):
            spec = importlib.util.find_spec(module)
            origin = getattr(spec, "origin", None)
            try:
                st = os.stat(origin)
                digest.update(f"{module}:{origin}:{st.st_mtime_ns}:{st.st_size}".encode())
            except (OSError, TypeError):
                digest.update(f"{module}:missing".encode())
        _FINGERPRINT["fingerprint"] = lemma_cache.entry_key(
            __version__, digest.hexdigest(), "%d.%d" % sys.version_info[:2])
    return _FINGERPRINT["fingerprint"]


_FINGERPRINT: dict = {}
