"""Replay a saved run in exact rational arithmetic and compare with its float outcome."""

from __future__ import annotations

import tempfile
from pathlib import Path

from ..errors import NovikoffError
from ._io import _RUN_KEYS, _in_file, _proof_paths, load_run
from ._monitor import LemmaViolation
from ._variants import run

__all__ = ["replay"]


def replay(path, *, lemmas=None, progress=None) -> dict:
    """Re-run a saved run in exact rational arithmetic and compare with the float outcome."""
    saved = load_run(path)
    cfg = {k: saved["config"][k] for k in _RUN_KEYS if k in saved["config"]}
    entries = cfg.pop("proofs", None)
    with tempfile.TemporaryDirectory(prefix="novikoff-replay-") as tmp, _in_file("run", path):
        try:
            res = run(saved["X"], saved["y"], order=saved["order"], w_star=saved["w_star"],
                      w0=saved["w0"], exact=True, lemmas=lemmas, proofs=_proof_paths(entries, Path(tmp)),
                      on_violation="collect", progress=progress, **cfg)
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
