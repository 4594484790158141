"""The checked-lemma record and the cache of checked outcomes (novikoff.lemmas, lemma_cache).

A record is verified only when the loader made it from a verified result; the cache is keyed by
the contents of a file and of everything it imports and by the judging code, and an entry that is
damaged, forged or sealed by another secret is ignored, never trusted, never a traceback.
"""

from __future__ import annotations

import dataclasses
import json
import multiprocessing
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from novikoff import lemma_cache, lemmas
from novikoff.cli import main
from novikoff.lemmas import LemmaInfo, SettingInfo, load_lemmas

from helpers import PERCEPTRON  # noqa: E402  (tests/ is on sys.path)

SETTING = """\
setting s:
  real gamma > 0, R > 0
  assume big: R >= gamma
"""
BASE = SETTING + """
lemma pos: gamma > 0
proof:
  gamma > 0

lemma r_big: R + 1 > gamma
proof:
  R + 1 > R
        >= gamma    by big
"""
PROGRESS = """
lemma progress_once: <w_star, w[k+1]> >= <w_star, w[k]> + gamma
proof:
  <w_star, w[k+1]> = <w_star, w[k] + y*x>       by update
                   = <w_star, w[k]> + y*<w_star, x>
                   >= <w_star, w[k]> + gamma      by margin
"""
WRONG = """
lemma wrong: gamma > R
proof:
  gamma > R
"""
TOP = "from base import pos\n\n" + SETTING + """
lemma twice: 2*gamma > gamma
proof:
  2*gamma = gamma + gamma
          > gamma          by pos
"""


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """An empty cache directory of its own, and no outcome kept in this process."""
    directory = tmp_path / "cache"
    monkeypatch.setenv(lemma_cache.CACHE_DIR_ENV, str(directory))
    monkeypatch.setattr(lemmas, "_MEMO", {})
    return directory


def write(path: Path, text: str) -> Path:
    """Write a file last modified a minute ago (older than the cache's racy window)."""
    path.write_text(text, encoding="utf-8")
    then = time.time() - 60
    os.utime(path, (then, then))
    return path


@pytest.fixture
def files(tmp_path):
    proofs = tmp_path / "proofs"
    proofs.mkdir()
    return write(proofs / "base.proof", BASE), write(proofs / "top.proof", TOP)


def load(paths) -> dict:
    """Load in a fresh memo (as a new process would): name -> LemmaInfo."""
    lemmas._MEMO.clear()
    return {info.name: info for info in load_lemmas([str(p) for p in paths])}


def outcome(infos: dict) -> dict:
    return {n: (i.status, i.verified, i.cached) for n, i in infos.items()}


def entry_files(directory: Path) -> list:
    return sorted(directory.rglob("*.json"))


# ------------------------------------------------------------------ the record


def test_a_lemma_info_built_by_hand_is_not_verified(cache, files):
    checked = load([files[1]])["twice"]
    assert checked.verified and checked.status == "verified"
    forged = LemmaInfo(checked.name, checked.file, checked.line, checked.text,
                       checked.statement, checked.setting, "verified", dict(checked.hypotheses))
    assert forged.status == "verified" and not forged.verified
    setting = SettingInfo("s", {"gamma": "real"}, frozenset(), {})
    assert not LemmaInfo("x", "f", 1, "gamma > 0", checked.statement, setting, "verified",
                         {}).verified
    # A copy with a field changed is a new record: it carries no seal.
    assert not dataclasses.replace(checked, text="gamma > 1").verified
    assert not dataclasses.replace(checked, statement=load([files[0]])["r_big"].statement).verified
    with pytest.raises(TypeError):
        LemmaInfo("x", "f", 1, "t", checked.statement, setting, "verified", {}, verified=True)
    with pytest.raises(dataclasses.FrozenInstanceError):
        checked.status = "failed"


def test_a_failed_lemma_is_not_verified_and_keeps_every_assumption(cache, tmp_path):
    path = write(tmp_path / "f.proof", SETTING + WRONG)
    info = load([path])["wrong"]
    assert info.status == "failed" and not info.verified
    assert list(info.hypotheses) == ["big"]


# ------------------------------------------------------------------ hits and misses


def test_the_second_load_comes_from_the_cache_and_reads_the_same(cache, files):
    first = load([files[1]])
    assert entry_files(cache) and not any(i.cached for i in first.values())
    second = load([files[1]])
    assert all(i.cached for i in second.values())
    assert outcome(second) == {n: (i.status, i.verified, True) for n, i in first.items()}
    assert list(second) == list(first) == ["pos", "r_big", "twice"]  # imports first
    for name, info in first.items():
        again = second[name]
        assert (again.file, again.line, again.text, again.statement, again.setting,
                again.hypotheses) == (info.file, info.line, info.text, info.statement,
                                      info.setting, info.hypotheses)


def test_the_bundled_library_reads_the_same_from_the_cache(cache):
    from novikoff.runtime import default_proof_paths

    paths = default_proof_paths()
    checked = load(paths)
    cached = load(paths)
    assert all(i.cached for i in cached.values()) and not any(i.cached for i in checked.values())
    assert [(i.name, i.file, i.status, i.verified, i.statement, i.setting, i.hypotheses)
            for i in checked.values()] == \
        [(i.name, i.file, i.status, i.verified, i.statement, i.setting, i.hypotheses)
         for i in cached.values()]


def test_editing_a_file_checks_it_again(cache, files):
    base, top = files
    assert outcome(load([top]))["twice"] == ("verified", True, False)
    assert load([top])["twice"].cached
    write(top, TOP.replace("> gamma          by pos", "> 2*gamma        by pos"))
    again = load([top])
    assert outcome(again)["twice"] == ("failed", False, False)
    assert outcome(again)["pos"][2] is False  # one check of the whole closure


def test_editing_an_import_checks_the_importer_again(cache, files):
    base, top = files
    load([top])
    load([base])  # the import's own entry, made again below after its edit
    write(base, BASE.replace("lemma pos: gamma > 0\nproof:\n  gamma > 0",
                             "lemma pos: gamma > 0\nproof:\n  gamma > R"))
    assert outcome(load([base]))["pos"] == ("failed", False, False)
    # top.proof is unchanged, but what it imports is not: its entry no longer holds.
    after = load([top])
    assert outcome(after)["twice"] == ("failed", False, False)


def test_an_import_of_an_import_is_watched_too(cache, files):
    base, top = files
    high = write(top.parent / "high.proof", "from top import twice\n\n" + SETTING + """
lemma thrice: 3*gamma > gamma
proof:
  3*gamma = 2*gamma + gamma
          > gamma + gamma      by twice
          > gamma
""")
    first = load([high])
    assert outcome(first)["thrice"][:2] == ("verified", True)
    write(base, BASE.replace("lemma pos: gamma > 0\nproof:\n  gamma > 0",
                             "lemma pos: gamma > 0\nproof:\n  gamma > R"))
    assert outcome(load([top]))["twice"] == ("failed", False, False)  # top's entry made again
    # high.proof and top.proof are unchanged and top's entry holds: base.proof, two imports
    # down, still decides.
    assert outcome(load([high]))["thrice"] == ("failed", False, False)


def test_another_novikoff_or_another_kernel_checks_again(cache, files, monkeypatch):
    top = files[1]
    load([top])
    assert load([top])["twice"].cached
    monkeypatch.setattr(lemmas, "__version__", "0.0.0-other")
    assert not load([top])["twice"].cached
    monkeypatch.undo()
    monkeypatch.setenv(lemma_cache.CACHE_DIR_ENV, str(cache))
    monkeypatch.setattr(lemmas, "_SOURCES", {"sources": "the digest of an edited kernel"})
    assert not load([top])["twice"].cached


def test_the_judging_code_includes_the_kernel(monkeypatch):
    """Every kernel module is part of the digest that keys the cache."""
    root = Path(lemmas.__file__).resolve().parent
    covered = {p for name in lemmas._JUDGING_SOURCES
               for p in ((root / name).rglob("*.py") if (root / name).is_dir() else [root / name])}
    assert set((root / "kernel").glob("*.py")) <= covered
    assert root / "checker.py" in covered and root / "language" / "elaborate.py" in covered


def test_a_file_edited_within_one_time_stamp_is_read_again(cache, tmp_path):
    """Same size, same inode, same modification time: in a process, a file stamped moments after
    its modification is compared by its bytes."""
    (tmp_path / "base.proof").write_text(BASE, encoding="utf-8")
    top = tmp_path / "top.proof"
    top.write_text(TOP, encoding="utf-8")
    paths = [str(top)]
    assert load_lemmas(paths)[-1].verified
    stamp = os.stat(top).st_mtime_ns
    edited = TOP.replace("> gamma          by pos", "> 2*gamma        by pos")
    assert len(edited) == len(TOP)
    top.write_text(edited, encoding="utf-8")
    os.utime(top, ns=(stamp, stamp))
    assert not load_lemmas(paths)[-1].verified  # the same process, no memo cleared


def test_a_file_modified_moments_ago_is_not_stored(cache, tmp_path):
    path = tmp_path / "fresh.proof"
    path.write_text(BASE, encoding="utf-8")  # it might change again within the same time stamp
    load([path])
    assert not entry_files(cache)
    assert not load([path])["pos"].cached


# ------------------------------------------------------------------ damaged and forged entries


def _damage(directory: Path, how) -> None:
    for entry in entry_files(directory):
        how(entry)


@pytest.mark.parametrize("how", [
    lambda p: p.write_bytes(b""),
    lambda p: p.write_bytes(p.read_bytes()[: len(p.read_bytes()) // 2]),
    lambda p: p.write_bytes(b"\xff\xfe not json"),
    lambda p: p.write_text("[1, 2, 3]"),
    lambda p: p.write_text('{"format": "novikoff-lemmas-1", "seal": "zz", "body": {}}'),
    lambda p: p.write_text(json.dumps({**json.loads(p.read_text()), "body": None})),
    lambda p: p.write_text("[" * 100000),
], ids=["empty", "truncated", "binary", "a list", "bad seal", "no body", "deep"])
def test_a_damaged_entry_is_ignored_and_made_again(cache, files, how):
    top = files[1]
    load([top])
    _damage(cache, how)
    again = load([top])  # no traceback
    assert outcome(again)["twice"] == ("verified", True, False)
    assert load([top])["twice"].cached  # stored again


def test_an_entry_edited_to_claim_verified_is_ignored(cache, tmp_path):
    path = write(tmp_path / "f.proof", SETTING + WRONG)
    assert outcome(load([path]))["wrong"] == ("failed", False, False)
    (entry,) = entry_files(cache)
    doc = json.loads(entry.read_text())
    doc["body"]["lemmas"][0]["status"] = "verified"
    entry.write_text(json.dumps(doc))
    assert outcome(load([path]))["wrong"] == ("failed", False, False)


def test_an_entry_sealed_with_another_secret_is_ignored(cache, files):
    top = files[1]
    load([top])
    secret = cache / "secret"
    secret.write_bytes(os.urandom(32))  # entries made elsewhere, copied here
    assert not load([top])["twice"].cached


def test_a_secret_others_can_read_is_not_used(cache, files):
    top = files[1]
    load([top])
    os.chmod(cache / "secret", 0o644)
    again = load([top])
    assert outcome(again)["twice"] == ("verified", True, False)
    assert not load([top])["twice"].cached


def test_an_unwritable_cache_directory_only_costs_time(tmp_path, monkeypatch, files):
    blocked = tmp_path / "a-file"
    blocked.write_text("not a directory")
    monkeypatch.setenv(lemma_cache.CACHE_DIR_ENV, str(blocked / "cache"))
    assert outcome(load([files[1]]))["twice"] == ("verified", True, False)


# ------------------------------------------------------------------ concurrent writers


def _writer(args):
    directory, seed = args
    os.environ[lemma_cache.CACHE_DIR_ENV] = directory
    body = {"lemmas": [{"seed": seed, "padding": "x" * 20000}]}
    seen = []
    for _ in range(30):
        lemma_cache.store("k" * 64, body)
        got = lemma_cache.load("k" * 64)
        seen.append(None if got is None else got["lemmas"][0]["seed"])
    return seen


def test_concurrent_writers_leave_a_whole_entry(cache):
    with multiprocessing.get_context("fork").Pool(4) as pool:
        seen = pool.map(_writer, [(str(cache), seed) for seed in range(4)])
    # Every read saw a whole entry written by one of the writers, never a torn one.
    assert all(s in range(4) for reads in seen for s in reads)
    assert lemma_cache.load("k" * 64)["lemmas"][0]["seed"] in range(4)
    leftovers = [p for p in cache.rglob("*") if p.name.startswith(".")]
    assert not leftovers


# ------------------------------------------------------------------ the command line


def test_no_cache_neither_reads_nor_writes(cache, tmp_path):
    import numpy as np

    rng = np.random.default_rng(3)
    X = rng.normal(size=(40, 3))
    y = np.where(X[:, 0] > 0, 1.0, -1.0)
    X[:, 0] += y  # a margin of at least 1
    np.savez(tmp_path / "d.npz", X=X, y=y)
    # One small lemma file, not the whole library: each command checks it afresh.
    small = write(tmp_path / "small.proof", PERCEPTRON + PROGRESS)
    for argv in (["--no-cache", "run", tmp_path / "d.npz"],
                 ["run", tmp_path / "d.npz", "--no-cache"]):
        _forget()
        assert main([str(a) for a in argv] + ["--proofs", str(small)]) == 0
        assert not entry_files(cache)
        assert lemma_cache.enabled()  # only for that command
    _forget()
    assert main(["run", str(tmp_path / "d.npz"), "--proofs", str(small)]) == 0
    assert entry_files(cache)


def _forget() -> None:
    """Forget what this process checked and compiled, as a new process would."""
    from novikoff.runtime import _library

    lemmas._MEMO.clear()
    _library._MEMO.clear()


def test_cache_command_shows_and_clears(cache, files, capsys):
    load([files[1]])
    assert main(["cache"]) == 0
    assert str(cache) in capsys.readouterr().out
    assert main(["cache", "--clear"]) == 0
    assert not entry_files(cache) and not (cache / "secret").exists()


def test_help_imports_no_sympy():
    code = ("import sys; from novikoff.cli import build_parser; build_parser(None); "
            "build_parser('cache'); print(sorted(m for m in ('sympy', 'numpy', 'z3') "
            "if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "[]"


# ------------------------------------------------------------------ the compiled monitor

def _records(paths) -> dict:
    """The monitor's records of the files, as a new process reads them: name -> record."""
    from novikoff.runtime import _library

    _forget()
    return {rec.name: rec for rec in _library.library([str(p) for p in paths])}


def _monitor_entries(cache: Path) -> list:
    return [p for p in entry_files(cache) if "monitor" in json.loads(p.read_text())["body"]]


def test_the_compiled_monitor_reads_the_same_from_the_cache(cache, files):
    from novikoff.runtime._checks import encode_lemma

    made = _records([files[1]])
    assert all(rec.source is not None for rec in made.values())  # compiled in this process
    again = _records([files[1]])
    assert all(rec.source is None for rec in again.values())  # read from the disk
    assert {n: encode_lemma(r) for n, r in again.items()} == \
        {n: encode_lemma(r) for n, r in made.items()}
    assert again["twice"].verified and again["pos"].verified


def test_a_monitor_entry_edited_to_claim_verified_is_ignored(cache, tmp_path):
    from novikoff.runtime import Monitor

    path = write(tmp_path / "f.proof", SETTING + WRONG)
    assert not _records([path])["wrong"].verified
    (entry,) = _monitor_entries(cache)
    doc = json.loads(entry.read_text())
    (record,) = doc["body"]["lemmas"]
    assert record["verified"] is False
    record["verified"] = True
    entry.write_text(json.dumps(doc))
    tampered = _records([path])["wrong"]
    assert not tampered.verified and tampered.source is not None  # checked again, not read
    assert [r for _, r in Monitor.from_lemmas([tampered]).not_monitorable] == [
        "not verified (include_unverified=True monitors it anyway)"]


def test_a_monitor_record_built_by_hand_is_not_verified(cache, files):
    from novikoff.runtime._checks import MonitoredLemma

    checked = _records([files[1]])["twice"]
    assert checked.verified
    assert not dataclasses.replace(checked).verified
    assert not MonitoredLemma(checked.name, checked.file, checked.line, checked.shown,
                              checked.run, checked.trace).verified


def test_editing_an_import_compiles_the_monitor_again(cache, files):
    base, top = files
    assert _records([top])["r_big"].shown == "R + 1 > gamma"
    write(base, BASE.replace("R + 1 > gamma", "R + 2 > gamma").replace("R + 1 > R",
                                                                     "R + 2 > R"))
    assert _records([top])["r_big"].shown == "R + 2 > gamma"


_WARM_PROBE = """
import sys
from novikoff.cli import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
print(sorted(m for m in ("sympy", "z3", "novikoff.kernel", "novikoff.checker")
             if m in sys.modules))
"""


def test_a_warm_run_and_audit_import_neither_sympy_nor_z3_nor_the_kernel(cache, tmp_path):
    import numpy as np

    rng = np.random.default_rng(7)
    X = rng.normal(size=(20, 3))
    y = np.where(X[:, 0] > 0, 1.0, -1.0)
    X[:, 0] += y
    order = np.tile(np.arange(20), 2)
    w, trace = np.zeros(3), []
    for i in order:
        if y[i] * (w @ X[i]) <= 0:
            w = w + y[i] * X[i]
        trace.append(w.copy())
    np.savez(tmp_path / "d.npz", X=X, y=y)
    np.savez(tmp_path / "t.npz", order=order, w=np.array(trace))
    audit = ["audit", "--data", str(tmp_path / "d.npz"), "--trace", str(tmp_path / "t.npz")]

    def probe(*argv):
        done = subprocess.run([sys.executable, "-c", _WARM_PROBE, *argv], capture_output=True,
                              text=True, timeout=600, env=dict(os.environ))
        *out, modules = done.stdout.strip().splitlines()
        return out, modules

    cold = probe("run", "iris")
    assert cold[1] != "[]"  # the library was checked: the kernel was needed
    assert probe("run", "iris") == (cold[0], "[]")
    cold_audit = probe(*audit)
    assert probe(*audit) == (cold_audit[0], "[]")
