"""What `novikoff audit` is for: a defect in scikit-learn's averaged SGD perceptron, found from
its trace alone.

`SGDClassifier(loss="perceptron", average=True, fit_intercept=True)`, trained one example per
`partial_fit` call (online learning), keeps its plain (unaveraged) weights in `_standard_coef`
and `_standard_intercept`.  From the second call on, scikit-learn 1.9 stores the intercept that
a call computed into the average only: the next call starts again from the old plain intercept,
so the bias never learns.  The audit sees it at the first visit, without reading a line of
scikit-learn: the step of the last column (the bias, `--bias`) is 0 where the rule adds y.

    python examples/audit_sklearn_intercept.py OUT_DIR
    novikoff audit --data OUT_DIR/data.npz --trace OUT_DIR/sgd_trace.npz --bias

The same data and order through `Perceptron(fit_intercept=True)` (OUT_DIR/perceptron_trace.npz)
audits clean.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np


def offset_data(n: int = 100, seed: int = 0):
    """Separable data whose separator needs a bias: y = sign(x_0 + x_1 - 4), margin 0.25."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(0.0, 4.0, (4 * n, 2))
    s = X.sum(axis=1) - 4.0
    keep = np.abs(s) >= 0.25 * np.sqrt(2.0)
    X, s = X[keep][:n], s[keep][:n]
    return X, np.where(s > 0, 1.0, -1.0)


def online_trace(clf, X, y, order, plain: bool) -> np.ndarray:
    """The weights and the intercept (the last column) after each partial_fit of one example:
    the plain ones (`_standard_coef`, `_standard_intercept`) when plain, else coef_, intercept_."""
    rows = []
    for t, i in enumerate(order):
        clf.partial_fit(X[i:i + 1], y[i:i + 1], **({"classes": np.array([-1.0, 1.0])}
                                                     if t == 0 else {}))
        coef, icpt = ((clf._standard_coef, clf._standard_intercept) if plain
                      else (clf.coef_, clf.intercept_))
        rows.append(np.concatenate([np.ravel(coef), np.atleast_1d(icpt)]))
    return np.array(rows)


def traces(epochs: int = 10):
    """(X, y, order, the averaged SGD perceptron's plain trace, Perceptron's trace)."""
    from sklearn.linear_model import Perceptron, SGDClassifier
    X, y = offset_data()
    order = np.tile(np.arange(len(y)), epochs)
    sgd = SGDClassifier(loss="perceptron", learning_rate="constant", eta0=1.0, penalty=None,
                        average=True, fit_intercept=True, shuffle=False)
    perceptron = Perceptron(fit_intercept=True, shuffle=False, eta0=1.0)
    return (X, y, order, online_trace(sgd, X, y, order, plain=True),
            online_trace(perceptron, X, y, order, plain=False))


def main(out: str) -> None:
    X, y, order, sgd, perceptron = traces()
    out_dir = Path(out)
    out_dir.mkdir(parents=True, exist_ok=True)
    np.savez(out_dir / "data.npz", X=X, y=y)
    np.savez(out_dir / "sgd_trace.npz", order=order, w=sgd)
    np.savez(out_dir / "perceptron_trace.npz", order=order, w=perceptron)
    for name, W in (("SGDClassifier(average=True)", sgd), ("Perceptron", perceptron)):
        changed = (W != np.vstack([np.zeros(W.shape[1]), W[:-1]])).any(axis=1)
        print(f"{name}: {int(changed.sum())} updates in {len(order)} visits")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else ".")
