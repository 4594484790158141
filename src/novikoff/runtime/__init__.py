"""Instrumented perceptrons whose invariants are the lemma statements of the library.

The same statements that ``proofs/`` proves are compiled (never restated in Python) into checks
that run at every update: ``run`` (classic online/cyclic, margin, non-separable, and the kernel,
batch, averaged and voted perceptrons), ``audit`` and ``audit_batch``, ``audit_kernel``,
``audit_averaged``, ``audit_voted`` (a trace of any external implementation),
``save_run``/``replay`` (exact rational re-run).
"""

import importlib

from ._audit import AuditReport, audit
from ._audit_averaged import audit_averaged
from ._audit_batch import audit_batch, batch_trace
from ._audit_dual import audit_kernel, kernel_trace
from ._audit_voted import audit_voted
from ._averaged_run import run_averaged
from ._bounds import certify_margin, data_stats
from ._checks import Check
from ._engine import make_monitor
from ._io import load_dataset, load_run, save_run
from ._loops import HAVE_NUMBA
from ._library import default_proof_paths
from ._monitor import LemmaViolation, Monitor, Violation
from ._replay import replay
from ._result import RunResult
from ._separator import max_margin_separator, soft_margin_separator
from ._variants import (VARIANTS, RunConfig, Variant, audit_averaged_files, audit_batch_files,
                        audit_files, audit_kernel_files, run)
from ._voted_run import run_voted

__all__ = [
    "AuditReport", "audit", "audit_files", "audit_batch", "audit_batch_files", "batch_trace",
    "audit_kernel", "audit_kernel_files", "kernel_trace", "audit_averaged",
    "audit_averaged_files", "audit_voted", "run_averaged", "run_voted", "certify_margin", "data_stats", "Check",
    "Unbindable", "compile_formula", "VARIANTS", "RunConfig", "Variant", "RunResult",
    "make_monitor", "run",
    "load_dataset", "load_run", "replay", "save_run", "HAVE_NUMBA", "default_proof_paths",
    "load_lemmas", "Lemma", "LemmaViolation", "Monitor", "Violation", "max_margin_separator",
    "soft_margin_separator",
]

# What needs SymPy and the kernel (checking proofs, compiling formulas) is imported when first
# asked for: a run whose lemmas come compiled from the cache never loads them.
_LAZY = {"Lemma": "_compile", "Unbindable": "_compile", "compile_formula": "_compile",
         "load_lemmas": "_lemmas"}


def __getattr__(name):
    if name in _LAZY:
        return getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
