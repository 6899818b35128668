"""A real ``planner serve`` (uvicorn) on 127.0.0.1 for the tests that need one."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def call(port: int, method: str, path: str, body: dict | None = None) -> tuple[int, dict]:
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}{path}",
        data=None if body is None else json.dumps(body).encode(),
        method=method,
        headers={"Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def start_server(port: int, database: Path, *options: str) -> subprocess.Popen[bytes]:
    """``planner serve`` on 127.0.0.1:``port`` (one job at a time, plus ``options``), once
    it answers ``/v1/health``."""
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "planner",
            "serve",
            "--port",
            str(port),
            "--db",
            str(database),
            "--jobs",
            "1",
            *options,
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise AssertionError(server.stderr.read().decode() if server.stderr else "exited")
        try:
            if call(port, "GET", "/v1/health")[0] == 200:
                return server
        except OSError:
            time.sleep(0.1)
    server.kill()
    raise AssertionError("the server did not answer within 60 s")


def stop_server(server: subprocess.Popen[bytes]) -> None:
    """SIGTERM (the service's graceful shutdown), then SIGKILL if it is not gone in 15 s."""
    server.send_signal(signal.SIGTERM)
    try:
        server.wait(timeout=15)
    except subprocess.TimeoutExpired:
        server.kill()
        server.wait(timeout=5)
