"""Figures of a monitored run: the lemmas' trajectories against their bounds.

Three panels over the updates k = 0, ..., K of a run:

* progress: <w*, w_k> against k*gamma (the lemma `progress`);
* norm growth: ||w_k||^2 against k*R^2 (the lemma `norm_growth`);
* the squeeze behind the mistake bound: k*gamma <= <w*, w_k> <= ||w*||*||w_k|| <= ||w*||*sqrt(k)*R,
  whose ends meet at the bound; the run's K and the bound are marked.

The trajectories are recomputed from the data and the run's update sequence in float64 (a figure
needs no error bounds: the monitor has already checked every point).  matplotlib is an optional
dependency (`pip install 'novikoff[plot]'`).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..errors import InvalidArgument, NovikoffError

__all__ = ["FORMATS", "trajectories", "plot_run"]

FORMATS = (".png", ".svg", ".pdf")
_MAX_POINTS = 4000  # more points than pixels only slows the drawing down
_BLOCK = 4096  # updates whose weight vectors are formed at once (a K x d array would not fit)


def trajectories(X, y, updates, w_star, eta: float = 1.0, w0=None) -> dict:
    """k, <w*, w_k> and ||w_k||^2 for k = 0..K, for the updates (example indices) of a run
    that starts at w0 (default 0) and steps by eta*y*x."""
    X = np.asarray(X, dtype=float)
    y = np.asarray(y, dtype=float)
    updates = np.asarray(updates, dtype=np.int64)
    w_star = np.asarray(w_star, dtype=float)
    w = np.zeros(X.shape[1]) if w0 is None else np.asarray(w0, dtype=float)
    steps = eta * y[updates, None] * X[updates]
    progress = float(w_star @ w) + np.concatenate([[0.0], np.cumsum(steps @ w_star)])
    norm_sq = np.empty(len(updates) + 1)
    norm_sq[0] = float(w @ w)
    for start in range(0, len(updates), _BLOCK):
        block = w + np.cumsum(steps[start:start + _BLOCK], axis=0)
        norm_sq[start + 1:start + 1 + len(block)] = np.einsum("ij,ij->i", block, block)
        w = block[-1]
    return {"k": np.arange(len(updates) + 1), "progress": progress, "norm_sq": norm_sq}


def _thin(k: np.ndarray) -> np.ndarray:
    """The indices to draw: all of them, or an even subset that keeps the last point."""
    if len(k) <= _MAX_POINTS:
        return np.arange(len(k))
    return np.unique(np.linspace(0, len(k) - 1, _MAX_POINTS).astype(np.int64))


def plot_run(X, y, result, path) -> Path:
    """Draw the run's trajectories to path (.png, .svg or .pdf); return the path."""
    path = Path(path)
    if result.variant == "kernel":
        raise InvalidArgument("plot: the kernel perceptron's weights live in the kernel's "
                              "feature space; its trajectories are not drawn")
    eta, w0 = getattr(result, "eta", 1.0), getattr(result, "w0", None)
    if path.suffix.lower() not in FORMATS:
        raise InvalidArgument(f"plot={str(path)!r}: the file name must end in "
                              f"{', '.join(FORMATS)}")
    if result.updates is None or result.w_star is None:
        raise InvalidArgument("plot: the run kept no update log or has no w_star (run it with "
                              "checks on)")
    try:
        from matplotlib.figure import Figure
    except ImportError:
        raise NovikoffError("plotting needs matplotlib: pip install 'novikoff[plot]'") from None
    t = trajectories(X, y, result.updates, result.w_star, eta, w0)
    k, shown = t["k"], _thin(t["k"])
    gamma, R = result.gamma, result.R
    ws_norm = float(np.linalg.norm(result.w_star))
    fig = Figure(figsize=(12, 3.8), layout="constrained")
    ax1, ax2, ax3 = fig.subplots(1, 3)

    # The lemmas' bounds from the run's start w0 and step eta (nonzero_start.proof,
    # learning_rate.proof; with w0 = 0 and eta = 1, progress and norm_growth):
    # <w*, w_k> >= p0 + eta*gamma*k and ||w_k||^2 <= q0 + eta^2*R^2*k.
    p0, q0 = float(t["progress"][0]), float(t["norm_sq"][0])
    ax1.plot(k[shown], t["progress"][shown], label=r"$\langle w^*, w_k\rangle$")
    if gamma is not None and result.separable:
        ax1.plot(k[shown], p0 + eta * gamma * k[shown], "--", label="lower bound (progress)")
    ax1.set(title="progress", xlabel="updates k")
    ax1.legend(loc="upper left", fontsize="small")

    ax2.plot(k[shown], t["norm_sq"][shown], label=r"$\|w_k\|^2$")
    if R is not None:
        ax2.plot(k[shown], q0 + eta ** 2 * R ** 2 * k[shown], "--",
                 label="upper bound (norm growth)")
    ax2.set(title="norm growth", xlabel="updates k")
    ax2.legend(loc="upper left", fontsize="small")

    # Log-log: k*gamma and sqrt(k) are straight lines, and the run's K and the bound, often
    # orders of magnitude apart, both show.  Only positive values have a place on these axes.
    ax3.set(title="the mistake bound (log-log)", xlabel="updates k", xscale="log", yscale="log")
    run_k = k[1:][shown[shown > 0] - 1] if len(k) > 1 else k[:0]
    if gamma is not None and R is not None and result.separable and ws_norm > 0:
        bound = result.bound
        span = np.geomspace(1.0, max(bound or 0.0, float(k[-1]), 1.0) * 1.5, 400)
        lower = p0 + eta * gamma * span
        ax3.plot(span[lower > 0], lower[lower > 0], "--", label="lower bound on $\\langle w^*, w_k\\rangle$")
        ax3.plot(span, ws_norm * np.sqrt(q0 + eta ** 2 * R ** 2 * span), "--",
                 label="$\\|w^*\\|$ times the bound on $\\|w_k\\|$")
        if bound is not None:
            ax3.axvline(bound, color="grey", linewidth=0.8)
            ax3.text(bound, 0.02, f" bound {bound:.4g}", transform=ax3.get_xaxis_transform(),
                     fontsize="small", color="grey", ha="right")
    positive = t["progress"][run_k] > 0
    ax3.plot(run_k[positive], t["progress"][run_k][positive], label=r"$\langle w^*, w_k\rangle$")
    if len(k) > 1:
        ax3.axvline(float(k[-1]), color="black", linewidth=0.8)
        ax3.text(float(k[-1]), 0.1, f" K = {int(k[-1])}", transform=ax3.get_xaxis_transform(),
                 fontsize="small")
    ax3.legend(loc="upper left", fontsize="small")
    fig.suptitle(f"{result.variant} perceptron: {int(k[-1])} updates, n = {result.n}, "
                 f"d = {result.d}", fontsize="medium")
    try:
        # An SVG without its creation date: the same run gives the same file.
        fig.savefig(path, metadata={"Date": None} if path.suffix.lower() == ".svg" else None)
    except OSError as exc:
        raise InvalidArgument(f"plot={str(path)!r}: {exc.strerror or exc}") from None
    return path
