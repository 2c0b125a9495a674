"""Schema regexes run on a model's text with a time limit: a crafted argument cannot stall
the service (Python's re would backtrack for hours on these)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from app import safe_regex
from app.validation import validate_arguments

EVIL = r"^(\w+\s?)*$"
CRAFTED = "a" * 40 + "!"


def test_ordinary_patterns_match_as_re_does():
    assert safe_regex.search(r"^inv_\d{4}$", "inv_2026")
    assert not safe_regex.search(r"^inv_\d{4}$", "inv_26")
    assert not safe_regex.search(r"(unclosed", "x")  # an invalid pattern never matches


def test_a_catastrophic_pattern_is_refused_not_stalled():
    # In a subprocess with a generous bound: with Python's re this input would run for
    # hours; the bound only tells a hang from an answer, it is not a speed target.
    code = textwrap.dedent(f"""
        from app.validation import validate_arguments
        schema = {{"type": "object", "properties": {{"name": {{"type": "string", "pattern": {EVIL!r}}}}},
                   "patternProperties": {{{EVIL!r}: {{}}}}, "additionalProperties": False}}
        problems = validate_arguments(schema, {{"name": {CRAFTED!r}, {CRAFTED!r}: 1}})
        print(sorted((p.path, p.kind) for p in problems))
    """)
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert "('name', 'pattern')" in result.stdout
    assert "'additionalProperties')" in result.stdout


def test_pattern_properties_and_extras_use_the_safe_search():
    schema = {"type": "object", "patternProperties": {"^x-": {"type": "string"}}, "additionalProperties": False}
    problems = validate_arguments(schema, {"x-ok": "a", "x-bad": 3, "other": 1})
    assert sorted((p.path, p.kind) for p in problems) == [("other", "additionalProperties"), ("x-bad", "type")]
