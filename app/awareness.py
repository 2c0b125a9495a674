"""The XML a model reads after a failed tool call: ``<contract_awareness>`` (how the
tool's contract changed since the known-good lockfile) and ``<validation_error>`` (what is
wrong with the arguments it just sent), exactly as DESIGN.md lays them out.

Both are wire contracts parsed back by :func:`app.errors.parse_tool_error`. Every string
that comes from a server (tool and action names, fields, descriptions, before/after,
hints, patterns, enum values) or from the model (the values it sent) goes through
:func:`app.xmltext.clean` and then :func:`~app.xmltext.escape_text` /
:func:`~app.xmltext.escape_attr`, so whatever it contains the section parses as XML and
shows no invisible character.

Decisions where DESIGN.md is silent:

- ``action=None`` means "any action": every BREAKING/RISKY delta of the tool (action-scoped
  ones first). An empty action is the same as None.
- A flat ``tool.action`` name is split only when ``action`` is None, the full name is no
  tool of the result and a prefix before a dot is (the first dot that works, left first).
- ``<contract_changes>`` is always present, possibly empty; ``<omitted_count>`` always.
- The byte cap drops trailing changes; the change-free skeleton is never dropped (with the
  default 4096 bytes it always fits, whatever the names contain).
- ``<max_severity>`` is the worst listed change, or the worst relevant one when the byte
  cap left none listed.

Pure: no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Final

from app.diff.model import Delta, DiffResult, Severity
from app.diff.rules.annotations_surface import only_less_dangerous, replacement
from app.validation import MISSING, ROOT, Problem, as_problem
from app.xmltext import clean, escape_attr, escape_text

__all__ = [
    "AWARENESS_INSTRUCTIONS",
    "CONFIRM_INSTRUCTIONS",
    "DEFAULT_MAX_BYTES",
    "DEFAULT_MAX_CHANGES",
    "MAX_CHANGES_LIMIT",
    "RECOVERY",
    "VALUE_LIMIT",
    "argument_path",
    "describe_problem",
    "instructions_for",
    "prioritise",
    "relevant_deltas",
    "removal",
    "render_awareness",
    "render_deltas",
    "render_removed",
    "render_validation_error",
    "resolve_scope",
    "show_value",
]

DEFAULT_MAX_CHANGES: Final = 5
MAX_CHANGES_LIMIT: Final = 20
DEFAULT_MAX_BYTES: Final = 4096
VALUE_LIMIT: Final = 50  # what the model sent, as shown back to it
ENUM_SHOWN: Final = 10  # allowed values listed before "and N more"

AWARENESS_INSTRUCTIONS: Final = (
    "Adjust your next call to the current contract above and call the tool again. Do not explain the error."
)
CONFIRM_INSTRUCTIONS: Final = (
    "Adjust your next call to the current contract above. Where a fix above asks you to confirm with the user, "
    "do that first; then call the tool again. Do not explain the error."
)
RECOVERY: Final = "Fix the fields above and call the tool again. Do not explain the error."

_SHOWN_SEVERITIES: Final = (Severity.BREAKING, Severity.RISKY)
_ISO_DATE: Final = re.compile(r"\d{4}-\d{2}-\d{2}")


# --------------------------------------------------------------------------- text


def _clean(text: object, limit: int | None = None) -> str:
    """A foreign string as shown: cleaned (invisible characters labelled, cut) and
    trimmed, since the parser trims element text anyway."""
    value = text if isinstance(text, str) else str(text)
    return (clean(value) if limit is None else clean(value, limit)).strip()


def _text(value: object) -> str:
    return escape_text(_clean(value))


def _attr(value: object) -> str:
    return escape_attr(_clean(value))


# --------------------------------------------------------------------------- selection


def resolve_scope(result: DiffResult, tool: str, action: str | None = None) -> tuple[str, str | None]:
    """``(tool, action)`` with a flat ``billing.get_invoice`` split when that is what it
    must mean: no action given, ``tool`` itself unknown to the result, a dotted prefix known.
    Tool names may contain dots, so the exact name always wins."""
    action = action or None
    if action is not None or "." not in tool:
        return tool, action
    known = result.tool_names
    if tool in known:
        return tool, None
    for match in re.finditer(r"\.", tool):
        head, tail = tool[: match.start()], tool[match.end() :]
        if head in known and tail:
            return head, tail
    return tool, None


def _order(delta: Delta) -> tuple[int, int, str, str]:
    """BREAKING first, action-scoped before tool-global, then field; the id breaks ties."""
    return (delta.severity.rank, 0 if delta.action is not None else 1, delta.field, delta.id)


def _shown(delta: Delta) -> bool:
    """What a model is shown: BREAKING and RISKY changes, except annotation changes that only
    make the tool look less dangerous (read-only, non-destructive, ...): the model has nothing
    to do differently, and "do not trust this claim" would only distract it."""
    return delta.severity in _SHOWN_SEVERITIES and not only_less_dangerous(delta)


def _select(deltas: Iterable[Delta], tool: str, action: str | None) -> list[Delta]:
    """The shown deltas of ``tool``: of ``action`` exactly (never a prefix) plus the
    tool-global ones; all of them when ``action`` is None."""
    return sorted(
        (
            delta
            for delta in deltas
            if delta.tool == tool
            and (action is None or delta.action is None or delta.action == action)
            and _shown(delta)
        ),
        key=_order,
    )


_INDEX: Final = re.compile(r"\[[^\]]*\]")


def argument_path(delta: Delta) -> str | None:
    """The argument a delta is about, in the dotted form of validation problems:
    ``input.address.city`` and ``actions.get.input.address.city`` -> ``address.city``,
    ``input.tags[]`` -> ``tags[]``, ``input`` -> ``(root)``; None for a field outside the
    input (``description``, ``output.total``)."""
    prefix = f"actions.{delta.action}.input" if delta.action is not None else "input"
    if delta.field == prefix:
        return ROOT
    if delta.field.startswith(prefix + "."):
        return delta.field[len(prefix) + 1:]
    return None


def _segments(path: str) -> list[str]:
    """``items[2].sku`` -> [items, [], sku]: array positions compare equal to ``[]``."""
    flat = _INDEX.sub(".[]", path)
    return [segment for segment in flat.split(".") if segment]


def _about(delta: Delta, failed: Sequence[list[str]]) -> bool:
    """Whether an input delta is about one of the failed arguments: the same place, or one
    inside the other (a delta on ``address`` explains a problem at ``address.city``, and the
    other way round). ``*`` (extra properties) matches any name."""
    if delta.category != "input":
        return False
    where = argument_path(delta)
    if where is None:
        return False
    mine = [] if where == ROOT else _segments(where)
    for problem in failed:
        if not mine or not problem:
            if not mine and not problem:
                return True
            continue
        size = min(len(mine), len(problem))
        if all(a == b or "*" in (a, b) for a, b in zip(mine[:size], problem[:size], strict=True)):
            return True
    return False


def prioritise(deltas: Sequence[Delta], failed: Iterable[str] = ()) -> list[Delta]:
    """Deltas for a failed call, most useful first: those about the arguments that failed
    (``failed``: the problems' dotted paths), then the other BREAKING input deltas, then
    the rest; each part keeps the section order."""
    problems = [[] if path == ROOT else _segments(path) for path in failed]
    if not problems:
        return list(deltas)

    def tier(delta: Delta) -> int:
        if _about(delta, problems):
            return 0
        return 1 if delta.category == "input" and delta.severity is Severity.BREAKING else 2

    return sorted(deltas, key=tier)


def relevant_deltas(result: DiffResult, tool: str, action: str | None = None,
                    failed: Iterable[str] = ()) -> list[Delta]:
    """The deltas a ``<contract_awareness>`` for (tool, action) is built from, in section
    order (before the caps); with ``failed`` (the dotted paths of a validation error's
    problems), the deltas about those arguments first (:func:`prioritise`)."""
    tool, action = resolve_scope(result, tool, action)
    return prioritise(_select(result.deltas, tool, action), failed)


# --------------------------------------------------------------------------- awareness


def _lock_label(lock_version: int | None, locked_at: str | None) -> str:
    """`` (v7, 2026-11-20)``: what is known about the lockfile; empty when nothing."""
    parts: list[str] = []
    if lock_version is not None:
        parts.append(f"v{_clean(lock_version, 20)}")
    if locked_at:
        stamp = str(locked_at).strip()
        date = _ISO_DATE.match(stamp)
        parts.append(date.group() if date else _clean(stamp.partition("T")[0], 32))
    return f" ({', '.join(parts)})" if parts else ""


def _change_lines(delta: Delta) -> list[str]:
    """One ``<change>`` element (4-space indent); elements whose value is null omitted."""
    lines = [
        f'    <change severity="{_attr(delta.severity.value)}" field="{_attr(delta.field)}" rule="{_attr(delta.rule)}">'
    ]
    optional = (
        ("description", delta.description),
        ("before", delta.before),
        ("after", delta.after),
        ("fix", delta.hint),
    )
    lines.extend(f"      <{tag}>{_text(value)}</{tag}>" for tag, value in optional if value is not None)
    lines.append("    </change>")
    return lines


def instructions_for(deltas: Sequence[Delta], tool: str) -> str:
    """What the model is told to do, in agreement with every listed fix: call the replacement
    when a listed change names one for this tool (deprecated in favour of another tool),
    confirm with the user first when a listed fix asks for it, else adjust and call again."""
    replacements = [found for delta in deltas if (found := replacement(delta)) is not None and found != tool]
    if any(_removes(delta, tool) for delta in deltas):
        return _removed_instructions(tool, replacements[0] if replacements else None)
    if replacements:
        return (f'Call "{_clean(replacements[0])}" instead of "{_clean(tool)}", with arguments that fit its '
                "contract. Do not explain the error.")
    if any("confirm with the user" in (delta.hint or "").lower() for delta in deltas):
        return CONFIRM_INSTRUCTIONS
    return AWARENESS_INSTRUCTIONS


def _removes(delta: Delta, tool: str) -> bool:
    """Whether ``delta`` says that ``tool`` itself is gone (removed, or renamed away)."""
    return (delta.rule == "tool.removed" and delta.tool == tool) or (
        delta.rule == "tool.renamed" and delta.before == tool)


def _removed_instructions(tool: str, instead: str | None) -> str:
    if instead is not None:
        return (f'Do not call "{_clean(tool)}" again: it no longer exists. Call "{_clean(instead)}" instead, with '
                "arguments that fit its contract. Do not explain the error.")
    return (f'Do not call "{_clean(tool)}" again: it no longer exists. Choose another available tool that fits the '
            "task, or tell the user that this action is no longer available.")


def _section(head: Sequence[str], counts: tuple[int, int], severity: Severity, changes: Sequence[str],
             instructions: str = AWARENESS_INSTRUCTIONS, tail: Sequence[str] = ()) -> str:
    listed, omitted = counts
    lines = [
        "<contract_awareness>",
        *head,
        f"  <change_count>{listed}</change_count>",
        f"  <omitted_count>{omitted}</omitted_count>",
        f"  <max_severity>{severity.value}</max_severity>",
        "  <contract_changes>",
        *changes,
        "  </contract_changes>",
        *tail,
        f"  <instructions>{escape_text(instructions)}</instructions>",
        "</contract_awareness>",
    ]
    return "\n".join(lines)


def _head(tool: str, action: str | None, lock_label: str) -> list[str]:
    note = f'The contract of tool "{_clean(tool)}" changed since the known-good lockfile{lock_label}.'
    head = [f"  <system_note>{escape_text(note)}</system_note>"]
    if action is not None:
        head.append(f"  <action>{_text(action)}</action>")
    return head


def render_deltas(
    deltas: Sequence[Delta],
    tool: str,
    action: str | None = None,
    max_changes: int = DEFAULT_MAX_CHANGES,
    max_bytes: int = DEFAULT_MAX_BYTES,
    *,
    lock_version: int | None = None,
    locked_at: str | None = None,
) -> str:
    """The section for deltas already selected and ordered (:func:`relevant_deltas`);
    empty string when there are none. At most ``max_changes`` (clamped to 1..20) changes
    and ``max_bytes`` UTF-8 bytes: trailing changes are dropped until it fits."""
    if not deltas:
        return ""
    head = _head(tool, action or None, _lock_label(lock_version, locked_at))
    return _fit(deltas, head, max_changes, max_bytes, lambda listed: instructions_for(listed, tool))


def _fit(deltas: Sequence[Delta], head: Sequence[str], max_changes: int, max_bytes: int,
         instructions: Callable[[Sequence[Delta]], str], tail: Sequence[str] = ()) -> str:
    """The section with as many leading changes as the caps allow (the skeleton always)."""
    limit = min(max(int(max_changes), 1), MAX_CHANGES_LIMIT)
    blocks = ["\n".join(_change_lines(delta)) for delta in deltas[:limit]]
    worst = min((delta.severity for delta in deltas), key=lambda s: s.rank, default=Severity.BREAKING)
    for listed in range(len(blocks), -1, -1):
        shown = deltas[:listed]
        worst_listed = min((d.severity for d in shown), key=lambda s: s.rank) if shown else worst
        text = _section(head, (listed, len(deltas) - listed), worst_listed, blocks[:listed], instructions(shown),
                        tail)
        if listed == 0 or len(text.encode("utf-8")) <= max_bytes:
            return text
    raise AssertionError("unreachable")  # pragma: no cover


def render_awareness(
    result: DiffResult,
    tool: str,
    action: str | None = None,
    max_changes: int = DEFAULT_MAX_CHANGES,
    max_bytes: int = DEFAULT_MAX_BYTES,
    *,
    lock_version: int | None = None,
    locked_at: str | None = None,
    failed: Iterable[str] = (),
) -> str:
    """The ``<contract_awareness>`` section of DESIGN.md for one (tool, action) of a diff
    against the known-good lockfile (``lock_version``/``locked_at`` name it in the note);
    empty string when no BREAKING or RISKY change concerns that call. ``failed``: the dotted
    paths of the arguments a validation error found wrong, whose changes come first. For a
    tool the result lists as removed, the section that says so (:func:`render_removed`)."""
    tool, action = resolve_scope(result, tool, action)
    if tool in result.tools.removed:
        return render_removed(result, tool, max_changes, max_bytes, lock_version=lock_version, locked_at=locked_at)
    deltas = prioritise(_select(result.deltas, tool, action), failed)
    return render_deltas(deltas, tool, action, max_changes, max_bytes, lock_version=lock_version, locked_at=locked_at)


def removal(result: DiffResult, tool: str) -> tuple[Delta | None, str | None]:
    """How ``tool`` left the surface (its ``tool.renamed`` or ``tool.removed`` delta, ignored
    ones included) and the tool that replaces it (a rename's new name, or the tool its
    deprecation notice named); (None, None) when the result does not list it as removed."""
    if tool not in result.tools.removed:
        return None, None
    every = (*result.deltas, *(item.delta for item in result.ignored))
    gone = next((d for d in every if d.rule == "tool.renamed" and d.before == tool), None)
    gone = gone or next((d for d in every if d.rule == "tool.removed" and d.tool == tool), None)
    return gone, replacement(gone) if gone is not None else None


def render_removed(
    result: DiffResult,
    tool: str,
    max_changes: int = DEFAULT_MAX_CHANGES,
    max_bytes: int = DEFAULT_MAX_BYTES,
    *,
    lock_version: int | None = None,
    locked_at: str | None = None,
) -> str:
    """The ``<contract_awareness>`` for a call to a tool the lockfile knows and the live surface
    lacks: that it was removed, the tool that replaces it (``<replacement>``, when a rename or
    its deprecation notice names one) and, for a rename, the BREAKING changes of the new
    tool's arguments. Empty string when ``result`` does not list ``tool`` as removed."""
    if tool not in result.tools.removed:
        return ""
    gone, instead = removal(result, tool)
    deltas: list[Delta] = [gone] if gone is not None else []
    if instead is not None and gone is not None and gone.rule == "tool.renamed":
        deltas += [d for d in _select(result.deltas, instead, None)
                   if d is not gone and d.category == "input" and d.severity is Severity.BREAKING]
    note = f'Tool "{_clean(tool)}" was removed since the known-good lockfile{_lock_label(lock_version, locked_at)}.'
    tail: list[str] = []
    if instead is not None:
        note += f' "{_clean(instead)}" replaces it.'
        tail.append(f"  <replacement>{_text(instead)}</replacement>")
    head = [f"  <system_note>{escape_text(note)}</system_note>"]
    told = _removed_instructions(tool, instead)
    return _fit(deltas, head, max_changes, max_bytes, lambda listed: told, tail)


# --------------------------------------------------------------------------- values


def _number(value: float) -> str:
    try:
        return _clean(repr(value), VALUE_LIMIT)
    except ValueError:  # an int beyond Python's str conversion limit
        return "(a very large number)"


def show_value(value: Any) -> str:
    """A value as the model is shown it: strings in single quotes cut to 50 characters,
    ``(missing)``, ``array(N)``, ``object(N keys)``, numbers as is, true/false/null."""
    if value is MISSING:
        return "(missing)"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return _number(value)
    if isinstance(value, str):
        return f"'{clean(value, VALUE_LIMIT)}'"
    if isinstance(value, (list, tuple)):
        return f"array({len(value)})"
    if isinstance(value, Mapping):
        return f"object({len(value)} {'key' if len(value) == 1 else 'keys'})"
    return _clean(repr(value), VALUE_LIMIT)


def _values(values: Any) -> str:
    """``'EUR', 'USD'``: allowed values, the first ten, then how many more."""
    items = list(values) if isinstance(values, (list, tuple)) else [values]
    shown = ", ".join(show_value(item) for item in items[:ENUM_SHOWN])
    if len(items) > ENUM_SHOWN:
        shown += f" and {len(items) - ENUM_SHOWN} more"
    return _clean(shown)


_TYPE_NAMES: Final = {
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "a boolean (true or false)",
    "array": "an array",
    "object": "an object",
    "null": "null",
}


def _or(words: Sequence[str]) -> str:
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} or {words[-1]}"


def _is_type_spec(value: Any) -> bool:
    items = value if isinstance(value, (list, tuple)) else [value]
    return bool(items) and all(isinstance(item, str) and item in _TYPE_NAMES for item in items)


def _types(value: Any) -> str:
    """``an integer or null``; unknown type names shown cleaned."""
    items = value if isinstance(value, (list, tuple)) else [value]
    words = [_TYPE_NAMES.get(item, _clean(item, 40)) if isinstance(item, str) else show_value(item) for item in items]
    return _or(words) if words else "a value"


def _plural(count: Any, word: str) -> str:
    return f"{show_value(count)} {word}" + ("" if count == 1 else "s")


# --------------------------------------------------------------------------- problems

_FORMATS: Final = {
    "email": "a valid email address",
    "idn-email": "a valid email address",
    "uri": "a valid absolute URI (e.g. https://example.com/path)",
    "uri-reference": "a valid URI or relative reference",
    "iri": "a valid absolute IRI",
    "uuid": "a valid UUID (e.g. 123e4567-e89b-12d3-a456-426614174000)",
    "date-time": "a valid RFC 3339 date-time (e.g. 2026-11-20T14:30:00Z)",
    "date": "a valid date (YYYY-MM-DD)",
    "time": "a valid RFC 3339 time (e.g. 14:30:00Z)",
    "duration": "a valid ISO 8601 duration (e.g. P3D)",
    "ipv4": "a valid IPv4 address (e.g. 192.0.2.1)",
    "ipv6": "a valid IPv6 address (e.g. 2001:db8::1)",
    "hostname": "a valid host name (e.g. api.example.com)",
    "idn-hostname": "a valid host name",
    "regex": "a valid regular expression",
    "json-pointer": "a valid JSON pointer (e.g. /items/0)",
}

_HEADLINES: Final = {
    "required": "Missing required field.",
    "type": "Wrong type.",
    "minimum": "Value is below the minimum.",
    "maximum": "Value is above the maximum.",
    "exclusiveMinimum": "Value is too small.",
    "exclusiveMaximum": "Value is too large.",
    "minLength": "Text is too short.",
    "maxLength": "Text is too long.",
    "minItems": "Too few items.",
    "maxItems": "Too many items.",
    "pattern": "Text does not match the required pattern.",
    "enum": "Value is not one of the allowed values.",
    "const": "Value is not the required one.",
    "additionalProperties": "Unknown field.",
    "multipleOf": "Value is not an allowed multiple.",
    "uniqueItems": "Items are not unique.",
    "oneOf": "Value does not match exactly one of the allowed forms.",
    "anyOf": "Value does not match any of the allowed forms.",
    "other": "Invalid value.",
}


def _headline(problem: Problem) -> str:
    if problem.message is not None:
        return _clean(problem.message)
    if problem.kind == "format":
        return "Invalid format." if problem.expected is None else f"Invalid {_clean(problem.expected, 40)} format."
    return _HEADLINES.get(problem.kind, _HEADLINES["other"])


def _expected_required(expected: Any) -> str:
    """``{"enum": [...]}``, ``{"type": ...}``, a type name or list of them, or values."""
    if isinstance(expected, Mapping):
        if "enum" in expected:
            return f"one of: {_values(expected['enum'])}"
        if "type" in expected:
            return _types(expected["type"])
        return "a value"
    if expected is None:
        return "a value"
    if _is_type_spec(expected):
        return _types(expected)
    return f"one of: {_values(expected)}"


def _expected_unknown(expected: Any) -> str:
    if isinstance(expected, (list, tuple)) and expected:
        return f"only the known fields: {_values(expected)}"
    return "no such field; remove it"


_EXPECTATIONS: Final[Mapping[str, Callable[[Any], str]]] = {
    "required": _expected_required,
    "type": _types,
    "minimum": lambda e: f"at least {show_value(e)}",
    "maximum": lambda e: f"at most {show_value(e)}",
    "exclusiveMinimum": lambda e: f"more than {show_value(e)}",
    "exclusiveMaximum": lambda e: f"less than {show_value(e)}",
    "minLength": lambda e: f"at least {_plural(e, 'character')}",
    "maxLength": lambda e: f"at most {_plural(e, 'character')}",
    "minItems": lambda e: f"at least {_plural(e, 'item')}",
    "maxItems": lambda e: f"at most {_plural(e, 'item')}",
    "pattern": lambda e: f"text matching the pattern {_clean(e)}",
    "format": lambda e: _FORMATS.get(str(e), f'a value in the "{_clean(e, 40)}" format'),
    "enum": lambda e: f"one of: {_values(e)}",
    "const": lambda e: f"exactly {show_value(e)}",
    "additionalProperties": _expected_unknown,
    "multipleOf": lambda e: f"a multiple of {show_value(e)}",
    "uniqueItems": lambda e: "no duplicate items",
    "oneOf": lambda e: "a value matching exactly one of the allowed forms",
    "anyOf": lambda e: "a value matching at least one of the allowed forms",
}

# Kinds whose sentence reads well without the schema value.
_NO_VALUE_NEEDED: Final = frozenset({"required", "additionalProperties", "uniqueItems", "oneOf", "anyOf"})


def _expected(problem: Problem) -> str | None:
    phrase = _EXPECTATIONS.get(problem.kind)
    if phrase is not None and (problem.expected is not None or problem.kind in _NO_VALUE_NEEDED):
        return phrase(problem.expected)
    if problem.expected is None:
        return None
    return show_value(problem.expected) if problem.kind == "other" else _clean(problem.expected)


def describe_problem(problem: Problem | Mapping[str, Any]) -> str:
    """One field line: ``Invalid email format. You sent: 'x'. Expected a valid email
    address.`` (the text of its ``<field>``, before escaping)."""
    problem = as_problem(problem)
    sentence = f"{_headline(problem)} You sent: {show_value(problem.sent)}."
    expected = _expected(problem)
    return f"{sentence} Expected {expected}." if expected else sentence


# --------------------------------------------------------------------------- validation error


def _label(tool: str, action: str | None) -> str:
    return f"{_clean(tool)}.{_clean(action)}" if action else _clean(tool)


def _indented(section: str) -> list[str]:
    """An already rendered section, two more spaces in (blank lines stay blank)."""
    return [f"  {line}" if line else line for line in section.strip().splitlines()]


def render_validation_error(
    tool: str,
    action: str | None,
    problems: Iterable[Problem | Mapping[str, Any]],
    awareness: str = "",
) -> str:
    """The ``<validation_error>`` of DESIGN.md: one ``<field>`` per problem, the recovery,
    then ``awareness`` (a :func:`render_awareness` section, trusted as is) right before
    the closing tag. Plain dicts are read as problems (:func:`app.validation.as_problem`)."""
    lines = [f'<validation_error action="{escape_attr(_label(tool, action))}">']
    for item in problems:
        problem = as_problem(item)
        name = _clean(problem.path) or ROOT
        lines.append(f'  <field name="{escape_attr(name)}">{escape_text(describe_problem(problem))}</field>')
    lines.append(f"  <recovery>{RECOVERY}</recovery>")
    if awareness.strip():
        lines.extend(_indented(awareness))
    lines.append("</validation_error>")
    return "\n".join(lines)
