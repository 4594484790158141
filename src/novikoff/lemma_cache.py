"""The on-disk cache of checked lemma records: where it lives, how an entry is sealed and stored.

An entry is a JSON document sealed with an HMAC keyed by a secret that only this user can read
(``secret`` in the cache directory, made on first use, mode 0600).  An entry that cannot be read,
is not JSON, does not carry a valid seal or is about another key is ignored (and overwritten by
the next store); nothing here raises.  What a valid entry may claim is novikoff.lemmas' business
and docs/trust.md's.  Entries are written to a temporary file and renamed into place, so a reader
sees a whole entry or none, however many processes write at once.

Standard library only: the CLI imports this module to honour ``--no-cache`` before it knows
which subcommand runs.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import os
import tempfile
import time
from pathlib import Path

__all__ = ["CACHE_DIR_ENV", "cache_dir", "disabled", "enabled", "entry_key", "load", "store",
           "entries", "clear", "sources_digest", "file_stamps", "stamps_hold", "RACY_SECONDS"]

CACHE_DIR_ENV = "NOVIKOFF_CACHE_DIR"
_FORMAT = "novikoff-lemmas-1"
_SECRET_BYTES = 32
_MAX_ENTRY_BYTES = 8 << 20  # a bundled file's entry is a few kB: anything larger is not ours
_STATE = {"disabled": False}
# A file modified this recently may change again within its time stamp's resolution (file
# systems stamp modifications coarsely; git's "racy" files).
RACY_SECONDS = 2.0


def cache_dir() -> Path:
    """$NOVIKOFF_CACHE_DIR, else $XDG_CACHE_HOME/novikoff, else ~/.cache/novikoff."""
    env = os.environ.get(CACHE_DIR_ENV)
    if env:
        return Path(env)
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg) if xdg and Path(xdg).is_absolute() else Path.home() / ".cache"
    return base / "novikoff"


@contextlib.contextmanager
def disabled():
    """Neither read nor write the cache inside this block (`--no-cache`)."""
    before = _STATE["disabled"]
    _STATE["disabled"] = True
    try:
        yield
    finally:
        _STATE["disabled"] = before


def enabled() -> bool:
    return not _STATE["disabled"]


def entry_key(*parts) -> str:
    """A hex digest naming an entry: the SHA-256 of the parts (strings), unambiguously joined."""
    return hashlib.sha256(json.dumps(parts, separators=(",", ":")).encode("utf-8")).hexdigest()


def load(key: str):
    """The body stored under key, or None (no entry, a damaged or forged one, cache off)."""
    if not enabled():
        return None
    secret = _secret(create=False)
    if secret is None:
        return None
    try:
        with open(_entry_path(key), "rb") as f:
            raw = f.read(_MAX_ENTRY_BYTES + 1)
        if len(raw) > _MAX_ENTRY_BYTES:
            return None
        doc = json.loads(raw.decode("utf-8"))
        body, seal = doc["body"], bytes.fromhex(doc["seal"])
        if doc.get("format") != _FORMAT or body.get("key") != key:
            return None
        if not hmac.compare_digest(seal, _seal(secret, body)):
            return None
        return body
    except (OSError, ValueError, KeyError, TypeError, AttributeError, RecursionError):
        return None


def store(key: str, body: dict) -> bool:
    """Seal body (JSON-able) and store it under key, atomically; False when it cannot be."""
    if not enabled():
        return False
    secret = _secret(create=True)
    if secret is None:
        return False
    body = dict(body, key=key)
    doc = {"format": _FORMAT, "seal": _seal(secret, body).hex(), "body": body}
    path = _entry_path(key)
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".entry-", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(json.dumps(doc, separators=(",", ":")).encode("utf-8"))
            os.replace(tmp, path)
        except BaseException:
            _unlink(tmp)
            raise
        return True
    except OSError:  # a full disk, a read-only home: the cache is an optimisation
        return False


def entries() -> list:
    """The files of the entries stored now."""
    try:
        return sorted((cache_dir() / _FORMAT).glob("*.json"))
    except OSError:
        return []


def clear() -> Path:
    """Remove every entry and the secret; return the directory."""
    directory = cache_dir()
    entries = directory / _FORMAT
    if entries.is_dir():
        for p in entries.iterdir():
            _unlink(p)
        try:
            entries.rmdir()
        except OSError:
            pass
    _unlink(directory / "secret")
    return directory


def sources_digest(root: Path, names) -> str:
    """A SHA-256 of the source of the named files and packages (*.py) below root: the code
    whose output an entry holds."""
    digest = hashlib.sha256()
    for name in names:
        found = sorted((root / name).rglob("*.py")) if (root / name).is_dir() else [root / name]
        for p in found:
            try:
                digest.update(str(p.relative_to(root)).encode() + b"\0" + p.read_bytes())
            except OSError:
                digest.update(str(p.relative_to(root)).encode() + b"\0missing")
    return digest.hexdigest()


def file_stamps(paths, digests: dict) -> tuple:
    """What the files (or directories) look like now, when that was seen, and the digests of
    the bytes read from them, where known (digests: path -> SHA-256 hex)."""
    seen = time.time()
    out = []
    for p in paths:
        try:
            st = os.stat(p)
            out.append((str(p), st.st_mtime_ns, st.st_size, st.st_ino, digests.get(str(p))))
        except OSError:
            out.append((str(p), None, None, None, None))
    return seen, tuple(out)


def stamps_hold(stamps: tuple) -> bool:
    """Whether every stamp still holds.  A file modified shortly before it was stamped might
    change again without its stamp changing: its bytes are compared with those read instead."""
    seen, stamped = stamps
    for p, mtime_ns, size, inode, digest in stamped:
        try:
            st = os.stat(p)
        except OSError:
            return False
        if mtime_ns is None or (st.st_mtime_ns, st.st_size, st.st_ino) != (mtime_ns, size, inode):
            return False
        if mtime_ns / 1e9 > seen - RACY_SECONDS:
            if digest is None:  # a directory, or a file whose bytes were not kept
                return False
            try:
                if hashlib.sha256(Path(p).read_bytes()).hexdigest() != digest:
                    return False
            except OSError:
                return False
    return True


def _entry_path(key: str) -> Path:
    return cache_dir() / _FORMAT / f"{key}.json"


def _seal(secret: bytes, body: dict) -> bytes:
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hmac.new(secret, canonical.encode("ascii"), hashlib.sha256).digest()


def _secret(create: bool) -> bytes | None:
    """This user's key for sealing entries, or None when there is none to trust.

    A secret that another user owns or can read would let them forge entries: it is not used.
    It is written to a temporary file and linked into place, so two processes that make one at
    once agree on the one that won."""
    path = cache_dir() / "secret"
    for _ in range(2):
        try:
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
            try:
                info = os.fstat(fd)
                data = os.read(fd, _SECRET_BYTES + 1)
            finally:
                os.close(fd)
            mine = not hasattr(os, "getuid") or info.st_uid == os.getuid()
            private = os.name != "posix" or info.st_mode & 0o077 == 0
            return data if mine and private and len(data) == _SECRET_BYTES else None
        except FileNotFoundError:
            if not create or not _make_secret(path):
                return None
        except OSError:
            return None
    return None


def _make_secret(path: Path) -> bool:
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".secret-")  # mode 0600
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(os.urandom(_SECRET_BYTES))
            try:
                os.link(tmp, path)
            except FileExistsError:  # another process made it first: use theirs
                pass
        finally:
            _unlink(tmp)
        return True
    except OSError:
        return False


def _unlink(path) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass
