"""A seeded, realistic MCP ``tools/list`` result for benchmarks, and a seeded change to it.

Benchmarks need a surface shaped like a large real server (hundreds of tools, nested
schemas, ``$defs``/``$ref`` reuse, nullable unions, output schemas) that is byte-for-byte
the same on every machine, so numbers from different runs compare. Everything draws from
one ``random.Random(seed)``; no global random state, no clock, no I/O.

``synthetic_surface(seed=7, tools=500)`` is about 1.3 MB as ``json.dumps(indent=2)``;
``mutate(surface, rng, count=25)`` changes ``count`` tools in several ways each, and also
removes one tool and adds one.

Run it to see the size: ``python -m bench.synthetic [--seed 7] [--tools 500]``.
"""

from __future__ import annotations

import argparse
import copy
import json
import random
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, TypeAlias

if TYPE_CHECKING:  # the standard library only at run time (importing ``app`` loads the engine)
    from app.jsontypes import JSON

Schema: TypeAlias = "dict[str, JSON]"

SERVER_NAME = "synthetic-suite"
PROTOCOL_VERSION = "2025-06-18"

DOMAINS: dict[str, tuple[str, ...]] = {
    "billing": ("invoice", "payment", "refund", "subscription", "credit_note", "price_plan"),
    "crm": ("contact", "account", "lead", "opportunity", "note"),
    "inventory": ("item", "warehouse", "stock_level", "transfer", "supplier"),
    "shipping": ("shipment", "label", "carrier", "parcel", "rate_quote"),
    "hr": ("employee", "leave_request", "payslip", "position", "review"),
    "support": ("ticket", "macro", "sla_policy", "comment", "escalation"),
    "analytics": ("report", "dashboard", "metric", "segment", "export_job"),
    "storage": ("bucket", "object", "snapshot", "lifecycle_rule"),
    "calendar": ("event", "calendar", "attendee", "room_booking"),
    "identity": ("user", "role", "api_key", "session", "audit_event"),
}
VERBS = ("get", "list", "create", "update", "delete", "search", "archive", "export", "approve", "sync")
VERB_WEIGHTS = (8, 4, 2, 2, 2, 1, 1, 1, 1, 1)
"""Reads outnumber writes on real servers."""
READ_ONLY_VERBS = frozenset({"get", "list", "search", "export"})
DESTRUCTIVE_VERBS = frozenset({"delete", "archive"})
IDEMPOTENT_VERBS = frozenset({"get", "list", "search", "update", "delete", "export"})
LIST_VERBS = frozenset({"list", "search", "export"})
MONEY_DOMAINS = frozenset({"billing", "crm", "inventory", "shipping"})
"""Domains whose records carry amounts (and so reuse the Money definition)."""

STATUSES = ("draft", "pending", "open", "active", "on_hold", "approved", "rejected", "closed", "void", "archived")
CURRENCIES = ("EUR", "USD", "GBP", "JPY", "CHF")
COUNTRIES_PATTERN = "^[A-Z]{2}$"
CHANNELS = ("email", "sms", "push", "webhook", "slack")
PRIORITIES = ("low", "normal", "high", "urgent")
SORT_FIELDS = ("created_at", "updated_at", "name")
REGIONS = ("eu-west-1", "eu-central-1", "us-east-1", "us-west-2", "ap-southeast-1")

SENTENCES = (
    "Results are scoped to the workspace of the authenticated caller.",
    "The call is rate limited to 60 requests per minute per API key.",
    "Timestamps are returned in UTC using RFC 3339.",
    "Amounts are expressed in minor units of the given currency.",
    "Soft-deleted records are excluded unless include_archived is set.",
    "Use the cursor from the previous page to continue a listing.",
    "Changes are recorded in the audit log together with the acting user.",
    "Requests with an idempotency key are safe to retry for 24 hours.",
    "Fields that are omitted keep their current values.",
    "Large exports are produced asynchronously and delivered by link.",
    "Webhooks are sent to every subscribed endpoint once the change commits.",
    "Personal data is redacted for callers without the privacy role.",
)
REWRITES = (
    "This operation was reworked; see the migration guide before relying on the old behaviour.",
    "Behaviour changed in this release: defaults now follow the workspace policy.",
    "Deprecated fields are still accepted but ignored; prefer the documented replacements.",
)


def _statuses(rng: random.Random) -> list[str]:
    """A status enum: a subset of the lifecycle, in lifecycle order (as servers list them)."""
    return sorted(rng.sample(STATUSES, rng.randint(4, 6)), key=STATUSES.index)


def _words(name: str) -> str:
    return name.replace("_", " ")


def _sentences(rng: random.Random, low: int, high: int) -> str:
    return " ".join(rng.sample(SENTENCES, rng.randint(low, high)))


# --- shared definitions ($defs) ----------------------------------------------------------


def _money() -> Schema:
    return {
        "type": "object",
        "description": "An amount of money in minor units (cents) with its ISO 4217 currency.",
        "properties": {
            "amount": {"type": "integer", "minimum": 0, "maximum": 100_000_000_00,
                       "description": "Amount in minor units, e.g. 1999 for 19.99."},
            "currency": {"type": "string", "enum": list(CURRENCIES), "description": "ISO 4217 currency code."},
        },
        "required": ["amount", "currency"],
        "additionalProperties": False,
    }


def _address() -> Schema:
    return {
        "type": "object",
        "description": "A postal address.",
        "properties": {
            "line1": {"type": "string", "minLength": 1, "maxLength": 200, "description": "Street and number."},
            "line2": {"anyOf": [{"type": "string", "maxLength": 200}, {"type": "null"}],
                      "description": "Apartment, suite or floor, if any."},
            "city": {"type": "string", "minLength": 1, "maxLength": 100, "description": "City or town."},
            "postal_code": {"type": "string", "pattern": "^[A-Za-z0-9 -]{3,10}$", "description": "Postal code."},
            "country": {"type": "string", "pattern": COUNTRIES_PATTERN,
                        "description": "ISO 3166-1 alpha-2 country code."},
        },
        "required": ["line1", "city", "country"],
        "additionalProperties": False,
    }


def _date_range() -> Schema:
    return {
        "type": "object",
        "description": "An inclusive time window; either end may be left open.",
        "properties": {
            "from": {"type": "string", "format": "date-time", "description": "Start of the window (UTC)."},
            "to": {"type": "string", "format": "date-time", "description": "End of the window (UTC)."},
        },
        "additionalProperties": False,
    }


def _party() -> Schema:
    return {
        "type": "object",
        "description": "A person or organisation taking part in the operation.",
        "properties": {
            "name": {"type": "string", "minLength": 1, "maxLength": 160, "description": "Display name."},
            "email": {"type": "string", "format": "email", "description": "Contact e-mail address."},
            "address": {"$ref": "#/$defs/Address"},
        },
        "required": ["name"],
        "additionalProperties": False,
    }


DEFINITIONS: dict[str, Callable[[], Schema]] = {
    "Money": _money,
    "Address": _address,
    "DateRange": _date_range,
    "Party": _party,
}
DEF_DEPENDENCIES = {"Party": ("Address",)}


# --- properties ----------------------------------------------------------------------------


def _id_property(noun: str) -> Schema:
    prefix = noun.replace("_", "")[:4]
    return {"type": "string", "pattern": f"^{prefix}_[A-Za-z0-9]{{12,24}}$",
            "description": f"Identifier of the {_words(noun)}, as returned when it was created."}


def _scalar(rng: random.Random, noun: str) -> tuple[str, Schema]:
    """One leaf argument of a kind real APIs have (bounded, enumerated, formatted, defaulted)."""
    kind = rng.randrange(9)
    if kind == 0:
        return "status", {"type": "string", "enum": _statuses(rng),
                          "description": f"Lifecycle status of the {_words(noun)}."}
    if kind == 1:
        return "limit", {"type": "integer", "minimum": 1, "maximum": rng.choice((50, 100, 200, 500)),
                         "default": 25, "description": "Maximum number of records to return per page."}
    if kind == 2:
        return "external_reference", {"type": "string", "maxLength": rng.choice((64, 128, 255)),
                                      "description": "Reference from the caller's own system, echoed back."}
    if kind == 3:
        return "priority", {"type": "string", "enum": list(PRIORITIES), "default": "normal",
                            "description": "How urgently the request should be handled."}
    if kind == 4:
        return "notify", {"type": "boolean", "default": False,
                          "description": "Send a notification to the owner once the operation completes."}
    if kind == 5:
        return "effective_date", {"type": "string", "format": "date",
                                  "description": "Date from which the change applies (YYYY-MM-DD)."}
    if kind == 6:
        return "discount_percent", {"type": "number", "minimum": 0, "maximum": 100, "multipleOf": 0.01,
                                    "description": "Discount as a percentage, two decimals at most."}
    if kind == 7:
        return "tags", {"type": "array", "items": {"type": "string", "pattern": "^[a-z0-9-]{1,32}$"},
                        "maxItems": rng.choice((10, 20, 50)), "uniqueItems": True,
                        "description": "Free-form labels used for filtering and reporting."}
    return "region", {"type": "string", "enum": list(REGIONS), "description": "Data residency region."}


def _filters(rng: random.Random, noun: str, money: bool, defs: set[str]) -> Schema:
    """A filter object; with amounts it nests four levels: filters -> amount -> min -> Money."""
    defs.add("DateRange")
    properties: Schema = {
        "status": {"type": "array", "items": {"type": "string", "enum": _statuses(rng)}, "maxItems": 10,
                   "description": "Only records in one of these statuses."},
        "created": {"$ref": "#/$defs/DateRange"},
    }
    if money:
        defs.add("Money")
        properties["amount"] = {
            "type": "object",
            "description": "Bounds on the amount; both ends are inclusive.",
            "properties": {"min": {"$ref": "#/$defs/Money"}, "max": {"$ref": "#/$defs/Money"}},
            "additionalProperties": False,
        }
    properties["query"] = {"type": "string", "minLength": 2, "maxLength": rng.choice((100, 200)),
                           "description": "Full-text search over names and descriptions."}
    return {
        "type": "object",
        "description": f"Conditions every returned {_words(noun)} must meet; all given conditions apply.",
        "properties": properties,
        "additionalProperties": False,
    }


def _line_items(rng: random.Random, defs: set[str]) -> Schema:
    """An array of objects whose items nest a $ref and a nested tax object."""
    defs.add("Money")
    return {
        "type": "array",
        "description": "The lines of the document, in display order.",
        "minItems": 1,
        "maxItems": rng.choice((100, 250, 500)),
        "items": {
            "type": "object",
            "properties": {
                "sku": {"type": "string", "pattern": "^[A-Z0-9-]{4,32}$", "description": "Stock keeping unit."},
                "description": {"type": "string", "maxLength": 500, "description": "Text printed on the line."},
                "quantity": {"type": "integer", "minimum": 1, "maximum": 10_000, "description": "Units ordered."},
                "unit_price": {"$ref": "#/$defs/Money"},
                "tax": {
                    "type": "object",
                    "properties": {
                        "rate": {"type": "number", "minimum": 0, "maximum": 30, "description": "Rate in percent."},
                        "code": {"type": "string", "enum": ["standard", "reduced", "zero", "exempt", "reverse_charge"],
                                 "description": "Tax treatment of the line."},
                    },
                    "required": ["code"],
                    "additionalProperties": False,
                },
            },
            "required": ["sku", "quantity", "unit_price"],
            "additionalProperties": False,
        },
    }


def _options(rng: random.Random) -> Schema:
    """Delivery options: options -> notification -> channels[] (an enum), four levels deep."""
    return {
        "type": "object",
        "description": "How the result is delivered and who is told about it.",
        "properties": {
            "notification": {
                "type": "object",
                "properties": {
                    "channels": {"type": "array", "items": {"type": "string", "enum": list(CHANNELS)},
                                 "minItems": 1, "uniqueItems": True, "description": "Where to send notices."},
                    "recipients": {"type": "array", "items": {"type": "string", "format": "email"},
                                   "maxItems": rng.choice((10, 25)), "description": "Extra people to notify."},
                    "template": {"type": "string", "enum": ["default", "compact", "detailed"], "default": "default",
                                 "description": "Layout of the notification message."},
                },
                "additionalProperties": False,
            },
            "idempotency_key": {"type": "string", "minLength": 8, "maxLength": 64,
                                "description": "Key that makes retries of this request safe."},
            "dry_run": {"type": "boolean", "default": False,
                        "description": "Validate and report what would change without changing anything."},
        },
        "additionalProperties": False,
    }


def _order_by() -> Schema:
    """Sort keys as an array of small objects, as many listing APIs take them."""
    return {
        "type": "array",
        "description": "Sort keys, most significant first.",
        "maxItems": 3,
        "items": {
            "type": "object",
            "properties": {
                "field": {"type": "string", "enum": list(SORT_FIELDS)},
                "direction": {"type": "string", "enum": ["asc", "desc"], "default": "asc"},
            },
            "required": ["field"],
            "additionalProperties": False,
        },
    }


def _nullable_timestamp(what: str) -> Schema:
    return {"anyOf": [{"type": "string", "format": "date-time"}, {"type": "null"}],
            "description": f"When the record was {what}; null clears it."}


def _input_schema(rng: random.Random, verb: str, noun: str, money: bool) -> Schema:
    """The arguments of one tool: an id, a few bounded leaves, and the nested parts its verb needs."""
    defs: set[str] = set()
    properties: Schema = {}
    required: list[str] = []
    if verb not in LIST_VERBS and verb != "create":
        properties[f"{noun}_id"] = _id_property(noun)
        required.append(f"{noun}_id")
    if verb in LIST_VERBS:
        properties["filters"] = _filters(rng, noun, money, defs)
        properties["order_by"] = _order_by()
        properties["cursor"] = {"anyOf": [{"type": "string", "maxLength": 512}, {"type": "null"}],
                                "description": "Opaque cursor from the previous page; null for the first page."}
    if verb == "create" or (verb == "update" and rng.random() < 0.5):
        defs.add("Party")
        properties["customer"] = {"$ref": "#/$defs/Party"}
        if money:
            defs.add("Money")
            properties["total"] = {"$ref": "#/$defs/Money"}
            if rng.random() < 0.5:
                properties["line_items"] = _line_items(rng, defs)
        if verb == "create":
            required += ["customer", "total"] if money else ["customer"]
    if verb in ("update", "archive", "approve"):
        properties["reason"] = {"type": "string", "minLength": 3, "maxLength": 1000,
                                "description": "Why the change is made; stored in the audit log."}
        properties["scheduled_at"] = _nullable_timestamp("scheduled")
    if verb in ("create", "approve", "sync") and rng.random() < 0.4:
        properties["options"] = _options(rng)
    for _ in range(rng.randint(1, 2)):
        name, leaf = _scalar(rng, noun)
        properties.setdefault(name, leaf)
    schema: Schema = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    schema["additionalProperties"] = False
    for name in sorted(defs):
        defs.update(DEF_DEPENDENCIES.get(name, ()))
    if defs:
        schema["$defs"] = {name: DEFINITIONS[name]() for name in sorted(defs)}
    return schema


def _output_schema(rng: random.Random, verb: str, money: bool) -> Schema:
    """The structured result: one record, or a page of records for the listing verbs."""
    record: Schema = {
        "type": "object",
        "properties": {
            "id": {"type": "string"},
            "status": {"type": "string", "enum": _statuses(rng)},
            "created_at": {"type": "string", "format": "date-time"},
            "updated_at": {"anyOf": [{"type": "string", "format": "date-time"}, {"type": "null"}]},
        },
        "required": ["id", "status", "created_at"],
    }
    if verb in LIST_VERBS:
        return {
            "type": "object",
            "properties": {
                "data": {"type": "array", "items": record},
                "next_cursor": {"anyOf": [{"type": "string"}, {"type": "null"}]},
                "total_count": {"type": "integer", "minimum": 0},
            },
            "required": ["data", "next_cursor"],
        }
    if money and verb in ("create", "update", "approve"):
        record["properties"]["total"] = {"$ref": "#/$defs/Money"}
        record["$defs"] = {"Money": _money()}
    return record


def make_tool(rng: random.Random, index: int) -> dict[str, JSON]:
    """One tool as a server lists it; ``index`` makes the name unique (``billing_get_invoice_017``)."""
    domain = rng.choice(sorted(DOMAINS))
    noun = rng.choice(DOMAINS[domain])
    verb = rng.choices(VERBS, VERB_WEIGHTS)[0]
    name = f"{domain}_{verb}_{noun}_{index:03d}"
    title = f"{verb.capitalize()} {_words(noun)}" + ("s" if verb in LIST_VERBS else "")
    tool: dict[str, JSON] = {
        "name": name,
        "title": title,
        "description": f"{verb.capitalize()} {_words(noun)} records in the {domain} service. "
                       + _sentences(rng, 1, 2),
        "inputSchema": _input_schema(rng, verb, noun, domain in MONEY_DOMAINS),
    }
    if rng.random() < 0.85:
        tool["annotations"] = {
            "title": title,
            "readOnlyHint": verb in READ_ONLY_VERBS,
            "destructiveHint": verb in DESTRUCTIVE_VERBS,
            "idempotentHint": verb in IDEMPOTENT_VERBS,
            "openWorldHint": domain in ("shipping", "billing"),
        }
    if rng.random() < 0.25:
        tool["outputSchema"] = _output_schema(rng, verb, domain in MONEY_DOMAINS)
    return tool


def synthetic_surface(seed: int = 7, tools: int = 500) -> dict[str, JSON]:
    """A ``tools/list`` result with ``tools`` tools, the same for the same seed on every machine."""
    rng = random.Random(seed)
    return {
        "protocolVersion": PROTOCOL_VERSION,
        "serverInfo": {"name": SERVER_NAME, "version": "1.0.0"},
        "tools": [make_tool(rng, index) for index in range(tools)],
    }


def surface_size(surface: JSON) -> int:
    """Bytes of ``json.dumps(indent=2)``: how the issue states the surface's size."""
    return len(json.dumps(surface, indent=2).encode("utf-8"))


# --- changes -------------------------------------------------------------------------------


def _slots(schema: JSON) -> Iterator[tuple[Schema, str, Schema]]:
    """Every (object schema, property name, property schema), depth first, ``$defs`` included."""
    stack: list[JSON] = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, list):
            stack.extend(reversed(node))
            continue
        if not isinstance(node, dict):
            continue
        properties = node.get("properties")
        if isinstance(properties, dict):
            for name, sub in properties.items():
                if isinstance(sub, dict):
                    yield node, name, sub
        for key in ("$defs", "properties"):
            if isinstance(node.get(key), dict):
                stack.extend(reversed(list(node[key].values())))
        for key in ("items", "anyOf"):
            if key in node:
                stack.append(node[key])


Mutation: TypeAlias = "Callable[[dict[str, JSON], random.Random], bool]"


def _pick(rng: random.Random, candidates: list[JSON]) -> JSON:
    return rng.choice(candidates) if candidates else None


def make_required(tool: dict[str, JSON], rng: random.Random) -> bool:
    """An optional argument became required (BREAKING)."""
    slots = [(owner, name) for owner, name, _ in _slots(tool["inputSchema"]) if name not in owner.get("required", [])]
    chosen = _pick(rng, slots)
    if chosen is None:
        return False
    owner, name = chosen
    owner["required"] = [*owner.get("required", []), name]
    return True


def drop_enum_value(tool: dict[str, JSON], rng: random.Random) -> bool:
    """An enum lost a value (BREAKING for input)."""
    enums = [sub for _, _, sub in _slots(tool["inputSchema"]) if len(sub.get("enum", [])) >= 3]
    enums += [sub["items"] for _, _, sub in _slots(tool["inputSchema"])
              if isinstance(sub.get("items"), dict) and len(sub["items"].get("enum", [])) >= 3]
    schema = _pick(rng, enums)
    if schema is None:
        return False
    victim = rng.choice(schema["enum"])
    schema["enum"] = [value for value in schema["enum"] if value != victim]
    return True


def tighten_bound(tool: dict[str, JSON], rng: random.Random) -> bool:
    """A maximum, maxLength or maxItems halved (BREAKING for input)."""
    bounded = [(sub, key) for _, _, sub in _slots(tool["inputSchema"])
               for key in ("maximum", "maxLength", "maxItems") if isinstance(sub.get(key), int) and sub[key] > 1]
    chosen = _pick(rng, bounded)
    if chosen is None:
        return False
    schema, key = chosen
    schema[key] = schema[key] // 2
    return True


def change_type(tool: dict[str, JSON], rng: random.Random) -> bool:
    """An integer argument became a numeric string (BREAKING), or a boolean an enum of strings."""
    typed = [sub for _, _, sub in _slots(tool["inputSchema"]) if sub.get("type") in ("integer", "boolean")]
    schema = _pick(rng, typed)
    if schema is None:
        return False
    if schema["type"] == "integer":
        for key in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "default"):
            schema.pop(key, None)
        schema.update(type="string", pattern="^[0-9]+$")
    else:
        schema.update(type="string", enum=["yes", "no"])
        schema.pop("default", None)
    return True


def rewrite_description(tool: dict[str, JSON], rng: random.Random) -> bool:
    """The tool description was rewritten (COSMETIC)."""
    tool["description"] = rng.choice(REWRITES) + " " + _sentences(rng, 1, 2)
    return True


def add_property(tool: dict[str, JSON], rng: random.Random) -> bool:
    """A new argument at the root, optional (SAFE) or required (BREAKING)."""
    schema = tool["inputSchema"]
    name = f"locale_{rng.randrange(1000):03d}"
    schema["properties"][name] = {"type": "string", "pattern": "^[a-z]{2}(-[A-Z]{2})?$",
                                  "description": "Language of the texts in the response (BCP 47)."}
    if rng.random() < 0.5:
        schema["required"] = [*schema.get("required", []), name]
    return True


def remove_property(tool: dict[str, JSON], rng: random.Random) -> bool:
    """A root argument that was optional is gone (BREAKING on a closed object)."""
    schema = tool["inputSchema"]
    optional = [name for name in schema["properties"] if name not in schema.get("required", [])]
    name = _pick(rng, optional)
    if name is None:
        return False
    del schema["properties"][name]
    return True


def flip_annotation(tool: dict[str, JSON], rng: random.Random) -> bool:
    """A behaviour hint flipped: read-only lost, destructive gained, idempotency or open world."""
    annotations = tool.setdefault("annotations", {})
    hint = rng.choice(("readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"))
    defaults = {"readOnlyHint": False, "destructiveHint": True, "idempotentHint": False, "openWorldHint": True}
    annotations[hint] = not annotations.get(hint, defaults[hint])
    return True


def change_pattern(tool: dict[str, JSON], rng: random.Random) -> bool:
    """A pattern changed (RISKY): the id prefix or a length limit inside it."""
    patterned = [sub for _, _, sub in _slots(tool["inputSchema"]) if isinstance(sub.get("pattern"), str)]
    schema = _pick(rng, patterned)
    if schema is None:
        return False
    schema["pattern"] = schema["pattern"].replace("$", "(-v2)?$", 1)
    return True


def change_default(tool: dict[str, JSON], rng: random.Random) -> bool:
    """A default value changed (graded by the default rule)."""
    defaulted = [sub for _, _, sub in _slots(tool["inputSchema"]) if "default" in sub]
    schema = _pick(rng, defaulted)
    if schema is None:
        return False
    value = schema["default"]
    if isinstance(value, bool):
        schema["default"] = not value
    elif isinstance(value, int):
        schema["default"] = value * 2
    elif isinstance(schema.get("enum"), list) and len(schema["enum"]) > 1:
        schema["default"] = next(v for v in schema["enum"] if v != value)
    else:
        return False
    return True


def drop_output_field(tool: dict[str, JSON], rng: random.Random) -> bool:
    """A required field of the result is gone (BREAKING for output)."""
    output = tool.get("outputSchema")
    if not isinstance(output, dict):
        return False
    slots = [(owner, name) for owner, name, _ in _slots(output) if name in owner.get("required", [])]
    chosen = _pick(rng, slots)
    if chosen is None:
        return False
    owner, name = chosen
    del owner["properties"][name]
    owner["required"] = [item for item in owner["required"] if item != name]
    return True


MUTATIONS: tuple[Mutation, ...] = (
    make_required,
    drop_enum_value,
    tighten_bound,
    change_type,
    rewrite_description,
    add_property,
    flip_annotation,
    remove_property,
    change_pattern,
    change_default,
    drop_output_field,
)


def _mutate_tool(tool: dict[str, JSON], rng: random.Random, first: Mutation, log: list[tuple[str, str]]) -> None:
    """``first`` (so every kind shows up across the changed tools), then others until 3-4 applied."""
    wanted = rng.randint(3, 4)
    others = [mutation for mutation in rng.sample(MUTATIONS, len(MUTATIONS)) if mutation is not first]
    for mutation in (first, *others):
        if wanted == 0:
            return
        if mutation(tool, rng):
            log.append((tool["name"], mutation.__name__))
            wanted -= 1


def _targets(tools: list[dict[str, JSON]], rng: random.Random, count: int) -> tuple[list[int], list[Mutation], int]:
    """Which tools change, each one's first change (round robin, so every kind occurs), and one
    more tool to remove. Output changes go to tools that have an output schema (a quarter do)."""
    with_output = [index for index, tool in enumerate(tools) if "outputSchema" in tool]
    output_count = min(len(with_output), max(1, round(count / len(MUTATIONS))), count)
    output_targets = rng.sample(with_output, output_count)
    taken = set(output_targets)
    others = rng.sample([index for index in range(len(tools)) if index not in taken], count - output_count + 1)
    kinds = [mutation for mutation in MUTATIONS if mutation is not drop_output_field]
    firsts = [drop_output_field] * output_count + [kinds[i % len(kinds)] for i in range(count - output_count)]
    return output_targets + others[:-1], firsts, others[-1]


def mutate(surface_json: dict[str, JSON], rng: random.Random, count: int = 25,
           log: list[tuple[str, str]] | None = None) -> dict[str, JSON]:
    """A new ``tools/list`` result: ``count`` tools changed in several ways each, one other tool
    removed and one new tool added. The input is not modified; ``log`` (if given) receives
    ``(tool, change)`` pairs so a benchmark can check the diff saw them."""
    after = copy.deepcopy(surface_json)
    tools: list[dict[str, JSON]] = after["tools"]
    if count + 1 > len(tools):
        raise ValueError(f"cannot change {count} tools and remove one more out of {len(tools)}")
    record = log if log is not None else []
    targets, firsts, spare = _targets(tools, rng, count)
    for index, first in zip(targets, firsts, strict=True):
        _mutate_tool(tools[index], rng, first, record)
    removed = tools.pop(spare)
    record.append((removed["name"], "removed"))
    added = make_tool(rng, len(surface_json["tools"]))  # index past every original: a new name
    tools.append(added)
    record.append((added["name"], "added"))
    return after


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--tools", type=int, default=500)
    parser.add_argument("--changed", type=int, default=25)
    args = parser.parse_args()
    before = synthetic_surface(args.seed, args.tools)
    log: list[tuple[str, str]] = []
    after = mutate(before, random.Random(args.seed + 1), args.changed, log)
    print(f"before: {len(before['tools'])} tools, {surface_size(before):,} bytes (json.dumps indent=2)")
    print(f"after:  {len(after['tools'])} tools, {surface_size(after):,} bytes; {len(log)} changes:")
    for tool, change in log:
        print(f"  {tool}: {change}")


if __name__ == "__main__":
    main()
