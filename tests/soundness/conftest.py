"""The corpus files are judged by test_soundness.py against their `# expect:` headers; most are
false on purpose, so the novikoff pytest plugin must not collect them as proofs to certify."""

import pytest

from novikoff.kernel.certified import LEDGER

collect_ignore = ["cases"]


@pytest.fixture
def clean_ledger():
    """The ledger is process-wide: a test that uses this starts and ends with an empty one."""
    def reset():
        LEDGER.store, LEDGER.used, LEDGER.refused = {}, {}, {}
        LEDGER.recording, LEDGER.pending, LEDGER.labels = False, {}, {}
        LEDGER.statements, LEDGER.satisfiable = {}, {}
        LEDGER.required, LEDGER.searcher = False, None
    reset()
    yield
    reset()
