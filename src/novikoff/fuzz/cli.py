"""`novikoff fuzz`: the properties on the correct engines, the mutant catalogue, a table."""

from __future__ import annotations

import json
import sys
from pathlib import Path

__all__ = ["register"]


def register(subparsers) -> None:
    """Add the ``fuzz`` subcommand."""
    p = subparsers.add_parser(
        "fuzz", help="fuzz the lemma invariants and the catalogue of buggy perceptrons",
        description="Check that every lemma invariant holds on generated runs of the correct "
                    "engines, and that every buggy perceptron of the catalogue is caught.")
    p.add_argument("--profile", choices=("ci", "deep"), default="ci",
                   help="ci: fast and reproducible (default); deep: a long campaign")
    p.add_argument("--json", action="store_true", help="print a JSON report")
    p.add_argument("--proofs", metavar="PATH", nargs="*", default=None,
                   help=".proof files or directories (default: the bundled library)")
    p.add_argument("--dir", metavar="DIR", default=None,
                   help="where failing cases and the example database go (default "
                        ".novikoff/fuzz)")
    p.add_argument("--mutant", metavar="NAME", action="append", default=None,
                   help="only this mutant (repeatable)")
    p.set_defaults(handler=_fuzz)


_FIRST = {"td": "(reported TD)", "rule": "(update rule)", "average": "(average)",
          "vote": "(vote)"}


def _table(report) -> str:
    rows = [("variant", "mutant", "killed", "first lemma violated", "examples")]
    for m in report.mutants:
        killed = "yes" if m.killed else ("equivalent" if m.equivalent else "NO")
        first = m.lemma or _FIRST.get(m.kind, "-")
        rows.append((m.variant, m.name, killed, first, str(m.examples if m.killed else "-")))
    widths = [max(len(r[i]) for r in rows) for i in range(5)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    out = []
    for e in report.engines:
        status = "ok" if e.ok else f"VIOLATED: {e.violations[0][1]}"
        out.append(f"engine {e.variant}: {e.runs} runs, {status} ({e.seconds:.1f} s)")
    out.append("")
    out.extend(lines)
    for m in report.mutants:
        if m.equivalent and not m.killed:
            out.append(f"  {m.name} is equivalent: {m.reason}")
    hunts: dict = {}
    for m in report.mutants:
        hunts[m.variant] = hunts.get(m.variant, 0.0) + m.seconds
    out.append("time: engines " + ", ".join(f"{e.variant} {e.seconds:.1f} s"
                                            for e in report.engines)
               + "; mutant hunts " + ", ".join(f"{v} {t:.1f} s" for v, t in hunts.items()))
    t = report.tightness
    out.append("")
    out.append(f"tightness (updates / (R/gamma)^2): orthonormal {t['orthonormal']:.3f}")
    if t.get("datasets"):
        out.append(f"  planted data, {t['datasets']} datasets, {t['runs_each']} runs each "
                   f"(best of all; mean of the per-dataset bests; mean of all runs):")
        names = (f"{t['adversary']} adversary", "random orders")
        width = max(map(len, names))
        for name, key in zip(names, ("adaptive", "random")):
            out.append(f"    {name.ljust(width)}  {t[key]:.3f}; {t[key + '_best_mean']:.3f}; "
                       f"{t[key + '_mean']:.3f}")
        out.append(f"    adversary's best vs random's best: better on {t['adaptive_better']}, "
                   f"equal on {t['adaptive_equal']}, worse on {t['adaptive_worse']} datasets")
    out.append(f"throughput: {report.runs_per_second:.0f} runs/s (generate, run, check)")
    out.append("ok" if report.ok else "FAILED")
    return "\n".join(out)


def _fuzz(args) -> int:
    from ..errors import NovikoffError
    from ._driver import DEFAULT_DIR, run_fuzz
    from ._variants import all_mutants
    try:
        lemmas = None
        if args.proofs:
            from ..lemmas import load_lemmas
            lemmas = tuple(load_lemmas(args.proofs))
        mutants = all_mutants()
        if args.mutant:
            known = {m.name for m in mutants}
            bad = [n for n in args.mutant if n not in known]
            if bad:
                print(f"novikoff fuzz: unknown mutant {bad[0]!r} (known: "
                      f"{', '.join(sorted(known))})", file=sys.stderr)
                return 2
            mutants = tuple(m for m in mutants if m.name in args.mutant)
        if args.dir is not None:  # refused before the campaign, not after it
            try:
                Path(args.dir).mkdir(parents=True, exist_ok=True)
            except OSError as err:
                print(f"novikoff: error: --dir {args.dir}: "
                      f"{'not a directory' if Path(args.dir).exists() else err.strerror}",
                      file=sys.stderr)
                return 2
        progress = None if args.json else (lambda msg: print(f"... {msg}", file=sys.stderr))
        report = run_fuzz(args.profile, lemmas=lemmas, directory=args.dir or DEFAULT_DIR,
                          mutants=mutants, progress=progress)
    except NovikoffError as err:
        print(f"novikoff fuzz: {err}", file=sys.stderr)
        return 2
    except OSError as err:
        print(f"novikoff fuzz: {err}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(report.as_dict(), indent=2))
    else:
        print(_table(report))
    return 0 if report.ok else 1
