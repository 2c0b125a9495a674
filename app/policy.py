"""Per-server policy: severity overrides and reasoned ignores, applied to a ContractDiff.

RULES.md ("Policy"): a policy may re-grade a rule and ignore deltas, each ignore with a
mandatory reason and an optional expiry; ignored deltas stay visible under ``ignored`` in
the JSON output, never silently dropped. ``examples/policy.example.toml`` is a commented
example of the file::

    # server = "billing"                     # either: this file is for one server only ...
    [severity]                               # exact rule ids (no globs) -> new severity
    "input.format.added" = "SAFE"

    [[ignore]]
    rule = "input.description.*"             # selectors: rule, tool, action, path (globs)
    tool = "billing"
    reason = "wording churn from codegen"    # mandatory, not blank
    expires = 2027-01-31                     # optional TOML date or "YYYY-MM-DD" string

    [servers.payments.severity]              # ... or: per-server sections in a shared file
    "input.pattern.changed" = "BREAKING"
    [[servers.payments.ignore]]
    path = "/tools/charge/inputSchema/**"
    reason = "..."

Semantics, chosen so a policy can never hide more than its author wrote:

- Which server: :meth:`Policy.apply` resolves the policy for the diff's server name
  (``load_policy(..., server)`` resolves it up front). That server's
  ``[servers.<name>.severity]`` overrides the shared ``[severity]`` rule by rule; its
  ``[[servers.<name>.ignore]]`` entries are tried before the shared ones; the first unexpired
  ignore that matches a delta supplies the reason. A file with ``server = "x"`` applies to
  server x and to diffs without a server name, and to no other server: another server's
  ignores must never hide this one's changes. Every section is validated, whichever
  server is asked for, so a typo never hides.
- An ignore matches when *all* its selectors match (AND); it needs at least one.
  Globs are case-sensitive: ``*`` any run of characters, ``?`` one character, and every
  other character is literal (not fnmatch: its ``[...]`` classes would make a tool named
  ``report[v2]`` unmatchable as written). In ``path``, which is matched against the delta's JSON pointer (RFC 6901:
  ``/`` in a name is written ``~1``), ``*`` and ``?`` stay within one segment, ``**``
  crosses segments, and ``/**`` also matches zero segments (``/a/**`` matches ``/a``).
- A delta without a tool (prompts, resources) or without an action (tool-level deltas)
  is matched by a ``tool``/``action`` selector only when the glob is ``*``.
- A ``rule`` glob must match some registered rule, and ``[severity]`` keys must be
  registered rule ids, so a misspelt rule is an error, not a silent no-op.
- ``expires`` is inclusive: an ignore applies through that day (UTC) and stops after it.
- Apply order: severity overrides first, then ignores (an ignore sees the new severity).
  An override keeps the delta's id, which does not include the severity.

Errors are :class:`InputError` naming the place: ``policy.toml: ignore[2].reason: missing
(every ignore needs a reason)``; indices count from 0, as everywhere in mcp-governance.
:func:`load_policy` takes a Path (a file), bytes, or a str of TOML *text* (not a path).
Read with tomllib (strict TOML 1.0, as the lockfile); written back with tomlkit by
:meth:`Policy.to_toml`, normalised, so ``load_policy(policy.to_toml()) == policy``.
"""

from __future__ import annotations

import difflib
import re
import tomllib
from dataclasses import dataclass, field, replace
from datetime import UTC, date, datetime
from functools import lru_cache
from pathlib import Path

import tomlkit

import app.diff.rules  # noqa: F401  (registers every rule family before ids are checked)
from app.diff.model import Delta, DiffResult, IgnoredDelta, Severity
from app.diff.registry import rule_ids
from app.ingest.fields import type_name
from app.jsontypes import JSON
from app.lockfile import check_server_name
from app.problems import InputError
from app.tomltext import key_item, string_item

SELECTORS = ("rule", "tool", "action", "path")
IGNORE_KEYS = (*SELECTORS, "reason", "expires")
SECTION_KEYS = ("severity", "ignore")
TOP_KEYS = ("server", *SECTION_KEYS, "servers")
_ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_GLOB_CHARS = frozenset("*?")


# --- globs ----------------------------------------------------------------------------


@lru_cache(maxsize=1024)
def glob_regex(glob: str, path: bool = False) -> re.Pattern[str]:
    """A compiled full-match regex for a policy glob; ``path`` makes ``*``/``?`` stop at ``/``."""
    out: list[str] = []
    i = 0
    while i < len(glob):
        if path and glob.startswith("/**", i) and glob[i + 3:i + 4] in ("", "/"):
            out.append("(?:/.*)?")
            i += 3
        elif glob.startswith("**", i):
            out.append(".*")
            i += 2
        elif glob[i] == "*":
            out.append("[^/]*" if path else ".*")
            i += 1
        elif glob[i] == "?":
            out.append("[^/]" if path else ".")
            i += 1
        else:
            out.append(re.escape(glob[i]))
            i += 1
    return re.compile("".join(out), re.DOTALL)


def glob_match(glob: str, value: str | None, path: bool = False) -> bool:
    """Whether ``value`` matches; a missing value (no tool, no action) only matches ``*``-only globs."""
    return glob_regex(glob, path).fullmatch(value or "") is not None


# --- the policy -----------------------------------------------------------------------


@dataclass(frozen=True)
class Ignore:
    """One ``[[ignore]]`` entry: selectors (globs, None = any), why, and until when."""

    reason: str
    rule: str | None = None
    tool: str | None = None
    action: str | None = None
    path: str | None = None
    expires: date | None = None
    where: str = field(default="", compare=False)
    """Where it was written (``policy.toml: ignore[0]``), so a warning can point at it."""

    def selectors(self) -> dict[str, str]:
        return {key: value for key in SELECTORS if (value := getattr(self, key)) is not None}

    def active(self, today: date) -> bool:
        return self.expires is None or today <= self.expires

    def matches(self, delta: Delta) -> bool:
        """All selectors match (AND); expiry is the caller's concern."""
        return all(glob_match(glob, getattr(delta, key), path=key == "path")
                   for key, glob in self.selectors().items())


def utc_today() -> date:
    return datetime.now(UTC).date()


@dataclass(frozen=True)
class Policy:
    """Severity overrides and ignores, plus (for a file shared by several servers) each
    server's own section; :meth:`apply` picks the section from the diff's server name, so
    one Policy can serve every server of a running service."""

    severity: dict[str, Severity] = field(default_factory=dict, hash=False)
    ignores: tuple[Ignore, ...] = ()
    server: str | None = None
    """The one server this policy is for (``server = ...``, or resolved by :meth:`for_server`)."""
    servers: dict[str, Policy] = field(default_factory=dict, hash=False)
    """Per-server sections, each holding only its own severities and ignores."""

    def __post_init__(self) -> None:
        if self.server is not None and self.servers:
            raise ValueError("a policy for one server cannot have per-server sections")

    def for_server(self, name: str | None) -> Policy:
        """The policy that applies to ``name`` (None: a diff without a server name).

        A policy for one server applies to that server and to unnamed diffs only: another
        server gets the empty policy, never someone else's ignores."""
        if self.server is not None:
            return self if name in (None, self.server) else Policy(server=name)
        own = self.servers.get(name) if name is not None else None
        if own is None:
            return Policy(self.severity, self.ignores, name) if (name or self.servers) else self
        return Policy({**self.severity, **own.severity}, own.ignores + self.ignores, name)

    def apply(self, result: DiffResult, today: date | None = None) -> DiffResult:
        """Re-grade, then move matching deltas to ``ignored``; everything else stays as it was."""
        policy = self.for_server(result.server)
        if not policy.severity and not policy.ignores:
            return result
        day = _day(today)
        active = [ignore for ignore in policy.ignores if ignore.active(day)]
        kept: list[Delta] = []
        ignored: list[IgnoredDelta] = []
        for delta in sorted(map(policy._regrade, result.deltas), key=Delta.sort_key):
            hit = next((ignore for ignore in active if ignore.matches(delta)), None)
            if hit is None:
                kept.append(delta)
            else:
                expires = hit.expires.isoformat() if hit.expires else None
                ignored.append(IgnoredDelta(delta, hit.reason, expires))
        return replace(result, deltas=tuple(kept), ignored=(*result.ignored, *ignored))

    def _regrade(self, delta: Delta) -> Delta:
        severity = self.severity.get(delta.rule)
        return delta if severity is None or severity is delta.severity else replace(delta, severity=severity)

    def expired(self, today: date | None = None) -> tuple[Ignore, ...]:
        """Ignores that no longer apply (in every section), so the CLI can say which to renew or delete."""
        day = _day(today)
        every = self.ignores + tuple(i for _, section in sorted(self.servers.items()) for i in section.ignores)
        return tuple(ignore for ignore in every if not ignore.active(day))

    def to_toml(self) -> str:
        """The policy as a normalised TOML file (tomlkit): reads back equal, and is a fixed point."""
        doc = tomlkit.document()
        doc.add(tomlkit.comment("mcp-governance policy: severity overrides and ignores (see RULES.md, Policy)."))
        doc.add(tomlkit.nl())
        if self.server is not None:
            doc.add("server", string_item(self.server))
            doc.add(tomlkit.nl())
        _add_rules(doc, self)
        if self.servers:
            servers = tomlkit.table(is_super_table=True)
            for name, section in sorted(self.servers.items()):
                table = tomlkit.table(is_super_table=bool(section.severity or section.ignores))
                _add_rules(table, section)
                servers.add(key_item(name), table)
            doc.add("servers", servers)
        return tomlkit.dumps(doc)


def _day(today: date | None) -> date:
    if today is None:
        return utc_today()
    return today.date() if isinstance(today, datetime) else today


def _add_rules(container: JSON, policy: Policy) -> None:
    """``severity`` (sorted by rule id) and ``ignore`` (in order, the order matters) of one section."""
    if policy.severity:
        table = tomlkit.table()
        for rule_id, severity in sorted(policy.severity.items()):
            table.add(key_item(rule_id), severity.value)
        container.add("severity", table)
    if policy.ignores:
        entries = tomlkit.aot()
        for ignore in policy.ignores:
            entries.append(_ignore_table(ignore))
        container.add("ignore", entries)


def _ignore_table(ignore: Ignore) -> JSON:
    table = tomlkit.table()
    for key, glob in ignore.selectors().items():
        table.add(key, string_item(glob))
    table.add("reason", string_item(ignore.reason))
    if ignore.expires is not None:
        table.add("expires", ignore.expires)
    return table


# --- reading --------------------------------------------------------------------------


def load_policy(source: str | Path | bytes, server: str | None = None, *, where: str | None = None) -> Policy:
    """Read and validate a policy file (a Path, TOML bytes, or TOML text) and resolve it for
    ``server``. ``where`` names the source in errors (default: the path, if one is given)."""
    if isinstance(source, Path):
        where = where or str(source)
    text = _text(source, where)
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        hint = " (a str is TOML text; pass a Path to read a file)" if _looks_like_a_path(source) else ""
        raise InputError(f"invalid TOML: {exc}{hint}", where) from None
    policy = _Reader(where).document(raw)
    if server is None:
        return policy
    check_server_name(server, "--server")
    if policy.server is not None and server != policy.server:
        raise InputError(f"this policy is for server {policy.server!r}, not {server!r}", _at(where, "server"))
    return policy.for_server(server)


def _text(source: str | Path | bytes, where: str | None) -> str:
    if isinstance(source, str):
        return source
    if isinstance(source, Path):
        try:
            source = source.read_bytes()
        except FileNotFoundError:
            raise InputError("no such file", where) from None
        except IsADirectoryError:
            raise InputError("is a directory, not a file", where) from None
        except OSError as exc:
            raise InputError(f"cannot read ({exc.strerror})", where) from None
    try:
        return bytes(source).decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(f"not UTF-8 (byte {exc.start})", where) from None


def _looks_like_a_path(source: str | Path | bytes) -> bool:
    return isinstance(source, str) and "\n" not in source and "=" not in source and source.strip() != ""


def _at(where: str | None, place: str) -> str:
    return f"{where}: {place}" if where else place


class _Reader:
    """Validates the parsed TOML, naming each place as ``<file>: <dotted.field[index]>``."""

    def __init__(self, where: str | None) -> None:
        self.where = where
        self.rules = rule_ids()

    def fail(self, place: str, message: str) -> InputError:
        return InputError(message, _at(self.where, place))

    def document(self, raw: dict[str, JSON]) -> Policy:
        self.known_keys(raw, TOP_KEYS, "")
        server = raw.get("server")
        if server is not None:
            check_server_name(server, _at(self.where, "server"))
        servers = self.table(raw.get("servers", {}), "servers")
        if server is not None and servers:
            raise self.fail("servers", f"a policy for one server (server = {server!r}) cannot have "
                                       "[servers.<name>] sections; drop one or the other")
        shared = self.section(raw, "", server)
        per_server = {}
        for name, section in servers.items():
            check_server_name(name, _at(self.where, f"servers.{name}"))
            per_server[name] = self.section(section, f"servers.{name}.", name)
        return replace(shared, servers=per_server)

    def known_keys(self, table: dict[str, JSON], allowed: tuple[str, ...], prefix: str) -> None:
        for key in table:
            if key not in allowed:
                raise self.fail(f"{prefix}{key}", f"unknown key (expected one of: {', '.join(allowed)})")

    def table(self, value: JSON, place: str) -> dict[str, JSON]:
        if not isinstance(value, dict):
            raise self.fail(place, f"expected a table, got {type_name(value)}")
        return value

    def section(self, raw: JSON, prefix: str, server: str | None) -> Policy:
        """``severity`` and ``ignore`` of the top level (prefix "") or of ``servers.<name>.``."""
        raw = self.table(raw, prefix.rstrip(".") or "(root)")
        if prefix:
            self.known_keys(raw, SECTION_KEYS, prefix)
        severity = self.severities(self.table(raw.get("severity", {}), f"{prefix}severity"), f"{prefix}severity")
        entries = raw.get("ignore", [])
        if not isinstance(entries, list):
            raise self.fail(f"{prefix}ignore", f"expected an array of tables ([[{prefix}ignore]]), "
                                               f"got {type_name(entries)}")
        ignores = tuple(self.ignore(entry, f"{prefix}ignore[{index}]") for index, entry in enumerate(entries))
        return Policy(severity, ignores, server)

    def severities(self, table: dict[str, JSON], place: str) -> dict[str, Severity]:
        out: dict[str, Severity] = {}
        for rule_id, name in table.items():
            at = f'{place}."{rule_id}"'
            self.check_rule_id(rule_id, at)
            if not isinstance(name, str):
                names = ", ".join(severity.value for severity in Severity)
                raise self.fail(at, f"expected a severity name ({names}), got {type_name(name)}")
            try:
                out[rule_id] = Severity.parse(name)
            except ValueError as exc:
                raise self.fail(at, str(exc)) from None
        return out

    def check_rule_id(self, rule_id: str, at: str) -> None:
        if rule_id in self.rules:
            return
        if _GLOB_CHARS & set(rule_id):
            raise self.fail(at, "globs are not allowed in [severity]; name each rule id")
        raise self.fail(at, f"unknown rule id{self.suggestion(rule_id)}")

    def suggestion(self, text: str) -> str:
        close = difflib.get_close_matches(text, self.rules, n=1)
        return f" (did you mean {close[0]!r}?)" if close else ""

    def ignore(self, raw: JSON, place: str) -> Ignore:
        entry = self.table(raw, place)
        self.known_keys(entry, IGNORE_KEYS, f"{place}.")
        globs = {key: self.glob(entry[key], f"{place}.{key}") for key in SELECTORS if key in entry}
        if not globs:
            raise self.fail(place, f"no selector (give at least one of: {', '.join(SELECTORS)})")
        if "rule" in globs and not any(glob_match(globs["rule"], rule_id) for rule_id in self.rules):
            raise self.fail(f"{place}.rule", f"matches no rule{self.suggestion(globs['rule'])}")
        if "path" in globs and not globs["path"].startswith(("/", "*")):
            raise self.fail(f"{place}.path", "must start with '/' (delta paths are JSON pointers such as "
                                             "/tools/billing/inputSchema) or a wildcard")
        return Ignore(reason=self.reason(entry.get("reason"), f"{place}.reason"),
                      expires=self.expires(entry.get("expires"), f"{place}.expires"),
                      where=_at(self.where, place), **globs)

    def glob(self, value: JSON, place: str) -> str:
        if not isinstance(value, str):
            raise self.fail(place, f"expected a glob string, got {type_name(value)}")
        if not value:
            raise self.fail(place, "must not be empty (leave the key out to match anything)")
        if value != value.strip():
            raise self.fail(place, "has leading or trailing whitespace, so it would never match")
        return value

    def reason(self, value: JSON, place: str) -> str:
        if value is None:
            raise self.fail(place, "missing (every ignore needs a reason)")
        if not isinstance(value, str):
            raise self.fail(place, f"expected a string, got {type_name(value)}")
        if not value.strip():
            raise self.fail(place, "must not be blank (every ignore needs a reason)")
        return value.strip()

    def expires(self, value: JSON, place: str) -> date | None:
        if value is None:
            return None
        if isinstance(value, date) and not isinstance(value, datetime):
            return value
        if isinstance(value, str) and _ISO_DATE.match(value):
            try:
                return date.fromisoformat(value)
            except ValueError:
                raise self.fail(place, f"{value!r} is not a calendar date") from None
        raise self.fail(place, f"expected a date (2027-01-31 or \"2027-01-31\"), got {_shown(value)}")


def _shown(value: JSON) -> str:
    if isinstance(value, (datetime, str)):
        return repr(value.isoformat() if isinstance(value, datetime) else value)
    return type_name(value)


__all__ = ["Ignore", "Policy", "glob_match", "glob_regex", "load_policy"]
