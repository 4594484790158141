"""The homework's submissions make typical mistakes on purpose: test_homework.py grades them, so
the novikoff pytest plugin must not collect them as proofs to certify."""

collect_ignore = ["assignment.proof", "proof"]
