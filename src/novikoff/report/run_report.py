"""The HTML report of a monitored run (`novikoff run DATA --report DIR`): what the run did, every
lemma it checked (with its checks, undetermined points, violations, and where it stopped
applying), the lemmas it could not monitor and why, and the figures of run_plots inline.

One standalone page, DIR/run.html: inline CSS and SVG, no script, no network.  Everything that
comes from a proof file or the data's name is escaped.
"""

from __future__ import annotations

import tempfile
from html import escape
from pathlib import Path

from ..errors import InvalidArgument, NovikoffError

__all__ = ["write_run_report"]

_CSS = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 70em; color: #222; }
h1 { font-size: 1.5em; } h2 { font-size: 1.15em; margin-top: 1.6em; }
table { border-collapse: collapse; margin: 0.5em 0; }
td, th { border: 1px solid #ccc; padding: 0.25em 0.6em; text-align: left; vertical-align: top;
         overflow-wrap: anywhere; }
th { background: #f3f3f3; } td.num { text-align: right; font-variant-numeric: tabular-nums; }
code { font-family: ui-monospace, monospace; }
.ok { color: #176b2c; font-weight: 600; } .bad { color: #a31515; font-weight: 600; }
.na { color: #8a5a00; } .figure svg { max-width: 100%; height: auto; }
"""


def _number(v) -> str:
    if v is None:
        return "–"
    if isinstance(v, float):
        return f"{v:.6g}"
    return str(v)


def _figure(X, y, result) -> str:
    """The figures as an inline <svg>, or a sentence saying why there are none."""
    from .run_plots import plot_run
    with tempfile.TemporaryDirectory() as tmp:  # plot_run writes files: read the SVG back
        try:
            svg = plot_run(X, y, result, Path(tmp) / "run.svg").read_text(encoding="utf-8")
        except NovikoffError as err:  # matplotlib missing, or a run without an update log
            return f"<p>No figures: {escape(str(err))}</p>"
    return '<div class="figure">' + svg[svg.find("<svg"):] + "</div>"


def _summary_rows(result, data: str) -> list:
    rows = [("data", f"{data + ': ' if data else ''}{result.n} examples, d = {result.d}"),
            ("run", f"{result.variant} perceptron, {'cyclic' if result.cyclic else 'online'}, "
                    f"{result.epochs} epoch(s), {result.visits} visits"
                    + (", converged" if result.converged else "")),
            ("mistakes", _number(result.mistakes)),
            ("bound", _number(result.bound)),
            ("gamma", _number(result.gamma)), ("R", _number(result.R)),
            ("checks", _number(result.checks))]
    if result.td is not None and not result.separable:
        rows.append(("TD", _number(result.td)))
    return rows


def _lemma_rows(monitor: dict) -> str:
    out = []
    for m in monitor["monitored"]:
        if m["violations"]:
            verdict = f'<span class="bad">{m["violations"]} violation(s)</span>'
        elif not m["applies"]:
            verdict = f'<span class="na">not applicable: {escape(str(m["inapplicable"]))}</span>'
        else:
            verdict = '<span class="ok">holds</span>'
        out.append(f"<tr><td><code>{escape(m['lemma'])}</code></td>"
                   f"<td><code>{escape(m['statement'])}</code></td>"
                   f"<td>{escape(m['where'])}</td><td class=\"num\">{m['checks']}</td>"
                   f"<td class=\"num\">{m['undetermined']}</td><td>{verdict}</td>"
                   f"<td>{escape(m['source'])}</td></tr>")
    return "".join(out)


def write_run_report(X, y, result, directory, *, data: str = "") -> Path:
    """Write DIR/run.html for a monitored run; return its path."""
    if result.monitor is None:
        raise InvalidArgument("report: the run was made with checks off; there is nothing to "
                              "report")
    directory = Path(directory)
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InvalidArgument(f"report={str(directory)!r}: {exc.strerror or exc}") from None
    monitor = result.monitor
    violations = monitor["violations"]
    title = f"Monitored run{': ' + data if data else ''}"
    summary = "".join(f"<tr><th>{escape(k)}</th><td>{escape(v)}</td></tr>"
                      for k, v in _summary_rows(result, data))
    verdict = (f'<p class="bad">{len(violations)} violation(s): '
               + "; ".join(escape(str(v.get("message", v))) for v in violations[:5]) + "</p>"
               if violations else '<p class="ok">No violation: every monitored lemma held at '
                                  'every point where its assumptions held.</p>')
    missing = "".join(f"<tr><td><code>{escape(n['lemma'])}</code></td>"
                      f"<td>{escape(n['reason'])}</td></tr>"
                      for n in monitor["not_monitorable"])
    page = f"""<!DOCTYPE html>
<html xmlns="http://www.w3.org/1999/xhtml" lang="en">
<head>
<meta charset="utf-8"/>
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:"/>
<title>{escape(title)}</title>
<style>{_CSS}</style>
</head>
<body>
<h1>{escape(title)}</h1>
{verdict}
<table>{summary}</table>
<h2>Figures</h2>
{_figure(X, y, result)}
<h2>Lemmas checked at every update</h2>
<table><tr><th>lemma</th><th>statement</th><th>where</th><th>checks</th><th>undetermined</th>
<th>verdict</th><th>source</th></tr>{_lemma_rows(monitor)}</table>
<h2>Not monitored</h2>
{"<table><tr><th>lemma</th><th>why</th></tr>" + missing + "</table>" if missing
 else "<p>Every lemma given was monitored.</p>"}
</body>
</html>
"""
    path = directory / "run.html"
    try:
        path.write_text(page, encoding="utf-8")
    except OSError as exc:
        raise InvalidArgument(f"report={str(directory)!r}: {exc.strerror or exc}") from None
    return path

