"""ContractDiff reports: one :class:`DiffResult`, six formats, each a pure function.

``render_report(result, fmt, gate=..., source=...)`` is the one entry point the CLI and
the API use. ``gate`` is the ``--fail-on`` threshold (None: never fail); only JUnit
(failures) and Markdown (the gate line) read it, SARIF and GitHub levels follow the
delta's own severity. ``source`` is the file the report points at (SARIF
``artifactLocation``, GitHub ``file=``); without it, locations are logical only.
"""

from __future__ import annotations

from collections.abc import Callable

from app.diff.model import DiffResult, Severity
from app.diff.reports.github import render_github
from app.diff.reports.json_report import render_json
from app.diff.reports.junit import render_junit
from app.diff.reports.markdown import render_markdown
from app.diff.reports.sarif import render_sarif
from app.diff.reports.text import render_text

FORMATS = ("text", "json", "markdown", "sarif", "junit", "github")

Renderer = Callable[[DiffResult, "Severity | None", "str | None"], str]
_RENDERERS: dict[str, Renderer] = {
    "text": lambda result, gate, source: render_text(result),
    "json": lambda result, gate, source: render_json(result),
    "markdown": lambda result, gate, source: render_markdown(result, gate),
    "sarif": lambda result, gate, source: render_sarif(result, source),
    "junit": lambda result, gate, source: render_junit(result, gate),
    "github": lambda result, gate, source: render_github(result, source),
}


def render_report(result: DiffResult, fmt: str, *, gate: Severity | None = Severity.BREAKING,
                  source: str | None = None) -> str:
    """The report in ``fmt`` (one of :data:`FORMATS`); ValueError naming an unknown format."""
    try:
        renderer = _RENDERERS[fmt]
    except KeyError:
        raise ValueError(f"unknown report format {fmt!r} (one of: {', '.join(FORMATS)})") from None
    return renderer(result, gate, source)


__all__ = ["FORMATS", "render_github", "render_json", "render_junit", "render_markdown", "render_report",
           "render_sarif", "render_text"]
