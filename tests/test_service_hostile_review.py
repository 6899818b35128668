"""Defects a hostile review of the service found (each test failed before its fix)."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from planner.service.app import request_host

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def served(monkeypatch, tmp_path: Path, *options: str) -> dict[str, Any]:
    """What ``planner serve`` hands uvicorn (the app and its settings), without serving
    (the caller closes the app's store)."""
    import uvicorn

    from planner.cli import main

    seen: dict[str, Any] = {}

    def run(app: Any, **settings: Any) -> None:
        seen.update(settings, app=app)

    monkeypatch.setattr(uvicorn, "run", run)
    database = str(tmp_path / "jobs.sqlite3")
    arguments = ["serve", "--port", str(free_port()), "--db", database, "--workers", "1"]
    assert main([*arguments, *options]) == 0
    return seen


@pytest.mark.parametrize(
    ("header", "host"),
    [
        ("localhost:8000", "localhost"),
        ("127.0.0.1", "127.0.0.1"),
        ("[::1]:8000", "[::1]"),
        ("LOCALHOST", "localhost"),
        ("attacker.example:18431", "attacker.example"),
        ("[::1", None),
        ("localhost:80x", None),
        ("", None),
    ],
)
def test_request_host_reads_a_host_header(header: str, host: str | None) -> None:
    assert request_host(header) == host


def test_a_server_without_a_token_answers_only_loopback_host_names(
    monkeypatch, tmp_path: Path
) -> None:
    """DNS rebinding: ``Host: attacker.example:18431`` had been answered by a token-less
    server on loopback."""
    app = served(monkeypatch, tmp_path)["app"]
    client = TestClient(app)
    for host in ("localhost:8000", "127.0.0.1:18431", "[::1]:8000", "localhost"):
        assert client.get("/v1/version", headers={"Host": host}).status_code == 200, host
    for host in ("attacker.example:18431", "attacker.example", "127.0.0.1.nip.io", "[::1"):
        for path in ("/v1/validations", "/", "/v1/health"):
            response = client.get(path, headers={"Host": host})
            assert response.status_code == 400, (host, path)
            body = response.json()
            assert body["parameter"] == "host" and "must be localhost" in body["error"]
            assert "\n" not in body["error"]
    app.state.service.store.close()


def test_a_server_with_a_token_takes_any_host(monkeypatch, tmp_path: Path) -> None:
    """A token guards a server on any address: its own name must reach it."""
    monkeypatch.setenv("PLANNER_TOKEN", "a-long-enough-token-123")
    app = served(monkeypatch, tmp_path)["app"]
    response = TestClient(app).get("/v1/health", headers={"Host": "planner.internal:8000"})
    assert response.status_code == 200
    app.state.service.store.close()


SLOW_PAGE = "/?setting=compare&k=6&alpha=0.2&eps1=5&eps2=0.02&delta=1e-10&beta=0.001"
"""The hostile review's page query: 26 s of compare, answered 200 past the API's cap."""


def test_the_page_stops_at_the_services_cap_per_request(tmp_path: Path) -> None:
    import time

    from planner.service import create_app

    app = create_app(tmp_path / "jobs.sqlite3", run_jobs=False, request_time_limit=0.5)
    with TestClient(app) as client:
        start = time.monotonic()
        response = client.get(SLOW_PAGE)
        assert time.monotonic() - start < 10  # had run on for 26 s
        assert response.status_code == 503, response.status_code
        assert "the service&#x27;s cap per request" in response.text
        assert 'id="form-error"' in response.text and 'id="k"' in response.text  # the form


def test_the_pages_plot_takes_the_apis_cap_of_concurrent_sweeps(tmp_path: Path) -> None:
    from planner.service import create_app

    app = create_app(tmp_path / "jobs.sqlite3", run_jobs=False)
    sweeps = app.state.service.sweeps
    with TestClient(app) as client:
        assert sweeps.acquire(blocking=False) and sweeps.acquire(blocking=False)  # both taken
        try:
            response = client.get("/?setting=central&k=1000&alpha=0.1&eps1=1&eps2=0.25")
        finally:
            sweeps.release()
            sweeps.release()
        assert response.status_code == 429 and response.headers["retry-after"] == "5"
        assert "No plot now" in response.text and "<svg" not in response.text
        assert 'data-field="' in response.text  # the plan itself is shown
        again = client.get("/?setting=central&k=1000&alpha=0.1&eps1=1&eps2=0.25")
        assert again.status_code == 200 and "<svg" in again.text
        assert sweeps.acquire(blocking=False)  # the page gave its permit back
        sweeps.release()


def test_serve_bounds_connections_keep_alive_and_shutdown(monkeypatch, tmp_path: Path) -> None:
    """uvicorn had run with no ``limit_concurrency`` and no graceful-shutdown timeout."""
    import resource

    from planner.service.server import uvicorn_limits

    seen = served(monkeypatch, tmp_path)
    seen["app"].state.service.store.close()
    assert seen["timeout_keep_alive"] == 5 and seen["timeout_graceful_shutdown"] == 10
    assert 16 <= seen["limit_concurrency"] <= 1000
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (512, hard))
        assert uvicorn_limits()["limit_concurrency"] == 256  # room left for its own files
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


@pytest.mark.heavy
@pytest.mark.serial
def test_sigterm_ends_the_server_while_a_request_body_is_still_coming(tmp_path: Path) -> None:
    """SIGTERM had hung for as long as a client kept its request's body unfinished."""
    import signal
    import subprocess
    import time

    from tests.servers import start_server

    port = free_port()
    server = start_server(port, tmp_path / "jobs.sqlite3", "--workers", "1")
    try:
        slow = socket.create_connection(("127.0.0.1", port))
        slow.sendall(
            b"POST /v1/plan HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            b"Content-Length: 100\r\n\r\n{"
        )
        time.sleep(0.5)  # the request is in the app, waiting for the rest of its body
        server.send_signal(signal.SIGTERM)
        start = time.monotonic()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            pytest.fail("the server was still running 30 s after SIGTERM")
        assert time.monotonic() - start < 20
        slow.close()
    finally:
        if server.poll() is None:
            server.kill()
            server.wait(timeout=5)


def test_head_answers_and_every_answer_carries_the_security_headers(tmp_path: Path) -> None:
    """``HEAD /`` and ``HEAD /v1/health`` had been 405; no answer had said nosniff, the
    page could be framed by any site, and job reports had no Cache-Control."""
    from planner.service import create_app

    app = create_app(tmp_path / "jobs.sqlite3", run_jobs=False)
    with TestClient(app) as client:
        for path in ("/", "/v1/health"):
            response = client.head(path)
            assert response.status_code == 200 and response.content == b"", path
        job = client.post(
            "/v1/validations",
            json={"model": "central", "k": 64, "alpha": 0.3, "eps1": 1, "eps2": 0.5},
        ).json()
        for path in ("/", "/v1/health", "/v1/version", "/v1/nowhere", "/v1/validations"):
            headers = client.get(path).headers
            assert headers["x-content-type-options"] == "nosniff", path
            assert headers["x-frame-options"] == "DENY", path
            assert headers["content-security-policy"] == "frame-ancestors 'none'", path
        for path in ("/v1/validations", f"/v1/validations/{job['id']}", f"/jobs/{job['id']}"):
            assert client.get(path).headers["cache-control"] == "no-store", path
        assert "no-store" not in client.get("/static/calculator.css").headers["cache-control"]


def test_a_500_carries_the_security_headers_and_one_json_line(tmp_path: Path, monkeypatch) -> None:
    """A bug in a route (an unhandled exception) was answered by Starlette's outermost
    middleware, outside the one that adds the headers: no nosniff, no frame refusal, and a
    job's 500 no ``Cache-Control: no-store``."""
    from planner import api
    from planner.service import create_app

    def broken(*_: Any, **__: Any) -> Any:
        raise RuntimeError("a bug\nTraceback (most recent call last): secret")

    app = create_app(tmp_path / "jobs.sqlite3", run_jobs=False)
    try:
        with TestClient(app, raise_server_exceptions=False) as client:
            monkeypatch.setattr(api, "explain_document", broken)
            monkeypatch.setattr(api, "plan_document", broken)  # the fast path's
            monkeypatch.setattr(app.state.service.store, "get", broken)
            plan = {"model": "central", "k": 1000, "alpha": 0.1, "eps1": 1, "eps2": 0.5}
            answers = {
                "/v1/explain": client.get("/v1/explain?model=central"),
                "/v1/plan": client.post("/v1/plan", json=plan),
                "/v1/validations/…": client.get("/v1/validations/" + "0" * 32),
            }
            for path, response in answers.items():
                assert response.status_code == 500, (path, response.text)
                headers = response.headers
                assert headers["x-content-type-options"] == "nosniff", path
                assert headers["x-frame-options"] == "DENY", path
                assert headers["content-security-policy"] == "frame-ancestors 'none'", path
                assert headers["content-type"] == "application/json", path
                assert response.json() == {"error": "internal error: RuntimeError"}, path
                assert "\n" not in response.text and "Traceback" not in response.text
            assert answers["/v1/validations/…"].headers["cache-control"] == "no-store"
    finally:
        app.state.service.store.close()


def test_uncached_plans_wait_on_no_planners_lock_on_the_event_loop_while_threads_compute(
    tmp_path: Path, monkeypatch
) -> None:
    """An uncached plan was first computed on the event loop (10 ms deadline) even while
    the thread pool computed others: in a burst each such attempt held the loop, where
    ``/v1/health`` answers, and one that met a value another thread was computing (the
    planner's ``ComputedOnce``) waited for it there, checking its deadline every 50 ms.
    40 clients posting distinct plans held ``/v1/health`` for 3.6 s at the median, 6.3 s
    at most (a real server on two cores, ``benchmarks/bench_health.py``). Here 30 plans
    share one slow value: every one had been tried on the loop first."""
    import asyncio
    import threading
    import time

    import httpx

    from planner import api
    from planner.formulas.search import check_deadline
    from planner.protocols.base import ComputedOnce
    from planner.service import create_app

    def slow(key: int) -> int:  # a noise level every plan needs, 2 s to compute
        end = time.monotonic() + 2.0
        while time.monotonic() < end:
            time.sleep(0.005)
            check_deadline()
        return key

    shared = ComputedOnce(slow, maxsize=4)
    on_the_loop: list[float] = []

    def plan_document(**fields: Any) -> dict[str, Any]:
        started = time.monotonic()
        try:
            return {"k": fields["k"], "shared": shared(0)}
        finally:
            if threading.current_thread() is threading.main_thread():  # asyncio.run's loop
                on_the_loop.append(time.monotonic() - started)

    monkeypatch.setattr(api, "plan_document", plan_document)
    app = create_app(tmp_path / "jobs.sqlite3", run_jobs=False)

    async def burst() -> tuple[float, list[httpx.Response]]:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as client:
            query = {"model": "central", "alpha": 0.1, "eps1": 1, "eps2": 0.5}
            plans = [
                asyncio.create_task(client.post("/v1/plan", json={**query, "k": 1000 + i}))
                for i in range(30)
            ]
            waits, end = [], time.monotonic() + 1.0
            while time.monotonic() < end:  # polled while the plans are under way
                started = time.monotonic()
                assert (await client.get("/v1/health")).status_code == 200
                waits.append(time.monotonic() - started)
            return max(waits), await asyncio.gather(*plans)

    try:
        health, plans = asyncio.run(burst())
    finally:
        app.state.service.store.close()
    assert [plan.status_code for plan in plans] == [200] * 30
    assert len(on_the_loop) <= 1, on_the_loop  # only the first, while no thread computed
    assert sum(on_the_loop) < 0.1, on_the_loop
    assert health < 0.3, health
