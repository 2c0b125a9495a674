"""The schema side of ContractDiff: effective schemas (``effective``), the shared walk
(``walk``), the typed kinds of change and their mappings (``kinds``), one check module
per keyword family (``checks/``), values for schemas (``instances``) and witnesses
(``witness``)."""

from app.diff.schema import checks as _checks  # noqa: F401 - registers every check and mapping
from app.diff.schema.effective import Node, make_node, resolve
from app.diff.schema.kinds import MAPPINGS, Effect, Kind, effect, resolve_rule
from app.diff.schema.walk import Pair, SchemaComparer

__all__ = ["MAPPINGS", "Effect", "Kind", "Node", "Pair", "SchemaComparer", "effect", "make_node", "resolve",
           "resolve_rule"]
