"""fusion.* (RULES.md "Vurb / MCP Fusion lockfile parity"): the fields Vurb grades, graded
its way, both directions; sections absent on either side are not compared, and anything
else that differs is fusion.unclassified."""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from app import Surface, load_surface
from app.diff import Severity, diff, registry
from app.diff.model import Delta
from app.diff.registry import variants
from tests.conftest import fixture_path, load_json

BREAKING, RISKY, SAFE, COSMETIC = Severity.BREAKING, Severity.RISKY, Severity.SAFE, Severity.COSMETIC
LOCK = load_json(fixture_path("vurb.lock"))
BEFORE = load_surface(LOCK)


@pytest.fixture(autouse=True)
def strict_templates(monkeypatch):
    """A template parameter the rule code forgot to pass fails the test (instead of "?")."""

    def missing(self, key):
        raise AssertionError(f"template parameter {key!r} not passed")

    monkeypatch.setattr(registry._Params, "__missing__", missing)


def entry(lock: dict[str, Any]) -> dict[str, Any]:
    return lock["capabilities"]["tools"]["invoices"]


def changed(edit: Callable[[dict[str, Any]], None], base: dict[str, Any] | None = None):
    """The fixture lockfile with ``edit`` applied to the invoices entry (a new integrity
    digest too, as Vurb would write)."""
    lock = copy.deepcopy(base or LOCK)
    edit(entry(lock))
    entry(lock)["integrityDigest"] = "sha256:edited"
    return load_surface(lock)


def fusion(after, before=None) -> list[Delta]:
    return [d for d in diff(before or BEFORE, after).deltas if d.category == "fusion"]


def facts(deltas: list[Delta]) -> list[tuple]:
    return [(d.rule, d.severity, d.tool, d.action, d.field, d.path, d.before, d.after) for d in deltas]


def single(edit: Callable[[dict[str, Any]], None], base: dict[str, Any] | None = None) -> Delta:
    before = load_surface(base) if base is not None else None
    deltas = fusion(changed(edit, base), before)
    assert len(deltas) == 1, facts(deltas)
    assert deltas[0].tool == "invoices"
    return deltas[0]


def at(*tokens: str) -> tuple[str, str]:
    return "fusion." + ".".join(tokens), "/tools/invoices/fusion/" + "/".join(tokens)


def setter(section: str, key: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def edit(tool: dict[str, Any]) -> None:
        tool[section][key] = value
    return edit


def guardrail(key: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def edit(tool: dict[str, Any]) -> None:
        tool["behavior"]["cognitiveGuardrails"][key] = value
    return edit


# --- registry ---------------------------------------------------------------------------

def test_the_family_is_registered_with_the_rules_md_severities():
    graded = {(r.id, r.when): r.severity for rid in registry.rule_ids() if rid.startswith("fusion.")
              for r in variants(rid)}
    assert graded == {
        ("fusion.inputSchemaDigest", ""): BREAKING,
        ("fusion.egressSchemaDigest", ""): BREAKING,
        ("fusion.systemRulesFingerprint", ""): BREAKING,
        ("fusion.destructiveActions", "entered"): BREAKING,
        ("fusion.destructiveActions", "left"): BREAKING,
        ("fusion.readOnlyActions", "entered"): BREAKING,
        ("fusion.readOnlyActions", "left"): BREAKING,
        ("fusion.agentLimitMax", "to null"): RISKY,
        ("fusion.agentLimitMax", "changed"): SAFE,
        ("fusion.egressMaxBytes", "to null"): RISKY,
        ("fusion.egressMaxBytes", "changed"): SAFE,
        ("fusion.middlewareChain", ""): RISKY,
        ("fusion.affordanceTopology", ""): RISKY,
        ("fusion.tags", "removed"): SAFE,
        ("fusion.tags", "added"): COSMETIC,
        ("fusion.inflationRisk", "escalated"): BREAKING,
        ("fusion.inflationRisk", "de-escalated"): SAFE,
        ("fusion.unboundedCollection", "true"): RISKY,
        ("fusion.unboundedCollection", "false"): SAFE,
        ("fusion.entitlements", "gained"): BREAKING,
        ("fusion.entitlements", "lost"): SAFE,
        ("fusion.unclassified", ""): RISKY,
    }
    assert all(r.category == "fusion" and r.direction == "surface" for (rid, _), r in registry.REGISTRY.items()
               if rid.startswith("fusion."))
    assert all(r.hint for (rid, _), r in registry.REGISTRY.items()
               if rid.startswith("fusion.") and r.severity in (BREAKING, RISKY))


def test_unchanged_lockfile_and_integrity_digest_alone_give_nothing():
    assert fusion(load_surface(copy.deepcopy(LOCK))) == []
    assert fusion(changed(lambda tool: None)) == []


# --- digests --------------------------------------------------------------------------

@pytest.mark.parametrize(("rule", "section", "key", "old"), [
    ("fusion.inputSchemaDigest", "surface", "inputSchemaDigest", "sha256:1111"),
    ("fusion.egressSchemaDigest", "behavior", "egressSchemaDigest", "sha256:2222"),
    ("fusion.systemRulesFingerprint", "behavior", "systemRulesFingerprint", "static:abc123"),
])
@pytest.mark.parametrize("new", ["sha256:9999", None])
def test_digest_changes_are_breaking(rule, section, key, old, new):
    delta = single(setter(section, key, new))
    assert facts([delta]) == [(rule, BREAKING, "invoices", None, *at(section, key), old, new)]
    assert delta.hint


def test_digest_changes_back_are_breaking_too():
    base = copy.deepcopy(LOCK)
    entry(base)["behavior"]["egressSchemaDigest"] = "sha256:new"
    delta = single(setter("behavior", "egressSchemaDigest", "sha256:2222"), base)
    assert (delta.rule, delta.severity, delta.before, delta.after) == ("fusion.egressSchemaDigest", BREAKING,
                                                                        "sha256:new", "sha256:2222")


# --- action lists ---------------------------------------------------------------------

@pytest.mark.parametrize(("key", "value", "action", "when_word"), [
    ("destructiveActions", ["void", "create"], "create", "now destructive"),
    ("destructiveActions", [], "void", "no longer marked destructive"),
    ("readOnlyActions", ["list", "void"], "void", "now claims to be read-only"),
    ("readOnlyActions", [], "list", "no longer read-only"),
])
def test_membership_flip_is_breaking_per_action(key, value, action, when_word):
    delta = single(setter("behavior", key, value))
    entered = action in value
    assert facts([delta]) == [(f"fusion.{key}", BREAKING, "invoices", action, *at("behavior", key),
                               "not listed" if entered else "listed", "listed" if entered else "not listed")]
    assert when_word in delta.description and f'"{action}"' in delta.hint


def test_membership_flips_are_reported_one_per_action():
    deltas = fusion(changed(setter("behavior", "destructiveActions", ["create", "list"])))
    assert [(d.rule, d.action) for d in deltas] == [("fusion.destructiveActions", "create"),
                                                    ("fusion.destructiveActions", "list"),
                                                    ("fusion.destructiveActions", "void")]


def test_actions_that_are_new_or_gone_are_not_membership_flips():
    def edit(tool):
        tool["surface"]["actions"] = ["create", "list", "archive"]
        tool["behavior"]["destructiveActions"] = ["archive"]
    result = diff(BEFORE, changed(edit))
    assert [d for d in result.deltas if d.category == "fusion"] == []
    assert {(d.rule, d.action) for d in result.deltas} == {("action.added", "archive"), ("action.removed", "void")}


def test_reordered_action_lists_and_tags_give_nothing():
    def edit(tool):
        tool["behavior"]["destructiveActions"] = ["void", "void"]
        tool["surface"]["tags"] = ["billing", "billing"]
    assert fusion(changed(edit)) == []


# --- guardrails -----------------------------------------------------------------------

@pytest.mark.parametrize(("key", "old", "new", "severity", "when_word"), [
    ("agentLimitMax", 50, None, RISKY, "no longer caps"),
    ("agentLimitMax", 50, 200, SAFE, "changed"),
    ("agentLimitMax", 50, 10, SAFE, "changed"),
    ("agentLimitMax", None, 50, SAFE, "changed"),
    ("egressMaxBytes", None, 4096, SAFE, "changed"),
    ("egressMaxBytes", 4096, None, RISKY, "no longer caps"),
    ("egressMaxBytes", 4096, 8192, SAFE, "changed"),
])
def test_guardrail_to_null_is_risky_and_any_other_change_safe(key, old, new, severity, when_word):
    base = copy.deepcopy(LOCK)
    entry(base)["behavior"]["cognitiveGuardrails"][key] = old
    delta = single(guardrail(key, new), base)
    assert facts([delta]) == [(f"fusion.{key}", severity, "invoices", None,
                               *at("behavior", "cognitiveGuardrails", key),
                               "none" if old is None else str(old), "none" if new is None else str(new))]
    assert when_word in delta.description


def test_guardrails_removed_altogether_count_as_null():
    def edit(tool):
        del tool["behavior"]["cognitiveGuardrails"]
    delta = single(edit)
    assert (delta.rule, delta.severity, delta.before, delta.after) == ("fusion.agentLimitMax", RISKY, "50", "none")


def test_unknown_guardrail_is_unclassified():
    delta = single(guardrail("maxRetries", 3))
    assert facts([delta]) == [("fusion.unclassified", RISKY, "invoices", None,
                               *at("behavior", "cognitiveGuardrails", "maxRetries"), None, "3")]


# --- middleware, topology, tags ---------------------------------------------------------

@pytest.mark.parametrize("value", [["auth:mw", "rate:mw"], [], ["audit:mw"]])
def test_middleware_chain_changed_is_risky(value):
    delta = single(setter("behavior", "middlewareChain", value))
    assert facts([delta]) == [("fusion.middlewareChain", RISKY, "invoices", None, *at("behavior", "middlewareChain"),
                               "auth:mw", ", ".join(value) if value else "none")]
    assert delta.hint


def test_middleware_chain_order_matters():
    base = copy.deepcopy(LOCK)
    entry(base)["behavior"]["middlewareChain"] = ["auth:mw", "rate:mw"]
    delta = single(setter("behavior", "middlewareChain", ["rate:mw", "auth:mw"]), base)
    assert (delta.rule, delta.before, delta.after) == ("fusion.middlewareChain", "auth:mw, rate:mw",
                                                       "rate:mw, auth:mw")


@pytest.mark.parametrize("value", [["payments.refund", "payments.capture"], []])
def test_affordance_topology_changed_is_risky(value):
    delta = single(setter("behavior", "affordanceTopology", value))
    assert facts([delta]) == [("fusion.affordanceTopology", RISKY, "invoices", None,
                               *at("behavior", "affordanceTopology"), "payments.refund",
                               ", ".join(value) if value else "none")]


def test_affordance_topology_reordered_is_no_change():
    base = copy.deepcopy(LOCK)
    entry(base)["behavior"]["affordanceTopology"] = ["a.one", "b.two"]
    assert fusion(changed(setter("behavior", "affordanceTopology", ["b.two", "a.one"]), base),
                  load_surface(base)) == []


@pytest.mark.parametrize(("value", "severity", "when_word"), [
    (["billing", "finance"], COSMETIC, "added"),
    ([], SAFE, "removed"),
    (["finance"], SAFE, "removed"),
])
def test_tags_removed_safe_only_added_cosmetic(value, severity, when_word):
    delta = single(setter("surface", "tags", value))
    assert facts([delta]) == [("fusion.tags", severity, "invoices", None, *at("surface", "tags"), "billing",
                               ", ".join(value))]
    assert when_word in delta.description


def test_tags_section_removed_counts_as_tags_removed():
    def edit(tool):
        del tool["surface"]["tags"]
    delta = single(edit)
    assert (delta.rule, delta.severity) == ("fusion.tags", SAFE)


# --- token economics --------------------------------------------------------------------

@pytest.mark.parametrize(("old", "new", "severity"), [
    ("low", "medium", BREAKING), ("low", "critical", BREAKING), ("medium", "high", BREAKING),
    ("critical", "low", SAFE), ("high", "medium", SAFE), ("medium", "low", SAFE),
])
def test_inflation_risk_escalated_breaking_de_escalated_safe(old, new, severity):
    base = copy.deepcopy(LOCK)
    entry(base)["tokenEconomics"]["inflationRisk"] = old
    delta = single(setter("tokenEconomics", "inflationRisk", new), base)
    assert facts([delta]) == [("fusion.inflationRisk", severity, "invoices", None,
                               *at("tokenEconomics", "inflationRisk"), old, new)]


@pytest.mark.parametrize(("old", "new"), [("low", "extreme"), ("weird", "low"), ("low", None), ("low", 3)])
def test_inflation_risk_outside_the_scale_is_unclassified(old, new):
    base = copy.deepcopy(LOCK)
    entry(base)["tokenEconomics"]["inflationRisk"] = old
    delta = single(setter("tokenEconomics", "inflationRisk", new), base)
    assert (delta.rule, delta.severity, delta.field) == ("fusion.unclassified", RISKY,
                                                         "fusion.tokenEconomics.inflationRisk")


@pytest.mark.parametrize(("old", "new", "rule", "severity"), [
    (False, True, "fusion.unboundedCollection", RISKY),
    (None, True, "fusion.unboundedCollection", RISKY),
    (True, False, "fusion.unboundedCollection", SAFE),
    (True, None, "fusion.unboundedCollection", SAFE),
    (False, "yes", "fusion.unclassified", RISKY),
])
def test_unbounded_collection_true_risky_false_safe(old, new, rule, severity):
    base = copy.deepcopy(LOCK)
    entry(base)["tokenEconomics"]["unboundedCollection"] = old
    delta = single(setter("tokenEconomics", "unboundedCollection", new), base)
    assert (delta.rule, delta.severity, *at("tokenEconomics", "unboundedCollection")) == (
        rule, severity, delta.field, delta.path)


def test_schema_field_count_is_unclassified():
    delta = single(setter("tokenEconomics", "schemaFieldCount", 6))
    assert facts([delta]) == [("fusion.unclassified", RISKY, "invoices", None,
                               *at("tokenEconomics", "schemaFieldCount"), "5", "6")]


# --- entitlements -----------------------------------------------------------------------

@pytest.mark.parametrize(("key", "value", "severity", "old", "new"), [
    ("subprocess", True, BREAKING, "false", "true"),
    ("codeEvaluation", True, BREAKING, "false", "true"),  # absent -> true
    ("network", False, SAFE, "true", "false"),
    ("network", None, SAFE, "true", "false"),
])
def test_entitlement_gained_breaking_lost_safe(key, value, severity, old, new):
    delta = single(setter("entitlements", key, value))
    assert facts([delta]) == [("fusion.entitlements", severity, "invoices", None, *at("entitlements", key), old, new)]
    assert key in delta.description


def test_entitlement_removed_from_the_section_is_lost():
    def edit(tool):
        del tool["entitlements"]["network"]
    delta = single(edit)
    assert (delta.rule, delta.severity, delta.before, delta.after) == ("fusion.entitlements", SAFE, "true", "false")


def test_one_delta_per_entitlement():
    def edit(tool):
        tool["entitlements"].update(filesystem=True, subprocess=True, network=False, crypto=False)
    deltas = fusion(changed(edit))
    assert [(d.field, d.severity) for d in deltas] == [("fusion.entitlements.filesystem", BREAKING),
                                                      ("fusion.entitlements.subprocess", BREAKING),
                                                      ("fusion.entitlements.network", SAFE)]


def test_non_boolean_entitlement_is_unclassified():
    delta = single(setter("entitlements", "network", ["api.example.com"]))
    assert (delta.rule, delta.severity, delta.field) == ("fusion.unclassified", RISKY, "fusion.entitlements.network")


# --- sections, the rest, and what other families own -----------------------------------

def with_entry(fusion_entry: dict[str, Any]) -> Surface:
    """The fixture surface with the invoices tool carrying ``fusion_entry`` (built directly:
    the reader insists on a surface section)."""
    return replace(BEFORE, tools={"invoices": replace(BEFORE.tools["invoices"], fusion=fusion_entry)})


@pytest.mark.parametrize("section", ["surface", "behavior", "tokenEconomics", "entitlements"])
def test_a_section_absent_on_either_side_is_not_compared(section):
    full = copy.deepcopy(entry(LOCK))
    for key, value in {"surface": {"inputSchemaDigest": "sha256:x", "tags": []},
                       "behavior": {"egressSchemaDigest": "sha256:x"},
                       "tokenEconomics": {"inflationRisk": "critical"},
                       "entitlements": {"subprocess": True}}.items():
        full[key].update(value)
    dropped = {key: value for key, value in full.items() if key != section}
    compared = {key for key in ("surface", "behavior", "tokenEconomics", "entitlements") if key != section}
    for before, after in ((BEFORE, with_entry(dropped)), (with_entry(dropped), BEFORE)):
        deltas = fusion(after, before)
        assert {d.path.split("/")[4] for d in deltas} == compared


def test_unknown_keys_inside_sections_are_unclassified():
    def edit(tool):
        tool["behavior"]["stateSync"] = {"invalidates": ["invoices.*"]}
        tool["surface"]["deprecated"] = True
    deltas = fusion(changed(edit))
    assert [(d.rule, d.severity, d.field, d.path) for d in deltas] == [
        ("fusion.unclassified", RISKY, *at("behavior", "stateSync")),
        ("fusion.unclassified", RISKY, *at("surface", "deprecated")),
    ]


def test_malformed_section_is_unclassified_not_a_crash():
    delta = single(lambda tool: tool.update(behavior=["not", "an", "object"]))
    assert (delta.rule, delta.severity, delta.field) == ("fusion.unclassified", RISKY, "fusion.behavior")


def test_description_and_actions_are_left_to_the_surface_rules():
    def edit(tool):
        tool["surface"]["description"] = "Manage all invoices"
        tool["surface"]["actions"] = ["create", "list", "void", "send"]
    result = diff(BEFORE, changed(edit))
    assert sorted((d.rule, d.action) for d in result.deltas) == [("action.added", "send"),
                                                                 ("tool.description.changed", None)]


def test_only_tools_with_a_fusion_section_on_both_sides_are_compared():
    plain = load_surface({"tools": [{"name": "invoices", "description": "Manage invoices",
                                     "inputSchema": {"type": "object"}}]})
    assert fusion(plain) == []
    assert fusion(BEFORE, plain) == []


def test_everything_at_once_sorted_breaking_first():
    def edit(tool):
        tool["surface"]["inputSchemaDigest"] = "sha256:new"
        tool["surface"]["tags"] = ["billing", "finance"]
        tool["behavior"]["cognitiveGuardrails"]["agentLimitMax"] = None
        tool["entitlements"]["network"] = False
    assert [(d.rule, d.severity) for d in fusion(changed(edit))] == [
        ("fusion.inputSchemaDigest", BREAKING),
        ("fusion.agentLimitMax", RISKY),
        ("fusion.entitlements", SAFE),
        ("fusion.tags", COSMETIC),
    ]


# --- invariants -----------------------------------------------------------------------

GRADED_PATHS = [
    ("surface", "inputSchemaDigest"), ("surface", "tags"),
    ("behavior", "egressSchemaDigest"), ("behavior", "systemRulesFingerprint"), ("behavior", "destructiveActions"),
    ("behavior", "readOnlyActions"), ("behavior", "middlewareChain"), ("behavior", "affordanceTopology"),
    ("behavior", "cognitiveGuardrails", "agentLimitMax"), ("behavior", "cognitiveGuardrails", "egressMaxBytes"),
    ("tokenEconomics", "inflationRisk"), ("tokenEconomics", "schemaFieldCount"),
    ("tokenEconomics", "unboundedCollection"),
    ("entitlements", "filesystem"), ("entitlements", "network"), ("entitlements", "subprocess"),
    ("entitlements", "crypto"), ("behavior", "somethingNew"), ("tokenEconomics", "somethingNew"),
]


@settings(max_examples=80, deadline=None)
@given(st.sampled_from(GRADED_PATHS), st.sampled_from(["zz-unknown", 987654, True, {"x": 1}, ["zz", 1]]))
def test_nothing_slips_through(path, value):
    """A value no side had before, written anywhere but the fields other families own,
    always gives at least one fusion delta, at that place."""
    def edit(tool):
        node = tool
        for token in path[:-1]:
            node = node[token]
        node[path[-1]] = value

    original = entry(LOCK)
    for token in path:
        original = original.get(token) if isinstance(original, dict) else None
    assume(original != value)
    deltas = fusion(changed(edit))
    assert deltas
    assert {d.path for d in deltas} == {"/tools/invoices/fusion/" + "/".join(path)}


@settings(max_examples=40, deadline=None)
@given(st.randoms(use_true_random=False))
def test_reordering_set_like_lists_is_no_change(rnd):
    def edit(tool):
        for section, key in (("surface", "tags"), ("behavior", "destructiveActions"),
                             ("behavior", "readOnlyActions"), ("behavior", "affordanceTopology")):
            rnd.shuffle(tool[section][key])

    base = copy.deepcopy(LOCK)
    tool = entry(base)
    tool["surface"]["tags"] = ["a", "b", "c", "d"]
    tool["behavior"]["destructiveActions"] = ["void", "create"]
    tool["behavior"]["readOnlyActions"] = ["list", "create", "void"]
    tool["behavior"]["affordanceTopology"] = ["x.a", "x.b", "x.c"]
    assert fusion(changed(edit, base), load_surface(base)) == []
