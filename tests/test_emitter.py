"""The emitter reports a delta once (issue 9, item 11): the same delta emitted twice by two
paths of the engine (a shared ``$ref`` target seen from two places, a probe and a walk) is one
delta; a different one is kept. Effects that disappear if the de-duplication is removed."""

from __future__ import annotations

from app.diff.emitter import Emitter, Scope


def _delta(out: Emitter, path: str) -> object:
    return out.make("tool.description.changed", Scope(tool="t"), field="description", path=path,
                    before="a", after="b")


def test_the_same_delta_twice_is_reported_once() -> None:
    out = Emitter()
    first, again, other = _delta(out, "/tools/t/description"), _delta(out, "/tools/t/description"), \
        _delta(out, "/tools/t/title")
    out.add(first)  # type: ignore[arg-type]
    out.add(again)  # type: ignore[arg-type]
    out.extend([again, other, other])  # type: ignore[list-item]
    assert [d.path for d in out.deltas] == ["/tools/t/description", "/tools/t/title"]
