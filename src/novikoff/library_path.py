"""Where the bundled proof library is (kept apart from the checker so that the runtime, which
must start without SymPy, Z3 or the kernel, finds it by the same rule)."""

from __future__ import annotations

import os
from pathlib import Path


def bundled_proofs_dir() -> Path:
    """The proofs/ directory: $NOVIKOFF_PROOFS, else the repository's, else ./proofs."""
    env = os.environ.get("NOVIKOFF_PROOFS")
    if env:
        return Path(env)
    repo = Path(__file__).resolve().parents[2] / "proofs"
    return repo if repo.is_dir() else Path.cwd() / "proofs"
