"""Run the service on uvicorn: ``planner serve`` (loopback by default; a token elsewhere)."""

from __future__ import annotations

import ipaddress
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


def serve(
    *,
    host: str,
    port: int,
    database: Path,
    workers: int,
    token: str | None,
    time_limit: float,
) -> None:
    """Serve until interrupted (Ctrl-C or SIGTERM end running jobs as ``interrupted``)."""
    import uvicorn

    from planner.service.app import create_app

    check_binding(host, token)
    app = create_app(database, workers=workers, token=token, time_limit=time_limit)
    print(f"planner serve: http://{host}:{port}/  (jobs in {database}, {workers} at a time)")
    uvicorn.run(app, host=host, port=port, log_level="warning", access_log=False)
