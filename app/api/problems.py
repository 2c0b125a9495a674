"""Every error as ``application/problem+json`` (RFC 9457) with a stable ``code``;
never a traceback, never a 500 for bad input."""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import JSONResponse

from app.budget import BudgetExceeded
from app.problems import InputError
from app.service import ServiceError
from app.store import StoreUnavailable

PROBLEM_JSON = "application/problem+json"
log = logging.getLogger("mcp_governance.api")

TITLES = {
    400: "Bad request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not found",
    405: "Method not allowed",
    406: "Not acceptable",
    409: "Conflict",
    412: "Precondition failed",
    413: "Payload too large",
    415: "Unsupported media type",
    422: "Unprocessable input",
    500: "Internal server error",
    503: "Service unavailable",
}


class ApiError(Exception):
    """An HTTP refusal raised by the API layer itself (auth, media types, limits)."""

    def __init__(self, status: int, code: str, detail: str, headers: dict[str, str] | None = None,
                 **extra: Any) -> None:
        super().__init__(detail)
        self.status, self.code, self.detail, self.headers, self.extra = status, code, detail, headers, extra


def quotable(value: Any) -> Any:
    """``value`` with every string made encodable: a lone surrogate (from a JSON ``\\ud800``
    the client sent, quoted back in a message) becomes the text ``\\ud800``. No input may
    turn its own 422 into a 500."""
    if isinstance(value, str):
        return value if value.isascii() else value.encode("utf-8", "backslashreplace").decode("utf-8")
    if isinstance(value, dict):
        return {quotable(key): quotable(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [quotable(item) for item in value]
    return value


def problem(status: int, code: str, detail: str, headers: dict[str, str] | None = None,
            **extra: Any) -> JSONResponse:
    body = {"type": f"https://mcp-governance.dev/problems/{code}", "title": TITLES.get(status, "Error"),
            "status": status, "detail": " ".join(detail.split()), "code": code, **extra}
    return JSONResponse(quotable(body), status_code=status, media_type=PROBLEM_JSON, headers=headers)


PROBLEM_SCHEMA: dict[str, Any] = {
    "title": "ProblemDetails",
    "description": "An RFC 9457 problem: one line in `detail`, a stable `code`; some codes add fields "
                   "(`deltas`, `attempt`, `current`, `server`, ...).",
    "type": "object",
    "required": ["type", "title", "status", "detail", "code"],
    "properties": {
        "type": {"type": "string", "format": "uri"},
        "title": {"type": "string"},
        "status": {"type": "integer", "minimum": 400, "maximum": 599},
        "detail": {"type": "string"},
        "code": {"type": "string"},
    },
    "additionalProperties": True,
}
COMMON_ERRORS = {
    "401": "No token, or an unknown one (when tokens are configured)",
    "403": "The token lacks the scope, or may not act on this server",
    "422": "Bad input: the one-line detail names the field",
}
"""Errors any authenticated operation may answer (the OpenAPI document lists them on each)."""


def document_problems(schema: dict[str, Any], server_pattern: str) -> dict[str, Any]:
    """The OpenAPI document as the service answers: every 4xx/5xx response is
    ``application/problem+json`` (one ``ProblemDetails`` schema; FastAPI's default 422 body is
    never sent), authenticated operations list 401/403/422, and a ``server`` path parameter
    carries the server-name pattern."""
    components = schema.setdefault("components", {}).setdefault("schemas", {})
    components["ProblemDetails"] = PROBLEM_SCHEMA  # "Problem" is the validation-error issue model
    for name in ("HTTPValidationError", "ValidationError"):
        components.pop(name, None)
    content = {PROBLEM_JSON: {"schema": {"$ref": "#/components/schemas/ProblemDetails"}}}
    for path, item in schema.get("paths", {}).items():
        for operation in item.values():
            if not isinstance(operation, dict) or "responses" not in operation:
                continue
            responses = operation["responses"]
            if not path.startswith(("/healthz", "/readyz", "/metrics")):
                for status, description in COMMON_ERRORS.items():
                    responses.setdefault(status, {"description": description})
            for status, response in responses.items():
                if status.isdigit() and int(status) >= 400:
                    response["content"] = content
                    response.setdefault("description", TITLES.get(int(status), "Error"))
            for parameter in operation.get("parameters", []):
                if parameter.get("name") == "server" and parameter.get("in") == "path":
                    parameter["schema"] = {**parameter.get("schema", {}), "pattern": server_pattern,
                                           "maxLength": 128}
    return schema


def _validation_detail(exc: RequestValidationError) -> str:
    errors = exc.errors()
    if not errors:
        return "invalid request"
    first = errors[0]
    where = ".".join(str(part) for part in first.get("loc", ()) if part not in ("body", "query", "path"))
    return f"{where or 'request'}: {first.get('msg', 'invalid')}"


def install(app: FastAPI) -> None:
    @app.exception_handler(ApiError)
    async def api_error(request: Request, exc: ApiError) -> JSONResponse:
        return problem(exc.status, exc.code, exc.detail, exc.headers, **exc.extra)

    @app.exception_handler(ServiceError)
    async def service_error(request: Request, exc: ServiceError) -> JSONResponse:
        return problem(exc.status, exc.code, exc.detail, **exc.extra)

    @app.exception_handler(InputError)
    async def input_error(request: Request, exc: InputError) -> JSONResponse:
        return problem(422, "invalid_input", str(exc))

    @app.exception_handler(BudgetExceeded)
    async def budget_exceeded(request: Request, exc: BudgetExceeded) -> JSONResponse:
        # 422, not 503: the input asked for the work, and the same input will again.
        return problem(422, "budget_exceeded", str(exc))

    @app.exception_handler(RequestValidationError)
    async def validation_error(request: Request, exc: RequestValidationError) -> JSONResponse:
        return problem(422, "invalid_request", _validation_detail(exc))

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        code = {404: "not_found", 405: "method_not_allowed"}.get(exc.status_code, "http_error")
        return problem(exc.status_code, code, str(exc.detail), getattr(exc, "headers", None))

    @app.exception_handler(StoreUnavailable)
    async def store_unavailable(request: Request, exc: StoreUnavailable) -> JSONResponse:
        log.warning("store unavailable on %s %s: %s", request.method, request.url.path, exc)
        return problem(503, exc.code, str(exc), {"Retry-After": "1"})

    @app.exception_handler(OSError)
    async def store_error(request: Request, exc: OSError) -> JSONResponse:
        log.exception("storage failed on %s %s", request.method, request.url.path)
        return problem(503, "store_unavailable", f"the lockfile store could not be written or read "
                                                 f"({exc.strerror or type(exc).__name__}); it is logged")

    @app.exception_handler(Exception)
    async def unexpected(request: Request, exc: Exception) -> JSONResponse:
        log.exception("unhandled error on %s %s", request.method, request.url.path)
        return problem(500, "internal_error", "the service failed to handle this request; it is logged")
