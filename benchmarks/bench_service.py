"""Service load: plans per second and latency at 8 concurrent clients against a real uvicorn.

Starts ``planner serve`` on 127.0.0.1 (a free port, a throw-away database), then 8 client
threads, each with one keep-alive connection, POST /v1/plan until ``--requests`` in all
have been answered or ``--seconds`` have passed (both bounded), after a short warm-up —
twice: with distinct queries (k = 16…4096, every plan computed) and with one repeated
query (answered from the server's cache of recent plans). Prints plans/s, p50/p99/max
latency of each beside the in-process cost of one plan through
:func:`planner.api.plan_document` and the JSON encoding. The load generator runs on the
same machine (2 cores): its cost is included, as the goal says.

Run: python benchmarks/bench_service.py [--clients 8] [--requests 4000] [--seconds 30]
[--workers N] (``planner serve --workers``; default: the server's own default)
"""

from __future__ import annotations

import argparse
import http.client
import json
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from planner import api

QUERY = {"model": "shuffle", "k": 1000, "alpha": 0.1, "eps1": 1, "eps2": 0.25, "delta": 1e-6}
GOAL_RATE, GOAL_P99_MS = 1000.0, 50.0


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def start_server(port: int, folder: Path, workers: int | None = None) -> subprocess.Popen[bytes]:
    database = folder / "bench.sqlite3"
    processes = [] if workers is None else ["--workers", str(workers)]
    server = subprocess.Popen(
        [
            sys.executable,
            *("-m", "planner", "serve", "--port", str(port), "--db", str(database)),
            *processes,
        ],
        stdout=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            connection.request("GET", "/v1/health")
            if connection.getresponse().status == 200:
                return server
        except OSError:
            time.sleep(0.1)
    server.kill()
    raise SystemExit("the server did not start within 60 s")


def in_process_us(repeats: int = 2000) -> float:
    """Median µs of plan_document + json.dumps for QUERY (what one request computes)."""
    api.plan_document(**QUERY)
    samples = []
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(repeats // 5):
            json.dumps(api.plan_document(**QUERY))
        samples.append((time.perf_counter() - start) / (repeats // 5) * 1e6)
    return statistics.median(samples)


def client(
    port: int,
    bodies: list[bytes],
    stop: threading.Event,
    budget: list[int],
    lock: threading.Lock,
    latencies: list[float],
    errors: list[str],
) -> None:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    headers = {"Content-Type": "application/json"}
    while not stop.is_set():
        with lock:
            if budget[0] <= 0:
                return
            budget[0] -= 1
            body = bodies[budget[0] % len(bodies)]
        start = time.perf_counter()
        try:
            connection.request("POST", "/v1/plan", body=body, headers=headers)
            response = connection.getresponse()
            payload = response.read()
        except (OSError, http.client.HTTPException) as error:
            errors.append(repr(error))
            connection.close()
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
            continue
        elapsed = time.perf_counter() - start
        if response.status != 200 or b'"n_users_group1"' not in payload:
            errors.append(f"status {response.status}")
        latencies.append(elapsed)
    connection.close()


def load(
    port: int, clients: int, requests: int, seconds: float, bodies: list[bytes]
) -> dict[str, float]:
    stop = threading.Event()
    budget, lock = [requests], threading.Lock()
    latencies: list[float] = []
    errors: list[str] = []
    threads = [
        threading.Thread(
            target=client,
            args=(port, bodies, stop, budget, lock, latencies, errors),
            daemon=True,
        )
        for _ in range(clients)
    ]
    start = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=max(0.0, seconds - (time.perf_counter() - start)))
    stop.set()
    for thread in threads:
        thread.join(timeout=15)
    elapsed = time.perf_counter() - start
    ordered = sorted(latencies)
    if not ordered:
        raise SystemExit(f"no request answered; errors: {errors[:3]}")
    return {
        "clients": clients,
        "requests": len(ordered),
        "errors": len(errors),
        "seconds": elapsed,
        "plans_per_second": len(ordered) / elapsed,
        "p50_ms": ordered[len(ordered) // 2] * 1e3,
        "p99_ms": ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))] * 1e3,
        "max_ms": ordered[-1] * 1e3,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--requests", type=int, default=4000)
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument(
        "--workers", type=int, default=None, help="planner serve --workers (default: its own)"
    )
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    options = parser.parse_args()
    if not (1 <= options.clients <= 64 and 1 <= options.requests <= 10**6):
        raise SystemExit("--clients in [1, 64], --requests in [1, 1e6]")
    cost = in_process_us()
    repeated = [json.dumps(QUERY).encode()]
    distinct = [json.dumps({**QUERY, "k": k}).encode() for k in range(16, 4097)]
    results = {}
    with tempfile.TemporaryDirectory() as folder:
        port = free_port()
        server = start_server(port, Path(folder), options.workers)
        try:
            load(port, options.clients, min(500, options.requests), 10.0, repeated)  # warm-up
            for name, bodies in (("distinct", distinct), ("repeated", repeated)):
                results[name] = load(
                    port, options.clients, options.requests, options.seconds, bodies
                )
        finally:
            server.terminate()
            server.wait(timeout=15)
    for figures in results.values():
        figures["goal_met"] = (
            figures["plans_per_second"] >= GOAL_RATE and figures["p99_ms"] <= GOAL_P99_MS
        )
    if options.json:
        print(json.dumps({"in_process_us_per_plan": cost, **results}, indent=2))
        return
    print(f"POST /v1/plan (shuffle-private) on uvicorn, {options.clients} concurrent clients:")
    labels = {
        "distinct": "distinct queries (k = 16…4096: every plan computed)",
        "repeated": "one repeated query (answered from the server's cache of recent plans)",
    }
    for name, figures in results.items():
        print(f"  {labels[name]}:")
        print(
            f"    {figures['requests']:,} plans in {figures['seconds']:.2f} s = "
            f"{figures['plans_per_second']:,.0f} plans/s; latency p50 "
            f"{figures['p50_ms']:.1f} ms, p99 {figures['p99_ms']:.1f} ms, max "
            f"{figures['max_ms']:.1f} ms; {figures['errors']} errors; goal ≥ {GOAL_RATE:.0f} "
            f"plans/s and p99 ≤ {GOAL_P99_MS:.0f} ms "
            + ("met" if figures["goal_met"] else "NOT met")
        )
    print(f"  in-process plan + JSON (k = 1000): {cost:.0f} µs")


if __name__ == "__main__":
    main()
