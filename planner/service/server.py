"""Run the service on uvicorn: ``planner serve`` (loopback by default; a token elsewhere)."""

from __future__ import annotations

import ipaddress
import socket
import sqlite3
from pathlib import Path

from planner.inputs import InputError

LOOPBACK_NAMES = {"localhost", "localhost.localdomain", "ip6-localhost"}


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
        )
    finally:
        if client is not None:
            client.close()
