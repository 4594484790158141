"""grade_class: grade a folder of submissions against a reference and write every output."""

from __future__ import annotations

import os
import pickle
import shutil
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

from ..errors import InvalidArgument, NovikoffError
from .adjust import Instructions
from .host import HostJob
from .workers import Budget
from .outputs import (class_table, printable, write_documents, write_gradescope, write_junit,
                      write_summary_csv)
from .progress import ProgressBar
from .results import ClassResult, ItemResult, StudentResult
from .submissions import SUBMISSION_SUFFIXES, find_submissions

__all__ = ["grade_class", "GradingError", "DEFAULT_RLIMIT", "DEFAULT_MEMORY_MB",
           "DEFAULT_WALL_TIMEOUT_S", "DEFAULT_MAX_FILE_KB", "QUERY_TIMEOUT_MS",
           "DEFAULT_LEMMA_BUDGET", "DEFAULT_FILE_BUDGET",
           "GRADESCOPE_RESULTS_DIR", "class_table"]

# Z3's resource units (counted the same on every machine; see host.py for the hash salt), as
# measured with benchmarks/measure_rlimit.py on the bundled proofs: the costliest check uses
# 904,816 (a counterexample search of seed_002_handwritten_pct.proof), the costliest file
# 1,596,028 (seed_000_lecture8.proof).  A check and a lemma get about four times the costliest
# check, a file nearly four times the costliest file (a unit is 0.2-0.5 microseconds of solver
# here); a lemma after the file's budget is spent still gets a tenth of a lemma's.
DEFAULT_RLIMIT = 4_000_000  # per solver check
DEFAULT_LEMMA_BUDGET = 4_000_000  # per lemma, its checks and diagnostics together
DEFAULT_FILE_BUDGET = 6_000_000  # per file, its lemmas together
DEFAULT_MEMORY_MB = 2048  # address space per worker; a checker process uses about 250 MB
DEFAULT_WALL_TIMEOUT_S = 120.0  # per submission: a backstop for what the budgets do not count
QUERY_TIMEOUT_MS = 60_000  # per solver check: a backstop too, far above what the rlimit allows
DEFAULT_MAX_FILE_KB = 1024  # the bundled proofs are at most 21 KB
GRADESCOPE_RESULTS_DIR = Path("/autograder/results")


class GradingError(NovikoffError):
    """Grading could not run to the end (the grading host process stopped)."""


def _positive_int(name: str, value) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InvalidArgument(f"{name}={value!r} must be a whole number >= 1")
    return value


def _cores() -> int:
    """The cores this process may run on (a container may allow fewer than the machine has)."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _support_files(reference: Path, support) -> tuple:
    """(source, path relative to the reference's directory) of every support file."""
    base = reference.parent.resolve()
    out = []
    for entry in support:
        path = Path(entry)
        resolved = path.resolve()
        if not resolved.exists() or not resolved.is_relative_to(base):
            raise InvalidArgument(f"support={str(entry)!r} must be a file or directory in the "
                                  f"reference's directory ({base})")
        files = [resolved] if resolved.is_file() else sorted(
            Path(here) / name for here, _, names in os.walk(resolved) for name in names)
        out += [(str(f), str(f.relative_to(base))) for f in files
                if f.is_file() and not f.is_symlink()]
    return tuple(out)


def _start_host(job: HostJob) -> subprocess.Popen:
    """The grading host (host.py), with a fixed hash salt, so that verdicts are reproducible."""
    import novikoff

    env = dict(os.environ, PYTHONHASHSEED="0")
    root = str(Path(novikoff.__file__).resolve().parents[1])  # the same novikoff as here
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
    # `python -c` puts "" (the current directory) first on sys.path, and the host and its
    # workers change directory into the submissions: drop every relative entry before anything
    # else is imported, so that no module is ever imported from a student's files.
    program = ("import os, sys; sys.path[:] = [p for p in sys.path if p and os.path.isabs(p)]; "
               "from novikoff.grade.host import run; sys.exit(run())")
    host = subprocess.Popen([sys.executable, "-c", program],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env,
                            start_new_session=True)  # its own group: see _stop_host
    pickle.dump(job, host.stdin)
    host.stdin.close()
    return host


def _stop_host(host: subprocess.Popen) -> None:
    """Kill the host and the workers it forked: they are the process group it leads."""
    try:
        os.killpg(host.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        host.kill()


def _messages(host: subprocess.Popen):
    while True:
        try:
            yield pickle.load(host.stdout)
        except (EOFError, pickle.UnpicklingError):  # the host ended (or died mid-message)
            return


def grade_class(submissions_dir, reference, out_dir, *, jobs: int | None = None,
                memory_mb: int = DEFAULT_MEMORY_MB, rlimit: int = DEFAULT_RLIMIT,
                lemma_budget: int = DEFAULT_LEMMA_BUDGET,
                file_budget: int = DEFAULT_FILE_BUDGET,
                wall_timeout_s: float = DEFAULT_WALL_TIMEOUT_S,
                max_file_kb: int = DEFAULT_MAX_FILE_KB, support=(), gradescope: bool = False,
                junit: bool = False, progress: bool = False,
                gradescope_results_dir=GRADESCOPE_RESULTS_DIR, students=None, late=(),
                roster=None, overrides=None, partial_credit: bool = False,
                require_certificates: bool = False) -> ClassResult:
    """Grade every submission in submissions_dir against the reference ASSIGNMENT.proof and
    write the outputs into out_dir: STUDENT.md and STUDENT.html, summary.csv, and with
    gradescope STUDENT.results.json (plus gradescope_results_dir/results.json when that directory
    exists and one submission is graded), with junit junit.xml.

    Each submission is checked in a worker process of its own (jobs at once; default one per
    core) capped at memory_mb MB, with every Z3 check bounded by rlimit, each lemma's checks by
    lemma_budget and the file's by file_budget (Z3 resource units: deterministic), and the
    submission by wall_timeout_s seconds (a backstop).  Raises InvalidArgument (a ValueError)
    naming the argument for a bad argument, a folder without submissions, or a reference that
    does not check cleanly; GradingError if the grading host stops.

    students: the names of the students to grade (default: all); the rows of summary.csv and
    junit.xml in out_dir of the others are kept.  late: names of late submissions; roster: a
    CSV file with the columns student and late; overrides: a CSV file with the columns
    student, item, points, reason, applied after grading; partial_credit: a lemma stating the
    assignment's statement in its setting earns its share of points per verified check
    (docs/teaching.md); require_certificates: a check counts as verified only if every
    decision it rests on is backed by a stored certificate (docs/certificates.md).
    """
    jobs = _cores() if jobs is None else _positive_int("jobs", jobs)
    _positive_int("memory_mb", memory_mb)
    if not isinstance(require_certificates, bool):
        raise InvalidArgument(f"require_certificates={require_certificates!r} must be True or "
                              f"False")
    budget = Budget(_positive_int("rlimit", rlimit), _positive_int("lemma_budget", lemma_budget),
                    _positive_int("file_budget", file_budget), require_certificates)
    _positive_int("max_file_kb", max_file_kb)
    if isinstance(wall_timeout_s, bool) or not isinstance(wall_timeout_s, (int, float)) \
            or not 0 < wall_timeout_s < float("inf"):
        raise InvalidArgument(f"wall_timeout_s={wall_timeout_s!r} must be a number of seconds "
                              f"> 0")
    setup = _ClassSetup.of(submissions_dir, reference, out_dir, support)
    plan = Instructions(setup.submissions, setup.out, students=students, late=late,
                        roster=roster, overrides=overrides, partial_credit=partial_credit,
                        junit=junit)
    submissions = plan.submissions
    # The students' private copies: made here and removed here, even if the host is killed.
    root = tempfile.mkdtemp(prefix="novikoff-grade-")
    job = HostJob(str(setup.reference.resolve()), root, submissions, setup.support_files, jobs,
                  memory_mb, budget, float(wall_timeout_s), QUERY_TIMEOUT_MS, max_file_kb << 10)
    results_dir = Path(gradescope_results_dir) if gradescope_results_dir is not None else None
    autograder = (gradescope and len(submissions) == 1 and results_dir is not None
                  and results_dir.is_dir())
    writers = [write_documents]
    if gradescope:
        writers.append(lambda out, student: write_gradescope(
            out, student, results_dir if autograder else None))
    try:
        host = _start_host(job)
    except BaseException:
        shutil.rmtree(root, ignore_errors=True)
        raise
    bar = ProgressBar(len(submissions), progress)
    try:
        result = _receive(host, plan, setup.out, writers, bar, reference)
    except BaseException:  # a bad reference, an output that cannot be written, Ctrl-C
        _stop_host(host)
        raise
    finally:
        bar.close()
        host.wait()
        shutil.rmtree(root, ignore_errors=True)
    if result is None:
        raise GradingError(f"the grading host stopped before checking the reference "
                           f"(exit status {host.returncode})")
    _fill_missing(result, submissions, host.returncode, plan)
    result.students.sort(key=lambda s: s.name)
    result.files.append(write_summary_csv(setup.out, result, plan.previous_summary))
    if junit:
        result.files.append(write_junit(setup.out, result, plan.previous_junit))
    return result


@dataclass(frozen=True)
class _ClassSetup:
    """The paths of a class to grade, every one absolute (before anything changes directory:
    the grading host works in the reference's directory and each worker in a student's private
    copy), checked, with the submissions found."""

    reference: Path
    out: Path
    support_files: list
    submissions: list

    @classmethod
    def of(cls, submissions_dir, reference, out_dir, support) -> "_ClassSetup":
        folder = Path(os.path.abspath(submissions_dir))
        if not folder.is_dir():
            raise InvalidArgument(f"submissions_dir={str(submissions_dir)!r} is not a directory")
        reference_path = Path(os.path.abspath(reference))
        if reference_path.suffix not in SUBMISSION_SUFFIXES or not reference_path.is_file():
            raise InvalidArgument(f"reference={str(reference)!r} is not a .proof file (nor a "
                                  f"Markdown or LaTeX document, .md or .tex)")
        out = Path(os.path.abspath(out_dir))
        try:
            out.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise InvalidArgument(f"out_dir={str(out_dir)!r} cannot be made "
                                  f"({exc.strerror or exc})") from None
        support_files = _support_files(reference_path, support)
        skip = [reference_path, reference_path.with_suffix(".toml"), out] + \
            [Path(os.path.abspath(s)) for s in support]
        try:
            submissions = find_submissions(folder, skip)
        except OSError as exc:
            raise InvalidArgument(f"submissions_dir={str(submissions_dir)!r} cannot be read "
                                  f"({exc.strerror or exc})") from None
        if not submissions:
            raise InvalidArgument(f"submissions_dir={str(submissions_dir)!r} has no submissions "
                                  f"(no .proof file or student directory in it)")
        return cls(reference_path, out, support_files, submissions)


def _receive(host, plan, out: Path, writers: list, bar, reference) -> ClassResult | None:
    """The class's result from the host's messages, each student's files written as they come;
    None if the host stopped before checking the reference."""
    result = None
    for message in _messages(host):
        if message[0] == "reference-error":
            raise InvalidArgument(f"reference={str(reference)!r}: {message[1]}")
        if message[0] == "assignment":
            result = ClassResult(message[1], message[2], [], out)
            plan.start(result)
        elif message[0] == "student":
            student = message[1]
            plan.adjust(result, student)
            result.students.append(student)
            try:  # one student's files that cannot be written do not stop the class
                for write in writers:
                    result.files += write(out, student)
            except (OSError, ValueError) as exc:
                print(f"novikoff grade: the reports of {printable(student.name)} could not "
                      f"be written ({exc})", file=sys.stderr)
            bar.advance(printable(student.name))
        elif message[0] == "done":
            break
    return result


def _fill_missing(result: ClassResult, submissions: list, code, plan) -> None:
    """Students the host did not report (it stopped): nothing earned, said so, still written."""
    seen = {s.name for s in result.students}
    problem = f"not graded: the grading host stopped (exit status {code})"
    for sub in submissions:
        if sub.name in seen:
            continue
        items = [ItemResult(name, kind, Fraction(0), points, "stopped", problem)
                 for name, kind, points in result.items]
        student = StudentResult(sub.name, sub.shown, items, problem=problem, documents={},
                                grader_problem=problem)
        plan.adjust(result, student)
        result.students.append(student)
        result.files += write_documents(result.out_dir, student)
