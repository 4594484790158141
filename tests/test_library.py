"""The lemma library verifies; the seeds' proofs as written fail exactly where they are marked xfail."""

from __future__ import annotations

import json
import subprocess
import sys
from functools import lru_cache
from pathlib import Path

import pytest

from novikoff.checker import exit_code
from novikoff.language import ast as A
from novikoff.language.parser import parse
from novikoff.report import check_json

from helpers import bundled_reports, run_cli  # noqa: E402  (tests/ is on sys.path)

ROOT = Path(__file__).resolve().parents[1]
PROOFS = ROOT / "proofs"
SEEDS = PROOFS / "seeds"
LIBRARY_FILES = sorted(PROOFS.glob("*.proof"))
SEED_FILES = sorted(SEEDS.glob("*.proof"))

# Every statement the runtime monitor and the fuzzer rely on, as written in the library.
LIBRARY = {
    "novikoff.proof": {
        "w_star_nonzero": "||w_star|| > 0",
        "progress": "<w_star, w[k]> >= k*gamma",
        "norm_growth": "||w[k]||^2 <= k*R^2",
        "mistake_bound": "k <= R^2 * ||w_star||^2 / gamma^2",
        "mistake_bound_geometric": "k <= (R/gamma_geom)^2",
        "mistake_bound_unit": "k <= 1/gamma^2",
    },
    "geometric_margin.proof": {
        "w_star_nonzero": "||w_star|| > 0",
        "distance_to_hyperplane": "||x - z|| >= y*<w_star, x>/||w_star||",
        "margin_distance": "||x - z|| >= gamma/||w_star||",
        "foot_on_plane": "<w_star, z0> = 0",
        "foot_distance": "||x - z0|| = y*<w_star, x>/||w_star||",
        "closest_distance": "||x - z0|| = gamma/||w_star||",
    },
    "hinge_loss.proof": {
        "loss_nonneg": "TD[k] >= 0",
        "progress": "<w_star, w[k]> >= k*gamma - TD[k]",
        "norm_growth": "||w[k]||^2 <= k*R^2",
        "hinge_bound": "k <= R^2/gamma^2 + 2*TD[k]/gamma",
        "hinge_bound_unit": "k <= 1/gamma^2 + 2*TD[k]/gamma",
        "presented_progress": "<w_star, w[t]> >= gamma*sum(s < t, e[s]) - sum(s < t, loss[s])",
        "presented_norm_growth": "||w[t]||^2 <= R^2*sum(s < t, e[s])",
        "hinge_bound_presented": "M <= R^2/gamma^2 + 2*TD/gamma",
    },
    "learning_rate.proof": {
        "rate_progress": "<w_star, w[k]> >= k*eta*gamma",
        "rate_norm_growth": "||w[k]||^2 <= k*eta^2*R^2",
        "rate_mistake_bound": "k <= R^2*||w_star||^2/gamma^2",
    },
    "batch.proof": {
        "batch_progress": "<w_star, w[k]> >= eta*gamma*sum(i < k, m[i])",
        "batch_norm_growth": "||w[k]||^2 <= eta^2*R^2*sum(i < k, m[i]^2)",
        "steps_at_most_corrections": "k <= sum(i < k, m[i])",
        "squares_at_most_n_times": "sum(i < k, m[i]^2) <= n*sum(i < k, m[i])",
        "batch_corrections": "gamma^2*sum(i < K, m[i]) <= n*R^2*||w_star||^2",
        "batch_mistake_bound": "K <= n*R^2*||w_star||^2/gamma^2",
        "batch_run_progress": "<w_star, w[k]> >= eta*gamma*C[k]",
        "batch_run_norm_growth": "||w[k]||^2 <= eta^2*R^2*Q[k]",
        "batch_steps_at_most_total": "k <= C[k]",
        "batch_squares_at_most_n_times": "Q[k] <= n*C[k]",
        "batch_run_corrections": "gamma^2*C[k] <= n*R^2*||w_star||^2",
        "batch_step_bound": "k <= n*R^2*||w_star||^2/gamma^2",
    },
    "bias.proof": {
        "augmented_radius": "||x + e||^2 <= R^2 + 1",
        "augmented_margin": "y*<w_star + b*e, x + e> >= gamma",
        "augmented_norm": "||w_star + b*e||^2 = ||w_star||^2 + b^2",
        "bias_progress": "<w_star + b*e, w[k]> >= k*gamma",
        "bias_norm_growth": "||w[k]||^2 <= k*(R^2 + 1)",
        "bias_mistake_bound": "k <= (R^2 + 1)*(||w_star||^2 + b^2)/gamma^2",
    },
    "kernel.proof": {
        "kernel_progress": "<w_star, w[k]> >= k*gamma",
        "kernel_norm_growth": "||w[k]||^2 <= k*R^2",
        "kernel_mistake_bound": "k <= R^2*||w_star||^2/gamma^2",
    },
    "voted.proof": {
        "vectors_voted": "v[k] = k + 1",
        "voted_size": "v[k] <= R^2*||w_star||^2/gamma^2 + 1",
        "replaced_counted": "c[k] >= 1",
        "counts_sum": "sum(i < k, c[i]) = T[k]",
        "counts_add_up": "V[k] = T[k]",
        "updates_at_most_visits": "T[k] >= k",
        "vote_weight": "V[k] >= k",
    },
    "averaged.proof": {
        "sum_progress": "<w_star, s[t]> >= gamma*sum(i < t, c[i])",
        "sum_norm": "||s[t]|| <= R*sum(i < t, r[i])",
        "average_progress": "<w_star, s[T]>/T >= gamma*sum(i < T, c[i])/T",
        "average_norm": "||s[T]||/T <= R*sum(i < T, r[i])/T",
        "averaged_run_progress": "<w_star, s[t]> >= gamma*KT[t]",
        "averaged_run_norm": "||s[t]|| <= R*RT[t]",
        "average_run_progress": "<w_star, a[t+1]> >= gamma*KT[t+1]/(t+1)",
        "average_run_norm": "||a[t+1]|| <= R*RT[t+1]/(t+1)",
    },
    "nonzero_start.proof": {
        "start_progress": "<w_star, w[k]> >= <w_star, w0> + k*gamma",
        "start_norm_growth": "||w[k]||^2 <= ||w0||^2 + k*R^2",
        "start_bound": "<w_star, w0> + k*gamma <= ||w_star||*sqrt(||w0||^2 + k*R^2)",
    },
    "margin_perceptron.proof": {
        "norm_step": "||w[k+1]||^2 <= ||w[k]||^2 + gamma*||w[k]|| + 1",
        "norm_step_root": "||w[k+1]|| <= ||w[k]|| + gamma/2 + 1/(2*||w[k]||)",
        "norm_bound": "||w[k]|| <= 2/gamma + 3*gamma*k/4",
        "progress": "<w_star, w[k]> >= k*gamma",
        "update_bound": "k <= 8/gamma^2",
    },
}

# The textbook hypotheses of each library setting, and nothing else: an extra assumption could
# smuggle in the conclusion.
ASSUMPTIONS = {
    "novikoff.proof": {
        "start": "w[0] = 0",
        "update": "w[k+1] = w[k] + y*x",
        "mistake": "y*<w[k], x> <= 0",
        "margin": "y*<w_star, x> >= gamma",
        "radius": "||x|| <= R",
    },
    "geometric_margin.proof": {
        "margin": "y*<w_star, x> >= gamma",
        "foot": "z0 = x - (y*<w_star, x>/||w_star||^2)*y*w_star",
    },
    "hinge_loss.proof": {
        "start": "w[0] = 0",
        "update": "w[k+1] = w[k] + y*x",
        "mistake": "y*<w[k], x> <= 0",
        "unit_w_star": "||w_star|| = 1",
        "hinge": "y*<w_star, x> >= gamma - d",
        "radius": "||x|| <= R",
        "loss_start": "TD[0] = 0",
        "loss_step": "TD[k+1] >= TD[k] + d",
    },
    "hinge_loss.proof:hinge_presented": {
        "start": "w[0] = 0",
        "pm_one": "y[t]^2 = 1",
        "indicator": "e[t]*(e[t] - 1) = 0",
        "update": "w[t+1] = w[t] + e[t]*y[t]*x[t]",
        "mistake": "e[t]*y[t]*<w[t], x[t]> <= 0",
        "unit_w_star": "||w_star|| = 1",
        "radius": "||x[t]|| <= R",
        "loss_def": "loss[t] = max(0, gamma - y[t]*<w_star, x[t]>)",
    },
    "learning_rate.proof": {
        "start": "w[0] = 0",
        "update": "w[k+1] = w[k] + eta*y*x",
        "mistake": "y*<w[k], x> <= 0",
        "margin": "y*<w_star, x> >= gamma",
        "radius": "||x|| <= R",
    },
    "batch.proof": {
        "start": "w[0] = 0",
        "update": "w[k+1] = w[k] + eta*u",
        "some": "m[k] >= 1",
        "at_most": "m[k] <= n",
        "progress": "<w_star, u> >= m[k]*gamma",
        "obtuse": "<w[k], u> <= 0",
        "size": "||u|| <= m[k]*R",
    },
    "batch.proof:batch_run": {
        "start": "w[0] = 0",
        "update": "w[k+1] = w[k] + eta*u",
        "some": "m[k] >= 1",
        "at_most": "m[k] <= n",
        "progress": "<w_star, u> >= m[k]*gamma",
        "obtuse": "<w[k], u> <= 0",
        "size": "||u|| <= m[k]*R",
        "corrections_start": "C[0] = 0",
        "corrections_step": "C[k+1] = C[k] + m[k]",
        "squares_start": "Q[0] = 0",
        "squares_step": "Q[k+1] = Q[k] + m[k]^2",
    },
    "bias.proof": {
        "unit": "||e|| = 1",
        "data_off": "<x, e> = 0",
        "star_off": "<w_star, e> = 0",
        "start": "w[0] = 0",
        "update": "w[k+1] = w[k] + y*(x + e)",
        "mistake": "y*<w[k], x + e> <= 0",
        "margin": "y*(<w_star, x> + b) >= gamma",
        "radius": "||x|| <= R",
    },
    "kernel.proof": {
        "start": "w[0] = 0",
        "update": "w[k+1] = w[k] + y*phi",
        "mistake": "y*<w[k], phi> <= 0",
        "margin": "y*<w_star, phi> >= gamma",
        "radius": "||phi||^2 <= R^2",
    },
    "voted.proof": {
        "start": "w[0] = 0",
        "update": "w[k+1] = w[k] + y*x",
        "mistake": "y*<w[k], x> <= 0",
        "margin": "y*<w_star, x> >= gamma",
        "radius": "||x|| <= R",
        "first": "v[0] = 1",
        "keep": "v[k+1] = v[k] + 1",
    },
    "voted.proof:voted_run": {
        "first": "T[0] = 0",
        "later": "T[k+1] >= T[k] + 1",
        "count": "c[k] = T[k+1] - T[k]",
        "tally_start": "V[0] = 0",
        "tally": "V[k+1] = V[k] + c[k]",
    },
    "averaged.proof": {
        "start": "s[0] = 0",
        "accumulate": "s[t+1] = s[t] + v[t]",
        "counted": "c[t] >= 0",
        "root": "r[t] >= 0",
        "squared": "r[t]^2 = c[t]",
        "progress": "<w_star, v[t]> >= c[t]*gamma",
        "norm": "||v[t]|| <= r[t]*R",
    },
    "averaged.proof:averaged_run": {
        "start": "s[0] = 0",
        "accumulate": "s[t+1] = s[t] + wv[t]",
        "mean": "a[t+1] = (1/(t+1))*s[t+1]",
        "counted": "kt[t] >= 0",
        "progress": "<w_star, wv[t]> >= kt[t]*gamma",
        "norm": "||wv[t]|| <= sqrt(kt[t])*R",
        "total_start": "KT[0] = 0",
        "total_step": "KT[t+1] = KT[t] + kt[t]",
        "roots_start": "RT[0] = 0",
        "roots_step": "RT[t+1] = RT[t] + sqrt(kt[t])",
    },
    "nonzero_start.proof": {
        "start": "w[0] = w0",
        "update": "w[k+1] = w[k] + y*x",
        "mistake": "y*<w[k], x> <= 0",
        "margin": "y*<w_star, x> >= gamma",
        "radius": "||x|| <= R",
    },
    "margin_perceptron.proof": {
        "start": "w[0] = 0",
        "update": "w[k+1] = w[k] + y*x",
        "margin_update": "y*<w[k], x> <= (gamma/2)*||w[k]||",
        "margin": "y*<w_star, x> >= gamma",
        "unit_x": "||x|| = 1",
        "unit_w_star": "||w_star|| = 1",
    },
}

# Each seed's lemmas that are expected to fail (a slip kept as written), and the lemma of the same
# file that proves the corrected statement.
SEED_SLIPS = {
    "seed_000_lecture8.proof": {
        "eq2_as_written": "eq2",
        "claim1_as_written": "claim1",
        "hinge_projection_as_written": "hinge_projection",
        "eq4_as_written": "eq4",
        "obtuse_root_as_written": "obtuse_root",
        "step_as_written": "step_bound",
        "summed_as_written": "summed",
        "eq5_as_written": "eq5",
    },
    "seed_001_perceptron_notes.proof": {
        "lp_margin_as_written": "lp_margin",
        "sign_equivalence_as_written": "sign_equivalence",
    },
    "seed_002_handwritten_pct.proof": {
        "part1_as_written": "part1",
        "part3_as_written": "pct",
        "part3_square_only": "pct",
        "rgeom_bound_as_written": "rgeom_bound",
        "outline_as_written": "rgeom_bound",
        "another_pf_as_written": "another_pf",
        "update_iff_mislabel_as_written": "update_iff_mislabel",
    },
    "seed_003_eaton_slides.proof": {
        "less_negative_as_written": "less_negative",
        "update_means_incorrect_as_written": "incorrect_means_update",
        "cost_is_confidence_as_written": "cost_is_confidence",
    },
    "seed_004_virtue_slides.proof": {
        "part2_as_written": "part2",
        "mistake_bound_as_written": "mistake_bound",
    },
}

@lru_cache(maxsize=None)
def check(path: Path):
    """`novikoff check --json PATH`: (exit code, document).  A bundled file's come from the
    session's one check of proofs/ (the command's own functions on its reports; the test below
    compares them with the command's output), any other file's from the command in this
    process."""
    report = bundled_reports().get(Path(path).resolve())
    if report is not None:
        return exit_code([report]), check_json([report], 0.0)
    proc = run_cli("check", "--json", path, cwd=ROOT)
    assert proc.stdout, proc.stderr
    return proc.returncode, json.loads(proc.stdout)


def _untimed(doc):
    """The document without its timings, every file named by its absolute path (the command
    names a file relative to the directory it runs in when it can), and whether a step has a
    counterexample rather than which: the solver's model depends on what the process checked
    before (one file, or the whole directory), any of them is a counterexample."""
    def where(name):
        return str((ROOT / name).resolve())

    doc = dict(doc, summary=dict(doc["summary"]))
    doc.pop("seconds", None)
    doc["summary"].pop("seconds", None)
    doc["files"] = [dict(f, path=where(f["path"])) for f in doc["files"]]
    doc["lemmas"] = [dict(x, file=where(x["file"])) for x in doc["lemmas"]]
    doc["steps"] = [dict(x, file=where(x["file"]), counterexample=bool(x["counterexample"]))
                    for x in doc["steps"]]
    return doc


@pytest.mark.parametrize("path", [PROOFS / "novikoff.proof", SEEDS / "seed_003_eaton_slides.proof"],
                         ids=lambda p: p.name)
def test_check_json_is_the_commands(path):
    proc = run_cli("check", "--json", path, cwd=ROOT)
    code, doc = check(path)
    assert (proc.returncode, _untimed(json.loads(proc.stdout))) == (code, _untimed(doc))


@pytest.mark.e2e
def test_check_json_in_a_fresh_process_is_the_same():
    path = SEED_FILES[0]
    proc = subprocess.run([sys.executable, "-m", "novikoff", "check", "--json", str(path)],
                          capture_output=True, text=True, cwd=ROOT, timeout=600)
    here = run_cli("check", "--json", path, cwd=ROOT)  # what the tests above compare with
    assert (proc.returncode, _untimed(json.loads(proc.stdout))) == \
        (here.returncode, _untimed(json.loads(here.stdout)))


def lemmas(path: Path) -> dict:
    _, doc = check(path)
    return {lemma["name"]: lemma for lemma in doc["lemmas"]}


def steps(path: Path) -> list:
    return check(path)[1]["steps"]


def test_the_library_and_the_seeds_are_all_here():
    assert {p.name for p in LIBRARY_FILES} == set(LIBRARY)
    assert {p.name for p in SEED_FILES} == set(SEED_SLIPS)


# ---------------------------------------------------------------------------- the library

@pytest.mark.parametrize("path", LIBRARY_FILES, ids=lambda p: p.name)
def test_every_library_lemma_is_verified(path):
    code, doc = check(path)
    assert all(f["error"] is None for f in doc["files"]), doc["files"]
    bad = [(lem["name"], lem["status"], lem["reason"]) for lem in doc["lemmas"]
           if lem["status"] != "verified"]
    assert not bad
    bad_steps = [(s["line"], s["status"], s["reason"]) for s in doc["steps"]
                 if s["status"] != "verified"]
    assert not bad_steps
    assert code == 0


@pytest.mark.parametrize("path", LIBRARY_FILES, ids=lambda p: p.name)
def test_library_statements_are_the_documented_ones(path):
    found = {name: lem["statement"] for name, lem in lemmas(path).items()}
    for name, statement in LIBRARY[path.name].items():
        assert name in found, f"{path.name} lost lemma {name}"
        assert found[name] == statement, (name, found[name])


def _parsed(path: Path) -> A.ProofFile:
    return parse(path.read_text(encoding="utf-8"), str(path))


@pytest.mark.parametrize("path", LIBRARY_FILES, ids=lambda p: p.name)
def test_library_settings_assume_only_the_textbook_hypotheses(path):
    settings = _parsed(path).settings
    for i, setting in enumerate(settings):
        assumed = {a.name: a.formula.text for a in setting.assumptions}
        key = path.name if i == 0 else f"{path.name}:{setting.name}"
        assert assumed == ASSUMPTIONS[key], key


@pytest.mark.parametrize("path", LIBRARY_FILES, ids=lambda p: p.name)
def test_library_steps_are_not_marked_xfail(path):
    assert not [s for s in steps(path) if s["text"].rstrip().endswith("xfail")]


# ---------------------------------------------------------------------------- honesty

def _items(items):
    """Every chain step, hence and cases item of a proof, recursively."""
    for item in items:
        if isinstance(item, A.Chain):
            yield from item.steps
            yield item
        elif isinstance(item, A.Hence):
            yield item
        elif isinstance(item, A.Cases):
            yield item
            for branch in item.branches:
                yield from _items(branch.items)


def _citations(lemma: A.Lemma) -> set:
    proof = lemma.proof
    if proof is None:
        return set()
    names = set()
    for item in _items(list(proof.items) + list(proof.base) + list(proof.step)):
        for cite in getattr(item, "cites", []) or []:
            names.add(cite.name)
        first = getattr(item, "first", None)
        if first is not None:
            for cite in getattr(first, "cites", []) or []:
                names.add(cite.name)
    return names


@pytest.mark.parametrize("path", LIBRARY_FILES + SEED_FILES, ids=lambda p: p.name)
def test_no_lemma_cites_itself(path):
    for lemma in _parsed(path).lemmas:
        assert lemma.name not in _citations(lemma), f"{lemma.name} cites itself"


# ---------------------------------------------------------------------------- the seeds

@pytest.mark.parametrize("path", SEED_FILES, ids=lambda p: p.name)
def test_seed_lemmas_verify_or_fail_exactly_as_marked(path):
    code, doc = check(path)
    assert all(f["error"] is None for f in doc["files"]), doc["files"]
    status = {lem["name"]: lem["status"] for lem in doc["lemmas"]}
    slips = SEED_SLIPS[path.name]
    claims = {lem["name"] for lem in doc["lemmas"] if lem["kind"] == "claim"}
    for name, st in status.items():
        expected = "expected_failure" if name in slips or name in claims else "verified"
        assert st == expected, (name, st)
    # No step fails unexpectedly, is unknown, or is marked xfail and verifies.
    bad = [(s["line"], s["status"], s["reason"]) for s in doc["steps"]
           if s["status"] not in ("verified", "expected_failure")]
    assert not bad
    assert code == 0


@pytest.mark.parametrize("path", SEED_FILES, ids=lambda p: p.name)
def test_every_slip_has_a_verified_correction(path):
    status = {name: lem["status"] for name, lem in lemmas(path).items()}
    for slip, corrected in SEED_SLIPS[path.name].items():
        assert status.get(slip) == "expected_failure", slip
        assert status.get(corrected) == "verified", corrected


# (One test per seed file, not per step: parametrizing by step would check the seeds while the
# tests are collected, for every pytest run, whichever tests it runs.)
@pytest.mark.parametrize("path", SEED_FILES, ids=lambda p: p.name)
def test_expected_failures_come_with_a_counterexample_or_a_hint(path):
    for step in steps(path):
        if step["status"] != "expected_failure":
            continue
        where = f"{path.name}:{step['line']}"
        if step["text"].startswith("claim "):  # a claim about runs: its counterexample is a run
            assert step["reason"].startswith("refuted by run "), (where, step)
            continue
        assert step["text"].rstrip().endswith("xfail"), where
        assert step["reason"], where
        relative = step["reason"].startswith("holds only if")  # rests on an unverified lemma
        assert step["counterexample"] or step["missing"] or relative or \
            step["judgement"] == "under-justified", (where, step)
        # a slip's counterexample satisfies the seed's setting; an under-justified step says
        # it is true there and what it needs
        if step["judgement"] == "slip":
            assert step["counterexample"] and "false in its setting" in step["reason"], where
        if step["judgement"] == "under-justified":
            assert step["reason"].startswith("true in this setting, but"), where


def test_an_xfail_step_that_verifies_is_an_error(tmp_path):
    # The seeds' xfail marks are trustworthy only because a wrong mark is reported.
    proof = tmp_path / "wrong_mark.proof"
    proof.write_text("setting s:\n  real a > 0\n\nlemma pos: a >= 0\nproof:\n"
                     "  a >= 0      xfail\n", encoding="utf-8")
    code, doc = check(proof)
    assert code != 0
    assert doc["lemmas"][0]["status"] != "verified"
