"""The HTML report of a run: standalone, escaped, with the lemmas and the figures."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from novikoff.errors import InvalidArgument
from novikoff.report.run_report import write_run_report
from novikoff.runtime import Lemma, load_dataset, run

pytest.importorskip("matplotlib")


@pytest.fixture(scope="module")
def iris_run():
    X, y, _ = load_dataset("iris")
    return X, y, run(X, y)


def test_the_report_is_a_standalone_page_with_lemmas_and_figures(tmp_path, iris_run):
    X, y, res = iris_run
    path = write_run_report(X, y, res, tmp_path / "out", data="iris")
    text = path.read_text(encoding="utf-8")
    ET.fromstring(text.split("\n", 1)[1])  # XHTML-compatible after the doctype
    assert path.name == "run.html" and "<script" not in text
    assert 'src="http' not in text and 'href="http' not in text  # nothing fetched
    assert "No violation" in text and "<svg" in text
    for m in res.monitor["monitored"]:
        assert f"<code>{m['lemma']}</code>" in text
    assert "not applicable" in text  # the margin perceptron's unit-data lemmas on iris


def test_a_violation_is_reported_first(tmp_path):
    import sympy as sp

    from novikoff.kernel import Relation
    X, y, _ = load_dataset("iris")
    k = sp.Symbol("k", real=True)
    false = Lemma("too_few_updates", Relation("<=", k, sp.Integer(2)))
    res = run(X, y, lemmas=[false], include_unverified=True, on_violation="collect")
    text = write_run_report(X, y, res, tmp_path).read_text(encoding="utf-8")
    assert "violation(s)" in text and text.index("violation(s)") < text.index("<table")


def test_names_from_proof_files_are_escaped(tmp_path, iris_run):
    X, y, res = iris_run
    res.monitor["monitored"][0]["lemma"] = "<script>alert(1)</script>"
    path = write_run_report(X, y, res, tmp_path, data="<img src=x onerror=alert(1)>")
    text = path.read_text(encoding="utf-8")
    assert "<script>" not in text and "<img" not in text


def test_a_run_without_checks_has_nothing_to_report(tmp_path):
    X, y, _ = load_dataset("iris")
    res = run(X, y, checks=False)
    with pytest.raises(InvalidArgument, match="checks off"):
        write_run_report(X, y, res, tmp_path)


def test_an_unwritable_directory_is_named(tmp_path, iris_run):
    X, y, res = iris_run
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(InvalidArgument, match="report="):
        write_run_report(X, y, res, blocker / "sub")
