"""What the app holds while it runs: the job store, the runner and the access token."""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

import anyio
from fastapi import HTTPException

from planner.service.cache import AnswerCache
from planner.service.limits import (
    COMPUTE_THREADS,
    MAX_CONCURRENT_SWEEPS,
    MAX_QUEUED_JOBS,
    MAX_REQUEST_SECONDS,
    MAX_STORED_JOBS,
    JobPlan,
)
from planner.service.runner import JobRunner
from planner.service.store import Job, JobStore, QueueFullError

T = TypeVar("T")


@dataclass
class ServiceState:
    store: JobStore
    runner: JobRunner
    token: str | None
    code_version: str
    constants_version: str
    cache: AnswerCache = field(default_factory=AnswerCache)
    request_seconds: float = MAX_REQUEST_SECONDS
    """Seconds a plan, compare or solve request may compute (503 beyond)."""
    in_threads: int = 0
    """Plan, compare, solve and power answers handed to the thread pool and not yet done
    (counted on the event loop): while there are any, none is tried on the loop."""
    compute_threads: anyio.CapacityLimiter = field(
        default_factory=lambda: anyio.CapacityLimiter(COMPUTE_THREADS)
    )
    """The threads answers are computed in (:meth:`in_compute_threads`), apart from the
    default pool that the job routes and the pages' polls run in."""
    sweeps: threading.BoundedSemaphore = field(
        default_factory=lambda: threading.BoundedSemaphore(MAX_CONCURRENT_SWEEPS)
    )
    """Sweeps computed at once (``POST /v1/sweep``: 429 beyond)."""
    submitting: threading.Lock = field(default_factory=threading.Lock)
    """Held from counting the queue to storing a job: concurrent submissions had passed
    the cap together (103 queued of at most 100)."""

    async def in_compute_threads(self, function: Callable[..., T], *args: object) -> T:
        """``function(*args)`` computed in a thread of :attr:`compute_threads`, off the
        event loop."""
        return await anyio.to_thread.run_sync(
            functools.partial(function, *args), limiter=self.compute_threads
        )

    def submit(self, job: JobPlan, *, rerun_of: str | None = None) -> Job:
        """Store a checked job as queued and wake the runner; 429 while the queue holds
        ``MAX_QUEUED_JOBS``."""
        with self.submitting:
            stored = self._store_within_cap(job, rerun_of)
        self.runner.wake()
        return stored

    def _store_within_cap(self, job: JobPlan, rerun_of: str | None) -> Job:
        try:
            return self.store.create(
                job.kind,
                job.request,
                seed=job.seed,
                trials=job.trials,
                code_version=self.code_version,
                constants_version=self.constants_version,
                progress_total=job.steps,
                rerun_of=rerun_of,
                max_queued=MAX_QUEUED_JOBS,  # counted with the insert (every HTTP process)
                max_stored=MAX_STORED_JOBS,  # the oldest finished jobs make room
            )
        except QueueFullError as full:
            raise HTTPException(
                status_code=429,
                detail=(
                    f"invalid job: the queue already holds {full.waiting:,} jobs, at most "
                    f"{MAX_QUEUED_JOBS:,}; submit it again once some have run"
                ),
                headers={"Retry-After": "60"},
            ) from None
