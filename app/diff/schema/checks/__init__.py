"""The schema checks, one module per family of keywords; importing registers them all
(each module maps the kinds it emits beside its checks)."""

from app.diff.schema.checks import (  # noqa: F401 - imported for their registrations
    all_of,
    annotations,
    arrays,
    bounds,
    conditionals,
    negation,
    objects,
    strings,
    types,
    unions,
    values,
)
