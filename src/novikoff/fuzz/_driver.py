"""The fuzz driver: properties over generated runs, the mutant hunt, tightness and throughput.

Every invariant is a lemma statement from ``proofs/``, checked by ``novikoff.runtime``'s audit
on a weight trace (and on the TD the learner reports, for a learner that reports one): the
driver never states an inequality of its own.  A mutant is *killed* when the audit reports a
lemma violation, or a reported TD that is not TD (batch and kernel runs: or a break of the update
rule; averaged and voted runs: or an average or a vote that is not its definition; see
``_variants``, the table from variant to run maker and judge), on some generated run;
the number of Hypothesis examples it took is reported, the (shrunk) failing run is saved as an
npz, and Hypothesis's example database (keyed per mutant) replays it first next time.
"""

from __future__ import annotations

import functools
import hashlib
import multiprocessing as mp
import os
import time
import warnings
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np
from hypothesis import given, seed, settings, strategies as st
from hypothesis.database import DirectoryBasedExampleDatabase

from .. import strategies as ns
from . import _audit
from ._cases import Case, save_case
from ._generate import HADAMARD_M, datasets_for, runs
from ._mutants import Mutant
from ._profiles import PROFILES
from ._variants import VARIANTS, Run, all_mutants, case_run, variant_of

__all__ = ["MutantResult", "EngineResult", "FuzzReport", "run_fuzz", "hunt_mutant", "replay_case",
           "check_engine", "measure_tightness", "datasets_for", "DEFAULT_DIR"]

DEFAULT_DIR = os.path.join(".novikoff", "fuzz")


@dataclass
class MutantResult:
    name: str
    description: str
    killed: bool
    equivalent: bool
    lemma: str | None = None
    examples: int | None = None
    visit: int | None = None
    reason: str | None = None
    case: str | None = None
    kind: str | None = None  # of the first finding: "lemma", "td", "rule", "average" or "vote"
    variant: str = "classic"
    seconds: float = 0.0  # the hunt's wall time

    def as_dict(self) -> dict:
        return {"name": self.name, "killed": self.killed, "equivalent": self.equivalent,
                "lemma": self.lemma, "kind": self.kind, "examples": self.examples,
                "visit": self.visit, "reason": self.reason, "case": self.case,
                "description": self.description, "variant": self.variant,
                "seconds": round(self.seconds, 3)}


@dataclass
class EngineResult:
    variant: str
    runs: int
    violations: list = field(default_factory=list)  # [(lemma, message)]; lemma None: td
    case: str | None = None
    seconds: float = 0.0  # the property's wall time

    @property
    def ok(self) -> bool:
        return not self.violations

    def as_dict(self) -> dict:
        return {"variant": self.variant, "runs": self.runs, "ok": self.ok,
                "violations": [{"lemma": lem, "message": msg} for lem, msg in self.violations],
                "case": self.case, "seconds": round(self.seconds, 3)}


@dataclass
class FuzzReport:
    profile: str
    mutants: list
    engines: list
    runs_per_second: float
    tightness: dict

    @property
    def best_tightness(self) -> float:
        return max(self.tightness.get(k, 0.0) for k in ("orthonormal", "adaptive", "random"))

    @property
    def ok(self) -> bool:
        return all(e.ok for e in self.engines) and all(
            m.killed or m.equivalent for m in self.mutants)

    def as_dict(self) -> dict:
        return {"profile": self.profile, "ok": self.ok,
                "mutants": [m.as_dict() for m in self.mutants],
                "engines": [e.as_dict() for e in self.engines],
                "runs_per_second": self.runs_per_second,
                "best_tightness": self.best_tightness, "tightness": self.tightness}


# --------------------------------------------------------------------------- what is fuzzed

# --------------------------------------------------------------------------- hunting
# A run is judged by its variant's entry of the variant table (_variants: the variant's own
# audit); the driver binds nothing itself.

class _Killed(Exception):
    pass


def _key(name: str) -> bytes:
    return b"novikoff.fuzz:" + name.encode()


def _settings_for(profile: str, directory: str | None):
    base = PROFILES[profile]
    db = DirectoryBasedExampleDatabase(os.path.join(directory, "hypothesis")) \
        if directory else None
    # Derandomized profiles cannot use a database; a fixed seed is as reproducible.  The ci
    # profile reports the first failing run as found (no shrinking), deep shrinks it.
    if base.derandomize:
        return settings(base, derandomize=False, database=db,
                        phases=[p for p in base.phases if p.name != "shrink"])
    return settings(base, database=db)


def _seeded(test, profile: str, name: str):
    if PROFILES[profile].derandomize:
        db = test._hypothesis_internal_use_settings.database
        test = seed(int.from_bytes(hashlib.sha256(name.encode()).digest()[:8], "big"))(test)
        # hypothesis.seed() turns the database off; a seeded search that replays the failures
        # it saved is still reproducible, so turn it back on.
        test._hypothesis_internal_use_settings = settings(
            test._hypothesis_internal_use_settings, database=db)
    return test


def _search(strategy, check, *, profile, directory, name):
    """Run ``check`` on generated cases until it returns a finding; (count, first, last)."""
    count, first, last = [0], [], []

    @_settings_for(profile, directory)
    @given(strategy)
    def test(case):
        count[0] += 1
        found = check(case)
        if found is not None:
            if not first:
                first.append((count[0], case, found))
            last[:] = [(case, found)]
            raise _Killed(found)

    test._hypothesis_internal_database_key = _key(name)
    test = _seeded(test, profile, name)
    try:
        with warnings.catch_warnings():
            # Hypothesis's report of a failing run (a long trace, and its TD) is not shown: the
            # finding is recorded above and the run saved as a case.
            warnings.filterwarnings("ignore", message="Generating overly large repr")
            test()
    except Exception:  # the finding (or Hypothesis's report of it): recorded above
        if not first:
            raise
    return count[0], first, last


def hunt_mutant(mutant: Mutant, lemmas, *, profile: str = "ci",
                directory: str | None = DEFAULT_DIR, max_n: int = 50,
                max_dim: int = 8) -> MutantResult:
    """Fuzz one mutant until a lemma invariant fails (or its reported TD is not TD); save the
    shrunk failing run."""
    spec = variant_of(mutant.variant)
    strategy = spec.runs(mutant.learner, mutant.data, mutant.producer, mutant.td, max_n=max_n,
                         max_dim=max_dim)

    def check(run):
        vs = spec.judge(run, lemmas)
        return vs[0] if vs else None

    count, first, last = _search(strategy, check, profile=profile, directory=directory,
                                 name=f"mutant:{mutant.name}")
    equivalent = mutant.equivalent is not None
    if not first:
        return MutantResult(mutant.name, mutant.description, False, equivalent,
                            examples=count, reason=mutant.equivalent, variant=mutant.variant)
    n_first, _, v_first = first[0]
    case, v_last = last[0]
    path = None
    if directory:
        path = save_case(os.path.join(directory, "cases", f"{mutant.name}.npz"),
                         _case(mutant.name, mutant.variant, case, v_last))
    return MutantResult(mutant.name, mutant.description, True, False, lemma=v_first.lemma,
                        examples=n_first, visit=v_first.visit,
                        reason=("listed as equivalent but killed: " + mutant.equivalent)
                        if equivalent else None, case=path, kind=v_first.kind,
                        variant=mutant.variant)


def _case(name, variant, run: Run, finding) -> Case:
    ds = run.ds
    kernel = getattr(ds, "kernel", "")
    gamma = Fraction(ds.gamma) if kernel else ds.gamma_exact
    return Case(name, variant, np.asarray(ds.X), np.asarray(ds.y), np.asarray(ds.w_star),
                gamma, np.asarray(run.order), np.asarray(run.W), finding.lemma or "",
                finding.visit if finding.visit is not None else -1,
                td=None if run.td is None else np.asarray(run.td, dtype=np.float64),
                kind=finding.kind, kernel=kernel, converged=run.converged,
                extra=None if run.extra is None else {k: np.asarray(v)
                                                      for k, v in run.extra.items()},
                convention=run.convention)


def check_engine(variant: str, lemmas, *, profile: str = "ci",
                 directory: str | None = DEFAULT_DIR, max_n: int = 50,
                 max_dim: int = 8) -> EngineResult:
    """Every invariant holds on every generated run of a correct engine (and the TD it reports,
    for hinge runs, is TD)."""
    spec = variant_of(variant)
    strategy = spec.runs(spec.correct, spec.family, None, spec.correct_td, max_n=max_n,
                         max_dim=max_dim)

    def check(run):
        vs = spec.judge(run, lemmas)
        return vs[0] if vs else None

    count, first, last = _search(strategy, check, profile=profile, directory=directory,
                                 name=f"engine:{variant}")
    if not first:
        return EngineResult(variant, count)
    case, v = last[0]
    path = None
    if directory:
        path = save_case(os.path.join(directory, "cases", f"engine-{variant}.npz"),
                         _case(f"engine-{variant}", variant, case, v))
    return EngineResult(variant, count, [(v.lemma, v.message)], path)


# --------------------------------------------------------------------------- tightness

def _updates(W, d: int) -> int:
    """The number of visits at which the weights changed."""
    prev = np.vstack([np.zeros((1, d)), W[:-1]]) if len(W) else np.zeros((0, d))
    return int(np.sum(np.any(W != prev, axis=1)))


def measure_tightness(*, examples: int = 40, runs_each: int = 5, seed_: int = 0,
                      max_n: int = 40, max_dim: int = 6) -> dict:
    """Updates/(R/gamma)^2: the orthonormal construction; on planted data, the same number of
    runs of the most-mistakes adversary (seeded tie-breaks) and of random orders (cyclic to
    convergence) on each dataset, with the best and the mean of each."""
    rng = np.random.default_rng(seed_)
    ortho, adv_runs, rand_runs = [], [], []

    @settings(PROFILES["ci"], max_examples=examples, database=None)
    @given(ns.orthonormal_datasets(max_m=max_n, scaled=True))
    def on_orthonormal(ds):
        _, W = ns.adversarial_run(ds, ns.GreedyMarginAdversary())
        ortho.append(ns.tightness(ds, _updates(W, ds.d)))

    @settings(PROFILES["ci"], max_examples=examples, database=None)
    @given(ns.planted_datasets(min_n=10, max_n=max_n, min_dim=2, max_dim=max_dim,
                               min_margin=0.01, max_margin=0.2))
    def on_planted(ds):
        if ds.bound < 4:  # nearly every order is tight on trivial data: not informative
            return
        adv_runs.append([
            ns.tightness(ds, _updates(ns.adversarial_run(
                ds, ns.MostMistakesAdversary(seed=r))[1], ds.d))
            for r in range(runs_each)])
        rand_runs.append([
            ns.tightness(ds, _updates(ns.cyclic_run(ds, rng.permutation(ds.n))[1], ds.d))
            for _ in range(runs_each)])

    on_orthonormal()
    on_planted()
    out = {"orthonormal": max(ortho), "adversary": ns.MostMistakesAdversary.name,
           "runs_each": runs_each, "datasets": len(adv_runs)}
    for key, table in (("adaptive", adv_runs), ("random", rand_runs)):
        a = np.array(table) if table else np.zeros((0, runs_each))
        best = a.max(axis=1) if len(a) else np.zeros(0)
        out[key] = float(best.max()) if len(a) else 0.0           # best run of all
        out[f"{key}_best_mean"] = float(best.mean()) if len(a) else 0.0  # mean of bests
        out[f"{key}_mean"] = float(a.mean()) if len(a) else 0.0   # mean of all runs
    if adv_runs:
        ab, rb = np.max(adv_runs, axis=1), np.max(rand_runs, axis=1)
        out["adaptive_better"] = int(np.sum(ab > rb))
        out["adaptive_equal"] = int(np.sum(ab == rb))
        out["adaptive_worse"] = int(np.sum(ab < rb))
    return out


# --------------------------------------------------------------------------- throughput

def measure_throughput(lemmas, *, examples: int = 300, max_n: int = 50, max_dim: int = 8,
                       variant: str = "classic", seed_: int | None = None,
                       workers: int = 1) -> float:
    """Runs per second of the full property (generate, run, check) on the correct engine.

    workers > 1: that many forked processes run the property at once, each on its own seed
    and `examples` runs; the rate is all their runs over the wall time, process start
    included."""
    if workers > 1 and "fork" in mp.get_all_start_methods():
        ctx = mp.get_context("fork")  # the children inherit the compiled lemmas and kernels
        t0 = time.perf_counter()
        with ctx.Pool(workers) as pool:
            runs = pool.starmap(_count_runs, [(lemmas, examples, max_n, max_dim, variant,
                                               (seed_ or 0) + 7919 * i) for i in range(workers)])
        return sum(runs) / (time.perf_counter() - t0)
    t0 = time.perf_counter()
    runs = _count_runs(lemmas, examples, max_n, max_dim, variant, seed_)
    return runs / (time.perf_counter() - t0)


def _count_runs(lemmas, examples, max_n, max_dim, variant, seed_) -> int:
    spec = variant_of(variant)
    strategy = spec.runs(spec.correct, spec.family, None, spec.correct_td, max_n=max_n,
                         max_dim=max_dim)
    count = [0]

    @settings(PROFILES["ci"], max_examples=examples, database=None)
    @given(strategy)
    def prop(run):
        count[0] += 1
        assert not spec.judge(run, lemmas)

    if seed_ is not None:
        prop = seed(seed_)(prop)
        prop._hypothesis_internal_use_settings = settings(
            prop._hypothesis_internal_use_settings, derandomize=False)
    prop()
    return count[0]


# --------------------------------------------------------------------------- everything

def run_fuzz(profile: str = "ci", *, lemmas=None, directory: str | None = DEFAULT_DIR,
             mutants=None, progress=None) -> FuzzReport:
    """The properties on the correct engines, the mutant catalogue, tightness, throughput."""
    if profile not in PROFILES:
        raise ValueError(f"profile={profile!r} must be one of {sorted(PROFILES)}")
    if lemmas is None:
        lemmas = _audit.bundled_lemmas()
    say = progress or (lambda msg: None)
    if mutants is None:
        mutants = all_mutants()
    engines = []
    for variant in VARIANTS:  # every registered variant's correct learner
        say(f"engine {variant}")
        t0 = time.perf_counter()
        engines.append(check_engine(variant, lemmas, profile=profile, directory=directory))
        engines[-1].seconds = time.perf_counter() - t0
    results = []
    for m in mutants:
        say(f"mutant {m.name}")
        t0 = time.perf_counter()
        results.append(hunt_mutant(m, lemmas, profile=profile, directory=directory))
        results[-1].seconds = time.perf_counter() - t0
    say("tightness")
    tight = measure_tightness(examples=100 if profile == "ci" else 1000)
    say("throughput")
    # on every core, as a campaign would run (each worker its own seed)
    rps = measure_throughput(lemmas, examples=200 if profile == "ci" else 2000,
                             workers=os.cpu_count() or 1)
    return FuzzReport(profile, results, engines, rps, tight)


def replay_case(path, lemmas=None) -> list:
    """Re-check a saved case: the lemma violations of its trace, and its first TD finding when
    it carries a reported TD (earliest first)."""
    from ._cases import load_case
    case = load_case(path)
    if lemmas is None:
        lemmas = _audit.bundled_lemmas()
    return variant_of(case.variant).judge(case_run(case), lemmas)
