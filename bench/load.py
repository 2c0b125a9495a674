"""Closed-loop HTTP load: N keep-alive connections, each sending its next GET as soon as the
previous response is in, rotating over a fixed list of paths.

Two generators give the same :class:`LoadResult`: a latency distribution in microseconds kept
as weights, so several rounds merge without averaging percentiles:

* ``wrk`` (preferred): a C program, so on a 2-vCPU machine the generator costs the server
  little CPU. A Lua script rotates the paths (each thread from its own offset) and prints
  wrk's latency distribution at the end as 1990 quantiles (0.001 % apart above p99).
* ``python`` (fallback when wrk is missing): asyncio raw sockets in this process. It shares
  the CPU with the server and partly measures itself; its numbers are a lower bound.

Only loopback targets: the benchmark starts the server it loads.
"""

from __future__ import annotations

import asyncio
import re
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

US = 1_000_000

# Each thread pre-formats every request once (init), so request() costs a table lookup.
# done() prints wrk's summary and its latency distribution as quantiles (this wrk's histogram
# cannot be read bucket by bucket from Lua): one every 0.1 % up to p99, then one every 0.001 %,
# each at the upper edge of its slice (so p50, p90, p99 and max are wrk's own values), and runs
# merge by weighting each quantile by its slice's share of the requests.
WRK_LUA = r"""
local counter = 0
function setup(thread)
  thread:set("id", counter)
  counter = counter + 1
end

local requests, n, i = {}, 0, 0
function init(args)
  for line in io.lines(args[1]) do
    n = n + 1
    requests[n] = wrk.format("GET", line)
  end
  local id = tonumber(wrk.thread:get("id")) or 0
  i = (id * 7919) % n
end

function request()
  i = i % n + 1
  return requests[i]
end

local function slices(latency, from, width, count)
  for k = 0, count - 1 do
    io.write(string.format("BENCH q %.6f %d\n", width, latency:percentile(from + (k + 1) * width)))
  end
end

function done(summary, latency, requests_stats)
  local e = summary.errors
  io.write(string.format("BENCH summary %d %d %d %d %d %d %d %d %d\n", summary.requests, summary.duration,
    summary.bytes, e.connect, e.read, e.write, e.status, e.timeout, latency.max))
  slices(latency, 0, 0.1, 990)
  slices(latency, 99, 0.001, 1000)
end
"""


@dataclass
class LoadResult:
    """What one or more load phases measured. ``errors`` counts socket errors and timeouts;
    ``non_2xx`` responses with status 400 or above (as wrk counts them)."""

    requests: int = 0
    duration_s: float = 0.0
    errors: int = 0
    non_2xx: int = 0
    max_us: int = 0
    weights: dict[int, float] = field(default_factory=dict)
    """latency in µs -> how many requests it stands for (exact counts, or wrk's quantile slices)"""

    def add(self, latency_us: int, weight: float = 1.0) -> None:
        self.weights[latency_us] = self.weights.get(latency_us, 0.0) + weight
        self.max_us = max(self.max_us, latency_us)

    @property
    def rps(self) -> float:
        return self.requests / self.duration_s if self.duration_s else 0.0

    def percentile(self, p: float) -> float:
        """The latency (seconds) at or below which ``p`` percent of the requests completed."""
        total = sum(self.weights.values())
        if not total:
            return float("nan")
        rank, seen = total * p / 100, 0.0
        for value in sorted(self.weights):
            seen += self.weights[value]
            if seen >= rank - 1e-9 * total:
                return value / US
        return self.max_us / US

    @property
    def mean_s(self) -> float:
        total = sum(self.weights.values())
        return sum(v * w for v, w in self.weights.items()) / total / US if total else float("nan")

    def merged(self, other: LoadResult) -> LoadResult:
        out = LoadResult(self.requests + other.requests, self.duration_s + other.duration_s,
                         self.errors + other.errors, self.non_2xx + other.non_2xx, max(self.max_us, other.max_us))
        for source in (self, other):
            for value, weight in source.weights.items():
                out.add(value, weight)
        return out

    def summary(self) -> dict[str, float | int]:
        """The numbers the report shows (times in ms)."""
        return {"requests": self.requests, "duration_s": round(self.duration_s, 3), "rps": round(self.rps, 1),
                "p50_ms": self.percentile(50) * 1e3, "p90_ms": self.percentile(90) * 1e3,
                "p99_ms": self.percentile(99) * 1e3, "max_ms": self.max_us / 1e3, "mean_ms": self.mean_s * 1e3,
                "errors": self.errors, "non_2xx": self.non_2xx}


def wrk_path() -> str | None:
    return shutil.which("wrk")


def run_wrk(base_url: str, paths: list[str], connections: int, duration_s: float, threads: int = 1,
            timeout_s: float = 5.0) -> LoadResult:
    """One wrk run over ``paths`` (rotated); wrk's own summary and latency quantiles parsed back."""
    with tempfile.TemporaryDirectory(prefix="bench-wrk-") as tmp:
        script, listing = Path(tmp) / "rotate.lua", Path(tmp) / "paths.txt"
        script.write_text(WRK_LUA)
        listing.write_text("".join(f"{path}\n" for path in paths))
        command = [wrk_path() or "wrk", f"-t{threads}", f"-c{connections}", f"-d{max(1, round(duration_s))}s",
                   f"--timeout={max(1, round(timeout_s))}s", "-s", str(script), base_url, "--", str(listing)]
        done = subprocess.run(command, check=False, capture_output=True, text=True, timeout=duration_s + 60)
    if done.returncode != 0:
        raise RuntimeError(f"wrk failed ({done.returncode}): {done.stderr.strip() or done.stdout.strip()}")
    return _parse_wrk(done.stdout)


def _parse_wrk(stdout: str) -> LoadResult:
    result = LoadResult()
    quantiles: list[tuple[float, int]] = []
    for line in stdout.splitlines():
        parts = line.split()
        if parts[:2] == ["BENCH", "summary"]:
            requests, duration_us, _bytes, connect, read, write, status, timeout, max_us = map(int, parts[2:11])
            result.requests, result.duration_s = requests, duration_us / US
            result.errors, result.non_2xx = connect + read + write + timeout, status
            result.max_us = max_us
        elif parts[:2] == ["BENCH", "q"]:
            quantiles.append((float(parts[2]), int(parts[3])))
    if not result.requests:
        raise RuntimeError(f"wrk printed no summary:\n{stdout}")
    for width, value in quantiles:
        result.add(value, width / 100 * result.requests)
    return result


# --- the fallback: asyncio in this process ----------------------------------------------------

_LENGTH = re.compile(rb"\r\ncontent-length:\s*(\d+)", re.IGNORECASE)


async def _connection(host: str, port: int, requests: list[bytes], start: int, deadline: float,
                      result: LoadResult) -> None:
    """One keep-alive connection: send, read one response (Content-Length framed), repeat."""
    reader, writer = await asyncio.open_connection(host, port)
    index = start
    try:
        while time.perf_counter() < deadline:
            request = requests[index % len(requests)]
            index += 1
            began = time.perf_counter()
            writer.write(request)
            try:
                head = await reader.readuntil(b"\r\n\r\n")
                length = _LENGTH.search(head)
                if length:
                    await reader.readexactly(int(length.group(1)))
            except (asyncio.IncompleteReadError, ConnectionError):
                result.errors += 1
                return
            result.add(round((time.perf_counter() - began) * US))
            result.requests += 1
            if int(head[9:12]) >= 400:
                result.non_2xx += 1
    finally:
        writer.close()


async def _python_load(base_url: str, paths: list[str], connections: int, duration_s: float) -> LoadResult:
    url = urlsplit(base_url)
    host, port = url.hostname or "127.0.0.1", url.port or 80
    requests = [f"GET {path} HTTP/1.1\r\nHost: {url.netloc}\r\n\r\n".encode() for path in paths]
    result = LoadResult()
    began = time.perf_counter()
    deadline = began + duration_s
    await asyncio.gather(*(_connection(host, port, requests, (n * 7919) % len(paths), deadline, result)
                           for n in range(connections)))
    result.duration_s = time.perf_counter() - began
    return result


def run_python(base_url: str, paths: list[str], connections: int, duration_s: float) -> LoadResult:
    """The fallback generator (uvloop when installed). Shares the CPU with the server."""
    try:
        import uvloop

        return uvloop.run(_python_load(base_url, paths, connections, duration_s))
    except ImportError:
        return asyncio.run(_python_load(base_url, paths, connections, duration_s))


def run_load(tool: str, base_url: str, paths: list[str], connections: int, duration_s: float,
             threads: int = 1) -> LoadResult:
    """One phase with the chosen generator ("wrk" or "python")."""
    if tool == "wrk":
        return run_wrk(base_url, paths, connections, duration_s, threads)
    return run_python(base_url, paths, connections, duration_s)
