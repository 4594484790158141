"""Fuzzing: the catalogue of buggy perceptrons and the driver behind `novikoff fuzz`.

Every invariant is a lemma statement of ``proofs/`` compiled by the runtime monitor; a mutant is
killed when one of them is certainly false on a generated run, or when the TD it reports is
certainly not TD; batch and kernel mutants also when their trace certainly breaks the update
rule; averaged and voted mutants also when their average or their vote is certainly not its
definition (in the convention the learner declares).  ``VARIANTS`` (``_variants``) maps each
variant to how its runs are made and judged.
"""

from ._audit import Finding, bundled_lemmas, lemma_violations, trace_violations
from ._cases import Case, load_case, save_case
from ._driver import (DEFAULT_DIR, EngineResult, FuzzReport, MutantResult, check_engine,
                      hunt_mutant, measure_throughput, measure_tightness, replay_case, run_fuzz)
from ._mutants import CORRECT, CORRECT_TD, Mutant, trace
from ._profiles import PROFILES, profile_from_env, register_profiles
from ._variants import (VARIANTS, Run, Variant, all_mutants, mutant_named, register_mutants,
                        register_variant)

__all__ = [
    "Finding", "bundled_lemmas", "lemma_violations", "trace_violations", "Case", "load_case",
    "save_case", "DEFAULT_DIR", "EngineResult", "FuzzReport", "MutantResult", "check_engine",
    "hunt_mutant", "measure_throughput", "measure_tightness", "replay_case", "run_fuzz",
    "CORRECT", "CORRECT_TD", "MUTANTS", "Mutant", "mutant_named", "trace", "PROFILES",
    "profile_from_env", "register_profiles", "VARIANTS", "Run", "Variant", "all_mutants",
    "register_mutants", "register_variant",
]

# The whole catalogue (classic, margin and hinge mutants, then batch, kernel, averaged and voted
# ones); mutants registered later are in all_mutants().
MUTANTS = all_mutants()
