"""Entity tags and the conditional headers that name them (RFC 9110, section 13.1):
``If-Match`` (strong comparison) and ``If-None-Match`` (weak comparison), each either ``*``
or a comma-separated list of tags, quoted and optionally weak (``W/"..."``). A lock's tag is
its integrity digest; an unquoted digest is read as its tag too (older clients sent one)."""

from __future__ import annotations

import re

_TAG = re.compile(r'\s*(W/)?"([^"]*)"\s*|\s*([^",\s][^",]*?)\s*')


def parse(header: str) -> list[tuple[bool, str]] | None:
    """The (weak, opaque-tag) pairs of a header; None for ``*``."""
    if header.strip() == "*":
        return None
    tags: list[tuple[bool, str]] = []
    for part in header.split(","):
        match = _TAG.fullmatch(part)
        if match is None or not part.strip():
            continue
        if match.group(2) is not None:
            tags.append((match.group(1) is not None, match.group(2)))
        elif match.group(3) is not None and match.group(3) != "*":
            tags.append((False, match.group(3)))
    return tags


def if_match(header: str, current: str | None) -> bool:
    """Whether ``If-Match: header`` lets a write on a resource whose tag is ``current``
    (None: no such resource) go ahead: ``*`` needs one; a list needs a strong tag equal to it."""
    tags = parse(header)
    if tags is None:
        return current is not None
    return current is not None and any(not weak and tag == current for weak, tag in tags)


def if_none_match(header: str, current: str | None) -> bool:
    """Whether ``If-None-Match: header`` lets a request go ahead: ``*`` needs no resource; a
    list needs no tag equal to ``current``, weak or strong. False means 412 for a write and
    304 for a read."""
    tags = parse(header)
    if tags is None:
        return current is None
    return current is None or all(tag != current for _, tag in tags)


def quoted(digest: str) -> str:
    """The ``ETag`` header value of a digest."""
    return f'"{digest}"'
