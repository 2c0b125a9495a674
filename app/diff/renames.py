"""Renames: which removed item became which added one (tools, prompts, resources).

A rename is told apart from "one thing removed, another added" by two kinds of evidence:

* **the name**, normalised: words split at casing and separators and lower-cased, and a
  leading filler verb dropped (``getTinyImage`` and ``get-tiny-image`` are one name,
  ``printEnv`` and ``get-env`` too);
* **the contract**: for a tool its input schema, for a prompt its arguments, for a
  resource its MIME type (and a template's variables) - compared as sets of features,
  and, for tools, the schema walk saying nothing beyond wording changed.

Each candidate pair gets a confidence in [0, 1] (:class:`Rename`); pairs at or above
:data:`RENAME_CONFIDENCE` are matched one to one, most confident first. Nothing else pairs:
removed + added stays when no candidate is good enough.

The work is near-linear in the number of items: candidates come only from hash lookups
(the same normalised name, a contract shape that exactly one removed and one added item
share, or a distinctive name word that at most :data:`WORD_FANOUT` added items carry), so
each removed item is scored against a bounded number of added ones - never all of them.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass, field
from difflib import SequenceMatcher

RENAME_CONFIDENCE = 0.75
"""The least confidence at which a removed and an added item are one renamed item."""
FUZZY_NAME = 0.75
"""How alike two different normalised names must be for the fuzzy tier (with alike contracts)."""
WORD_FANOUT = 8
"""A name word carried by more added items than this says nothing about which one is meant
(``get``, ``prompt``, ``tool``): it yields no candidates. Bounds the candidates per item."""
NAME_LIMIT = 128
"""Only this much of a name is compared (MCP names are short; this bounds the work)."""
FILLER_VERBS = frozenset({
    "get", "fetch", "retrieve", "print", "show", "display", "do", "run", "trigger", "execute", "perform", "invoke",
})
"""A leading word of this set adds nothing to what a tool is: ``printEnv`` = ``get-env`` = ``env``."""


@dataclass(frozen=True)
class Item:
    """One removed or added thing, as the matcher sees it."""

    name: str
    """Its key: the tool or prompt name, the resource URI or URI template."""
    label: str
    """What its name similarity is measured on (a resource: its name, else its URI without scheme)."""
    features: frozenset[Hashable]
    """Its contract as a set (argument names, types, required flags; a MIME type)."""
    shape: Hashable | None
    """An exact fingerprint of its contract when that fingerprint is informative (None for a
    tool that takes no arguments): the one removed and one added item that alone share a
    shape are a candidate pair even with unrelated names (``add`` -> ``get-sum``)."""
    words: tuple[str, ...] = field(init=False)
    key: str = field(init=False)

    def __post_init__(self) -> None:
        words = name_words(self.label)
        object.__setattr__(self, "words", words)
        object.__setattr__(self, "key", name_key(words))


@dataclass(frozen=True)
class Rename:
    old: str
    new: str
    confidence: float
    evidence: str
    """Why, in words: ``same name apart from casing, separators or a verb prefix``, ..."""


SAME_NAME = "same name apart from casing, separators or a leading verb"
SAME_CONTRACT = "same contract"
ALIKE = "alike names and contracts"


def name_words(name: str) -> tuple[str, ...]:
    """``getTinyImage`` -> (get, tiny, image); ``HTTPServer_v2`` -> (http, server, v, 2).
    Words split at anything not a letter or digit, at lower-to-upper case changes, before
    the last capital of a run of capitals followed by a lower-case letter, and between
    letters and digits."""
    words: list[str] = []
    current = ""
    previous = ""
    text = name[:NAME_LIMIT]
    for index, ch in enumerate(text):
        if not ch.isalnum():
            if current:
                words.append(current)
            current, previous = "", ""
            continue
        if current:
            following = text[index + 1] if index + 1 < len(text) else ""
            boundary = (
                (previous.islower() and ch.isupper())
                or (previous.isupper() and ch.isupper() and following.islower())
                or (previous.isdigit() != ch.isdigit())
            )
            if boundary:
                words.append(current)
                current = ""
        current += ch
        previous = ch
    if current:
        words.append(current)
    return tuple(word.casefold() for word in words)


def name_key(words: Sequence[str]) -> str:
    """The words joined, without a leading filler verb (unless nothing else is left)."""
    if len(words) > 1 and words[0] in FILLER_VERBS:
        words = words[1:]
    return "".join(words)


def name_similarity(a: Item, b: Item) -> float:
    """1.0 for one normalised name; else how alike the normalised names are (difflib ratio)."""
    if a.key == b.key:
        return 1.0
    return SequenceMatcher(None, a.key, b.key, autojunk=False).ratio()


def contract_similarity(a: Item, b: Item) -> float:
    """Jaccard similarity of the two contracts' features (1.0 when both have none)."""
    if not a.features and not b.features:
        return 1.0
    return len(a.features & b.features) / len(a.features | b.features)


def _candidates(removed: Sequence[Item], added: Sequence[Item]) -> Iterable[tuple[Item, Item, bool]]:
    """Pairs worth scoring, each at most once: ``(old, new, unique_shape)``. Hash lookups only."""
    by_key: dict[str, list[Item]] = {}
    by_word: dict[str, list[Item]] = {}
    by_shape: dict[Hashable, list[Item]] = {}
    for item in added:
        by_key.setdefault(item.key, []).append(item)
        for word in set(item.words):
            by_word.setdefault(word, []).append(item)
        if item.shape is not None:
            by_shape.setdefault(item.shape, []).append(item)
    removed_shapes: dict[Hashable, int] = {}
    for item in removed:
        if item.shape is not None:
            removed_shapes[item.shape] = removed_shapes.get(item.shape, 0) + 1
    for old in removed:
        seen: set[str] = set()
        unique = old.shape is not None and removed_shapes[old.shape] == 1 and len(by_shape.get(old.shape, [])) == 1
        if unique:
            (new,) = by_shape[old.shape]
            seen.add(new.name)
            yield old, new, True
        pools: list[list[Item]] = [by_key.get(old.key, [])[:WORD_FANOUT]]
        pools += [pool for word in sorted(set(old.words)) if len(pool := by_word.get(word, [])) <= WORD_FANOUT]
        for pool in pools:
            for new in pool:
                if new.name not in seen:
                    seen.add(new.name)
                    yield old, new, False


def score(old: Item, new: Item, unique_shape: bool, same_contract: Callable[[str, str], bool],
          min_contract: float = 0.0) -> Rename | None:
    """The confidence that ``old`` became ``new``, or None below :data:`RENAME_CONFIDENCE`.

    * One normalised name: 0.9 to 1.0, by how alike the contracts are.
    * One contract (nothing beyond wording differs) that only these two items have: 0.8 to
      1.0, by how alike the names are.
    * Otherwise alike names (at least :data:`FUZZY_NAME`) and contracts: 0.6 x name + 0.4 x
      contract similarity, which reaches the threshold only when both are alike.

    Pairs whose contracts are less alike than ``min_contract`` are never a rename."""
    names = name_similarity(old, new)
    contracts = contract_similarity(old, new)
    if contracts < min_contract:
        return None
    if names == 1.0:
        return Rename(old.name, new.name, round(0.9 + 0.1 * contracts, 2), SAME_NAME)
    if unique_shape and same_contract(old.name, new.name):
        return Rename(old.name, new.name, round(0.8 + 0.2 * names, 2), SAME_CONTRACT)
    if names < FUZZY_NAME:
        return None
    confidence = round(0.6 * names + 0.4 * contracts, 2)
    if confidence < RENAME_CONFIDENCE:
        return None
    return Rename(old.name, new.name, confidence, ALIKE)


def match(removed: Sequence[Item], added: Sequence[Item],
          same_contract: Callable[[str, str], bool] = lambda old, new: False, min_contract: float = 0.0
          ) -> list[Rename]:
    """One-to-one renames, most confident first (ties by old, then new name).
    ``same_contract(old, new)`` says whether nothing beyond wording differs (asked only for
    the one removed and one added item that alone share a contract shape); ``min_contract``
    is the least contract similarity a rename needs (1.0: only equal contracts)."""
    if not removed or not added:
        return []
    scored = [found for old, new, unique in _candidates(removed, added)
              if (found := score(old, new, unique, same_contract, min_contract)) is not None]
    pairs: list[Rename] = []
    used_old: set[str] = set()
    used_new: set[str] = set()
    for rename in sorted(scored, key=lambda r: (-r.confidence, r.old, r.new)):
        if rename.old not in used_old and rename.new not in used_new:
            pairs.append(rename)
            used_old.add(rename.old)
            used_new.add(rename.new)
    return sorted(pairs, key=lambda r: r.old)
