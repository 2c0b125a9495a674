"""What the pages compute from the service's rows: fleet filters and orders (drifted
BREAKING first), delta grouping that keeps every chosen delta once, the argument a delta
is about, and argument tables read from input schemas."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.problems import InputError
from app.ui.views import (
    SEVERITIES,
    STATUSES,
    FleetQuery,
    argument_of,
    argument_rows,
    attention_key,
    fleet_page,
    group_deltas,
    instance_summary,
    severity_rank,
)

ROWS = st.lists(
    st.fixed_dictionaries({
        "server": st.text("abcdefgh-", min_size=1, max_size=6),
        "status": st.sampled_from(STATUSES),
        "maxSeverity": st.none() | st.sampled_from(SEVERITIES),
        "version": st.none() | st.integers(1, 50),
        "locked_at": st.none() | st.sampled_from(["2025-01-01T00:00:00Z", "2026-01-01T00:00:00Z"]),
        "last_reported": st.none() | st.sampled_from(["2025-06-01T00:00:00Z", "2026-06-01T00:00:00Z"]),
    }),
    max_size=40,
)


@given(rows=ROWS)
def test_attention_puts_drifted_breaking_first_and_keeps_every_row(rows: list[dict[str, Any]]):
    page = fleet_page(rows, FleetQuery(), page_size=1000)
    assert sorted(map(repr, page.rows)) == sorted(map(repr, rows))
    breaking = [row for row in rows if row["status"] == "drifted" and row["maxSeverity"] == "BREAKING"]
    assert page.rows[: len(breaking)] == sorted(breaking, key=lambda row: row["server"])
    keys = [attention_key(row) for row in page.rows]
    assert keys == sorted(keys)
    assert page.by_status == {status: sum(row["status"] == status for row in rows) for status in STATUSES}


NAMES = {"": lambda name: True, "a": lambda name: "a" in name, "B": lambda name: "b" in name,
         "b*": lambda name: name.startswith("b"), "*-*": lambda name: "-" in name}
"""Name filters and what each must keep: a substring (any case), or a glob."""


@given(rows=ROWS, status=st.sampled_from(("", *STATUSES)), severity=st.sampled_from(("", "none", *SEVERITIES)),
       name=st.sampled_from(sorted(NAMES)))
def test_filters_keep_exactly_the_matching_rows(rows: list[dict[str, Any]], status: str, severity: str, name: str):
    def expected(row: dict[str, Any]) -> bool:
        if status and row["status"] != status:
            return False
        if severity == "none" and row["maxSeverity"] is not None:
            return False
        if severity in SEVERITIES and severity_rank(row["maxSeverity"]) > severity_rank(severity):
            return False
        return NAMES[name](row["server"])

    page = fleet_page(rows, FleetQuery(status=status, severity=severity, name=name), page_size=1000)
    assert sorted(map(repr, page.rows)) == sorted(repr(row) for row in rows if expected(row))
    assert page.matching == len(page.rows) and page.total == len(rows)


@given(rows=ROWS, size=st.integers(1, 7), sort=st.sampled_from(("name", "status", "severity", "version",
                                                                "locked_at", "last_reported")))
def test_pages_cut_one_ordered_list(rows: list[dict[str, Any]], size: int, sort: str):
    whole = fleet_page(rows, FleetQuery(sort=sort), page_size=1000).rows
    cut = []
    for number in range(1, max(1, -(-len(rows) // size)) + 1):
        page = fleet_page(rows, FleetQuery(sort=sort, page=number), page_size=size)
        assert page.page == number and len(page.rows) <= size
        cut.extend(page.rows)
    assert cut == whole
    assert fleet_page(rows, FleetQuery(page=10_000), page_size=size).page == max(1, -(-len(rows) // size))


def test_sort_links_flip_the_direction_and_reset_the_page():
    query = FleetQuery(status="drifted", sort="name", page=3)
    assert query.sort_url("/ui/", "name") == "/ui/?status=drifted&sort=name&dir=desc"
    assert query.sort_url("/ui/", "version") == "/ui/?status=drifted&sort=version"
    assert query.sorted_by("name") == "ascending" and query.sorted_by("status") == "none"
    assert FleetQuery().url("/ui/fleet/rows") == "/ui/fleet/rows"


@pytest.mark.parametrize(("params", "field"), [({"status": "x"}, "status"), ({"severity": "low"}, "severity"),
                                               ({"sort": "x"}, "sort"), ({"dir": "x"}, "dir"),
                                               ({"page": "-1"}, "page"), ({"name": "x" * 201}, "name")])
def test_bad_fleet_parameters_name_their_field(params: dict[str, str], field: str):
    with pytest.raises(InputError) as problem:
        FleetQuery.parse(params)
    assert problem.value.where == field


DELTA = st.fixed_dictionaries({
    "severity": st.sampled_from(SEVERITIES),
    "tool": st.none() | st.sampled_from(["a", "b", "c"]),
    "action": st.none() | st.sampled_from(["x", "y"]),
    "rule": st.sampled_from(["r1", "r2"]),
    "field": st.just("input.a"),
})


@given(deltas=st.lists(DELTA, max_size=30), shown=st.sets(st.sampled_from(SEVERITIES), min_size=1))
def test_grouping_keeps_every_chosen_delta_once_under_its_tool_and_action(deltas: list[dict[str, Any]],
                                                                         shown: set[str]):
    groups = group_deltas(deltas, shown)
    flat = [(group.tool, bucket.action, delta) for group in groups for bucket in group.actions
            for delta in bucket.deltas]
    assert [d for _, _, d in flat] != [] or not [d for d in deltas if d["severity"] in shown]
    assert sorted(map(repr, (d for _, _, d in flat))) == sorted(map(repr, (d for d in deltas
                                                                           if d["severity"] in shown)))
    assert all(tool == d["tool"] and action == d["action"] for tool, action, d in flat)
    assert len({group.tool for group in groups}) == len(groups)
    tools = [group for group in groups if group.tool is not None]
    assert [severity_rank(g.worst) for g in tools] == sorted(severity_rank(g.worst) for g in tools)
    assert all(group.tool is not None for group in groups[: len(tools)])


@pytest.mark.parametrize(("field", "argument"), [
    ("input.paths", "paths"), ("input.address.city", "address.city"), ("actions.get.input.currency", "currency"),
    ("output.total", "total"), ("input.(root)", "(root)"), ("annotations.readOnlyHint", None), ("tool", None),
    ("description", None)])
def test_the_argument_a_delta_is_about(field: str, argument: str | None):
    assert argument_of(field) == argument


def test_argument_rows_follow_refs_nesting_items_and_allof():
    schema = {
        "type": "object",
        "$defs": {"Address": {"type": "object", "properties": {"city": {"type": "string", "minLength": 1}},
                              "required": ["city"]}},
        "properties": {
            "id": {"type": "string", "pattern": "^inv_", "description": "The invoice"},
            "address": {"$ref": "#/$defs/Address"},
            "tags": {"type": "array", "items": {"type": "object", "properties": {"name": {"enum": ["a", "b"]}}},
                     "maxItems": 3},
            "amount": {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": None},
        },
        "required": ["id"],
        "allOf": [{"properties": {"currency": {"const": "EUR"}}, "required": ["currency"]}],
        "additionalProperties": False,
    }
    rows = {row.name: row for row in argument_rows(schema)}
    assert list(rows) == ["id", "address", "address.city", "tags", "tags[].name", "amount", "currency"]
    assert (rows["id"].type, rows["id"].required, rows["id"].description) == ("string", True, "The invoice")
    assert rows["id"].constraints == ('matches "^inv_"',)
    assert (rows["address.city"].depth, rows["address.city"].required) == (1, True)
    assert rows["tags"].type == "array of object" and rows["tags"].constraints == ("at most 3 items",)
    assert rows["tags[].name"].constraints == ('one of "a", "b"',)
    assert rows["amount"].type == "integer or null" and rows["amount"].constraints == ("default null",)
    assert rows["currency"].required and rows["currency"].constraints == ('= "EUR"',)
    assert argument_rows({"type": "object"}) == []


def test_argument_rows_stop_at_the_depth_limit_and_on_cycles():
    node: dict[str, Any] = {"type": "object", "properties": {"next": {"$ref": "#"}}}
    rows = argument_rows(node, max_depth=3)
    assert [row.name for row in rows] == ["next", "next.next", "next.next.next", "next.next.next.next"]


def test_instances_are_counted_when_the_rows_carry_them():
    one = {"server": "a", "status": "in-sync", "instances": [{"instance": None, "status": "in-sync"}]}
    rollout = {"server": "b", "status": "drifted", "instances": [
        {"instance": "old", "status": "in-sync"}, {"instance": "new-1", "status": "drifted"},
        {"instance": "new-2", "status": "drifted"}]}
    assert instance_summary(one) == "1" and instance_summary(rollout) == "3 (2 drifted)"
    assert instance_summary({"server": "c", "status": "unreported", "instances": []}) == "0"
    assert instance_summary({"server": "d", "status": "in-sync"}) is None
    assert fleet_page([one, rollout], FleetQuery()).instances
    assert not fleet_page([{"server": "d", "status": "in-sync"}], FleetQuery()).instances
