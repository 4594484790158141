"""Reading the five seeds' notes (proofs/notes/, grammar and notation only, no checking), against
reading the same seeds' .proof encodings with the .proof parser in the same run.

    python benchmarks/bench_notes.py
"""

from __future__ import annotations

import time
from pathlib import Path

from novikoff.language.parser import parse
from novikoff.notes import read_notes

ROOT = Path(__file__).resolve().parents[1]


def best_of(fn, repeat: int = 20) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    notes = [(p.read_text(), str(p)) for p in sorted((ROOT / "proofs" / "notes").glob("seed_*.md"))]
    seeds = [(p.read_text(), str(p)) for p in sorted((ROOT / "proofs" / "seeds").glob("*.proof"))]
    t_notes = best_of(lambda: [read_notes(text, path) for text, path in notes])
    t_seeds = best_of(lambda: [parse(text, path) for text, path in seeds])
    print(f"read the five seeds' notes ({len(notes)} files): {t_notes * 1000:.1f} ms (best of 20)")
    print(f"parse the five seeds' .proof files (baseline): {t_seeds * 1000:.1f} ms")
    print(f"ratio notes / .proof: {t_notes / t_seeds:.2f}")


if __name__ == "__main__":
    main()
