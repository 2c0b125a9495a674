"""Prompt and resource rules (RULES.md "Prompts and resources").

Prompt arguments are input (the model fills them), so removing one or requiring one is
BREAKING. Resources are keyed by ``uri``, templates by ``uriTemplate``. These deltas
belong to no tool (``tool`` is null); their field names the prompt or resource.
"""

from __future__ import annotations

import re
from collections.abc import Hashable

from app.diff.describe import optional_label
from app.diff.emitter import Emitter, Scope
from app.diff.registry import BREAKING, COSMETIC, RISKY, SAFE, rule
from app.diff.renames import Item, match
from app.jsonio import canonical_json
from app.model import Prompt, Resource
from app.schemas import pointer

P, R, D = "prompt", "resource", "surface"

rule("prompt.removed", BREAKING, P, D, 'Prompt "{name}" was removed', 'Do not use prompt "{name}".',
     summary="A prompt is gone.")
rule("prompt.added", SAFE, P, D, 'New prompt "{name}"', summary="A new prompt.")
rule("prompt.renamed", BREAKING, P, D,
     'Prompt "{before}" was renamed to "{after}" ({evidence}; confidence {confidence})',
     'Use prompt "{after}" instead of "{before}".',
     summary="A removed and an added prompt are one prompt renamed: alike normalised names and arguments "
             "(reported once, with a confidence, instead of removed+added).")
rule("prompt.argument.removed", BREAKING, P, D, 'Argument "{argument}" of prompt "{name}" was removed',
     'Do not send "{argument}" to prompt "{name}".', summary="A prompt argument is gone.")
rule("prompt.argument.added-required", BREAKING, P, D, 'Prompt "{name}" has a new required argument "{argument}"',
     'Pass "{argument}" to prompt "{name}".', summary="A new required prompt argument.")
rule("prompt.argument.required.added", BREAKING, P, D, 'Argument "{argument}" of prompt "{name}" is now required',
     'Pass "{argument}" to prompt "{name}".', summary="A prompt argument became required.")
rule("prompt.argument.added", SAFE, P, D, 'Prompt "{name}" has a new optional argument "{argument}"',
     summary="A new optional prompt argument.")
rule("prompt.argument.required.removed", SAFE, P, D, 'Argument "{argument}" of prompt "{name}" is now optional',
     summary="A prompt argument became optional.")
rule("prompt.description.changed", COSMETIC, P, D, 'The {what} of prompt "{name}" changed',
     summary="The prompt's title or description, or an argument description, changed.")
rule("prompt.unclassified", RISKY, P, D, 'Unclassified change to prompt "{name}": {detail}',
     'Check the current definition of prompt "{name}".', summary="A prompt difference no rule explains.")
rule("resource.removed", BREAKING, R, D, 'Resource {uri} was removed', 'Do not read {uri}: it no longer exists.',
     summary="A resource (by uri) or resource template (by uriTemplate) is gone.")
rule("resource.added", SAFE, R, D, "New resource {uri}", summary="A new resource or resource template.")
rule("resource.renamed", BREAKING, R, D, "Resource {before} moved to {after} ({evidence}; confidence {confidence})",
     "Read {after} instead of {before}.",
     summary="A removed and an added resource (or template) are one resource under a new URI: alike normalised "
             "names and the same MIME type (reported once, with a confidence, instead of removed+added).")
rule("resource.mime-type.changed", RISKY, R, D, "The MIME type of resource {uri} changed",
     "Expect {after} content from {uri}.", summary="A resource's mimeType changed.")
rule("resource.description.changed", COSMETIC, R, D, "The {what} of resource {uri} changed",
     summary="A resource's name, title or description changed.")
rule("resource.unclassified", RISKY, R, D, "Unclassified change to resource {uri}: {detail}",
     "Check the current definition of {uri}.", summary="A resource difference no rule explains.")

NO_TOOL = Scope(None)

GROUP_LABELS = {
    "prompt.removed": ("prompt removed", "prompts removed"),
    "prompt.added": ("prompt added", "prompts added"),
    "prompt.renamed": ("prompt renamed", "prompts renamed"),
    "prompt.argument.removed": ("prompt argument removed", "prompt arguments removed"),
    "prompt.argument.added-required": ("new required prompt argument", "new required prompt arguments"),
    "prompt.argument.required.added": ("prompt argument now required", "prompt arguments now required"),
    "prompt.argument.added": ("new optional prompt argument", "new optional prompt arguments"),
    "prompt.argument.required.removed": ("prompt argument now optional", "prompt arguments now optional"),
    "prompt.description.changed": ("prompt text changed", "prompt texts changed"),
    "prompt.unclassified": ("unclassified prompt change", "unclassified prompt changes"),
    "resource.removed": ("resource removed", "resources removed"),
    "resource.added": ("resource added", "resources added"),
    "resource.renamed": ("resource moved", "resources moved"),
    "resource.mime-type.changed": ("resource MIME type changed", "resource MIME types changed"),
    "resource.description.changed": ("resource text changed", "resource texts changed"),
    "resource.unclassified": ("unclassified resource change", "unclassified resource changes"),
}
"""How human reports name a group of same-rule deltas (``100 resources removed``): a server
may list hundreds of prompts and resources, and one line per item buries the tool changes."""


def _same(a: object, b: object) -> bool:
    return a == b and canonical_json(a) == canonical_json(b)


def _prompt_item(prompt: Prompt) -> Item:
    """A prompt for the rename matcher: its arguments (and which are required) are its contract."""
    features = frozenset(
        feature for arg in prompt.arguments
        for feature in (("argument", arg.name), *((("required", arg.name),) if arg.required else ())))
    return Item(prompt.name, prompt.name, features, features or None)


def _resource_item(resource: Resource) -> Item:
    """A resource for the rename matcher: named by its name (else its URI without the scheme);
    its MIME type, and a template's variables, are its contract, and a moved resource keeps
    its contract (``min_contract=1.0``): a template that needs other variables is another
    template. No shape: two resources of one MIME type are not alike for that alone."""
    label = resource.name or resource.uri.partition("://")[2] or resource.uri
    features: set[Hashable] = {("mime", resource.mime_type)}
    if resource.template:
        features.update(("variable", v) for v in _TEMPLATE_VARIABLE.findall(resource.uri))
    return Item(resource.uri, label, frozenset(features), None)


_TEMPLATE_VARIABLE = re.compile(r"\{[+#./;?&]?([^{}]{1,64})\}")


def compare_prompts(out: Emitter, before: dict[str, Prompt], after: dict[str, Prompt]) -> dict[str, str]:
    """Every prompt change; returns the renames found (new name -> old name), so the
    security rules compare a renamed prompt with its old texts."""
    removed = sorted(before.keys() - after.keys())
    added = sorted(after.keys() - before.keys())
    renames = match([_prompt_item(before[n]) for n in removed], [_prompt_item(after[n]) for n in added],
                    lambda old, new: _prompt_item(before[old]).features == _prompt_item(after[new]).features)
    renamed = {rename.new: rename.old for rename in renames}
    for rename in renames:
        out.emit("prompt.renamed", NO_TOOL, field=f"prompts.{rename.new}", path=pointer("prompts", rename.new),
                 before=rename.old, after=rename.new, name=rename.new, evidence=rename.evidence,
                 confidence=f"{rename.confidence:.2f}")
        _compare_prompt(out, before[rename.old], after[rename.new])
    for name in removed:
        if name not in renamed.values():
            out.emit("prompt.removed", NO_TOOL, field=f"prompts.{name}", path=pointer("prompts", name),
                     before=name, after=None, name=name)
    for name in added:
        if name not in renamed:
            out.emit("prompt.added", NO_TOOL, field=f"prompts.{name}", path=pointer("prompts", name),
                     before=None, after=name, name=name)
    for name in sorted(before.keys() & after.keys()):
        if before[name].digest != after[name].digest:
            _compare_prompt(out, before[name], after[name])
    return renamed


def _compare_prompt(out: Emitter, before: Prompt, after: Prompt) -> None:
    name = after.name
    for what, b, a in (("title", before.title, after.title), ("description", before.description, after.description)):
        if b != a:
            out.emit("prompt.description.changed", NO_TOOL, field=f"prompts.{name}.{what}",
                     path=pointer("prompts", name, what), before=optional_label(b), after=optional_label(a),
                     name=name, what=what)
    b_args = {arg.name: arg for arg in before.arguments}
    a_args = {arg.name: arg for arg in after.arguments}
    for arg in sorted(b_args.keys() - a_args.keys()):
        out.emit("prompt.argument.removed", NO_TOOL, field=f"prompts.{name}.arguments.{arg}",
                 path=pointer("prompts", name, "arguments", arg), before=arg, after=None, name=name, argument=arg)
    for arg in sorted(a_args.keys() - b_args.keys()):
        rule_id = "prompt.argument.added-required" if a_args[arg].required else "prompt.argument.added"
        out.emit(rule_id, NO_TOOL, field=f"prompts.{name}.arguments.{arg}",
                 path=pointer("prompts", name, "arguments", arg), before=None,
                 after="required" if a_args[arg].required else "optional", name=name, argument=arg)
    for arg in sorted(b_args.keys() & a_args.keys()):
        b_arg, a_arg = b_args[arg], a_args[arg]
        at = pointer("prompts", name, "arguments", arg)
        field = f"prompts.{name}.arguments.{arg}"
        if bool(b_arg.required) != bool(a_arg.required):
            rule_id = "prompt.argument.required.added" if a_arg.required else "prompt.argument.required.removed"
            out.emit(rule_id, NO_TOOL, field=field, path=at + "/required",
                     before="required" if b_arg.required else "optional",
                     after="required" if a_arg.required else "optional", name=name, argument=arg)
        if b_arg.description != a_arg.description:
            out.emit("prompt.description.changed", NO_TOOL, field=field + ".description", path=at + "/description",
                     before=optional_label(b_arg.description), after=optional_label(a_arg.description), name=name,
                     what=f'description of argument "{arg}"')
        _extra(out, "prompt.unclassified", field, at, b_arg.extra, a_arg.extra, name=name)
    _extra(out, "prompt.unclassified", f"prompts.{name}", pointer("prompts", name), before.extra, after.extra,
           name=name)


def _extra(out: Emitter, rule_id: str, field: str, at: str, before: dict, after: dict, **params: str) -> None:
    for key in sorted({*before, *after}):
        if (key in before) != (key in after) or not _same(before.get(key), after.get(key)):
            out.emit(rule_id, NO_TOOL, field=f"{field}.{key}", path=at + pointer(key),
                     before=optional_label(before.get(key)) if key in before else None,
                     after=optional_label(after.get(key)) if key in after else None,
                     detail=f"field {key!r} " + ("added" if key not in before else
                                                 "removed" if key not in after else "changed"), **params)


def compare_resources(out: Emitter, before: dict[str, Resource], after: dict[str, Resource], section: str) -> None:
    """``section`` is ``resources`` or ``resourceTemplates``."""
    removed = sorted(before.keys() - after.keys())
    added = sorted(after.keys() - before.keys())
    renames = match([_resource_item(before[uri]) for uri in removed], [_resource_item(after[uri]) for uri in added],
                    min_contract=1.0)
    moved = {rename.old for rename in renames}
    moved_to = {rename.new for rename in renames}
    for rename in renames:
        out.emit("resource.renamed", NO_TOOL, field=f"{section}.{rename.new}", path=pointer(section, rename.new),
                 before=rename.old, after=rename.new, uri=rename.new, evidence=rename.evidence,
                 confidence=f"{rename.confidence:.2f}")
        _compare_resource(out, before[rename.old], after[rename.new], section)
    for uri in removed:
        if uri not in moved:
            out.emit("resource.removed", NO_TOOL, field=f"{section}.{uri}", path=pointer(section, uri),
                     before=uri, after=None, uri=uri)
    for uri in added:
        if uri not in moved_to:
            out.emit("resource.added", NO_TOOL, field=f"{section}.{uri}", path=pointer(section, uri),
                     before=None, after=uri, uri=uri)
    for uri in sorted(before.keys() & after.keys()):
        if before[uri].digest != after[uri].digest:
            _compare_resource(out, before[uri], after[uri], section)


def _compare_resource(out: Emitter, b: Resource, a: Resource, section: str) -> None:
    """One resource on both sides (or a moved one: compared at its new URI)."""
    uri = a.uri
    at = pointer(section, uri)
    if b.mime_type != a.mime_type:
        out.emit("resource.mime-type.changed", NO_TOOL, field=f"{section}.{uri}.mimeType", path=at + "/mimeType",
                 before=b.mime_type, after=a.mime_type, uri=uri)
    for what, bv, av in (("name", b.name, a.name), ("title", b.title, a.title),
                         ("description", b.description, a.description)):
        if bv != av:
            out.emit("resource.description.changed", NO_TOOL, field=f"{section}.{uri}.{what}",
                     path=f"{at}/{what}", before=optional_label(bv), after=optional_label(av), uri=uri, what=what)
    _extra(out, "resource.unclassified", f"{section}.{uri}", at, b.extra, a.extra, uri=uri)
