"""The Hypothesis profiles: ``ci`` (fast, derandomized) and ``deep`` (long campaigns)."""

from __future__ import annotations

import os

from hypothesis import HealthCheck, Phase, settings

__all__ = ["PROFILES", "register_profiles", "profile_from_env", "ENV_VARS"]

ENV_VARS = ("NOVIKOFF_HYPOTHESIS_PROFILE", "HYPOTHESIS_PROFILE")

_COMMON = dict(deadline=None, print_blob=True,
               suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

PROFILES = {
    "ci": settings(max_examples=60, derandomize=True, database=None, **_COMMON),
    "deep": settings(max_examples=5000, phases=tuple(Phase), **_COMMON),
}


def register_profiles() -> None:
    """Register ``novikoff-ci`` and ``novikoff-deep`` (and ``ci``/``deep`` when still free)."""
    for name, s in PROFILES.items():
        settings.register_profile(f"novikoff-{name}", s)
        settings.register_profile(name, s)


def profile_from_env(default: str = "ci") -> str:
    """The profile named by NOVIKOFF_HYPOTHESIS_PROFILE or HYPOTHESIS_PROFILE, else ``default``."""
    for var in ENV_VARS:
        v = os.environ.get(var)
        if v:
            return v
    return default
