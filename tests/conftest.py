"""Hypothesis profiles for the test suite: ``ci`` (default: fast, derandomized) and ``deep``.

Select with NOVIKOFF_HYPOTHESIS_PROFILE=deep (or HYPOTHESIS_PROFILE=deep).
"""

from hypothesis import settings

from novikoff.fuzz._profiles import profile_from_env, register_profiles

register_profiles()
settings.load_profile(profile_from_env("ci"))
