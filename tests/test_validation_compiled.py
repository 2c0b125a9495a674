"""The gateway's hot path: validators compiled once per schema digest give exactly the
problems :func:`app.validation.validate_arguments` gives."""

from __future__ import annotations

from hypothesis import given, settings

from app import validation
from app.canonical import digest_of
from app.validation import validate_arguments, validate_compiled
from tests.strategies import json_values, schemas


@settings(max_examples=150, deadline=None)
@given(schemas(), json_values)
def test_a_compiled_validator_finds_the_same_problems(schema, arguments):
    digest = digest_of(schema)
    assert validate_compiled(schema, arguments, digest) == validate_arguments(schema, arguments)
    assert validate_compiled(schema, arguments, digest) == validate_arguments(schema, arguments)  # from the cache


def test_a_schema_is_compiled_once_per_digest():
    schema = {"type": "object", "properties": {"id": {"type": "string", "pattern": "^inv_"}}}
    digest = digest_of(schema)
    validate_compiled(schema, {"id": "x"}, digest)
    first = validation._compiled(schema, digest)
    validate_compiled(schema, {"id": "inv_1"}, digest)
    assert validation._compiled(schema, digest) is first


def test_an_unusable_schema_is_one_root_problem_as_before():
    schema = {"type": "no such type"}
    assert validate_compiled(schema, {}, digest_of(schema)) == validate_arguments(schema, {})
