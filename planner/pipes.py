"""Standard output whose reader went away (``planner validate … | head``).

A closed pipe is not a verdict: the process ends with :data:`BROKEN_PIPE_EXIT`, silently
(the reader chose to stop reading), never with ``validate``'s 1 ("fail") or a traceback.
"""

from __future__ import annotations

import errno
import os
import sys

BROKEN_PIPE_EXIT = 141
"""Exit code when standard output is a pipe whose reader has gone: 128 + SIGPIPE (13),
what a shell reports for a process that SIGPIPE ended (``yes | head``), so a pipeline
reads it as the usual broken pipe. Not 1: ``planner validate``'s "fail"."""

EXIT_CODES_HELP = (
    "Exit codes: 0 done (validate: pass), 1 a fail (validate, power --simulate, batch "
    "--validate) or infeasible (solve, power), 2 bad input, 3 inconclusive (validate, power "
    f"--simulate; batch --validate: or not run), 130 Ctrl-C, {BROKEN_PIPE_EXIT} standard "
    "output closed (a broken pipe)."
)


def is_broken_pipe(error: BaseException) -> bool:
    """Is this exit the answer to a broken pipe? click (``sys.exit(1)`` on an ``EPIPE``
    ``OSError``) and rich (``SystemExit(1)`` from ``Console.on_broken_pipe``) end that way,
    indistinguishable from ``validate``'s fail but for the error they handle."""
    cause = error.__context__
    return (
        isinstance(error, SystemExit)
        and isinstance(cause, OSError)
        and (cause.errno == errno.EPIPE)
    )


def broken_pipe() -> int:
    """Send what is left of standard output to the null device (the interpreter's last
    flush would meet the closed pipe again) and return :data:`BROKEN_PIPE_EXIT`."""
    try:
        null = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(null, sys.stdout.fileno())
        finally:
            os.close(null)
    except (OSError, ValueError, AttributeError):  # no file descriptor (a test's capture)
        pass
    return BROKEN_PIPE_EXIT


def flushed(code: int) -> int:
    """``code`` once standard output is flushed, or :data:`BROKEN_PIPE_EXIT` when its
    reader has gone (the flush at exit had printed a traceback-like warning)."""
    try:
        if sys.stdout is not None:
            sys.stdout.flush()
    except BrokenPipeError:
        return broken_pipe()
    except (OSError, ValueError):  # closed or unwritable: main has said so already
        pass
    return code
