"""The exceptions novikoff raises: one base class, one documented subclass per kind of failure."""

from __future__ import annotations

__all__ = [
    "NovikoffError",
    "ProofSyntaxError",
    "UnreadableSource",
    "KernelError",
    "InvalidArgument",
    "InvariantViolation",
    "CheckingStopped",
]


class NovikoffError(Exception):
    """Base class of every error novikoff raises on purpose."""


class ProofSyntaxError(NovikoffError):
    """A .proof file is malformed: bad syntax, unknown names, type errors, bad citations.

    ``str(err)`` is one line, ``file:line:col: message``, followed by the offending text.
    """

    def __init__(self, message: str, file: str = "<string>", line: int = 0, column: int = 0,
                 text: str = ""):
        self.message = message
        self.file = file
        self.line = line
        self.column = column
        self.text = text
        super().__init__(self.__str__())

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}:{self.column}: {self.message}"
        return f"{where}: {self.text}" if self.text else where

    def __reduce__(self):  # from a worker process of `novikoff check` with all its fields
        return (type(self), (self.message, self.file, self.line, self.column, self.text))


class UnreadableSource(ProofSyntaxError):
    """A .proof file cannot be read as text (it is not UTF-8): positioned at the first byte
    that is not, and reported as unreadable rather than malformed."""


class KernelError(NovikoffError):
    """The kernel refused a rule application (a malformed or forged argument, a mismatch).

    rule: the name of the rule that refused (``trans``, ``induction``, ...), as HOL Light's
    kernel fails with "TRANS"; None for a term the kernel cannot give a meaning to."""

    rule: str | None = None


class InvalidArgument(NovikoffError, ValueError):
    """An API function was called with a bad argument; the message reads ``name=value!r``."""


class InvariantViolation(NovikoffError, AssertionError):
    """A lemma's runtime invariant failed during a monitored perceptron run."""


class CheckingStopped(NovikoffError):
    """Checking could not run to the end: the process that checked a file ended without a report
    (killed, out of memory).  Nothing of that file counts as checked."""
