"""Dashboard session cookies: what one signs reads back until it expires, nothing else
reads as a session (forged, cut, re-signed with another secret, random text), and CSRF
tokens belong to one session."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.config import DEFAULT_SESSION_SECONDS, load_settings
from app.problems import InputError
from app.ui.session import Session, Sessions

SECRET = "s" * 48
HEX64 = st.text("0123456789abcdef", min_size=64, max_size=64)


@given(token=st.none() | HEX64, now=st.integers(0, 2**33))
def test_a_signed_session_reads_back_until_it_expires(token: str | None, now: int):
    sessions = Sessions(SECRET, 3600)
    session = sessions.new(token, now=now)
    cookie = sessions.dumps(session)
    assert sessions.loads(cookie, now=now) == session
    assert sessions.loads(cookie, now=now + 3599) == session
    assert sessions.loads(cookie, now=now + 3600) is None


@given(garbage=st.text(max_size=300))
def test_nothing_but_a_signed_cookie_is_a_session(garbage: str):
    assert Sessions(SECRET, 3600).loads(garbage, now=0) is None


@given(token=HEX64, position=st.integers(0, 10_000), replacement=st.characters())
def test_any_change_to_a_cookie_breaks_it(token: str, position: int, replacement: str):
    sessions = Sessions(SECRET, 3600)
    cookie = sessions.dumps(sessions.new(token, now=0))
    index = position % len(cookie)
    changed = cookie[:index] + replacement + cookie[index + 1:]
    if changed != cookie:
        assert sessions.loads(changed, now=0) is None


def test_another_secret_does_not_read_the_cookie():
    cookie = Sessions(SECRET, 3600).dumps(Session("sid", 10**12, None))
    assert Sessions("t" * 48, 3600).loads(cookie, now=0) is None
    assert Sessions(SECRET, 3600).loads(cookie, now=0) == Session("sid", 10**12, None)


def test_csrf_tokens_belong_to_one_session():
    sessions = Sessions(SECRET, 3600)
    one, two = sessions.new(), sessions.new()
    assert one.sid != two.sid
    assert sessions.csrf_ok(one, sessions.csrf(one))
    assert not sessions.csrf_ok(two, sessions.csrf(one))
    assert not sessions.csrf_ok(one, None) and not sessions.csrf_ok(one, "") and not sessions.csrf_ok(None, "x")
    assert not sessions.csrf_ok(one, "é" * 64)  # not ASCII: refused, not an exception
    signature = sessions.dumps(one).split(".")[1]
    assert sessions.csrf(one) != signature  # separate keys for the two uses


def test_session_settings_come_from_the_environment_and_the_config(tmp_path: Path):
    assert load_settings(environ={}).session_seconds == DEFAULT_SESSION_SECONDS
    assert load_settings(environ={}).session_secret is None
    config = tmp_path / "c.toml"
    config.write_text("session_seconds = 600\n")
    assert load_settings(config=config, environ={}).session_seconds == 600
    env = {"MCP_GOVERNANCE_SESSION_SECONDS": "60", "MCP_GOVERNANCE_SESSION_SECRET": "k" * 32}
    settings = load_settings(config=config, environ=env)
    assert (settings.session_seconds, settings.session_secret) == (60, "k" * 32)
    for bad, field in (({"MCP_GOVERNANCE_SESSION_SECONDS": "0"}, "session_seconds"),
                       ({"MCP_GOVERNANCE_SESSION_SECONDS": "soon"}, "session_seconds"),
                       ({"MCP_GOVERNANCE_SESSION_SECRET": "short"}, "MCP_GOVERNANCE_SESSION_SECRET")):
        with pytest.raises(InputError) as problem:
            load_settings(environ=bad)
        assert problem.value.where == field
