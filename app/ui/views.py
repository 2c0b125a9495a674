"""What the dashboard pages show, computed from the service's own rows and results.

Pure functions over the dicts and dataclasses that :mod:`app.service` returns (the same
ones the JSON dashboard serialises): filtering and ordering the fleet, grouping a diff's
deltas by tool and action, and reading a tool's arguments out of its input schema. No
status is computed here: the status, the worst severity and the counts come from
:func:`app.service.server_status` unchanged.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from fnmatch import fnmatchcase
from typing import Any
from urllib.parse import urlencode

from app.diff import Severity
from app.diff.model import SEVERITY_ORDER
from app.jsontypes import JSON
from app.problems import InputError
from app.schemas import deref

SEVERITIES = tuple(s.value for s in SEVERITY_ORDER)
STATUSES = ("drifted", "corrupt", "unreported", "unlocked", "in-sync")
"""Every live status, in the order that needs attention first."""
SORTS = ("attention", "name", "status", "severity", "version", "locked_at", "last_reported")
PAGE_SIZE = 100
NO_CHANGES = "none"


def severity_rank(value: str | None) -> int:
    """0 for BREAKING ... 3 for COSMETIC, 4 for none."""
    return Severity(value).rank if value in SEVERITIES else len(SEVERITIES)


# -- the fleet ---------------------------------------------------------------------------


@dataclass(frozen=True)
class FleetQuery:
    """The fleet view's filters, order and page: all in the URL, so a view can be shared and
    works without JavaScript."""

    status: str = ""
    """One of STATUSES, or '' for any."""
    severity: str = ""
    """A severity (that one or worse), 'none' (no change), or '' for any."""
    name: str = ""
    """A substring of the server name, or a glob when it has * ? or [."""
    sort: str = "attention"
    descending: bool = False
    page: int = 1

    @classmethod
    def parse(cls, params: Mapping[str, str]) -> FleetQuery:
        status = params.get("status", "")
        if status and status not in STATUSES:
            raise InputError(f"unknown status {status!r} (one of: {', '.join(STATUSES)})", "status")
        severity = params.get("severity", "")
        if severity and severity not in (*SEVERITIES, NO_CHANGES):
            raise InputError(f"unknown severity {severity!r} (one of: {', '.join(SEVERITIES)}, none)", "severity")
        sort = params.get("sort", "attention") or "attention"
        if sort not in SORTS:
            raise InputError(f"unknown order {sort!r} (one of: {', '.join(SORTS)})", "sort")
        direction = params.get("dir", "asc") or "asc"
        if direction not in ("asc", "desc"):
            raise InputError("expected asc or desc", "dir")
        raw_page = params.get("page", "1") or "1"
        if not raw_page.isdigit() or int(raw_page) < 1:
            raise InputError("expected a page number from 1", "page")
        name = params.get("name", "")
        if len(name) > 200:
            raise InputError("at most 200 characters", "name")
        return cls(status, severity, name.strip(), sort, direction == "desc", int(raw_page))

    def params(self, **changes: Any) -> dict[str, str]:
        """The query parameters of this view (or of this view with ``changes``), defaults left out."""
        query = replace(self, **changes)
        out = {"status": query.status, "severity": query.severity, "name": query.name,
               "sort": "" if query.sort == "attention" else query.sort,
               "dir": "desc" if query.descending else "", "page": "" if query.page == 1 else str(query.page)}
        return {key: value for key, value in out.items() if value}

    def url(self, path: str, **changes: Any) -> str:
        params = self.params(**changes)
        return f"{path}?{urlencode(params)}" if params else path

    def sort_url(self, path: str, column: str) -> str:
        """The link of a column header: sort by it, or flip the direction when it is the order already."""
        descending = not self.descending if self.sort == column else False
        return self.url(path, sort=column, descending=descending, page=1)

    def sorted_by(self, column: str) -> str:
        """The ``aria-sort`` value of a column header."""
        if self.sort != column:
            return "none"
        return "descending" if self.descending else "ascending"

    def matches(self, row: Mapping[str, Any]) -> bool:
        if self.status and row["status"] != self.status:
            return False
        if self.severity == NO_CHANGES and row.get("maxSeverity") is not None:
            return False
        if self.severity in SEVERITIES and severity_rank(row.get("maxSeverity")) > severity_rank(self.severity):
            return False
        if self.name:
            name = str(row["server"])
            if any(ch in self.name for ch in "*?["):
                return fnmatchcase(name.lower(), self.name.lower())
            return self.name.lower() in name.lower()
        return True


def attention_key(row: Mapping[str, Any]) -> tuple[int, int, str]:
    """Drifted servers first, worst drift first (drifted BREAKING on top); then corrupt,
    unreported, unlocked and in-sync servers; by name within each."""
    drift = severity_rank(row.get("maxSeverity")) if row["status"] == "drifted" else len(SEVERITIES)
    return (drift, STATUSES.index(row["status"]) if row["status"] in STATUSES else len(STATUSES), str(row["server"]))


def _column_key(column: str) -> Any:
    if column == "attention":
        return attention_key
    if column == "status":
        return lambda row: (STATUSES.index(row["status"]) if row["status"] in STATUSES else len(STATUSES),
                            str(row["server"]))
    if column == "severity":
        return lambda row: (severity_rank(row.get("maxSeverity")), str(row["server"]))
    if column == "version":
        return lambda row: (row.get("version") is None, row.get("version") or 0, str(row["server"]))
    if column in ("locked_at", "last_reported"):
        return lambda row: (row.get(column) is None, row.get(column) or "", str(row["server"]))
    return lambda row: str(row["server"])


@dataclass(frozen=True)
class FleetPage:
    rows: list[dict[str, Any]]
    total: int
    """Servers the caller may read."""
    matching: int
    """Of those, the ones the filters let through."""
    page: int
    pages: int
    by_status: dict[str, int]
    """Servers the caller may read, per status (before filtering)."""

    @property
    def instances(self) -> bool:
        """Whether the rows say how many instances report (the table then has that column)."""
        return any(instance_summary(row) is not None for row in self.rows)


def fleet_page(rows: Sequence[Mapping[str, Any]], query: FleetQuery, page_size: int = PAGE_SIZE) -> FleetPage:
    """Filter, order and cut one page of the fleet (a page past the end gives the last one)."""
    by_status = dict.fromkeys(STATUSES, 0)
    for row in rows:
        by_status[row["status"]] = by_status.get(row["status"], 0) + 1
    kept = sorted((dict(row) for row in rows if query.matches(row)), key=_column_key(query.sort),
                  reverse=query.descending)
    pages = max(1, -(-len(kept) // page_size))
    page = min(query.page, pages)
    return FleetPage(kept[(page - 1) * page_size: page * page_size], len(rows), len(kept), page, pages, by_status)


def instance_summary(row: Mapping[str, Any]) -> str | None:
    """"3 (1 drifted)": how many instances of a server report, and how many differ from the
    lock; None when the row carries no instances (a service that does not track them)."""
    instances = row.get("instances")
    if not isinstance(instances, list):
        return None
    drifted = sum(1 for instance in instances if isinstance(instance, dict) and instance.get("status") == "drifted")
    return f"{len(instances)} ({drifted} drifted)" if drifted and len(instances) > 1 else str(len(instances))


# -- diffs -------------------------------------------------------------------------------


@dataclass
class ActionGroup:
    action: str | None
    deltas: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class ToolGroup:
    tool: str | None
    """None for changes that belong to no tool (prompts, resources)."""
    actions: list[ActionGroup] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(SEVERITIES, 0))

    @property
    def worst(self) -> str | None:
        return next((s for s in SEVERITIES if self.counts[s]), None)


def group_deltas(deltas: Iterable[Mapping[str, Any]], severities: Iterable[str] = SEVERITIES) -> list[ToolGroup]:
    """Deltas (their JSON form) grouped by tool, then action, keeping only ``severities``.
    Tools with the worst changes come first, then by name; changes of no tool come last.
    Within an action the deltas keep the engine's order (worst first)."""
    wanted = set(severities)
    groups: dict[str | None, ToolGroup] = {}
    for delta in deltas:
        if delta["severity"] not in wanted:
            continue
        tool = delta.get("tool")
        group = groups.setdefault(tool, ToolGroup(tool))
        group.counts[delta["severity"]] += 1
        action = delta.get("action")
        bucket = next((a for a in group.actions if a.action == action), None)
        if bucket is None:
            bucket = ActionGroup(action)
            group.actions.append(bucket)
        bucket.deltas.append(dict(delta))
    for group in groups.values():
        group.actions.sort(key=lambda a: (a.action is not None, a.action or ""))
    return sorted(groups.values(), key=lambda g: (g.tool is None, severity_rank(g.worst), g.tool or ""))


def argument_of(field_name: str) -> str | None:
    """The argument (or result field) a delta's ``field`` is about: ``input.address.city`` ->
    ``address.city``; ``actions.get_invoice.input.currency`` -> ``currency``; None for
    tool-level fields (annotations, descriptions, the tool itself)."""
    for marker in ("input.", "output."):
        if field_name.startswith(marker):
            return field_name[len(marker):]
        inner = f".{marker}"
        if inner in field_name:
            return field_name.split(inner, 1)[1]
    return None


# -- a tool's arguments ----------------------------------------------------------------


@dataclass(frozen=True)
class ArgumentRow:
    name: str
    """Dotted path: ``address.city``, ``tags[]``, ``tags[].name``."""
    depth: int
    type: str
    required: bool
    constraints: tuple[str, ...]
    description: str | None


CONSTRAINTS = (
    ("minimum", "≥ {}"), ("exclusiveMinimum", "> {}"), ("maximum", "≤ {}"), ("exclusiveMaximum", "< {}"),
    ("multipleOf", "multiple of {}"), ("minLength", "at least {} characters"),
    ("maxLength", "at most {} characters"), ("pattern", "matches {}"), ("format", "format {}"),
    ("minItems", "at least {} items"), ("maxItems", "at most {} items"),
    ("minProperties", "at least {} keys"), ("maxProperties", "at most {} keys"),
)
ENUM_SHOWN = 12


def _show(value: JSON) -> str:
    import json

    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def _type_of(root: JSON, schema: Mapping[str, Any]) -> str:
    kind = schema.get("type")
    if isinstance(kind, list):
        text = " or ".join(str(k) for k in kind)
    elif isinstance(kind, str):
        text = kind
    elif "const" in schema:
        text = "constant"
    elif "enum" in schema:
        text = "one of"
    else:
        branches = schema.get("anyOf") or schema.get("oneOf")
        if isinstance(branches, list) and branches:
            names = []
            for branch in branches:
                resolved = deref(root, branch)
                names.append(_type_of(root, resolved) if isinstance(resolved, dict) else "any")
            text = " or ".join(dict.fromkeys(names))
        else:
            text = "any"
    if text == "array":
        items = deref(root, schema.get("items"))
        if isinstance(items, dict):
            text = f"array of {_type_of(root, items)}"
    return text


def _constraints(schema: Mapping[str, Any]) -> tuple[str, ...]:
    out = [template.format(_show(schema[key])) for key, template in CONSTRAINTS if key in schema]
    if "const" in schema:
        out.insert(0, f"= {_show(schema['const'])}")
    enum = schema.get("enum")
    if isinstance(enum, list):
        shown = ", ".join(_show(value) for value in enum[:ENUM_SHOWN])
        more = f" (+{len(enum) - ENUM_SHOWN} more)" if len(enum) > ENUM_SHOWN else ""
        out.insert(0, f"one of {shown}{more}")
    if schema.get("uniqueItems") is True:
        out.append("unique items")
    if schema.get("additionalProperties") is False:
        out.append("no other keys")
    if "default" in schema:
        out.append(f"default {_show(schema['default'])}")
    if schema.get("deprecated") is True:
        out.append("deprecated")
    return tuple(out)


def _properties(root: JSON, schema: Mapping[str, Any]) -> tuple[dict[str, Any], set[str]]:
    """Properties and required names of an object schema, with those of its ``allOf``
    members (how a grouped tool's action branch joins the shared keywords)."""
    properties: dict[str, Any] = {}
    required: set[str] = set()
    parts = [schema]
    for member in schema.get("allOf", []) if isinstance(schema.get("allOf"), list) else []:
        resolved = deref(root, member)
        if isinstance(resolved, dict):
            parts.append(resolved)
    for part in parts:
        props = part.get("properties")
        if isinstance(props, dict):
            properties.update(props)
        names = part.get("required")
        if isinstance(names, list):
            required.update(name for name in names if isinstance(name, str))
    return properties, required


def argument_rows(schema: JSON, max_depth: int = 3) -> list[ArgumentRow]:
    """The arguments an input schema declares, nested objects and array items included
    down to ``max_depth`` levels, in declaration order (local ``$ref``s followed)."""
    rows: list[ArgumentRow] = []
    root = schema

    def walk(node: JSON, prefix: str, depth: int) -> None:
        node = deref(root, node)
        if not isinstance(node, dict) or depth > max_depth:
            return
        properties, required = _properties(root, node)
        for name, sub in properties.items():
            resolved = deref(root, sub)
            if not isinstance(resolved, dict):
                resolved = {} if resolved is True or resolved is None else {"not": {}}
            path = f"{prefix}{name}"
            description = resolved.get("description")
            rows.append(ArgumentRow(path, depth, _type_of(root, resolved), name in required,
                                    _constraints(resolved), description if isinstance(description, str) else None))
            walk(resolved, f"{path}.", depth + 1)
            items = deref(root, resolved.get("items"))
            if isinstance(items, dict):
                walk(items, f"{path}[].", depth + 1)

    walk(schema, "", 0)
    return rows


ANNOTATION_LABELS = {
    "readOnlyHint": ("read-only", "may change things"),
    "destructiveHint": ("destructive", "not destructive"),
    "idempotentHint": ("idempotent", "not idempotent"),
    "openWorldHint": ("open world", "closed world"),
}


def annotation_labels(annotations: Mapping[str, Any] | None) -> list[str]:
    """A tool's annotations as words (``read-only``, ``not destructive``); unknown keys as key=value."""
    out = []
    for key, value in (annotations or {}).items():
        if key in ANNOTATION_LABELS and isinstance(value, bool):
            out.append(ANNOTATION_LABELS[key][0 if value else 1])
        elif key != "title":
            out.append(f"{key}={_show(value)}")
    return out
