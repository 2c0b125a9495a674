"""Offline API docs: ``/docs`` (Swagger UI) and ``/redoc`` (ReDoc) from the files vendored
in ``static/vendor/`` (see its README for versions and licenses), never from a CDN, and an
OpenAPI document that declares its bearer tokens so "Try it out" can send one.
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI
from fastapi.responses import HTMLResponse

from app.api.problems import document_problems
from app.names import SERVER_NAME_PATTERN

BEARER_SCHEME = "bearerAuth"
DOCS_HEADERS = {
    # The vendored bundles set inline styles and ReDoc runs a worker from a blob: still
    # nothing from another host.
    "Content-Security-Policy": ("default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
                                "img-src 'self' data:; font-src 'self' data:; worker-src 'self' blob:; "
                                "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; object-src 'none'"),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
}


def declare_bearer(schema: dict[str, Any]) -> dict[str, Any]:
    """Add the bearer scheme (unless one is declared already) and make it the document's
    default, optional requirement: with no tokens configured the service is open, and
    /healthz and /readyz never need one."""
    schemes = schema.setdefault("components", {}).setdefault("securitySchemes", {})
    declared = next((name for name, scheme in schemes.items()
                     if scheme.get("type") == "http" and str(scheme.get("scheme", "")).lower() == "bearer"), None)
    if declared is None:
        declared = BEARER_SCHEME
        schemes[declared] = {
            "type": "http",
            "scheme": "bearer",
            "description": "A token from `mcp-governance token` (scopes: read, report, lock, approve, admin), "
                           "when the service has tokens configured.",
        }
    schema.setdefault("security", [{declared: []}, {}])
    return schema


def hoist_defs(schema: dict[str, Any]) -> dict[str, Any]:
    """Move every ``$defs`` embedded in the document (a pydantic model's JSON schema used as
    a request or response body) into ``components/schemas`` and point its ``#/$defs/X``
    references there. Such a reference is resolved against the whole document, where it
    leads nowhere: ReDoc refuses the document ("Invalid reference token: $defs") and other
    tools guess. A definition whose name is taken by a different schema gets a suffix."""
    components = schema.setdefault("components", {}).setdefault("schemas", {})

    def rewrite(node: Any, names: dict[str, str]) -> Any:
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/$defs/") and ref[len("#/$defs/"):] in names:
                node = {**node, "$ref": f"#/components/schemas/{names[ref[len('#/$defs/'):]]}"}
            return {key: rewrite(value, names) for key, value in node.items()}
        if isinstance(node, list):
            return [rewrite(item, names) for item in node]
        return node

    def hoist(node: Any) -> Any:
        if isinstance(node, list):
            return [hoist(item) for item in node]
        if not isinstance(node, dict):
            return node
        node = {key: hoist(value) for key, value in node.items()}
        defs = node.pop("$defs", None)
        if not isinstance(defs, dict):
            return node
        names: dict[str, str] = {}
        for name in defs:
            chosen, n = name, 1
            while chosen in components and components[chosen] != defs[name]:
                n += 1
                chosen = f"{name}{n}"
            names[name] = chosen
        for name, definition in defs.items():
            components[names[name]] = rewrite(definition, names)
        return rewrite(node, names)

    schema["paths"] = hoist(schema.get("paths", {}))
    return schema


def install_docs(app: FastAPI) -> None:
    make_openapi = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            app.openapi_schema = declare_bearer(document_problems(hoist_defs(make_openapi()), SERVER_NAME_PATTERN))
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]
    openapi_url = app.openapi_url or "/openapi.json"

    def page(template: str) -> HTMLResponse:
        html = app.state.ui.templates.get_template(template).render(title=app.title, openapi_url=openapi_url)
        return HTMLResponse(html, headers=DOCS_HEADERS)

    @app.get("/docs", include_in_schema=False)
    def swagger() -> HTMLResponse:
        return page("swagger.html")

    @app.get("/redoc", include_in_schema=False)
    def redoc() -> HTMLResponse:
        return page("redoc.html")
