"""ContractDiff on the schema-compatibility dataset (tests/data/compat).

Each pair's two schemas become the inputSchema of a one-tool surface before and after; the
engine must grade a ``breaking`` pair BREAKING (some argument the old schema accepted is now
refused) and must not grade a ``compatible`` pair BREAKING (everything accepted before still is).

The pairs the engine gets wrong today are listed in tests/data/compat/known_failures.json and
xfail strictly: a fix turns one into XPASS, which fails the suite until its id is removed from that
list (``python bench/compat_score.py --update-known-failures`` rewrites it). ``bench/compat_score.py``
prints the scores.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from bench.compat_score import DATA, engine_answer, load_pairs

JSON = Any
PAIRS = load_pairs()
KNOWN = json.loads((DATA / "known_failures.json").read_text(encoding="utf-8"))


def cases() -> list[Any]:
    params = []
    for pair in PAIRS:
        known = KNOWN["failures"].get(pair["id"])
        marks = [pytest.mark.xfail(strict=True, reason=f"known failure ({known['class']})")] if known else []
        params.append(pytest.param(pair, id=pair["id"], marks=marks))
    return params


@pytest.mark.parametrize("pair", cases())
def test_engine_grades_pair(pair: dict[str, JSON]) -> None:
    answer, rules = engine_answer(pair)
    if pair["input"] == "breaking":
        assert answer == "breaking", (
            f"{pair['id']} ({pair['category']}): the old schema accepts {pair['witness']!r} and the new one "
            f"refuses it, but the engine answers {answer} {rules}"
        )
    else:
        assert answer != "breaking", (
            f"{pair['id']} ({pair['category']}): compatible ({pair['why']}), but the engine answers BREAKING {rules}"
        )


def test_known_failures_name_pairs_and_classes() -> None:
    ids = {pair["id"] for pair in PAIRS}
    failures = KNOWN["failures"]
    assert not failures.keys() - ids, sorted(failures.keys() - ids)
    assert {entry["class"] for entry in failures.values()} <= KNOWN["classes"].keys()
    by_id = {pair["id"]: pair for pair in PAIRS}
    assert all(entry["truth"] == by_id[pair_id]["input"] for pair_id, entry in failures.items())
