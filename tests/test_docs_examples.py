"""The complete examples of the language reference and the guide (fenced as ```proof) verify as
printed, and each document shows sums, theorem application, vector equalities and proof by
contradiction with one of them."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from novikoff.checker import Checker
from novikoff.kernel import VectorEq

DOCS = Path(__file__).resolve().parents[1] / "docs"
DOCUMENTS = ["language.md", "writing-proofs.md"]
BLOCK = re.compile(r"^```proof\n(.*?)^```", re.M | re.S)


def _examples(name: str) -> list:
    return BLOCK.findall((DOCS / name).read_text(encoding="utf-8"))


EXAMPLES = [(name, i, text) for name in DOCUMENTS for i, text in enumerate(_examples(name))]


def _check(tmp_path: Path, text: str):
    path = tmp_path / "example.proof"
    path.write_text(text, encoding="utf-8")
    return Checker(timeout_ms=5000).check_file(path)


@pytest.mark.parametrize("name, index, text", EXAMPLES,
                         ids=[f"{name}#{i}" for name, i, _ in EXAMPLES])
def test_example_verifies_as_printed(tmp_path, name, index, text):
    report = _check(tmp_path, text)
    assert report.error is None, f"{name} example {index} does not load: {report.error}"
    assert report.lemmas, f"{name} example {index} has no lemma"
    failing = [f"{lemma.name}: {lemma.status} {lemma.reason}" for lemma in report.lemmas
               if lemma.status != "verified"]
    assert not failing, f"{name} example {index}:\n" + "\n".join(failing)


# What each topic looks like in an example's text (a vector equation is told by the kernel).
TOPICS = {
    "sums": lambda text, report: "sum(" in text,
    "theorem application": lambda text, report: re.search(r"\bby\b.*\w\[\w+ := ", text),
    "proof by contradiction": lambda text, report: "contradiction by" in text,
    "vector equalities": lambda text, report: any(
        isinstance(lemma.formula, VectorEq) for lemma in report.lemmas),
}


@pytest.mark.parametrize("name", DOCUMENTS)
def test_each_topic_has_a_complete_example(tmp_path, name):
    shown = set()
    for text in _examples(name):
        report = _check(tmp_path, text)
        shown |= {topic for topic, found in TOPICS.items() if found(text, report)}
    assert shown == set(TOPICS), f"{name} lacks a complete example of {set(TOPICS) - shown}"
