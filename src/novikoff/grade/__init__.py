"""Grade a class: students' .proof files (or Markdown and LaTeX homework, read by the notes front
end into the same syntax tree) against a reference assignment (docs/teaching.md).

    from novikoff.grade import grade_class
    result = grade_class("submissions/", "hw3.proof", "graded/", junit=True)
    result.students[0].score, result.max_score

A student earns a lemma only if the kernel verified their lemma of that name, stating the
reference's formula in a setting with the reference's signature (judge.py); each submission is
checked in a private copy of its own files, in a worker process of its own, with a memory cap and
a deterministic bound on every solver check (workers.py, host.py).
"""

from .assignment import AssignmentError, format_points
from .outputs import class_table
from .results import FAILURES, ClassResult, ItemResult, StudentResult
from .run import (DEFAULT_FILE_BUDGET, DEFAULT_LEMMA_BUDGET, DEFAULT_MAX_FILE_KB,
                  DEFAULT_MEMORY_MB, DEFAULT_RLIMIT,
                  DEFAULT_WALL_TIMEOUT_S, GRADESCOPE_RESULTS_DIR, QUERY_TIMEOUT_MS, GradingError,
                  grade_class)

__all__ = ["grade_class", "class_table", "format_points", "ClassResult", "StudentResult",
           "ItemResult", "FAILURES", "AssignmentError", "GradingError", "DEFAULT_RLIMIT",
           "DEFAULT_MEMORY_MB", "DEFAULT_WALL_TIMEOUT_S", "DEFAULT_MAX_FILE_KB",
           "QUERY_TIMEOUT_MS", "GRADESCOPE_RESULTS_DIR", "DEFAULT_LEMMA_BUDGET",
           "DEFAULT_FILE_BUDGET"]
