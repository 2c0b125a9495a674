"""Regular expressions from a server's schema, run on a model's text, with a time limit.

A schema ``pattern`` such as ``^(\\w+\\s?)*$`` backtracks exponentially on a crafted
argument; Python's ``re`` cannot be interrupted, so one request could hold a worker for
minutes. The ``regex`` module takes a timeout: a search that runs out of time counts as
"does not match" (the argument is refused, never waved through).
"""

from __future__ import annotations

from functools import lru_cache

import regex

from app.budget import seconds_left

SEARCH_SECONDS = 0.025
"""Per search. Legitimate tool-argument patterns finish in microseconds."""


@lru_cache(maxsize=1024)
def _compiled(pattern: str) -> regex.Pattern[str] | None:
    try:
        return regex.compile(pattern)
    except (regex.error, TypeError, ValueError, OverflowError):
        return None


def search(pattern: str, text: str, seconds: float = SEARCH_SECONDS) -> bool:
    """Whether ``pattern`` matches anywhere in ``text``; False for an invalid pattern or a
    search that runs out of time. Never longer than what is left of the request's work
    budget (:mod:`app.budget`), which raises once it has run out."""
    compiled = _compiled(pattern)
    if compiled is None:
        return False
    try:
        return compiled.search(text, timeout=seconds_left(seconds)) is not None
    except TimeoutError:
        return False
