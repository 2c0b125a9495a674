"""A request's total work budget (issue 9, item 2): a tiny configured budget stops
validation and diff work with a problem+json 422 and leaves nothing running; uniqueItems and
tool-name matching grow near-linearly (a size-N and a size-4N run measured in the same test:
a ratio, never absolute seconds); PUT live never runs the diff while holding the store's
write lock."""

from __future__ import annotations

import contextlib
import gc
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from app import load_surface, safe_regex
from app.budget import BudgetExceeded, budget, checkpoint
from app.diff import diff
from app.service import Governance
from app.validation import validate_arguments
from tests.helpers_service import api, assert_problem, lock, surface, tool

CATASTROPHIC = "^(a|aa)+$"
"""Backtracks exponentially on ``aaa...a!``: each search runs out its own time limit."""
HOSTILE = "a" * 40 + "!"


def _items_tool(count_hint: int = 0) -> dict[str, Any]:
    return tool("tag", properties={"tags": {"type": "array", "items": {"type": "string", "pattern": CATASTROPHIC}}},
                required=())


def test_a_tiny_budget_stops_validation_with_a_problem_and_nothing_keeps_running(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = [0]
    real = safe_regex.search

    def counting(pattern: str, text: str, seconds: float = safe_regex.SEARCH_SECONDS) -> bool:
        calls[0] += 1
        return real(pattern, text, seconds)

    monkeypatch.setattr(safe_regex, "search", counting)
    with api(tmp_path, work_budget_seconds=0.3) as client:
        assert lock(client, surface(_items_tool())).status_code == 201
        # 400 strings x 25 ms per search: 10 s of regex without a total budget.
        response = client.post("/servers/billing/validation-error",
                               json={"tool": "tag", "arguments": {"tags": [HOSTILE] * 400}})
        body = assert_problem(response, 422, "budget_exceeded")
        assert "budget" in body["detail"]
        assert 0 < calls[0] < 400
        after = calls[0]
        time.sleep(0.3)
        assert calls[0] == after  # no thread goes on searching after the answer
        # The service is not poisoned: a small request right after is answered.
        ok = client.post("/servers/billing/validation-error", json={"tool": "tag", "arguments": {"tags": ["aaa"]}})
        assert ok.status_code == 200, ok.text


def _many(count: int, prefix: str, spaces: bool = False) -> dict[str, Any]:
    sep = " " if spaces else "_"
    return {"tools": [tool(f"{prefix}{sep}tool{sep}{i}", f"Does thing {i} ({prefix})",
                           properties={"a": {"type": "string", "pattern": "^[a-z]+$"}, "b": {"type": "integer"}},
                           required=("a",)) for i in range(count)]}


def test_a_tiny_budget_stops_a_diff_with_a_problem(tmp_path: Path) -> None:
    with api(tmp_path, work_budget_seconds=0.05) as client:
        response = client.post("/diff", json={"before": _many(1500, "old"), "after": _many(1500, "new")})
        assert_problem(response, 422, "budget_exceeded")
    with api(tmp_path) as client:  # the default budget lets the same diff through
        assert client.post("/diff", json={"before": _many(1500, "old"), "after": _many(1500, "new")}
                           ).status_code == 200


def test_the_budget_is_per_request_and_absent_outside_one() -> None:
    for _ in range(10_000):
        checkpoint()  # no budget: never raises
    with pytest.raises(BudgetExceeded), budget(0.0):
        checkpoint()
        time.sleep(0.01)
        for _ in range(200):
            checkpoint()
    checkpoint()  # the budget ended with its block


# --------------------------------------------------------------------------- scaling


def _ratio(make: Callable[[int], Callable[[], object]], size: int, repeat: int = 7) -> float:
    """How much longer 4x the input takes: runs alternate between the two sizes and the
    fastest of each counts, with the collector off, in this thread's CPU time (which a busy
    machine does not stretch, as it does wall time)."""
    runs = (make(size), make(4 * size))
    runs[0]()  # warm caches
    best = [float("inf"), float("inf")]
    gc.collect()
    gc.disable()  # a collection landing in one run is noise, not growth
    try:
        for _ in range(repeat):
            for index, run in enumerate(runs):
                start = time.thread_time()
                run()
                best[index] = min(best[index], time.thread_time() - start)
    finally:
        gc.enable()
    return best[1] / max(best[0], 1e-3)


def test_unique_items_grow_near_linearly() -> None:
    schema = {"type": "object", "properties": {"xs": {"type": "array", "uniqueItems": True}}}

    def make(n: int) -> Callable[[], object]:
        value = {"xs": [{"id": i, "name": f"n{i}", "tags": [i, str(i)]} for i in range(n)]}
        return lambda: validate_arguments(schema, value)

    ratio = _ratio(make, 1000)
    assert ratio < 10, f"4x the items took {ratio:.1f}x the time (quadratic is 16x)"
    assert validate_arguments(schema, {"xs": [{"a": 1, "b": [1.0]}, {"b": [1], "a": 1}]})  # equal under JSON


def test_renaming_tools_whose_names_have_spaces_grows_near_linearly() -> None:
    def make(n: int) -> Callable[[], object]:
        before = load_surface(_many(n, "old", spaces=True), server="s")
        after = load_surface(_many(n, "new", spaces=True), server="s")
        return lambda: diff(before, after)

    ratio = _ratio(make, 150)
    assert ratio < 10, f"4x the tools took {ratio:.1f}x the time (quadratic is 16x)"


# --------------------------------------------------------------------------- the store's lock


@pytest.mark.parametrize("action", ["live", "lock"])
def test_no_schema_regex_runs_while_a_store_write_lock_is_held(tmp_path: Path, action: str,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    with api(tmp_path) as client:
        assert lock(client, surface(_items_tool())).status_code == 201
        gov: Governance = client.app.state.governance  # type: ignore[attr-defined]
        held = [0]
        under_lock: list[str] = []
        searched: list[str] = []
        real_writing, real_search = gov.store.writing, safe_regex.search

        @contextlib.contextmanager
        def writing(server: str) -> Iterator[None]:
            held[0] += 1
            try:
                with real_writing(server):
                    yield
            finally:
                held[0] -= 1

        def search(pattern: str, text: str, seconds: float = safe_regex.SEARCH_SECONDS) -> bool:
            searched.append(pattern)
            if held[0]:
                under_lock.append(pattern)
            return real_search(pattern, text, seconds)

        monkeypatch.setattr(gov.store, "writing", writing)
        monkeypatch.setattr(safe_regex, "search", search)
        # a changed pattern: the diff searches the schemas' regexes
        changed = surface(tool("tag", properties={"tags": {"type": "array", "items": {
            "type": "string", "pattern": "^[a-z]+$"}}}, required=()))
        if action == "live":
            response = client.put("/servers/billing/live", json=changed)
            assert response.status_code == 200, response.text
        else:
            response = lock(client, changed, approved_by="alice")
            assert response.status_code == 201, response.text
        assert searched and under_lock == []  # the diff did search, never under the lock


@pytest.mark.parametrize("fmt", ["markdown", "sarif", "junit", "json"])
def test_rendering_a_report_checks_the_budget(fmt: str) -> None:
    from app.diff.reports import render_report

    result = diff(load_surface(_many(200, "old"), server="s"), load_surface(_many(200, "new"), server="s"))
    render_report(result, fmt)  # no budget: renders
    with pytest.raises(BudgetExceeded), budget(0.0):
        checkpoint()  # the clock starts
        time.sleep(0.01)
        render_report(result, fmt)
