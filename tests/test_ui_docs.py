"""Offline API docs: /docs and /redoc load only files this package ships (checked against
the vendored manifest), the OpenAPI document declares its bearer scheme, and every
``$ref`` in it leads somewhere."""

from __future__ import annotations

import hashlib
import re
import tomllib
from fnmatch import fnmatch
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.api import create_app
from app.config import Settings
from app.schemas import resolve_local_ref
from app.ui.docs import declare_bearer, hoist_defs

ROOT = Path(__file__).resolve().parent.parent
UI = ROOT / "app" / "ui"
VENDOR = UI / "static" / "vendor"


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory):
    with TestClient(create_app(Settings(lockfiles=tmp_path_factory.mktemp("docs")))) as client:
        yield client


@pytest.mark.parametrize("path", ["/docs", "/redoc"])
def test_the_docs_pages_load_only_files_of_this_package(client: TestClient, path: str):
    page = client.get(path)
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assets = re.findall(r'(?:src|href)="([^"]+)"', page.text)
    assert assets and all(asset.startswith("/ui/static/") or asset == "/openapi.json" for asset in assets), assets
    for asset in assets:
        assert client.get(asset).status_code == 200, asset
    assert "script-src 'self'" in page.headers["content-security-policy"]
    assert "<script>" not in page.text  # no inline script: the CSP forbids it


def manifest() -> dict[str, tuple[str, str, str, str]]:
    rows = re.findall(r"^\| (\S+) \| (\S+) \| (\S+) \| ([0-9a-f]{64}) \| ([0-9a-f]{64}) \|$",
                      (VENDOR / "README.md").read_text(), re.M)
    return {name: (source, license_, upstream, here) for name, source, license_, upstream, here in rows}


def test_every_vendored_file_is_in_the_manifest_with_its_license_and_checksum():
    listed = manifest()
    on_disk = {str(path.relative_to(VENDOR)) for path in VENDOR.glob("*/*")}
    assert set(listed) == on_disk
    for name, (source, license_, upstream, here) in listed.items():
        assert hashlib.sha256((VENDOR / name).read_bytes()).hexdigest() == here, name
        assert re.fullmatch(r"(swagger-ui-dist|redoc)@\d+\.\d+\.\d+", source) and license_ in ("Apache-2.0", "MIT")
        assert (upstream == here) == (name != "redoc/redoc.standalone.js"), name  # only the one documented patch
    for folder in ("swagger-ui", "redoc"):
        assert (VENDOR / folder / "LICENSE").exists()


def test_the_redoc_bundle_asks_no_other_host_for_its_logo():
    bundle = (VENDOR / "redoc" / "redoc.standalone.js").read_bytes()
    assert b"cdn.redoc.ly" not in bundle and b"data:image/svg+xml" in bundle


def test_the_package_ships_every_template_and_static_file():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    patterns = config["tool"]["setuptools"]["package-data"]["app.ui"]
    files = [path.relative_to(UI).as_posix() for folder in ("templates", "static") for path in (UI / folder).rglob("*")
             if path.is_file()]
    assert files
    missing = [name for name in files if not any(fnmatch(name, pattern) and name.count("/") == pattern.count("/")
                                                 for pattern in patterns)]
    assert missing == []


def test_the_openapi_document_declares_bearer_tokens(client: TestClient):
    document = client.get("/openapi.json").json()
    schemes = document["components"]["securitySchemes"]
    assert [scheme for scheme in schemes.values() if scheme["type"] == "http" and scheme["scheme"] == "bearer"]
    assert {"bearerAuth": []} in document["security"] and {} in document["security"]


def refs(node: Any) -> list[str]:
    if isinstance(node, dict):
        found = [node["$ref"]] if isinstance(node.get("$ref"), str) else []
        return found + [ref for value in node.values() for ref in refs(value)]
    if isinstance(node, list):
        return [ref for item in node for ref in refs(item)]
    return []


def test_every_reference_in_the_openapi_document_resolves(client: TestClient):
    document = client.get("/openapi.json").json()
    found = refs(document)
    assert found
    unresolved = [ref for ref in found if resolve_local_ref(document, ref) is None]
    assert unresolved == []
    assert "$defs" not in str(document["paths"])


def test_hoisting_reuses_equal_definitions_and_renames_different_ones():
    document: dict[str, Any] = {
        "components": {"schemas": {"A": {"type": "string"}}},
        "paths": {
            "/x": {"schema": {"$defs": {"A": {"type": "string"}, "B": {"$ref": "#/$defs/A"}},
                              "properties": {"b": {"$ref": "#/$defs/B"}}}},
            "/y": {"schema": {"$defs": {"A": {"type": "integer"}}, "items": {"$ref": "#/$defs/A"}}},
        },
    }
    out = hoist_defs(document)
    assert out["components"]["schemas"] == {"A": {"type": "string"}, "B": {"$ref": "#/components/schemas/A"},
                                            "A2": {"type": "integer"}}
    assert out["paths"]["/x"]["schema"] == {"properties": {"b": {"$ref": "#/components/schemas/B"}}}
    assert out["paths"]["/y"]["schema"] == {"items": {"$ref": "#/components/schemas/A2"}}


def test_an_existing_bearer_scheme_is_not_declared_twice():
    document = declare_bearer({"components": {"securitySchemes": {"HTTPBearer": {"type": "http",
                                                                                  "scheme": "bearer"}}}})
    assert list(document["components"]["securitySchemes"]) == ["HTTPBearer"]
    assert document["security"] == [{"HTTPBearer": []}, {}]
