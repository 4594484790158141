"""Hypothesis profiles for the test suite: ``ci`` (default: fast, derandomized) and ``deep``.

Select with NOVIKOFF_HYPOTHESIS_PROFILE=deep (or HYPOTHESIS_PROFILE=deep).
"""

import pytest
from hypothesis import settings

from novikoff.runtime import load_lemmas

from novikoff.fuzz._profiles import profile_from_env, register_profiles

register_profiles()
settings.load_profile(profile_from_env("ci"))


@pytest.fixture(scope="session")
def lemmas():
    """The bundled library's lemmas as the runtime loads them (each proof checked once)."""
    return load_lemmas()
