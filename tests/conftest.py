"""Hypothesis profiles for the test suite: ``ci`` (default: fast, derandomized) and ``deep``.

Select with NOVIKOFF_HYPOTHESIS_PROFILE=deep (or HYPOTHESIS_PROFILE=deep).

The cache of checked lemmas is kept out of the user's: one directory for the test runs of this
user (its worker processes and the CLI processes they start share it), unless
NOVIKOFF_CACHE_DIR says where.
"""

import functools
import os
import re
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


# A module-scoped fixture without parameters (a graded class, the library's replayed
# certificates, a fresh pytest run, ...) is built once per worker process that runs one of its
# tests.  pytest-xdist's default scheduling spreads a module's tests over the workers, so such a
# fixture was often built on both; the scheduler below sends every test of such a module to one
# worker (as one unit, the largest units first) and the other tests one by one, as `load` does.
# (Not `--dist loadgroup` with xdist_group marks: with pytest 9.2 and pytest-xdist 3.8 the marks
# are silently ignored, pytest-dev/pytest-xdist#1386.)
_SHARED_FIXTURE = re.compile(r'^@pytest\.fixture\(scope="module"\)$', re.MULTILINE)


@functools.lru_cache(maxsize=None)
def _shares_a_module_fixture(path: Path) -> bool:
    try:
        return bool(_SHARED_FIXTURE.search(path.read_text(encoding="utf-8")))
    except OSError:
        return False


@functools.lru_cache(maxsize=None)
def _reads_the_bundled_reports(path: Path) -> bool:
    """The modules that read helpers.bundled_reports(), one check of the whole of proofs/ per
    process, run on one worker, so that it is made once.  (Not pickled from one worker to the
    other: a report read back in another process is not trusted, its lemmas read as failed.)"""
    try:
        return "bundled_reports()" in path.read_text(encoding="utf-8")
    except OSError:
        return False


@pytest.hookimpl(optionalhook=True)  # (a hook of pytest-xdist's)
def pytest_xdist_make_scheduler(config, log):
    from xdist.scheduler import LoadScopeScheduling

    root = Path(config.rootpath)

    class OneWorkerPerSharedFixture(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            module = nodeid.split("::", 1)[0]
            if _reads_the_bundled_reports(root / module):
                return "bundled_reports"
            return module if _shares_a_module_fixture(root / module) else nodeid

    return OneWorkerPerSharedFixture(config, log)
