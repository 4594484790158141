"""`novikoff run | audit | replay`: output, JSON, exit codes 0/1/2, one-line errors."""

from __future__ import annotations

import json
import textwrap

import numpy as np
import pytest


from helpers import cli  # noqa: E402  (tests/ is on sys.path)
from test_runtime_audit import textbook_trace  # noqa: E402
from test_runtime_engine import PERCEPTRON, separable  # noqa: E402


@pytest.fixture
def data(tmp_path):
    X, y, ws = separable(120, 4, 0.1, seed=1, unit=False)
    np.savez(tmp_path / "d.npz", X=X, y=y)
    np.save(tmp_path / "ws.npy", ws)
    return tmp_path, X, y, ws


def test_run_npz(data, capsys):
    tmp, X, y, ws = data
    code, out, err = cli(["run", str(tmp / "d.npz"), "--w-star", str(tmp / "ws.npy")], capsys)
    assert code == 0, err
    for word in ("mistakes", "bound", "ratio", "gamma", "R ", "invariant checks",
                 "mistake_bound", "converged"):
        assert word in out
    # the lemmas about quantities no engine keeps are counted in one line, listed with -v
    code, js, _ = cli(["run", str(tmp / "d.npz"), "--w-star", str(tmp / "ws.npy"), "--json"],
                      capsys)
    unbound = [m for m in json.loads(js)["monitor"]["not_monitorable"]
               if "no run quantity is bound to" in m["reason"]]
    assert any(m["lemma"] == "distance_to_hyperplane" for m in unbound)
    assert "distance_to_hyperplane" not in out
    assert (f"  not monitored   {len(unbound)} lemmas whose symbols are not run quantities "
            f"(--verbose lists them)\n") in out
    for flag in ("-v", "--verbose"):
        code, verbose, _ = cli(["run", str(tmp / "d.npz"), "--w-star", str(tmp / "ws.npy"),
                                flag], capsys)
        assert code == 0
        assert "not monitored   distance_to_hyperplane: no run quantity is bound to 'z'" in \
            verbose
        assert "whose symbols are not run quantities" not in verbose
        # and so are those about batch steps (--variant batch), counted in a line of their own
        assert verbose.count("  not monitored   ") == len(
            json.loads(js)["monitor"]["not_monitorable"])


def test_run_lists_lemmas_not_monitored_for_another_reason(tmp_path, capsys):
    """Only the lemmas about other quantities (and unverified ones) are summarised: a lemma the
    run cannot bind for another reason (here an index k+2) is always listed."""
    proof = tmp_path / "extra.proof"
    proof.write_text(PERCEPTRON + textwrap.dedent("""
        lemma two_ahead: <w_star, w[k+2]> >= 0
        proof:
          <w_star, w[k+2]> >= 0
        """), encoding="utf-8")
    X, y, ws = separable(40, 3, 0.1, seed=3, unit=False)
    np.savez(tmp_path / "d.npz", X=X, y=y)
    args = ["run", str(tmp_path / "d.npz"), "--proofs", str(proof)]
    code, out, _ = cli(args, capsys)
    assert code == 0 and "  not monitored   1 lemma not verified (--verbose lists them)" in out
    code, out, _ = cli(args + ["-v"], capsys)
    assert "  not monitored   two_ahead: not verified" in out
    code, out, _ = cli(args + ["--include-unverified"], capsys)
    assert code == 0
    assert "  not monitored   two_ahead: index k + 2: only 0, k and k+1 are bound" in out
    code, out, _ = cli(args + ["--include-unverified", "--json"], capsys)
    assert [m["lemma"] for m in json.loads(out)["monitor"]["not_monitorable"]] == ["two_ahead"]


def test_run_json(data, capsys):
    tmp, X, y, ws = data
    code, out, _ = cli(["run", str(tmp / "d.npz"), "--json", "--order", "random:3"], capsys)
    doc = json.loads(out)
    assert code == 0 and doc["violations"] == [] and doc["n"] == 120
    assert doc["mistakes"] <= doc["bound"] and doc["checks"] > 0 and doc["gamma"] > 0
    assert 0 < doc["ratio"] <= 1


def test_run_csv_with_header_and_margin_variant(tmp_path, capsys):
    X, y, ws = separable(80, 3, 0.2, seed=2)
    path = tmp_path / "d.csv"
    np.savetxt(path, np.hstack([X, y[:, None]]), delimiter=",", header="a,b,c,label",
               comments="")
    code, out, err = cli(["run", str(path), "--variant", "margin", "--gamma", "0.05",
                          "--json"], capsys)
    assert code == 0, err
    assert json.loads(out)["variant"] == "margin"


def test_run_bundled_dataset(capsys):
    pytest.importorskip("sklearn")
    code, out, err = cli(["run", "iris"], capsys)
    assert code == 0, err
    assert "iris: 150 examples" in out


def test_run_non_separable(capsys):
    pytest.importorskip("sklearn")
    code, out, err = cli(["run", "breast_cancer", "--normalize", "--non-separable",
                          "--max-epochs", "3", "--json"], capsys)
    doc = json.loads(out)
    assert code == 0, err
    assert doc["bounds"]["hinge_bound"] >= doc["mistakes"] and doc["td"] > 0


@pytest.mark.parametrize("argv, message", [
    (["run", "nowhere.npz"], "data='nowhere.npz' is not a readable .npz file"),
    (["run", "mnist"], "data='mnist' is not an .npz or .csv file nor a bundled dataset"),
    (["run", "{d}", "--gamma", "-2"], "gamma=-2.0 is not a positive finite number"),
    (["run", "{bad}"], "y[0]=0.0 is not a label in {-1, +1}"),
    (["run", "{d}", "--order", "random:x"], "order='random:x': the seed is not an integer"),
    (["audit", "--data", "{d}", "--trace", "{d}"], "trace="),
    (["replay", "{d}"], "has no array 'order'"),
    (["run", "{d}", "--proofs", "nope.proof"], "nope.proof' is not a file"),
])
def test_bad_input_exits_2_with_one_line(data, capsys, argv, message):
    tmp, X, y, ws = data
    np.savez(tmp / "bad.npz", X=X, y=np.zeros(len(y)))
    argv = [a.format(d=tmp / "d.npz", bad=tmp / "bad.npz") for a in argv]
    code, out, err = cli(argv, capsys)
    assert code == 2
    assert err.startswith("novikoff: error: ") and err.count("\n") == 1
    assert message in err and "Traceback" not in err


def test_violation_exit_1_save_and_replay(tmp_path, capsys):
    proof = tmp_path / "wrong.proof"
    proof.write_text(PERCEPTRON + textwrap.dedent("""
        lemma too_fast: ||w[k]||^2 <= k*R^2/4
        proof:
          ||w[k]||^2 <= k*R^2/4
        """), encoding="utf-8")
    X, y, ws = separable(60, 3, 0.1, seed=3, unit=False)
    np.savez(tmp_path / "d.npz", X=X, y=y)
    run_file = tmp_path / "run.npz"
    code, out, _ = cli(["run", str(tmp_path / "d.npz"), "--proofs", str(proof),
                        "--include-unverified", "--save", str(run_file), "--json"], capsys)
    doc = json.loads(out)
    assert code == 1 and doc["violations"][0]["lemma"] == "too_fast"
    assert doc["saved"] == str(run_file) and run_file.exists()
    code, out, _ = cli(["replay", str(run_file), "--json"], capsys)
    rep = json.loads(out)
    assert code == 1 and rep["verdict"].startswith("real")
    code, out, _ = cli(["replay", str(run_file)], capsys)
    assert code == 1 and "verdict: real" in out


def test_audit_cli(tmp_path, capsys):
    X, y, ws = separable(50, 3, 0.1, seed=4, unit=False)
    order = np.tile(np.arange(50), 2)
    np.savez(tmp_path / "d.npz", X=X, y=y)
    np.save(tmp_path / "ws.npy", ws)
    np.savez(tmp_path / "ok.npz", order=order, w=textbook_trace(X, y, order))
    np.savez(tmp_path / "bug.npz", order=order,
             w=textbook_trace(X, y, order, step=lambda w, x, yi: w + x))
    base = ["audit", "--data", str(tmp_path / "d.npz"), "--w-star", str(tmp_path / "ws.npy")]
    code, out, _ = cli(base + ["--trace", str(tmp_path / "ok.npz")], capsys)
    assert code == 0 and "0 violation(s) of the update rule" in out
    code, out, _ = cli(base + ["--trace", str(tmp_path / "bug.npz"), "--json"], capsys)
    doc = json.loads(out)
    assert code == 1 and doc["rule_violations"] > 0
    v = doc["violations"][0]
    assert set(v) >= {"kind", "lemma", "visit", "k", "message"} and v["kind"] == "rule"


def test_audit_cli_non_separable_with_a_reported_td(tmp_path, capsys):
    from test_runtime_audit import nonseparable_unit, reported_td
    X, y, ws = nonseparable_unit()
    order = np.tile(np.arange(X.shape[0]), 2)
    W = textbook_trace(X, y, order)
    td = reported_td(X, y, ws, 0.1, order)
    np.savez(tmp_path / "d.npz", X=X, y=y)
    np.save(tmp_path / "ws.npy", ws)
    np.savez(tmp_path / "ok.npz", order=order, w=W, td=td)
    np.savez(tmp_path / "slip.npz", order=order, w=W, td=td * 1.5)
    np.savez(tmp_path / "short.npz", order=order, w=W, td=td[:3])
    base = ["audit", "--data", str(tmp_path / "d.npz"), "--w-star", str(tmp_path / "ws.npy"),
            "--gamma", "0.1"]
    code, out, _ = cli(base + ["--trace", str(tmp_path / "ok.npz")], capsys)
    assert code == 2 and "does not separate" in out + _
    code, out, _ = cli(base + ["--non-separable", "--trace", str(tmp_path / "ok.npz")], capsys)
    assert code == 0 and "0 violation(s) of the update rule" in out
    code, out, _ = cli(base + ["--non-separable", "--json", "--trace",
                               str(tmp_path / "slip.npz")], capsys)
    doc = json.loads(out)
    assert code == 1 and doc["td_violations"] > 0 and not doc["separable"]
    assert doc["violations"][0]["kind"] == "td"
    code, out, err = cli(base + ["--non-separable", "--trace", str(tmp_path / "short.npz")],
                         capsys)
    assert code == 2 and "td: shape (3,)" in out + err


def test_progress_is_printed_to_a_log_when_asked(tmp_path, monkeypatch, capsys):
    # --progress: progress lines on stderr even when it is not a terminal (a line every 2 s).
    import novikoff.runtime.cli as rcli

    clock = iter(float(t) for t in range(0, 1000, 3))
    monkeypatch.setattr(rcli.time, "perf_counter", lambda: next(clock))
    progress = rcli._Progress(True, forced=True)
    progress(100, 5, 1)
    progress.phase("separator: solve", 0.5)
    progress.done()
    err = capsys.readouterr().err.splitlines()
    assert err == [line for line in err if line.startswith("  ")]
    assert any("epoch 1  visits 100  mistakes 5" in line for line in err)
    assert any("separator: solve 50%" in line for line in err)
    quiet = rcli._Progress(True, forced=False)  # stderr is not a terminal here
    quiet(100, 5, 1)
    assert capsys.readouterr().err == ""


def test_run_plot_and_report(data, capsys):
    pytest.importorskip("matplotlib")
    tmp, X, y, ws = data
    code, out, err = cli(["run", str(tmp / "d.npz"), "--plot", str(tmp / "run.svg"),
                          "--report", str(tmp / "rep"), "--json"], capsys)
    assert code == 0, err
    json.loads(out)  # the messages go to stderr: stdout stays one JSON document
    assert (tmp / "run.svg").read_text().count("<svg") == 1
    assert "<svg" in (tmp / "rep" / "run.html").read_text()
    assert "plot written to" in err and "report written to" in err


@pytest.mark.parametrize("flag, value, message", [
    ("--plot", "run.gif", "the file name must end in .png, .svg, .pdf"),
    ("--report", "file/sub", "--report"),
])
def test_run_refuses_a_figure_it_cannot_write_before_running(data, capsys, flag, value, message):
    tmp, X, y, ws = data
    (tmp / "file").write_text("not a directory")
    code, out, err = cli(["run", str(tmp / "d.npz"), flag, str(tmp / value)], capsys)
    assert code == 2 and message in err and out == ""


@pytest.mark.parametrize("flag", [["--save", "k.npz"], ["--exact"], ["--plot", "k.png"]])
def test_kernel_runs_refuse_what_needs_input_space_weights(data, capsys, flag):
    tmp, X, y, ws = data
    code, out, err = cli(["run", str(tmp / "d.npz"), "--variant", "kernel", "--kernel",
                          "rbf:0.5"] + flag, capsys)
    assert code == 2 and "kernel perceptron" in err and out == ""


def test_kernel_run_takes_dual_coefficients_as_w_star(data, capsys):
    tmp, X, y, ws = data
    np.save(tmp / "beta.npy", y * 1.0)  # beta_j = y_j: w* = sum_j y_j x_j (linear kernel)
    code, out, err = cli(["run", str(tmp / "d.npz"), "--variant", "kernel", "--w-star",
                          str(tmp / "beta.npy"), "--json"], capsys)
    if code == 0:
        doc = json.loads(out)
        assert doc["checks"] > 0 and doc["variant"] == "kernel"
    else:  # that beta need not separate the data: then a one-line refusal naming it
        assert code == 2 and "w_star" in err
    code, out, err = cli(["run", str(tmp / "d.npz"), "--variant", "kernel", "--w-star",
                          str(tmp / "ws.npy")], capsys)
    assert code == 2 and "w_star" in err  # d entries, not n dual coefficients


def test_plot_of_a_run_with_a_learning_rate_and_a_start(data, capsys):
    pytest.importorskip("matplotlib")
    tmp, X, y, ws = data
    np.save(tmp / "w0.npy", np.linspace(-1, 1, X.shape[1]))
    code, out, err = cli(["run", str(tmp / "d.npz"), "--eta", "0.5", "--w0", str(tmp / "w0.npy"),
                          "--plot", str(tmp / "run.png"), "--report", str(tmp / "rep")], capsys)
    assert code == 0, err
    assert (tmp / "run.png").stat().st_size > 5000 and "<svg" in (tmp / "rep" / "run.html").read_text()


# ------------------------------------------------------------------ bad options, before the run

def _usage_error(argv, capsys) -> str:
    from novikoff.cli import main
    with pytest.raises(SystemExit) as exc:
        main(argv)
    err = capsys.readouterr().err
    assert exc.value.code == 2 and err.count("\n") == 1 and "Traceback" not in err, err
    assert err.startswith("novikoff: error: ")
    return err


@pytest.mark.parametrize("argv, said", [
    (["run", "iris", "--max-epochs", "x"], "argument --max-epochs: invalid int value: 'x'"),
    (["run", "iris", "--variant", "nope"], "argument --variant: invalid choice: 'nope'"),
    (["audit", "--data", "iris"], "the following arguments are required: --trace"),
    (["run", "iris", "--kernel", ""], "argument --kernel: '' is empty"),
    (["run", "iris", "--variant", "kernel", "--kernel", " "], "argument --kernel: ' ' is empty"),
    (["audit", "--data", "iris", "--trace", "t.npz", "--kernel", ""],
     "argument --kernel: '' is empty"),
])
def test_a_usage_error_is_one_line(argv, said, capsys):
    err = _usage_error(argv, capsys)
    assert said in err and "--help` lists the options" in err


@pytest.mark.parametrize("option", ["--save", "--plot"])
def test_an_output_into_a_missing_folder_is_refused_before_the_run(option, tmp_path, capsys):
    path = tmp_path / "no" / "such" / ("r.npz" if option == "--save" else "p.svg")
    code, out, err = cli(["run", "iris", option, str(path)], capsys)
    assert code == 2 and out == "" and err.count("\n") == 1, err
    assert err.startswith(f"novikoff: error: {option} {path}: no such folder")
    (tmp_path / "file").write_text("x")
    code, out, err = cli(["run", "iris", option, str(tmp_path / "file" / "r.npz")], capsys)
    assert code == 2 and "is not a folder" in err and out == ""


def test_fuzz_dir_that_is_a_file_is_refused_before_the_campaign(tmp_path, capsys):
    (tmp_path / "FILE").write_text("x")
    code, out, err = cli(["fuzz", "--dir", str(tmp_path / "FILE")], capsys)
    assert code == 2 and out == "" and err == f"novikoff: error: --dir {tmp_path / 'FILE'}: " \
                                              f"not a directory\n", err


def test_replay_names_the_run_file_not_a_temporary_copy(data, capsys):
    tmp, X, y, ws = data
    proof = tmp / "mine.proof"
    proof.write_text(PERCEPTRON + textwrap.dedent("""
        lemma too_fast: ||w[k]||^2 <= k*R^2/4
        proof:
          ||w[k]||^2 <= k*R^2/4
        """), encoding="utf-8")
    run_file = tmp / "run.npz"
    code, _, _ = cli(["run", str(tmp / "d.npz"), "--proofs", str(proof),
                      "--include-unverified", "--save", str(run_file)], capsys)
    assert code == 1
    code, out, err = cli(["replay", str(run_file)], capsys)
    assert code == 1 and f"{run_file}[mine.proof]:" in out, out + err
    assert "novikoff-replay-" not in out + err
    code, out, _ = cli(["replay", str(run_file), "--json"], capsys)
    assert "novikoff-replay-" not in out and f"{run_file}[mine.proof]:" in out


def test_plot_and_report_draw_a_run_from_its_start_as_documented(data, capsys):
    pytest.importorskip("matplotlib")
    from pathlib import Path
    tmp, X, y, ws = data
    np.save(tmp / "w0.npy", np.full(X.shape[1], 0.25))
    code, _, err = cli(["run", str(tmp / "d.npz"), "--w0", str(tmp / "w0.npy"), "--plot",
                        str(tmp / "p.svg"), "--report", str(tmp / "rep")], capsys)
    assert code == 0 and (tmp / "p.svg").stat().st_size > 0, err
    assert (tmp / "rep" / "run.html").exists()
    docs = (Path(__file__).parents[1] / "docs" / "runtime-howto.md").read_text(encoding="utf-8")
    assert "refuse `--w0`" not in docs and "`--plot` and `--report` draw\na run with `--w0`" \
        in docs
