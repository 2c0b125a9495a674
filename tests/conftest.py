"""Shared fixtures: the hand-written inputs in tests/fixtures and the real server
captures in tests/corpus (a copy of the project's shared corpus)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests import stores
from tests.stores import _drop_test_database, store_backend, store_location  # noqa: F401 - fixtures

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
