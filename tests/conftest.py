"""Hypothesis profiles for the test suite: ``ci`` (default: fast, derandomized) and ``deep``.

Select with NOVIKOFF_HYPOTHESIS_PROFILE=deep (or HYPOTHESIS_PROFILE=deep).

The cache of checked lemmas is kept out of the user's: one directory for the test runs of this
user (its worker processes and the CLI processes they start share it), unless
NOVIKOFF_CACHE_DIR says where.
"""

import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import settings

from novikoff.fuzz._profiles import profile_from_env, register_profiles
from novikoff.runtime import load_lemmas

os.environ.setdefault("NOVIKOFF_CACHE_DIR", str(Path(tempfile.gettempdir()) /
                                              f"novikoff-test-cache-{os.getuid()}"))

register_profiles()
settings.load_profile(profile_from_env("ci"))


@pytest.fixture(scope="session")
def lemmas():
    """The bundled library's lemmas as the runtime loads them (each proof checked once)."""
    return load_lemmas()
