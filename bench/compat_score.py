"""ContractDiff against the schema-compatibility dataset in tests/data/compat.

Each pair there is an (old, new) JSON Schema with the answer a careful JSON Schema 2020-12 reader gives
for MCP tool arguments: ``breaking`` (some argument the old schema accepted is refused by the new one,
with that argument as the witness) or ``compatible`` (the new schema accepts everything the old one did).
This script diffs every pair as the inputSchema of a one-tool surface and reports how often the engine
agrees:

* breaking recall: the share of breaking pairs that get a BREAKING delta;
* false alarm rate: the share of compatible pairs that get a BREAKING delta;

overall, by category and by source file, plus (informational) the same for output schemas, where the
direction flips. Pairs whose only witness sends a property the old schema never declared (an open
object took it) are also counted apart, since RULES.md grades some of those changes RISKY on purpose.

Run from the repository root::

    python bench/compat_score.py            # the tables
    python bench/compat_score.py --json     # the same numbers, machine-readable
    python bench/compat_score.py --misses   # also list every pair the engine gets wrong
    python bench/compat_score.py --update-known-failures
        # rewrite tests/data/compat/known_failures.json from today's misses, keeping each kept id's
        # class (new misses get the class "unclassified": give them one)
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from app import load_surface  # noqa: E402
from app.diff import diff  # noqa: E402

JSON = Any
DATA = ROOT / "tests" / "data" / "compat"
KNOWN_FAILURES = DATA / "known_failures.json"


def load_pairs() -> list[dict[str, JSON]]:
    """Every pair of every ``pairs-*.json`` file, each with the file's name under ``"file"``."""
    pairs = []
    for path in sorted(DATA.glob("pairs-*.json")):
        for pair in json.loads(path.read_text(encoding="utf-8"))["pairs"]:
            pairs.append({**pair, "file": path.name})
    return pairs


def surface(schema: JSON, direction: str) -> JSON:
    tool: dict[str, JSON] = {"name": "t", "inputSchema": schema}
    if direction == "output":
        tool = {"name": "t", "inputSchema": {"type": "object"}, "outputSchema": schema}
    return {"tools": [tool]}


def engine_answer(pair: dict[str, JSON], direction: str = "input") -> tuple[str, list[str]]:
    """The engine's grade of a pair: ``"breaking"`` (a BREAKING delta), ``"risky"`` (RISKY but no
    BREAKING), or ``"none"``; with the rule ids of the BREAKING (else RISKY) deltas."""
    result = diff(load_surface(surface(pair["before"], direction)), load_surface(surface(pair["after"], direction)))
    breaking = sorted({d.rule for d in result.deltas if d.severity.value == "BREAKING"})
    if breaking:
        return "breaking", breaking
    risky = sorted({d.rule for d in result.deltas if d.severity.value == "RISKY"})
    return ("risky", risky) if risky else ("none", [])


class Tally:
    def __init__(self) -> None:
        self.breaking = 0
        self.caught = 0
        self.flagged = 0  # breaking pairs graded RISKY
        self.compatible = 0
        self.false_alarms = 0

    def add(self, truth: str, answer: str) -> None:
        if truth == "breaking":
            self.breaking += 1
            self.caught += answer == "breaking"
            self.flagged += answer == "risky"
        else:
            self.compatible += 1
            self.false_alarms += answer == "breaking"

    def row(self) -> dict[str, JSON]:
        return {
            "breaking": self.breaking,
            "caught": self.caught,
            "recall": round(self.caught / self.breaking, 3) if self.breaking else None,
            "graded_risky": self.flagged,
            "compatible": self.compatible,
            "false_alarms": self.false_alarms,
            "false_alarm_rate": round(self.false_alarms / self.compatible, 3) if self.compatible else None,
        }


def score(pairs: list[dict[str, JSON]]) -> dict[str, JSON]:
    overall, declared = Tally(), Tally()
    by_category: dict[str, Tally] = defaultdict(Tally)
    by_file: dict[str, Tally] = defaultdict(Tally)
    output = Tally()
    misses = []
    for pair in pairs:
        answer, rules = engine_answer(pair)
        truth = pair["input"]
        for tally in (overall, by_category[pair["category"]], by_file[pair["file"]]):
            tally.add(truth, answer)
        if not pair.get("witness_undeclared"):
            declared.add(truth, answer)
        if (truth == "breaking") != (answer == "breaking"):
            misses.append({"id": pair["id"], "category": pair["category"], "truth": truth, "engine": answer,
                           "rules": rules})
        if "output" in pair:
            output.add(pair["output"], engine_answer(pair, "output")[0])
    return {
        "pairs": len(pairs),
        "input": overall.row(),
        "input_declared_witnesses_only": declared.row(),
        "by_category": {name: tally.row() for name, tally in sorted(by_category.items())},
        "by_file": {name: tally.row() for name, tally in sorted(by_file.items())},
        "output": output.row(),
        "misses": misses,
    }


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:5.1f}%"


def print_table(result: dict[str, JSON], misses: bool) -> None:
    def line(name: str, row: dict[str, JSON]) -> None:
        print(f"{name:38} {row['caught']:>4}/{row['breaking']:<4} {_pct(row['recall']):>7}  "
              f"{row['graded_risky']:>5}   {row['false_alarms']:>4}/{row['compatible']:<4} "
              f"{_pct(row['false_alarm_rate']):>7}")

    print(f"ContractDiff on {result['pairs']} schema pairs (tests/data/compat)\n")
    print(f"{'':38} {'breaking caught':>16}  {'RISKY':>5}   {'false alarms':>16}")
    line("input (all pairs)", result["input"])
    line("input (witness sends declared props)", result["input_declared_witnesses_only"])
    line("output (pairs with an output answer)", result["output"])
    print("\nby category")
    for name, row in result["by_category"].items():
        line("  " + name, row)
    print("\nby source file")
    for name, row in result["by_file"].items():
        line("  " + name, row)
    if misses:
        print("\nmisses (input)")
        for miss in result["misses"]:
            print(f"  {miss['id']:70} {miss['truth']:10} engine={miss['engine']:8} {','.join(miss['rules'])}")


def update_known_failures(misses: list[dict[str, JSON]]) -> None:
    doc = json.loads(KNOWN_FAILURES.read_text(encoding="utf-8"))
    old = doc["failures"]
    doc["failures"] = {
        miss["id"]: {"class": old.get(miss["id"], {}).get("class", "unclassified"), "truth": miss["truth"],
                     "engine": miss["engine"], "rules": miss["rules"]}
        for miss in misses
    }
    KNOWN_FAILURES.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    fixed = sorted(old.keys() - doc["failures"].keys())
    new = sorted(doc["failures"].keys() - old.keys())
    print(f"{KNOWN_FAILURES.relative_to(ROOT)}: {len(doc['failures'])} failures "
          f"({len(fixed)} fixed, {len(new)} new{': ' + ', '.join(new) if new else ''})")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print the numbers as JSON")
    parser.add_argument("--misses", action="store_true", help="list every pair the engine gets wrong")
    parser.add_argument("--update-known-failures", action="store_true",
                        help="rewrite tests/data/compat/known_failures.json from today's misses")
    args = parser.parse_args(argv)
    result = score(load_pairs())
    if args.update_known_failures:
        update_known_failures(result["misses"])
        return 0
    if args.json:
        if not args.misses:
            result = {k: v for k, v in result.items() if k != "misses"}
        print(json.dumps(result, indent=2))
    else:
        print_table(result, args.misses)
    return 0


if __name__ == "__main__":
    sys.exit(main())
