"""The corpus files are judged by test_soundness.py against their `# expect:` headers; most are
false on purpose, so the novikoff pytest plugin must not collect them as proofs to certify."""

collect_ignore = ["cases"]
