"""The lemmas of the bundled library (proofs/*.proof) or of given files, checked (imports the
kernel: a warm run takes their compiled records from ``_library`` instead)."""

from __future__ import annotations

from pathlib import Path

from ..errors import InvalidArgument
from ..lemmas import files_read as files_read_checked
from ..lemmas import load_lemmas as load_checked
from ._library import default_proof_paths

__all__ = ["files_read", "load_lemmas"]


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


def files_read(paths=None) -> list:
    """The .proof files load_lemmas(paths) reads, imports included."""
    return files_read_checked(default_proof_paths() if paths is None else [Path(p) for p in paths])
