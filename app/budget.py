"""A request's total work budget: one deadline for everything a request computes
(validation, diff, rendering), checked cooperatively.

Work loops call :func:`checkpoint` (a schema walk per compared place, the diff per tool,
validation per error and per schema regex, uniqueItems per item); past the deadline it
raises :class:`BudgetExceeded`, which unwinds the worker thread itself: nothing is left
running after the answer. Schema regexes run with the smaller of their own time limit and
what is left (:func:`seconds_left`). With no budget set (the CLI, the engine called as a
library) :func:`checkpoint` costs one context-variable lookup and never raises.

The deadline lives in a context variable, so it follows the request into the threadpool
(the ASGI server's task context is copied there) and never leaks into another request.
Pure: no I/O, no framework.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

CHECK_EVERY = 64
"""A checkpoint reads the clock only every this many calls (they come in tight loops)."""


class BudgetExceeded(Exception):
    """A request used up its work budget; the API answers 422 ``budget_exceeded``."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"the request needed more than its work budget of {seconds:g} s (validation, diff and "
                         "rendering together); send a smaller input")
        self.seconds = seconds


class Deadline:
    """Starts at the request's first checkpoint: receiving the body and waiting for the
    store's lock are not work, and never count."""

    __slots__ = ("_calls", "ends", "seconds")

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.ends: float | None = None
        self._calls = 0

    def left(self) -> float:
        if self.ends is None:
            self.ends = time.monotonic() + self.seconds
        return self.ends - time.monotonic()

    def check(self, now: bool = False) -> None:
        self._calls += 1
        if self.ends is None:
            self.ends = time.monotonic() + self.seconds
        elif (now or self._calls % CHECK_EVERY == 0) and time.monotonic() > self.ends:
            raise BudgetExceeded(self.seconds)


_CURRENT: ContextVar[Deadline | None] = ContextVar("mcp_governance_work_budget", default=None)


def checkpoint() -> None:
    """Raise :class:`BudgetExceeded` when the current request is past its deadline."""
    deadline = _CURRENT.get()
    if deadline is not None:
        deadline.check()


def seconds_left(limit: float) -> float:
    """``limit``, or less when the request's budget ends sooner; raises when it has ended."""
    deadline = _CURRENT.get()
    if deadline is None:
        return limit
    deadline.check(now=True)
    return min(limit, max(deadline.left(), 0.001))


@contextmanager
def budget(seconds: float | None) -> Iterator[Deadline | None]:
    """Run the body under a work budget of ``seconds`` (None: no budget)."""
    deadline = Deadline(seconds) if seconds is not None else None
    token = _CURRENT.set(deadline)
    try:
        yield deadline
    finally:
        _CURRENT.reset(token)
