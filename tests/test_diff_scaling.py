"""ContractDiff's work grows about linearly with the number of tools (issue 9 item 2: 4,000
tools whose names contain spaces took ~50 s, quadratic in rename matching and in finding
tool references in texts).

The work is counted, not timed: every Python and C function call the diff makes (a
``sys.setprofile`` hook), at n and at 4n tools of the same shape. Linear work gives a ratio
near 4, quadratic work near 16. A second check compares CPU times measured in this test
(the best of three, never an absolute number), with a bound far above linear and far below
quadratic.
"""

from __future__ import annotations

import gc
import sys
import time
from collections.abc import Callable

import pytest

from app import load_surface
from app.diff import diff
from app.jsontypes import JSON
from app.model import Surface

SMALL, LARGE = 100, 400
LINEAR = LARGE / SMALL
"""4: the ratio linear work gives; quadratic work gives 16."""


def _tool(name: str, description: str) -> dict[str, JSON]:
    return {"name": name, "description": description,
            "inputSchema": {"type": "object", "properties": {"x": {"type": "string", "description": "X"}}}}


def all_renamed(n: int) -> tuple[JSON, JSON]:
    """Every tool removed and another added, all sharing one input schema, names with spaces."""
    return ({"tools": [_tool(f"old Tool {i}", f"Does thing {i}.") for i in range(n)]},
            {"tools": [_tool(f"new Tool {i}", f"Does thing {i}.") for i in range(n)]})


def texts_changed(n: int) -> tuple[JSON, JSON]:
    """Every description rewritten to mention another tool (names with spaces and inner capitals)."""
    return ({"tools": [_tool(f"get Tool {i}", f"Does thing {i}.") for i in range(n)]},
            {"tools": [_tool(f"get Tool {i}", f"Does thing {i}; then call get Tool {(i + 1) % n}.")
                       for i in range(n)]})


def identifiers_renamed(n: int) -> tuple[JSON, JSON]:
    """snake_case names become kebab-case, arguments differ per tool; prompts and resources move too."""
    def surface(sep: str, scheme: str) -> JSON:
        return {
            "tools": [{"name": f"fetch{sep}item{sep}{i}", "description": f"Use fetch{sep}item{sep}{(i + 1) % n}.",
                       "inputSchema": {"type": "object", "properties": {f"arg{i}": {"type": "string"}}}}
                      for i in range(n)],
            "prompts": [{"name": f"prompt{sep}{i}", "arguments": [{"name": "a"}]} for i in range(n)],
            "resources": [{"uri": f"{scheme}://r/{i}", "name": f"Resource {i}", "mimeType": "text/plain"}
                          for i in range(n)],
        }
    return surface("_", "test"), surface("-", "demo")


SHAPES: dict[str, Callable[[int], tuple[JSON, JSON]]] = {
    "all renamed, names with spaces": all_renamed,
    "descriptions reference other tools": texts_changed,
    "identifiers, prompts and resources renamed": identifiers_renamed,
}


def _pair(shape: Callable[[int], tuple[JSON, JSON]], n: int) -> tuple[Surface, Surface]:
    before, after = shape(n)
    return load_surface(before), load_surface(after)


def calls(shape: Callable[[int], tuple[JSON, JSON]], n: int) -> int:
    """Function calls (Python and C) one diff makes, digests included."""
    before, after = _pair(shape, n)
    count = 0

    def hook(frame: object, event: str, arg: object) -> None:
        nonlocal count
        if event in ("call", "c_call"):
            count += 1

    sys.setprofile(hook)
    try:
        diff(before, after)
    finally:
        sys.setprofile(None)
    return count


def cpu_seconds(shape: Callable[[int], tuple[JSON, JSON]], n: int) -> float:
    best = float("inf")
    for _ in range(3):
        before, after = _pair(shape, n)
        gc.collect()
        gc.disable()
        try:
            start = time.process_time()
            diff(before, after)
            best = min(best, time.process_time() - start)
        finally:
            gc.enable()
    return best


@pytest.mark.parametrize("name", SHAPES)
def test_diff_calls_grow_linearly_with_the_tools(name):
    shape = SHAPES[name]
    ratio = calls(shape, LARGE) / calls(shape, SMALL)
    assert ratio < LINEAR * 1.5, f"{name}: {ratio:.1f}x the calls for {LINEAR:.0f}x the tools"


# The call counts above hold every shape in the dev profile; timing each one costs ~5 s of CPU,
# so the dev profile times the first shape and the ci profile all of them.
@pytest.mark.parametrize("name", [name if index == 0 else pytest.param(name, marks=pytest.mark.slow)
                                  for index, name in enumerate(SHAPES)])
def test_diff_time_grows_far_less_than_quadratically(name):
    shape = SHAPES[name]
    cpu_seconds(shape, SMALL)  # warm up: imports, regex compilation
    ratio = cpu_seconds(shape, LARGE) / cpu_seconds(shape, SMALL)
    assert ratio < LINEAR * 2.5, f"{name}: {ratio:.1f}x the CPU time for {LINEAR:.0f}x the tools"


def test_the_shapes_really_rename_and_reference():
    """The shapes exercise what they are named for (else the ratios would prove nothing)."""
    result = diff(*_pair(identifiers_renamed, 20))
    rules = {d.rule for d in result.deltas}
    assert {"tool.renamed", "prompt.renamed", "resource.renamed"} <= rules
    result = diff(*_pair(texts_changed, 20))
    assert any(d.rule == "security.instruction-cue" for d in result.deltas)
    result = diff(*_pair(all_renamed, 20))
    assert {d.rule for d in result.deltas} >= {"tool.removed", "tool.added"}


# --- the unchanged check ------------------------------------------------------------------------------


class _Watched(dict):
    """A tools dict that counts how often something walks it."""

    walks = 0

    def __iter__(self):
        type(self).walks += 1
        return super().__iter__()

    def keys(self):
        type(self).walks += 1
        return super().keys()

    def items(self):
        type(self).walks += 1
        return super().items()

    def values(self):
        type(self).walks += 1
        return super().values()


def _known_digests(n: int) -> tuple[Surface, Surface]:
    """Two separately loaded copies of one n-tool surface, digests computed (as the service keeps them)."""
    doc = {"tools": [_tool(f"tool_{i}", f"Does thing {i}.") for i in range(n)]}
    pair = load_surface(doc), load_surface(doc)
    for surface in pair:
        _ = surface.integrity_digest
    return pair


def test_the_unchanged_check_never_walks_the_tools():
    from dataclasses import replace

    before, after = _known_digests(200)
    watched = replace(after, tools=_Watched(after.tools))
    watched.__dict__["integrity_digest"] = after.integrity_digest  # known, as the service keeps it
    watched.__dict__["sorted_tool_names"] = after.sorted_tool_names
    _Watched.walks = 0
    result = diff(before, watched)
    assert result.unchanged and not result.deltas and len(result.tools.unchanged) == 200
    assert _Watched.walks == 0


def test_the_unchanged_check_costs_the_same_at_50_and_5000_tools():
    def best(n: int) -> float:
        before, after = _known_digests(n)
        diff(before, after)
        fastest = float("inf")
        for _ in range(5):
            start = time.thread_time()  # CPU time: a busy machine does not stretch it
            for _ in range(200):
                diff(before, after)
            fastest = min(fastest, time.thread_time() - start)
        return fastest

    ratio = best(5000) / best(50)
    assert ratio < 5, f"the unchanged check at 5,000 tools took {ratio:.1f}x what it takes at 50"


def test_the_dashboard_tool_rows_grow_linearly_with_the_tools():
    """tool_statuses() counted each tool's deltas by walking every delta once per tool."""
    from types import SimpleNamespace

    from app.service import tool_statuses

    def rows_calls(n: int) -> int:
        result = diff(*_pair(all_renamed, n)).to_json()
        live = SimpleNamespace(result=result, surface_document={})
        gov = SimpleNamespace(live_record=lambda server: live)
        count = 0

        def hook(frame: object, event: str, arg: object) -> None:
            nonlocal count
            if event in ("call", "c_call"):
                count += 1

        sys.setprofile(hook)
        try:
            rows = tool_statuses(gov, "s")  # type: ignore[arg-type]
        finally:
            sys.setprofile(None)
        assert len(rows) == 2 * n and all(row["counts"]["BREAKING"] + row["counts"]["SAFE"] for row in rows)
        return count

    ratio = rows_calls(LARGE) / rows_calls(SMALL)
    assert ratio < LINEAR * 1.5, f"{ratio:.1f}x the calls for {LINEAR:.0f}x the tools"
