"""Find the students in a folder, and copy one student's files into a private directory.

Each `.proof`, `.md` or `.tex` file directly in the folder is a student (named by its stem);
each directory is a student (named by the directory) whose file to grade is the one with the
assignment's file name, else the one named like the assignment in another of those formats
(`hw3.tex` for `hw3.md`), else their only `.proof` file or Markdown or LaTeX document with a
novikoff block.  Hidden entries (starting with "."), in the folder and in a student's directory,
are skipped.

Isolation: a student's file is checked in a private directory holding copies of that student's
own regular files (and the instructor's support files) only, so `from bob import thm` or a
witness path leading to another student's files finds nothing.  Symbolic links are never
followed (a file is opened with O_NOFOLLOW, directories are walked without following links), and
special files (pipes, devices) are never opened for reading.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from ..notes import NOTES_SUFFIXES, has_block

__all__ = ["Submission", "Prepared", "find_submissions", "prepare", "readable_name",
           "GRADER_CANNOT_READ", "SUBMISSION_SUFFIXES", "submission_stem"]

# What a submission (and the reference) may be: a .proof file, or Markdown or LaTeX notes whose
# novikoff block holds the setting (docs/notes.md); the same kernel checks all three.
SUBMISSION_SUFFIXES = (".proof",) + NOTES_SUFFIXES
MAX_FILES = 500  # per student directory: more are left out, with a note


@dataclass(frozen=True)
class Submission:
    """A student: name (the file's stem or the directory's name), the path found, its kind
    ("file" or "directory"), and a problem that stops grading before any checking."""

    name: str
    path: str
    kind: str
    problem: str = ""

    @property
    def shown(self) -> str:
        """The submission as the instructor sees it in the folder."""
        return Path(self.path).name + ("/" if self.kind == "directory" else "")


@dataclass
class Prepared:
    """A student's private directory, filled: the file to check (relative to it), or why there
    is none; notes on files left out.  unreadable: files the grader listed but could not read
    (permissions, a file removed while grading): the instructor's problem, not the student's."""

    graded: str | None = None
    problem: str = ""
    notes: list = field(default_factory=list)
    unreadable: list = field(default_factory=list)


def readable_name(name: str) -> str:
    """A name from the file system as it can be shown and written anywhere (CSV, JSON, XML,
    HTML, a terminal): bytes that are not UTF-8 as U+FFFD, and characters that are not
    printable (line breaks, escape sequences, zero-width and bidirectional controls, which
    would let one name pass for another) as escapes such as \\u200b."""
    text = name.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    return "".join(c if c.isprintable() else _escape(c) for c in text)


def _escape(c: str) -> str:
    return f"\\u{ord(c):04x}" if ord(c) < 0x10000 else f"\\U{ord(c):08x}"


def utf8_name(name: str) -> bool:
    """Whether a name from the file system is valid UTF-8 (the checker and the reports write
    the graded file's name as text)."""
    try:
        name.encode("utf-8")
        return True
    except UnicodeEncodeError:
        return False


def submission_stem(name: str) -> str | None:
    """The student's name of a file directly in the folder (its stem), None for a file that is
    not a submission (another suffix, or nothing before the suffix)."""
    for suffix in SUBMISSION_SUFFIXES:
        if name.endswith(suffix) and len(name) > len(suffix):
            return name[:-len(suffix)]
    return None


def find_submissions(folder: Path, skip=()) -> list:
    """The students of a folder, sorted by name.  skip: resolved paths that are not students
    (the reference, its TOML file, the output directory)."""
    skip = {os.path.realpath(p) for p in skip}  # realpath: no error on a loop of links
    found: dict = {}
    for entry in sorted(os.scandir(folder), key=lambda e: e.name):
        if entry.name.startswith("."):
            continue
        path = Path(entry.path)
        if os.path.realpath(path) in skip:
            continue
        stem = submission_stem(entry.name)
        if entry.is_symlink():
            if stem is not None or path.is_dir():
                name = readable_name(stem if stem is not None else entry.name)
                found.setdefault(name, []).append(Submission(
                    name, str(path), "link", f"{readable_name(entry.name)} is a symbolic link: "
                                             f"links are not followed; submit the file itself"))
            continue
        if entry.is_dir(follow_symlinks=False):
            name = readable_name(entry.name)
            found.setdefault(name, []).append(Submission(name, str(path), "directory"))
        elif entry.is_file(follow_symlinks=False) and stem is not None:
            name = readable_name(stem)
            found.setdefault(name, []).append(Submission(name, str(path), "file"))
    out = []
    for name, entries in sorted(found.items()):
        if len(entries) == 1:
            out.append(entries[0])
            continue
        shown = " and ".join(readable_name(e.shown) for e in entries)
        out.append(Submission(name, entries[0].path, entries[0].kind,
                              f"which file? {shown} are both submissions of {name}: keep one"))
    return out


# Why the grader could not read a file it listed (as opposed to a file the student made
# unreadable by submitting a link, a pipe or something too large).
GRADER_CANNOT_READ = "the grader cannot read it"


def _read_regular(path: Path, limit: int) -> tuple:
    """(bytes, "") of a regular file of at most `limit` bytes, or (None, why not).  The last
    component is opened without following a link; a pipe or device is not read.  A file that
    cannot be opened for another reason gets a why starting with GRADER_CANNOT_READ."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as exc:
        if exc.errno == getattr(os, "ELOOP", None) or path.is_symlink():
            return None, "a symbolic link (not followed)"
        return None, f"{GRADER_CANNOT_READ} ({exc.strerror or exc}: {path})"
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return None, "not a regular file"
        if info.st_size > limit:
            return None, f"{_size(info.st_size)}, larger than the limit of {_size(limit)}"
        with os.fdopen(fd, "rb", closefd=False) as handle:
            data = handle.read(limit + 1)
        if len(data) > limit:
            return None, f"larger than the limit of {_size(limit)}"
        return data, ""
    finally:
        os.close(fd)


def _gradable(name: str, data) -> bool:
    """Whether a file of a student's directory may be the one graded: a .proof file, or a
    Markdown or LaTeX document holding a novikoff block (data None: its content is unknown)."""
    if name.endswith(".proof"):
        return True
    suffix = Path(name).suffix
    if suffix not in NOTES_SUFFIXES:
        return False
    return data is None or has_block(data.decode("utf-8", "replace"), suffix == ".md")


def _size(n: int) -> str:
    if n >= 1 << 20:
        return f"{n / (1 << 20):.1f} MB"
    if n >= 1 << 10:
        return f"{n / (1 << 10):.0f} KB"
    return f"{n} bytes"


def _write(private: Path, relative: str, data: bytes) -> None:
    target = private / relative
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(data)


def prepare(submission: Submission, private: Path, file_name: str, max_file_bytes: int,
            support=()) -> Prepared:
    """Copy the submission's regular files into `private` (an empty directory), after the
    support files ((source path, path relative to private) pairs, which students' files never
    replace), and choose the file to grade.  file_name: the assignment's file name."""
    provided = set()
    for source, relative in support:
        _write(private, relative, Path(source).read_bytes())
        provided.add(relative)
    out = Prepared()
    if submission.problem:
        out.problem = submission.problem
        return out
    if submission.kind == "file":
        name = Path(submission.path).name
        if not utf8_name(name):
            out.problem = f"the file name {readable_name(name)} is not valid UTF-8: rename it"
            return out
        if name in provided:
            out.problem = (f"{readable_name(name)} has the name of a file the assignment "
                           f"provides: rename it")
            return out
        data, why = _read_regular(Path(submission.path), max_file_bytes)
        if data is None:
            out.problem = f"{readable_name(name)}: {why}"
            if why.startswith(GRADER_CANNOT_READ):
                out.unreadable.append(readable_name(name))
            return out
        _write(private, name, data)
        out.graded = name
        return out
    return _prepare_directory(submission, private, file_name, max_file_bytes, provided, out)


def _prepare_directory(submission: Submission, private: Path, file_name: str,
                       max_file_bytes: int, provided: set, out: Prepared) -> Prepared:
    root = Path(submission.path)
    proofs, too_big, copied, left_out = [], {}, 0, 0
    for here, dirs, files in os.walk(root, followlinks=False):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))  # .git, editors' files
        files = [f for f in files if not f.startswith(".")]
        base = Path(here)
        for d in list(dirs):
            if (base / d).is_symlink():
                dirs.remove(d)
                out.notes.append(f"left out {readable_name(str((base / d).relative_to(root)))}"
                                 f"/: a symbolic link (not followed)")
        for name in sorted(files):
            relative = str((base / name).relative_to(root))
            shown = readable_name(relative)
            if copied >= MAX_FILES:
                left_out += 1
                continue
            if relative in provided:
                out.notes.append(f"left out {shown}: the assignment provides a file of that name")
                continue
            if not utf8_name(relative):
                out.notes.append(f"left out {shown}: its name is not valid UTF-8")
                continue
            data, why = _read_regular(base / name, max_file_bytes)
            if data is None:
                if why.startswith(GRADER_CANNOT_READ):
                    out.unreadable.append(shown)
                if _gradable(name, None) and "larger than" in why:
                    too_big[relative] = why
                out.notes.append(f"left out {shown}: {why}")
                continue
            _write(private, relative, data)
            copied += 1
            if _gradable(name, data):
                proofs.append(relative)
    if left_out:
        out.notes.append(f"left out {left_out} more files (at most {MAX_FILES} are copied)")
    candidates = sorted(set(proofs) | set(too_big))
    named = [p for p in candidates if Path(p).name == file_name]
    stem = Path(file_name).stem  # the assignment's name in any of the formats
    top = [p for p in candidates if Path(p).parent == Path(".") and Path(p).stem == stem]
    if file_name in candidates:
        chosen = file_name
    elif len(named) == 1:
        chosen = named[0]
    elif len(top) == 1:
        chosen = top[0]
    elif len(candidates) == 1:
        chosen = candidates[0]
    elif not candidates:
        out.problem = (f"which file? {readable_name(submission.shown)} has no .proof file "
                       f"(nor a Markdown or LaTeX document with a novikoff block)")
        return out
    else:
        listed = ", ".join(readable_name(p) for p in candidates[:8])
        more = f" and {len(candidates) - 8} more" if len(candidates) > 8 else ""
        out.problem = (f"which file? {readable_name(submission.shown)} has {len(candidates)} "
                       f"files to grade ({listed}{more}) and none is {file_name}: name the one "
                       f"to grade {file_name}")
        return out
    if chosen in too_big:
        out.problem = f"{readable_name(chosen)}: {too_big[chosen]}"
        return out
    out.graded = chosen
    return out
