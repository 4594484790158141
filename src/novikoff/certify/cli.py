"""`novikoff certify PATH...`: search certificates for the obligations of proof files and write
them beside the files (DIR/.certificates/NAME.proof.json)."""

from __future__ import annotations

import sys
import time
from pathlib import Path

from ..solver_budget import add_timeout_option

__all__ = ["register", "certify_file"]


def register(sub) -> None:
    parser = sub.add_parser("certify", help="search and store certificates for the verified "
                                            "steps of .proof files and notes")
    parser.add_argument("paths", nargs="*", help="files or directories (default: the bundled "
                                                 "proofs/)")
    add_timeout_option(parser)
    parser.set_defaults(handler=_certify)


def certify_file(path: Path, timeout_ms: int = 5000, budget_s: float = 20.0) -> dict:
    """Check one file with every decision recorded, search certificates for those the stored
    ones do not cover (and models for the checks the solver found satisfiable: consistency
    checks, decisions whose goal does not follow), each within budget_s seconds of
    wall-clock time, and write the file's certificates.  Returns counts."""
    from ..checker import Checker
    from ..kernel.certified import LEDGER
    from .models import find_model
    from .search import find_certificate
    from .store import load_certificates, write_certificates

    LEDGER.store = dict(load_certificates(path))
    LEDGER.recording, LEDGER.pending, LEDGER.used, LEDGER.labels = True, {}, {}, {}
    LEDGER.unmodelled = {}
    try:
        report = Checker(timeout_ms=timeout_ms).check_file(path)
        pending, used, labels = dict(LEDGER.pending), dict(LEDGER.used), dict(LEDGER.labels)
        unmodelled = dict(LEDGER.unmodelled)
    finally:
        LEDGER.store, LEDGER.recording, LEDGER.pending, LEDGER.used = {}, False, {}, {}
        LEDGER.labels, LEDGER.unmodelled = {}, {}
    found, left = {}, []
    for key, statement in pending.items():
        certificate = find_certificate(statement, timeout_ms, budget_s)
        if certificate is not None:
            found[key] = certificate
        else:
            left.append(labels.get(key, ""))
    models = {}
    for key, statement in unmodelled.items():
        model = find_model(statement, timeout_ms, budget_s)
        if model is not None:
            models[key] = model
    kept = {**used, **found, **models}
    if kept or load_certificates(path):
        write_certificates(path, kept)
    return {"error": report.error, "replayed": len(used), "found": len(found),
            "left": len(pending) - len(found), "where": left, "models": len(models),
            "unmodelled": len(unmodelled) - len(models)}


def _certify(args) -> int:
    from ..checker import bundled_proofs_dir, proof_files
    from .store import CertificateFileError

    paths = args.paths or [bundled_proofs_dir()]
    for p in paths:
        if not Path(p).exists():
            print(f"novikoff: error: no such file or directory: {p}", file=sys.stderr)
            return 2
    # the notes (.md, .tex with a novikoff block) too: `novikoff check DIR` checks them
    files = proof_files(paths, notes=True)
    if not files:
        print(f"novikoff: error: no .proof files or notes in {', '.join(map(str, paths))}",
              file=sys.stderr)
        return 2
    code = 0
    totals = {"replayed": 0, "found": 0, "left": 0, "models": 0, "unmodelled": 0}
    start = time.perf_counter()
    for path in files:
        try:
            counts = certify_file(Path(path), args.timeout)
        except CertificateFileError as exc:
            print(f"novikoff: error: {exc}", file=sys.stderr)
            code = 2
            continue
        if counts["error"] is not None:
            print(counts["error"], file=sys.stderr)
            code = 2
        for k in totals:
            totals[k] += counts[k]
        print(f"{path}: {counts['replayed']} certificates and models replayed, "
              f"{counts['found']} certificates and {counts['models']} models found, "
              f"{counts['left']} decisions and {counts['unmodelled']} satisfiable checks left "
              f"to the solver")
        for where in counts["where"]:
            print(f"    left to the solver: a decision at {where}")
    print(f"certify: {totals['replayed'] + totals['found'] + totals['models']} certificates "
          f"and models kept, {totals['found']} certificates and {totals['models']} models new; "
          f"{totals['left']} decisions and {totals['unmodelled']} satisfiable checks left to the "
          f"solver, in {time.perf_counter() - start:.1f} s")
    return code
