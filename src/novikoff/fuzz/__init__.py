"""Fuzzing: the catalogue of buggy perceptrons and the driver behind `novikoff fuzz`.

Every invariant is a lemma statement of ``proofs/`` compiled by the runtime monitor; a mutant is
killed when one of them is certainly false on a generated run, or when the TD it reports is
certainly not TD.
"""

from ._audit import Finding, bundled_lemmas, lemma_violations, trace_violations
from ._cases import Case, load_case, save_case
from ._driver import (DEFAULT_DIR, EngineResult, FuzzReport, MutantResult, check_engine,
                      hunt_mutant, measure_throughput, measure_tightness, replay_case, run_fuzz)
from ._mutants import CORRECT, CORRECT_TD, MUTANTS, Mutant, mutant_named, trace
from ._profiles import PROFILES, profile_from_env, register_profiles

__all__ = [
    "Finding", "bundled_lemmas", "lemma_violations", "trace_violations", "Case", "load_case",
    "save_case", "DEFAULT_DIR", "EngineResult", "FuzzReport", "MutantResult", "check_engine",
    "hunt_mutant", "measure_throughput", "measure_tightness", "replay_case", "run_fuzz",
    "CORRECT", "CORRECT_TD", "MUTANTS", "Mutant", "mutant_named", "trace", "PROFILES",
    "profile_from_env", "register_profiles",
]
