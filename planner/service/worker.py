"""A job's own process: ``python -m planner.service.worker`` runs one validation or exact search.
(With ``planner serve --scheduler`` the same job runs as a dask task instead:
:func:`run_on_cluster`.)

It reads one JSON line ``{"kind": …, "request": {…}}`` on stdin and writes JSON lines on
stdout: ``{"progress": done, "family": name}`` as each family finishes, then
``{"done": document}`` or ``{"error": "<one line>"}``. It dies with the server that
started it (``PR_SET_PDEATHSIG`` on Linux, and a broken pipe anywhere), so a killed server
leaves no orphan that could write a stale result later, and its address space is capped.
"""

from __future__ import annotations

import ctypes
import json
import os
import resource
import signal
import sys
from collections.abc import Callable
from typing import Any, TextIO

MEMORY_LIMIT_BYTES = 6 * 1024**3
"""Address-space cap of one job process: a runaway job fails instead of swapping."""
PARENT_ENV = "PLANNER_JOB_PARENT"
PROGRESS_TOPIC = "planner-job-progress"
"""The dask event topic a job on a cluster reports its progress under (``{"job": id, …}``)."""


def die_with_parent() -> None:
    """Ask the kernel to SIGKILL this process when its parent dies; exit if it already has."""
    if sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
        except (OSError, AttributeError):  # pragma: no cover - no prctl: rely on the pipe
            pass
    expected = os.environ.get(PARENT_ENV)
    if expected is not None and str(os.getppid()) != expected:
        os._exit(1)


def limit_memory(limit: int) -> None:
    try:
        _, hard = resource.getrlimit(resource.RLIMIT_AS)
        cap = limit if hard == resource.RLIM_INFINITY else min(limit, hard)
        resource.setrlimit(resource.RLIMIT_AS, (cap, hard))
    except (ValueError, OSError):  # pragma: no cover
        pass


def _send(stream: TextIO, message: dict[str, Any]) -> None:
    try:
        stream.write(json.dumps(message) + "\n")
        stream.flush()
    except (BrokenPipeError, OSError):
        os._exit(1)


def run(kind: str, request: dict[str, Any], out: TextIO) -> None:
    """Run one job and write its outcome lines to ``out``."""
    execute(kind, request, lambda message: _send(out, message))


def execute(kind: str, request: dict[str, Any], send: Callable[[dict[str, Any]], None]) -> None:
    """Run one job, passing its messages to ``send``: ``{"progress": done, "family":
    name}`` as each family finishes, then ``{"done": document}`` or ``{"error": line}``."""
    from planner import api
    from planner.inputs import InputError

    try:
        if kind in ("exact", "plan"):
            fields = {name: value for name, value in request.items() if name != "kind"}
            document = api.plan_document(**fields, exact=kind == "exact")
        else:
            done = 0

            def progress(family: str) -> None:
                nonlocal done
                done += 1
                send({"progress": done, "family": family})

            arguments = {name: value for name, value in request.items() if name != "kind"}
            document = api.validate_document(progress=progress, **arguments)
        send({"done": document})
    except InputError as error:
        send({"error": str(error)})
    except MemoryError:
        send({"error": "out of memory: the job needs more than its memory cap"})
    except Exception as error:  # the job fails with one line; the server goes on
        line = f"{type(error).__name__}: {error}".splitlines()[0]
        send({"error": line})


class JobStoppedError(Exception):
    """Raised inside a job on a cluster when the service has stopped it (cancel, time limit)."""


def stop_event_name(job_id: str) -> str:
    """The ``distributed.Event`` the service sets to stop a job running on a cluster."""
    return f"planner-job-stop-{job_id}"


def run_on_cluster(job_id: str, kind: str, request: dict[str, Any]) -> dict[str, Any]:
    """One job as a task on a dask worker (``planner serve --scheduler``): the same
    :func:`execute`, its progress sent as events under :data:`PROGRESS_TOPIC`, its outcome
    (``{"done": document}`` or ``{"error": line}``) returned. A running task cannot be
    killed on a dask worker, so the job looks at its stop event after each family and
    ends there (a job without families, ``exact``, runs to its end)."""
    from distributed import Event, get_worker

    worker = get_worker()
    stop = Event(stop_event_name(job_id))
    outcome: dict[str, Any] = {}

    def send(message: dict[str, Any]) -> None:
        if "progress" in message:
            if stop.is_set():
                raise JobStoppedError("stopped by the service")
            worker.log_event(PROGRESS_TOPIC, {"job": job_id, **message})
        else:
            outcome.update(message)

    execute(kind, request, send)
    return outcome


def main() -> None:
    die_with_parent()
    limit_memory(int(os.environ.get("PLANNER_JOB_MEMORY", MEMORY_LIMIT_BYTES)))
    message = json.loads(sys.stdin.readline())
    run(message["kind"], message["request"], sys.stdout)


if __name__ == "__main__":
    main()
