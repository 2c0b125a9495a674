"""Vurb / MCP Fusion lockfile parity (RULES.md "Vurb / MCP Fusion lockfile parity").

When both sides of a tool carry a Vurb lockfile entry (``Tool.fusion``), the fields that
project grades are graded the same way here, with rule ids ``fusion.<field>``. A section
(``surface``, ``behavior``, ``tokenEconomics``, ``entitlements``, or any other top-level
key of the entry) absent on either side is not compared. Inside a compared section,
anything that differs and that no rule explains is ``fusion.unclassified`` (RISKY), except
the aggregate ``integrityDigest`` (every change moves it) and ``surface.description`` /
``surface.actions``, which the surface rules already report (``tool.description.changed``,
``action.added``/``action.removed``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from app.diff.describe import value_label, values_label
from app.diff.emitter import Emitter, Scope
from app.diff.registry import BREAKING, COSMETIC, RISKY, SAFE, rule
from app.jsonio import canonical_json
from app.jsontypes import JSON
from app.model import Tool
from app.schemas import pointer

C, D = "fusion", "surface"

rule("fusion.inputSchemaDigest", BREAKING, C, D,
     'The input schema of tool "{tool}" changed (Vurb lockfile input schema digest)',
     'Re-read the current input schema of "{tool}" before calling it: arguments that were valid may now be rejected.',
     summary="surface.inputSchemaDigest changed: the input schema changed.")
rule("fusion.egressSchemaDigest", BREAKING, C, D,
     'The response schema of tool "{tool}" changed (Vurb lockfile egress schema digest)',
     'Do not rely on the old shape of the results of "{tool}": read the fields it returns now.',
     summary="behavior.egressSchemaDigest changed: the response (egress) schema changed.")
rule("fusion.systemRulesFingerprint", BREAKING, C, D,
     'The system rules of tool "{tool}" changed',
     'Follow the rules "{tool}" returns with its results now, not the rules you saw before.',
     summary="behavior.systemRulesFingerprint changed: the rules the tool attaches to its results changed.")
rule("fusion.destructiveActions", BREAKING, C, D,
     'Action "{action}" of tool "{tool}" is now destructive',
     'Confirm with the user before calling "{tool}" with action "{action}": it may now destroy or overwrite data.',
     when="entered", summary="An action present on both sides entered behavior.destructiveActions.")
rule("fusion.destructiveActions", BREAKING, C, D,
     'Action "{action}" of tool "{tool}" is no longer marked destructive',
     'Keep confirming "{action}" of "{tool}" with the user: a claim of less danger is not proof of it.',
     when="left", summary="An action present on both sides left behavior.destructiveActions.")
rule("fusion.readOnlyActions", BREAKING, C, D,
     'Action "{action}" of tool "{tool}" now claims to be read-only',
     'Do not call "{action}" of "{tool}" without the confirmation you used before just because it now claims '
     'to be read-only.',
     when="entered", summary="An action present on both sides entered behavior.readOnlyActions.")
rule("fusion.readOnlyActions", BREAKING, C, D,
     'Action "{action}" of tool "{tool}" is no longer read-only: it may now modify data',
     'Treat "{action}" of "{tool}" as a write: confirm with the user before calling it.',
     when="left", summary="An action present on both sides left behavior.readOnlyActions.")
rule("fusion.agentLimitMax", RISKY, C, D,
     'Tool "{tool}" no longer caps how many items it returns to the agent (was {before})',
     'Expect unbounded result lists from "{tool}": ask for narrow results (filters, pagination, limits).',
     when="to null", summary="cognitiveGuardrails.agentLimitMax became null: results are no longer capped.")
rule("fusion.agentLimitMax", SAFE, C, D,
     'The item limit of tool "{tool}" changed',
     'Expect at most {after} items from "{tool}" per call.',
     when="changed", summary="cognitiveGuardrails.agentLimitMax changed to a value.")
rule("fusion.egressMaxBytes", RISKY, C, D,
     'Tool "{tool}" no longer caps the size of its responses (was {before} bytes)',
     'Expect large responses from "{tool}": request only what you need.',
     when="to null", summary="cognitiveGuardrails.egressMaxBytes became null: responses are no longer capped.")
rule("fusion.egressMaxBytes", SAFE, C, D,
     'The response size limit of tool "{tool}" changed',
     when="changed", summary="cognitiveGuardrails.egressMaxBytes changed to a value.")
rule("fusion.middlewareChain", RISKY, C, D,
     'The middleware chain of tool "{tool}" changed',
     'Calls of "{tool}" now pass through different middleware (authentication, validation, limits): expect '
     'different refusals or errors and read them before retrying.',
     summary="behavior.middlewareChain changed.")
rule("fusion.affordanceTopology", RISKY, C, D,
     'The tools "{tool}" leads to (affordance topology) changed',
     'Do not follow remembered next steps after "{tool}"; use the tools it points to now ({after}).',
     summary="behavior.affordanceTopology changed.")
rule("fusion.tags", SAFE, C, D,
     'Tags removed from tool "{tool}": {removed} (added: {added})',
     when="removed", summary="surface.tags lost a tag.")
rule("fusion.tags", COSMETIC, C, D,
     'Tags added to tool "{tool}": {added}',
     when="added", summary="surface.tags only gained tags.")
rule("fusion.inflationRisk", BREAKING, C, D,
     'The token inflation risk of tool "{tool}" rose',
     'Results of "{tool}" may now be much larger: ask for narrow results (filters, limits) to protect your context.',
     when="escalated", summary="tokenEconomics.inflationRisk escalated (low < medium < high < critical).")
rule("fusion.inflationRisk", SAFE, C, D,
     'The token inflation risk of tool "{tool}" fell',
     when="de-escalated", summary="tokenEconomics.inflationRisk de-escalated.")
rule("fusion.unboundedCollection", RISKY, C, D,
     'Tool "{tool}" may now return unbounded collections',
     'Use filters and pagination when calling "{tool}": its results are no longer bounded.',
     when="true", summary="tokenEconomics.unboundedCollection became true.")
rule("fusion.unboundedCollection", SAFE, C, D,
     'Tool "{tool}" no longer returns unbounded collections',
     when="false", summary="tokenEconomics.unboundedCollection became false.")
rule("fusion.entitlements", BREAKING, C, D,
     'Tool "{tool}" gained the {entitlement} entitlement',
     'Tool "{tool}" can now use {entitlement}: confirm with the user before calling it, and do not pass it data '
     'the user did not mean to share.',
     when="gained", summary="An entitlement (filesystem, network, subprocess, crypto, ...) became true.")
rule("fusion.entitlements", SAFE, C, D,
     'Tool "{tool}" lost the {entitlement} entitlement',
     when="lost", summary="An entitlement became false or was removed.")
rule("fusion.unclassified", RISKY, C, D,
     'Unclassified change to the Vurb lockfile entry of tool "{tool}": {detail}',
     'Check the current definition of "{tool}" before calling it.',
     summary="A Vurb lockfile difference no fusion rule explains (never SAFE by default).")

INFLATION_ORDER = ("low", "medium", "high", "critical")
REPORTED_ELSEWHERE = {("surface", "description"), ("surface", "actions")}
SKIPPED_TOP = ("integrityDigest",)
_ABSENT = object()


def _same(a: JSON, b: JSON) -> bool:
    if a is _ABSENT or b is _ABSENT:
        return a is b
    return a == b and canonical_json(a) == canonical_json(b)


def _label(value: JSON) -> str | None:
    return None if value is _ABSENT or value is None else value_label(value)


class _Parity:
    """One tool's comparison: knows where to put deltas and which keys were handled."""

    def __init__(self, out: Emitter, before: Tool, after: Tool) -> None:
        self.out = out
        self.tool = after.name
        self.before = before.fusion or {}
        self.after = after.fusion or {}
        self.b_actions = _action_names(before)
        self.a_actions = _action_names(after)

    def at(self, *tokens: str) -> tuple[str, str]:
        """(field, path) of a place in the lockfile entry."""
        return "fusion." + ".".join(tokens), pointer("tools", self.tool, "fusion", *tokens)

    def emit(self, rule_id: str, tokens: tuple[str, ...], before: str | None, after: str | None, when: str = "",
             action: str | None = None, **params: Any) -> None:
        field, path = self.at(*tokens)
        self.out.emit(rule_id, Scope(self.tool, action), field=field, path=path, before=before, after=after,
                      when=when, **params)

    def unclassified(self, tokens: tuple[str, ...], b: JSON, a: JSON, detail: str | None = None) -> None:
        what = "added" if b is _ABSENT else "removed" if a is _ABSENT else "changed"
        self.emit("fusion.unclassified", tokens, _label(b), _label(a),
                  detail=detail or f"{'.'.join(tokens)} {what}")

    # -- the walk ------------------------------------------------------------------

    def run(self) -> None:
        handlers: dict[str, Callable[[dict[str, JSON], dict[str, JSON]], None]] = {
            "surface": self.surface,
            "behavior": self.behavior,
            "tokenEconomics": self.token_economics,
            "entitlements": self.entitlements,
        }
        for section in sorted(self.before.keys() & self.after.keys()):
            if section in SKIPPED_TOP:
                continue
            b, a = self.before[section], self.after[section]
            if _same(b, a):
                continue
            handler = handlers.get(section)
            if handler is None or not isinstance(b, dict) or not isinstance(a, dict):
                self.unclassified((section,), b, a)
            else:
                handler(b, a)

    def rest(self, section: str, b: dict[str, JSON], a: dict[str, JSON], handled: set[str]) -> None:
        """Every key of a section no rule handled and that differs."""
        for key in sorted(b.keys() | a.keys()):
            if key in handled or (section, key) in REPORTED_ELSEWHERE:
                continue
            bv, av = b.get(key, _ABSENT), a.get(key, _ABSENT)
            if bv is _ABSENT or av is _ABSENT or not _same(bv, av):
                self.unclassified((section, key), bv, av)

    def surface(self, b: dict[str, JSON], a: dict[str, JSON]) -> None:
        bv, av = b.get("inputSchemaDigest"), a.get("inputSchemaDigest")
        if not _same(bv, av):
            self.emit("fusion.inputSchemaDigest", ("surface", "inputSchemaDigest"), _label(bv), _label(av))
        self.tags(b.get("tags", _ABSENT), a.get("tags", _ABSENT))
        self.rest("surface", b, a, {"inputSchemaDigest", "tags"})

    def tags(self, b: JSON, a: JSON) -> None:
        tokens = ("surface", "tags")
        b_tags = [] if b is _ABSENT or b is None else b
        a_tags = [] if a is _ABSENT or a is None else a
        if not (_string_list(b_tags) and _string_list(a_tags)):
            if not _same(b, a):
                self.unclassified(tokens, b, a)
            return
        removed = sorted(set(b_tags) - set(a_tags))
        added = sorted(set(a_tags) - set(b_tags))
        before, after = values_label(sorted(set(b_tags))), values_label(sorted(set(a_tags)))
        if removed:
            self.emit("fusion.tags", tokens, before, after, when="removed", removed=", ".join(removed),
                      added=", ".join(added) or "none")
        elif added:
            self.emit("fusion.tags", tokens, before, after, when="added", added=", ".join(added), removed="none")

    def behavior(self, b: dict[str, JSON], a: dict[str, JSON]) -> None:
        for key in ("egressSchemaDigest", "systemRulesFingerprint"):
            bv, av = b.get(key, _ABSENT), a.get(key, _ABSENT)
            if bv is not av and not _same(bv, av):
                self.emit(f"fusion.{key}", ("behavior", key), _label(bv), _label(av))
        for key in ("destructiveActions", "readOnlyActions"):
            self.membership(key, b.get(key, _ABSENT), a.get(key, _ABSENT))
        self.guardrails(b.get("cognitiveGuardrails", _ABSENT), a.get("cognitiveGuardrails", _ABSENT))
        self.chain("middlewareChain", b.get("middlewareChain", _ABSENT), a.get("middlewareChain", _ABSENT),
                   ordered=True)
        self.chain("affordanceTopology", b.get("affordanceTopology", _ABSENT), a.get("affordanceTopology", _ABSENT),
                   ordered=False)
        self.rest("behavior", b, a, {"egressSchemaDigest", "systemRulesFingerprint", "destructiveActions",
                                     "readOnlyActions", "cognitiveGuardrails", "middlewareChain",
                                     "affordanceTopology"})

    def membership(self, key: str, b: JSON, a: JSON) -> None:
        """Actions present on both sides that entered or left the list, one delta each;
        added or removed actions are the surface rules' business."""
        tokens = ("behavior", key)
        b_list = [] if b is _ABSENT or b is None else b
        a_list = [] if a is _ABSENT or a is None else a
        if not (_string_list(b_list) and _string_list(a_list)):
            if not _same(b, a):
                self.unclassified(tokens, b, a)
            return
        b_set, a_set = set(b_list), set(a_list)
        for action in sorted(b_set ^ a_set):
            if not (self.has_action(self.b_actions, action) and self.has_action(self.a_actions, action)):
                continue
            entered = action in a_set
            self.emit(f"fusion.{key}", tokens, "listed" if not entered else "not listed",
                      "listed" if entered else "not listed", when="entered" if entered else "left", action=action)

    @staticmethod
    def has_action(actions: set[str] | None, action: str) -> bool:
        """Without a declared action list, every listed action counts as present."""
        return actions is None or action in actions

    def guardrails(self, b: JSON, a: JSON) -> None:
        tokens = ("behavior", "cognitiveGuardrails")
        b_map = {} if b is _ABSENT or b is None else b
        a_map = {} if a is _ABSENT or a is None else a
        if not isinstance(b_map, dict) or not isinstance(a_map, dict):
            if not _same(b, a):
                self.unclassified(tokens, b, a)
            return
        for key in ("agentLimitMax", "egressMaxBytes"):
            bv, av = b_map.get(key), a_map.get(key)
            if _same(bv, av):
                continue
            self.emit(f"fusion.{key}", (*tokens, key), _label(bv) or "none", _label(av) or "none",
                      when="to null" if av is None else "changed")
        for key in sorted(b_map.keys() | a_map.keys()):
            if key in ("agentLimitMax", "egressMaxBytes"):
                continue
            bv, av = b_map.get(key, _ABSENT), a_map.get(key, _ABSENT)
            if bv is _ABSENT or av is _ABSENT or not _same(bv, av):
                self.unclassified((*tokens, key), bv, av)

    def chain(self, key: str, b: JSON, a: JSON, ordered: bool) -> None:
        if b is a or _same(b, a):
            return
        if not ordered and _string_list(b) and _string_list(a) and set(b) == set(a):
            return
        self.emit(f"fusion.{key}", ("behavior", key), _list_label(b), _list_label(a))

    def token_economics(self, b: dict[str, JSON], a: dict[str, JSON]) -> None:
        bv, av = b.get("inflationRisk", _ABSENT), a.get("inflationRisk", _ABSENT)
        if not _same(bv, av):
            tokens = ("tokenEconomics", "inflationRisk")
            b_rank, a_rank = _rank(bv), _rank(av)
            if b_rank is None or a_rank is None:
                self.unclassified(tokens, bv, av, detail=f"inflationRisk {_label(bv) or 'none'} -> "
                                                         f"{_label(av) or 'none'} (not one of low, medium, high, "
                                                         "critical)")
            elif b_rank != a_rank:
                self.emit("fusion.inflationRisk", tokens, _label(bv), _label(av),
                          when="escalated" if a_rank > b_rank else "de-escalated")
        bv, av = b.get("unboundedCollection", _ABSENT), a.get("unboundedCollection", _ABSENT)
        if not _same(bv, av):
            tokens = ("tokenEconomics", "unboundedCollection")
            b_flag, a_flag = _flag(bv), _flag(av)
            if b_flag is None or a_flag is None:
                self.unclassified(tokens, bv, av)
            elif b_flag != a_flag:
                self.emit("fusion.unboundedCollection", tokens, str(b_flag).lower(), str(a_flag).lower(),
                          when="true" if a_flag else "false")
        self.rest("tokenEconomics", b, a, {"inflationRisk", "unboundedCollection"})

    def entitlements(self, b: dict[str, JSON], a: dict[str, JSON]) -> None:
        for key in sorted(b.keys() | a.keys()):
            bv, av = b.get(key, _ABSENT), a.get(key, _ABSENT)
            if bv is not _ABSENT and av is not _ABSENT and _same(bv, av):
                continue
            b_flag, a_flag = _flag(bv), _flag(av)
            if b_flag is None or a_flag is None:
                self.unclassified(("entitlements", key), bv, av)
            elif b_flag != a_flag:
                self.emit("fusion.entitlements", ("entitlements", key), str(b_flag).lower(), str(a_flag).lower(),
                          when="gained" if a_flag else "lost", entitlement=key)


def _action_names(tool: Tool) -> set[str] | None:
    declared = ((tool.fusion or {}).get("surface") or {}).get("actions")
    if isinstance(declared, list):
        return {str(name) for name in declared}
    return None


def _string_list(value: JSON) -> bool:
    return isinstance(value, list) and all(isinstance(item, str) for item in value)


def _list_label(value: JSON) -> str | None:
    if value is _ABSENT or value is None:
        return None
    if isinstance(value, list):
        return values_label(value) if value else "none"
    return value_label(value)


def _rank(value: JSON) -> int | None:
    if isinstance(value, str) and value.lower() in INFLATION_ORDER:
        return INFLATION_ORDER.index(value.lower())
    return None


def _flag(value: JSON) -> bool | None:
    """A boolean fact: absent or null is false; anything but a boolean is unknown (None)."""
    if value is _ABSENT or value is None:
        return False
    return value if isinstance(value, bool) else None


def compare_fusion(out: Emitter, before: Tool, after: Tool) -> None:
    """The parity rules for one tool whose both sides carry a Vurb lockfile entry."""
    _Parity(out, before, after).run()
