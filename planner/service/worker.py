"""A job's own process: ``python -m planner.service.worker`` runs one validation or exact search.

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
from typing import Any, TextIO

MEMORY_LIMIT_BYTES = 6 * 1024**3
"""Address-space cap of one job process: a runaway job fails instead of swapping."""
PARENT_ENV = "PLANNER_JOB_PARENT"


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
                _send(out, {"progress": done, "family": family})

            arguments = {name: value for name, value in request.items() if name != "kind"}
            document = api.validate_document(progress=progress, **arguments)
        _send(out, {"done": document})
    except InputError as error:
        _send(out, {"error": str(error)})
    except MemoryError:
        _send(out, {"error": "out of memory: the job needs more than its memory cap"})
    except Exception as error:  # the job fails with one line; the server goes on
        line = f"{type(error).__name__}: {error}".splitlines()[0]
        _send(out, {"error": line})


def main() -> None:
    die_with_parent()
    limit_memory(int(os.environ.get("PLANNER_JOB_MEMORY", MEMORY_LIMIT_BYTES)))
    message = json.loads(sys.stdin.readline())
    run(message["kind"], message["request"], sys.stdout)


if __name__ == "__main__":
    main()
