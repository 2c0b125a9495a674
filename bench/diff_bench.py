"""ContractDiff benchmark: our diff against a hand-scripted DeepDiff, measured in the same run.

Absolute times depend on the machine and on whatever else it runs, so the targets are
ratios against a baseline measured in the same process, with the samples interleaved
(round by round) so that both sides see the same background load:

* our full diff at least 20x faster than ``DeepDiff(before, after, ignore_order=True)`` on the
  same two JSON documents (what a user would script by hand). "Our full diff" is
  ``diff(before, after)`` on the two surfaces as read (``load_surface``), every digest
  computed from scratch inside the call: the diff, in full, as the unchanged check is
  the diff on its fast path. Reading the inputs (which validates them as untrusted input:
  depth, NaN, lone surrogates, dangling ``$ref``, ..., none of which DeepDiff does) is timed
  separately and reported beside it, with its own ratio;
* the unchanged-surface check under 1 ms (digests known, as the service keeps them);
* at 50, 500, 2,000 and 5,000 tools (5% of them changed, one removed, one added; small sizes
  on several seeded surfaces, at least 500 tools in all): our full diff per tool at most 2.5x
  "the limit" per tool - reading both documents (``json.loads`` of their bytes) and hashing
  them canonically (sorted-key JSON, sha256), the least any digest-based differ does -
  measured in the same rounds; and the unchanged check under 50 µs at every size (it must
  not grow with the surface).

Every sample records wall time (``time.perf_counter``, what the targets use) and this
process's CPU time (``time.process_time``): CPU far below wall means the machine was busy.

Run from the repository root::

    python bench/diff_bench.py                 # a human table
    python bench/diff_bench.py --json          # the same numbers, machine-readable
    python bench/diff_bench.py --profile 25    # plus the top of a cProfile of our diff

Exit status 0 when every target and sanity check passes, 1 otherwise. bench/README.md says
what each number means and records the numbers measured so far.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import hashlib
import io
import json
import os
import platform
import pstats
import random
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make ``bench`` and ``app`` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import deepdiff
from deepdiff import DeepDiff

from app.diff.engine import diff
from app.diff.model import DiffResult, Severity
from app.ingest.load import load_surface
from app.jsonio import canonical_json
from app.jsontypes import JSON
from app.model import Surface
from bench.synthetic import mutate, surface_size, synthetic_surface

Pair = tuple[Surface, Surface]

DEEPDIFF_SPEEDUP_TARGET = 20.0
UNCHANGED_TARGET_S = 1e-3
SCALE_SIZES = (50, 500, 2000, 5000)
SCALE_RATIO_TARGET = 2.5
"""Our full diff per tool / the limit per tool, at every size."""
SCALE_UNCHANGED_TARGET_S = 50e-6
CHANGED_SHARE = 20
"""One tool in this many is changed at each size (5%), plus one removed and one added."""
HEADLINE = "ours_digest_diff"
END_TO_END = "ours_end_to_end"


# --- timing -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    """One thing to time: ``run(prepare())``. ``prepare`` is never timed, so each sample can start
    from fresh objects; ``inner`` calls per sample (on the same prepared value) time calls too
    short for one clock reading."""

    key: str
    label: str
    run: Callable[[Any], object]
    prepare: Callable[[], Any]
    repeat: int
    inner: int = 1
    note: str = ""


@dataclass
class Timing:
    """The samples of one case, in seconds per call: wall clock and this process's CPU."""

    case: Case
    wall: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)

    @property
    def median(self) -> float:
        return statistics.median(self.wall)

    @property
    def median_cpu(self) -> float:
        return statistics.median(self.cpu)

    def to_json(self) -> dict[str, JSON]:
        return {"label": self.case.label.strip(), "median_s": self.median, "min_s": min(self.wall),
                "max_s": max(self.wall), "median_cpu_s": self.median_cpu, "runs": len(self.wall),
                "calls_per_run": self.case.inner, "samples_s": self.wall, "samples_cpu_s": self.cpu,
                "note": self.case.note}


def take_sample(case: Case, timing: Timing) -> None:
    """One sample. gc is off while timing, so a collection triggered by earlier garbage is not
    billed to the code under test (each sample starts after a full collection)."""
    prepared = case.prepare()
    gc.collect()
    gc.disable()
    try:
        wall, cpu = time.perf_counter(), time.process_time()
        for _ in range(case.inner):
            case.run(prepared)
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    finally:
        gc.enable()
    timing.wall.append(wall / case.inner)
    timing.cpu.append(cpu / case.inner)


def _due(round_: int, repeat: int, rounds: int) -> bool:
    """Whether a case with ``repeat`` samples takes one in this round: spread evenly over all rounds."""
    return (round_ + 1) * repeat // rounds > round_ * repeat // rounds


def run_cases(cases: list[Case]) -> dict[str, Timing]:
    """Every case warmed up once, then sampled round by round, interleaved with the others, so a
    burst of background load hits all of them rather than one."""
    timings = {case.key: Timing(case) for case in cases}
    for case in cases:
        case.run(case.prepare())
    rounds = max(case.repeat for case in cases)
    for round_ in range(rounds):
        for case in cases:
            if _due(round_, case.repeat, rounds):
                take_sample(case, timings[case.key])
    return timings


# --- the cases ------------------------------------------------------------------------------


@dataclass
class Inputs:
    """The two documents, as dicts and as the bytes a CI job would read from files."""

    before: JSON
    after: JSON
    before_bytes: bytes
    after_bytes: bytes
    changes: list[tuple[str, str]] = field(default_factory=list)


def build_inputs(seed: int, tools: int, changed: int) -> Inputs:
    before = synthetic_surface(seed, tools)
    changes: list[tuple[str, str]] = []
    after = mutate(before, random.Random(seed + 1), changed, changes)
    return Inputs(before, after, json.dumps(before, indent=2).encode(), json.dumps(after, indent=2).encode(),
                  changes)


def clear_app_caches() -> None:
    """Empty every module-level ``functools`` cache of the app (e.g. a per-surface cue finder): a CI
    job runs one diff per process, so each sample must pay for what a first diff pays for."""
    for name, module in list(sys.modules.items()):
        if name == "app" or name.startswith("app."):
            for value in list(vars(module).values()):
                if callable(getattr(value, "cache_clear", None)) and getattr(value, "__module__", None) == name:
                    value.cache_clear()


def cold(prepare: Callable[[], Any]) -> Callable[[], Any]:
    """``prepare``, after emptying the app's caches (outside the timed region)."""
    def run() -> Any:
        clear_app_caches()
        return prepare()

    return run


def fresh_pair(before: JSON, after: JSON) -> Pair:
    """New Surface objects: no digest computed yet (digests are cached per object)."""
    return load_surface(before), load_surface(after)


def digested_pair(before: JSON, after: JSON) -> Pair:
    """New Surface objects whose tool and server digests are already computed."""
    pair = fresh_pair(before, after)
    touch_digests(pair)
    return pair


def touch_digests(pair: Pair) -> None:
    for surface in pair:
        _ = surface.integrity_digest


def diff_pair(pair: Pair) -> DiffResult:
    return diff(*pair)


def our_cases(inputs: Inputs, repeat: int) -> list[Case]:
    """Our diff, whole and in phases; every sample starts from objects with no cached digest."""
    b, a = inputs.before, inputs.after
    nothing = cold(lambda: None)
    return [
        Case(END_TO_END, "ours: end to end from parsed JSON (load x2 + digest + diff)",
             lambda _: diff(load_surface(b), load_surface(a)), nothing, repeat,
             note="plus validating both inputs as untrusted"),
        Case("ours_from_bytes", "ours: end to end from JSON bytes (json parse + the above)",
             lambda _: diff(load_surface(inputs.before_bytes), load_surface(inputs.after_bytes)), nothing,
             repeat, note="what diffing two files costs"),
        Case("ours_load", "  phase: load_surface x2 (validate + build model)",
             lambda _: fresh_pair(b, a), nothing, repeat),
        Case("ours_digest", f"  phase: digest both surfaces from scratch ({len(b['tools']) + len(a['tools'])} tools)",
             touch_digests, cold(lambda: fresh_pair(b, a)), repeat),
        Case("ours_compare", "  phase: diff with digests already known (compare only)",
             diff_pair, cold(lambda: digested_pair(b, a)), repeat),
        Case(HEADLINE, "ours: full diff of two loaded surfaces, digests from scratch",
             diff_pair, cold(lambda: fresh_pair(b, a)), repeat,
             note="headline: diff(before, after); the 20x target applies to this"),
    ]


def deepdiff_case(inputs: Inputs, repeat: int, results: list[DeepDiff]) -> Case:
    """The baseline; its last result is kept in ``results`` for the sanity check."""
    def run(_: None) -> None:
        results[:] = [DeepDiff(inputs.before, inputs.after, ignore_order=True)]

    return Case("deepdiff", "DeepDiff(before, after, ignore_order=True), same dicts", run, lambda: None, repeat,
                note="baseline: what a user would script by hand")


def unchanged_cases(inputs: Inputs, repeat: int, loops: int) -> list[Case]:
    """The O(1) fast path on known digests, and what those digests cost to compute."""
    b = inputs.before
    return [
        Case("unchanged_cached", "unchanged check: diff(a, a2), digests known",
             diff_pair, lambda: digested_pair(b, b), repeat, inner=loops,
             note=f"target < 1 ms; {loops} calls per run"),
        Case("server_digest", f"  one {len(b['tools'])}-tool server digest from scratch",
             lambda surface: surface.integrity_digest, cold(lambda: load_surface(b)), repeat,
             note="paid at lock time and once per live surface"),
        Case("unchanged_fresh", "  unchanged check, both digests from scratch",
             diff_pair, cold(lambda: fresh_pair(b, b)), repeat, note="for reference, not the target"),
    ]


# --- scaling: the diff per tool against the limit, and the unchanged check, at several sizes -----


SCALE_MIN_TOOLS = 500
"""Each size is measured on enough seeded surfaces to hold this many tools (10 at 50 tools, one
from 500 on): a small diff's cost depends on which few tools the change happened to touch (one
large new tool is a tenth of the work at 50 tools), so one surface would measure the draw."""


def scale_inputs(seed: int, size: int, base: Inputs | None = None) -> list[Inputs]:
    """The pairs of one size: the benchmark's own pair first when it has this size, then more
    seeds (``seed``, ``seed + 1``, ...) until :data:`SCALE_MIN_TOOLS` tools are covered."""
    count = max(1, -(-SCALE_MIN_TOOLS // size))
    pairs = [base] if base is not None else []
    extra = 0
    while len(pairs) < count:
        pairs.append(build_inputs(seed + extra, size, max(1, size // CHANGED_SHARE)))
        extra += 1
    return pairs


def limit(pairs: list[Inputs]) -> None:
    """The least a digest-based diff of two documents does: read both and hash them canonically."""
    for inputs in pairs:
        for raw in (inputs.before_bytes, inputs.after_bytes):
            hashlib.sha256(canonical_json(json.loads(raw)).encode("utf-8")).digest()


def diff_all(prepared: list[Pair]) -> None:
    for pair in prepared:
        diff(*pair)


def scale_cases(pairs: list[Inputs], size: int, repeat: int, loops: int) -> list[Case]:
    """Three cases per size: the limit, our full diff (as the headline) of every pair, the
    unchanged check (on the first surface)."""
    first = pairs[0]
    label = f"{size:>5} tools" + (f" (x{len(pairs)} surfaces)" if len(pairs) > 1 else "")
    return [
        Case(f"limit_{size}", f"  {label}: the limit (read both documents, hash canonically)",
             lambda _: limit(pairs), lambda: None, repeat),
        Case(f"diff_{size}", f"  {label}: our full diff, digests from scratch",
             diff_all, cold(lambda: [fresh_pair(p.before, p.after) for p in pairs]), repeat),
        Case(f"unchanged_{size}", f"  {size:>5} tools: unchanged check, digests known",
             diff_pair, lambda: digested_pair(first.before, first.before), repeat, inner=loops),
    ]


def scale_report(timings: dict[str, Timing], sizes: dict[int, int]) -> list[dict[str, JSON]]:
    """Per size (and how many surfaces were diffed): per-tool times, their ratio, the unchanged check."""
    rows: list[dict[str, JSON]] = []
    for size, surfaces in sizes.items():
        ours, bound, unchanged = timings[f"diff_{size}"], timings[f"limit_{size}"], timings[f"unchanged_{size}"]
        tools = size * surfaces
        rows.append({"tools": size, "surfaces": surfaces, "diff_per_tool_s": ours.median / tools,
                     "limit_per_tool_s": bound.median / tools, "ratio": ours.median / bound.median,
                     "ratio_cpu": ours.median_cpu / bound.median_cpu, "unchanged_s": unchanged.median})
    return rows


def scale_targets(rows: list[dict[str, JSON]]) -> list[dict[str, JSON]]:
    if not rows:
        return []
    worst = max(rows, key=lambda row: row["ratio"])
    slowest = max(rows, key=lambda row: row["unchanged_s"])
    return [
        {"target": f"our full diff / the limit <= {SCALE_RATIO_TARGET} at every size (wall medians; worst at "
                   f"{worst['tools']} tools)", "value": worst["ratio"], "unit": "x",
         "pass": all(row["ratio"] <= SCALE_RATIO_TARGET for row in rows)},
        {"target": f"unchanged check < 50 µs at every size (slowest at {slowest['tools']} tools)",
         "value": slowest["unchanged_s"] * 1e6, "unit": "µs",
         "pass": all(row["unchanged_s"] < SCALE_UNCHANGED_TARGET_S for row in rows)},
    ]


# --- room for more ----------------------------------------------------------------------------

EXTRA_CASES: list[Callable[[Inputs, int], list[Case]]] = []
"""More cases measured in the same rounds as the headline, on the 500-tool inputs (for example
the cost of building witnesses, next to ``HEADLINE``): each factory gets the inputs and the
repeat count and returns cases; their timings appear in the table and the JSON."""
EXTRA_TARGETS: list[Callable[[dict[str, Timing]], list[dict[str, JSON]]]] = []
"""Targets over those timings (same shape as :func:`targets`): e.g. "witness building <= 20% of
the diff time". They count towards the exit status like every other target."""


# --- checks and report ---------------------------------------------------------------------


def sanity(inputs: Inputs, result: DiffResult, deepdiff_items: int) -> dict[str, bool]:
    """The benchmark only means something if both sides actually found the changes."""
    touched = {tool for tool, _ in inputs.changes}
    reported = set(result.tools.changed) | set(result.tools.added) | set(result.tools.removed)
    changed_tools = len(touched) - 2  # one removed and one added tool beside the changed ones
    return {
        "every changed, added and removed tool reported": touched <= reported,
        f"at least {changed_tools} deltas": len(result.deltas) >= changed_tools,
        "several BREAKING deltas": result.summary[Severity.BREAKING.value] >= 3,
        "unchanged surface gives no delta": not diff(*digested_pair(inputs.before, inputs.before)).deltas,
        "DeepDiff found differences": deepdiff_items > 0,
    }


def targets(timings: dict[str, Timing]) -> list[dict[str, JSON]]:
    speedup = timings["deepdiff"].median / timings[HEADLINE].median
    unchanged = timings["unchanged_cached"].median
    return [
        {"target": "DeepDiff / our full diff >= 20x (wall medians)", "value": speedup, "unit": "x",
         "pass": speedup >= DEEPDIFF_SPEEDUP_TARGET},
        {"target": "unchanged check < 1 ms (wall median)", "value": unchanged * 1e3, "unit": "ms",
         "headroom_x": UNCHANGED_TARGET_S / unchanged, "pass": unchanged < UNCHANGED_TARGET_S},
    ]


def other_ratios(timings: dict[str, Timing]) -> dict[str, float]:
    deep = timings["deepdiff"]
    return {
        "deepdiff / our full diff, CPU medians": deep.median_cpu / timings[HEADLINE].median_cpu,
        "deepdiff / ours end to end from parsed JSON (incl. input validation)":
            deep.median / timings[END_TO_END].median,
        "deepdiff / ours end to end from bytes": deep.median / timings["ours_from_bytes"].median,
        "deepdiff / ours compare only (digests known)": deep.median / timings["ours_compare"].median,
        "unchanged check from scratch / 1 ms": timings["unchanged_fresh"].median / UNCHANGED_TARGET_S,
    }


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def machine() -> dict[str, JSON]:
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    return {
        "date": datetime.now(UTC).replace(microsecond=0).isoformat(),
        "cpu": _cpu_model(),
        "cpus": os.cpu_count(),
        "load_average_1min": load,
        "platform": platform.platform(),
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "deepdiff": deepdiff.__version__,
    }


def _fmt(seconds: float) -> str:
    if seconds >= 1:
        return f"{seconds:.2f} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.1f} ms"
    return f"{seconds * 1e6:.1f} µs"


def print_scale(rows: list[dict[str, JSON]]) -> None:
    if not rows:
        return
    print("\nper tool, by size (same rounds; the limit = read both documents + hash them canonically):")
    print(f"  {'tools':>5}  {'surfaces':>8}  {'our diff/tool':>13}  {'limit/tool':>10}  {'ratio':>6}  "
          f"{'ratio CPU':>9}  {'unchanged check':>15}")
    for row in rows:
        print(f"  {row['tools']:>5}  {row['surfaces']:>8}  {_fmt(row['diff_per_tool_s']):>13}  "
              f"{_fmt(row['limit_per_tool_s']):>10}  {row['ratio']:>5.2f}x  {row['ratio_cpu']:>8.2f}x  "
              f"{_fmt(row['unchanged_s']):>15}")


def print_table(report: dict[str, JSON], timings: dict[str, Timing]) -> None:
    info, surface = report["machine"], report["surface"]
    print(f"mcp-governance diff benchmark, {info['date']}")
    load = info["load_average_1min"]
    busy = f", load {load:.2f} at the end" if load is not None else ""
    print(f"  {info['cpu']} ({info['cpus']} CPUs{busy}), "
          f"{info['python']}, deepdiff {info['deepdiff']}, {info['platform']}")
    print(f"  surface: seed {surface['seed']}, {surface['tools']} tools, {surface['bytes_before']:,} bytes "
          f"(json.dumps indent=2); variant: {surface['changed']} tools changed in {surface['changes']} ways, "
          f"1 removed, 1 added\n")
    width = max(len(t.case.label) for t in timings.values())
    print(f"{'measurement':<{width}}  {'median':>9}  {'min':>9}  {'CPU med.':>9}  runs")
    for timing in timings.values():
        print(f"{timing.case.label:<{width}}  {_fmt(timing.median):>9}  {_fmt(min(timing.wall)):>9}  "
              f"{_fmt(timing.median_cpu):>9}  {len(timing.wall):>4}"
              + (f"   {timing.case.note}" if timing.case.note else ""))
    deltas = report["deltas"]
    print(f"\ndeltas found: {deltas['total']} ("
          + ", ".join(f"{name} {count}" for name, count in deltas["by_severity"].items())
          + f"); tools changed {deltas['tools_changed']}, added {deltas['tools_added']}, "
            f"removed {deltas['tools_removed']}; DeepDiff reported {report['deepdiff_items']} items")
    print("\nother ratios (same run):")
    for name, value in report["other_ratios"].items():
        print(f"  {name}: {value:.1f}x")
    print_scale(report["scale"])
    print("\ntargets:")
    for target in report["targets"]:
        extra = f" ({target['headroom_x']:.0f}x headroom)" if "headroom_x" in target else ""
        print(f"  {'PASS' if target['pass'] else 'FAIL'}  {target['target']}: "
              f"{target['value']:.3g} {target['unit']}{extra}")
    print("\nsanity:")
    for check, ok in report["sanity"].items():
        print(f"  {'ok  ' if ok else 'FAIL'}  {check}")


def profile_headline(inputs: Inputs, top: int) -> str:
    """cProfile of one end-to-end diff, top functions by own time: where our time goes."""
    profiler = cProfile.Profile()
    profiler.enable()
    diff(load_surface(inputs.before), load_surface(inputs.after))
    profiler.disable()
    out = io.StringIO()
    pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(top)
    return out.getvalue()


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=7, help="synthetic surface seed (default 7)")
    parser.add_argument("--tools", type=int, default=500, help="tools in the surface (default 500)")
    parser.add_argument("--changed", type=int, default=25, help="tools changed in the variant (default 25)")
    parser.add_argument("--repeat", type=int, default=7, help="samples of each of our measurements (default 7)")
    parser.add_argument("--deepdiff-repeat", type=int, default=3, help="samples of DeepDiff (default 3; slow)")
    parser.add_argument("--unchanged-loops", type=int, default=1000,
                        help="calls per sample of the unchanged check (default 1000)")
    parser.add_argument("--sizes", default=",".join(map(str, SCALE_SIZES)),
                        help="tool counts of the scaling table, comma-separated (default 50,500,2000,5000; "
                             "'none' to skip it)")
    parser.add_argument("--scale-repeat", type=int, default=5,
                        help="samples of each scaling case (default 5)")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    parser.add_argument("--profile", type=int, metavar="N", default=0,
                        help="also print the top N functions of a cProfile of our end-to-end diff")
    args = parser.parse_args(argv)
    if min(args.repeat, args.deepdiff_repeat, args.unchanged_loops, args.scale_repeat) < 1:
        parser.error("--repeat, --deepdiff-repeat, --unchanged-loops and --scale-repeat must be at least 1")
    try:
        args.sizes = () if args.sizes == "none" else tuple(int(size) for size in args.sizes.split(","))
    except ValueError:
        parser.error(f"--sizes: not a comma-separated list of numbers: {args.sizes!r}")
    if any(size < CHANGED_SHARE * 2 for size in args.sizes):
        parser.error(f"--sizes: at least {CHANGED_SHARE * 2} tools each")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    inputs = build_inputs(args.seed, args.tools, args.changed)
    deepdiff_results: list[DeepDiff] = []
    cases = [*our_cases(inputs, args.repeat), deepdiff_case(inputs, args.deepdiff_repeat, deepdiff_results),
             *unchanged_cases(inputs, args.repeat, args.unchanged_loops)]
    for factory in EXTRA_CASES:
        cases += factory(inputs, args.repeat)
    print(f"measuring {len(cases)} cases, interleaved; DeepDiff takes a few seconds per run ...", file=sys.stderr)
    timings = run_cases(cases)
    scale: list[Case] = []
    surfaces: dict[int, int] = {}
    for size in args.sizes:
        pairs = scale_inputs(args.seed, size, inputs if size == args.tools else None)
        surfaces[size] = len(pairs)
        scale += scale_cases(pairs, size, args.scale_repeat, max(1, args.unchanged_loops // 10))
    if scale:
        print(f"measuring {len(scale)} scaling cases at {', '.join(map(str, args.sizes))} tools, interleaved ...",
              file=sys.stderr)
        timings.update(run_cases(scale))
    rows = scale_report(timings, surfaces)

    result = diff(load_surface(inputs.before), load_surface(inputs.after))
    deepdiff_items = sum(len(items) for items in deepdiff_results[0].values())
    report: dict[str, JSON] = {
        "machine": machine(),
        "surface": {"seed": args.seed, "tools": args.tools, "changed": args.changed,
                    "changes": len(inputs.changes) - 2, "bytes_before": surface_size(inputs.before),
                    "bytes_after": surface_size(inputs.after)},
        "timings": {key: timing.to_json() for key, timing in timings.items()},
        "deltas": {"total": len(result.deltas), "by_severity": result.summary,
                   "tools_changed": len(result.tools.changed), "tools_added": len(result.tools.added),
                   "tools_removed": len(result.tools.removed)},
        "deepdiff_items": deepdiff_items,
        "scale": rows,
        "targets": [*targets(timings), *scale_targets(rows), *(t for extra in EXTRA_TARGETS for t in extra(timings))],
        "other_ratios": other_ratios(timings),
        "sanity": sanity(inputs, result, deepdiff_items),
    }
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print_table(report, timings)
    if args.profile:
        print(profile_headline(inputs, args.profile), file=sys.stderr if args.json else sys.stdout)
    passed = all(target["pass"] for target in report["targets"]) and all(report["sanity"].values())
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
