"""Small typed getters shared by the readers: each names the exact place on failure."""

from __future__ import annotations

from app.jsontypes import JSON
from app.problems import InputError

_JSON_TYPE_NAMES = {dict: "object", list: "array", str: "string", bool: "boolean", int: "number", float: "number"}


def type_name(value: JSON) -> str:
    if value is None:
        return "null"
    return _JSON_TYPE_NAMES.get(type(value), type(value).__name__)


def need_object(value: JSON, where: str) -> dict[str, JSON]:
    if not isinstance(value, dict):
        raise InputError(f"expected an object, got {type_name(value)}", where)
    return value


def need_list(value: JSON, where: str) -> list[JSON]:
    if not isinstance(value, list):
        raise InputError(f"expected an array, got {type_name(value)}", where)
    return value


def need_name(value: JSON, where: str) -> str:
    if value is None:
        raise InputError("missing", where)
    if not isinstance(value, str):
        raise InputError(f"expected a string, got {type_name(value)}", where)
    if not value:
        raise InputError("must not be empty", where)
    return value


def optional_str(obj: dict[str, JSON], key: str, where: str) -> str | None:
    value = obj.get(key)
    if value is None or isinstance(value, str):
        return value
    raise InputError(f"expected a string, got {type_name(value)}", f"{where}.{key}")


def optional_object(obj: dict[str, JSON], key: str, where: str) -> dict[str, JSON] | None:
    value = obj.get(key)
    if value is None or isinstance(value, dict):
        return value
    raise InputError(f"expected an object, got {type_name(value)}", f"{where}.{key}")


def optional_list(obj: dict[str, JSON], key: str, where: str) -> list[JSON] | None:
    value = obj.get(key)
    if value is None or isinstance(value, list):
        return value
    raise InputError(f"expected an array, got {type_name(value)}", f"{where}.{key}")


def optional_bool(obj: dict[str, JSON], key: str, where: str) -> bool | None:
    value = obj.get(key)
    if value is None or isinstance(value, bool):
        return value
    raise InputError(f"expected true or false, got {type_name(value)}", f"{where}.{key}")


def rest(obj: dict[str, JSON], known: tuple[str, ...]) -> dict[str, JSON]:
    """The fields a reader does not know: kept, never dropped."""
    return {key: value for key, value in obj.items() if key not in known}
