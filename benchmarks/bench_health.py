"""``/v1/health`` latency while 40 clients POST uncached plans (a distinct k each).

Starts ``planner serve --workers 1`` on 127.0.0.1 (a free port, a throw-away database),
times ``GET /v1/health`` (a fresh connection every 20 ms) for 1 s idle, then while 40
client threads, each with one keep-alive connection, POST /v1/plan for ``--seconds``
(shuffle, k = 1000, 1007, 1014, …: every plan computed, about 10-20 ms each). The load
runs in its own process: its 40 threads would otherwise hold up the poller's own turns at
the interpreter lock. Prints p50/p90/p99/max of each, and the plans' rate and latencies.

Run: python benchmarks/bench_health.py [--clients 40] [--seconds 8] [--workers 1]
"""

from __future__ import annotations

import argparse
import http.client
import itertools
import json
import multiprocessing
import statistics
import tempfile
import threading
import time
from pathlib import Path

from bench_service import free_port, start_server  # this folder's: one way to start a server


def load(port: int, clients: int, seconds: float, results: multiprocessing.Queue) -> None:
    """``clients`` threads POST distinct uncached plans for ``seconds``; their latencies."""
    end = time.monotonic() + seconds
    ks = itertools.count(1000, 7)
    lock = threading.Lock()
    latencies: list[float] = []

    def client() -> None:
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        while time.monotonic() < end:
            with lock:
                k = next(ks)
            body = {"model": "shuffle", "k": k, "alpha": 0.1, "eps1": 1, "eps2": 0.25}
            start = time.perf_counter()
            connection.request(
                "POST",
                "/v1/plan",
                json.dumps({**body, "delta": 1e-6}),
                {"Content-Type": "application/json"},
            )
            connection.getresponse().read()
            latencies.append(time.perf_counter() - start)

    threads = [threading.Thread(target=client) for _ in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    results.put(latencies)


def poll(port: int, seconds: float) -> list[float]:
    """Seconds each ``GET /v1/health`` took, one every 20 ms for ``seconds``."""
    latencies = []
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        start = time.perf_counter()
        connection.request("GET", "/v1/health")
        response = connection.getresponse()
        response.read()
        latencies.append(time.perf_counter() - start)
        assert response.status == 200, response.status
        connection.close()
        time.sleep(0.02)
    return latencies


def shown(latencies: list[float]) -> str:
    ordered = sorted(latencies)

    def at(share: float) -> float:
        return 1000 * ordered[min(len(ordered) - 1, int(share * len(ordered)))]

    return (
        f"n={len(ordered)} p50={1000 * statistics.median(ordered):.1f} ms "
        f"p90={at(0.9):.1f} ms p99={at(0.99):.1f} ms max={1000 * ordered[-1]:.1f} ms"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=40)
    parser.add_argument("--seconds", type=float, default=8.0)
    parser.add_argument("--workers", type=int, default=1)
    options = parser.parse_args()
    port = free_port()
    with tempfile.TemporaryDirectory() as folder:
        server = start_server(port, Path(folder), options.workers)
        try:
            idle = poll(port, 1.0)
            results: multiprocessing.Queue = multiprocessing.Queue()
            loader = multiprocessing.Process(
                target=load, args=(port, options.clients, options.seconds, results)
            )
            loader.start()
            time.sleep(0.5)  # the load under way
            loaded = poll(port, options.seconds - 1.0)
            plans = results.get()
            loader.join()
        finally:
            server.terminate()
            server.wait(timeout=30)
    print(f"health, idle:       {shown(idle)}")
    print(f"health, under load: {shown(loaded)}")
    rate = len(plans) / options.seconds
    print(f"plans ({options.clients} clients): {shown(plans)} ({rate:.0f}/s)")


if __name__ == "__main__":
    main()
