"""How to run and monitor a perceptron: ``run``'s options as one frozen record."""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Callable

from ..errors import InvalidArgument

__all__ = ["RunConfig", "run_config", "visits_allowed"]


@dataclass(frozen=True)
class RunConfig:
    """How to run and monitor a perceptron on the data (``run``'s keyword arguments).

    variant: a row of ``VARIANTS``; w_star/gamma: the separator and its margin (default: a
    max-margin separator, certified); order/cyclic/max_epochs: the visits; eta/w0: the rate and
    the start; kernel: the kernel perceptron's kernel; separable=False: the hinge-loss lemmas;
    lemmas/proofs/include_unverified: what is monitored; checks=False: the bare engine;
    exact: rational arithmetic; on_violation: 'raise' or 'collect'; all_examples: the lemmas
    about one example checked on every example; validate/backend/chunk_visits: the loop's
    machinery; progress: a callback (visits, mistakes, epochs).
    """

    variant: str = "classic"
    w_star: object = None
    gamma: float | None = None
    order: object = None
    cyclic: bool = True
    max_epochs: int | None = None
    eta: float = 1.0
    w0: object = None
    kernel: str | None = None
    separable: bool = True
    lemmas: object = None
    proofs: object = None
    include_unverified: bool = False
    checks: bool = True
    exact: bool = False
    on_violation: str = "raise"
    all_examples: bool = False
    validate: bool = True
    backend: str = "auto"
    chunk_visits: int = 1 << 22
    progress: Callable | None = None

    def changed(self) -> dict:
        """The options not at their default (an array given counts as changed)."""
        out = {}
        for name, default in _DEFAULTS.items():
            value = getattr(self, name)
            if value is not default if default is None else not _same(value, default):
                out[name] = value
        return out


_DEFAULTS = {f.name: f.default for f in fields(RunConfig)}


def _same(value, default) -> bool:
    try:
        return bool(value == default)
    except (TypeError, ValueError):  # an array where a scalar belongs: not the default
        return False


def run_config(config: RunConfig | None, options: dict) -> RunConfig:
    """The configuration of a run: `config` (default RunConfig()) with `options` replacing its
    fields; TypeError naming an option that is not a field."""
    unknown = sorted(set(options) - _DEFAULTS.keys())
    if unknown:
        raise TypeError(f"run() got an unexpected keyword argument {unknown[0]!r} (the options "
                        f"are the fields of RunConfig: {', '.join(sorted(_DEFAULTS))})")
    if config is not None and not isinstance(config, RunConfig):
        raise InvalidArgument(f"config={config!r} is not a RunConfig")
    return replace(config or RunConfig(), **options)


def visits_allowed(order, cyclic: bool, max_epochs, separable: bool) -> int:
    """The visits a run may make: one pass online; cycling, max_epochs passes (unbounded on
    separable data without max_epochs, which converges; 100 passes otherwise)."""
    if not cyclic:
        return order.shape[0]
    if max_epochs is None and separable:
        return (1 << 62) - 1  # no end: an int64 with room for the loops' arithmetic on t
    return (max_epochs or 100) * order.shape[0]
