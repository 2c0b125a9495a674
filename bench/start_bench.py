"""Start-up: whole processes, measured side by side with ``python -c 'import json'``.

A command-line run is mostly imports, so what a user waits for is the process, not the
function. Each sample starts a fresh interpreter of this venv; the cases run interleaved
(one sample of each, round after round), so load from other processes hits them alike, and
each case is summarised by its median over the rounds. CPU time (user + system, from
``wait4``) is the gated number, because on a shared machine it moves far less than wall
time; wall time is printed beside it.

Targets (issue 11, item 4; item 1 for the error contract):

- ``mcp-governance --help`` within **3x** ``python -c 'import json'``;
- a small diff (two 5-tool JSON files, a BREAKING change among them) within **6x**;
- ``import mcp_governance.errors`` (the error contract a server imports) **< 50 ms** over the
  baseline.

    python bench/start_bench.py              # human table
    python bench/start_bench.py --json       # one JSON object
    python bench/start_bench.py --rounds 31  # more samples (default 15)

Exit status 0 when every target holds, 1 otherwise.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.synthetic import synthetic_surface  # noqa: E402 - after the path above

HELP_TARGET = 3.0
DIFF_TARGET = 6.0
ERRORS_TARGET_MS = 50.0


@dataclass
class Sample:
    wall: float
    cpu: float


# Bytecode as an installed package has it (pip compiles it): the warm-up run writes what is
# missing, whatever PYTHONDONTWRITEBYTECODE says in the calling shell.
ENV = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}


def run(argv: list[str], cwd: Path) -> Sample:
    """One whole process: wall time, and its CPU time (user + system) from wait4."""
    started = time.perf_counter()
    process = subprocess.Popen(argv, cwd=cwd, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - started
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode not in (0, 1):  # 1: the diff's gate fails, as it should
        raise SystemExit(f"{' '.join(argv)} exited {process.returncode}")
    return Sample(wall, usage.ru_utime + usage.ru_stime)


def small_pair(where: Path) -> tuple[Path, Path]:
    """Two 5-tool surfaces: a required argument added, a description reworded, an argument removed."""
    before = synthetic_surface(seed=11, tools=5)
    after = copy.deepcopy(before)
    tools = after["tools"]
    first = tools[0]["inputSchema"]
    first["properties"]["currency"] = {"type": "string", "enum": ["EUR", "USD"]}
    first["required"] = [*first.get("required", []), "currency"]
    tools[1]["description"] = f"{tools[1].get('description', '')} Now faster."
    optional = [name for name in tools[4]["inputSchema"].get("properties", {})
                if name not in tools[4]["inputSchema"].get("required", [])]
    if optional:
        del tools[4]["inputSchema"]["properties"][optional[0]]
    paths = where / "before.json", where / "after.json"
    for path, surface in zip(paths, (before, after), strict=True):
        path.write_text(json.dumps(surface), encoding="utf-8")
    return paths


def cli() -> list[str]:
    """The installed console script when there is one (what a user runs), else ``-m app``."""
    script = Path(sys.executable).parent / "mcp-governance"
    return [str(script)] if script.exists() else [sys.executable, "-m", "app"]


def measure(rounds: int) -> dict[str, object]:
    with tempfile.TemporaryDirectory() as tmp:
        where = Path(tmp)
        before, after = small_pair(where)
        cases = {
            "python -c 'import json'": [sys.executable, "-c", "import json"],
            "import mcp_governance.errors": [sys.executable, "-c", "import mcp_governance.errors"],
            "mcp-governance --help": [*cli(), "--help"],
            "mcp-governance diff (5 tools)": [*cli(), "diff", str(before), str(after)],
        }
        for argv in cases.values():  # warm the file cache and write missing .pyc files
            run(argv, where)
        samples: dict[str, list[Sample]] = {name: [] for name in cases}
        for _ in range(rounds):
            for name, argv in cases.items():
                samples[name].append(run(argv, where))
    medians = {name: {"wall_ms": statistics.median(s.wall for s in runs) * 1000,
                      "cpu_ms": statistics.median(s.cpu for s in runs) * 1000} for name, runs in samples.items()}
    base = medians["python -c 'import json'"]
    for figures in medians.values():
        figures["cpu_ratio"] = figures["cpu_ms"] / base["cpu_ms"]
        figures["wall_ratio"] = figures["wall_ms"] / base["wall_ms"]
    errors_over = medians["import mcp_governance.errors"]["cpu_ms"] - base["cpu_ms"]
    targets = {
        "help_within_3x": medians["mcp-governance --help"]["cpu_ratio"] <= HELP_TARGET,
        "diff_within_6x": medians["mcp-governance diff (5 tools)"]["cpu_ratio"] <= DIFF_TARGET,
        "errors_under_50ms": errors_over < ERRORS_TARGET_MS,
    }
    return {"rounds": rounds, "python": sys.version.split()[0], "cases": medians,
            "errors_over_baseline_ms": errors_over, "targets": targets}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=15, help="samples of each case (default 15)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args()
    result = measure(args.rounds)
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print(f"start-up, medians of {args.rounds} interleaved rounds (Python {result['python']})")
        print(f"{'case':34} {'cpu ms':>8} {'x base':>7} {'wall ms':>8} {'x base':>7}")
        for name, figures in result["cases"].items():  # type: ignore[attr-defined]
            print(f"{name:34} {figures['cpu_ms']:8.1f} {figures['cpu_ratio']:7.2f} {figures['wall_ms']:8.1f} "
                  f"{figures['wall_ratio']:7.2f}")
        print(f"error contract over the baseline: {result['errors_over_baseline_ms']:.1f} ms CPU "
              f"(target < {ERRORS_TARGET_MS:g})")
        for target, ok in result["targets"].items():  # type: ignore[attr-defined]
            print(f"{target}: {'PASS' if ok else 'FAIL'}")
    return 0 if all(result["targets"].values()) else 1  # type: ignore[attr-defined]


if __name__ == "__main__":
    raise SystemExit(main())
