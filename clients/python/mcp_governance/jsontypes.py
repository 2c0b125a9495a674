"""The one JSON type: any JSON value.

``Any`` rather than a recursive union: parsed documents are walked with ``isinstance``
where it matters, and a recursive alias would make every subscript of a parsed document a
type error. Standard library only, so every module can import it.
"""

from typing import Any, TypeAlias

JSON: TypeAlias = Any
"""Any JSON value: ``dict[str, JSON]``, ``list[JSON]``, ``str``, ``int``, ``float``, ``bool`` or ``None``."""
