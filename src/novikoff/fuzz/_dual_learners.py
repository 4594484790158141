"""The kernel perceptron's learners for the fuzzer: the textbook one and its mutants.

Plain implementations, independent of the runtime's engine (``_dual_run``: its own kernel
functions, its own Gram matrix): a learner is ``make(X, y, *, kernel) -> step``, where
``step(i)`` visits example i and returns the dual counts alpha after the visit (a fresh array;
alpha_i counts the updates on example i, f(x) = sum_i alpha_i*y_i*K(x_i, x)).  ``kernel_trace``
turns it into the trace ``novikoff audit --variant kernel`` reads: alpha (T, n).
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["kernel_perceptron", "kernel_trace", "kernel_function", "KERNEL_MUTANTS"]


def kernel_function(spec: str):
    """K(a, b) for 'linear', 'poly:D[:C]' ((<a, b> + C)^D by D - 1 multiplications, C = 1 by
    default) or 'rbf:G' (exp(-G*||a - b||^2), the distance computed directly)."""
    name, *params = spec.split(":")
    if name == "linear":
        return lambda a, b: float(a @ b)
    if name == "poly":
        D = int(params[0])
        c = float(params[1]) if len(params) > 1 else 1.0

        def poly(a, b):
            t = float(a @ b) + c
            v = t
            for _ in range(D - 1):
                v *= t
            return v

        return poly
    if name == "rbf":
        g = float(params[0])
        return lambda a, b: math.exp(-g * float((a - b) @ (a - b)))
    raise ValueError(f"kernel={spec!r}")


def _gram(X, spec: str) -> np.ndarray:
    k = kernel_function(spec)
    n = X.shape[0]
    G = np.empty((n, n))
    for i in range(n):
        for j in range(i, n):
            G[i, j] = G[j, i] = k(X[i], X[j])
    return G


def kernel_trace(learner, X, y, order, *, kernel: str) -> np.ndarray:
    """The (T, n) dual counts after each visit of ``order``."""
    step = learner(X, y, kernel=kernel)
    out = np.empty((len(order), X.shape[0]))
    for t, i in enumerate(order):
        out[t] = step(int(i))
    return out


def _kernel_like(fires=None, label=True, target=None, used=None):
    """A kernel perceptron with one piece swapped: ``fires(y*f)`` the update test, ``label``
    whether f weighs the terms by y_j, ``target(i, previous)`` the example whose alpha grows,
    ``used(spec)`` the kernel actually computed instead of the declared one."""

    def make(X, y, *, kernel):
        G = _gram(X, used(kernel) if used is not None else kernel)
        alpha = np.zeros(X.shape[0])
        prev = [None]

        def step(i):
            coef = alpha * y if label else alpha
            f = float(coef @ G[:, i])
            hit = fires(y[i] * f) if fires is not None else y[i] * f <= 0
            if hit:
                j = target(i, prev[0]) if target is not None else i
                alpha[j] += 1.0
            prev[0] = i
            return alpha.copy()

        return step

    return make


kernel_perceptron = _kernel_like()
kernel_perceptron.__doc__ = ("The textbook kernel perceptron: on y*f(x_i) <= 0, alpha_i += 1; "
                             "alpha = 0 at the start.")


def _other_parameter(spec: str) -> str:
    """A kernel that is not the declared one: the degree one higher, the width G doubled, or a
    constant term added to the linear kernel."""
    name, *params = spec.split(":")
    if name == "linear":
        return "poly:1:1"
    if name == "poly":
        rest = f":{params[1]}" if len(params) > 1 else ""
        return f"poly:{int(params[0]) + 1}{rest}"
    return f"rbf:{2 * float(params[0])!r}"


def _mutants():
    from ._mutants import Mutant
    return (
        Mutant("kernel_update_always", "kernel: alpha_i grows on correct predictions too",
               _kernel_like(fires=lambda s: True), variant="kernel", data="kernel"),
        Mutant("kernel_ignore_label", "kernel: f(x) = sum_i alpha_i*K(x_i, x), the labels left "
               "out", _kernel_like(label=False), variant="kernel", data="kernel"),
        Mutant("kernel_previous_example", "kernel: off by one, the update goes to the previous "
               "visit's example", _kernel_like(target=lambda i, p: i if p is None else p),
               variant="kernel", data="kernel"),
        Mutant("kernel_wrong_parameter", "kernel: computes another kernel than the declared one "
               "(degree + 1, width G doubled, linear + 1)", _kernel_like(used=_other_parameter),
               variant="kernel", data="kernel"),
        Mutant("kernel_strict", "kernel: updates only when y*f(x) < 0 (never from alpha = 0)",
               _kernel_like(fires=lambda s: s < 0), variant="kernel", data="kernel"),
    )


KERNEL_MUTANTS = _mutants()
