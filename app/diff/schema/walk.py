"""The JSON Schema walk shared by the input and output rule families.

It pairs up the two schemas place by place (properties, items, union branches, ...) on
their effective forms and reports each difference as a :class:`Kind` of change with the
facts a rule needs. It never decides severity: each kind's mapping (registered beside the
check that emits it, ``checks/``) names the rule of the side being compared (input or
output, where the direction flips).

Every keyword is owned by one check; whatever no check owns and still differs is found
with deepdiff and reported as ``unclassified``, so nothing is dropped silently.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, Protocol

from app import budget
from app.diff.describe import value_label
from app.diff.schema.effective import IGNORED_KEYWORDS, Node, is_false, normal_value
from app.diff.schema.kinds import Kind, effect
from app.jsonio import canonical_json
from app.jsontypes import JSON
from app.schemas import resolve_local_ref

MAX_DEPTH = 64
COMBINATORS = ("allOf", "anyOf", "oneOf", "not", "if")
"""Keywords whose place admits values the other keywords alone do not describe."""
MAX_NESTING = 6
"""Probes inside probes (coverage questions asked while answering one): past this, unknown."""


@dataclass(frozen=True)
class Wild:
    """An instance position that is not one name or index: any item of an array
    (``item``), a property no declaration names (``extra``), a property whose name
    matches ``pattern``, or the name of a property itself (``name``)."""

    what: str
    pattern: str | None = None


Segment = str | int | Wild
"""One step of an instance path: a property name, an array index, or a :class:`Wild`."""


@dataclass(frozen=True)
class Pair:
    """The same place in the before and after schema."""

    before: Node
    after: Node
    field: str
    """Dotted, readable: ``input.address.city``, ``output.items[]``."""
    name: str
    """The argument as a model knows it: ``address.city``; the root is ``(root)``."""
    required_before: bool = False
    required_after: bool = False
    instance: tuple[Segment, ...] = ()
    """Where in an argument object (or result) the place's values sit: the witness builder
    puts a value there."""
    combined: bool = False
    """Inside a union or ``allOf`` branch (or a schema lifted to meet one): what the walk
    finds here is judged branch by branch, so a break is confirmed by a value."""


class Sink(Protocol):
    def __call__(self, kind: Kind, pair: Pair, at: str, before: str | None, after: str | None,
                 **facts: Any) -> None:
        ...


def _segment(label: str) -> Segment:
    if label in ("[]", "[contains]"):
        return Wild("item")
    if label == "*":
        return Wild("extra")
    if label == "{name}":
        return Wild("name")
    if label.startswith("[") and label.endswith("]") and label[1:-1].isdigit():
        return int(label[1:-1])
    if len(label) > 1 and label.startswith("/") and label.endswith("/"):
        return Wild("pattern", label[1:-1])
    return label


def join(field: str, name: str, token: str) -> tuple[str, str]:
    """The field and argument name one step below (``[]``-style tokens attach directly)."""
    if token.startswith("["):
        return field + token, (name if name != "(root)" else "") + token
    return f"{field}.{token}", token if name == "(root)" else f"{name}.{token}"


def below(pair: Pair, label: str) -> Pair:
    """The same nodes, named one step below (a delta about a child that the parent's
    keywords decide, such as ``required``)."""
    field, name = join(pair.field, pair.name, label)
    return replace(pair, field=field, name=name)


Checkpoint = Callable[[], None]
"""Called once per compared place: a request's CPU budget can stop a long walk there."""


def refuses(kind: Kind, facts: dict[str, Any]) -> bool:
    """Whether a reported change may refuse a value the old schema accepted (a property
    removed from an open object is still accepted, as an undocumented one)."""
    if kind is Kind.PROPERTY_REMOVED:
        return bool(facts.get("closed"))
    return effect(kind).may_refuse


def _combines(schema: dict[str, Any], keyword: str) -> bool:
    return keyword in schema and not (keyword == "not" and is_false(schema))  # `false` is {"not": {}}


class SchemaComparer:
    """Walks two schemas and reports kinds of change to a sink."""

    def __init__(self, sink: Sink, checkpoint: Checkpoint = budget.checkpoint, nesting: int = 0) -> None:
        self.sink = sink
        self.checkpoint = checkpoint
        self.nesting = nesting
        """How many probes deep this comparer runs (a check that probes inside a probe)."""
        self._active: set[tuple[str, str]] = set()
        """Locations of the places being compared on the current path (recursion guard)."""
        self._refs_equal: dict[str, bool] = {}

    # -- entry ---------------------------------------------------------------------

    def compare(self, before: Node, after: Node, field: str) -> None:
        self.walk(Pair(before, after, field, "(root)"), 0)

    def probe(self, before: Node, after: Node, field: str = "", name: str = "(root)",
              instance: tuple[Segment, ...] = ()) -> list[tuple[Kind, dict[str, Any]]]:
        """The kinds a comparison would report, without reporting them."""
        found: list[tuple[Kind, dict[str, Any]]] = []
        if self.nesting >= MAX_NESTING:
            return [(Kind.UNCLASSIFIED, {"detail": "comparison nested too deeply"})]

        def collect(kind: Kind, pair: Pair, at: str, before: str | None, after: str | None, **facts: Any) -> None:
            found.append((kind, facts))

        SchemaComparer(collect, self.checkpoint, self.nesting + 1).walk(
            Pair(before, after, field, name, instance=instance), 0)
        return found

    def covers(self, before: Node, after: Node) -> bool:
        """Whether ``after`` still accepts every value ``before`` accepted (as far as the
        walk can tell: no kind that may refuse an old value)."""
        return not any(refuses(kind, facts) for kind, facts in self.probe(before, after))

    def emit(self, kind: Kind, pair: Pair, at: str, before: str | None = None, after: str | None = None,
             **facts: Any) -> None:
        self.sink(kind, pair, at, before, after, name=pair.name, **facts)

    def walk(self, pair: Pair, depth: int) -> None:
        if self._same(pair.before, pair.after):
            return
        self.checkpoint()
        for transform in TRANSFORMS:
            pair = transform(pair)
        if not pair.combined and (pair.before.lifted or pair.after.lifted or any(
                _combines(node.schema, keyword) for node in (pair.before, pair.after) for keyword in COMBINATORS)):
            pair = replace(pair, combined=True)
        b, a = pair.before.schema, pair.after.schema
        guard = None
        if pair.before.location is not None and pair.after.location is not None and not (
                pair.before.lifted or pair.after.lifted):
            guard = (pair.before.location, pair.after.location)
            if guard in self._active:
                return  # round a recursive schema: this place is being compared further up
            self._active.add(guard)
        try:
            if depth > MAX_DEPTH:
                self.emit(Kind.UNCLASSIFIED, pair, pair.after.pointer, None, None,
                          detail="schema nested too deeply to compare")
                return
            for keywords, check in CHECKS:
                if any(keyword in b or keyword in a for keyword in keywords):
                    check(self, pair, depth)
            self._unclassified(pair)
        finally:
            if guard is not None:
                self._active.discard(guard)

    def _same(self, before: Node, after: Node) -> bool:
        """Equal text, and every ``$ref`` it reaches (transitively) leads to equal text on both
        sides: then the two places admit the same values and there is nothing to walk."""
        b, a = before.schema, after.schema
        if b != a or canonical_json(b) != canonical_json(a):
            return False
        pending = list(_refs(b))
        while pending:
            ref = pending.pop()
            known = self._refs_equal.get(ref)
            if known is False:
                return False
            if known:
                continue
            b_target = resolve_local_ref(before.root, ref) if ref.startswith("#") else None
            a_target = resolve_local_ref(after.root, ref) if ref.startswith("#") else None
            equal = (b_target is not None and a_target is not None
                     and canonical_json(b_target) == canonical_json(a_target))
            if not equal and not ref.startswith("#"):
                equal = True  # a remote reference is not followed: equal text is all we can compare
            self._refs_equal[ref] = equal
            if not equal:
                return False
            pending.extend(_refs(b_target))
        return True

    def child(self, pair: Pair, before_raw: JSON, after_raw: JSON, tokens: tuple[str, ...], label: str,
              required_before: bool = False, required_after: bool = False,
              after_tokens: tuple[str, ...] | None = None) -> Pair:
        """The pair one step below: ``tokens`` lead to the raw schemas (``after_tokens``
        when the after side is written elsewhere), ``label`` names the step."""
        field, name = join(pair.field, pair.name, label)
        return Pair(
            pair.before.child(before_raw, *tokens),
            pair.after.child(after_raw, *(tokens if after_tokens is None else after_tokens)),
            field,
            name,
            required_before,
            required_after,
            (*pair.instance, _segment(label)),
            pair.combined,
        )

    # -- safety net ----------------------------------------------------------------

    def _unclassified(self, pair: Pair) -> None:
        b = {k: v for k, v in pair.before.schema.items() if k not in OWNED}
        a = {k: v for k, v in pair.after.schema.items() if k not in OWNED}
        if b == a and canonical_json(normal_value(b)) == canonical_json(normal_value(a)):
            return
        # deepdiff only here, when keywords no check owns differ: a diff that never needs the
        # safety net never pays its ~180 ms import (command start-up, bench/start_bench.py).
        from deepdiff import DeepDiff

        not_present = _not_present()
        found = DeepDiff(normal_value(b), normal_value(a), ignore_order=False, verbose_level=2, view="tree")
        for report_type, items in sorted(found.items()):
            for item in items:
                tokens = [str(token) for token in item.path(output_format="list")]
                keyword = tokens[0] if tokens else ""
                removed = report_type.endswith("_removed")
                node = pair.before if removed else pair.after
                at = node.at(tokens[0], *tokens[1:]) if tokens else node.pointer
                before = None if item.t1 is not_present or report_type.endswith("_added") else value_label(item.t1)
                after = None if item.t2 is not_present or removed else value_label(item.t2)
                self.emit(Kind.UNCLASSIFIED, pair, at, before, after, keyword=keyword,
                          detail=f"{keyword or 'schema'} {report_type.replace('_', ' ')}")


class _NotPresentMarker:
    pass


def _not_present() -> object:
    """deepdiff's sentinel for the missing side of an added/removed item."""
    try:
        from deepdiff.helper import notpresent
    except ImportError:  # pragma: no cover - older deepdiff
        return _NotPresentMarker()
    return notpresent


def _refs(schema: JSON) -> set[str]:
    """Every ``$ref`` string in a subtree."""
    found: set[str] = set()
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str):
                found.add(ref)
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return found


# --- the check registry: each check owns its keywords -------------------------------------

Check = Callable[[SchemaComparer, Pair, int], None]
CHECKS: list[tuple[tuple[str, ...], Check]] = []
TRANSFORMS: list[Callable[[Pair], Pair]] = []
"""Rewrites of a pair before its checks run (a union met by a plain schema is lifted)."""
OWNED: set[str] = set(IGNORED_KEYWORDS)
"""Keywords some check explains; the rest goes to the unclassified safety net."""


def check(*keywords: str) -> Callable[[Check], Check]:
    """Register a check for the keywords it owns (it runs when either side has one)."""

    def register(function: Check) -> Check:
        CHECKS.append((keywords, function))
        OWNED.update(keywords)
        return function

    return register
