"""Every kind of change the schema walk emits is a typed :class:`Kind`, mapped beside its
check to a registered rule in both directions (input and output), and every input/output
schema rule is reached by some kind: a typo can no longer become a silent unclassified."""

from __future__ import annotations

import re
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest

from app import load_surface
from app.diff.registry import REGISTRY, lookup
from app.diff.schema import MAPPINGS, Kind, SchemaComparer, make_node
from app.diff.schema.kinds import resolve_rule
from tests.conftest import CORPUS_SERVERS, corpus_versions
from tests.test_schema_semantics import CASES, OUTPUT_CASES

FACT_VARIANTS: list[dict[str, Any]] = [{}, {"closed": True, "required": True}, {"closed": False, "required": False}]
DOCS = Path(__file__).parent.parent / "docs"


@pytest.mark.parametrize("kind", list(Kind), ids=str)
def test_every_kind_is_mapped_to_registered_rules_in_both_directions(kind: Kind) -> None:
    assert kind in MAPPINGS, f"{kind.value} has no mapping beside its check"
    for direction in ("input", "output"):
        for facts in FACT_VARIANTS:
            rule_id, when = resolve_rule(kind, direction, dict(facts))
            assert rule_id.startswith(direction + "."), (kind, direction, rule_id)
            lookup(rule_id, when)  # raises when the rule (or its variant) is not registered


def test_every_schema_rule_is_reached_by_a_kind() -> None:
    reached = {resolve_rule(kind, direction, dict(facts))[0]
               for kind in Kind for direction in ("input", "output") for facts in FACT_VARIANTS}
    schema_rules = {rule.id for rule in REGISTRY.values() if rule.id.split(".")[0] in ("input", "output")}
    unreached = schema_rules - reached - {"output.schema.added", "output.schema.removed"}
    assert not unreached, f"rules no kind maps to: {sorted(unreached)}"


def test_every_schema_rule_is_a_row_of_rules_md() -> None:
    table = (DOCS / "RULES.md").read_text(encoding="utf-8")
    first_cells = re.findall(r"^\|\s*([^|]+)\|", table, flags=re.MULTILINE)
    named = {name for cell in first_cells for name in re.findall(r"(?:input|output)\.[a-z-]+(?:\.[a-z-]+)*", cell)}
    schema_rules = {rule.id for rule in REGISTRY.values() if rule.id.split(".")[0] in ("input", "output")}
    assert schema_rules <= named, f"rules without a RULES.md row: {sorted(schema_rules - named)}"


def _emitted(before: Any, after: Any) -> list[Any]:
    found: list[Any] = []

    def sink(kind: Any, *args: Any, **facts: Any) -> None:
        found.append(kind)

    SchemaComparer(sink).compare(make_node(before, before, ""), make_node(after, after, ""), "input")
    return found


def _corpus_pairs() -> list[tuple[Any, Any]]:
    pairs = []
    for server in CORPUS_SERVERS:
        for before, after in pairwise(corpus_versions(server)):
            b, a = load_surface(before), load_surface(after)
            for name in sorted(b.tools.keys() & a.tools.keys()):
                for schema in ("input_schema", "output_schema"):
                    x, y = getattr(b.tools[name], schema), getattr(a.tools[name], schema)
                    if x is not None and y is not None:
                        pairs.append((x, y))
    return pairs


def test_every_emitted_kind_is_a_mapped_kind() -> None:
    pairs = _corpus_pairs() + [(b, a) for b, a, _ in [*CASES.values(), *OUTPUT_CASES.values()]]
    emitted = [kind for before, after in pairs for kind in _emitted(before, after)]
    assert emitted, "the corpus and the class cases emit kinds"
    assert all(isinstance(kind, Kind) and kind in MAPPINGS for kind in emitted)


