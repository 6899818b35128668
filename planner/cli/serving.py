"""``planner serve``: the HTTP API and the web calculator."""

from pathlib import Path
from typing import Annotated

import typer


def serve(
    host: Annotated[
        str, typer.Option("--host", help="Address to bind; not loopback needs --token.")
    ] = "127.0.0.1",
    port: Annotated[str, typer.Option("--port", metavar="INT", help="TCP port.")] = "8000",
    db: Annotated[
        Path | None,
        typer.Option("--db", help="Jobs database (default: in the user's data directory)."),
    ] = None,
    jobs: Annotated[
        str, typer.Option("--jobs", metavar="INT", help="Verification jobs run at once.")
    ] = "2",
    workers: Annotated[
        str | None,
        typer.Option(
            "--workers",
            metavar="INT",
            help="HTTP processes on the one port (default: one per core, at most 4; 1 with "
            "--scheduler); one of them runs the jobs.",
        ),
    ] = None,
    token: Annotated[
        str | None,
        typer.Option(
            "--token",
            envvar="PLANNER_TOKEN",
            metavar="T",
            help="Bearer token every request must carry (or set PLANNER_TOKEN).",
        ),
    ] = None,
    time_limit: Annotated[
        str, typer.Option("--time-limit", metavar="SECONDS", help="Per-job time limit.")
    ] = "600",
    scheduler: Annotated[
        str | None,
        typer.Option(
            "--scheduler",
            metavar="ADDRESS",
            help="Run the verification jobs on the dask scheduler at tcp://host:port instead "
            "of local processes (needs the dask extra; see README, Running on a cluster).",
        ),
    ] = None,
    access_log: Annotated[
        bool,
        typer.Option(
            "--access-log",
            help="Log a line per request (client, method, path, status), uvicorn's access "
            "log, besides its start and stop lines; without it, warnings only.",
        ),
    ] = False,
) -> None:
    """Serve the HTTP API (/v1, OpenAPI at /docs) and the web calculator (/)."""
    from planner.cluster import scheduler_address
    from planner.inputs import check_integer
    from planner.service.server import check_binding, default_http_workers
    from planner.service.server import serve as run_server
    from planner.service.store import default_database

    check_binding(host, token)
    if scheduler is not None:
        scheduler_address(scheduler)  # a malformed address: one line before anything else
    run_server(
        host=host,
        port=check_integer("port", port, 1, 65535),
        database=db or default_database(),
        workers=check_integer("jobs", jobs, 1, 64),
        token=token,
        time_limit=check_integer("time-limit", time_limit, 1, 86400),
        scheduler=scheduler,
        access_log=access_log,
        http_workers=(
            default_http_workers(scheduler)
            if workers is None
            else check_integer("workers", workers, 1, 64)
        ),
    )
