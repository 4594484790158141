"""Reports: terminal text and JSON."""

from .terminal import render_check, summary_counts, summary_line

__all__ = ["render_check", "summary_line", "summary_counts", "check_json"]


def check_json(reports, elapsed: float) -> dict:
    """The JSON document of `novikoff check --json`."""
    return {
        "files": [{"path": r.path, "error": None if r.error is None else {
            "file": r.error.file, "line": r.error.line, "column": r.error.column,
            "message": r.error.message, "text": r.error.text},
            **({} if r.notes is None else {"notes": _notes_json(r.notes)})} for r in reports],
        "lemmas": [lemma.to_json() for r in reports for lemma in r.lemmas],
        "steps": [s.to_json() for r in reports for s in r.steps],
        "summary": summary_counts(reports, elapsed),
        "seconds": round(elapsed, 3),
    }


def _notes_json(notes: dict) -> dict:
    """What a Markdown or LaTeX document held: counts, and each link not understood."""
    out = {k: v for k, v in notes.items() if k != "not understood"}
    out["not understood"] = [{"line": line, "column": col, "message": message}
                             for line, col, message in notes.get("not understood", [])]
    return out
