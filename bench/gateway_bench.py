"""The gateway's cost on a tool call, against the same server without it, in the same run.

One stdio server (the example billing server, v1, locked), reached two ways by the official
SDK client at once: directly, and through ``mcp-governance gateway`` (lockfiles mode,
enforce). Calls alternate between the two paths (one of each, round after round), so load
from other processes hits both alike. Each round trip is timed on the client.

Targets (issue 13):

- a valid ``tools/call`` through the gateway: **added median < 1 ms** and **added p99 < 5 ms**
  over the direct call (the gateway's p99 minus the direct p99);
- an invalid call answered by the gateway itself (its compiled validator cached, the
  ``<validation_error>`` rendered locally): **median < 2 ms** round trip.

    python bench/gateway_bench.py               # human table
    python bench/gateway_bench.py --json        # one JSON object
    python bench/gateway_bench.py --calls 2000  # more samples (default 1000)

Exit status 0 when every target holds, 1 otherwise.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

ROOT = Path(__file__).resolve().parent.parent
BILLING = ROOT / "examples" / "billing_server" / "server.py"
ADDED_MEDIAN_MS = 1.0
ADDED_P99_MS = 5.0
INVALID_MEDIAN_MS = 2.0
VALID = {"id": "inv_1001"}
INVALID = {"ident": "inv_1001"}


def _env() -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("MCP_GOVERNANCE_")}
    env["BILLING_VERSION"] = "v1"
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    return env


def _percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def _summary(values: list[float]) -> dict[str, float]:
    return {"median_ms": statistics.median(values) * 1000, "p99_ms": _percentile(values, 0.99) * 1000}


async def _timed(client: Client, arguments: dict[str, Any]) -> tuple[float, Any]:
    started = time.perf_counter()
    result = await client.call_tool("get_invoice", arguments)
    return time.perf_counter() - started, result


def _gateway_cpu() -> float | None:
    """CPU seconds (user + system) of this process's gateway child, from /proc; None elsewhere."""
    ticks = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
            if int(fields[1]) != os.getpid():
                continue
            if b"gateway" not in (stat.parent / "cmdline").read_bytes():
                continue
            return (int(fields[11]) + int(fields[12])) / ticks
        except (OSError, IndexError, ValueError):
            continue
    return None


async def measure(calls: int, warmup: int, lockfiles: Path) -> dict[str, Any]:
    direct_params = StdioServerParameters(command=sys.executable, args=[str(BILLING)], env=_env())
    gateway_params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "app", "gateway", "--server", "billing", "--lockfiles", str(lockfiles), "--mode", "enforce",
              "--log-level", "warning", "--", sys.executable, str(BILLING)], env=_env())
    direct_times: list[float] = []
    gateway_times: list[float] = []
    invalid_times: list[float] = []
    with tempfile.TemporaryFile("w+") as log:
        async with Client(stdio_client(direct_params, errlog=log), cache=None, mode="legacy") as direct, \
                Client(stdio_client(gateway_params, errlog=log), cache=None, mode="legacy") as gateway:
            cpu_before: float | None = None
            for index in range(warmup + calls):
                if index == warmup:
                    cpu_before = _gateway_cpu()
                spent_direct, plain = await _timed(direct, VALID)
                spent_gateway, governed = await _timed(gateway, VALID)
                spent_invalid, refused = await _timed(gateway, INVALID)
                if index == 0:
                    assert plain.model_dump() == governed.model_dump(), "the gateway changed a valid call's result"
                    assert refused.is_error and "<validation_error" in refused.content[0].text
                if index >= warmup:
                    direct_times.append(spent_direct)
                    gateway_times.append(spent_gateway)
                    invalid_times.append(spent_invalid)
            cpu_after = _gateway_cpu()
    direct_s, gateway_s, invalid_s = _summary(direct_times), _summary(gateway_times), _summary(invalid_times)
    added_median = gateway_s["median_ms"] - direct_s["median_ms"]
    added_p99 = gateway_s["p99_ms"] - direct_s["p99_ms"]
    return {
        "calls": calls,
        "direct": direct_s,
        "gateway": gateway_s,
        "invalid_through_gateway": invalid_s,
        "added_median_ms": added_median,
        "added_p99_ms": added_p99,
        "gateway_cpu_per_call_ms": (cpu_after - cpu_before) / (2 * calls) * 1000
        if cpu_before is not None and cpu_after is not None else None,
        "targets": {
            "added_median_lt_1ms": added_median < ADDED_MEDIAN_MS,
            "added_p99_lt_5ms": added_p99 < ADDED_P99_MS,
            "invalid_median_lt_2ms": invalid_s["median_ms"] < INVALID_MEDIAN_MS,
        },
    }


def lock_v1(lockfiles: Path) -> None:
    command = f'"{sys.executable}" "{BILLING}"'
    done = subprocess.run([sys.executable, "-m", "app", "lock", "--from-command", command, "--server", "billing",
                           "--lockfiles", str(lockfiles)], env=_env(), capture_output=True, text=True, timeout=120,
                          check=False, cwd=ROOT)
    if done.returncode != 0:
        raise SystemExit(f"gateway_bench: locking billing v1 failed: {done.stderr.strip()}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=1000, help="timed calls per path (default 1000)")
    parser.add_argument("--warmup", type=int, default=100, help="untimed calls first (default 100)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        lockfiles = Path(directory)
        lock_v1(lockfiles)
        report = anyio.run(measure, args.calls, args.warmup, lockfiles)
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print(f"{report['calls']} calls per path, interleaved; round trip timed on the SDK client\n")
        print("| path | median | p99 |\n|---|---:|---:|")
        for label, key in (("valid call, direct", "direct"), ("valid call, through the gateway", "gateway"),
                           ("invalid call, answered by the gateway", "invalid_through_gateway")):
            print(f"| {label} | {report[key]['median_ms']:.3f} ms | {report[key]['p99_ms']:.3f} ms |")
        if report["gateway_cpu_per_call_ms"] is not None:
            print(f"\ngateway process CPU per call (valid and invalid alike): "
                  f"{report['gateway_cpu_per_call_ms']:.3f} ms")
        targets = report["targets"]
        print("\n| target | value | result |\n|---|---:|---|")
        print(f"| added median < 1 ms | {report['added_median_ms']:.3f} ms | "
              f"{'PASS' if targets['added_median_lt_1ms'] else 'FAIL'} |")
        print(f"| added p99 < 5 ms | {report['added_p99_ms']:.3f} ms | "
              f"{'PASS' if targets['added_p99_lt_5ms'] else 'FAIL'} |")
        print(f"| invalid call median < 2 ms | {report['invalid_through_gateway']['median_ms']:.3f} ms | "
              f"{'PASS' if targets['invalid_median_lt_2ms'] else 'FAIL'} |")
    return 0 if all(report["targets"].values()) else 1


if __name__ == "__main__":
    sys.exit(main())
