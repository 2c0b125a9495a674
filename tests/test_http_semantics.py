"""HTTP semantics (issue 9, item 8): If-Match and If-None-Match per RFC 9110 (``*``, weak tags,
lists; strong comparison for If-Match, weak for If-None-Match), and an OpenAPI document that
says what the service answers: problem+json for every error, the server-name pattern."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.etags import if_match, if_none_match
from app.names import SERVER_NAME_PATTERN
from tests.helpers_service import V1, V1_SAFE, api, assert_problem, lock

D = "sha256:" + "a" * 64


@pytest.mark.parametrize(("header", "current", "passes"), [
    ("*", D, True), ("*", None, False),
    (f'"{D}"', D, True), (D, D, True), (f'"{D}"', None, False),
    (f'W/"{D}"', D, False),  # If-Match compares strongly: a weak tag never matches
    (f'"x", "{D}"', D, True), (f'"x",W/"y" , "{D}"', D, True), ('"x", "y"', D, False),
    (f'"{D}x"', D, False), ("", D, False),
])
def test_if_match(header: str, current: str | None, passes: bool) -> None:
    assert if_match(header, current) is passes


@pytest.mark.parametrize(("header", "current", "passes"), [
    ("*", D, False), ("*", None, True),
    (f'"{D}"', D, False), (f'W/"{D}"', D, False),  # weak comparison: W/ matches too
    (f'"x", W/"{D}"', D, False), ('"x", "y"', D, True), (f'"{D}"', None, True),
])
def test_if_none_match(header: str, current: str | None, passes: bool) -> None:
    assert if_none_match(header, current) is passes


@pytest.fixture
def client(tmp_path: Path) -> Iterator[TestClient]:
    with api(tmp_path) as client:
        yield client


def test_lock_with_if_match_star_needs_an_existing_lock(client: TestClient) -> None:
    assert_problem(lock(client, V1, headers={"If-Match": "*"}), 412, "precondition_failed")
    first = lock(client, V1)
    assert first.status_code == 201
    assert lock(client, V1_SAFE, headers={"If-Match": "*"}).status_code == 201


def test_lock_with_if_match_lists_and_weak_tags(client: TestClient) -> None:
    etag = lock(client, V1).headers["ETag"]
    assert_problem(lock(client, V1_SAFE, headers={"If-Match": f"W/{etag}"}), 412)
    assert lock(client, V1_SAFE, headers={"If-Match": f'"sha256:other", {etag}'}).status_code == 201


def test_lock_with_if_none_match_creates_only(client: TestClient) -> None:
    assert lock(client, V1, headers={"If-None-Match": "*"}).status_code == 201
    assert_problem(lock(client, V1_SAFE, headers={"If-None-Match": "*"}), 412, "precondition_failed")
    etag = client.get("/lockfiles/billing").headers["ETag"]
    assert_problem(lock(client, V1_SAFE, headers={"If-None-Match": f"W/{etag}"}), 412)
    assert lock(client, V1_SAFE, headers={"If-None-Match": '"sha256:other"'}).status_code == 201


def test_get_with_if_none_match_weak_and_lists(client: TestClient) -> None:
    etag = lock(client, V1).headers["ETag"]
    for header in (etag, f"W/{etag}", f'"x", {etag}', "*"):
        response = client.get("/lockfiles/billing", headers={"If-None-Match": header})
        assert response.status_code == 304, header
        assert response.headers["ETag"] == etag
    assert client.get("/lockfiles/billing", headers={"If-None-Match": '"x"'}).status_code == 200


# --------------------------------------------------------------------------- OpenAPI


def _operations(document: dict[str, Any]) -> Iterator[tuple[str, str, dict[str, Any]]]:
    for path, item in document["paths"].items():
        for method, operation in item.items():
            if method in ("get", "put", "post", "delete", "patch"):
                yield path, method, operation


def test_openapi_documents_problem_json_for_every_error(client: TestClient) -> None:
    document = client.get("/openapi.json").json()
    seen = 0
    for path, method, operation in _operations(document):
        for status, response in operation.get("responses", {}).items():
            if status.isdigit() and int(status) >= 400:
                content = response.get("content", {})
                assert "application/problem+json" in content, (method, path, status, content)
                assert set(content) == {"application/problem+json"}, (method, path, status, set(content))
                seen += 1
    assert seen > 10
    problem = document["components"]["schemas"]["ProblemDetails"]
    assert {"type", "title", "status", "detail", "code"} <= set(problem["required"])
    # the validation-error issue model keeps its own name and shape
    assert "path" in document["components"]["schemas"]["Problem"]["properties"]


def test_openapi_documents_the_server_name_pattern(client: TestClient) -> None:
    document = client.get("/openapi.json").json()
    servers = [parameter for _, _, operation in _operations(document)
               for parameter in operation.get("parameters", []) if parameter["name"] == "server"
               and parameter["in"] == "path"]
    assert servers
    for parameter in servers:
        assert parameter["schema"]["pattern"] == SERVER_NAME_PATTERN
        assert re.fullmatch(parameter["schema"]["pattern"].strip("^$"), "billing")


def test_openapi_documents_the_bearer_scheme_and_every_ref_resolves(client: TestClient) -> None:
    document = client.get("/openapi.json").json()
    schemes = document["components"]["securitySchemes"]
    assert any(scheme["type"] == "http" and scheme["scheme"] == "bearer" for scheme in schemes.values())

    def refs(node: Any) -> Iterator[str]:
        if isinstance(node, dict):
            if isinstance(node.get("$ref"), str):
                yield node["$ref"]
            for value in node.values():
                yield from refs(value)
        elif isinstance(node, list):
            for value in node:
                yield from refs(value)

    found = list(refs(document))
    assert found
    for ref in found:
        assert ref.startswith("#/"), ref
        node: Any = document
        for token in ref[2:].split("/"):
            node = node[token.replace("~1", "/").replace("~0", "~")]
