"""Where the monitored statements come from: the bundled lemma library (proofs/*.proof)."""

from __future__ import annotations

import os
import time
from pathlib import Path

from ..checker import bundled_proofs_dir
from ..errors import InvalidArgument
from ..lemmas import load_lemmas as load_checked

__all__ = ["default_proof_paths", "load_lemmas"]

_RACY_SECONDS = 2.0


def default_proof_paths() -> list:
    """The .proof files of the bundled library (the checker's proofs/, $NOVIKOFF_PROOFS)."""
    # What bundled_proofs_dir reads.  It resolves a path, which costs more than a small run's
    # checks: ask it again only when what it reads changes.
    where = (os.environ.get("NOVIKOFF_PROOFS"), os.getcwd())
    if _LISTED.get("where") != where:
        _LISTED.clear()
        _LISTED.update(where=where, directory=bundled_proofs_dir())
    directory = _LISTED["directory"]
    try:
        mtime_ns = directory.stat().st_mtime_ns  # changes when a file comes or goes
    except OSError:
        return []
    now = time.time()
    # A listing made within a coarse time stamp of the directory's change may miss a file that
    # came in the same tick: list again until the change is older than that.
    if (_LISTED.get("key") != (str(directory), mtime_ns)
            or _LISTED["at"] - mtime_ns / 1e9 < _RACY_SECONDS):
        _LISTED.update(key=(str(directory), mtime_ns), at=now,
                       files=tuple(sorted(directory.glob("*.proof"))))
    return list(_LISTED["files"])


_LISTED: dict = {}


def load_lemmas(paths=None) -> list:
    """Lemmas (name, statement, setting, verified, ...) of the given .proof files or the library.

    Each lemma's proof is checked by the kernel, or its outcome taken from the cache of checked
    lemmas (novikoff.lemmas, docs/trust.md); only ``verified`` lemmas are monitored unless the
    caller asks otherwise.  Asking again costs a few file stamps while the files are unchanged.
    """
    if paths is None:  # listed as files just now, or since the directory last changed
        paths = default_proof_paths()
    else:
        paths = [Path(p) for p in paths]
        for p in paths:
            if not p.is_file():
                raise InvalidArgument(f"proofs={str(p)!r} is not a file")
    return load_checked(paths) if paths else []
