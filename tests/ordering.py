"""Longest files first, so the run ends on short ones.

xdist's ``--dist loadfile`` hands a file to whichever worker is free, in collection order
(its own reordering, by number of tests, is turned off in ``addopts``: a file of two long
tests sorted last and ran alone at the end while the other workers sat idle, 12 s of a
75 s run). Each file's seconds, per test profile, are kept in ``tests/file_seconds.json``;
a file not listed counts :data:`UNKNOWN_SECONDS`. Refresh a profile's numbers after adding
or changing a long test::

    MCP_GOVERNANCE_RECORD_SECONDS=1 python -m pytest
    MCP_GOVERNANCE_RECORD_SECONDS=1 MCP_GOVERNANCE_TEST_PROFILE=ci python -m pytest
"""

from __future__ import annotations

import json
import os
from collections import defaultdict
from pathlib import Path

import pytest

SECONDS_FILE = Path(__file__).with_name("file_seconds.json")
UNKNOWN_SECONDS = 1.0
RECORD = os.environ.get("MCP_GOVERNANCE_RECORD_SECONDS") == "1"


def file_of(nodeid: str) -> str:
    return nodeid.split("::", 1)[0]


def _recorded() -> dict[str, dict[str, float]]:
    try:
        data = json.loads(SECONDS_FILE.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {str(profile): {str(name): float(seconds) for name, seconds in files.items()}
            for profile, files in data.items() if isinstance(files, dict)}


def longest_first(items: list[pytest.Item], profile: str) -> None:
    """Reorder ``items`` in place: whole files, longest expected first; ties keep collection
    order (every xdist worker computes the same order, as xdist requires)."""
    seconds = _recorded().get(profile, {})
    first: dict[str, int] = {}
    for index, item in enumerate(items):
        first.setdefault(file_of(item.nodeid), index)

    def key(item: pytest.Item) -> tuple[float, int]:
        name = file_of(item.nodeid)
        return -seconds.get(name, UNKNOWN_SECONDS), first[name]

    items.sort(key=key)  # stable: a file's own tests keep their order


class Recorder:
    """Sums each file's setup, call and teardown seconds as reported (on the controller under
    xdist) and writes them to :data:`SECONDS_FILE` at the end of a run that passed."""

    def __init__(self, profile: str) -> None:
        self.profile = profile
        self.seconds: defaultdict[str, float] = defaultdict(float)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self.seconds[file_of(report.nodeid)] += report.duration

    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        if hasattr(session.config, "workerinput") or exitstatus != 0 or not self.seconds:
            return
        recorded = _recorded()
        recorded[self.profile] = dict(sorted(((name, round(value, 1)) for name, value in self.seconds.items()),
                                             key=lambda pair: (-pair[1], pair[0])))
        SECONDS_FILE.write_text(json.dumps(dict(sorted(recorded.items())), indent=1) + "\n", encoding="utf-8")
