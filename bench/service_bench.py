"""Service benchmark: the real HTTP service under load, awareness against /healthz in one run.

The awareness endpoint sits on every MCP server's error path, so it must cost about what the
cheapest route of the same process costs. Absolute numbers depend on the machine and on
whatever else it runs, so the throughput target is a ratio against ``GET /healthz`` measured
by the same generator, in the same run, with the phases alternated (healthz, awareness,
healthz, awareness, ...) so background noise hits both:

* awareness throughput at least 0.8 of /healthz, at 64 keep-alive connections;
* awareness p99 latency under 10 ms at those 64 connections;
* ``POST /lock`` of the 500-tool synthetic surface of the diff benchmark: p50 under 300 ms.

What runs: ``python -m app serve`` as a subprocess on a free loopback port with a temporary
lockfile store (auth off, access log off), seeded over HTTP with 100 servers, each locked with
a small surface (5-20 tools, one of them grouped into actions) and then live-reported with a
changed version, so awareness has BREAKING/RISKY content to return (200 with XML). The load
generator is wrk when installed (``apt-get install -y wrk``), else an asyncio generator in
this process that shares the CPU with the server (say so when quoting its numbers).

Run from the repository root::

    python bench/service_bench.py                  # a human table (about 70 s)
    python bench/service_bench.py --json           # the same numbers, machine-readable
    python bench/service_bench.py --workers 1      # uvicorn worker processes (default: one per CPU)

Exit status 0 when every target and sanity check passes, 1 otherwise. bench/README.md says
what each number means and records the numbers measured so far.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import platform
import random
import re
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlencode

if __package__ in (None, ""):  # run as a script: make ``bench`` and ``app`` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import httpx

from bench.load import LoadResult, run_load, wrk_path
from bench.synthetic import mutate, synthetic_surface

if TYPE_CHECKING:  # the client side never imports ``app`` at run time (it loads the engine)
    from app.jsontypes import JSON

ROOT = Path(__file__).resolve().parent.parent

RATIO_TARGET = 0.8
P99_TARGET_S = 10e-3
LOCK_P50_TARGET_S = 0.300
GROUPED = "records_manage"
AWARENESS_ROUTE = "/servers/{server}/awareness"


# --- the server -----------------------------------------------------------------------------


@dataclass
class Server:
    """The service under test: its process (the leader of its own process group) and its log."""

    process: subprocess.Popen[bytes]
    base_url: str
    log: Path


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def server_env() -> dict[str, str]:
    """This environment without MCP_GOVERNANCE_* settings: every run serves the same open store."""
    return {key: value for key, value in os.environ.items() if not key.startswith("MCP_GOVERNANCE_")}


@contextmanager
def running_server(store: Path, workers: int) -> Iterator[Server]:
    """``mcp-governance serve`` in its own process group, killed (the whole group) on the way out."""
    port = free_port()
    log = store.parent / "server.log"
    command = [sys.executable, "-m", "app", "serve", "--host", "127.0.0.1", "--port", str(port),
               "--lockfiles", str(store), "--workers", str(workers), "--no-access-log", "--log-level", "warning"]
    with log.open("wb") as out:
        process = subprocess.Popen(command, cwd=ROOT, env=server_env(), stdout=out, stderr=subprocess.STDOUT,
                                   start_new_session=True)
    server = Server(process, f"http://127.0.0.1:{port}", log)
    try:
        wait_ready(server)
        yield server
    finally:
        stop(process)


def wait_ready(server: Server, timeout_s: float = 60.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            raise RuntimeError(f"the server exited with {server.process.returncode}:\n{server.log.read_text()}")
        try:
            if httpx.get(f"{server.base_url}/healthz", timeout=1.0).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    raise RuntimeError(f"the server did not answer /healthz within {timeout_s:.0f} s")


def stop(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM to the server's process group (uvicorn's workers too), SIGKILL if it lingers."""
    for sig, grace in ((signal.SIGTERM, 15.0), (signal.SIGKILL, 5.0)):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            return
        try:
            process.wait(grace)
            return
        except subprocess.TimeoutExpired:
            continue


# --- seeding: 100 locked and live-reported servers ----------------------------------------------


def grouped_tool(changed: bool) -> dict[str, JSON]:
    """A tool grouped into actions (a oneOf pinning ``action``), as servers that merge CRUD tools
    expose. The changed version makes ``name`` required on update and halves list's limit; delete
    stays as it was (its awareness is empty: 204)."""
    record_id = {"type": "string", "pattern": "^rec_[a-z0-9]{12}$", "description": "The record id."}
    branches = [
        {"type": "object", "properties": {"action": {"const": "create"},
                                          "name": {"type": "string", "minLength": 1, "maxLength": 200},
                                          "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 20}},
         "required": ["action", "name"], "additionalProperties": False},
        {"type": "object", "properties": {"action": {"const": "update"}, "id": record_id,
                                          "name": {"type": "string", "maxLength": 200}},
         "required": ["action", "id", *(["name"] if changed else [])], "additionalProperties": False},
        {"type": "object", "properties": {"action": {"const": "delete"}, "id": record_id,
                                          "hard": {"type": "boolean", "default": False}},
         "required": ["action", "id"], "additionalProperties": False},
        {"type": "object", "properties": {"action": {"const": "list"},
                                          "limit": {"type": "integer", "minimum": 1, "maximum": 50 if changed else 100},
                                          "cursor": {"type": "string"}},
         "required": ["action"], "additionalProperties": False},
    ]
    return {"name": GROUPED, "title": "Manage records",
            "description": "Create, update, delete or list records; pick the operation with action.",
            "inputSchema": {"type": "object", "oneOf": branches},
            "annotations": {"destructiveHint": True, "idempotentHint": False}}


@dataclass
class Seeded:
    """One benchmark server: its two surfaces and the awareness queries worth asking."""

    name: str
    locked: dict[str, JSON]
    live: dict[str, JSON]
    queries: list[dict[str, str]]


def seeded_server(index: int, seed: int) -> Seeded:
    """4-19 synthetic tools plus the grouped one; the live version changes a third of the tools
    (``mutate``: 3-4 changes each, one tool removed, one added) and the grouped tool."""
    rng = random.Random(seed * 100_003 + index)
    tools = rng.randint(4, 19)
    name = f"svc-{index:03d}"
    plain = synthetic_surface(seed=rng.randrange(2**31), tools=tools)
    log: list[tuple[str, str]] = []
    live = mutate(plain, rng, max(1, min(4, tools // 3)), log)
    locked = copy.deepcopy(plain)
    for surface, version, changed in ((locked, "1.0.0", False), (live, "1.1.0", True)):
        surface["serverInfo"] = {"name": name, "version": version}
        surface["tools"].append(grouped_tool(changed))
    changed_tools = sorted({tool for tool, change in log if change not in ("removed", "added")})
    queries = [{"tool": tool} for tool in changed_tools]
    queries += [{"tool": GROUPED, "action": "update"}, {"tool": GROUPED, "action": "list", "max": "3"},
                {"tool": f"{GROUPED}.update"}, {"tool": GROUPED, "action": "delete"}]
    return Seeded(name, locked, live, queries)


@dataclass
class Seeding:
    """What seeding did, and the awareness URLs it found worth loading."""

    servers: int
    tools: list[int]
    seconds: float
    candidates: Counter[int] = field(default_factory=Counter)
    """status of each candidate awareness URL, asked once before the load"""
    paths: list[str] = field(default_factory=list)
    """the URLs under load: the candidates that returned 200 with XML, in a seeded order"""


def seed_servers(client: httpx.Client, count: int, seed: int) -> Seeding:
    """Lock and live-report every server over HTTP, then ask each candidate awareness URL once."""
    began = time.perf_counter()
    seeding = Seeding(count, [], 0.0)
    candidates: list[str] = []
    for index in range(count):
        server = seeded_server(index, seed)
        seeding.tools.append(len(server.locked["tools"]))
        expect(client.post("/lock", json={"server": server.name, "surface": server.locked}), 201)
        reported = expect(client.put(f"/servers/{server.name}/live", json=server.live), 200).json()
        if reported["status"] != "drifted":
            raise RuntimeError(f"{server.name}: live report is {reported['status']!r}, expected 'drifted'")
        candidates += [f"/servers/{server.name}/awareness?{urlencode(query)}" for query in server.queries]
    seeding.seconds = time.perf_counter() - began
    for path in candidates:
        response = client.get(path)
        seeding.candidates[response.status_code] += 1
        if response.status_code == 200 and response.headers["content-type"].startswith("application/xml"):
            seeding.paths.append(path)
    random.Random(seed).shuffle(seeding.paths)
    return seeding


def expect(response: httpx.Response, status: int) -> httpx.Response:
    if response.status_code != status:
        raise RuntimeError(f"{response.request.method} {response.request.url.path}: {response.status_code}, "
                           f"expected {status}: {response.text[:500]}")
    return response


# --- POST /lock of the 500-tool surface ------------------------------------------------------


@dataclass
class LockTiming:
    """Client-side round trips of POST /lock (seconds); the first lock of the new server apart."""

    body_bytes: list[int]
    first_s: float
    samples_s: list[float]
    response_bytes: int
    versions: int

    def to_json(self) -> dict[str, JSON]:
        ordered = sorted(self.samples_s)
        return {"body_bytes": self.body_bytes, "first_lock_s": self.first_s, "samples": len(ordered),
                "p50_s": statistics.median(ordered), "p90_s": ordered[max(0, -(-9 * len(ordered) // 10) - 1)],
                "min_s": ordered[0], "max_s": ordered[-1], "samples_s": self.samples_s,
                "response_bytes": self.response_bytes, "versions_created": self.versions}


def time_locks(client: httpx.Client, seed: int, samples: int) -> LockTiming:
    """Lock ``synthetic_surface(seed)`` as a new server, then lock its changed variant and the
    original in turn (``approved_by`` set, so BREAKING deltas are accepted): each sample creates
    a new version and diffs 500 tools against the previous one. Client-side round trips."""
    before = synthetic_surface(seed=seed, tools=500)
    after = mutate(before, random.Random(seed + 1), 25)
    bodies = [json.dumps({"server": "synthetic-suite", "surface": surface, "approved_by": "service-bench",
                          "reason": "service benchmark"}).encode() for surface in (before, after)]
    headers = {"content-type": "application/json"}

    def lock(body: bytes) -> tuple[float, httpx.Response]:
        began = time.perf_counter()
        response = client.post("/lock", content=body, headers=headers)
        return time.perf_counter() - began, expect(response, 201)

    first_s, _ = lock(bodies[0])
    timed = [lock(bodies[(sample + 1) % 2]) for sample in range(samples)]
    last = timed[-1][1].json()
    return LockTiming([len(body) for body in bodies], first_s, [seconds for seconds, _ in timed],
                      len(timed[-1][1].content), last["version"])


# --- load phases -----------------------------------------------------------------------------


@dataclass
class Phases:
    """The measured phases of each endpoint, in run order (warm-ups are not kept)."""

    healthz: list[LoadResult] = field(default_factory=list)
    awareness: list[LoadResult] = field(default_factory=list)

    def total(self, kind: str) -> LoadResult:
        results = getattr(self, kind)
        merged = results[0]
        for result in results[1:]:
            merged = merged.merged(result)
        return merged


def run_phases(args: argparse.Namespace, base_url: str, paths: list[str], tool: str) -> Phases:
    """A warm-up of each kind, then ``rounds`` x (healthz, awareness), each phase ``duration`` s."""
    kinds = {"healthz": ["/healthz"], "awareness": paths}
    for kind, urls in kinds.items():
        progress(f"warm-up {kind} {args.warmup:g} s")
        run_load(tool, base_url, urls, args.connections, args.warmup, args.threads)
    phases = Phases()
    for round_ in range(args.rounds):
        for kind, urls in kinds.items():
            progress(f"round {round_ + 1}/{args.rounds}: {kind} {args.duration:g} s")
            getattr(phases, kind).append(run_load(tool, base_url, urls, args.connections, args.duration, args.threads))
    return phases


METRIC_LINE = re.compile(r'^(mcp_governance_(?:requests|awareness)_total)\{(.*)\} ([0-9.e+]+)$')


def scrape(client: httpx.Client) -> Counter[str]:
    """The server's own counts: awareness requests by status, awareness lookups by outcome."""
    counts: Counter[str] = Counter()
    for line in expect(client.get("/metrics"), 200).text.splitlines():
        match = METRIC_LINE.match(line)
        if not match:
            continue
        labels = dict(re.findall(r'(\w+)="([^"]*)"', match.group(2)))
        if match.group(1) == "mcp_governance_awareness_total":
            counts[f"lookup {labels['outcome']}"] += int(float(match.group(3)))
        elif labels.get("route") == AWARENESS_ROUTE:
            counts[f"status {labels['status']}"] += int(float(match.group(3)))
    return counts


# --- report ----------------------------------------------------------------------------------


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def machine(tool: str, args: argparse.Namespace) -> dict[str, JSON]:
    import fastapi
    import uvicorn

    generator = ("wrk (C, separate process)" if tool == "wrk"
                 else "python asyncio (in the bench process: SHARES THE CPU)")
    return {"date": datetime.now(UTC).replace(microsecond=0).isoformat(), "cpu": _cpu_model(),
            "cpus": os.cpu_count(), "load_average_1min": os.getloadavg()[0], "platform": platform.platform(),
            "python": f"{platform.python_implementation()} {platform.python_version()}",
            "uvicorn": uvicorn.__version__, "fastapi": fastapi.__version__, "workers": args.workers,
            "generator": generator, "wrk_threads": args.threads if tool == "wrk" else None,
            "connections": args.connections, "warmup_s": args.warmup, "duration_s": args.duration,
            "rounds": args.rounds}


def targets(healthz: LoadResult, awareness: LoadResult, locks: LockTiming) -> list[dict[str, JSON]]:
    ratio = awareness.rps / healthz.rps if healthz.rps else 0.0
    p99 = awareness.percentile(99)
    p50 = statistics.median(locks.samples_s)
    return [
        {"target": f"awareness throughput / healthz >= {RATIO_TARGET}", "value": ratio, "unit": "x",
         "pass": ratio >= RATIO_TARGET},
        {"target": f"awareness p99 < {P99_TARGET_S * 1e3:g} ms", "value": p99 * 1e3, "unit": "ms",
         "pass": p99 < P99_TARGET_S},
        {"target": f"POST /lock (500 tools) p50 < {LOCK_P50_TARGET_S * 1e3:g} ms", "value": p50 * 1e3, "unit": "ms",
         "pass": p50 < LOCK_P50_TARGET_S},
    ]


def sanity(seeding: Seeding, phases: Phases, mix: Counter[str]) -> dict[str, bool]:
    results = phases.healthz + phases.awareness
    served = mix["status 200"]
    return {
        "candidate awareness URLs answer 200 or 204 only (no 404/5xx)": set(seeding.candidates) <= {200, 204},
        "at least one awareness URL per server returns 200 with XML": len(seeding.paths) >= seeding.servers,
        "no socket errors or timeouts under load": all(r.errors == 0 for r in results),
        "no 4xx/5xx under load": all(r.non_2xx == 0 for r in results),
        "every awareness request under load was a 200 with a section (server's metrics)":
            served > 0 and served == sum(v for k, v in mix.items() if k.startswith("status "))
            and mix["lookup empty"] == 0,
    }


def build_report(args: argparse.Namespace, tool: str, seeding: Seeding, locks: LockTiming, phases: Phases,
                 mix: Counter[str]) -> dict[str, JSON]:
    healthz, awareness = phases.total("healthz"), phases.total("awareness")
    return {
        "machine": machine(tool, args),
        "seeding": {"servers": seeding.servers, "tools_min": min(seeding.tools), "tools_max": max(seeding.tools),
                    "tools_total": sum(seeding.tools), "seconds": seeding.seconds,
                    "candidate_status": {str(k): v for k, v in sorted(seeding.candidates.items())},
                    "awareness_urls_under_load": len(seeding.paths)},
        "healthz": healthz.summary(),
        "awareness": awareness.summary(),
        "rounds": {kind: [r.summary() for r in getattr(phases, kind)] for kind in ("healthz", "awareness")},
        "ratio": awareness.rps / healthz.rps if healthz.rps else 0.0,
        "awareness_under_load_server_counts": dict(sorted(mix.items())),
        "lock": locks.to_json(),
        "targets": targets(healthz, awareness, locks),
        "sanity": sanity(seeding, phases, mix),
    }


def _ms(seconds_or_ms: float) -> str:
    return f"{seconds_or_ms:.1f}"


def print_table(report: dict[str, JSON]) -> None:
    info, seeding = report["machine"], report["seeding"]
    print(f"mcp-governance service benchmark, {info['date']}")
    print(f"  {info['cpu']} ({info['cpus']} CPUs, load {info['load_average_1min']:.2f} at the end), {info['python']}, "
          f"uvicorn {info['uvicorn']}, fastapi {info['fastapi']}, {info['workers']} worker(s)")
    print(f"  load: {info['generator']}, {info['connections']} keep-alive connections, warm-up {info['warmup_s']:g} s, "
          f"{info['rounds']} x {info['duration_s']:g} s per endpoint, alternated")
    print(f"  seeded {seeding['servers']} servers ({seeding['tools_min']}-{seeding['tools_max']} tools, "
          f"{seeding['tools_total']} in all) in {seeding['seconds']:.1f} s; candidate awareness URLs by status "
          f"{seeding['candidate_status']}; {seeding['awareness_urls_under_load']} URLs (all 200) under load\n")
    print(f"{'endpoint':<10} {'req/s':>8} {'p50 ms':>7} {'p90 ms':>7} {'p99 ms':>7} {'max ms':>7} "
          f"{'mean ms':>7} {'requests':>9} {'errors':>6} {'non-2xx':>7}")
    for kind in ("healthz", "awareness"):
        rows = [(kind, report[kind])] + [(f"  round {n}", r) for n, r in enumerate(report["rounds"][kind], 1)]
        for label, r in rows:
            print(f"{label:<10} {r['rps']:>8.0f} {_ms(r['p50_ms']):>7} {_ms(r['p90_ms']):>7} {_ms(r['p99_ms']):>7} "
                  f"{_ms(r['max_ms']):>7} {_ms(r['mean_ms']):>7} {r['requests']:>9} {r['errors']:>6} "
                  f"{r['non_2xx']:>7}")
    print(f"\nawareness / healthz throughput: {report['ratio']:.2f}")
    connections = info["connections"]
    print(f"closed loop (Little's law): mean latency = {connections} connections / throughput = "
          f"{connections / report['awareness']['rps'] * 1e3:.1f} ms for awareness, "
          f"{connections / report['healthz']['rps'] * 1e3:.1f} ms for healthz")
    print(f"awareness requests during the warm-up and measured phases, counted by the server: "
          f"{report['awareness_under_load_server_counts']}")
    lock = report["lock"]
    print(f"\nPOST /lock, 500 tools ({lock['body_bytes'][0]:,} / {lock['body_bytes'][1]:,} byte JSON bodies, "
          f"{lock['response_bytes']:,} byte response): first lock {lock['first_lock_s'] * 1e3:.0f} ms; "
          f"{lock['samples']} re-locks p50 {lock['p50_s'] * 1e3:.0f} ms, p90 {lock['p90_s'] * 1e3:.0f} ms, "
          f"min {lock['min_s'] * 1e3:.0f} ms, max {lock['max_s'] * 1e3:.0f} ms "
          f"(now at version {lock['versions_created']})")
    print("\ntargets:")
    for target in report["targets"]:
        print(f"  {'PASS' if target['pass'] else 'FAIL'}  {target['target']}: {target['value']:.3g} {target['unit']}")
    print("\nsanity:")
    for check, ok in report["sanity"].items():
        print(f"  {'ok  ' if ok else 'FAIL'}  {check}")


def progress(message: str) -> None:
    print(f"service_bench: {message}", file=sys.stderr, flush=True)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1,
                        help="uvicorn worker processes (default: one per CPU, as the service is deployed)")
    parser.add_argument("--servers", type=int, default=100, help="servers to lock and live-report (default 100)")
    parser.add_argument("--connections", type=int, default=64, help="concurrent keep-alive connections (default 64)")
    parser.add_argument("--warmup", type=float, default=5.0, help="seconds of warm-up per endpoint (default 5)")
    parser.add_argument("--duration", type=float, default=10.0, help="seconds per measured phase (default 10)")
    parser.add_argument("--rounds", type=int, default=2, help="healthz/awareness phase pairs (default 2)")
    parser.add_argument("--threads", type=int, default=1, help="wrk threads (default 1)")
    parser.add_argument("--load", choices=("auto", "wrk", "python"), default="auto",
                        help="load generator (default: wrk if installed, else python)")
    parser.add_argument("--lock-samples", type=int, default=15, help="timed POST /lock round trips (default 15)")
    parser.add_argument("--seed", type=int, default=7, help="seed of the surfaces and URL order (default 7)")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    args = parser.parse_args(argv)
    if min(args.workers, args.servers, args.connections, args.rounds, args.threads, args.lock_samples) < 1:
        parser.error("--workers, --servers, --connections, --rounds, --threads, --lock-samples must be >= 1")
    if min(args.warmup, args.duration) < 1:
        parser.error("--warmup and --duration must be at least 1 s")
    return args


def choose_generator(choice: str) -> str:
    if choice == "wrk" and wrk_path() is None:
        raise SystemExit("service_bench: wrk is not installed (apt-get install -y wrk), or use --load python")
    if choice == "auto":
        choice = "wrk" if wrk_path() else "python"
        if choice == "python":
            progress("wrk not found (apt-get install -y wrk): the asyncio generator SHARES THE CPU with the server")
    return choice


def stop_on_sigterm() -> None:
    """SIGTERM ends the run like Ctrl-C: through the ``finally`` that kills the server."""
    def raise_exit(signum: int, frame: object) -> None:
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, raise_exit)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    stop_on_sigterm()
    tool = choose_generator(args.load)
    with tempfile.TemporaryDirectory(prefix="service-bench-") as tmp:
        store = Path(tmp) / "lockfiles"
        progress(f"starting the server ({args.workers} worker(s)) on a temporary store")
        with running_server(store, args.workers) as server, \
                httpx.Client(base_url=server.base_url, timeout=120.0) as client:
            progress(f"seeding {args.servers} servers (lock + live report each)")
            seeding = seed_servers(client, args.servers, args.seed)
            before = scrape(client)
            phases = run_phases(args, server.base_url, seeding.paths, tool)
            mix = scrape(client) - before
            # After the load, so the load sees exactly the seeded servers, not a 500-tool one too.
            progress(f"timing POST /lock of the 500-tool surface, {args.lock_samples} samples")
            locks = time_locks(client, args.seed, args.lock_samples)
    report = build_report(args, tool, seeding, locks, phases, mix)
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print_table(report)
    passed = all(t["pass"] for t in report["targets"]) and all(report["sanity"].values())
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
