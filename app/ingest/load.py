"""Every input format, auto-detected: one entry point, :func:`load_surface`.

Formats (``--input-format``): ``mcp`` (a tools/list result, a bare list of tools, or a
capture with prompts/resources/serverInfo beside them), ``mcp-pages`` (a JSON array of
tools/list result pages), ``fastmcp`` (``fastmcp inspect --format mcp``), ``vurb``
(Vurb / MCP Fusion lockfile; ``mcp-fusion`` is an alias), ``lockfile`` (our TOML
lockfile) and ``lockfile-json`` (its JSON export).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from app.ingest.formats import FORMATS
from app.ingest.fusion import looks_like_fusion, read_fusion_lockfile
from app.ingest.lenient import read_as_clients_do
from app.ingest.mcp import read_fastmcp, read_pages, read_result, unwrap_jsonrpc
from app.jsonio import check_value, decode_utf8, parse_json
from app.jsontypes import JSON
from app.lockfile import check_server_name, loads_toml, looks_like_lock_document, read_document
from app.model import Surface
from app.problems import InputError

MAX_INPUT_BYTES = 64 * 1024 * 1024


def detect_format(obj: JSON) -> str:
    """Which reader a parsed JSON document needs."""
    obj = unwrap_jsonrpc(obj)
    if isinstance(obj, list):
        pages = [unwrap_jsonrpc(item) for item in obj]
        if pages and all(isinstance(page, dict) and "tools" in page and "name" not in page for page in pages):
            return "mcp-pages"
        return "mcp"
    if looks_like_lock_document(obj):
        return "lockfile-json"
    if looks_like_fusion(obj):
        return "vurb"
    if isinstance(obj, dict) and isinstance(obj.get("environment"), dict) and "fastmcp" in obj["environment"]:
        return "fastmcp"
    if isinstance(obj, dict) and "tools" in obj:
        return "mcp"
    raise InputError(
        "unrecognised input: expected an MCP tools/list result ({\"tools\": [...]}), a list of tools or "
        "of result pages, a fastmcp manifest, a Vurb / MCP Fusion lockfile or an mcp-governance lockfile"
    )


def surface_from_json(obj: JSON, input_format: str | None = None, where: str | None = None) -> Surface:
    """A Surface from an already-parsed JSON value; errors are prefixed with ``where``."""
    try:
        return _from_json(obj, input_format)
    except InputError as exc:
        if not where:
            raise
        raise exc.located(where) from exc


def _from_json(obj: JSON, input_format: str | None) -> Surface:
    fmt = input_format or detect_format(obj)
    if fmt in ("mcp", "mcp-pages", "fastmcp"):
        _check_outside_tools(obj)  # parse_tool checks every tool as it reads it
    else:
        check_value(obj)
    if fmt not in FORMATS or fmt == "lockfile":
        raise InputError(f"input format {fmt!r} is not a JSON format (one of: {', '.join(FORMATS)})")
    if fmt == "mcp":
        return read_as_clients_do(read_result(obj, ""))
    if fmt == "mcp-pages":
        return read_as_clients_do(read_pages(unwrap_jsonrpc(obj), ""))
    if fmt == "fastmcp":
        return read_as_clients_do(read_fastmcp(obj, ""))
    if fmt in ("vurb", "mcp-fusion"):
        return read_fusion_lockfile(obj, "")
    return read_document(obj)


def _check_outside_tools(obj: JSON) -> None:
    """Everything of a tools/list-style document but the tools themselves."""
    if isinstance(obj, dict):
        inner = "result" if "jsonrpc" in obj and isinstance(obj.get("result"), dict) else "tools"
        check_value({key: value for key, value in obj.items() if key != inner})
        if inner == "result":
            _check_outside_tools(obj["result"])
        elif not isinstance(obj.get("tools"), list):
            check_value(obj.get("tools"))
    elif isinstance(obj, list):
        for item in obj:
            if isinstance(item, dict) and ("tools" in item or "jsonrpc" in item):
                _check_outside_tools(item)
    else:
        check_value(obj)


def surface_from_bytes(data: bytes | str, input_format: str | None = None, where: str | None = None) -> Surface:
    """A Surface from the bytes of a file or request body, in any format."""
    if input_format is not None and input_format not in FORMATS:
        raise InputError(f"unknown input format {input_format!r} (one of: {', '.join(FORMATS)})", where)
    if len(data) > MAX_INPUT_BYTES:
        raise InputError(f"larger than {MAX_INPUT_BYTES // (1024 * 1024)} MiB", where)
    text = decode_utf8(data, where)
    stripped = text.lstrip()
    if input_format == "lockfile" or (input_format is None and stripped[:1] not in ("{", "[")):
        if input_format is None and not stripped:
            raise InputError("empty input", where)
        return loads_toml(text, where)
    return surface_from_json(parse_json(text, where, check=False), input_format, where)


def load_surface(
    source: str | Path | bytes | JSON | Surface,
    *,
    input_format: str | None = None,
    server: str | None = None,
    server_version: str | None = None,
) -> Surface:
    """A Surface from a path, raw bytes, an already-parsed JSON value, or a Surface.

    ``server`` and ``server_version`` override what the input says about itself.
    """
    if isinstance(source, Surface):
        surface = source
    elif isinstance(source, (str, Path)):
        path = Path(source)
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            raise InputError("no such file", str(path)) from None
        except IsADirectoryError:
            raise InputError("is a directory, not a file", str(path)) from None
        except OSError as exc:
            raise InputError(f"cannot read ({exc.strerror})", str(path)) from None
        fmt = input_format or ("lockfile" if path.suffix == ".toml" else None)
        surface = surface_from_bytes(data, fmt, str(path))
    elif isinstance(source, (bytes, bytearray)):
        surface = surface_from_bytes(bytes(source), input_format)
    else:
        surface = surface_from_json(source, input_format)
    if server is not None:
        check_server_name(server, "--server")
        surface = replace(surface, server=server)
    if server_version is not None:
        surface = replace(surface, server_version=server_version)
    return surface


__all__ = ["FORMATS", "detect_format", "load_surface", "surface_from_bytes", "surface_from_json"]
