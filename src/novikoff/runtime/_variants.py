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
from ._audit import audit
from ._audit_averaged import audit_averaged
from ._audit_batch import audit_batch
from ._audit_dual import audit_kernel
from ._audit_voted import audit_voted
from ._averaged_run import run_averaged
from ._batch_run import run_batch
from ._config import RunConfig, run_config
from ._engine import run_online
from ._dual_run import run_kernel
from ._io import read_array, read_npz
from ._result import RunResult
from ._threads import one_blas_thread
from ._validate import check_choice, check_flag
from ._voted_run import run_voted

__all__ = ["RunConfig", "Variant", "VARIANTS", "run", "audit_files", "audit_averaged_files",
           "audit_batch_files", "audit_kernel_files"]


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
    audit: Callable  # audit of a trace in memory: (X, y, *trace_arrays, **options)
    trace: str  # what its trace holds (novikoff audit --trace)
    trace_arrays: tuple  # the arrays a trace file must hold, in the order `audit` takes them
    run_flags_refused: tuple = ((), "")  # the `novikoff run` flags it refuses, and why
    audit_flags_refused: tuple = ((), "")  # the `novikoff audit` flags it refuses, and why
    # (name, reader) of the arrays a trace file may hold, passed to `audit` by name when read
    trace_options: tuple = ()


def _as_read(value):
    """A trace array passed to the audit as the file holds it (the audit validates it)."""
    return value


_TD = (("td", _as_read),)  # the implementation's TD after each visit, checked when given


def _online(variant: str) -> Callable:
    """The shared loop's engine for `variant`, given the options as keywords."""
    return lambda X, y, **options: run_online(X, y, RunConfig(variant=variant, **options))


VARIANTS: dict[str, Variant] = {row.name: row for row in (
    Variant("classic", "update when y<w, x> <= 0: w += eta*y*x",
            _online("classic"),
            _MONITORING | _VISITS | _LOOP | {"eta", "w0", "separable", "exact", "all_examples",
                                             "validate"},
            "only the kernel variant takes a kernel", "single", partial(audit, variant="classic"),
            "w (T, d): the weights after each visit", ("order", "w"),
            trace_options=_TD),
    Variant("margin", "update when w = 0 or y<w, x> <= (gamma/2)||w||",
            _online("margin"),
            _MONITORING | _VISITS | _LOOP | {"eta", "w0", "separable", "exact", "all_examples",
                                             "validate"},
            "only the kernel variant takes a kernel", "single", partial(audit, variant="margin"),
            "w (T, d): the weights after each visit", ("order", "w"),
            trace_options=_TD),
    Variant("kernel", "the kernel perceptron: inner products through --kernel",
            run_kernel, _MONITORING | _VISITS | {"kernel", "exact"},
            "the kernel perceptron runs from 0 with the step y*phi(x) (eta = 1, no w0), on "
            "separable data, at its updates",
            "single", audit_kernel, "alpha (T, n): the dual coefficients after each visit",
            ("order", "alpha"),
            # no exact arithmetic through an rbf kernel, and the figures draw input-space weights
            (("--save", "--exact", "--plot"), "its weights live in the kernel's feature space"),
            (("--w0", "--bias", "--float32", "--non-separable", "--vote-counts"),
             "the kernel perceptron starts from alpha = 0, in float64, on separable data")),
    Variant("batch", "each step adds eta times the sum of y*x over the misclassified examples",
            run_batch, _MONITORING | {"eta"},
            "a batch step visits every example, from w = 0, in floating point, on separable "
            "data", "batch", audit_batch, "w (K, d): the weights after each batch step",
            ("w",),
            (("--exact", "--save", "--plot", "--w0", "--order", "--online", "--non-separable",
              "--all-examples", "--kernel"),
             "a step visits every example, from w = 0, in floating point, on separable data"),
            (("--w0", "--bias", "--float32", "--non-separable", "--kernel", "--vote-counts"),
             "a batch step starts from w = 0, in float64, on separable data"),
            trace_options=(("converged", partial(check_flag, name="converged")),)),
    Variant("averaged", "the classic run returning the average of the weights of every visit",
            run_averaged, _MONITORING | _VISITS,
            "the averaged perceptron is the classic run from 0 with the step y*x, in floating "
            "point, on separable data", "averaged", audit_averaged,
            "w (T, d) and average (T, d) after each visit", ("order", "w", "average"),
            (("--exact", "--save", "--plot", "--report", "--w0", "--non-separable",
              "--all-examples", "--kernel"),
             "the classic run from w = 0 in floating point on separable data, its averages "
             "checked at every visit"),
            (("--w0", "--bias", "--float32", "--non-separable", "--kernel", "--vote-counts"),
             "the averaged perceptron starts from w = 0, in float64, on separable data")),
    Variant("voted", "the classic run keeping every weight vector with its count",
            run_voted, _MONITORING | _VISITS | _LOOP | {"eta", "w0", "separable"},
            "the voted perceptron is the classic run in floating point, its vote's counts "
            "checked at its updates", "voted", audit_voted,
            "w (T, d), and optionally the vote: vectors (K+1, d) and counts (K+1,)",
            ("order", "w"),
            (("--exact", "--save", "--plot", "--report", "--all-examples", "--kernel"),
             "the classic run in floating point keeping its vote, whose counts are checked at "
             "its updates"),
            trace_options=tuple((name, _as_read) for name in ("vectors", "counts", "td"))),
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


def audit_files(data, trace, *, variant: str = "classic", w_star=None, **options):
    """The audit of `variant` on files: data .npz (X, y), trace .npz (the row's
    ``trace_arrays``, and any of its ``trace_options`` not given in `options`), optional
    w_star .npy/.npz (for the kernel variant, the dual coefficients beta)."""
    row = VARIANTS[check_choice("variant", variant, VARIANTS)]
    f = read_npz(data, "data", ("X", "y"))
    t = read_npz(trace, "trace", row.trace_arrays)
    for name, read in row.trace_options:
        if name in t and name not in options:
            options[name] = read(t[name])
    ws = None if w_star is None else read_array(w_star, "w_star")
    return row.audit(f["X"], f["y"], *(t[name] for name in row.trace_arrays), w_star=ws,
                     **options)


# The same reader under each variant's name (novikoff.runtime's API).
audit_averaged_files = partial(audit_files, variant="averaged")
audit_batch_files = partial(audit_files, variant="batch")
audit_kernel_files = partial(audit_files, variant="kernel")
