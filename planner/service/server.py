"""Run the service on uvicorn: ``planner serve`` (loopback by default; a token elsewhere)."""

from __future__ import annotations

import copy
import ipaddress
import logging
import socket
import sqlite3
from pathlib import Path
from typing import Any
from urllib.parse import unquote_plus

from planner.inputs import InputError

LOOPBACK_NAMES = {"localhost", "localhost.localdomain", "ip6-localhost"}
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


def is_loopback(host: str) -> bool:
    """True for 127.0.0.0/8, ::1 and localhost: no one else can connect."""
    if host.lower() in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_binding(host: str, token: str | None) -> None:
    """A non-loopback address needs a token (Bearer) — raise the one-line error if not."""
    if token is not None and len(token) < 16:
        raise InputError("token", "…", "at least 16 characters")
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
) -> None:
    """Serve until interrupted (Ctrl-C or SIGTERM end running jobs as ``interrupted``).
    ``scheduler``: run the jobs on that dask scheduler's cluster (checked before serving:
    one line naming ``scheduler`` if it does not answer or its workers differ).
    ``access_log``: uvicorn's line per request on stderr (off: warnings only)."""
    import uvicorn

    from planner.service.app import create_app

    check_binding(host, token)
    check_port(host, port)
    client = None
    if scheduler is not None:
        from planner.cluster import connect, scheduler_address

        client = connect(scheduler)
        scheduler = scheduler_address(scheduler)
    try:
        try:
            app = create_app(
                database, workers=workers, token=token, time_limit=time_limit, client=client
            )
        except (OSError, sqlite3.Error) as error:
            reason = str(error).splitlines()[0] if str(error) else type(error).__name__
            raise InputError(
                "db", str(database), f"a writable SQLite database file ({reason})"
            ) from None
        where = f"on the dask cluster at {scheduler}" if scheduler else "in local processes"
        print(
            f"planner serve: http://{host}:{port}/  (jobs in {database}, {workers} at a time, "
            f"{where})"
        )
        uvicorn.run(
            app,
            host=host,
            port=port,
            log_level="info" if access_log else "warning",
            access_log=access_log,
            log_config=access_log_config(),  # the token redacted from access lines
        )
    finally:
        if client is not None:
            client.close()
