"""pytest plugin: collect .proof files as test items, one per lemma.

Registered through the ``pytest11`` entry point; it imports novikoff only when a .proof file is
collected, so it costs nothing in projects without proofs.  Disable with ``-p no:novikoff``.
"""

from __future__ import annotations

import pytest


def pytest_collect_file(file_path, parent):
    if file_path.suffix == ".proof":
        return ProofFile.from_parent(parent, path=file_path)
    return None


class ProofFile(pytest.File):
    """A .proof file: checked once, then one item per lemma."""

    def collect(self):
        from novikoff.checker import Checker

        report = Checker().check_file(self.path)
        if report.error is not None:
            yield ProofItem.from_parent(self, name="<file>", report=report, lemma=None)
            return
        for lemma in report.lemmas:
            yield ProofItem.from_parent(self, name=lemma.name, report=report, lemma=lemma)


class ProofCheckFailed(Exception):
    """A lemma did not check: its message is the checker's."""


class ProofItem(pytest.Item):
    def __init__(self, *, report, lemma, **kwargs):
        super().__init__(**kwargs)
        self.report = report
        self.lemma = lemma

    def runtest(self):
        """Pass when the kernel certifies the lemma, xfail when it fails as marked, else fail."""
        if self.lemma is None:
            raise ProofCheckFailed(str(self.report.error))
        status = self.lemma.status  # 'verified' only when the kernel certifies the theorem
        if status == "verified":
            return
        if status == "expected_failure":
            pytest.xfail(self.lemma.reason or "fails as marked")
        lines = [f"{self.lemma.file}:{self.lemma.line}: lemma {self.lemma.name} is not "
                 f"verified: {self.lemma.reason}"]
        for s in self.lemma.steps:
            if s.ok:
                continue
            lines.append(f"{s.file}:{s.line}:{s.column}: {s.status}: {s.text}")
            if s.reason:
                lines.append(f"    why: {s.reason}")
            if s.counterexample:
                lines.append("    counterexample: " + ", ".join(
                    f"{k} = {v}" for k, v in s.counterexample.items()))
        raise ProofCheckFailed("\n".join(lines))

    def repr_failure(self, excinfo, style=None):
        if isinstance(excinfo.value, ProofCheckFailed):
            return str(excinfo.value)
        return super().repr_failure(excinfo, style=style)

    def reportinfo(self):
        line = 0 if self.lemma is None else self.lemma.line - 1
        return self.path, line, f"lemma {self.name}"
