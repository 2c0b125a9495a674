"""Short human descriptions of schemas and values, for a delta's before/after and hint.

They are read by people in changelogs and by models in ``<contract_awareness>``, so they
say what to send ("string, one of: EUR, USD"), not how the schema is spelled.
"""

from __future__ import annotations

import json

from app.jsontypes import JSON

MAX_LABEL = 120
FALSE_SCHEMA: dict[str, JSON] = {"not": {}}
"""The effective form of the schema ``false`` (see ``app.diff.schema.effective``)."""

BOUND_WORDS = {
    "maximum": "at most {v}",
    "exclusiveMaximum": "less than {v}",
    "minimum": "at least {v}",
    "exclusiveMinimum": "more than {v}",
    "maxLength": "at most {v} character{s}",
    "minLength": "at least {v} character{s}",
    "maxItems": "at most {v} item{s}",
    "minItems": "at least {v} item{s}",
    "maxProperties": "at most {v} propert{ies}",
    "minProperties": "at least {v} propert{ies}",
    "maxContains": "at most {v} matching item{s}",
    "minContains": "at least {v} matching item{s}",
    "multipleOf": "a multiple of {v}",
    "uniqueItems": "unique items",
}
NO_LIMIT = "no limit"


def value_label(value: JSON) -> str:
    """A JSON value as text: strings bare, everything else as compact JSON."""
    if isinstance(value, str):
        text = value
    else:
        text = json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return text if len(text) <= MAX_LABEL else text[: MAX_LABEL - 1] + "…"


def values_label(values: list[JSON]) -> str:
    return ", ".join(value_label(value) for value in values)


def types_of(schema: JSON) -> list[str]:
    if not isinstance(schema, dict):
        return []
    declared = schema.get("type")
    if isinstance(declared, str):
        return [declared]
    if isinstance(declared, list):
        return sorted(t for t in declared if isinstance(t, str))
    return []


def type_label(schema: JSON) -> str:
    """``string``, ``string or null``, ``array of string``, ``any``; ``no value`` for ``false``."""
    if schema is False or schema == FALSE_SCHEMA:
        return "no value"
    types = types_of(schema)
    if not types:
        if isinstance(schema, dict) and ("const" in schema or "enum" in schema):
            return "value"
        return "any"
    labels = []
    for name in types:
        if name == "array" and isinstance(schema.get("items"), dict) and types_of(schema["items"]):
            labels.append(f"array of {type_label(schema['items'])}")
        else:
            labels.append(name)
    return " or ".join(labels)


def bound_label(keyword: str, value: JSON) -> str:
    """``at most 50``, ``at least 1 item``: a limit as a sentence fragment."""
    template = BOUND_WORDS.get(keyword)
    if template is None:
        return f"{keyword} {value_label(value)}"
    one = value == 1 and not isinstance(value, bool)
    return template.format(v=value_label(value), s="" if one else "s", ies="y" if one else "ies")


def schema_summary(schema: JSON) -> str:
    """What a value must be: type, then the values it may take and its limits."""
    if schema is True or schema == {}:
        return "any value"
    if schema is False or schema == FALSE_SCHEMA:
        return "no value"
    if not isinstance(schema, dict):
        return value_label(schema)
    parts = [type_label(schema)]
    if "const" in schema:
        parts.append(f"exactly {value_label(schema['const'])}")
    elif isinstance(schema.get("enum"), list):
        parts.append(f"one of: {values_label(schema['enum'])}")
    if isinstance(schema.get("format"), str):
        parts.append(f"format {schema['format']}")
    if isinstance(schema.get("pattern"), str):
        parts.append(f"matching {schema['pattern']}")
    for keyword in BOUND_WORDS:
        if keyword in schema and keyword != "uniqueItems":
            parts.append(bound_label(keyword, schema[keyword]))
    if schema.get("uniqueItems") is True:
        parts.append("unique items")
    if isinstance(schema.get("properties"), dict) and schema["properties"]:
        parts.append("with " + _names(list(schema["properties"])))
    if isinstance(schema.get("required"), list) and schema["required"]:
        parts.append("requiring " + _names(schema["required"]))
    return ", ".join(part for part in parts if part != "any" or len(parts) == 1)


def _names(names: list[JSON], limit: int = 5) -> str:
    shown = ", ".join(value_label(name) for name in names[:limit])
    return shown + (f" and {len(names) - limit} more" if len(names) > limit else "")


def how_to_pass(schema: JSON) -> str:
    """The tail of a hint: ``with one of: EUR, USD`` or ``(string, at least 1)``."""
    if isinstance(schema, dict) and isinstance(schema.get("enum"), list):
        return f"with one of: {values_label(schema['enum'])}"
    if isinstance(schema, dict) and "const" in schema:
        return f"set to {value_label(schema['const'])}"
    return f"({schema_summary(schema)})"


def optional_label(value: JSON) -> str | None:
    """Like :func:`value_label`, but an absent value (None) stays None."""
    return None if value is None else value_label(value)
