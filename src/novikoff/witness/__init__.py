"""Witness runs: small data sets whose exact replay refutes a claim about what a perceptron does.

Some sentences in lecture notes are claims about runs, not algebra ("scaling x_i does not change
what the perceptron does"), and some are false.  A witness is a JSON file holding a few examples
and the run's parameters, all exact; ``check_witness`` replays the run in rational arithmetic
(fractions.Fraction, never floats) and says whether it exhibits the behaviour that contradicts
the claim.

File format ``novikoff-witness/1`` (a JSON object; see docs/witness.md)::

    {
      "format": "novikoff-witness/1",
      "claim": "normalising-preserves-run",          # a key of CLAIMS
      "note": "one sentence: what the run shows",   # optional
      "X": [[3, 4], [1, 0], ["-1/2", 0]],           # rows: integers or strings "p" / "p/q"
      "y": [1, -1, 1],                              # labels: the integers 1 or -1
      ...                                           # the claim's parameters, below
    }

Numbers are exact: JSON integers, or strings "3", "-1/2".  JSON floats, booleans, NaN, duplicate
keys and unknown fields are refused.  X is non-empty and rectangular, and no row is zero.  An
``order`` lists the example indices of one pass (repeats allowed, every example at least once;
default 0..n-1).  Bounds (max_epochs, epochs, max_iterations) are integers in 1..100000.

Claim kinds and their parameters (the replays are in ``_replay.py``):

``normalising-preserves-run``: max_epochs; optional order, scales.  The classic perceptron
(w = 0; on each visit, if y<w, x> <= 0 then w += y x; passes until a clean pass or max_epochs) on
the raw rows and on the rows divided by their norms (each norm must be rational), or multiplied
by the given positive ``scales``.  Refuted when the updates differ or the final weights
misclassify different examples.

``batch-stop-separates``: w_star, alpha, epsilon, max_iterations.  The batch perceptron of
seed 003 (theta = 0; Delta = sum of y_i x_i over y_i<x_i, theta> <= 0, divided by n; theta +=
alpha Delta; until ||Delta||^2 < epsilon^2).  w_star must separate (y_i<w_star, x_i> > 0).
Refuted when the loop stops at a theta that misclassifies an example (y_i<x_i, theta> <= 0).

``hinge-bound-dataset-td``: w_star (||w_star|| = 1 exactly), gamma, epochs; optional order.
|x_i| <= 1 is checked.  Exactly ``epochs`` passes of the classic perceptron; refuted when the
mistakes M exceed 1/gamma^2 + 2 TD/gamma with TD = sum over the data set of max(0, gamma -
y_i<w_star, x_i>).  The summary also gives TD over the presented sequence, and the bound with it
(the one the proof supports), which holds.

``converges-without-margin``: w_star, max_epochs; optional order.  w_star must separate with
margin 0: y_i<w_star, x_i> >= 0 for all i, = 0 for some, and every example on the boundary is
labelled +1 (so sign(<w_star, x>) with sign(0) = +1 classifies every example).  Refuted when the
classic perceptron reaches the same (weights, position in the order) twice with a mistake in
between: it then makes mistakes forever.

``converges-separable-with-bias``: w_star, b_star, max_epochs; optional order.  The boundary
<w_star, x> + b_star = 0 must separate: y_i(<w_star, x_i> + b_star) > 0 for all i.  The classic
perceptron runs without a bias term (through the origin), as lecture notes often state it;
refuted as above, when it makes mistakes forever.
"""

from __future__ import annotations

from pathlib import Path

from ._read import FORMAT, WitnessError, read_json
from ._replay import CLAIMS, Outcome, outcome

__all__ = ["CLAIMS", "FORMAT", "Outcome", "WitnessError", "check_witness"]


def check_witness(path: Path) -> Outcome:
    """Replay the witness file ``path`` exactly; WitnessError (one line, naming the file) if bad."""
    try:
        return outcome(read_json(path))
    except WitnessError as err:
        raise WitnessError(f"{path}: {err}") from None
