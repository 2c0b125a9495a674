"""The suite's own scheduling (tests/ordering.py): whole files, longest expected first, each
file's tests in their own order, the same order on every xdist worker."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests import ordering


@dataclass
class Item:
    nodeid: str


files = st.sampled_from([f"tests/test_{name}.py" for name in "abcdef"])
collections = st.lists(st.tuples(files, st.integers(0, 50)), max_size=40).map(
    lambda pairs: [Item(f"{name}::t{index}_{n}") for index, (name, n) in enumerate(pairs)])
recorded = st.dictionaries(files, st.floats(0, 100, allow_nan=False), max_size=6)


@given(collections, recorded)
def test_files_run_whole_longest_first_and_keep_their_tests_order(items: list[Item], seconds: dict[str, float],
                                                                  ) -> None:
    original = list(items)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(ordering, "_recorded", lambda: {"dev": seconds})
        ordering.longest_first(items, "dev")  # type: ignore[arg-type]
        again = list(original)
        ordering.longest_first(again, "dev")  # type: ignore[arg-type]
    assert sorted(items, key=id) == sorted(original, key=id)  # nothing lost or added
    assert again == items  # deterministic: every worker gets the same order
    order = [ordering.file_of(item.nodeid) for item in items]
    runs = [name for index, name in enumerate(order) if index == 0 or order[index - 1] != name]
    assert len(runs) == len(set(runs))  # each file's tests are contiguous
    expected = [seconds.get(name, ordering.UNKNOWN_SECONDS) for name in runs]
    assert expected == sorted(expected, reverse=True)  # longest expected first
    for name in runs:  # a file's own tests keep their collection order
        assert [i for i in items if ordering.file_of(i.nodeid) == name] == \
               [i for i in original if ordering.file_of(i.nodeid) == name]


def test_a_recorded_run_is_written_per_profile_and_read_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "file_seconds.json"
    target.write_text(json.dumps({"ci": {"tests/test_x.py": 3.0}}))
    monkeypatch.setattr(ordering, "SECONDS_FILE", target)
    recorder = ordering.Recorder("dev")
    for nodeid, duration in (("tests/test_a.py::t", 1.5), ("tests/test_a.py::u", 2.0), ("tests/test_b.py::t", 9.0)):
        recorder.pytest_runtest_logreport(type("Report", (), {"nodeid": nodeid, "duration": duration})())  # type: ignore[arg-type]
    session = type("Session", (), {"config": object()})()
    recorder.pytest_sessionfinish(session, 1)  # type: ignore[arg-type]
    assert json.loads(target.read_text()) == {"ci": {"tests/test_x.py": 3.0}}  # a failed run records nothing
    recorder.pytest_sessionfinish(session, 0)  # type: ignore[arg-type]
    assert json.loads(target.read_text()) == {"ci": {"tests/test_x.py": 3.0},
                                              "dev": {"tests/test_b.py": 9.0, "tests/test_a.py": 3.5}}
    assert ordering._recorded()["dev"] == {"tests/test_b.py": 9.0, "tests/test_a.py": 3.5}
