"""Ctrl-C while the command line starts: one line and exit 130, never a traceback.

The CLI turns Ctrl-C into "aborted" and exit 130 once ``planner.cli.main`` runs; before
that, while Python imports numpy, sympy, typer and the planner (about 0.3 s), a Ctrl-C
would print a KeyboardInterrupt traceback from whichever import it landed in. The
package installs :func:`abort_while_starting` for SIGINT first thing when the process
is the ``planner`` command (or ``python -m planner``; it imports only what Python has
loaded before any script runs), and ``main`` puts Python's
KeyboardInterrupt back, remembering that it came (:func:`started`,
:func:`interrupted`). Nothing is open or written before ``main``, so ending
the process at once loses nothing. Any other process (a script, a test, the service)
importing the package keeps its handler.
"""

from __future__ import annotations

import os
import signal
import sys
from types import FrameType


def abort_while_starting(signum: int, frame: FrameType | None) -> None:
    """SIGINT before ``main`` runs: the CLI's line and exit code, no traceback."""
    os.write(2, b"aborted\n")
    os._exit(130)


def starting_command_line() -> None:
    """Install :func:`abort_while_starting` if this process is the command line and
    SIGINT is at Python's default (not ignored, not the caller's own handler)."""
    command = sys.argv[0] if sys.argv else ""
    if os.path.basename(command) != "planner" and command != "-m":  # -m: runpy imports us first
        return
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signal.signal(signal.SIGINT, abort_while_starting)


_interrupted: list[int] = []
"""The SIGINTs the running command line received (see :func:`interrupted`)."""


def interrupt(signum: int, frame: FrameType | None) -> None:
    """SIGINT while ``main`` runs: Python's KeyboardInterrupt, remembered."""
    _interrupted.append(signum)
    signal.default_int_handler(signum, frame)


def interrupted() -> bool:
    """Did the command line receive Ctrl-C? A KeyboardInterrupt raised inside a library
    can reach ``main`` as another exception (a C extension's SystemError "returned a
    result with an exception set", a broken worker pool, a generator's RuntimeError); the
    CLI reports those as the Ctrl-C they are."""
    return bool(_interrupted)


def started() -> None:
    """``main`` runs: KeyboardInterrupt again (the CLI reports it itself), remembered."""
    _interrupted.clear()
    if signal.getsignal(signal.SIGINT) in (abort_while_starting, signal.default_int_handler):
        signal.signal(signal.SIGINT, interrupt)
