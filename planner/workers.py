"""Worker processes that never outlive the command that started them.

A process pool's workers keep computing their grid point when the parent is killed
outright (SIGKILL runs no clean-up). :func:`die_with_parent` is the pool's initializer:
on Linux it asks the kernel to send the worker SIGKILL when its parent dies
(``prctl(PR_SET_PDEATHSIG)``); elsewhere it does nothing.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
from collections.abc import Callable
from typing import TypedDict

_PR_SET_PDEATHSIG = 1


def die_with_parent(parent: int) -> None:
    """Pool initializer: this worker gets SIGKILL when ``parent`` (the pool's owner) dies."""
    if not sys.platform.startswith("linux"):
        return
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):  # no prctl: leave the worker as it is
        return
    if os.getppid() != parent:  # the parent died before prctl took effect
        os._exit(1)


class PoolOptions(TypedDict):
    """``ProcessPoolExecutor``'s initializer and its arguments (typed for the executor)."""

    initializer: Callable[[int], None]
    initargs: tuple[int]


def pool_options() -> PoolOptions:
    """Keyword arguments for ``ProcessPoolExecutor`` whose workers die with this process."""
    return {"initializer": die_with_parent, "initargs": (os.getpid(),)}
