"""Fleet benchmark (issue 12): the service on PostgreSQL and on the directory store at fleet size.

Every number that depends on the machine is quoted with a baseline measured in the same run:

1. **Awareness on a PostgreSQL replica** (cache hit; 2 workers) against the same replica's ``/healthz``, at
   64 keep-alive connections, phases alternated: throughput ratio (target >= 0.8) and p99
   (target < 10 ms).
2. **POST /lock of the 500-tool synthetic surface on PostgreSQL**: p50 (target < 300 ms), and the
   same on the directory store in the same run (the ratio says what the database adds).
3. **1,000 servers x 10 versions**, on both stores: time from ``serve`` started to ``/readyz`` 200
   (target < 2 s; baseline: an empty store, same run), and GET /dashboard and GET /lockfiles
   a page (100) at a time: p50 per page (target < 30 ms), cold first pass apart.
4. **Awareness at 100 and at 1,000 servers**, both services up, phases alternated: the ratio
   of throughput and of p99 (target: the same, within noise).
5. **Memory per stored server**: RSS after every server was read, (1,000-server service minus
   100-server service) / 900.
6. **200 live reports of 200 different servers at once**: p99, alone and while another server
   is locked over and over with the 500-tool surface (the ratio says whether a report waits
   on another server's lock).

The seeding writes the stores directly (files, or one transaction), not over HTTP: it is not
what is measured. Run from the repository root (PostgreSQL at ``MCP_GOVERNANCE_BENCH_PG``,
default the local one)::

    python bench/fleet_bench.py            # about 3 minutes on 2 cores
    python bench/fleet_bench.py --json
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

if __package__ in (None, ""):  # run as a script: make ``bench`` and ``app`` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import httpx

from bench.load import LoadResult, run_load, wrk_path
from bench.service_bench import free_port, server_env, stop, time_locks

ROOT = Path(__file__).resolve().parent.parent
PG_ADMIN = os.environ.get("MCP_GOVERNANCE_BENCH_PG", "postgresql://postgres@127.0.0.1:5432/test")
STAMP = "2026-11-30T00:00:00Z"


# --- seeding -----------------------------------------------------------------------------


def surface_doc(index: int, revision: int) -> dict[str, Any]:
    """A small server (3 tools); each revision rewords one description, the live one also adds a
    required argument (BREAKING), so awareness has something to say."""
    props: dict[str, Any] = {"id": {"type": "string"}}
    required = ["id"]
    if revision < 0:  # the live surface
        props["currency"] = {"type": "string", "enum": ["EUR", "USD"]}
        required.append("currency")
    return {"tools": [
        {"name": "get_invoice", "description": f"Fetch one invoice (server {index}, revision {max(revision, 9)})",
         "inputSchema": {"type": "object", "properties": props, "required": required}},
        {"name": "list_invoices", "description": f"List invoices (revision {revision})",
         "inputSchema": {"type": "object", "properties": {"limit": {"type": "integer", "maximum": 50}}}},
        {"name": "void_invoice", "description": "Void an invoice",
         "inputSchema": {"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]}},
    ]}


@dataclass
class Seed:
    name: str
    versions: list[tuple[Any, bytes]]  # (VersionRecord, text)
    live: Any  # LiveRecord


def make_seeds(count: int, versions: int) -> list[Seed]:
    from app import load_surface, write_surface
    from app.diff import diff
    from app.lockfile import lock_document
    from app.store import LiveRecord, VersionRecord

    seeds = []
    for index in range(count):
        name = f"fleet-{index:04d}"
        rows: list[tuple[Any, bytes]] = []
        previous = None
        for number in range(1, versions + 1):
            surface = load_surface(surface_doc(index, number), server=name)
            record = VersionRecord(server=name, version=number, integrity_digest=surface.integrity_digest,
                                   previous_digest=previous.integrity_digest if previous else None,
                                   locked_at=STAMP, who="fleet-bench", reason="seed")
            rows.append((record, write_surface(surface, STAMP).encode()))
            previous = surface
        live = load_surface(surface_doc(index, -1), server=name)
        result = diff(previous, live)  # type: ignore[arg-type]
        record = LiveRecord(server=name, reported_at=STAMP, live_digest=live.integrity_digest,
                            surface_document=lock_document(live, STAMP), lock_version=versions,
                            lock_digest=previous.integrity_digest, locked_at=STAMP,  # type: ignore[union-attr]
                            result=result.to_json())
        seeds.append(Seed(name, rows, record))
    return seeds


def seed_directory(root: Path, seeds: list[Seed]) -> None:
    """The directory store's layout, written without fsync (seeding is not measured)."""
    for seed in seeds:
        state = root / ".store" / seed.name
        (state / "versions").mkdir(parents=True, exist_ok=True)
        lines = []
        for record, text in seed.versions:
            (state / "versions" / f"{record.version:06d}.lock.toml").write_bytes(text)
            lines.append(json.dumps(record.to_json(), ensure_ascii=False, sort_keys=True))
        (state / "audit.jsonl").write_text("\n".join(lines) + "\n")
        (root / f"{seed.name}.lock.toml").write_bytes(seed.versions[-1][1])
        (state / "live.json").write_text(json.dumps(seed.live.to_json(), ensure_ascii=False))


def new_schema() -> str:
    import psycopg

    from app.store import pgschema

    schema = f"bench_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(PG_ADMIN, autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{schema}"')
    url = f"{PG_ADMIN}?options={quote(f'-csearch_path={schema}')}"
    with psycopg.connect(url, autocommit=True) as conn:
        pgschema.migrate(conn)
    return url


def drop_schema(url: str) -> None:
    import psycopg

    schema = url.rsplit("search_path%3D", 1)[-1]
    with psycopg.connect(PG_ADMIN, autocommit=True) as conn:
        conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


def seed_postgres(url: str, seeds: list[Seed]) -> None:
    import psycopg

    def dumps(value: Any) -> str:
        return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))

    with psycopg.connect(url) as conn, conn.cursor() as cur:
        cur.executemany("INSERT INTO servers (name, last_version, live_seq, seq) VALUES (%s, %s, 1, 1)",
                        [(seed.name, len(seed.versions)) for seed in seeds])
        cur.executemany("INSERT INTO versions (server, version, integrity_digest, record, lock_text) "
                        "VALUES (%s, %s, %s, %s, %s)",
                        [(seed.name, r.version, r.integrity_digest, dumps(r.to_json()), text)
                         for seed in seeds for r, text in seed.versions])
        cur.executemany("INSERT INTO live_reports (server, instance, reported_at, record, seq) "
                        "VALUES (%s, '', %s, %s, 1)",
                        [(seed.name, STAMP, dumps(seed.live.to_json())) for seed in seeds])
        conn.commit()


# --- services ----------------------------------------------------------------------------


@dataclass
class Service:
    url: str
    process: subprocess.Popen[bytes]
    ready_s: float


@contextmanager
def serve(store: str, log: Path, workers: int = 1) -> Iterator[Service]:
    """``serve --store``, timed from the process start to /readyz 200."""
    port = free_port()
    began = time.perf_counter()
    with log.open("wb") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "app", "serve", "--host", "127.0.0.1", "--port", str(port), "--store", store,
             "--workers", str(workers), "--no-access-log", "--log-level", "warning"],
            cwd=ROOT, env=server_env(), stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        while True:
            try:
                if httpx.get(f"{url}/readyz", timeout=1.0).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if process.poll() is not None or time.perf_counter() - began > 120:
                raise RuntimeError(f"serve did not become ready:\n{log.read_text()[-2000:]}")
            time.sleep(0.01)
        yield Service(url, process, time.perf_counter() - began)
    finally:
        stop(process)


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def pages(client: httpx.Client, path: str, limit: int = 100) -> list[float]:
    """Walk every page; the seconds each page took."""
    took = []
    url = f"{path}?limit={limit}"
    while url:
        began = time.perf_counter()
        response = client.get(url)
        took.append(time.perf_counter() - began)
        if response.status_code != 200:
            raise RuntimeError(f"{url}: {response.status_code} {response.text[:300]}")
        link = response.headers.get("link")
        url = link.split(">", 1)[0].lstrip("<") if link else ""
    return took


def page_numbers(service: Service, passes: int = 5) -> dict[str, Any]:
    with httpx.Client(base_url=service.url, timeout=60) as client:
        out: dict[str, Any] = {}
        for path in ("/dashboard", "/lockfiles"):
            cold = pages(client, path)
            warm = [t for _ in range(passes) for t in pages(client, path)]
            body = client.get(f"{path}?limit=100").content
            out[path] = {"pages": len(cold), "cold_first_pass_s": sum(cold), "p50_ms": statistics.median(warm) * 1e3,
                         "p90_ms": sorted(warm)[int(len(warm) * 0.9)] * 1e3, "page_bytes": len(body)}
        return out


def awareness_paths(count: int) -> list[str]:
    return [f"/servers/fleet-{i:04d}/awareness?tool=get_invoice" for i in range(count)]


def warm(service: Service, paths: list[str]) -> None:
    with httpx.Client(base_url=service.url, timeout=30) as client:
        for path in paths:
            for _ in range(2):
                response = client.get(path)
                if response.status_code != 200:
                    raise RuntimeError(f"{path}: {response.status_code} {response.text[:300]}")


def alternate(tool: str, phases: list[tuple[str, str, list[str]]], connections: int, seconds: float,
              rounds: int) -> dict[str, LoadResult]:
    """Run each (name, base url, paths) phase ``rounds`` times, alternated; merged per name."""
    merged: dict[str, LoadResult] = {}
    for _ in range(rounds):
        for name, url, paths in phases:
            result = run_load(tool, url, paths, connections, seconds)
            total = merged.setdefault(name, LoadResult())
            total.requests += result.requests
            total.duration_s += result.duration_s
            total.errors += result.errors
            total.non_2xx += result.non_2xx
            total.max_us = max(total.max_us, result.max_us)
            for latency, weight in result.weights.items():
                total.add(latency, weight)
    return merged


def live_burst(url: str, servers: list[str], surface: dict[str, Any]) -> list[float]:
    """PUT one live report to each server at once (one thread each); their latencies."""
    barrier = threading.Barrier(len(servers))

    def one(server: str) -> float:
        with httpx.Client(base_url=url, timeout=60) as client:
            barrier.wait()
            began = time.perf_counter()
            response = client.put(f"/servers/{server}/live", json=surface)
            took = time.perf_counter() - began
            if response.status_code != 200:
                raise RuntimeError(f"{server}: {response.status_code} {response.text[:200]}")
            return took

    with concurrent.futures.ThreadPoolExecutor(len(servers)) as pool:
        return list(pool.map(one, servers))


def p99(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]


def live_reports(url: str, rounds: int = 3, tools: int = 500) -> dict[str, Any]:
    """200 live reports of 200 servers at once, alone and beside a loop locking another server
    (a ``tools``-tool surface: 500 costs the process CPU, 3 almost none, so the second isolates
    waiting from sharing the CPU)."""
    from bench.synthetic import synthetic_surface

    servers = [f"fleet-{i:04d}" for i in range(200)]
    alone: list[float] = []
    beside: list[float] = []
    big = synthetic_surface(seed=11, tools=tools)
    big_changed = synthetic_surface(seed=12, tools=tools)
    locks = 0
    for round_ in range(rounds):
        alone += live_burst(url, servers, surface_doc(round_, -1))
        stop_flag = threading.Event()

        def locker(stop_flag: threading.Event = stop_flag) -> None:
            nonlocal locks
            with httpx.Client(base_url=url, timeout=120) as client:
                flip = 0
                while not stop_flag.is_set():
                    flip += 1
                    client.post("/lock", json={"server": f"unrelated-{tools}", "approved_by": "bench",
                                               "surface": big if flip % 2 else big_changed})
                    locks += 1

        thread = threading.Thread(target=locker)
        thread.start()
        time.sleep(0.3)
        beside += live_burst(url, servers, surface_doc(round_ + 100, -1))
        stop_flag.set()
        thread.join(120)
    return {"reports": len(alone), "alone_p50_ms": statistics.median(alone) * 1e3, "alone_p99_ms": p99(alone) * 1e3,
            "beside_lock_p50_ms": statistics.median(beside) * 1e3, "beside_lock_p99_ms": p99(beside) * 1e3,
            "p99_ratio": p99(beside) / p99(alone), "unrelated_locks_done": locks}


# --- main --------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--servers", type=int, default=1000)
    parser.add_argument("--versions", type=int, default=10)
    parser.add_argument("--seconds", type=float, default=4.0, help="seconds per load phase (default 4)")
    parser.add_argument("--rounds", type=int, default=3, help="alternations of each load pair (default 3)")
    parser.add_argument("--workers", type=int, default=2,
                        help="worker processes of the replica under awareness and lock load (default 2, one per CPU)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    tool = "wrk" if wrk_path() else "python"
    report: dict[str, Any] = {"generator": tool, "servers": args.servers, "versions": args.versions,
                              "cpus": os.cpu_count()}
    print(f"fleet_bench: seeding {args.servers} servers x {args.versions} versions (generator: {tool})",
          file=sys.stderr)
    seeds = make_seeds(args.servers, args.versions)
    small = seeds[:100]
    with tempfile.TemporaryDirectory(prefix="fleet-bench-") as tmp:
        work = Path(tmp)
        big_dir, small_dir, empty_dir = work / "big", work / "small", work / "empty"
        seed_directory(big_dir, seeds)
        seed_directory(small_dir, small)
        empty_dir.mkdir()
        big_pg, small_pg, empty_pg = new_schema(), new_schema(), new_schema()
        try:
            seed_postgres(big_pg, seeds)
            seed_postgres(small_pg, small)
            stores = {"directory": (str(big_dir), str(small_dir), str(empty_dir)),
                      "postgresql": (big_pg, small_pg, empty_pg)}
            for kind, (big, little, empty) in stores.items():
                print(f"fleet_bench: {kind}: ready times, pages", file=sys.stderr)
                with serve(empty, work / f"{kind}-empty.log") as base:
                    baseline_ready = base.ready_s
                with serve(big, work / f"{kind}-big.log") as service:
                    numbers: dict[str, Any] = {"ready_s": service.ready_s, "ready_empty_store_s": baseline_ready}
                    numbers["pages"] = page_numbers(service)
                    with serve(little, work / f"{kind}-small.log") as small_service:
                        print(f"fleet_bench: {kind}: awareness at 100 and {args.servers} servers", file=sys.stderr)
                        warm(service, awareness_paths(args.servers))
                        warm(small_service, awareness_paths(100))
                        with httpx.Client(base_url=service.url, timeout=60) as client:
                            pages(client, "/dashboard")  # every server read
                        with httpx.Client(base_url=small_service.url, timeout=60) as client:
                            pages(client, "/dashboard")
                        rss_big, rss_small = rss_mib(service.process.pid), rss_mib(small_service.process.pid)
                        numbers["memory"] = {"rss_mib_big": rss_big, "rss_mib_100": rss_small,
                                             "mib_per_server": (rss_big - rss_small) / (args.servers - 100)}
                        merged = alternate(tool, [
                            ("at_100", small_service.url, awareness_paths(100)),
                            ("at_all", service.url, awareness_paths(args.servers))], 64, args.seconds, args.rounds)
                    numbers["awareness_scaling"] = {
                        "at_100": merged["at_100"].summary(), f"at_{args.servers}": merged["at_all"].summary(),
                        "rps_ratio": merged["at_all"].rps / merged["at_100"].rps,
                        "p99_ratio": merged["at_all"].percentile(99) / merged["at_100"].percentile(99)}
                    with serve(big, work / f"{kind}-replica.log", workers=args.workers) as replica:
                        print(f"fleet_bench: {kind}: awareness against /healthz at 64 connections, "
                              f"{args.workers} workers", file=sys.stderr)
                        paths = awareness_paths(args.servers)
                        for _ in range(args.workers * 3):  # every worker's cache (a worker takes any request)
                            warm(replica, paths)
                        merged = alternate(tool, [("healthz", replica.url, ["/healthz"]),
                                                  ("awareness", replica.url, paths)], 64, args.seconds, args.rounds)
                        numbers["awareness_vs_healthz"] = {
                            "workers": args.workers,
                            "healthz": merged["healthz"].summary(), "awareness": merged["awareness"].summary(),
                            "rps_ratio": merged["awareness"].rps / merged["healthz"].rps,
                            "awareness_p99_ms": merged["awareness"].percentile(99) * 1e3}
                        print(f"fleet_bench: {kind}: POST /lock of the 500-tool surface", file=sys.stderr)
                        with httpx.Client(base_url=replica.url, timeout=120) as client:
                            numbers["lock_500_tools"] = time_locks(client, 7, 9).to_json()
                            numbers["lock_500_tools"].pop("samples_s", None)
                    print(f"fleet_bench: {kind}: 200 live reports at once", file=sys.stderr)
                    numbers["live_200"] = live_reports(service.url)
                    numbers["live_200_small_lock"] = live_reports(service.url, tools=3)
                report[kind] = numbers
        finally:
            for url in (big_pg, small_pg, empty_pg):
                drop_schema(url)
    pg = report["postgresql"]
    report["pg_lock_p50_vs_directory"] = pg["lock_500_tools"]["p50_s"] / report["directory"]["lock_500_tools"]["p50_s"]
    report["targets"] = {
        "pg_awareness_vs_healthz_ratio>=0.8": pg["awareness_vs_healthz"]["rps_ratio"] >= 0.8,
        "pg_awareness_p99<10ms": pg["awareness_vs_healthz"]["awareness_p99_ms"] < 10,
        "pg_lock_500_p50<300ms": pg["lock_500_tools"]["p50_s"] < 0.3,
        **{f"{kind}_ready<2s": report[kind]["ready_s"] < 2 for kind in ("directory", "postgresql")},
        **{f"{kind}_{path}_page_p50<30ms": report[kind]["pages"][path]["p50_ms"] < 30
           for kind in ("directory", "postgresql") for path in ("/dashboard", "/lockfiles")},
    }
    if args.json:
        print(json.dumps(report, indent=2, default=str))
    else:
        print(json.dumps(report, indent=1, default=str))
    return 0 if all(report["targets"].values()) else 1


if __name__ == "__main__":
    raise SystemExit(main())
