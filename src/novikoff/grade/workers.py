"""Run tasks each in a fresh forked process, a few at a time, with a memory cap and a backstop.

Every task gets its own process, forked from the caller: a submission never shares a process (or
a solver) with another, and each starts from the same state, so its result does not depend on
which submissions were checked before it or on how many workers there are.  In the child the
address space is capped (RLIMIT_AS) and Z3 checks are bounded by their resource count (the
kernel's LIMITS: per check, per lemma and per file), which is deterministic; the wall-clock limit is a last resort for work
that Z3's count does not cover (SymPy, the parser).  A child that runs out of memory, crashes or
overruns the wall-clock limit becomes an outcome like any other: the run goes on.
"""

from __future__ import annotations

import multiprocessing
import os
import resource
import sys
import time
from dataclasses import dataclass
from multiprocessing.connection import wait

__all__ = ["Outcome", "Task", "Budget", "run_isolated", "apply_limits"]


@dataclass(frozen=True)
class Task:
    """fn(arg) to run in a child; key identifies it to the caller."""

    key: object
    fn: object
    arg: object


@dataclass(frozen=True)
class Outcome:
    """status: "ok" (value is fn's result), "memory" (MemoryError in the child), "error" (an
    exception: value is its one-line text), "died" (the process ended without an answer: value
    is its exit code, negative for a signal), "time" (killed at the wall-clock limit)."""

    status: str
    value: object = None


@dataclass(frozen=True)
class Budget:
    """Bounds on the solver, in Z3's resource units (deterministic; kernel.solver.Limits): per
    check, per lemma, and per file, after which each further lemma still gets a tenth of a
    lemma's budget (enough for an honest homework lemma, which needs a few ten thousand)."""

    rlimit: int
    lemma_units: int
    file_units: int
    # Count only the decisions that a stored certificate backs (grade --require-certificates).
    require_certificates: bool = False

    def apply(self) -> None:
        """Bound this process's solver checks."""
        from ..kernel.certified import LEDGER
        from ..kernel.solver import LIMITS

        LEDGER.required = self.require_certificates

        LIMITS.rlimit = self.rlimit
        LIMITS.lemma_units = self.lemma_units
        LIMITS.file_units = self.file_units
        LIMITS.reserve_units = self.lemma_units // 10


def apply_limits(memory_mb: int, budget: Budget) -> None:
    """In a child: cap the address space and bound the Z3 checks (kernel LIMITS)."""
    cap = memory_mb << 20
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    if hard != resource.RLIM_INFINITY:
        cap = min(cap, hard)
    resource.setrlimit(resource.RLIMIT_AS, (cap, hard))
    budget.apply()


# File descriptors a child must not hold (the host's channel to grade_class): a child only
# answers on its own pipe.
INHERITED_CLOSE: set = set()


def _child(task: Task, memory_mb: int, budget: Budget, conn) -> None:
    for fd in INHERITED_CLOSE:
        try:
            os.close(fd)
        except OSError:
            pass
    # Imports happen lazily while a submission is checked in its own directory: only absolute
    # entries on sys.path, so nothing is imported from the student's files.
    sys.path[:] = [p for p in sys.path if p and os.path.isabs(p)]
    try:
        apply_limits(memory_mb, budget)
        answer = Outcome("ok", task.fn(task.arg))
    except MemoryError:
        answer = Outcome("memory")
    except RecursionError:
        answer = Outcome("error", "RecursionError: the input nests too deeply")
    except BaseException as exc:  # noqa: BLE001 -- any failure is this task's outcome
        answer = Outcome("error", f"{type(exc).__name__}: {exc}")
    try:
        conn.send(answer)
    except MemoryError:
        _send_quietly(conn, Outcome("memory"))
    except (OSError, EOFError):
        pass  # the parent is gone: nobody to tell
    except Exception as exc:  # noqa: BLE001 -- the answer cannot be pickled
        _send_quietly(conn, Outcome("error", f"the answer cannot be sent: "
                                             f"{type(exc).__name__}: {exc}"))
    finally:
        conn.close()


def _send_quietly(conn, outcome: Outcome) -> None:
    try:
        conn.send(outcome)
    except Exception:  # noqa: BLE001 -- the parent then sees a child that died without a word
        pass


@dataclass
class _Running:
    task: Task
    process: object
    conn: object
    started: float


def run_isolated(tasks, on_outcome, *, workers: int, memory_mb: int, budget: Budget,
                 wall_seconds: float) -> None:
    """Run every task in its own forked process, at most `workers` at once.

    on_outcome(task, Outcome) is called in this process as each one ends, in the order they end;
    it may return a follow-up Task (run like the others) or None.
    """
    context = multiprocessing.get_context("fork")
    pending = list(tasks)
    running: list = []
    while pending or running:
        while pending and len(running) < workers:
            task = pending.pop(0)
            receive, send = context.Pipe(duplex=False)
            process = context.Process(target=_child, args=(task, memory_mb, budget, send),
                                      daemon=True)
            process.start()
            send.close()  # the child's end: closed here, so a dead child reads as EOF
            running.append(_Running(task, process, receive, time.monotonic()))
        deadline = min(r.started for r in running) + wall_seconds
        wait([r.conn for r in running] + [r.process.sentinel for r in running],
             timeout=max(0.0, deadline - time.monotonic()))
        for r in list(running):
            outcome = _finished(r, wall_seconds)
            if outcome is None:
                continue
            running.remove(r)
            follow_up = on_outcome(r.task, outcome)
            if follow_up is not None:
                pending.insert(0, follow_up)


def _finished(r: _Running, wall_seconds: float):
    """The outcome of a child that has answered, died or overrun; None if it is still at work."""
    answer, closed = None, False
    try:
        if r.conn.poll():
            answer = r.conn.recv()
    except (EOFError, OSError):
        closed = True  # it closed its end without answering: it is dying
    if answer is not None or closed or not r.process.is_alive():
        r.process.join(5)
        _stop(r)
        return answer if answer is not None else Outcome("died", r.process.exitcode)
    if time.monotonic() - r.started > wall_seconds:
        _stop(r)
        return Outcome("time")
    return None


def _stop(r: _Running) -> None:
    """Kill the child if it is still there (it answered and hangs, or overran), and reap it."""
    if r.process.is_alive():
        r.process.kill()
    r.process.join()
    r.conn.close()
