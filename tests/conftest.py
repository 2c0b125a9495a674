"""Shared fixtures: the hand-written inputs in tests/fixtures and the real server
captures in tests/corpus (a copy of the project's shared corpus); and the test profiles.

``MCP_GOVERNANCE_TEST_PROFILE`` picks one: ``dev`` (the default: what a developer runs
often, under 90 s on 2 cores) or ``ci`` (.ci/run). ``dev`` bounds hypothesis to
:data:`DEV_EXAMPLES` examples per test (a test's own larger ``max_examples`` included) and
skips the ``slow`` tests (framework venvs, fresh installs, npm, the browser); ``ci`` runs
every test with each one's own example count. xdist spreads files over the cores
(``addopts`` in pyproject.toml)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

from tests import ordering, stores
from tests.stores import _drop_test_database, store_backend, store_location  # noqa: F401 - fixtures

# PYTHONDONTWRITEBYTECODE (set on some machines) made every xdist worker rewrite every test
# module's asserts anew, about 4 s of CPU a worker a run: pytest caches the rewritten modules in
# __pycache__ (git-ignored) when it may write bytecode. The processes the tests start (serve,
# the gateway, the CLI) may cache theirs too: each gateway compiled app/gateway/proxy.py anew.
sys.dont_write_bytecode = False
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)

PROFILE = os.environ.get("MCP_GOVERNANCE_TEST_PROFILE") or "dev"
DEV_EXAMPLES = 20
"""The most examples a hypothesis test runs in the dev profile."""

settings.register_profile("dev", max_examples=DEV_EXAMPLES, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("ci", max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("ci" if PROFILE == "ci" else "dev")


def pytest_configure(config: pytest.Config) -> None:
    if ordering.RECORD:
        config.pluginmanager.register(ordering.Recorder(PROFILE), "mcp-governance-file-seconds")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    ordering.longest_first(items, PROFILE)  # xdist hands out files in this order (tests/ordering.py)
    if PROFILE == "ci":
        return
    skip = pytest.mark.skip(reason="slow: runs in the ci profile (MCP_GOVERNANCE_TEST_PROFILE=ci, .ci/run)")
    for item in items:
        if item.get_closest_marker("slow") is not None:
            item.add_marker(skip)
        test = getattr(item, "obj", None)
        own = getattr(test, "_hypothesis_internal_use_settings", None)
        if own is not None and own.max_examples > DEV_EXAMPLES:
            # a test's own @settings wins over the profile: bound it here in the dev profile
            test._hypothesis_internal_use_settings = settings(own, max_examples=DEV_EXAMPLES)  # type: ignore[union-attr]


TESTS = Path(__file__).parent
FIXTURES = TESTS / "fixtures"
CORPUS = TESTS / "corpus"


def fixture_path(name: str) -> Path:
    return FIXTURES / name


def load_json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def corpus_versions(server: str) -> list[Path]:
    """A server's captures, oldest release first (file names are versions)."""

    def key(path: Path) -> tuple[int, ...]:
        return tuple(int(part) for part in path.stem.split("."))

    return sorted((CORPUS / server).glob("*.json"), key=key)


CORPUS_SERVERS = sorted(path.name for path in CORPUS.iterdir() if path.is_dir())


@pytest.fixture
def plain_json() -> dict[str, Any]:
    return load_json(fixture_path("plain.json"))


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    stores.parametrize(metafunc)  # the store and API tests run on both stores (tests/stores.py)
