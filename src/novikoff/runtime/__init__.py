"""Instrumented perceptrons whose invariants are the lemma statements of the library.

The same statements that ``proofs/`` proves are compiled (never restated in Python) into checks
that run at every update: ``run`` (classic online/cyclic, margin, non-separable), ``audit`` (a
trace of any external implementation), ``save_run``/``replay`` (exact rational re-run).
"""

from ._audit import AuditReport, audit, audit_files
from ._bounds import certify_margin, data_stats
from ._compile import Check, Unbindable, compile_formula
from ._engine import VARIANTS, RunResult, make_monitor, run
from ._io import load_dataset, load_run, replay, save_run
from ._kernels import HAVE_NUMBA
from ._lemmas import default_proof_paths, load_lemmas
from ._monitor import Lemma, LemmaViolation, Monitor, Violation
from ._separator import max_margin_separator, soft_margin_separator

__all__ = [
    "AuditReport", "audit", "audit_files", "certify_margin", "data_stats", "Check",
    "Unbindable", "compile_formula", "VARIANTS", "RunResult", "make_monitor", "run",
    "load_dataset", "load_run", "replay", "save_run", "HAVE_NUMBA", "default_proof_paths",
    "load_lemmas", "Lemma", "LemmaViolation", "Monitor", "Violation", "max_margin_separator",
    "soft_margin_separator",
]
