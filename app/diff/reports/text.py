"""``text``: a changelog a person reads in a terminal or a release note.

One header line (and, when prompts or resources changed, a second one that counts the tool
changes apart and the prompt and resource changes by rule), then one line per delta
``[SEVERITY] tool/action field: description (before → after)``, each severity's tool deltas
first; three or more prompt/resource deltas of one rule are one line (``[BREAKING] 100
resources removed: a, b, c, d, e and 95 more``). Then, if any, the ignored deltas with their
reasons. Every line is one line (line breaks in server text become spaces), so the output
greps well.
"""

from __future__ import annotations

from app.diff.model import Delta, DiffResult, IgnoredDelta
from app.diff.reports.common import Group, arrange, change, headline, ignore_note, split_counts, subject, visible


def delta_line(delta: Delta) -> str:
    """``[BREAKING] billing/get_invoice actions.get_invoice.input.currency: ... (optional → required)``.

    No ``/action`` for a plain tool; only the field for prompts and resources (no tool);
    no parenthesis when neither side has a value; ``(none)`` for the missing side."""
    line = f"[{delta.severity.value}] {visible(subject(delta))}: {visible(delta.description)}"
    shown = change(delta.before, delta.after)
    return f"{line} ({visible(shown)})" if shown is not None else line


def group_line(group: Group) -> str:
    """``[BREAKING] 100 resources removed: test://r/1, test://r/2, ... and 95 more``."""
    return f"[{group.severity.value}] {group.label}: {visible(group.items())}"


def ignored_line(ignored: IgnoredDelta) -> str:
    """The delta's own line, indented, then why it does not count."""
    return f"  {delta_line(ignored.delta)} — ignored: {ignore_note(ignored)}"


def render_text(result: DiffResult) -> str:
    """Header, delta lines, then an ``Ignored (N):`` block after a blank line."""
    lines = [headline(result)]
    split = split_counts(result)
    if split is not None:
        lines.append(f"  {split}")
    lines += [group_line(entry) if isinstance(entry, Group) else delta_line(entry) for entry in arrange(result.deltas)]
    if result.ignored:
        lines += ["", f"Ignored ({len(result.ignored)}):", *(ignored_line(item) for item in result.ignored)]
    return "\n".join(lines) + "\n"
