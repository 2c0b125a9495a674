"""Keywords that constrain no value: ``default``, ``deprecated`` and the annotation keywords."""

from __future__ import annotations

from app.diff.describe import value_label
from app.diff.schema.effective import ANNOTATION_KEYWORDS, value_key
from app.diff.schema.kinds import Effect, Kind, maps
from app.diff.schema.walk import Pair, SchemaComparer, check

# An input default is applied by the server to omitted arguments (RISKY); an output default
# is applied by nobody: the server writes the value.
maps(Kind.DEFAULT_CHANGED, Effect.NEUTRAL, input="input.default.changed", output="output.default.changed")
maps(Kind.DEPRECATED_ADDED, Effect.COSMETIC, input="input.deprecated.added", output="output.deprecated.changed")
# No row grades un-deprecating an argument: unclassified (RISKY), never SAFE by default.
maps(Kind.DEPRECATED_REMOVED, Effect.COSMETIC, input="input.unclassified", output="output.deprecated.changed")
maps(Kind.DESCRIPTION_CHANGED, Effect.COSMETIC, input="input.description.changed",
     output="output.description.changed")
maps(Kind.UNCLASSIFIED, Effect.UNKNOWN, input="input.unclassified", output="output.unclassified")


@check("default")
def check_default(cmp: SchemaComparer, pair: Pair, depth: int) -> None:
    b, a = pair.before.schema, pair.after.schema
    if ("default" in b) == ("default" in a) and value_key(b.get("default")) == value_key(a.get("default")):
        return
    node = pair.after if "default" in a else pair.before
    cmp.emit(Kind.DEFAULT_CHANGED, pair, node.at("default"),
             value_label(b["default"]) if "default" in b else "no default",
             value_label(a["default"]) if "default" in a else "no default", keyword="default")


@check("deprecated")
def check_deprecated(cmp: SchemaComparer, pair: Pair, depth: int) -> None:
    b, a = bool(pair.before.schema.get("deprecated")), bool(pair.after.schema.get("deprecated"))
    if b != a:
        node = pair.after if "deprecated" in pair.after.schema else pair.before
        cmp.emit(Kind.DEPRECATED_ADDED if a else Kind.DEPRECATED_REMOVED, pair, node.at("deprecated"),
                 str(b).lower(), str(a).lower(), keyword="deprecated", detail="deprecated removed")


@check(*ANNOTATION_KEYWORDS)
def check_annotations(cmp: SchemaComparer, pair: Pair, depth: int) -> None:
    b, a = pair.before.schema, pair.after.schema
    for keyword in ANNOTATION_KEYWORDS:
        if keyword in b or keyword in a:
            if keyword in b and keyword in a and value_key(b[keyword]) == value_key(a[keyword]):
                continue
            node = pair.after if keyword in a else pair.before
            cmp.emit(Kind.DESCRIPTION_CHANGED, pair, node.at(keyword),
                     value_label(b[keyword]) if keyword in b else None,
                     value_label(a[keyword]) if keyword in a else None, keyword=keyword)
