"""Datasets in, runs out: .npz/.csv/bundled datasets, lossless run files, exact replay.

A run file is an .npz holding the data (X, y), the presentation order, w_star (empty when it was
computed), and ``meta``, a JSON string (floats written by repr, so they round-trip exactly) with
the variant, the parameters, the lemma sources and the float run's outcome.  Nothing in it is
pickled: ``np.load(..., allow_pickle=False)`` reads it without running code.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from ..errors import InvalidArgument, NovikoffError
from ._monitor import LemmaViolation
from ._validate import check_data

__all__ = ["load_dataset", "save_run", "load_run", "replay", "BUNDLED"]

BUNDLED = ("iris", "breast_cancer")
_FORMAT = 1


def _bundled(name: str):
    try:
        from sklearn import datasets
    except ImportError:
        raise InvalidArgument(f"data={name!r}: bundled datasets need scikit-learn "
                              f"(pip install scikit-learn)") from None
    if name == "iris":
        ds = datasets.load_iris()
        return ds.data.astype(float), np.where(ds.target == 0, 1.0, -1.0)  # setosa vs the rest
    ds = datasets.load_breast_cancer()
    return ds.data.astype(float), np.where(ds.target == 1, 1.0, -1.0)  # benign vs malignant


def _npz(path: Path, keys, what: str) -> dict:
    try:
        with np.load(path, allow_pickle=False) as f:
            found = {k: f[k] for k in f.files}
    except (OSError, ValueError) as err:
        raise InvalidArgument(f"{what}={str(path)!r} is not a readable .npz file ({err})") \
            from None
    for k in keys:
        if k not in found:
            raise InvalidArgument(f"{what}={str(path)!r} has no array {k!r} "
                                  f"(it has {sorted(found)})")
    return found


def _csv(path: Path):
    try:
        try:
            arr = np.loadtxt(path, delimiter=",", ndmin=2)
        except ValueError:
            arr = np.loadtxt(path, delimiter=",", ndmin=2, skiprows=1)  # a header line
    except (OSError, ValueError) as err:
        raise InvalidArgument(f"data={str(path)!r} is not a numeric CSV file ({err})") from None
    if arr.shape[1] < 2:
        raise InvalidArgument(f"data={str(path)!r}: a CSV needs feature columns and a last "
                              f"label column, got {arr.shape[1]} column(s)")
    return arr[:, :-1], arr[:, -1]


def load_dataset(spec, *, bias: bool = False, normalize: bool = False):
    """(X, y, name) from an .npz (arrays X, y), a .csv (label last) or a bundled dataset name.

    bias appends a constant feature 1 (a separator with offset becomes one through the origin);
    normalize scales every row to unit norm (the lemmas for unit x then apply).
    """
    spec = str(spec)
    path = Path(spec)
    if spec in BUNDLED:
        X, y = _bundled(spec)
    elif path.suffix == ".npz":
        f = _npz(path, ("X", "y"), "data")
        X, y = f["X"], f["y"]
    elif path.suffix == ".csv":
        X, y = _csv(path)
    else:
        raise InvalidArgument(f"data={spec!r} is not an .npz or .csv file nor a bundled dataset "
                              f"({', '.join(BUNDLED)})")
    X, y = check_data(X, y)
    if bias:
        X = np.hstack([X, np.ones((X.shape[0], 1))])
    if normalize:
        X = X / np.linalg.norm(X, axis=1)[:, None]
    return X, y, spec


def save_run(path, X, y, *, order=None, w_star=None, config: dict | None = None,
             outcome: dict | None = None) -> Path:
    """Write a run (data, order, w_star, parameters, outcome) losslessly to an .npz file."""
    X, y = check_data(X, y)
    order = np.arange(X.shape[0], dtype=np.int64) if order is None else np.asarray(order,
                                                                                   np.int64)
    meta = {"format": _FORMAT, "config": dict(config or {}), "outcome": outcome}
    path = Path(path)
    np.savez_compressed(path, X=X, y=y, order=order,
                        w_star=np.zeros(0) if w_star is None else np.asarray(w_star, float),
                        meta=np.array(json.dumps(meta)))
    return path if path.suffix == ".npz" else path.with_name(path.name + ".npz")


def load_run(path) -> dict:
    """The content of a run file: X, y, order, w_star (None if computed), config, outcome."""
    f = _npz(Path(path), ("X", "y", "order", "w_star", "meta"), "run")
    try:
        meta = json.loads(str(f["meta"]))
    except (ValueError, TypeError) as err:
        raise InvalidArgument(f"run={str(path)!r}: unreadable meta ({err})") from None
    if not isinstance(meta, dict) or meta.get("format") != _FORMAT:
        raise InvalidArgument(f"run={str(path)!r}: unknown run format {meta.get('format')!r}")
    ws = f["w_star"]
    return {"X": f["X"], "y": f["y"], "order": f["order"],
            "w_star": ws if ws.size else None, "config": meta.get("config") or {},
            "outcome": meta.get("outcome")}


_RUN_KEYS = ("gamma", "variant", "cyclic", "max_epochs", "include_unverified", "separable",
             "proofs")


def replay(path, *, lemmas=None, progress=None) -> dict:
    """Re-run a saved run in exact rational arithmetic and compare with the float outcome."""
    from ._engine import run

    saved = load_run(path)
    cfg = {k: saved["config"][k] for k in _RUN_KEYS if k in saved["config"]}
    proofs = cfg.pop("proofs", None)
    try:
        res = run(saved["X"], saved["y"], order=saved["order"], w_star=saved["w_star"],
                  exact=True, lemmas=lemmas, proofs=proofs, on_violation="collect",
                  progress=progress, **cfg)
    except LemmaViolation as err:  # pragma: no cover - collect mode does not raise
        raise NovikoffError(str(err)) from None
    exact_viol = (res.monitor or {}).get("violations", [])
    rec = saved["outcome"] or {}
    float_viol = rec.get("violation")
    first_exact = min(exact_viol, key=lambda v: (v["k"] if v["k"] is not None else -1)) \
        if exact_viol else None
    if float_viol and first_exact:
        same = first_exact["lemma"] == float_viol.get("lemma")
        verdict = ("real: the exact run violates the same lemma" if same else
                   "real: the exact run violates a lemma too") + \
            f" ({first_exact['lemma']} at k={first_exact['k']})"
    elif float_viol:
        verdict = (f"round-off: the exact run violates nothing (the float run reported "
                   f"{float_viol.get('lemma')} at k={float_viol.get('k')})")
    elif first_exact:
        verdict = (f"the exact run violates {first_exact['lemma']} at k={first_exact['k']}, "
                   f"the float run did not")
    else:
        verdict = "agree: no violation in exact arithmetic"
    return {"verdict": verdict, "violated": bool(exact_viol), "exact": res.as_dict(),
            "float": rec, "mistakes_exact": res.mistakes,
            "mistakes_float": rec.get("mistakes")}
