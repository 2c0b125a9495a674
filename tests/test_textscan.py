"""Tool names in texts (app/diff/textscan.py): whole names only, whatever characters the names
carry, found in one linear pass (the security rules' tool references and a deprecation
notice's replacement both use it)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.diff.textscan import NameIndex, normalise

NAMES = ["read_text_file", "old Tool 1", "fs.read", "@scope/run", "getUser", "get Tool 10"]


@pytest.mark.parametrize(("text", "found"), [
    ("Use read_text_file instead.", (4, "read_text_file")),
    ("then OLD tool 1.", (5, "old Tool 1")),
    ("see old tool 1. ok", (4, "old Tool 1")),
    ("see get tool 10 now", (4, "get Tool 10")),
    ("Use fs.read.", (4, "fs.read")),
    ("run @scope/run", (4, "@scope/run")),
    ("call getuser", (5, "getUser")),
    ("first fs.read then read_text_file", (6, "fs.read")),
])
def test_whole_names_are_found_at_their_first_place(text, found):
    assert NameIndex(NAMES).first(normalise(text)) == found


@pytest.mark.parametrize("text", [
    "old tool 12",  # a longer number is another name
    "old tool 1.5",
    "old tools 1",
    "reread_text_file",
    "fs.reader",
    "x@scope/run",  # glued to a word before it
    "read text file",
    "",
])
def test_parts_of_words_are_not_names(text):
    assert NameIndex(NAMES).first(normalise(text)) is None


def test_own_names_and_skipped_spans_do_not_count():
    index = NameIndex(NAMES)
    assert index.first("fs.read and read_text_file", own=frozenset({"fs.read"})) == (12, "read_text_file")
    assert index.first("fs.read and read_text_file", skip=[(0, 5)]) == (12, "read_text_file")
    assert index.first("fs.read and read_text_file", start=3) == (12, "read_text_file")
    assert index.first("fs.read and read_text_file", end=10) == (0, "fs.read")


def test_an_empty_index_finds_nothing():
    assert not NameIndex([]) and NameIndex([]).first("anything") is None
    assert NameIndex(["x"])


@given(st.lists(st.from_regex(r"[a-z]{1,6}( [A-Z][a-z]{0,4})?( [0-9]{1,3})?", fullmatch=True), min_size=1,
                max_size=8, unique=True),
       st.integers(0, 7), st.text(alphabet="abc .,;", max_size=20), st.text(alphabet="abc ,;", max_size=20))
def test_a_name_between_separators_is_found(names, pick, head, tail):
    name = names[pick % len(names)]
    text = f"{head} {name} {tail}"
    found = NameIndex(names).first(normalise(text))
    assert found is not None
    # whatever is found first is a whole name, standing where it was found
    offset, hit = found
    assert normalise(text)[offset:offset + len(hit)].casefold() == hit.casefold()
    assert offset <= normalise(text).casefold().index(f" {name.casefold()} ") + 1
