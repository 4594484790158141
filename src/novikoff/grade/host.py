"""The grading host: a process of its own that checks the reference and forks a worker per student.

`grade_class` starts it (a Python running `host.run()`) with PYTHONHASHSEED=0 and sends it a
HostJob (pickled) on stdin; it answers with pickled messages on stdout, in this order:

    ("assignment", name, [(item, kind, points), ...])   or   ("reference-error", message)
    ("student", StudentResult)                           one per student, as each ends
    ("done",)

Why a process of its own: the order in which Python iterates over sets of SymPy objects follows
string hashes, which are salted per process, and that order reaches Z3 (the order of its
constraints), whose resource count then varies (measured: up to 1.9 x between salts on the same
obligation).  With a fixed salt, and every worker forked from the same state after the reference
check, a submission gets the same rlimit verdicts on every run, on every machine with the same
versions of Z3 and SymPy, whatever the number of workers.
"""

from __future__ import annotations

import os
import pickle
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

__all__ = ["HostJob", "main", "run"]


@dataclass(frozen=True)
class HostJob:
    reference: str  # absolute path of ASSIGNMENT.proof
    root: str  # an empty private directory for the students' copies (grade_class removes it)
    submissions: list  # submissions.Submission, sorted by name
    support: tuple  # (absolute source path, path relative to a student's directory)
    jobs: int
    memory_mb: int
    budget: object  # workers.Budget
    wall_seconds: float
    query_timeout_ms: int
    max_file_bytes: int


def _stop_message(outcome, job: HostJob) -> str:
    if outcome.status == "memory":
        return (f"checking stopped: it ran out of memory (the limit is {job.memory_mb} MB per "
                f"submission)")
    if outcome.status == "time":
        return (f"timed out: checking took longer than {job.wall_seconds:g} s (the wall-clock "
                f"limit per submission)")
    if outcome.status == "died":
        code = outcome.value
        how = f"signal {-code}" if isinstance(code, int) and code < 0 else f"exit status {code}"
        return (f"checking stopped: the checker's process ended ({how}), most likely out of "
                f"memory (the limit is {job.memory_mb} MB per submission)")
    return f"checking stopped: internal error of the grader, please report it: {outcome.value}"


def check_reference(job: HostJob):
    """The Assignment of the reference, checked in its own directory under the grading budget
    (the limits students get); raises AssignmentError when it does not check cleanly."""
    from ..certify.store import CertificateFileError, load_certificates
    from ..checker import Checker
    from ..errors import ProofSyntaxError
    from ..kernel.certified import LEDGER
    from ..language.lexer import read_source
    from .assignment import AssignmentError, load_assignment

    reference = Path(job.reference)
    job.budget.apply()
    os.chdir(reference.parent)  # its imports and witnesses are read as `novikoff check` does
    try:
        source = read_source(reference.name)
    except OSError as exc:
        raise AssignmentError(f"{reference.name} cannot be read ({exc})") from None
    except ProofSyntaxError as exc:
        raise AssignmentError(str(exc)) from None
    report = Checker(timeout_ms=job.query_timeout_ms).check_file(reference.name)
    # The students' workers are forked from here: their decisions may replay the reference's
    # certificates (grade --require-certificates).
    try:
        LEDGER.shared = load_certificates(Path(reference.name))
    except CertificateFileError:
        pass  # the reference's report says why (load_assignment refuses it)
    return load_assignment(Path(reference.name), report, source)


def grade_all(job: HostJob, assignment, root: Path, send) -> None:
    """Grade every submission in a worker of its own; send each StudentResult as it ends."""
    from .judge import not_checked
    from .results import StudentResult
    from .student import StudentTask, grade_student, stopped_student
    from .submissions import readable_name
    from .workers import Task, run_isolated

    def stopped(arg):
        return stopped_student(*arg)

    students = {}  # key -> StudentTask
    for index, submission in enumerate(job.submissions):
        private = root / f"{index:05d}"
        private.mkdir()
        students[index] = StudentTask(submission, str(private), assignment, job.support,
                                      job.max_file_bytes, job.query_timeout_ms, job.budget)
    tasks = [Task(key, grade_student, student) for key, student in students.items()]

    def on_outcome(task, outcome):
        student = students[task.key]
        if outcome.status == "ok":
            send(("student", outcome.value))
        elif task.fn is grade_student:  # a report saying why, made in a fresh worker
            grader_fault = outcome.status == "error"  # a bug of the grader, not the student's
            failure = "timed-out" if outcome.status == "time" else "stopped"
            return Task(task.key, stopped, (student, _stop_message(outcome, job), failure,
                                            grader_fault))
        else:  # even that failed: the grade, without documents
            _, problem, failure, _ = task.arg
            sub = student.submission
            send(("student", StudentResult(sub.name, readable_name(sub.shown),
                                           not_checked(assignment, failure, problem),
                                           problem=problem, documents={},
                                           grader_problem=problem)))
        shutil.rmtree(student.private, ignore_errors=True)
        return None

    run_isolated(tasks, on_outcome, workers=job.jobs, memory_mb=job.memory_mb,
                 budget=job.budget, wall_seconds=job.wall_seconds)


def main() -> int:
    from .workers import INHERITED_CLOSE

    channel = os.fdopen(os.dup(1), "wb")
    INHERITED_CLOSE.add(channel.fileno())  # the workers never write to grade_class
    os.dup2(2, 1)  # whatever a library prints goes to stderr: stdout carries the messages

    def send(message) -> None:
        pickle.dump(message, channel)
        channel.flush()

    from .assignment import AssignmentError

    job = pickle.load(sys.stdin.buffer)
    try:
        assignment = check_reference(job)
    except AssignmentError as exc:
        send(("reference-error", str(exc)))
        return 0
    send(("assignment", assignment.name,
          [(item.name, item.kind, item.points) for item in assignment.items]))
    grade_all(job, assignment, Path(job.root), send)
    send(("done",))
    return 0


def run() -> int:
    """main(), with any failure as one line on stderr (grade_class then reports the students it
    did not hear about)."""
    try:
        return main()
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # noqa: BLE001 -- a bug in the grader: one line, no traceback
        print(f"novikoff grade: internal error of the grading host, please report it: "
              f"{type(exc).__name__}: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(run())
