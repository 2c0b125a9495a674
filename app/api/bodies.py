"""Request bodies read strictly: our JSON reader (not the framework's), then the model."""

from __future__ import annotations

from dataclasses import replace
from typing import Any, TypeVar

from fastapi import Request
from pydantic import BaseModel, ValidationError

from app.api.problems import ApiError
from app.ingest.load import surface_from_bytes, surface_from_json
from app.jsonio import parse_json
from app.lockfile import check_server_name
from app.model import Surface
from app.problems import InputError

Model = TypeVar("Model", bound=BaseModel)
TOML_TYPES = ("application/toml", "text/toml", "application/x-toml")


def media_type(request: Request) -> str:
    return request.headers.get("content-type", "").split(";")[0].strip().lower()


async def json_body(request: Request) -> Any:
    data = await request.body()
    if not data:
        raise InputError("empty body (expected JSON)", "body")
    return parse_json(data, "body")


def validated(model: type[Model], value: Any) -> Model:
    """The body as a model; the first problem named as ``body.field: message``."""
    try:
        return model.model_validate(value)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first.get("loc", ()))
        raise InputError(first.get("msg", "invalid"), f"body.{where}" if where else "body") from None


def surface_of(value: Any, field: str, server: str | None = None, input_format: str | None = None) -> Surface:
    """A surface given inside a JSON body, in any input format."""
    if value is None:
        raise InputError("missing", f"body.{field}")
    surface = surface_from_json(value, input_format, f"body.{field}")
    return _named(surface, server)


async def raw_surface(request: Request, server: str | None = None) -> Surface:
    """A body that is the surface itself: JSON in any input format, or a TOML lockfile."""
    data = await request.body()
    if not data:
        raise InputError("empty body (expected a surface)", "body")
    if media_type(request) in TOML_TYPES:
        surface = surface_from_bytes(data, "lockfile", "body")
    else:
        surface = surface_from_json(parse_json(data, "body"), None, "body")
    return _named(surface, server)


def _named(surface: Surface, server: str | None) -> Surface:
    if server is None:
        return surface
    check_server_name(server, "server")
    return replace(surface, server=server)


def server_name(value: Any, where: str = "server") -> str:
    return check_server_name(value, where)


def wants_toml(request: Request) -> bool:
    accept = request.headers.get("accept", "")
    return any(kind in accept for kind in TOML_TYPES)


def require_json_or_toml(request: Request) -> None:
    kind = media_type(request)
    if kind and kind != "application/json" and kind not in TOML_TYPES and not kind.endswith("+json"):
        raise ApiError(415, "unsupported_media_type", f"send application/json or application/toml, not {kind}")


def openapi_body(model: type[BaseModel] | None = None, *, toml: str | None = None,
                 any_surface: bool = False) -> dict[str, Any]:
    """The ``requestBody`` for the OpenAPI document of a route that reads its body itself."""
    content: dict[str, Any] = {}
    if model is not None:
        content["application/json"] = {"schema": model.model_json_schema()}
    if any_surface:
        content["application/json"] = {"schema": {"type": ["object", "array"], "description":
                                                  "A surface in any input format: a tools/list result, a fastmcp "
                                                  "manifest, a Vurb / MCP Fusion lockfile or a lockfile JSON export"}}
    if toml:
        content["application/toml"] = {"schema": {"type": "string", "description": toml}}
    return {"requestBody": {"required": True, "content": content}}
