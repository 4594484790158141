"""The notes front end: proofs checked straight from Markdown and LaTeX lecture notes and homework.

A document's `novikoff` blocks give the setting (in .proof syntax), a notation table and a
reasons table; its displayed derivations are read by a LaTeX grammar of their own into the same
syntax tree as .proof files, so the same elaborator, kernel, diagnostics and reports apply.
"""

from .document import NOTES_SUFFIXES, has_block
from .reader import NotesFile, read_notes

__all__ = ["NOTES_SUFFIXES", "NotesFile", "has_block", "read_notes"]
