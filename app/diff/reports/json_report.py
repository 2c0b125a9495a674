"""``json``: the documented ContractDiff shape (DESIGN.md), for dashboards and scripts."""

from __future__ import annotations

import json

from app.diff.model import DiffResult


def render_json(result: DiffResult) -> str:
    """Exactly :meth:`DiffResult.to_json`, 2-space indent, UTF-8 text kept as is, newline-terminated."""
    return json.dumps(result.to_json(), indent=2, ensure_ascii=False) + "\n"
