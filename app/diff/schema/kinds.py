"""The kinds of change the schema walk reports, as one typed enum, and their mappings.

A kind is a direction-free fact (``type.narrowed``: the place admits fewer types). Its
:class:`Effect` says what it does to the set of values the place admits, read as the
input side reads it; the check that emits a kind registers, beside itself, the rule each
family grades it with (:func:`maps`): the input rule and the output rule, where the
direction flips. A kind without a mapping in both directions is a bug that
``tests/test_schema_kinds.py`` finds; the severities stay in the registry rows
(``app/diff/rules/input_schema.py`` and ``output_schema.py``), apart from the checks.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from typing import Any


class Effect(Enum):
    """What a kind does to the values a place admits (the before -> after direction)."""

    NARROWS = "narrows"
    """Some value the old schema accepted is refused now."""
    WIDENS = "widens"
    """Every old value is still accepted, and some new ones too."""
    BOTH = "both"
    """Neither contains the other."""
    NEUTRAL = "neutral"
    """The admitted values are the same; behaviour may differ (a default)."""
    COSMETIC = "cosmetic"
    """Wording only."""
    UNKNOWN = "unknown"
    """No check explains it: treated as possibly narrowing."""

    @property
    def may_refuse(self) -> bool:
        """Whether a value the old schema accepted may now be refused."""
        return self in (Effect.NARROWS, Effect.BOTH, Effect.UNKNOWN)

    @property
    def may_admit(self) -> bool:
        """Whether a value the old schema refused may now be accepted."""
        return self in (Effect.WIDENS, Effect.BOTH, Effect.UNKNOWN)


class Kind(str, Enum):  # noqa: UP042 - the value is the kind's stable name (facts, messages)
    PROPERTY_REMOVED = "property.removed"
    PROPERTY_ADDED = "property.added"
    PROPERTY_ADDED_REQUIRED = "property.added-required"
    PROPERTY_FORBIDDEN = "property.forbidden"
    PROPERTY_ALLOWED = "property.allowed"
    REQUIRED_ADDED = "required.added"
    REQUIRED_REMOVED = "required.removed"
    TYPE_CHANGED = "type.changed"
    TYPE_NARROWED = "type.narrowed"
    TYPE_WIDENED = "type.widened"
    ENUM_VALUE_REMOVED = "enum.value-removed"
    ENUM_VALUE_ADDED = "enum.value-added"
    ENUM_ADDED = "enum.added"
    ENUM_REMOVED = "enum.removed"
    CONST_ADDED = "const.added"
    CONST_CHANGED = "const.changed"
    CONST_REMOVED = "const.removed"
    BOUND_TIGHTENED = "bound.tightened"
    BOUND_RELAXED = "bound.relaxed"
    BOUND_CHANGED = "bound.changed"
    BOUND_INTEGER_RANGE = "bound.integer-range"
    PATTERN_ADDED = "pattern.added"
    PATTERN_CHANGED = "pattern.changed"
    PATTERN_REMOVED = "pattern.removed"
    FORMAT_ADDED = "format.added"
    FORMAT_CHANGED = "format.changed"
    FORMAT_REMOVED = "format.removed"
    ADDITIONAL_CLOSED = "additional-properties.closed"
    ADDITIONAL_OPENED = "additional-properties.opened"
    PROPERTY_NAMES_NARROWED = "property-names.narrowed"
    PROPERTY_NAMES_RELAXED = "property-names.relaxed"
    UNION_ADDED = "union.added"
    UNION_REMOVED = "union.removed"
    UNION_BRANCH_REMOVED = "union.branch-removed"
    UNION_BRANCH_ADDED = "union.branch-added"
    ONE_OF_OVERLAP = "union.one-of-overlap"
    ONE_OF_RELAXED = "union.one-of-relaxed"
    ALL_OF_BRANCH_ADDED = "all-of.branch-added"
    ALL_OF_BRANCH_REMOVED = "all-of.branch-removed"
    CONTAINS_ADDED = "contains.added"
    CONTAINS_REMOVED = "contains.removed"
    CONDITIONAL_ADDED = "conditional.added"
    CONDITIONAL_REMOVED = "conditional.removed"
    CONDITIONAL_CHANGED = "conditional.changed"
    NOT_ADDED = "not.added"
    NOT_REMOVED = "not.removed"
    NOT_NARROWED = "not.narrowed"
    NOT_RELAXED = "not.relaxed"
    NOT_CHANGED = "not.changed"
    DEFAULT_CHANGED = "default.changed"
    DEPRECATED_ADDED = "deprecated.added"
    DEPRECATED_REMOVED = "deprecated.removed"
    DESCRIPTION_CHANGED = "description.changed"
    UNCLASSIFIED = "unclassified"

    def __str__(self) -> str:
        return self.value


Choice = str | Callable[[dict[str, Any]], tuple[str, str]]
"""A rule id, or a function of the change's facts giving (rule id, variant)."""


@dataclass(frozen=True)
class Mapping:
    """How each family grades one kind."""

    kind: Kind
    effect: Effect
    input: Choice
    output: Choice

    def choice(self, direction: str) -> Choice:
        return self.input if direction == "input" else self.output


MAPPINGS: dict[Kind, Mapping] = {}


def maps(kind: Kind, effect: Effect, *, input: Choice, output: Choice) -> Kind:
    """Register, beside the check that emits ``kind``, what it does and how each family grades it."""
    if kind in MAPPINGS:
        raise ValueError(f"kind {kind.value!r} is mapped twice")
    MAPPINGS[kind] = Mapping(kind, effect, input, output)
    return kind


def effect(kind: Kind) -> Effect:
    mapping = MAPPINGS.get(kind)
    return mapping.effect if mapping is not None else Effect.UNKNOWN


def resolve_rule(kind: Kind, direction: str, facts: dict[str, Any]) -> tuple[str, str]:
    """The (rule id, variant) a family grades ``kind`` with."""
    choice = MAPPINGS[kind].choice(direction)
    return (choice, "") if isinstance(choice, str) else choice(facts)
