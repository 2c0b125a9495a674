"""Surface rules (RULES.md "Surface (per tool)"): a tool's existence, name, texts,
metadata, execution support, annotations, and the actions of grouped tools.

Annotations are compared by effective value (missing hints take the spec defaults), and
claims that ask for more trust (read-only, not destructive) are never SAFE.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from app.diff.describe import optional_label
from app.diff.emitter import Emitter, Scope
from app.diff.model import Delta
from app.diff.registry import BREAKING, COSMETIC, RISKY, SAFE, lookup, rule
from app.diff.renames import Rename
from app.diff.textscan import NameIndex, deprecation_notices, names_for, normalise
from app.jsonio import canonical_json
from app.model import Tool

C, D = "tool", "surface"

rule("tool.removed", BREAKING, C, D, 'Tool "{tool}" was removed', 'Do not call "{tool}": it no longer exists.',
     summary="A tool is gone.")
rule("tool.removed", BREAKING, C, D,
     'Tool "{tool}" was removed; its deprecation notice named "{after}" as its replacement',
     'Call "{after}" instead of "{tool}": "{tool}" no longer exists.', when="replaced",
     summary="A tool is gone whose deprecation notice named a tool of the server as its replacement.")
rule("tool.added", SAFE, C, D, 'New tool "{tool}"', summary="A new tool.")
rule("tool.deprecated", RISKY, C, D, 'Tool "{tool}" is now deprecated: its notice names "{after}" as the replacement',
     'Call "{after}" instead of "{tool}".', when="replacement",
     summary="A deprecation notice in the tool's description or title that names another tool of the server.")
rule("tool.deprecated", RISKY, C, D, 'Tool "{tool}" is now deprecated',
     '"{tool}" still works, but may be removed in a later version.',
     summary="A deprecation notice in the tool's description or title (DEPRECATED:, (Deprecated), "
             "this tool is deprecated, ...).")
rule("tool.renamed", BREAKING, C, D, 'Tool "{before}" was renamed to "{after}" ({evidence}; confidence {confidence})',
     'Call "{after}" instead of "{before}".',
     summary="A removed and an added tool are one tool renamed: alike normalised names and input contracts "
             "(reported once, with a confidence, instead of removed+added).")
rule("tool.title.changed", COSMETIC, C, D, 'The title of tool "{tool}" changed', summary="title or annotations.title")
rule("tool.description.changed", COSMETIC, C, D, 'The description of tool "{tool}" changed',
     summary="The tool description changed.")
rule("tool.icons.changed", COSMETIC, C, D, 'The icons of tool "{tool}" changed', summary="The tool icons changed.")
rule("tool.meta.changed", RISKY, C, D, 'The _meta of tool "{tool}" changed ({detail})',
     'Check the metadata of "{tool}" before relying on it.', summary="The tool's _meta changed.")
rule("tool.execution.changed", BREAKING, C, D, 'Tool "{tool}" now requires task-augmented execution',
     'Call "{tool}" as a task: execution.taskSupport is now required.', when="required",
     summary="Effective execution.taskSupport (default forbidden) became required.")
rule("tool.execution.changed", SAFE, C, D, 'Tool "{tool}" now supports task-augmented execution',
     when="optional", summary="execution.taskSupport forbidden -> optional.")
rule("tool.execution.changed", RISKY, C, D, 'Task support of tool "{tool}" changed',
     'Check how "{tool}" must be called now (taskSupport {after}).', when="other",
     summary="Any other change of the effective execution.taskSupport.")
rule("tool.annotation.read-only.lost", BREAKING, "annotation", D,
     'Tool "{tool}" is no longer read-only: it may now modify its environment',
     'Treat "{tool}" as a tool that writes: confirm with the user before calling it.',
     summary="Effective readOnlyHint true -> false: the tool may now write.")
rule("tool.annotation.read-only.gained", RISKY, "annotation", D, 'Tool "{tool}" now claims to be read-only',
     'Do not assume "{tool}" is safe to call without confirmation just because it claims to be read-only.',
     summary="readOnlyHint false -> true: clients may auto-approve it.")
rule("tool.annotation.destructive.gained", BREAKING, "annotation", D,
     'Tool "{tool}" may now perform destructive updates',
     'Confirm with the user before calling "{tool}": it may now destroy or overwrite data.',
     summary="Effective destructiveHint false -> true.")
rule("tool.annotation.destructive.lost", RISKY, "annotation", D, 'Tool "{tool}" no longer claims to be destructive',
     'Keep confirming destructive calls of "{tool}" with the user.',
     summary="destructiveHint true -> false: a claim of less danger (clients may stop asking).")
rule("tool.annotation.idempotent.changed", RISKY, "annotation", D,
     'Tool "{tool}" changed its idempotency claim',
     'Once a call of "{tool}" has succeeded, do not send the same call again: it may act twice.',
     summary="Effective idempotentHint flipped.")
rule("tool.annotation.open-world.widened", RISKY, "annotation", D,
     'Tool "{tool}" now interacts with an open world of external entities',
     'Expect "{tool}" to reach external systems.', summary="openWorldHint false -> true.")
rule("tool.annotation.open-world.narrowed", SAFE, "annotation", D,
     'Tool "{tool}" no longer interacts with external entities', summary="openWorldHint true -> false.")
rule("tool.annotation.declared", RISKY, "annotation", D,
     'Tool "{tool}" now declares itself {claims}',
     'Review these claims: "{tool}" claimed nothing before, and clients may now ask for confirmation less often.',
     when="risky",
     summary="Hints declared for the first time that differ from the spec defaults, as one delta per tool; "
             "graded as the worst of their individual effects (a claim of less danger: RISKY).")
rule("tool.annotation.declared", SAFE, "annotation", D,
     'Tool "{tool}" now declares itself {claims}',
     when="safe",
     summary="Hints declared for the first time whose only effect is openWorldHint true -> false (SAFE).")
rule("action.removed", BREAKING, C, D, 'Action "{action}" of tool "{tool}" was removed',
     'Use one of the remaining actions of "{tool}": {remaining}.', summary="An action of a grouped tool is gone.")
rule("action.added", SAFE, C, D, 'New action "{action}" in tool "{tool}"',
     summary="A new action of a grouped tool.")
rule("tool.unclassified", RISKY, C, D, 'Unclassified change to tool "{tool}": {detail}',
     'Check the current definition of "{tool}" before calling it.',
     summary="A tool-level difference no rule explains (never SAFE by default).")

HINT_DEFAULTS = {"readOnlyHint": False, "destructiveHint": True, "idempotentHint": False, "openWorldHint": True}
"""The MCP spec defaults a missing annotation takes."""
KNOWN_ANNOTATIONS = (*HINT_DEFAULTS, "title")
TASK_SUPPORT_DEFAULT = "forbidden"


def _pointer(tool: str, *tokens: str) -> str:
    from app.schemas import pointer

    return pointer("tools", tool, *tokens)


def effective_hint(tool: Tool, hint: str) -> bool:
    value = (tool.annotations or {}).get(hint)
    return value if isinstance(value, bool) else HINT_DEFAULTS[hint]


def task_support(tool: Tool) -> str:
    value = (tool.execution or {}).get("taskSupport")
    return value if isinstance(value, str) else TASK_SUPPORT_DEFAULT


def _same(a: Any, b: Any) -> bool:
    return a == b and canonical_json(a) == canonical_json(b)


def compare_tool_surface(out: Emitter, before: Tool, after: Tool) -> None:
    """Everything about a tool except its schemas, actions, security cues and parity."""
    scope = Scope(after.name)
    name = after.name
    title_b, title_a = before.title, after.title
    if title_b != title_a:
        out.emit("tool.title.changed", scope, field="title", path=_pointer(name, "title"),
                 before=optional_label(title_b), after=optional_label(title_a))
    ann_title_b = (before.annotations or {}).get("title")
    ann_title_a = (after.annotations or {}).get("title")
    if not _same(ann_title_b, ann_title_a):
        out.emit("tool.title.changed", scope, field="annotations.title", path=_pointer(name, "annotations", "title"),
                 before=optional_label(ann_title_b), after=optional_label(ann_title_a))
    if before.description != after.description:
        out.emit("tool.description.changed", scope, field="description", path=_pointer(name, "description"),
                 before=optional_label(before.description), after=optional_label(after.description))
    if not _same(before.icons, after.icons):
        out.emit("tool.icons.changed", scope, field="icons", path=_pointer(name, "icons"),
                 before=optional_label(before.icons), after=optional_label(after.icons))
    if not _same(before.meta, after.meta):
        keys = sorted({*(before.meta or {}), *(after.meta or {})})
        changed = [k for k in keys if not _same((before.meta or {}).get(k), (after.meta or {}).get(k))]
        out.emit("tool.meta.changed", scope, field="_meta", path=_pointer(name, "_meta"),
                 before=optional_label(before.meta), after=optional_label(after.meta),
                 detail="keys " + ", ".join(changed) if changed else "changed")
    _compare_execution(out, scope, before, after)
    _compare_annotations(out, scope, before, after)
    for key in sorted({*before.extra, *after.extra}):
        b, a = before.extra.get(key), after.extra.get(key)
        if not _same(b, a) or (key in before.extra) != (key in after.extra):
            out.emit("tool.unclassified", scope, field=key, path=_pointer(name, key),
                     before=optional_label(b) if key in before.extra else None,
                     after=optional_label(a) if key in after.extra else None,
                     detail=f"field {key!r} " + ("added" if key not in before.extra else
                                                 "removed" if key not in after.extra else "changed"))


def _unexplained(before: dict[str, Any] | None, after: dict[str, Any] | None, key: str, kind: type) -> bool:
    """Whether a field's raw values differ in a way its effective value does not show: a
    value of the wrong type (``readOnlyHint: "yes"``) reads as the default, so changing
    it, or between it and the default, is a change no rule explains."""
    b, a = (before or {}).get(key, _MISSING), (after or {}).get(key, _MISSING)
    if (b is _MISSING) == (a is _MISSING) and (b is _MISSING or _same(b, a)):
        return False
    return any(value is not _MISSING and not isinstance(value, kind) for value in (b, a))


_MISSING = object()


def _compare_execution(out: Emitter, scope: Scope, before: Tool, after: Tool) -> None:
    name = after.name
    b, a = task_support(before), task_support(after)
    if b != a:
        when = "required" if a == "required" else "optional" if (b, a) == ("forbidden", "optional") else "other"
        out.emit("tool.execution.changed", scope, field="execution.taskSupport",
                 path=_pointer(name, "execution", "taskSupport"), before=b, after=a, when=when)
    elif _unexplained(before.execution, after.execution, "taskSupport", str):
        _emit_unexplained(out, scope, name, ("execution", "taskSupport"), before.execution, after.execution)
    b_rest = {k: v for k, v in (before.execution or {}).items() if k != "taskSupport"}
    a_rest = {k: v for k, v in (after.execution or {}).items() if k != "taskSupport"}
    if not _same(b_rest, a_rest):
        out.emit("tool.unclassified", scope, field="execution", path=_pointer(name, "execution"),
                 before=optional_label(b_rest), after=optional_label(a_rest), detail="execution fields changed")


CLAIMS = {
    ("readOnlyHint", True): "read-only", ("readOnlyHint", False): "not read-only",
    ("destructiveHint", True): "destructive", ("destructiveHint", False): "non-destructive",
    ("idempotentHint", True): "idempotent", ("idempotentHint", False): "not idempotent",
    ("openWorldHint", True): "open-world", ("openWorldHint", False): "closed-world",
}
"""How a hint's effective value reads in a sentence ("now declares itself non-destructive")."""

LESS_DANGEROUS_RULES = frozenset({
    "tool.annotation.read-only.gained", "tool.annotation.destructive.lost", "tool.annotation.open-world.narrowed",
    "tool.annotation.declared",
})
"""Annotation rules whose deltas only claim less danger. ``tool.annotation.declared`` is one of
them: the spec defaults are the most dangerous values (may write, destructive, not idempotent,
open world), so a first declaration that changes anything claims less danger."""


def only_less_dangerous(delta: Delta) -> bool:
    """Whether an annotation delta only makes the tool look less dangerous (read-only,
    non-destructive, idempotent, closed world; and the same claims of a Vurb / MCP Fusion
    lockfile's readOnlyActions / destructiveActions). A model is not told about these: it has
    nothing to do differently (awareness leaves them out); humans still see them graded."""
    if delta.rule == "tool.annotation.idempotent.changed":
        return (delta.after or "").startswith("true")  # labels start with the effective value
    # the Vurb / MCP Fusion lockfile's own claims: an action entering readOnlyActions, leaving destructiveActions
    if delta.rule == "fusion.readOnlyActions":
        return delta.after == "listed"
    if delta.rule == "fusion.destructiveActions":
        return delta.after == "not listed"
    return delta.rule in LESS_DANGEROUS_RULES


def _hint_rule(hint: str, before: bool, after: bool) -> str:
    """The rule of one hint whose effective value flips."""
    if hint == "readOnlyHint":
        return "tool.annotation.read-only.lost" if before else "tool.annotation.read-only.gained"
    if hint == "destructiveHint":
        return "tool.annotation.destructive.gained" if after else "tool.annotation.destructive.lost"
    if hint == "idempotentHint":
        return "tool.annotation.idempotent.changed"
    return "tool.annotation.open-world.widened" if after else "tool.annotation.open-world.narrowed"


def _declared(tool: Tool) -> set[str]:
    """The hints a tool declares with a valid (boolean) value."""
    annotations = tool.annotations or {}
    return {hint for hint in HINT_DEFAULTS if isinstance(annotations.get(hint), bool)}


def hint_label(tool: Tool, hint: str) -> str:
    """``true`` / ``false`` as declared, or ``true (undeclared: spec default)``: always the
    effective value first, and never a claim the tool did not make."""
    value = str(effective_hint(tool, hint)).lower()
    return value if hint in _declared(tool) else f"{value} (undeclared: spec default)"


def _and(words: list[str]) -> str:
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} and {words[-1]}"


def _compare_annotations(out: Emitter, scope: Scope, before: Tool, after: Tool) -> None:
    """Each hint whose effective value flips; the hints a tool declares for the first time
    are one ``tool.annotation.declared`` delta, graded as the worst of their individual
    rules and worded as what they are (claims where there were none)."""
    name = after.name
    declared_before, declared_after = _declared(before), _declared(after)
    first: list[tuple[str, str]] = []
    for hint in HINT_DEFAULTS:
        b, a = effective_hint(before, hint), effective_hint(after, hint)
        if b == a:
            continue
        rule_id = _hint_rule(hint, b, a)
        if hint not in declared_before and hint in declared_after:
            first.append((hint, rule_id))
            continue
        out.emit(rule_id, scope, field=f"annotations.{hint}", path=_pointer(name, "annotations", hint),
                 before=hint_label(before, hint), after=hint_label(after, hint))
    if first:
        worst = min((lookup(rule_id).severity for _, rule_id in first), key=lambda severity: severity.rank)
        claims = _and([CLAIMS[(hint, effective_hint(after, hint))] for hint, _ in first])
        defaults = _and([CLAIMS[(hint, HINT_DEFAULTS[hint])] for hint, _ in first])
        # from the spec defaults a declaration can only claim less danger: RISKY or SAFE, never BREAKING
        spec = "spec defaults" if len(first) > 1 else "spec default"
        out.emit("tool.annotation.declared", scope, field="annotations", path=_pointer(name, "annotations"),
                 before=f"undeclared, {spec} {defaults}", after=f"declared {claims}", when=worst.value.lower(),
                 claims=claims, defaults=defaults)
    for hint in HINT_DEFAULTS:
        if effective_hint(before, hint) == effective_hint(after, hint) and _unexplained(
                before.annotations, after.annotations, hint, bool):
            _emit_unexplained(out, scope, name, ("annotations", hint), before.annotations, after.annotations)
    b_rest = {k: v for k, v in (before.annotations or {}).items() if k not in KNOWN_ANNOTATIONS}
    a_rest = {k: v for k, v in (after.annotations or {}).items() if k not in KNOWN_ANNOTATIONS}
    for key in sorted({*b_rest, *a_rest}):
        if not _same(b_rest.get(key), a_rest.get(key)) or (key in b_rest) != (key in a_rest):
            out.emit("tool.unclassified", scope, field=f"annotations.{key}", path=_pointer(name, "annotations", key),
                     before=optional_label(b_rest.get(key)) if key in b_rest else None,
                     after=optional_label(a_rest.get(key)) if key in a_rest else None,
                     detail=f"annotation {key!r} changed")


def _emit_unexplained(out: Emitter, scope: Scope, name: str, tokens: tuple[str, str],
                      before: dict[str, Any] | None, after: dict[str, Any] | None) -> None:
    key = tokens[1]
    b, a = (before or {}).get(key, _MISSING), (after or {}).get(key, _MISSING)
    out.emit("tool.unclassified", scope, field=".".join(tokens), path=_pointer(name, *tokens),
             before=None if b is _MISSING else optional_label(b), after=None if a is _MISSING else optional_label(a),
             detail=f"{'.'.join(tokens)} is not a valid value")


def compare_actions(out: Emitter, before: Tool, after: Tool) -> None:
    """action.removed / action.added by action name."""
    b, a = before.actions, after.actions
    remaining = ", ".join(sorted(a)) or "none"
    for action in sorted(b.keys() - a.keys()):
        out.emit("action.removed", Scope(after.name, action), field=f"actions.{action}",
                 path=_action_pointer(before, action), before=action, after=None, remaining=remaining)
    for action in sorted(a.keys() - b.keys()):
        out.emit("action.added", Scope(after.name, action), field=f"actions.{action}",
                 path=_action_pointer(after, action), before=None, after=action)


def _action_pointer(tool: Tool, name: str) -> str:
    """The action's branch in the inputSchema (``/tools/t/inputSchema/oneOf/1``); for actions
    a Vurb / MCP Fusion lockfile only names, ``/tools/t/actions/<name>``."""
    action = tool.actions[name]
    if action.keyword is not None and action.index is not None:
        return _pointer(tool.name, "inputSchema", action.keyword, str(action.index))
    return _pointer(tool.name, "actions", name)


def emit_removed(out: Emitter, tool: Tool, tool_names: frozenset[str] = frozenset()) -> None:
    """``tool.removed``; when its deprecation notice named a tool that is still there, that
    tool is the replacement (the ``replaced`` variant, ``after`` = its name)."""
    notice = deprecation(tool, names_for(tool_names))
    replacement = notice.replacement if notice is not None else None
    out.emit("tool.removed", Scope(tool.name), field="tool", path=_pointer(tool.name), before=tool.name,
             after=replacement, when="replaced" if replacement else "")


def emit_added(out: Emitter, tool: Tool) -> None:
    out.emit("tool.added", Scope(tool.name), field="tool", path=_pointer(tool.name), before=None, after=tool.name)


def emit_renamed(out: Emitter, before: Tool, after: Tool, rename: Rename) -> None:
    out.emit("tool.renamed", Scope(after.name), field="tool", path=_pointer(after.name), before=before.name,
             after=after.name, evidence=rename.evidence, confidence=f"{rename.confidence:.2f}")


# --- deprecation ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Deprecation:
    """A tool's deprecation notice: where it is, and the tool it names instead (if any)."""

    field: str
    replacement: str | None


def _deprecation_texts(tool: Tool) -> list[tuple[str, str]]:
    texts = [("description", tool.description), ("title", tool.title),
             ("annotations.title", (tool.annotations or {}).get("title"))]
    return [(field, text) for field, text in texts if isinstance(text, str)]


def deprecation(tool: Tool, names: NameIndex) -> Deprecation | None:
    """The deprecation notice of ``tool`` (description first, then title), with the first
    other tool among ``names`` that a notice names as its replacement; None when the tool is
    not deprecated. A notice is the sentence with the marker and the one after it
    (:func:`app.diff.textscan.deprecation_notices`)."""
    found: Deprecation | None = None
    own = frozenset((tool.name,))
    for field, text in _deprecation_texts(tool):
        normal = normalise(text)
        for notice in deprecation_notices(normal):
            hit = names.first(normal, own, notice.start, notice.end)
            if hit is not None:
                return Deprecation(field, hit[1])
            found = found or Deprecation(field, None)
    return found


def compare_deprecation(out: Emitter, before: Tool, after: Tool, tool_names: frozenset[str]) -> None:
    """``tool.deprecated`` when the tool is now deprecated and was not, or its notice now names
    another replacement. ``before`` = the tool's name and ``after`` = the replacement when one
    is named (so the delta reads "read_file -> read_text_file"); both null otherwise."""
    names = names_for(tool_names)
    now = deprecation(after, names)
    if now is None:
        return
    was = deprecation(before, names)
    if was is not None and was.replacement == now.replacement:
        return
    replacement = now.replacement
    out.emit("tool.deprecated", Scope(after.name), field=now.field, path=_pointer(after.name, *now.field.split(".")),
             before=after.name if replacement else None, after=replacement, when="replacement" if replacement else "")


REPLACING_RULES = frozenset({"tool.renamed", "tool.deprecated", "tool.removed"})
"""Rules whose delta names the tool to call instead in ``after`` (when it names one)."""


def replacement(delta: Delta) -> str | None:
    """The tool a model should call instead of ``delta.before``: the new name of a renamed
    tool, or the replacement a deprecation notice names (of a deprecated or removed tool)."""
    if delta.rule in REPLACING_RULES and delta.before is not None and delta.after != delta.before:
        return delta.after
    return None
