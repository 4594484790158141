"""`novikoff grade`: grade a folder of students' .proof files (or Markdown and LaTeX homework)
against a reference assignment."""

from __future__ import annotations

import sys

__all__ = ["register"]


def register(subparsers) -> None:
    """Add the ``grade`` subcommand."""
    from .run import (DEFAULT_FILE_BUDGET, DEFAULT_LEMMA_BUDGET, DEFAULT_MAX_FILE_KB,
                      DEFAULT_MEMORY_MB, DEFAULT_RLIMIT, DEFAULT_WALL_TIMEOUT_S)

    p = subparsers.add_parser(
        "grade", help="grade a folder of students' .proof files (or Markdown and LaTeX "
                      "homework) against a reference assignment",
        description="Check every student's .proof file or Markdown or LaTeX homework (each "
                    ".proof, .md or .tex file of the folder, or each directory) in a private "
                    "copy and a worker process of its own, and give each lemma of the reference "
                    "its points when the student's lemma of that name is verified with the "
                    "reference's statement and setting "
                    "(docs/teaching.md).  Exit 0 when grading ran, whatever the grades; 1 when "
                    "a student could not be graded fairly through no fault of theirs (a file "
                    "the grader cannot read, a grader failure: a warning names each); 2 for "
                    "a usage error, a folder without submissions or a reference that does not "
                    "check cleanly.")
    p.add_argument("submissions", metavar="SUBMISSIONS_DIR",
                   help="a folder of STUDENT.proof (.md, .tex) files and/or STUDENT/ directories")
    p.add_argument("--reference", required=True, metavar="ASSIGNMENT.proof",
                   help="the assignment, proved (.proof, or Markdown or LaTeX notes): its "
                        "lemmas (and claims) are what students prove; points from "
                        "'# points: N' above a lemma or ASSIGNMENT.toml")
    p.add_argument("-o", "--out", required=True, metavar="OUT_DIR",
                   help="where the reports, summary.csv and the other outputs go")
    p.add_argument("--jobs", type=int, default=None, metavar="N",
                   help="worker processes (default: one per core)")
    p.add_argument("--memory-mb", type=int, default=DEFAULT_MEMORY_MB, metavar="N",
                   help=f"address space per submission in MB (default {DEFAULT_MEMORY_MB})")
    p.add_argument("--rlimit", type=int, default=DEFAULT_RLIMIT, metavar="N",
                   help=f"Z3 resource limit per solver check, the same on every machine "
                        f"(default {DEFAULT_RLIMIT:,})")
    p.add_argument("--lemma-budget", type=int, default=DEFAULT_LEMMA_BUDGET, metavar="N",
                   help=f"Z3 resource units for one lemma's checks together; a lemma that "
                        f"spends them is 'timed out' (default {DEFAULT_LEMMA_BUDGET:,})")
    p.add_argument("--file-budget", type=int, default=DEFAULT_FILE_BUDGET, metavar="N",
                   help=f"Z3 resource units for a file's lemmas together; after it each lemma "
                        f"gets a tenth of --lemma-budget (default {DEFAULT_FILE_BUDGET:,})")
    p.add_argument("--wall-timeout", type=float, default=DEFAULT_WALL_TIMEOUT_S, metavar="S",
                   help=f"seconds per submission, a backstop (default {DEFAULT_WALL_TIMEOUT_S:g})")
    p.add_argument("--max-file-kb", type=int, default=DEFAULT_MAX_FILE_KB, metavar="N",
                   help=f"largest file copied from a submission (default {DEFAULT_MAX_FILE_KB})")
    p.add_argument("--support", action="append", default=[], metavar="PATH",
                   help="a file or directory beside the reference that every student gets "
                        "(repeatable; none by default)")
    p.add_argument("--gradescope", action="store_true",
                   help="also write STUDENT.results.json in Gradescope's format (and "
                        "/autograder/results/results.json for a single submission there)")
    p.add_argument("--junit", action="store_true", help="also write junit.xml")
    p.add_argument("--student", action="append", default=None, metavar="NAME",
                   help="grade only this student of the folder (repeatable); the other "
                        "students' rows of summary.csv and junit.xml in OUT_DIR are kept")
    p.add_argument("--late", action="append", default=[], metavar="NAME",
                   help="mark this student's submission late (repeatable): shown in the "
                        "table, summary.csv, junit.xml and Gradescope's output; no penalty")
    p.add_argument("--roster", metavar="FILE.csv",
                   help="a CSV file with the columns student and late (yes/no, true/false, "
                        "1/0): marks the late submissions")
    p.add_argument("--overrides", metavar="FILE.csv",
                   help="a CSV file with the columns student, item, points, reason: the "
                        "instructor's points for those items, applied after grading")
    p.add_argument("--partial-credit", action="store_true",
                   help="a lemma that states the assignment's statement in its setting but is "
                        "not verified earns its points' share per verified check (off by "
                        "default)")
    p.add_argument("--require-certificates", action="store_true",
                   help="count a check as verified only if a stored certificate backs every "
                        "decision it rests on (docs/certificates.md), none a solver alone")
    p.add_argument("--progress", action="store_true",
                   help="draw a progress bar on stderr (default: when stderr is a terminal)")
    p.add_argument("-q", "--quiet", action="store_true", help="print no table")
    p.set_defaults(handler=_grade)


def _grade(args) -> int:
    from ..errors import InvalidArgument
    from . import GradingError, class_table, grade_class
    from .outputs import printable

    try:
        result = grade_class(args.submissions, args.reference, args.out, jobs=args.jobs,
                             memory_mb=args.memory_mb, rlimit=args.rlimit,
                             lemma_budget=args.lemma_budget, file_budget=args.file_budget,
                             wall_timeout_s=args.wall_timeout, max_file_kb=args.max_file_kb,
                             support=args.support, gradescope=args.gradescope,
                             junit=args.junit,
                             progress=args.progress or sys.stderr.isatty(),
                             students=args.student, late=args.late, roster=args.roster,
                             overrides=args.overrides, partial_credit=args.partial_credit,
                             require_certificates=args.require_certificates)
    except InvalidArgument as exc:
        print(f"novikoff grade: error: {printable(str(exc))}", file=sys.stderr)
        return 2
    except GradingError as exc:
        print(f"novikoff grade: {printable(str(exc))}", file=sys.stderr)
        return 1
    except OSError as exc:  # an output could not be written (a full disk, a read-only file)
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"novikoff grade: cannot write {printable(where)}{exc.strerror or exc}",
              file=sys.stderr)
        return 1
    for warning in result.warnings:
        print(f"novikoff grade: warning: {printable(warning)}", file=sys.stderr)
    if not args.quiet:
        print(class_table(result))
        print(f"\nwrote {len(result.files)} files to {printable(str(result.out_dir))}")
    for student in result.grader_problems:
        print(f"novikoff grade: warning: {printable(student.name)} was not graded fairly: "
              f"{printable(student.grader_problem)}", file=sys.stderr)
    return 1 if result.grader_problems else 0
