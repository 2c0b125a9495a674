"""The error wire contract for Python MCP servers: ``<tool_error>``, its builder, the
canonical codes, and the client-side parser.

An error of an MCP server is a message to a model, not a stack trace. Every failure a
model sees should say what went wrong (``code``, ``<message>``), what to do next
(``<recovery>``, ``<available_actions>``), the facts it needs (``<details>``) and when to
come back (``<retry_after>``), in one small XML envelope it reads reliably::

    <tool_error code="NOT_FOUND" severity="error">
      <message>No invoice with that ID</message>
      <recovery>List invoices first, then retry with a real ID</recovery>
      <available_actions>
        <action>billing.list_invoices</action>
      </available_actions>
      <details>
        <detail key="requestedId">inv_2026_9999</detail>
      </details>
      <retry_after>30 seconds</retry_after>
    </tool_error>

An envelope may also carry the governance service's ``<contract_awareness>`` (how the
tool's contract changed since the lockfile the model learned it from), as
:func:`unknown_tool_error` does for a call to a tool that was removed or renamed.

Server side: :func:`tool_error` (a JSON-ready MCP tool result), :func:`error` (a fluent
builder a handler may return as is), :class:`ToolError` (the same envelope, raised) and
:func:`error_from_exception` (what an integration turns any exception into). Client
side: :func:`parse_tool_error` and :func:`raise_for_tool_error`, which also read the
governance service's ``<validation_error>`` and ``<contract_awareness>``.

Pure code: no I/O besides one log line for unexpected exceptions; the MCP SDK is
imported only by :func:`to_call_tool_result`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Literal, get_args

from mcp_governance.text import codepoint_label
from mcp_governance.xmltext import escape_attr, escape_text

if TYPE_CHECKING:
    import xml.etree.ElementTree as ET

# logging, uuid, xml.etree and textwrap are imported where they are used (an incident, a
# parse): an MCP server imports this module at start, and most never need them.

__all__ = [
    "CanonicalCode",
    "ContractAwareness",
    "ContractChange",
    "ErrorBuilder",
    "ErrorCode",
    "GovernanceToolError",
    "Severity",
    "ToolError",
    "ToolErrorEnvelope",
    "ToolErrorInfo",
    "error",
    "error_from_exception",
    "parse_tool_error",
    "raise_for_tool_error",
    "to_call_tool_result",
    "tool_error",
    "unknown_tool_error",
    "with_warning",
]

LOGGER = "mcp_governance.errors"


def _xml() -> Any:
    import xml.etree.ElementTree

    return xml.etree.ElementTree


# --------------------------------------------------------------------------- codes


class ErrorCode(StrEnum):
    """The canonical codes: a closed set editors complete. Any other string is still
    accepted wherever a code is, so servers can add their own."""

    MISSING_DISCRIMINATOR = "MISSING_DISCRIMINATOR"
    UNKNOWN_ACTION = "UNKNOWN_ACTION"
    VALIDATION_ERROR = "VALIDATION_ERROR"
    MISSING_REQUIRED_FIELD = "MISSING_REQUIRED_FIELD"
    INTERNAL_ERROR = "INTERNAL_ERROR"
    RATE_LIMITED = "RATE_LIMITED"
    UNAUTHORIZED = "UNAUTHORIZED"
    FORBIDDEN = "FORBIDDEN"
    NOT_FOUND = "NOT_FOUND"
    CONFLICT = "CONFLICT"
    TIMEOUT = "TIMEOUT"
    SERVER_BUSY = "SERVER_BUSY"
    DEPRECATED = "DEPRECATED"
    AUTH_REQUIRED = "AUTH_REQUIRED"
    HANDOFF_UPSTREAM_UNAVAILABLE = "HANDOFF_UPSTREAM_UNAVAILABLE"
    HANDOFF_NAMESPACE_MISMATCH = "HANDOFF_NAMESPACE_MISMATCH"
    HANDOFF_CONNECTING = "HANDOFF_CONNECTING"


# The same set for type checkers that complete string literals (kept equal to ErrorCode
# by a test).
CanonicalCode = Literal[
    "MISSING_DISCRIMINATOR",
    "UNKNOWN_ACTION",
    "VALIDATION_ERROR",
    "MISSING_REQUIRED_FIELD",
    "INTERNAL_ERROR",
    "RATE_LIMITED",
    "UNAUTHORIZED",
    "FORBIDDEN",
    "NOT_FOUND",
    "CONFLICT",
    "TIMEOUT",
    "SERVER_BUSY",
    "DEPRECATED",
    "AUTH_REQUIRED",
    "HANDOFF_UPSTREAM_UNAVAILABLE",
    "HANDOFF_NAMESPACE_MISMATCH",
    "HANDOFF_CONNECTING",
]

# error: the action failed. critical: it failed and must not be retried blindly.
# warning: guidance on the success path (isError false).
Severity = Literal["error", "warning", "critical"]
SEVERITIES: tuple[str, ...] = get_args(Severity)

Code = ErrorCode | CanonicalCode | str
DetailsInput = Mapping[str, object] | Iterable[tuple[str, object]] | None

# The code of an error result whose text is not a structured envelope (client side).
UNKNOWN_CODE = "UNKNOWN"

CRITICAL_RECOVERY = "Do not retry this call automatically; report the failure to the user."
SERVER_BUSY_RECOVERY = "The server is busy: wait and retry later; do not send parallel calls."
RATE_LIMITED_RECOVERY = "Too many calls: wait before calling again; do not retry immediately or in parallel."
INTERNAL_ERROR_MESSAGE = "The tool failed because of an internal error in the server."
INTERNAL_ERROR_RECOVERY = (
    "Do not retry this call automatically; tell the user the tool failed with an internal error "
    "and give them the incident id."
)


# --------------------------------------------------------------------------- text


# Characters XML 1.0 forbids (C0 controls but tab/LF/CR, lone surrogates, U+FFFE/U+FFFF):
# shown as [U+XXXX] so the envelope always parses. Everything else is the author's.
_FORBIDDEN = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
_BREAKS = re.compile(r"[\t\n\r]+")
# Parse side: any whitespace run holding a line break or tab is one space.
_WRAPPED = re.compile(r"[ \t\n\r]*[\t\n\r][ \t\n\r]*")


def _label_forbidden(text: str) -> str:
    return _FORBIDDEN.sub(lambda match: codepoint_label(match.group()), text)


def _tidy(text: str) -> str:
    """An author string as the model will read it: forbidden characters labelled, line
    breaks and tabs as one space (one element per line), no surrounding whitespace. The
    envelope stores this form, so parsing its rendering gives it back exactly."""
    return _BREAKS.sub(" ", _label_forbidden(text)).strip()


def _seconds(value: int) -> str:
    return "1 second" if value == 1 else f"{value} seconds"


def _require_str(value: object, what: str) -> str:
    if not isinstance(value, str):
        raise TypeError(f"tool_error: {what} must be a string, not {type(value).__name__}")
    return value


def _check_severity(severity: object) -> Severity:
    if severity not in SEVERITIES:
        raise ValueError(f"tool_error: invalid severity {severity!r} (expected one of: {', '.join(SEVERITIES)})")
    return severity  # type: ignore[return-value]


def _check_retry_after(seconds: object) -> int | None:
    """Whole seconds, rounded up; ``None`` for no section (0 or None)."""
    if seconds is None:
        return None
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)):
        raise TypeError(f"tool_error: retry_after must be a number of seconds, not {type(seconds).__name__}")
    if math.isnan(seconds) or math.isinf(seconds) or seconds < 0:
        raise ValueError(f"tool_error: retry_after must be a finite number of seconds >= 0, not {seconds!r}")
    whole = math.ceil(seconds)
    return whole or None


def _check_message(message: object) -> str:
    tidy = _tidy(_require_str(message, "message"))
    if not tidy:
        raise ValueError("tool_error: message must not be empty")
    return tidy


def _check_awareness(section: object) -> str | None:
    """A ``<contract_awareness>`` to embed: well-formed, that element and nothing else,
    lines as given (the service renders it; the model reads it as is)."""
    if section is None:
        return None
    text = _label_forbidden(_require_str(section, "awareness")).strip().replace("\r\n", "\n")
    if not text:
        return None
    try:
        root = _xml().fromstring(text)
    except _xml().ParseError as exc:
        raise ValueError(f"tool_error: awareness is not well-formed XML ({exc})") from None
    if root.tag != "contract_awareness":
        raise ValueError(f"tool_error: awareness must be a <contract_awareness> section, not <{root.tag}>")
    return text


def _details_pairs(details: DetailsInput) -> Iterable[tuple[object, object]]:
    if details is None:
        return ()
    if isinstance(details, Mapping):
        return details.items()
    return details


def _merge_details(into: dict[str, str], details: DetailsInput) -> dict[str, str]:
    """Later keys override, the first appearance keeps its place; values as strings."""
    for key, value in _details_pairs(details):
        name = _tidy(str(key))
        if not name:
            raise ValueError("tool_error: detail keys must not be empty")
        into[name] = _tidy(value if isinstance(value, str) else str(value))
    return into


def _action_names(names: Iterable[str] | str) -> tuple[str, ...]:
    if isinstance(names, str):
        names = (names,)
    tidy: list[str] = []
    for name in names:
        cleaned = _tidy(_require_str(name, "action name"))
        if not cleaned:
            raise ValueError("tool_error: action names must not be empty")
        if cleaned not in tidy:
            tidy.append(cleaned)
    return tuple(tidy)


def _default_recovery(code: str, severity: str, retry_after: int | None) -> str | None:
    """What the model reads when the author gave no suggestion: critical errors must
    never be retried blindly; busy and rate-limited servers say how to come back."""
    if severity == "critical":
        return CRITICAL_RECOVERY
    if code == ErrorCode.SERVER_BUSY:
        return SERVER_BUSY_RECOVERY
    if code == ErrorCode.RATE_LIMITED:
        if retry_after:
            return f"Too many calls: wait {_seconds(retry_after)}, then call again; do not send parallel calls."
        return RATE_LIMITED_RECOVERY
    return None


# --------------------------------------------------------------------------- envelope


@dataclass(frozen=True)
class ToolErrorEnvelope:
    """One ``<tool_error>``, held in the form the model reads (see :func:`_tidy`): that
    is what makes ``parse_tool_error(env.render()).to_envelope() == env`` hold.

    Construction validates and normalises: ``code`` and ``message`` non-empty,
    ``details`` as ordered ``(key, value)`` string pairs, ``retry_after`` whole seconds or
    None, and ``suggestion`` defaulted for critical, SERVER_BUSY and RATE_LIMITED errors.
    ``awareness`` is a ``<contract_awareness>`` section as the service renders it (already
    escaped XML, embedded as is); one that does not parse is refused.
    """

    code: str
    message: str
    suggestion: str | None = None
    available_actions: tuple[str, ...] = ()
    details: tuple[tuple[str, str], ...] = ()
    retry_after: int | None = None
    severity: Severity = "error"
    awareness: str | None = None

    def __post_init__(self) -> None:
        code = _tidy(str(_require_str(self.code, "code")))
        if not code:
            raise ValueError("tool_error: code must not be empty")
        severity = _check_severity(self.severity)
        retry_after = _check_retry_after(self.retry_after)
        suggestion = None
        if self.suggestion is not None:
            suggestion = _tidy(_require_str(self.suggestion, "suggestion")) or None
        if suggestion is None:
            suggestion = _default_recovery(code, severity, retry_after)
        set_ = object.__setattr__
        set_(self, "code", code)
        set_(self, "message", _check_message(self.message))
        set_(self, "suggestion", suggestion)
        set_(self, "available_actions", _action_names(self.available_actions))
        set_(self, "details", tuple(_merge_details({}, self.details).items()))
        set_(self, "retry_after", retry_after)
        set_(self, "severity", severity)
        set_(self, "awareness", _check_awareness(self.awareness))

    @property
    def is_error(self) -> bool:
        """``isError`` of the result: true unless the envelope is a warning."""
        return self.severity != "warning"

    @property
    def details_dict(self) -> dict[str, str]:
        return dict(self.details)

    def render(self) -> str:
        """The ``<tool_error>`` text, exactly as it goes on the wire."""
        return _render_xml(self)

    def to_result(self, extra_content: Iterable[Any] = ()) -> dict[str, Any]:
        """The JSON-ready MCP tool result. ``extra_content`` (the handler's normal result
        content, for a warning) goes first, the envelope last."""
        content = [_content_dict(item) for item in extra_content]
        content.append({"type": "text", "text": self.render()})
        return {"content": content, "isError": self.is_error}

    def to_call_tool_result(self, extra_content: Iterable[Any] = ()) -> Any:
        """The MCP SDK's ``CallToolResult`` (needs the ``mcp`` package)."""
        return to_call_tool_result(self, extra_content)


def _render_xml(envelope: ToolErrorEnvelope) -> str:
    """Render one envelope; every author string is escaped here and only here."""
    lines = [
        f'<tool_error code="{escape_attr(envelope.code)}" severity="{escape_attr(envelope.severity)}">',
        f"  <message>{escape_text(envelope.message)}</message>",
    ]
    if envelope.suggestion:
        lines.append(f"  <recovery>{escape_text(envelope.suggestion)}</recovery>")
    if envelope.available_actions:
        lines.append("  <available_actions>")
        lines.extend(f"    <action>{escape_text(name)}</action>" for name in envelope.available_actions)
        lines.append("  </available_actions>")
    if envelope.details:
        lines.append("  <details>")
        lines.extend(f'    <detail key="{escape_attr(key)}">{escape_text(value)}</detail>'
                     for key, value in envelope.details)
        lines.append("  </details>")
    if envelope.retry_after:
        lines.append(f"  <retry_after>{_seconds(envelope.retry_after)}</retry_after>")
    if envelope.awareness:
        lines.extend(f"  {line}" if line else line for line in envelope.awareness.split("\n"))
    lines.append("</tool_error>")
    return "\n".join(lines)


def _content_dict(item: Any) -> dict[str, Any]:
    """A content item as JSON: a plain string is text, SDK objects are dumped."""
    if isinstance(item, str):
        return {"type": "text", "text": item}
    if isinstance(item, Mapping):
        return dict(item)
    dump = getattr(item, "model_dump", None)
    if callable(dump):
        return dump(by_alias=True, exclude_none=True, mode="json")
    raise TypeError(f"tool_error: cannot use {type(item).__name__} as tool result content")


def tool_error(
    code: Code,
    message: str,
    *,
    suggestion: str | None = None,
    available_actions: Iterable[str] = (),
    details: DetailsInput = None,
    retry_after: float | None = None,
    severity: Severity = "error",
) -> dict[str, Any]:
    """An MCP tool result carrying one ``<tool_error>``: ``{"content": [{"type": "text",
    "text": ...}], "isError": ...}``, ready to return from a handler or send as JSON.

    ``isError`` is true for ``error`` and ``critical``, false for ``warning``. Use
    :func:`to_call_tool_result` for the SDK's own type, :func:`with_warning` to send a
    warning alongside a normal result.
    """
    return ToolErrorEnvelope(
        code=code,
        message=message,
        suggestion=suggestion,
        available_actions=tuple(_action_names(available_actions)),
        details=details,  # type: ignore[arg-type]
        retry_after=retry_after,  # type: ignore[arg-type]
        severity=severity,
    ).to_result()


# --------------------------------------------------------------------------- builder


class ErrorBuilder(Mapping[str, Any]):
    """``error("NOT_FOUND", "Invoice missing").suggest(...).actions(...)``: each call
    returns the builder, which is itself the tool result (a read-only mapping), so a
    handler returns it as is. The result is built on first use and cached; a later
    change invalidates the cache, so the next read builds again."""

    def __init__(self, code: Code, message: str) -> None:
        self._code: str = _require_str(code, "code")
        self._message: str = message
        _check_message(message)
        self._suggestion: str | None = None
        self._actions: list[str] = []
        self._details: dict[str, str] = {}
        self._retry_after: int | None = None
        self._severity: Severity = "error"
        self._envelope: ToolErrorEnvelope | None = None
        self._result: dict[str, Any] | None = None

    def _changed(self) -> ErrorBuilder:
        self._envelope = None
        self._result = None
        return self

    def suggest(self, text: str | None) -> ErrorBuilder:
        """The ``<recovery>``: what the model should do next (None clears it)."""
        self._suggestion = None if text is None else _require_str(text, "suggestion")
        return self._changed()

    def actions(self, *names: str) -> ErrorBuilder:
        """Append to ``<available_actions>`` (repeats are kept once)."""
        for name in _action_names(names):
            if name not in self._actions:
                self._actions.append(name)
        return self._changed()

    def details(self, mapping: DetailsInput = None, /, **values: object) -> ErrorBuilder:
        """Merge into ``<details>``: later keys override, first appearance keeps its place."""
        _merge_details(self._details, mapping)
        _merge_details(self._details, values)
        return self._changed()

    def retry_after(self, seconds: float | None) -> ErrorBuilder:
        """``<retry_after>`` in seconds (0 or None: no section)."""
        self._retry_after = _check_retry_after(seconds)
        return self._changed()

    def severity(self, severity: Severity) -> ErrorBuilder:
        self._severity = _check_severity(severity)
        return self._changed()

    def critical(self) -> ErrorBuilder:
        """Failed, and must not be retried blindly."""
        return self.severity("critical")

    def warning(self) -> ErrorBuilder:
        """Guidance on the success path: ``isError`` false."""
        return self.severity("warning")

    @property
    def envelope(self) -> ToolErrorEnvelope:
        if self._envelope is None:
            self._envelope = ToolErrorEnvelope(
                code=self._code,
                message=self._message,
                suggestion=self._suggestion,
                available_actions=tuple(self._actions),
                details=tuple(self._details.items()),
                retry_after=self._retry_after,
                severity=self._severity,
            )
        return self._envelope

    @property
    def result(self) -> dict[str, Any]:
        """The tool result dict, built once (shared: do not mutate it)."""
        if self._result is None:
            self._result = self.envelope.to_result()
        return self._result

    @property
    def text(self) -> str:
        return self.result["content"][0]["text"]

    @property
    def is_error(self) -> bool:
        return self.envelope.is_error

    def to_result(self, extra_content: Iterable[Any] = ()) -> dict[str, Any]:
        return self.envelope.to_result(extra_content) if extra_content else self.result

    def to_call_tool_result(self, extra_content: Iterable[Any] = ()) -> Any:
        return to_call_tool_result(self, extra_content)

    def __getitem__(self, key: str) -> Any:
        return self.result[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.result)

    def __len__(self) -> int:
        return len(self.result)

    def __repr__(self) -> str:
        return f"ErrorBuilder({self._code!r}, {self._message!r}, severity={self._severity!r})"


def error(code: Code, message: str) -> ErrorBuilder:
    """Start a fluent ``<tool_error>``; return it from a handler as is."""
    return ErrorBuilder(code, message)


# --------------------------------------------------------------------------- raise


class ToolError(Exception):
    """Raise instead of return: the integration sends :attr:`envelope` to the model
    intact (code, severity, every section). ``str(exc)`` is ``"CODE: message"``."""

    envelope: ToolErrorEnvelope

    def __init__(
        self,
        code: Code,
        message: str,
        *,
        suggestion: str | None = None,
        available_actions: Iterable[str] = (),
        details: DetailsInput = None,
        retry_after: float | None = None,
        severity: Severity = "error",
    ) -> None:
        envelope = ToolErrorEnvelope(
            code=code,
            message=message,
            suggestion=suggestion,
            available_actions=tuple(_action_names(available_actions)),
            details=details,  # type: ignore[arg-type]
            retry_after=retry_after,  # type: ignore[arg-type]
            severity=severity,
        )
        self._set(envelope)

    def _set(self, envelope: ToolErrorEnvelope) -> None:
        self.envelope = envelope
        Exception.__init__(self, f"{envelope.code}: {envelope.message}")

    @classmethod
    def from_envelope(cls, envelope: ToolErrorEnvelope | ErrorBuilder) -> ToolError:
        """From an envelope or a builder: ``raise ToolError.from_envelope(error(...))``."""
        if isinstance(envelope, ErrorBuilder):
            envelope = envelope.envelope
        if not isinstance(envelope, ToolErrorEnvelope):
            raise TypeError(f"ToolError.from_envelope needs a ToolErrorEnvelope, not {type(envelope).__name__}")
        exc = cls.__new__(cls)
        exc._set(envelope)
        return exc

    def __reduce__(self) -> tuple[Any, ...]:
        # Keeps the envelope across pickling (multiprocessing, some task queues).
        return (_restore_tool_error, (type(self), self.envelope))

    @property
    def code(self) -> str:
        return self.envelope.code

    @property
    def message(self) -> str:
        return self.envelope.message

    @property
    def severity(self) -> Severity:
        return self.envelope.severity

    def to_result(self) -> dict[str, Any]:
        return self.envelope.to_result()


def _restore_tool_error(cls: type[ToolError], envelope: ToolErrorEnvelope) -> ToolError:
    return cls.from_envelope(envelope)


def error_from_exception(exc: BaseException, *, incident: str | None = None) -> ToolErrorEnvelope:
    """What a handler's exception becomes for the model. A :class:`ToolError` gives its
    own envelope. Anything else is a bug in the handler or a dependency: a critical
    INTERNAL_ERROR whose text holds neither the exception's message (it may carry
    secrets) nor its traceback, only an incident id; the traceback goes to the
    ``mcp_governance.errors`` log under the same id."""
    if isinstance(exc, ToolError):
        return exc.envelope
    import logging
    import uuid

    incident = incident or uuid.uuid4().hex[:12]
    logging.getLogger(LOGGER).exception("tool handler raised %s (incident %s)", type(exc).__name__, incident,
                                        exc_info=exc)
    return ToolErrorEnvelope(
        code=ErrorCode.INTERNAL_ERROR,
        message=INTERNAL_ERROR_MESSAGE,
        suggestion=INTERNAL_ERROR_RECOVERY,
        details=(("incident", incident),),
        severity="critical",
    )


UNKNOWN_TOOL_RECOVERY = "Call one of the available tools instead; do not call this name again."
MAX_LISTED_TOOLS = 50
"""Available tools listed in an UNKNOWN_ACTION envelope; the rest are counted in its details."""


def unknown_tool_error(
    name: str,
    available: Iterable[str] = (),
    *,
    awareness: str | None = None,
    max_listed: int = MAX_LISTED_TOOLS,
) -> ToolErrorEnvelope:
    """The answer to a call of a tool the server does not have: ``UNKNOWN_ACTION``, the
    tools it has (``<available_actions>``, at most ``max_listed``), and the governance
    service's ``<contract_awareness>`` for the name when it knows it (the tool was removed,
    or renamed: its fix names the replacement, which then leads the recovery)."""
    section = _check_awareness(awareness)
    names = _action_names(available)
    shown = names[: max(max_listed, 0)]
    details: list[tuple[str, str]] = [("tool", _require_str(name, "tool name"))]
    if len(names) > len(shown):
        details.append(("unlisted_tools", str(len(names) - len(shown))))
    fix = None
    if section is not None:
        parsed = _parse_awareness(_xml().fromstring(section))
        fix = next((change.fix for change in parsed.changes if change.fix), None)
        message = f'Unknown tool "{name}": it is no longer in this server\'s contract (see the contract awareness).'
    else:
        message = f'Unknown tool "{name}": this server has no tool of that name.'
    return ToolErrorEnvelope(
        code=ErrorCode.UNKNOWN_ACTION,
        message=message,
        suggestion=f"{fix} Do not call this name again." if fix else UNKNOWN_TOOL_RECOVERY,
        available_actions=shown,
        details=tuple(details),
        awareness=section,
    )


# --------------------------------------------------------------------------- SDK


def _as_envelope(value: Any) -> ToolErrorEnvelope | None:
    if isinstance(value, ToolErrorEnvelope):
        return value
    if isinstance(value, (ErrorBuilder, ToolError)):
        return value.envelope
    return None


def to_call_tool_result(
    result_or_envelope: ToolErrorEnvelope | ErrorBuilder | ToolError | Mapping[str, Any],
    extra_content: Iterable[Any] = (),
) -> Any:
    """The MCP SDK's ``CallToolResult`` for an envelope, builder, :class:`ToolError` or
    result dict; ``extra_content`` goes before the envelope (normal content first).
    Imports the SDK here, so the rest of this module works without it."""
    try:
        from mcp.types import CallToolResult
    except ImportError:  # pragma: no cover - depends on the installed SDK layout
        try:
            from mcp_types import CallToolResult
        except ImportError as exc:
            raise ImportError("to_call_tool_result needs the MCP Python SDK: pip install mcp") from exc
    envelope = _as_envelope(result_or_envelope)
    if envelope is not None:
        result = envelope.to_result(extra_content)
    elif isinstance(result_or_envelope, Mapping):
        result = {
            "content": [_content_dict(item) for item in extra_content]
            + [_content_dict(item) for item in result_or_envelope.get("content", ())],
            "isError": bool(result_or_envelope.get("isError", False)),
        }
    else:
        raise TypeError(f"to_call_tool_result: cannot convert {type(result_or_envelope).__name__}")
    return CallToolResult.model_validate(result)


def with_warning(content: Iterable[Any] | str, warning: ToolErrorEnvelope | ErrorBuilder) -> dict[str, Any]:
    """A successful result (``isError`` false) carrying the handler's normal content and
    then a warning envelope: deprecated parameter used, fallback applied, result cut."""
    envelope = _as_envelope(warning)
    if envelope is None:
        raise TypeError(f"with_warning needs a ToolErrorEnvelope or ErrorBuilder, not {type(warning).__name__}")
    if envelope.severity != "warning":
        raise ValueError(
            f"with_warning needs a warning, not severity {envelope.severity!r}: a failure is not a success"
        )
    items = [content] if isinstance(content, str) else list(content)
    return envelope.to_result(items)


# --------------------------------------------------------------------------- client side


@dataclass(frozen=True)
class ContractChange:
    """One ``<change>`` of a ``<contract_awareness>``."""

    severity: str | None = None
    field: str | None = None
    rule: str | None = None
    description: str | None = None
    before: str | None = None
    after: str | None = None
    fix: str | None = None


@dataclass(frozen=True)
class ContractAwareness:
    """A parsed ``<contract_awareness>``: how the tool's contract changed since the
    known-good lockfile. ``omitted_count`` is 0 when the section does not state it;
    ``change_count`` falls back to the number of changes listed."""

    system_note: str | None = None
    action: str | None = None
    change_count: int = 0
    omitted_count: int = 0
    max_severity: str | None = None
    changes: tuple[ContractChange, ...] = ()
    instructions: str | None = None
    replacement: str | None = None
    """For a tool that is gone: the tool that replaces it, when a rename or a deprecation names one."""


Kind = Literal["tool_error", "validation_error", "contract_awareness", "unstructured"]


@dataclass(frozen=True)
class ToolErrorInfo:
    """What a client learns from an error text, whichever envelope it came in.

    For a ``<validation_error>``: code VALIDATION_ERROR, ``fields`` (name -> problem, in
    order), ``action`` and ``awareness``; ``message`` sums the fields up. ``raw`` is the
    text as received.
    """

    code: str
    message: str
    recovery: str | None = None
    available_actions: tuple[str, ...] = ()
    details: dict[str, str] = field(default_factory=dict)
    retry_after: int | None = None
    severity: str = "error"
    raw: str = ""
    kind: Kind = "tool_error"
    action: str | None = None
    fields: dict[str, str] = field(default_factory=dict)
    awareness: ContractAwareness | None = None
    awareness_xml: str | None = None
    """A ``<tool_error>``'s embedded ``<contract_awareness>``, as the envelope held it."""

    @property
    def is_error(self) -> bool:
        return self.severity != "warning"

    def to_envelope(self) -> ToolErrorEnvelope:
        """Back to a server-side envelope (a validation error's fields are not carried)."""
        return ToolErrorEnvelope(
            code=self.code,
            message=self.message,
            suggestion=self.recovery,
            available_actions=self.available_actions,
            details=tuple(self.details.items()),
            retry_after=self.retry_after,
            severity=self.severity,  # type: ignore[arg-type]
            awareness=self.awareness_xml if self.kind == "tool_error" else None,
        )


_START = re.compile(r"<(tool_error|validation_error|contract_awareness)(?=[\s/>])")
_LEADING_INT = re.compile(r"\s*(\d+)")


def _norm(text: str | None) -> str:
    """Element text read tolerantly: wrapped lines and indentation become one space."""
    return _WRAPPED.sub(" ", text or "").strip()


def _child(element: ET.Element, tag: str) -> str | None:
    child = element.find(tag)
    return None if child is None else _norm(child.text)


def _attr(element: ET.Element, name: str) -> str | None:
    value = element.get(name)
    return None if value is None else _norm(value)


def _int(text: str | None) -> int | None:
    match = _LEADING_INT.match(text or "")
    return int(match.group(1)) if match else None


def _envelope_segment(text: str) -> str | None:
    """The text of the first envelope in ``text`` (prose around it is ignored)."""
    start = _START.search(text)
    if start is None:
        return None
    name = start.group(1)
    end = re.compile(rf"</{name}\s*>").search(text, start.end())
    return text[start.start() : end.end() if end else len(text)]


def _find_envelope(segment: str | None) -> ET.Element | None:
    if segment is None:
        return None
    try:
        return _xml().fromstring(_label_forbidden(segment))
    except _xml().ParseError:
        return None


_EMBEDDED_AWARENESS = re.compile(r"^([ \t]*)<contract_awareness(?=[\s>]).*?</contract_awareness\s*>", re.M | re.S)


def _embedded_awareness(segment: str) -> str | None:
    """A ``<tool_error>``'s ``<contract_awareness>`` text, its indentation removed."""
    match = _EMBEDDED_AWARENESS.search(segment)
    if match is None:
        return None
    import textwrap

    return textwrap.dedent(match.group(0)).strip()


def _parse_awareness(element: ET.Element) -> ContractAwareness:
    changes = tuple(
        ContractChange(
            severity=_attr(change, "severity"),
            field=_attr(change, "field"),
            rule=_attr(change, "rule"),
            description=_child(change, "description"),
            before=_child(change, "before"),
            after=_child(change, "after"),
            fix=_child(change, "fix"),
        )
        for change in element.iter("change")
    )
    change_count = _int(_child(element, "change_count"))
    return ContractAwareness(
        system_note=_child(element, "system_note"),
        action=_child(element, "action"),
        change_count=len(changes) if change_count is None else change_count,
        omitted_count=_int(_child(element, "omitted_count")) or 0,
        max_severity=_child(element, "max_severity"),
        changes=changes,
        instructions=_child(element, "instructions"),
        replacement=_child(element, "replacement") or None,
    )


def _parse_tool_error_element(root: ET.Element, raw: str, segment: str) -> ToolErrorInfo:
    actions_el = root.find("available_actions")
    actions = () if actions_el is None else tuple(_norm(a.text) for a in actions_el.findall("action"))
    details: dict[str, str] = {}
    details_el = root.find("details")
    if details_el is not None:
        for detail in details_el.findall("detail"):
            details[_norm(detail.get("key"))] = _norm(detail.text)
    awareness_el = root.find("contract_awareness")
    return ToolErrorInfo(
        code=_attr(root, "code") or UNKNOWN_CODE,
        message=_child(root, "message") or "",
        recovery=_child(root, "recovery") or None,
        available_actions=tuple(a for a in actions if a),
        details=details,
        retry_after=_int(_child(root, "retry_after")) or None,
        severity=(_attr(root, "severity") or "error").lower(),
        raw=raw,
        awareness=None if awareness_el is None else _parse_awareness(awareness_el),
        awareness_xml=None if awareness_el is None else _embedded_awareness(_label_forbidden(segment)),
    )


def _parse_validation_element(root: ET.Element, raw: str) -> ToolErrorInfo:
    fields: dict[str, str] = {}
    for item in root.findall("field"):
        name = _norm(item.get("name")) or "(root)"
        problem = _norm(item.text)
        # Several problems with one field: keep them all, in order.
        fields[name] = f"{fields[name]} {problem}" if name in fields else problem
    awareness_el = root.find("contract_awareness")
    awareness = None if awareness_el is None else _parse_awareness(awareness_el)
    if fields:
        message = "; ".join(f"{name}: {problem}" for name, problem in fields.items())
    elif awareness is not None and awareness.system_note:
        message = awareness.system_note
    else:
        message = "The arguments did not match the tool's contract."
    return ToolErrorInfo(
        code=ErrorCode.VALIDATION_ERROR.value,
        message=message,
        recovery=_child(root, "recovery") or (awareness.instructions if awareness else None),
        raw=raw,
        kind="validation_error",
        action=_attr(root, "action"),
        fields=fields,
        awareness=awareness,
    )


def parse_tool_error(text: str) -> ToolErrorInfo | None:
    """Read a ``<tool_error>``, ``<validation_error>`` or bare ``<contract_awareness>``
    (a validation error's awareness sent alone) from a tool result text.

    Tolerant of surrounding prose, whitespace and indentation. Returns ``None``, never
    raises, when the text holds no envelope or the envelope is not well-formed XML.
    """
    if not isinstance(text, str):
        return None
    segment = _envelope_segment(text)
    root = _find_envelope(segment)
    if root is None or segment is None:
        return None
    if root.tag == "tool_error":
        return _parse_tool_error_element(root, text, segment)
    if root.tag == "validation_error":
        return _parse_validation_element(root, text)
    awareness = _parse_awareness(root)
    return ToolErrorInfo(
        code=ErrorCode.VALIDATION_ERROR.value,
        message=awareness.system_note or "The tool's contract changed.",
        recovery=awareness.instructions,
        raw=text,
        kind="contract_awareness",
        action=awareness.action,
        awareness=awareness,
    )


class GovernanceToolError(Exception):
    """A tool result that is an error, raised on the client side (the seed's
    ``throwOnError: true``). Exposes every attribute of :class:`ToolErrorInfo`, and the
    info itself as :attr:`info`; ``str(exc)`` is ``"CODE: message"``."""

    def __init__(self, info: ToolErrorInfo, result: Any = None) -> None:
        super().__init__(f"{info.code}: {info.message}")
        self.info = info
        self.result = result
        self.code: str = info.code
        self.message: str = info.message
        self.recovery: str | None = info.recovery
        self.available_actions: tuple[str, ...] = info.available_actions
        self.details: dict[str, str] = info.details
        self.retry_after: int | None = info.retry_after
        self.severity: str = info.severity
        self.raw: str = info.raw
        self.kind: str = info.kind
        self.action: str | None = info.action
        self.fields: dict[str, str] = info.fields
        self.awareness: ContractAwareness | None = info.awareness


def _result_is_error(result: Any) -> bool:
    if isinstance(result, Mapping):
        return bool(result.get("isError", result.get("is_error", False)))
    flag = getattr(result, "is_error", None)
    if flag is None:
        flag = getattr(result, "isError", None)
    return bool(flag)


def _result_texts(result: Any) -> list[str]:
    content = result.get("content", ()) if isinstance(result, Mapping) else getattr(result, "content", ())
    texts: list[str] = []
    for item in content or ():
        text = item.get("text") if isinstance(item, Mapping) else getattr(item, "text", None)
        if isinstance(text, str):
            texts.append(text)
    return texts


def raise_for_tool_error(result: Any) -> Any:
    """Raise :class:`GovernanceToolError` when a tool result (a dict or the SDK's
    ``CallToolResult``) is an error; return it unchanged otherwise. ``isError`` decides;
    the first structured envelope among the text items gives the attributes, and an
    error without one is code UNKNOWN with its text as the message."""
    if not _result_is_error(result):
        return result
    texts = _result_texts(result)
    for text in texts:
        info = parse_tool_error(text)
        if info is not None:
            raise GovernanceToolError(info, result)
    joined = "\n".join(texts)
    raise GovernanceToolError(
        ToolErrorInfo(
            code=UNKNOWN_CODE,
            message=_norm(joined) or "The tool reported an error without a message.",
            raw=joined,
            kind="unstructured",
        ),
        result,
    )
