"""ContractDiff reports: one :class:`DiffResult`, six formats, each a pure function.

``render_report(result, fmt, gate=..., source=...)`` is the one entry point the CLI and
the API use. ``gate`` is the ``--fail-on`` threshold (None: never fail); only JUnit
(failures) and Markdown (the gate line) read it, SARIF and GitHub levels follow the
delta's own severity. ``source`` is the file the report points at (SARIF
``artifactLocation``, GitHub ``file=``); without it, locations are logical only.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from app.diff.model import DiffResult, Severity
from app.diff.report_formats import FORMATS

if TYPE_CHECKING:
    from app.diff.reports.github import render_github
    from app.diff.reports.json_report import render_json
    from app.diff.reports.junit import render_junit
    from app.diff.reports.markdown import render_markdown
    from app.diff.reports.sarif import render_sarif
    from app.diff.reports.text import render_text


# Each format's module is imported when a report in it is rendered (a command's --help lists
# FORMATS without loading any renderer).
_MODULES = {"text": "text", "json": "json_report", "markdown": "markdown", "sarif": "sarif", "junit": "junit",
            "github": "github"}


def _renderer(fmt: str) -> Any:
    return getattr(importlib.import_module(f"app.diff.reports.{_MODULES[fmt]}"), f"render_{fmt}")


def render_report(result: DiffResult, fmt: str, *, gate: Severity | None = Severity.BREAKING,
                  source: str | None = None) -> str:
    """The report in ``fmt`` (one of :data:`FORMATS`); ValueError naming an unknown format."""
    if fmt not in _MODULES:
        raise ValueError(f"unknown report format {fmt!r} (one of: {', '.join(FORMATS)})")
    render = _renderer(fmt)
    if fmt in ("markdown", "junit"):
        return str(render(result, gate))
    if fmt in ("sarif", "github"):
        return str(render(result, source))
    return str(render(result))


def __getattr__(name: str) -> Any:
    """``render_<format>`` on first use."""
    fmt = name.removeprefix("render_")
    if name.startswith("render_") and fmt in _MODULES:
        return _renderer(fmt)
    raise AttributeError(f"module 'app.diff.reports' has no attribute {name!r}")


__all__ = ["FORMATS", "render_github", "render_json", "render_junit", "render_markdown", "render_report",
           "render_sarif", "render_text"]
