"""Where the monitored statements come from: the bundled lemma library (proofs/*.proof)."""

from __future__ import annotations

import os
from pathlib import Path

from ..errors import InvalidArgument, NovikoffError

__all__ = ["default_proof_paths", "load_lemmas"]


def _library_dirs():
    env = os.environ.get("NOVIKOFF_PROOFS")
    if env:
        yield Path(env)
    here = Path(__file__).resolve()
    yield here.parents[1] / "proofs"  # installed as package data
    yield here.parents[3] / "proofs"  # a source checkout (src layout)


def default_proof_paths() -> list:
    """The .proof files of the bundled library (NOVIKOFF_PROOFS overrides the directory)."""
    for directory in _library_dirs():
        if directory.is_dir():
            return sorted(directory.glob("*.proof"))
    return []


def load_lemmas(paths=None) -> list:
    """Lemmas (name, statement, setting, verified, ...) of the given .proof files or the library.

    Each lemma's proof is checked by the kernel; only ``verified`` lemmas are monitored unless the
    caller asks otherwise.
    """
    if paths is None:
        paths = default_proof_paths()
    paths = [Path(p) for p in paths]
    for p in paths:
        if not p.is_file():
            raise InvalidArgument(f"proofs={str(p)!r} is not a file")
    if not paths:
        return []
    try:
        from ..language import load_lemmas as _load
    except ImportError as err:  # the front end is not there: say so, do not monitor nothing
        raise NovikoffError(f"cannot load lemmas: novikoff.language.load_lemmas is not "
                            f"available ({err})") from None
    return list(_load([str(p) for p in paths]))
