"""What a monitored run returns: the same record for every perceptron variant."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

__all__ = ["RunResult"]


@dataclass
class RunResult:
    """What a monitored run did and what its monitor checked."""

    variant: str
    cyclic: bool
    n: int
    d: int
    mistakes: int
    epochs: int
    visits: int
    converged: bool
    w: np.ndarray
    w_star: np.ndarray | None
    gamma: float | None
    R: float | None
    separable: bool
    exact: bool
    checks: int
    monitor: dict | None
    bounds: dict = field(default_factory=dict)  # lemma -> value of its bound on k at the end
    updates: np.ndarray | None = None  # example index of each update (when checks are on)
    td: float | None = None
    seconds: float = 0.0
    eta: float = 1.0  # the learning rate: an update added eta*y*x
    w0: np.ndarray | None = None  # the start (None: 0)
    # the trace an audit reads: batch, the weights after each step (run_batch keep_trace=True);
    # kernel, the visit of each update (with checks on)
    steps: np.ndarray | None = None
    update_visits: np.ndarray | None = None

    @property
    def bound(self) -> float | None:
        """The tightest mistake bound among the monitored lemmas of the form k <= ..."""
        vals = [v for v in self.bounds.values() if v is not None and np.isfinite(v)]
        return min(vals) if vals else None

    @property
    def ratio(self) -> float | None:
        b = self.bound
        return self.mistakes / b if b else None

    def as_dict(self) -> dict:
        return {"variant": self.variant, "cyclic": self.cyclic, "n": self.n, "d": self.d,
                "mistakes": self.mistakes, "epochs": self.epochs, "visits": self.visits,
                "converged": self.converged, "gamma": self.gamma, "R": self.R,
                "separable": self.separable, "exact": self.exact, "bound": self.bound,
                "bounds": self.bounds, "ratio": self.ratio, "checks": self.checks,
                "td": self.td, "seconds": self.seconds, "eta": self.eta,
                "w0": None if self.w0 is None else self.w0.tolist(), "monitor": self.monitor}
