"""A setting binds its own symbols to run quantities (`bind theta[k+1] to weights[k]`), so a lemma
written in any notation is monitored; the bindings never change what the kernel verifies."""

from __future__ import annotations

import textwrap
from pathlib import Path

import numpy as np
import pytest

from novikoff.checker import Checker
from novikoff.errors import ProofSyntaxError
from novikoff.lemmas import load_lemmas
from novikoff.runtime import Monitor, load_dataset, run

SEED_004 = Path(__file__).resolve().parents[1] / "proofs" / "seeds" / \
    "seed_004_virtue_slides.proof"

# The classic lemmas in another notation: updates t, weights v counted from 1, separator u,
# margin g, radius r, example (z, s).
RENAMED = """\
setting renamed:
  vectors  u, z
  sequence v
  real     g > 0, r > 0
  label    s
  nat      t
  per update: z, s
  bind     v[t+1] to weights[t], u to separator, z to example, s to label
  bind     t to updates, g to margin, r to radius
  assume   start:   v[1] = 0
  assume   update:  v[t+2] = v[t+1] + s*z
  assume   mistake: s*<v[t+1], z> <= 0
  assume   margin:  s*<u, z> >= g
  assume   radius:  ||z|| <= r

lemma progress: <u, v[t+1]> >= t*g
proof by induction on t:
  base:
    <u, v[1]> = 0                              by start
  step:
    <u, v[t+2]> = <u, v[t+1] + s*z>            by update
                = <u, v[t+1]> + s*<u, z>
                >= t*g + g                     by ih, margin
                = (t+1)*g

lemma norm_growth: ||v[t+1]||^2 <= t*r^2
proof by induction on t:
  base:
    ||v[1]||^2 = 0                             by start
  step:
    ||v[t+2]||^2 = ||v[t+1] + s*z||^2          by update
                 = ||v[t+1]||^2 + 2*s*<v[t+1], z> + s^2*||z||^2
                 = ||v[t+1]||^2 + 2*s*<v[t+1], z> + ||z||^2
                 <= ||v[t+1]||^2 + ||z||^2     by mistake
                 <= t*r^2 + r^2                by ih, radius
                 = (t+1)*r^2
"""


def write(tmp_path, text: str, name: str = "b.proof") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def monitored(report) -> dict:
    return {m["lemma"]: m for m in report["monitored"]}


def test_seed_004_is_monitored_in_its_own_notation():
    X, y, _ = load_dataset("iris")
    res = run(X, y, proofs=[SEED_004])
    seen = monitored(res.monitor)
    for lemma in ("part1", "part1_norm", "part2", "part2_norm", "mistake_bound"):
        assert seen[lemma]["checks"] > 0 and seen[lemma]["violations"] == 0, lemma
    assert res.bounds.get("mistake_bound") is not None  # theta^(k+1) after k mistakes: k <= R^2/gamma^2
    assert res.mistakes <= res.bounds["mistake_bound"]


def test_renamed_lemmas_verify_and_are_monitored_like_the_library(tmp_path):
    path = write(tmp_path, RENAMED)
    report = Checker().check_file(path)
    assert report.error is None
    assert {l.name: l.status for l in report.lemmas} == {"progress": "verified",
                                                        "norm_growth": "verified"}
    X, y, _ = load_dataset("iris")
    mine = run(X, y, proofs=[path])
    library = run(X, y)
    seen, lib = monitored(mine.monitor), monitored(library.monitor)
    assert seen["progress"]["checks"] == lib["progress"]["checks"] > 0
    assert seen["norm_growth"]["checks"] == lib["norm_growth"]["checks"] > 0
    assert mine.monitor["not_monitorable"] == []


def test_a_renamed_lemma_catches_a_false_statement(tmp_path):
    # The same setting with a statement that is false on runs (an off-by-one in the index):
    # monitored with include_unverified, it is violated, which shows the binding is real.
    text = RENAMED.split("\nlemma")[0] + """
lemma too_strong: <u, v[t+1]> >= (t+1)*g
proof:
  <u, v[t+1]> >= (t+1)*g     xfail
"""
    path = write(tmp_path, text)
    X, y, _ = load_dataset("iris")
    res = run(X, y, proofs=[path], include_unverified=True, on_violation="collect")
    assert monitored(res.monitor)["too_strong"]["violations"] > 0


def test_a_wrong_binding_makes_lemmas_inapplicable_never_silently_true(tmp_path):
    # Binding the margin to the radius: the setting's margin assumption fails on the run, so
    # every lemma resting on it is reported not applicable instead of checked with wrong values.
    path = write(tmp_path, RENAMED.replace("g to margin, r to radius", "g to radius, r to margin"))
    X, y, _ = load_dataset("iris")
    res = run(X, y, proofs=[path], on_violation="collect")
    seen = monitored(res.monitor)
    assert seen["progress"]["applies"] is False and "margin" in seen["progress"]["inapplicable"]
    assert not res.monitor["violations"]


def test_unbound_symbols_are_reported_by_name(tmp_path):
    path = write(tmp_path, RENAMED.replace("  bind     t to updates, g to margin, r to radius\n",
                                           ""))
    mon = Monitor.from_lemmas(load_lemmas([str(path)]))
    reasons = dict(mon.not_monitorable)
    assert "no run quantity is bound to 't'" in reasons["progress"]
    assert "no run quantity is bound to" in reasons["norm_growth"]


def test_default_names_need_no_bind_line():
    X, y, _ = load_dataset("iris")
    res = run(X, y)
    assert monitored(res.monitor)["progress"]["checks"] > 0


@pytest.mark.parametrize("line, message, col", [
    ("bind q to margin", "unknown name 'q' in 'bind'", 8),
    ("bind g to speed", "'speed' is not a run quantity", 8),
    ("bind g to weights", "g is declared real but weights is a vector sequence", 8),
    ("bind v to weights", "v is a vector sequence: bind it with an index", 8),
    ("bind g[t] to margin[t]", "g is a real: bind it without an index", 8),
    ("bind v[t+1] to weights[j]", "expected the index t of the left side", 26),
    ("bind v[t+1] to weights", "'[t]' after weights", 25),
    ("bind v[t+x] to weights[t]", "the offset of a bound index is a whole number", 12),
    ("bind g to margin, g to radius", "g is bound twice", 21),
    ("bind g margin", "expected 'to'", 10),
])
def test_malformed_bind_lines_are_positioned_errors(tmp_path, line, message, col):
    text = RENAMED.replace("  bind     t to updates, g to margin, r to radius\n", "").replace(
        "  bind     v[t+1] to weights[t], u to separator, z to example, s to label\n",
        f"  {line}\n")
    path = write(tmp_path, text)
    report = Checker().check_file(path)
    err = report.error
    assert isinstance(err, ProofSyntaxError), report
    assert message in err.message
    assert (err.line, err.column) == (8, col), (err.line, err.column, err.message)


def test_bindings_never_change_what_the_kernel_verifies(tmp_path):
    bound = Checker().check_file(write(tmp_path, RENAMED, "bound.proof"))
    unbound = Checker().check_file(write(tmp_path, "\n".join(
        ln for ln in RENAMED.splitlines() if not ln.lstrip().startswith("bind")) + "\n",
        "unbound.proof"))
    assert [(l.name, l.status) for l in bound.lemmas] == \
        [(l.name, l.status) for l in unbound.lemmas]
    assert [s.status for s in bound.steps] == [s.status for s in unbound.steps]


def test_audit_uses_the_bindings(tmp_path):
    from novikoff.runtime import audit
    path = write(tmp_path, RENAMED)
    X, y, _ = load_dataset("iris")
    order, rows, w = [], [], np.zeros(X.shape[1])
    for _ in range(20):  # cyclic passes until one makes no update
        updated = False
        for i in range(len(y)):
            if y[i] * (w @ X[i]) <= 0:
                w = w + y[i] * X[i]
                updated = True
            order.append(i)
            rows.append(w.copy())
        if not updated:
            break
    report = audit(X, y, np.array(order), np.array(rows), proofs=[path])
    assert report.ok
    assert {m["lemma"] for m in report.monitor["monitored"]} >= {"progress", "norm_growth"}


def test_a_lemma_with_a_sum_is_not_monitored_and_says_why():
    lemmas = [l for l in load_lemmas([str(Path(__file__).resolve().parents[1] / "proofs" /
                                          "batch.proof")]) if l.name == "batch_progress"]
    mon = Monitor.from_lemmas(lemmas)
    (name, reason), = mon.not_monitorable
    assert name == "batch_progress" and "it has a sum" in reason and "#" not in reason
