"""Policies: severity overrides, reasoned ignores with expiry, per-server sections, and
validation errors that name the place (RULES.md, "Policy")."""

from __future__ import annotations

import tomllib
from dataclasses import replace
from datetime import date, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app import InputError, load_surface
from app.diff import DiffResult, IgnoredDelta, Severity, diff, rule_ids
from app.policy import Ignore, Policy, glob_match, load_policy

EXAMPLE = Path(__file__).parent.parent / "examples" / "policy.example.toml"
TODAY = date(2026, 6, 1)


def _billing(*, currency_required: bool, limit_max: int, id_description: str) -> dict:
    """A grouped tool (actions get_invoice and list behind a oneOf)."""
    get_invoice = {
        "type": "object",
        "properties": {"action": {"const": "get_invoice"}, "id": {"type": "string", "description": id_description},
                       "currency": {"type": "string"}},
        "required": ["action", "id", *(["currency"] if currency_required else [])],
    }
    listing = {"type": "object", "properties": {"action": {"const": "list"},
                                                "limit": {"type": "integer", "maximum": limit_max}},
               "required": ["action"]}
    return {"name": "billing", "inputSchema": {"type": "object", "oneOf": [get_invoice, listing]}}


def _users(description: str, email: dict) -> dict:
    return {"name": "users", "description": description,
            "inputSchema": {"type": "object", "properties": {"email": {"type": "string", **email}}}}


def _report(q: dict) -> dict:
    """A tool whose name has dots and brackets (regex and fnmatch specials)."""
    return {"name": "report[v2].pdf", "inputSchema": {"type": "object", "properties": {"q": {"type": "string", **q}}}}


BEFORE = load_surface({"tools": [
    _billing(currency_required=False, limit_max=50, id_description="Invoice id"),
    _users("Find users.", {"description": "old"}),
    _report({}),
]}, server="shop")
AFTER = load_surface({"tools": [
    {**_billing(currency_required=True, limit_max=100, id_description="The invoice id"), "description": "Invoices."},
    _users("Find people.", {"description": "new", "format": "email"}),
    _report({"pattern": "^a"}),
]}, server="shop")
RESULT = diff(BEFORE, AFTER)

# (rule, tool, action) of every delta in RESULT, as the engine orders them.
REQUIRED = ("input.required.added", "billing", "get_invoice")
PATTERN = ("input.pattern.added", "report[v2].pdf", None)
FORMAT = ("input.format.added", "users", None)
LIMIT = ("input.bound.relaxed", "billing", "list")
BILLING_DESC = ("tool.description.changed", "billing", None)
ID_DESC = ("input.description.changed", "billing", "get_invoice")
USERS_DESC = ("tool.description.changed", "users", None)
EMAIL_DESC = ("input.description.changed", "users", None)
ALL = [REQUIRED, PATTERN, FORMAT, LIMIT, BILLING_DESC, ID_DESC, USERS_DESC, EMAIL_DESC]


def keys(deltas) -> list[tuple[str, str | None, str | None]]:
    return [(d.rule, d.tool, d.action) for d in deltas]


def ignored_keys(result: DiffResult) -> list[tuple[str, str | None, str | None]]:
    return keys(entry.delta for entry in result.ignored)


def apply(text: str, today: date = TODAY, server: str | None = None) -> DiffResult:
    return load_policy(text, server).apply(RESULT, today)


def ignore_only(**selectors: str) -> list[tuple[str, str | None, str | None]]:
    """What a single ignore with these selectors moves to ``ignored``."""
    body = "".join(f"{key} = {value!r}\n" for key, value in selectors.items())
    result = apply(f'[[ignore]]\n{body}reason = "because"\n')
    moved = ignored_keys(result)
    assert keys(result.deltas) == [key for key in ALL if key not in moved]  # nothing lost, order kept
    assert moved == sorted(moved, key=ALL.index)
    return moved


def test_the_fixture_diff_is_what_the_tests_assume():
    assert keys(RESULT.deltas) == ALL
    assert RESULT.ignored == ()


# --- empty policy ------------------------------------------------------------------------


@pytest.mark.parametrize("text", ["", "# nothing yet\n", "[severity]\n", "ignore = []\n"])
def test_an_empty_policy_is_valid_and_changes_nothing(text):
    policy = load_policy(text)
    assert policy == Policy()
    assert policy.apply(RESULT, TODAY) == RESULT
    assert diff(BEFORE, AFTER, policy) == RESULT


# --- severity overrides ------------------------------------------------------------------


def test_an_override_makes_a_risky_rule_safe_so_the_gate_passes():
    before = load_surface({"tools": [_users("Find users.", {})]})
    after = load_surface({"tools": [_users("Find users.", {"format": "email"})]})
    plain = diff(before, after)
    assert keys(plain.deltas) == [FORMAT]
    assert plain.fails(Severity.RISKY) and plain.fails(Severity.BREAKING) is False

    result = diff(before, after, load_policy('[severity]\n"input.format.added" = "SAFE"\n'))
    assert [d.severity for d in result.deltas] == [Severity.SAFE]
    assert not result.fails(Severity.RISKY)
    assert result.fails(Severity.SAFE)
    assert result.to_json()["summary"] == {"BREAKING": 0, "RISKY": 0, "SAFE": 1, "COSMETIC": 0}
    assert result.to_json()["maxSeverity"] == "SAFE"
    assert result.ignored == ()


def test_an_override_keeps_the_delta_id_and_resorts_the_deltas():
    result = apply('[severity]\n"tool.description.changed" = "BREAKING"\n"input.required.added" = "cosmetic"\n')
    assert keys(result.deltas) == [BILLING_DESC, PATTERN, USERS_DESC, FORMAT, LIMIT, ID_DESC, REQUIRED, EMAIL_DESC]
    assert [d.sort_key() for d in result.deltas] == sorted(d.sort_key() for d in result.deltas)
    before_ids = {(d.rule, d.tool, d.action): d.id for d in RESULT.deltas}
    assert {(d.rule, d.tool, d.action): d.id for d in result.deltas} == before_ids
    regraded = {(d.rule, d.tool): d.severity for d in result.deltas}
    assert regraded[("tool.description.changed", "users")] is Severity.BREAKING
    assert regraded[("input.required.added", "billing")] is Severity.COSMETIC
    assert result.is_backwards_compatible is False  # the regraded description changes are now BREAKING
    assert result.tools == RESULT.tools and result.before_digest == RESULT.before_digest


def test_ignores_see_the_overridden_severity():
    result = apply('[severity]\n"input.format.added" = "SAFE"\n[[ignore]]\nrule = "input.format.added"\nreason = "r"\n')
    assert [entry.delta.severity for entry in result.ignored] == [Severity.SAFE]


# --- ignores: each selector --------------------------------------------------------------


def test_ignore_by_rule_glob():
    assert ignore_only(rule="input.description.*") == [ID_DESC, EMAIL_DESC]
    assert ignore_only(rule="*.description.changed") == [BILLING_DESC, ID_DESC, USERS_DESC, EMAIL_DESC]
    assert ignore_only(rule="input.format.added") == [FORMAT]
    assert ignore_only(rule="input.?ormat.added") == [FORMAT]


def test_ignore_by_rule_glob_is_case_sensitive_and_anchored():
    assert ignore_only(rule="input.format.add*") == [FORMAT]
    with pytest.raises(InputError, match="matches no rule"):
        load_policy('[[ignore]]\nrule = "INPUT.format.added"\nreason = "r"\n')
    with pytest.raises(InputError, match="matches no rule"):
        load_policy('[[ignore]]\nrule = "input.format"\nreason = "r"\n')


def test_ignore_by_tool_glob():
    assert ignore_only(tool="users") == [FORMAT, USERS_DESC, EMAIL_DESC]
    assert ignore_only(tool="bill*") == [REQUIRED, LIMIT, BILLING_DESC, ID_DESC]
    assert ignore_only(tool="Users") == []
    assert ignore_only(tool="user") == []


def test_tool_names_with_dots_and_brackets_match_literally():
    assert ignore_only(tool="report[v2].pdf") == [PATTERN]
    assert ignore_only(tool="report[v2]*") == [PATTERN]
    assert ignore_only(tool="reportv2.pdf") == []  # no [...] character classes
    assert ignore_only(tool="report[v2]xpdf") == []  # '.' is literal


def test_ignore_by_action_glob_only_matches_action_scoped_deltas():
    assert ignore_only(action="get_*") == [REQUIRED, ID_DESC]
    assert ignore_only(action="list") == [LIMIT]
    assert ignore_only(action="?*") == [REQUIRED, LIMIT, ID_DESC]
    assert ignore_only(action="*") == ALL  # '*' alone also covers deltas without an action


def test_ignore_by_path_glob_star_stays_in_one_segment():
    assert ignore_only(path="/tools/users/*") == [USERS_DESC]
    assert ignore_only(path="/tools/users/inputSchema/*") == []
    assert ignore_only(path="/tools/*/inputSchema/properties/*/format") == [FORMAT]
    assert ignore_only(path="/tools/billing/inputSchema/oneOf/?/required") == [REQUIRED]


def test_ignore_by_path_glob_double_star_crosses_segments():
    assert ignore_only(path="/tools/users/**") == [FORMAT, USERS_DESC, EMAIL_DESC]
    assert ignore_only(path="/tools/users/inputSchema/**") == [FORMAT, EMAIL_DESC]
    assert ignore_only(path="/tools/**/description") == [BILLING_DESC, ID_DESC, USERS_DESC, EMAIL_DESC]
    assert ignore_only(path="**/maximum") == [LIMIT]
    assert ignore_only(path="/tools/report[v2].pdf/**") == [PATTERN]


@pytest.mark.parametrize(("glob", "path", "expected"), [
    ("/a/**", "/a", True),  # a trailing /** also matches zero segments
    ("/a/**", "/a/b/c", True),
    ("/a/**", "/ab", False),
    ("/a/**/c", "/a/c", True),
    ("/a/**/c", "/a/b/b/c", True),
    ("/a/**/c", "/a/bc", False),
    ("/a/*", "/a/b/c", False),
    ("/a/*", "/a/", True),
    ("/a/b*", "/a/bx/y", False),
    ("/a/b**", "/a/bx/y", True),
    ("/a/?", "/a/b", True),
    ("/a/?", "/a//", False),
    ("/t.x/*", "/tax/y", False),  # '.' is literal
    ("/t[1]/*", "/t1/y", False),  # brackets are literal
    ("/t[1]/*", "/t[1]/y", True),
    ("/t(1)+/$", "/t(1)+/$", True),  # other regex specials too
    ("/a~1b/*", "/a~1b/c", True),  # '/' inside a name is '~1' in a pointer
    ("/A/*", "/a/b", False),  # case-sensitive
])
def test_path_glob(glob, path, expected):
    assert glob_match(glob, path, path=True) is expected


def test_selectors_combine_with_and():
    assert ignore_only(rule="input.description.*", tool="users") == [EMAIL_DESC]
    assert ignore_only(tool="billing", action="get_*", path="/tools/billing/inputSchema/**") == [REQUIRED, ID_DESC]
    assert ignore_only(tool="billing", path="/tools/billing/inputSchema/oneOf/0/required",
                       rule="input.required.added", action="get_invoice") == [REQUIRED]
    assert ignore_only(tool="billing", action="get_*", rule="input.bound.*") == []


def test_the_first_matching_ignore_gives_the_reason():
    result = apply('[[ignore]]\ntool = "users"\nreason = "first"\n[[ignore]]\nrule = "*"\nreason = "second"\n')
    reasons = {(entry.delta.rule, entry.delta.tool): entry.reason for entry in result.ignored}
    assert reasons[("input.format.added", "users")] == "first"
    assert reasons[("input.required.added", "billing")] == "second"
    assert result.deltas == ()
    assert ignored_keys(result) == ALL  # one entry per delta, in delta order


# --- expiry ------------------------------------------------------------------------------

EXPIRING = '[[ignore]]\ntool = "users"\nreason = "migration"\nexpires = {}\n'


@pytest.mark.parametrize("expires", ["2026-06-02", "2026-06-01", '"2026-12-31"'])
def test_an_ignore_applies_up_to_and_including_its_expiry_day(expires):
    result = apply(EXPIRING.format(expires))
    assert ignored_keys(result) == [FORMAT, USERS_DESC, EMAIL_DESC]
    assert not load_policy(EXPIRING.format(expires)).expired(TODAY)


@pytest.mark.parametrize("expires", ["2026-05-31", '"2020-01-01"'])
def test_an_expired_ignore_stops_applying_and_is_listed(expires):
    policy = load_policy(EXPIRING.format(expires), where="policy.toml")
    result = policy.apply(RESULT, TODAY)
    assert result == RESULT
    assert [ignore.where for ignore in policy.expired(TODAY)] == ["policy.toml: ignore[0]"]


def test_today_defaults_to_the_utc_date():
    soon = date.today() + timedelta(days=2)
    policy = load_policy(EXPIRING.format(soon.isoformat()))
    assert ignored_keys(policy.apply(RESULT)) == [FORMAT, USERS_DESC, EMAIL_DESC]
    assert policy.expired() == ()
    assert policy.expired(soon + timedelta(days=1)) == policy.ignores
    assert policy.apply(RESULT, datetime(2099, 1, 1, 12, 0)) == RESULT  # a datetime counts as its date


# --- JSON output -------------------------------------------------------------------------


def test_ignored_deltas_are_listed_with_reason_and_expiry_not_dropped():
    policy = load_policy('[[ignore]]\nrule = "input.format.added"\nreason = "format is advisory"\n'
                         'expires = 2026-09-30\n'
                         '[[ignore]]\nrule = "input.bound.*"\nreason = "limits are server-side"\n')
    document = policy.apply(RESULT, TODAY).to_json()
    format_id = next(d.id for d in RESULT.deltas if d.rule == "input.format.added")
    limit_id = next(d.id for d in RESULT.deltas if d.rule == "input.bound.relaxed")
    assert {d["id"] for d in document["deltas"]}.isdisjoint({format_id, limit_id})
    assert len(document["deltas"]) == len(ALL) - 2
    ignored = {entry["id"]: entry for entry in document["ignored"]}
    assert ignored[format_id]["reason"] == "format is advisory"
    assert ignored[format_id]["expires"] == "2026-09-30"
    assert ignored[format_id]["rule"] == "input.format.added" and ignored[format_id]["severity"] == "RISKY"
    assert ignored[limit_id]["reason"] == "limits are server-side" and ignored[limit_id]["expires"] is None
    assert document["summary"] == {"BREAKING": 2, "RISKY": 0, "SAFE": 0, "COSMETIC": 4}


def test_ignored_already_present_are_kept_and_apply_is_idempotent():
    earlier = IgnoredDelta(RESULT.deltas[0], "approved upstream")
    seeded = replace(RESULT, deltas=RESULT.deltas[1:], ignored=(earlier,))
    policy = load_policy('[[ignore]]\ntool = "users"\nreason = "r"\n')
    once = policy.apply(seeded, TODAY)
    assert once.ignored[0] == earlier
    assert ignored_keys(once) == [REQUIRED, FORMAT, USERS_DESC, EMAIL_DESC]
    assert policy.apply(once, TODAY) == once


def test_the_engine_applies_the_policy():
    policy = load_policy('[severity]\n"input.pattern.added" = "RISKY"\n[[ignore]]\naction = "*"\ntool = "users"\n'
                         'reason = "r"\n')
    assert diff(BEFORE, AFTER, policy) == policy.apply(RESULT, TODAY)
    assert diff(BEFORE, BEFORE, policy) == diff(BEFORE, BEFORE)  # the unchanged fast path too


# --- per-server sections -----------------------------------------------------------------

SHARED = """
[severity]
"input.format.added" = "SAFE"
"input.pattern.added" = "RISKY"

[[ignore]]
rule = "*.description.changed"
reason = "shared"

[servers.shop.severity]
"input.pattern.added" = "COSMETIC"

[[servers.shop.ignore]]
tool = "users"
reason = "shop only"

[servers."other.server".severity]
"input.required.added" = "SAFE"
"""


def test_a_server_section_overrides_severities_and_its_ignores_come_first():
    policy = load_policy(SHARED, "shop")
    assert policy.server == "shop"
    assert policy.severity == {"input.format.added": Severity.SAFE, "input.pattern.added": Severity.COSMETIC}
    assert [ignore.reason for ignore in policy.ignores] == ["shop only", "shared"]
    result = policy.apply(RESULT, TODAY)
    reasons = {(entry.delta.rule, entry.delta.tool): entry.reason for entry in result.ignored}
    assert reasons == {("input.format.added", "users"): "shop only", ("tool.description.changed", "users"): "shop only",
                       ("input.description.changed", "users"): "shop only",
                       ("tool.description.changed", "billing"): "shared",
                       ("input.description.changed", "billing"): "shared"}
    assert {(d.rule, d.severity) for d in result.deltas} >= {("input.pattern.added", Severity.COSMETIC)}


def test_other_servers_get_the_shared_part_only():
    for server in (None, "elsewhere"):
        policy = load_policy(SHARED, server)
        assert policy.for_server(server).severity == {"input.format.added": Severity.SAFE,
                                                      "input.pattern.added": Severity.RISKY}
        assert [ignore.reason for ignore in policy.for_server(server).ignores] == ["shared"]
    assert load_policy(SHARED, "elsewhere").server == "elsewhere"
    assert load_policy(SHARED, "other.server").severity["input.required.added"] is Severity.SAFE
    elsewhere = replace(RESULT, server="elsewhere")
    assert ignored_keys(load_policy(SHARED).apply(elsewhere, TODAY)) == [BILLING_DESC, ID_DESC, USERS_DESC, EMAIL_DESC]


def test_one_policy_for_every_server_picks_the_section_from_the_diff():
    """What a service does: one policy, diffs of many servers."""
    policy = load_policy(SHARED)
    assert policy.server is None and sorted(policy.servers) == ["other.server", "shop"]
    assert policy.apply(RESULT, TODAY) == load_policy(SHARED, "shop").apply(RESULT, TODAY)
    assert diff(BEFORE, AFTER, policy) == load_policy(SHARED, "shop").apply(RESULT, TODAY)
    unnamed = replace(RESULT, server=None)
    assert policy.apply(unnamed, TODAY) == policy.for_server(None).apply(unnamed, TODAY)
    assert [entry.reason for entry in policy.apply(unnamed, TODAY).ignored] == ["shared"] * 4


def test_a_single_server_file_names_its_server():
    text = 'server = "shop"\n[severity]\n"input.format.added" = "SAFE"\n'
    assert load_policy(text).server == "shop"
    assert load_policy(text, "shop") == load_policy(text)
    with pytest.raises(InputError) as caught:
        load_policy(text, "payments", where="shop.policy.toml")
    assert str(caught.value) == "shop.policy.toml: server: this policy is for server 'shop', not 'payments'"


def test_a_single_server_file_never_applies_to_another_server():
    policy = load_policy('server = "payments"\n[[ignore]]\nrule = "*"\nreason = "r"\n')
    assert policy.apply(RESULT, TODAY) == RESULT  # RESULT is server "shop"
    assert policy.apply(replace(RESULT, server="payments"), TODAY).deltas == ()
    assert policy.apply(replace(RESULT, server=None), TODAY).deltas == ()


def test_a_policy_for_one_server_cannot_have_sections():
    with pytest.raises(ValueError, match="cannot have per-server sections"):
        Policy(server="a", servers={"b": Policy(server="b")})


def test_expired_lists_the_ignores_of_every_section():
    policy = load_policy('[[ignore]]\ntool = "a"\nreason = "r"\nexpires = 2020-01-01\n'
                         '[[servers.shop.ignore]]\ntool = "b"\nreason = "r"\nexpires = 2020-01-02\n'
                         '[[servers.zoo.ignore]]\ntool = "c"\nreason = "r"\n', where="p.toml")
    assert [ignore.where for ignore in policy.expired(TODAY)] == ["p.toml: ignore[0]",
                                                                  "p.toml: servers.shop.ignore[0]"]
    assert [ignore.tool for ignore in policy.for_server("shop").expired(TODAY)] == ["b", "a"]


def test_a_bad_server_argument_is_an_input_error():
    with pytest.raises(InputError, match="not a valid server name"):
        load_policy("", "../etc")


# --- validation names the place ----------------------------------------------------------

ERRORS = [
    ("severty = {}", "severty", "unknown key (expected one of: server, severity, ignore, servers)"),
    ("severity = 3", "severity", "expected a table, got number"),
    ('[severity]\n"input.format.add" = "SAFE"', 'severity."input.format.add"',
     "unknown rule id (did you mean 'input.format.added'?)"),
    ('[severity]\n"input.*" = "SAFE"', 'severity."input.*"', "globs are not allowed in [severity]"),
    ('[severity]\n"input.format.added" = "HARMLESS"', 'severity."input.format.added"', "unknown severity 'HARMLESS'"),
    ('[severity]\n"input.format.added" = 1', 'severity."input.format.added"', "expected a severity name"),
    ('[ignore]\nrule = "input.*"\nreason = "r"', "ignore", "expected an array of tables ([[ignore]]), got object"),
    ('ignore = ["x"]', "ignore[0]", "expected a table, got string"),
    ('[[ignore]]\nreason = "r"', "ignore[0]", "no selector (give at least one of: rule, tool, action, path)"),
    ('[[ignore]]\nrule = "input.*"\nreason = "r"\n[[ignore]]\nrule = "input.*"', "ignore[1].reason",
     "missing (every ignore needs a reason)"),
    ('[[ignore]]\ntool = "a"\nreason = " \\n "', "ignore[0].reason", "must not be blank"),
    ('[[ignore]]\ntool = "a"\nreason = 3', "ignore[0].reason", "expected a string, got number"),
    ('[[ignore]]\ntool = "a"\nreason = "r"\ncolour = "red"', "ignore[0].colour", "unknown key"),
    ('[[ignore]]\nrule = "inptu.*"\nreason = "r"', "ignore[0].rule", "matches no rule"),
    ('[[ignore]]\ntool = ""\nreason = "r"', "ignore[0].tool", "must not be empty"),
    ('[[ignore]]\ntool = " users"\nreason = "r"', "ignore[0].tool", "leading or trailing whitespace"),
    ('[[ignore]]\naction = 1\nreason = "r"', "ignore[0].action", "expected a glob string, got number"),
    ('[[ignore]]\npath = "tools/**"\nreason = "r"', "ignore[0].path", "must start with '/'"),
    ('[[ignore]]\ntool = "a"\nreason = "r"\nexpires = "2027-02-30"', "ignore[0].expires",
     "'2027-02-30' is not a calendar date"),
    ('[[ignore]]\ntool = "a"\nreason = "r"\nexpires = "31.01.2027"', "ignore[0].expires", "expected a date"),
    ('[[ignore]]\ntool = "a"\nreason = "r"\nexpires = "20270131"', "ignore[0].expires", "expected a date"),
    ('[[ignore]]\ntool = "a"\nreason = "r"\nexpires = 2027-01-31T10:00:00', "ignore[0].expires",
     "expected a date (2027-01-31 or \"2027-01-31\"), got '2027-01-31T10:00:00'"),
    ('[[ignore]]\ntool = "a"\nreason = "r"\nexpires = 20270131', "ignore[0].expires", "got number"),
    ('server = "../etc"', "server", "not a valid server name"),
    ('server = 7', "server", "not a valid server name"),
    ("servers = 1", "servers", "expected a table, got number"),
    ("[servers]\nshop = 1", "servers.shop", "expected a table, got number"),
    ('[servers."bad/name".severity]', "servers.bad/name", "not a valid server name"),
    ('[servers.shop]\nserver = "x"', "servers.shop.server", "unknown key (expected one of: severity, ignore)"),
    ('[servers.shop.severity]\n"nope" = "SAFE"', 'servers.shop.severity."nope"', "unknown rule id"),
    ('[[servers.shop.ignore]]\ntool = "a"', "servers.shop.ignore[0].reason", "missing"),
    ('[servers.shop]\nignore = {}', "servers.shop.ignore", "expected an array of tables ([[servers.shop.ignore]])"),
    ('server = "a"\n[servers.b.severity]', "servers", "cannot have [servers.<name>] sections"),
]


@pytest.mark.parametrize(("text", "place", "message"), ERRORS, ids=[place for _, place, _ in ERRORS])
def test_every_validation_error_names_the_place(text, place, message):
    with pytest.raises(InputError) as caught:
        load_policy(text, where="policy.toml")
    error = caught.value
    assert error.where == f"policy.toml: {place}"
    assert message in error.message
    assert str(error) == f"policy.toml: {place}: {error.message}"


def test_a_reason_is_kept_without_surrounding_whitespace():
    policy = load_policy('[[ignore]]\ntool = "a"\nreason = """\n  codegen churn\n"""\n')
    assert policy.ignores[0].reason == "codegen churn"


def test_a_section_for_another_server_is_validated_too():
    with pytest.raises(InputError, match=r"servers\.payments\.ignore\[0\]\.reason"):
        load_policy('[[servers.payments.ignore]]\ntool = "a"\n', "shop")


def test_invalid_toml_is_an_input_error_naming_the_file():
    with pytest.raises(InputError) as caught:
        load_policy("[severity\n", where="policy.toml")
    assert caught.value.where == "policy.toml" and caught.value.message.startswith("invalid TOML: ")
    with pytest.raises(InputError, match="pass a Path to read a file"):
        load_policy("policy.toml")


def test_sources_path_bytes_and_text(tmp_path):
    text = '[[ignore]]\ntool = "users"\nreason = "r"\n'
    file = tmp_path / "shop.policy.toml"
    file.write_text(text, encoding="utf-8")
    from_path = load_policy(file)
    assert from_path == load_policy(text) == load_policy(("\ufeff" + text).encode("utf-8"))
    assert from_path.ignores[0].where == f"{file}: ignore[0]"
    with pytest.raises(InputError) as caught:
        load_policy(tmp_path / "missing.toml")
    assert str(caught.value) == f"{tmp_path / 'missing.toml'}: no such file"
    with pytest.raises(InputError, match="not UTF-8"):
        load_policy(b'[[ignore]]\ntool = "\xff"\nreason = "r"\n', where="p.toml")


# --- the example file and round trips ----------------------------------------------------


@pytest.mark.parametrize("server", [None, "payments", "billing"])
def test_the_example_file_loads_and_round_trips(server):
    policy = load_policy(EXAMPLE, server)
    assert policy.severity["input.format.added"] is Severity.SAFE
    assert all(ignore.reason for ignore in policy.ignores)
    text = policy.to_toml()
    assert load_policy(text) == policy
    assert load_policy(text).to_toml() == text  # normalised: writing is a fixed point


def test_to_toml_writes_a_readable_normalised_file():
    policy = load_policy(SHARED, "shop")
    text = policy.to_toml()
    assert text.startswith("# mcp-governance policy")
    assert tomllib.loads(text) == {
        "server": "shop",
        "severity": {"input.format.added": "SAFE", "input.pattern.added": "COSMETIC"},
        "ignore": [{"tool": "users", "reason": "shop only"}, {"rule": "*.description.changed", "reason": "shared"}],
    }
    assert load_policy(Policy().to_toml()) == Policy()


SERVER_NAMES = st.from_regex(r"\A[A-Za-z0-9][A-Za-z0-9_.-]{0,12}\Z").filter(lambda name: name not in (".", ".."))
UNICODE = st.characters(exclude_categories=("Cs",))
GLOBS = st.text(UNICODE, min_size=1, max_size=10).filter(lambda text: text == text.strip())


@st.composite
def ignores(draw) -> Ignore:
    selectors = {
        "rule": draw(st.none() | st.sampled_from(rule_ids()) | st.sampled_from(["input.*", "*.removed", "tool.?dded"])),
        "tool": draw(st.none() | GLOBS),
        "action": draw(st.none() | GLOBS),
        "path": draw(st.none() | GLOBS.map(lambda text: "/" + text)),
    }
    if all(value is None for value in selectors.values()):
        selectors["tool"] = draw(GLOBS)
    reason = draw(st.text(UNICODE, min_size=1, max_size=30).map(str.strip).filter(bool))
    expires = draw(st.none() | st.dates())
    return Ignore(reason=reason, expires=expires, **selectors)


SEVERITIES = st.dictionaries(st.sampled_from(rule_ids()), st.sampled_from(list(Severity)), max_size=5)
IGNORES = st.lists(ignores(), max_size=3).map(tuple)


@st.composite
def policies(draw) -> Policy:
    if draw(st.booleans()):
        return Policy(draw(SEVERITIES), draw(IGNORES), draw(SERVER_NAMES))
    names = draw(st.lists(SERVER_NAMES, max_size=3, unique=True))
    sections = {name: Policy(draw(SEVERITIES), draw(IGNORES), name) for name in names}
    return Policy(draw(SEVERITIES), draw(IGNORES), None, sections)


@settings(max_examples=60, deadline=None)
@given(policies())
def test_round_trip_of_any_policy(policy):
    text = policy.to_toml()
    assert load_policy(text) == policy
    assert load_policy(text).to_toml() == text
