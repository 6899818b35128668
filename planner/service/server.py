"""Run the service on uvicorn: ``planner serve`` (loopback by default; a token elsewhere)."""

from __future__ import annotations

import contextlib
import copy
import json
import logging
import os
import socket
import sqlite3
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, TypedDict
from urllib.parse import unquote_plus

from planner.inputs import InputError
from planner.service.hosts import is_loopback

REDACTED = "token=[redacted]"


def redacted_path(path: str) -> str:
    """A request's path and query with the value of every ``token`` parameter replaced
    (``GET /?token=…`` sets the page's cookie): an access log must not hold the token.
    The names are read as the app reads them (percent-decoded: ``%74oken`` is ``token``)."""
    route, mark, query = path.partition("?")
    if not mark:
        return path
    pieces = [
        REDACTED if unquote_plus(piece.partition("=")[0]) == "token" else piece
        for piece in query.split("&")
    ]
    return f"{route}?{'&'.join(pieces)}"


class RedactToken(logging.Filter):
    """uvicorn's access log line with :func:`redacted_path` (its arguments are the client,
    method, path with query, HTTP version and status)."""

    def filter(self, record: logging.LogRecord) -> bool:
        arguments = record.args
        if isinstance(arguments, tuple) and len(arguments) >= 3 and isinstance(arguments[2], str):
            record.args = (*arguments[:2], redacted_path(arguments[2]), *arguments[3:])
        return True


def access_log_config() -> dict[str, Any]:
    """uvicorn's logging configuration with :class:`RedactToken` on its access lines."""
    from uvicorn.config import LOGGING_CONFIG

    config = copy.deepcopy(LOGGING_CONFIG)
    config.setdefault("filters", {})["redact_token"] = {"()": RedactToken}
    config["handlers"]["access"].setdefault("filters", []).append("redact_token")
    return config


def service_url(host: str, port: int) -> str:
    """The address to open, an IPv6 host in brackets (``http://[::1]:8000/``: a review
    found ``http://::1:8000/``, which no browser opens)."""
    shown = f"[{host}]" if ":" in host and not host.startswith("[") else host
    return f"http://{shown}:{port}/"


def check_binding(host: str, token: str | None) -> None:
    """A non-loopback address needs a token (Bearer) — raise the one-line error if not. A token
    is at least 16 printable ASCII characters with none blank at either end: a request's
    token is read with its surrounding blanks dropped, so a token ending in a space (an
    env file's trailing blank) had started a server no request could reach, and 20
    spaces had passed as a token."""
    if token is not None and (
        len(token) < 16 or token != token.strip() or not token.isascii() or not token.isprintable()
    ):
        # ASCII: an HTTP header's bytes are read as Latin-1, so a token of other
        # characters (pässwörd…) could not arrive in a Bearer header (a second review)
        raise InputError(
            "token",
            "…",
            "at least 16 printable ASCII characters, with no blank at either end",
        )
    if not is_loopback(host) and token is None:
        raise InputError(
            "host",
            host,
            "a loopback address (127.0.0.1, ::1, localhost) unless --token is given",
        )


def check_port(host: str, port: int) -> None:
    """Refuse, with one line, an address this process cannot listen on (e.g. in use)."""
    try:
        found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError as error:
        reason = error.strerror or str(error)
        raise InputError("host", host, f"an address of this machine ({reason})") from None
    family, kind, _, _, address = found[0]
    try:
        with socket.socket(family, kind) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            probe.bind(address)
    except OSError as error:
        reason = error.strerror or str(error)
        raise InputError("port", port, f"a port free to listen on at {host} ({reason})") from None


CONNECTIONS_PER_PROCESS = 1000
"""uvicorn's ``limit_concurrency``: past this many open connections (and tasks) in one HTTP
process a request is answered 503 at once; lowered to half the process's open-file limit
when that is smaller (:func:`uvicorn_limits`)."""
KEEP_ALIVE_SECONDS = 5
"""uvicorn's ``timeout_keep_alive``: an idle keep-alive connection is closed after this."""
SHUTDOWN_SECONDS = 10
"""uvicorn's ``timeout_graceful_shutdown``: after SIGTERM or Ctrl-C, requests still open
(a client sending its body slowly, or never) are cancelled after this."""


class UvicornLimits(TypedDict):
    limit_concurrency: int
    timeout_keep_alive: int
    timeout_graceful_shutdown: int


def uvicorn_limits() -> UvicornLimits:
    """uvicorn's settings for slow and many clients, which it leaves unbounded by default.

    A hostile review: 600 connections that sent part of a request, under ``ulimit -n 512``,
    made the service unreachable, and SIGTERM hung while a partial request was open.
    uvicorn has no timeout for reading a request's headers or body (docs/service.md says
    what a reverse proxy adds)."""
    import resource

    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    connections = CONNECTIONS_PER_PROCESS
    if soft != resource.RLIM_INFINITY:
        connections = max(16, min(connections, soft // 2))  # room for the store, the jobs
    return {
        "limit_concurrency": connections,
        "timeout_keep_alive": KEEP_ALIVE_SECONDS,
        "timeout_graceful_shutdown": SHUTDOWN_SECONDS,
    }


HTTP_PROCESS_ENV = "PLANNER_SERVE_HTTP_PROCESS"
"""Set (JSON: the listening socket's descriptor and the app's settings) in the
environment of ``planner serve --workers N``'s other HTTP processes."""
TOKEN_ENV = "PLANNER_TOKEN"


def default_http_workers(scheduler: str | None = None) -> int:
    """``planner serve``'s HTTP processes unless ``--workers`` says: one per core this
    process may run on, at most 4; one with ``--scheduler`` (whose client lives in the
    process that runs the jobs)."""
    if scheduler is not None:
        return 1
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        cores = os.cpu_count() or 1
    return max(1, min(cores, 4))


def serve(
    *,
    host: str,
    port: int,
    database: Path,
    workers: int,
    token: str | None,
    time_limit: float,
    scheduler: str | None = None,
    access_log: bool = False,
    http_workers: int = 1,
) -> None:
    """Serve until interrupted (Ctrl-C or SIGTERM end running jobs as ``interrupted``).
    ``scheduler``: run the jobs on that dask scheduler's cluster (checked before serving:
    one line naming ``scheduler`` if it does not answer or its workers differ).
    ``access_log``: uvicorn's line per request on stderr (off: warnings only).
    ``http_workers``: processes answering HTTP on the one listening socket; this one holds
    the database's lock and runs the jobs, the others (:func:`serve_http_process`, started
    here, ended with it) store and read jobs in the same database."""
    import uvicorn

    from planner.service.app import create_app

    check_binding(host, token)
    check_port(host, port)
    if http_workers > 1 and scheduler is not None:
        raise InputError("workers", http_workers, "1 with --scheduler")
    client = None
    if scheduler is not None:
        from planner.cluster import connect, scheduler_address

        client = connect(scheduler)
        scheduler = scheduler_address(scheduler)
    others: list[subprocess.Popen[bytes]] = []
    try:
        try:
            app = create_app(
                database,
                workers=workers,
                token=token,
                time_limit=time_limit,
                client=client,
                loopback_hosts_only=token is None,  # DNS rebinding (a hostile review)
            )
        except (OSError, sqlite3.Error) as error:
            reason = str(error).splitlines()[0] if str(error) else type(error).__name__
            raise InputError(
                "db", str(database), f"a writable SQLite database file ({reason})"
            ) from None
        where = f"on the dask cluster at {scheduler}" if scheduler else "in local processes"
        processes = "" if http_workers == 1 else f", {http_workers} HTTP processes"
        print(
            f"planner serve: {service_url(host, port)}  (jobs in {database}, {workers} at a time, "
            f"{where}{processes})",
            flush=True,
        )
        settings: dict[str, Any] = {
            "log_level": "info" if access_log else "warning",
            "access_log": access_log,
            "log_config": access_log_config(),  # the token redacted from access lines
            **uvicorn_limits(),
        }
        if http_workers == 1:
            uvicorn.run(app, host=host, port=port, **settings)
            return
        config = uvicorn.Config(app, host=host, port=port, **settings)
        listener = config.bind_socket()
        listener.listen(config.backlog)
        _stop_with_lifespan(app, others)
        readiness = []
        for _ in range(http_workers - 1):
            process, ready = _start_http_process(
                listener,
                {
                    "database": str(database),
                    "workers": workers,
                    "time_limit": time_limit,
                    "access_log": access_log,
                },
                token,
            )
            others.append(process)
            readiness.append(ready)
        _wait_until_serving(readiness)
        uvicorn.Server(config).run(sockets=[listener])
    finally:
        _stop_processes(others)
        if client is not None:
            client.close()


HTTP_PROCESS_START_SECONDS = 60.0
"""How long ``planner serve`` waits for its other HTTP processes to accept connections
before it answers any itself (:func:`_wait_until_serving`); each takes about 2 s."""


def _start_http_process(
    listener: socket.socket, settings: dict[str, Any], token: str | None
) -> tuple[subprocess.Popen[bytes], int]:
    """One more HTTP process on ``listener`` (``python -m planner.service.server``), which
    dies with this one (the job processes' own ``PR_SET_PDEATHSIG``), and the reading end
    of a pipe it writes one byte to once it accepts connections (or closes by exiting)."""
    from planner.service.worker import PARENT_ENV

    ready_read, ready_write = os.pipe()
    environment = {key: value for key, value in os.environ.items() if key != TOKEN_ENV}
    if token is not None:
        environment[TOKEN_ENV] = token  # through the environment: off the process list
    environment[PARENT_ENV] = str(os.getpid())
    environment[HTTP_PROCESS_ENV] = json.dumps(
        {**settings, "fd": listener.fileno(), "ready_fd": ready_write}
    )
    try:
        process = subprocess.Popen(
            [sys.executable, "-m", "planner.service.server"],
            stdin=subprocess.DEVNULL,
            pass_fds=(listener.fileno(), ready_write),
            env=environment,
        )
    except BaseException:
        os.close(ready_read)
        raise
    finally:
        os.close(ready_write)
    return process, ready_read


def _wait_until_serving(readiness: list[int]) -> None:
    """Return once every other HTTP process accepts connections, has exited, or
    :data:`HTTP_PROCESS_START_SECONDS` have passed; close the pipes.

    This process answers nothing before: its ``/v1/health`` is what clients and scripts
    wait for, and keep-alive connections opened while it served alone stayed with it. A
    load of 8 clients started at the first healthy answer ran on one process of two (669
    plans/s against 1,264 once both served, ``benchmarks/bench_service.py``)."""
    import select

    deadline = time.monotonic() + HTTP_PROCESS_START_SECONDS
    waiting = list(readiness)
    try:
        while waiting and (left := deadline - time.monotonic()) > 0:
            readable, _, _ = select.select(waiting, [], [], left)
            for descriptor in readable:
                os.read(descriptor, 1)  # a byte: serving; end of file: it exited
                waiting.remove(descriptor)
    finally:
        for descriptor in readiness:
            os.close(descriptor)


def _stop_with_lifespan(app: Any, others: list[subprocess.Popen[bytes]]) -> None:
    """End the other HTTP processes when this one's app shuts down, before its job runner
    stops (uvicorn re-raises a SIGTERM it caught once it has shut down, which ends this
    process before any ``finally`` of the caller's)."""
    inner = app.router.lifespan_context

    @contextlib.asynccontextmanager
    async def lifespan(served: Any) -> AsyncIterator[None]:
        async with inner(served):
            try:
                yield
            finally:
                _stop_processes(others)

    app.router.lifespan_context = lifespan


def _stop_processes(others: list[subprocess.Popen[bytes]]) -> None:
    """SIGTERM (uvicorn's graceful shutdown) to each, SIGKILL to any still there in 10 s."""
    for process in others:
        if process.poll() is None:
            process.terminate()
    deadline = time.monotonic() + 10
    for process in others:
        try:
            process.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=5)
    others.clear()


def serve_http_process() -> None:
    """One of ``planner serve --workers N``'s other HTTP processes: the app without the
    database's lock or the job runner (``create_app(owner=False)``), on the listening
    socket it was given, until SIGTERM (or its parent's death)."""
    import uvicorn

    from planner.service.app import create_app
    from planner.service.worker import die_with_parent

    die_with_parent()
    settings = json.loads(os.environ.pop(HTTP_PROCESS_ENV))
    token = os.environ.pop(TOKEN_ENV, None)
    app = create_app(
        settings["database"],
        workers=int(settings["workers"]),
        token=token,
        time_limit=float(settings["time_limit"]),
        owner=False,
        loopback_hosts_only=token is None,
    )
    access_log = bool(settings["access_log"])
    config = uvicorn.Config(
        app,
        log_level="info" if access_log else "warning",
        access_log=access_log,
        log_config=access_log_config(),
        **uvicorn_limits(),
    )
    listener = socket.socket(fileno=int(settings["fd"]))
    ready_fd = int(settings["ready_fd"])

    class Announced(uvicorn.Server):
        """Tells ``planner serve`` (one byte on its pipe) once it accepts connections."""

        async def startup(self, sockets: list[socket.socket] | None = None) -> None:
            await super().startup(sockets=sockets)
            with contextlib.suppress(OSError):  # the parent gave up waiting, or is gone
                os.write(ready_fd, b"1")
            os.close(ready_fd)

    Announced(config).run(sockets=[listener])


if __name__ == "__main__":
    serve_http_process()
