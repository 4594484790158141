"""Witness runs: the bundled witnesses refute their claims, bad files are refused in one line,
the CLI's exit codes, and the replay is deterministic and exact."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from novikoff.cli import main
from novikoff.witness import CLAIMS, FORMAT, Outcome, WitnessError, check_witness
from novikoff.witness._find import dumps, find_witness

WITNESSES = Path(__file__).resolve().parents[1] / "proofs" / "seeds" / "witnesses"

BUNDLED = {
    "seed000_normalise.json": ("normalising-preserves-run",
                               ["[0, 1, 0, 0, 0, 0]", "normalised: [0, 1]", "update 3"]),
    "seed001_normalise_bound.json": ("normalising-preserves-run",
                                     ["epoch 38 clean", "normalised: [0, 1]", "update 3"]),
    "seed003_batch_stop.json": ("batch-stop-separates",
                                ["margins [2, 6]", "after 2 iterations", "1/4 < epsilon^2 = 1",
                                 "theta = (1/2, 2)", "example [0]"]),
    "seed000_dataset_td.json": ("hinge-bound-dataset-td",
                                ["M = 11", "TD over the data set = 13/10", "46/5 < M",
                                 "presented sequence = 13/2", "bound 30 >= M holds"]),
    "seed004_no_margin.json": ("converges-without-margin",
                               ["[0, 1, 0]", "w = (0, 0)", "2 mistakes in between",
                                "mistakes forever"]),
    "seed004_bias_only.json": ("converges-separable-with-bias",
                               ["b_star = -3", "[1, 1], all > 0", "w = (0, 0)",
                                "3 mistakes in between", "mistakes forever"]),
}


def write(tmp_path, obj, name="w.json") -> Path:
    path = tmp_path / name
    path.write_text(obj if isinstance(obj, str) else json.dumps(obj), encoding="utf-8")
    return path


def witness(claim, **fields):
    return {"format": FORMAT, "claim": claim, **fields}


# -- the bundled witnesses ---------------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(BUNDLED))
def test_bundled_witness_refutes_its_claim(name):
    claim, numbers = BUNDLED[name]
    o = check_witness(WITNESSES / name)
    assert isinstance(o, Outcome)
    assert o.refuted, o.summary
    assert o.claim == claim and o.statement == CLAIMS[claim]
    for text in numbers:
        assert text in o.summary, (text, o.summary)


def test_bundled_witnesses_cover_every_claim_and_are_small():
    files = sorted(WITNESSES.glob("*.json"))
    assert {f.name for f in files} == set(BUNDLED)
    assert {check_witness(f).claim for f in files} == set(CLAIMS)
    for f in files:
        obj = json.loads(f.read_text(encoding="utf-8"))
        assert 2 <= len(obj["X"]) <= 4 and 2 <= len(obj["X"][0]) <= 3
        assert isinstance(obj["note"], str) and obj["note"]


# -- runs that do not refute -------------------------------------------------------------------

NOT_REFUTED = {
    "unit rows: normalising changes nothing": witness(
        "normalising-preserves-run", X=[[1, 0], [0, -1], ["3/5", "4/5"]], y=[1, -1, -1],
        max_epochs=20),
    "one common scale (seed 004's true claim)": witness(
        "normalising-preserves-run", X=[[1, 0], [4, -3]], y=[1, -1], max_epochs=50,
        scales=["1/5", "1/5"]),
    "batch finds a separator": witness(
        "batch-stop-separates", X=[[1, 0], [0, 1]], y=[1, 1], w_star=[1, 1], alpha=1,
        epsilon="1/100", max_iterations=10),
    "batch does not stop within the bound": witness(
        "batch-stop-separates", X=[[1, 0], [3, 4]], y=[-1, 1], w_star=[-2, 3], alpha=1,
        epsilon="1/100", max_iterations=1),
    "hinge: separable with margin gamma": witness(
        "hinge-bound-dataset-td", X=[[1, 0], [0, -1]], y=[1, -1], w_star=["3/5", "4/5"],
        gamma="3/5", epochs=5),
    "margin 0 but converges": witness(
        "converges-without-margin", X=[[0, 1], [1, 0]], y=[1, 1], w_star=[1, 0],
        max_epochs=10),
    "separable through the origin too: converges": witness(
        "converges-separable-with-bias", X=[[1, 1], [-1, 2]], y=[1, -1], w_star=[1, -1],
        b_star=1, max_epochs=10),
    "margin 0, undecided within max_epochs": witness(
        "converges-without-margin", X=[[0, 2], [-1, -1], [0, -2]], y=[1, -1, 1],
        w_star=[1, 0], max_epochs=1),
}


@pytest.mark.parametrize("case", sorted(NOT_REFUTED))
def test_a_run_that_does_not_refute(case, tmp_path):
    o = check_witness(write(tmp_path, NOT_REFUTED[case]))
    assert not o.refuted, o.summary


def test_exact_comparison_decides_the_batch_stop(tmp_path):
    # At iteration 2, ||Delta||^2 = 1/4 exactly: it stops for epsilon = 1 but not for 1/2.
    obj = json.loads((WITNESSES / "seed003_batch_stop.json").read_text(encoding="utf-8"))
    assert check_witness(write(tmp_path, obj)).refuted
    o = check_witness(write(tmp_path, dict(obj, epsilon="1/2")))
    assert not o.refuted and "after 5 iterations" in o.summary, o.summary


def test_per_example_scales_refute_like_normalising(tmp_path):
    o = check_witness(write(tmp_path, witness(
        "normalising-preserves-run", X=[[1, 0], [4, -3]], y=[1, -1], max_epochs=50,
        scales=[1, "1/5"])))
    assert o.refuted and "scaled by [1, 1/5]" in o.summary


# -- bad files ---------------------------------------------------------------------------------

NORM = witness("normalising-preserves-run", X=[[3, 4], [1, 0]], y=[1, -1], max_epochs=10)
BATCH = witness("batch-stop-separates", X=[[1, 0], [3, 4]], y=[-1, 1], w_star=[-2, 3],
                alpha=1, epsilon=1, max_iterations=100)
HINGE = witness("hinge-bound-dataset-td", X=[[0, -1], [0, 1], [1, 0]], y=[-1, -1, 1],
                w_star=["3/5", "4/5"], gamma="1/2", epochs=5)
BIAS = witness("converges-separable-with-bias", X=[[2, -2], [1, -1]], y=[1, -1], w_star=[1, -1],
               b_star=-3, max_epochs=50)
NOMARGIN = witness("converges-without-margin", X=[[0, 2], [-1, -1], [0, -2]], y=[1, -1, 1],
                   w_star=[1, 0], max_epochs=50)


def _drop(obj, key):
    return {k: v for k, v in obj.items() if k != key}


BAD = [
    ("bad json", '{"format": "novikoff-witness/1",', "bad JSON"),
    ("not an object", "[1, 2]", "JSON object, not a list"),
    ("NaN", '{"format": "novikoff-witness/1", "x": NaN}', "NaN is not a number"),
    ("duplicate key", '{"format": "novikoff-witness/1", "format": "x"}',
     "duplicate field 'format'"),
    ("missing format", _drop(NORM, "format"), "missing field 'format'"),
    ("wrong format", dict(NORM, format="novikoff-witness/9"), "is not 'novikoff-witness/1'"),
    ("unknown claim", dict(NORM, claim="perceptron-is-magic"), "unknown claim kind"),
    ("missing parameter", _drop(NORM, "max_epochs"), "missing field 'max_epochs'"),
    ("unknown field", dict(NORM, gama=1), "unknown field 'gama'"),
    ("empty X", dict(NORM, X=[], y=[]), "X must be a non-empty list"),
    ("ragged rows", dict(NORM, X=[[3, 4], [1, 0, 0]]), "ragged rows: X[1] has 3"),
    ("float entry", dict(NORM, X=[[3, 4], [0.5, 0]]), "X[1][0]: 0.5 is a JSON float"),
    ("not a rational", dict(NORM, X=[[3, 4], ["1.5", 0]]), "'1.5' is not an exact rational"),
    ("zero denominator", dict(NORM, X=[[3, 4], ["1/0", 0]]), "zero denominator"),
    ("boolean entry", dict(NORM, X=[[3, 4], [True, 0]]), "X[1][0]: true is a boolean"),
    ("zero row", dict(NORM, X=[[3, 4], [0, 0]]), "X[1] is the zero vector"),
    ("label not +-1", dict(NORM, y=[1, 2]), "y[1]: labels must be the integers 1 or -1"),
    ("label as float", dict(NORM, y=[1, -1.0]), "y[1]: labels must be"),
    ("too few labels", dict(NORM, y=[1]), "y has 1 labels for 2 rows"),
    ("order out of range", dict(NORM, order=[0, 1, 2]), "order[2] = 2 is out of range"),
    ("order misses an example", dict(NORM, order=[0, 0]), "never visits example 1"),
    ("max_epochs zero", dict(NORM, max_epochs=0), "max_epochs must be between 1"),
    ("max_epochs not int", dict(NORM, max_epochs="5"), "max_epochs: expected a positive"),
    ("irrational norm", dict(NORM, X=[[1, 1], [1, 0]]), "||X[0]||^2 = 2 is not the square"),
    ("scales not positive", dict(NORM, scales=[1, 0]), "scales[1] must be > 0"),
    ("separator fails", dict(BATCH, w_star=[2, -3]), "w_star does not separate the data"),
    ("w_star wrong length", dict(BATCH, w_star=[1, 2, 3]), "w_star has 3 entries"),
    ("alpha not positive", dict(BATCH, alpha="-1/2"), "alpha must be > 0, got -1/2"),
    ("epsilon zero", dict(BATCH, epsilon=0), "epsilon must be > 0"),
    ("w_star not unit", dict(HINGE, w_star=[3, 4]), "||w_star||^2 = 25"),
    ("example too long", dict(HINGE, X=[[0, -1], [0, 2], [1, 0]]), "||X[1]||^2 = 4 > 1"),
    ("gamma zero", dict(HINGE, gamma=0), "gamma must be > 0"),
    ("positive margin", dict(NOMARGIN, X=[[1, 2], [-1, -1], [1, -2]]),
     "separates with positive margin 1"),
    ("negative margin", dict(NOMARGIN, w_star=[-1, 0]), "w_star does not separate"),
    ("boundary labelled -1", dict(NOMARGIN, y=[-1, -1, 1]), "X[0] lies on w_star's boundary"),
    ("zero separator", dict(NOMARGIN, w_star=[0, 0]), "w_star is the zero vector"),
    ("run too long", dict(NOMARGIN, max_epochs=100_000, order=[0, 1, 2] * 10),
     "at most 1000000"),
    ("affine boundary fails", dict(BIAS, b_star=-1), "w_star, b_star do not separate"),
    ("affine boundary touches", dict(BIAS, b_star=-2),
     "y[1]*(<w_star, X[1]> + b_star) = 0 <= 0"),
    ("bias missing", _drop(BIAS, "b_star"), "missing field 'b_star'"),
    ("bias a float", dict(BIAS, b_star=-3.0), "b_star: -3.0 is a JSON float"),
    ("note not a string", dict(NORM, note=3), "note must be a string"),
    # Within the visit cap but 300-dimensional: exact dot products for minutes, once a hang.
    ("run too wide", dict(NORM, X=[[1] + [0] * 299, [1] + [0] * 299], y=[1, -1],
                          max_epochs=100_000, order=[0, 1] * 5),
     "at most 2,000,000 visits x words"),
    # Two examples, two dimensions, but distinct 200-digit denominators: the weights' entries have
    # the lcm of the column's denominators, and every visit was a gcd of thousands of digits.
    ("run of huge fractions", dict(NORM, X=[[f"1/{10**199 + 7}", "0"], [f"1/{10**199 + 9}", "0"],
                                            [f"1/{10**199 + 11}", "0"]], y=[1, -1, 1],
                                   max_epochs=100_000, order=[0, 1, 2]),
     "whose entries take more than 6 64-bit words"),
    # Small rows scaled by 1,000 scales of 200 digits: the scaled run's entries count too.
    ("scales of huge fractions", dict(NORM, X=[[1, 1]] * 1000, y=[1, -1] * 500, max_epochs=1,
                                      scales=[f"{10**199 + 2 * i + 1}/{10**199 + 2 * i}"
                                              for i in range(1000)]),
     "at most 2,000,000 visits x words"),
]


@pytest.mark.parametrize("content,message", [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_bad_file_is_refused_in_one_line(content, message, tmp_path):
    path = write(tmp_path, content)
    with pytest.raises(WitnessError) as info:
        check_witness(path)
    text = str(info.value)
    assert message in text, text
    assert text.startswith(str(path)) and "\n" not in text


def test_unreadable_files(tmp_path):
    with pytest.raises(WitnessError, match="cannot read"):
        check_witness(tmp_path / "missing.json")
    path = tmp_path / "latin1.json"
    path.write_bytes(b'{"note": "caf\xe9"}')
    with pytest.raises(WitnessError, match="not UTF-8"):
        check_witness(path)


# -- the command line --------------------------------------------------------------------------

def test_cli_check_exit_codes(tmp_path, capsys):
    good = [str(WITNESSES / n) for n in sorted(BUNDLED)]
    assert main(["witness", "check", *good]) == 0
    assert capsys.readouterr().out.count("REFUTED") == len(good)
    weak = str(write(tmp_path, NOT_REFUTED["unit rows: normalising changes nothing"], "u.json"))
    assert main(["witness", "check", good[0], weak]) == 1
    assert "not refuted" in capsys.readouterr().out
    bad = str(write(tmp_path, "{", "bad.json"))
    assert main(["witness", "check", good[0], weak, bad]) == 2
    err = capsys.readouterr().err
    assert "bad.json: bad JSON" in err and "Traceback" not in err
    assert main(["witness"]) == 2


def test_cli_find_writes_a_refuting_witness(tmp_path, capsys):
    out = tmp_path / "found.json"
    assert main(["witness", "find", "converges-without-margin", "-o", str(out),
                 "--seed", "3"]) == 0
    assert "REFUTED" in capsys.readouterr().out
    assert check_witness(out).refuted
    assert main(["witness", "check", str(out)]) == 0
    assert main(["witness", "find", "batch-stop-separates", "-o",
                 str(tmp_path / "no" / "dir.json")]) == 2
    with pytest.raises(SystemExit) as info:
        main(["witness", "find", "no-such-claim", "-o", str(out)])
    assert info.value.code == 2


# -- properties: a found witness replays deterministically and exactly --------------------------

def _scaled(obj, c, keys=("X",)):
    def mul(v):
        return [mul(a) for a in v] if isinstance(v, list) else c * Fraction(v)
    return dict(obj, **{k: mul(obj[k]) for k in keys})


@given(kind=st.sampled_from(sorted(CLAIMS)), seed=st.integers(0, 10 ** 6),
       c=st.fractions(min_value=Fraction(1, 50), max_value=50).filter(lambda q: q > 0),
       c2=st.fractions(min_value=Fraction(1, 50), max_value=50).filter(lambda q: q > 0))
def test_found_witness_is_deterministic_and_exact(kind, seed, c, c2, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("w")
    obj, found = find_witness(kind, seed=seed)
    assert found.refuted
    path = tmp / "found.json"
    path.write_text(dumps(obj), encoding="utf-8")
    first, second = check_witness(path), check_witness(path)
    assert first == second == found
    assert find_witness(kind, seed=seed)[0] == obj
    if kind == "normalising-preserves-run":
        # Scaling the raw data scales the raw run; the normalised data do not change.
        scaled = _scaled(obj, c)
        assert check_witness(write(tmp, dumps(scaled), "s.json")) == first
    elif kind == "batch-stop-separates":
        # X and epsilon by c: Delta and theta scale by c; alpha by c2: theta scales by c2.
        scaled = _scaled(_scaled(obj, c, ("X", "epsilon")), c2, ("alpha", "w_star"))
        assert check_witness(write(tmp, dumps(scaled), "s.json")).refuted
    elif kind == "converges-without-margin":
        scaled = _scaled(_scaled(obj, c), c2, ("w_star",))
        assert check_witness(write(tmp, dumps(scaled), "s.json")).refuted
    elif kind == "converges-separable-with-bias":
        # X by c scales the run; (w_star, b_star) by (c2, c*c2) keeps the affine separator.
        scaled = dict(_scaled(_scaled(obj, c), c2, ("w_star",)),
                      b_star=c * c2 * Fraction(obj["b_star"]))
        assert check_witness(write(tmp, dumps(scaled), "s.json")).refuted
    else:
        # The bound with TD over the presented sequence is a theorem: it holds for any count.
        for epochs in (1, 2, 7):
            o = check_witness(write(tmp, dumps(dict(obj, epochs=epochs)), "e.json"))
            assert o.summary.endswith(">= M holds"), o.summary
