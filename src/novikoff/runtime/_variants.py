"""The table of perceptrons: one row per variant says how it runs, what its monitor may judge,
which options it takes (and why it refuses the others), how its trace is audited.

``run``, the CLI's ``run`` and ``audit`` and the fuzzer read this table.  It is the only module
that imports every variant; nothing below it imports it (the shared loop, the monitor and the
honest bounds know no variant).  A new perceptron is one module below and one row here.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Callable

from ..errors import InvalidArgument
from ._audit import audit, audit_files
from ._audit_averaged import audit_averaged, audit_averaged_files
from ._audit_batch import audit_batch, audit_batch_files
from ._audit_dual import audit_kernel, audit_kernel_files
from ._audit_voted import audit_voted
from ._averaged_run import run_averaged
from ._batch_run import run_batch
from ._config import RunConfig, run_config
from ._engine import run_online
from ._dual_run import run_kernel
from ._result import RunResult
from ._threads import one_blas_thread
from ._validate import check_choice
from ._voted_run import run_voted

__all__ = ["RunConfig", "Variant", "VARIANTS", "run"]


# What every engine takes: the lemmas it monitors and how.
_MONITORING = frozenset({"w_star", "gamma", "max_epochs", "lemmas", "proofs",
                         "include_unverified", "checks", "on_violation", "progress"})
_VISITS = frozenset({"order", "cyclic"})
_LOOP = frozenset({"backend", "chunk_visits"})


@dataclass(frozen=True)
class Variant:
    """One perceptron: its engine, its monitor, its options, its audit."""

    name: str
    summary: str  # what it does, for --help
    run: Callable  # (X, y, **options) -> RunResult: options are the names in `takes`
    takes: frozenset  # the RunConfig fields its engine takes (besides variant)
    refuses_because: str  # why the others are refused (the error says it)
    monitor: str  # the monitor's engine: which run quantities its lemmas may mention
    audit: Callable  # audit of a trace in memory
    audit_files: Callable | None  # the same audit on files
    trace: str  # what its trace holds (novikoff audit --trace)
    run_flags_refused: tuple = ((), "")  # the `novikoff run` flags it refuses, and why
    audit_flags_refused: tuple = ((), "")  # the `novikoff audit` flags it refuses, and why


def _online(variant: str) -> Callable:
    """The shared loop's engine for `variant`, given the options as keywords."""
    return lambda X, y, **options: run_online(X, y, RunConfig(variant=variant, **options))


VARIANTS: dict[str, Variant] = {row.name: row for row in (
    Variant("classic", "update when y<w, x> <= 0: w += eta*y*x",
            _online("classic"),
            _MONITORING | _VISITS | _LOOP | {"eta", "w0", "separable", "exact", "all_examples",
                                             "validate"},
            "only the kernel variant takes a kernel", "single", partial(audit, variant="classic"),
            partial(audit_files, variant="classic"), "w (T, d): the weights after each visit"),
    Variant("margin", "update when w = 0 or y<w, x> <= (gamma/2)||w||",
            _online("margin"),
            _MONITORING | _VISITS | _LOOP | {"eta", "w0", "separable", "exact", "all_examples",
                                             "validate"},
            "only the kernel variant takes a kernel", "single", partial(audit, variant="margin"),
            partial(audit_files, variant="margin"), "w (T, d): the weights after each visit"),
    Variant("kernel", "the kernel perceptron: inner products through --kernel",
            run_kernel, _MONITORING | _VISITS | {"kernel", "exact"},
            "the kernel perceptron runs from 0 with the step y*phi(x) (eta = 1, no w0), on "
            "separable data, at its updates",
            "single", audit_kernel, audit_kernel_files,
            "alpha (T, n): the dual coefficients after each visit",
            # no exact arithmetic through an rbf kernel, and the figures draw input-space weights
            (("--save", "--exact", "--plot"), "its weights live in the kernel's feature space"),
            (("--w0", "--bias", "--float32", "--non-separable", "--vote-counts"),
             "the kernel perceptron starts from alpha = 0, in float64, on separable data")),
    Variant("batch", "each step adds eta times the sum of y*x over the misclassified examples",
            run_batch, _MONITORING | {"eta"},
            "a batch step visits every example, from w = 0, in floating point, on separable "
            "data", "batch", audit_batch, audit_batch_files,
            "w (K, d): the weights after each batch step",
            (("--exact", "--save", "--plot", "--w0", "--order", "--online", "--non-separable",
              "--all-examples", "--kernel"),
             "a step visits every example, from w = 0, in floating point, on separable data"),
            (("--w0", "--bias", "--float32", "--non-separable", "--kernel", "--vote-counts"),
             "a batch step starts from w = 0, in float64, on separable data")),
    Variant("averaged", "the classic run returning the average of the weights of every visit",
            run_averaged, _MONITORING | _VISITS,
            "the averaged perceptron is the classic run from 0 with the step y*x, in floating "
            "point, on separable data", "averaged", audit_averaged, audit_averaged_files,
            "w (T, d) and average (T, d) after each visit",
            (("--exact", "--save", "--plot", "--report", "--w0", "--non-separable",
              "--all-examples", "--kernel"),
             "the classic run from w = 0 in floating point on separable data, its averages "
             "checked at every visit"),
            (("--w0", "--bias", "--float32", "--non-separable", "--kernel", "--vote-counts"),
             "the averaged perceptron starts from w = 0, in float64, on separable data")),
    Variant("voted", "the classic run keeping every weight vector with its count",
            run_voted, _MONITORING | _VISITS | _LOOP | {"eta", "w0", "separable"},
            "the voted perceptron is the classic run in floating point, its vote's counts "
            "checked at its updates", "voted", audit_voted, None,
            "w (T, d), and optionally the vote: vectors (K+1, d) and counts (K+1,)",
            (("--exact", "--save", "--plot", "--report", "--all-examples", "--kernel"),
             "the classic run in floating point keeping its vote, whose counts are checked at "
             "its updates")),
)}


@one_blas_thread
def run(X, y, config: RunConfig | None = None, /, **options) -> RunResult:
    """Run a perceptron on (X, y), checking every monitored lemma at every update.

    config: a RunConfig; options: any of its fields, replacing config's (``run(X, y,
    w_star=ws, variant="margin")``).  The variant's row of ``VARIANTS`` runs it; an option the
    variant does not take is refused (InvalidArgument naming it and why).  Raises
    LemmaViolation at the first violated lemma (on_violation='raise'), InvalidArgument on bad
    input.
    """
    config = run_config(config, options)
    row = VARIANTS[check_choice("variant", config.variant, VARIANTS)]
    changed = config.changed()
    changed.pop("variant", None)
    refused = [f"{name}={value!r}" for name, value in changed.items() if name not in row.takes]
    if refused:
        raise InvalidArgument(f"variant={row.name!r}: {', '.join(refused)}: "
                              f"{row.refuses_because}")
    taken = {name: getattr(config, name) for name in row.takes}
    if row.name == "kernel" and taken["kernel"] is None:
        taken["kernel"] = "linear"
    return row.run(X, y, **taken)
