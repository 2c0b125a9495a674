"""``text``: a changelog a person reads in a terminal or a release note.

One header line, then one line per delta ``[SEVERITY] tool/action field: description
(before → after)``; then, if any, the ignored deltas with their reasons. Every delta
stays on one line (line breaks in server text become spaces), so the output greps well.
"""

from __future__ import annotations

from app.diff.model import Delta, DiffResult, IgnoredDelta
from app.diff.reports.common import change, headline, ignore_note, subject, visible


def delta_line(delta: Delta) -> str:
    """``[BREAKING] billing/get_invoice actions.get_invoice.input.currency: ... (optional → required)``.

    No ``/action`` for a plain tool; only the field for prompts and resources (no tool);
    no parenthesis when neither side has a value; ``(none)`` for the missing side."""
    line = f"[{delta.severity.value}] {visible(subject(delta))}: {visible(delta.description)}"
    shown = change(delta.before, delta.after)
    return f"{line} ({visible(shown)})" if shown is not None else line


def ignored_line(ignored: IgnoredDelta) -> str:
    """The delta's own line, indented, then why it does not count."""
    return f"  {delta_line(ignored.delta)} — ignored: {ignore_note(ignored)}"


def render_text(result: DiffResult) -> str:
    """Header, delta lines, then an ``Ignored (N):`` block after a blank line."""
    lines = [headline(result), *(delta_line(delta) for delta in result.deltas)]
    if result.ignored:
        lines += ["", f"Ignored ({len(result.ignored)}):", *(ignored_line(item) for item in result.ignored)]
    return "\n".join(lines) + "\n"
