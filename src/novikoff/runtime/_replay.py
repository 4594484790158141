"""Replay a saved run in exact rational arithmetic and compare with its float outcome."""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path

from ..errors import NovikoffError, ProofSyntaxError
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
        # a recorded proof is loaded from a temporary copy; messages name it in the run file
        recorded = _Recorded(tmp, path)
        try:
            res = run(saved["X"], saved["y"], order=saved["order"], w_star=saved["w_star"],
                      w0=saved["w0"], exact=True, lemmas=lemmas, proofs=_proof_paths(entries, Path(tmp)),
                      on_violation="collect", progress=progress, **cfg)
        except LemmaViolation as err:  # pragma: no cover - collect mode does not raise
            raise NovikoffError(recorded.named(str(err))) from None
        except ProofSyntaxError as err:
            raise type(err)(err.message, recorded.named(err.file), err.line, err.column,
                            err.text) from None
        except NovikoffError as err:
            raise type(err)(recorded.named(str(err))) from None
        exact = recorded.named(res.as_dict())
    exact_viol = (exact.get("monitor") or {}).get("violations", [])
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
    return {"verdict": verdict, "violated": bool(exact_viol), "exact": exact,
            "float": rec, "mistakes_exact": res.mistakes,
            "mistakes_float": rec.get("mistakes")}


class _Recorded:
    """Names a recorded proof's temporary copy (TMP/mine.proof:4) as the run file's member
    (run.npz[mine.proof]:4) in messages and reports."""

    def __init__(self, tmp: str, run_file) -> None:
        self.tmp = str(Path(tmp)) + os.sep
        self.run_file = str(run_file)

    def named(self, obj):
        if isinstance(obj, str):
            return re.sub(re.escape(self.tmp) + r"([^\s:'\"]+)",
                          lambda m: f"{self.run_file}[{m.group(1)}]", obj)
        if isinstance(obj, dict):
            return {k: self.named(v) for k, v in obj.items()}
        if isinstance(obj, (list, tuple)):
            return type(obj)(self.named(v) for v in obj)
        return obj
