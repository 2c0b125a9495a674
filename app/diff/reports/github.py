"""``github``: GitHub Actions workflow commands, shown as annotations on the run and the PR.

One command per delta: BREAKING ``::error``, RISKY ``::warning``, SAFE and COSMETIC
``::notice`` (the gate decides the exit code, not the level). Ignored deltas get no
annotation; the closing ``::notice`` summary (the text report's header) counts them.
Escaping follows the runner's rules: data ``%``, CR, LF; property values also ``:`` and ``,``.
"""

from __future__ import annotations

from app.diff.model import Delta, DiffResult, Severity
from app.diff.reports.common import change, counts, report_name, scope, visible_lines, with_hint

COMMANDS = {Severity.BREAKING: "error", Severity.RISKY: "warning", Severity.SAFE: "notice",
            Severity.COSMETIC: "notice"}


def escape_data(text: str) -> str:
    """The message after ``::``: ``%`` first, so the escapes it adds stay literal."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """A ``key=value`` property: also ``:`` (ends the properties) and ``,`` (separates them)."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def command(name: str, message: str, *, title: str, source: str | None) -> str:
    props = ([f"file={escape_property(source)}"] if source else []) + [f"title={escape_property(title)}"]
    return f"::{name} {','.join(props)}::{escape_data(message)}"


def annotation(delta: Delta, source: str | None) -> str:
    """``::error title=<rule> <tool/action>::<description> (<before> → <after>). <hint>``."""
    shown = change(delta.before, delta.after)
    text = f"{delta.description} ({shown})" if shown is not None else delta.description
    title = visible_lines(f"{delta.rule} {scope(delta) or delta.field}")
    return command(COMMANDS[delta.severity], visible_lines(with_hint(text, delta.hint)), title=title, source=source)


def render_github(result: DiffResult, source: str | None = None) -> str:
    """Annotations, then one ``::notice`` with the counts (``no changes`` included)."""
    lines = [annotation(delta, source) for delta in result.deltas]
    lines.append(command("notice", counts(result), title=report_name(result), source=None))
    return "\n".join(lines) + "\n"
