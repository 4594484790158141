"""Where the monitored statements come from: the bundled lemma library (proofs/*.proof)."""

from __future__ import annotations

from pathlib import Path

from ..errors import InvalidArgument, NovikoffError

__all__ = ["default_proof_paths", "load_lemmas"]


def default_proof_paths() -> list:
    """The .proof files of the bundled library (the checker's proofs/, $NOVIKOFF_PROOFS)."""
    from ..checker import bundled_proofs_dir
    directory = bundled_proofs_dir()
    return sorted(directory.glob("*.proof")) if directory.is_dir() else []


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
    # Checking proofs takes a while: reuse the result while the files are unchanged.
    # (Imports are resolved relative to a file's directory: watch every .proof file there.)
    watched = sorted({q.resolve() for p in paths for q in [p, *p.parent.glob("*.proof")]})
    key = (tuple(str(p.resolve()) for p in paths),
           tuple((str(q), q.stat().st_mtime_ns, q.stat().st_size) for q in watched))
    if key not in _LOADED:
        try:
            from ..language import load_lemmas as _load
        except ImportError as err:  # the front end is not there: say so
            raise NovikoffError(f"cannot load lemmas: novikoff.language.load_lemmas is not "
                                f"available ({err})") from None
        if len(_LOADED) > 16:
            _LOADED.clear()
        _LOADED[key] = tuple(_load([str(p) for p in paths]))
    return list(_LOADED[key])


_LOADED: dict = {}
