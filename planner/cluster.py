"""Calibration and batch verification on a Dask cluster (the ``dask`` extra).

``planner calibrate --scheduler ADDRESS`` and ``planner batch FILE --validate --scheduler
ADDRESS`` send their tasks to a running ``dask scheduler`` instead of a local process pool.
What travels is small: a reference to a function of this package
(``planner.calibration.grid._run_point``, ``planner.batch._validated_row``; pickled by name, not
by value), its arguments (a grid point or a scenario, a trial count, the run seed) and the
result (a number or a row). So every worker needs this package installed at the same version and
with the same constants file; :func:`connect` checks that before sending anything.

Results never depend on the executor: each task's seed derives from the run seed and the
task (a grid point, a row), and results are gathered in task order. A worker that dies
has its tasks re-run elsewhere by the scheduler, with the same seeds, so the same results.
"""

from __future__ import annotations

import concurrent.futures
import os
import re
import signal
import socket
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from typing import Any, TypeVar

from planner.inputs import InputError
from planner.workers import die_with_parent

CONNECT_TIMEOUT_SECONDS = 5.0
"""How long :func:`connect` waits for the scheduler to answer (then one line, exit 2)."""
WORKER_WAIT_SECONDS = 10.0
"""How long :func:`connect` waits for a scheduler without workers to get one."""
INSTALL_HINT = "python -m pip install 'hetero-closeness-planner[dask]'"

_ADDRESS = re.compile(r"^(?:(tcp|tls)://)?(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_.-]+):(\d{1,5})$")
ADDRESS_ALLOWED = "a dask scheduler address tcp://host:port (or tls://host:port)"

T = TypeVar("T")
R = TypeVar("R")


def scheduler_address(address: str) -> str:
    """The address in dask's form (``host:port`` gets ``tcp://``); one line if malformed."""
    match = _ADDRESS.match(address.strip())
    if match is None or not 1 <= int(match.group(3)) <= 65535:
        raise InputError("scheduler", address, ADDRESS_ALLOWED)
    scheme, host, port = match.groups()
    return f"{scheme or 'tcp'}://{host}:{port}"


def worker_identity() -> tuple[str, str]:
    """What a worker must share with the client: package version, constants version.

    Runs on every worker (:func:`connect`); pickled by name, so a worker without this
    package fails to load it, which is reported too.
    """
    from planner.constants import default_constants
    from planner.statistics import code_version

    return code_version(), default_constants().version


def connect(
    address: str,
    *,
    timeout: float = CONNECT_TIMEOUT_SECONDS,
    worker_wait: float = WORKER_WAIT_SECONDS,
) -> Any:
    """A ``distributed.Client`` on the scheduler at ``address``, its workers checked.

    Every failure is one :class:`InputError` naming ``scheduler``: dask not installed, no
    scheduler answering within ``timeout`` seconds, no worker within ``worker_wait``
    seconds, or a worker without this package at the same version and constants.
    """
    target = scheduler_address(address)
    try:
        import distributed
    except ImportError:
        raise InputError(
            "scheduler", address, f"used with dask installed ({INSTALL_HINT})"
        ) from None
    _probe(target, address, timeout)
    try:
        client = distributed.Client(target, timeout=timeout, set_as_default=False)
    except (OSError, TimeoutError) as error:
        reason = str(error).splitlines()[0] if str(error) else type(error).__name__
        raise InputError(
            "scheduler",
            address,
            f"the address of a running dask scheduler, tcp://host:port (no answer: {reason})",
        ) from None
    try:
        check_workers(client, address, worker_wait)
    except BaseException:
        client.close()
        raise
    return client


def _probe(target: str, address: str, timeout: float) -> None:
    """Fail at once where nothing listens (dask would retry until its timeout), and within
    ``timeout`` where something accepts but never answers (dask would wait for its
    handshake for ever). A dask scheduler sends its handshake first, unprompted (over TLS
    the client speaks first, so there only the connection is checked)."""
    scheme, location = target.split("://", 1)
    host, port = location.rsplit(":", 1)
    allowed = "the address of a running dask scheduler, tcp://host:port"
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=timeout) as peer:
            if scheme == "tcp" and not peer.recv(1, socket.MSG_PEEK):
                raise InputError(
                    "scheduler", address, f"{allowed} (it closed the connection unanswered)"
                )
    except TimeoutError:
        raise InputError(
            "scheduler", address, f"{allowed} (no answer within {timeout:g} s)"
        ) from None
    except OSError as error:
        reason = error.strerror or str(error) or type(error).__name__
        raise InputError("scheduler", address, f"{allowed} (no answer: {reason})") from None


def check_workers(client: Any, address: str, worker_wait: float) -> None:
    """At least one worker, and every worker runs this package's version and constants."""
    try:
        client.wait_for_workers(1, timeout=worker_wait)
    except (TimeoutError, OSError):
        raise InputError(
            "scheduler",
            address,
            f"a scheduler with workers (none joined within {worker_wait:g} s: start one "
            f"with dask worker {scheduler_address(address)})",
        ) from None
    expected = worker_identity()
    try:
        identities = client.run(worker_identity)
    except Exception as error:  # e.g. the package is not installed there
        reason = f"{type(error).__name__}: {error}".splitlines()[0]
        raise InputError(
            "scheduler",
            address,
            f"a cluster whose workers have hetero-closeness-planner {expected[0]} installed "
            f"({reason})",
        ) from None
    message = mismatch(expected, identities)
    if message is not None:
        raise InputError("scheduler", address, message)


def mismatch(expected: tuple[str, str], identities: dict[str, Any]) -> str | None:
    """Why the workers' (version, constants) differ from this process's, or None."""
    for worker, identity in sorted(identities.items()):
        if tuple(identity) != tuple(expected):
            return (
                f"a cluster whose workers run hetero-closeness-planner {expected[0]} with "
                f"constants {expected[1]} (worker {worker} has {identity[0]} with constants "
                f"{identity[1]}: install the same version there)"
            )
    return None


class ClusterExecutor(concurrent.futures.Executor):
    """``concurrent.futures`` on a dask client, for :func:`planner.calibration.run.calibrate`.

    ``map`` sends every task at once (``pure=False``: equal arguments are still separate
    tasks), the costliest first (``size``, default :func:`task_size`: a long task started
    last would hold up the end of the run), and yields the results in task order.
    :func:`map_in_order` uses :meth:`send` and :meth:`gather` instead, to see each result
    as it arrives. Leaving early — an error, Ctrl-C, a consumer that stops — cancels every
    task not yet returned. A task that the scheduler gives up on (its workers kept dying)
    or a scheduler lost mid-run is one line naming ``scheduler``.
    """

    def __init__(
        self,
        client: Any,
        address: str | None = None,
        size: Callable[..., float] | None = None,
    ) -> None:
        self.client = client
        self.address = address or str(client.scheduler.address)
        self.size = size or task_size

    def submit(self, fn: Callable[..., R], /, *args: Any, **kwargs: Any) -> Any:
        return self.client.get_executor(pure=False).submit(fn, *args, **kwargs)

    def map(
        self,
        fn: Callable[..., R],
        *iterables: Iterable[Any],
        timeout: float | None = None,
        chunksize: int = 1,
    ) -> Iterator[R]:
        tasks = list(zip(*iterables, strict=False))
        futures = self.send(fn, tasks, [self.size(*arguments) for arguments in tasks])
        return self._results(futures, timeout)

    def send(
        self, fn: Callable[..., Any], tasks: Sequence[tuple[Any, ...]], costs: Sequence[float]
    ) -> list[Any]:
        """Submit ``fn(*task)`` for every task, the costliest first (dask runs a higher
        priority first; equal costs in task order); the futures in task order."""
        futures: list[Any] = [None] * len(tasks)
        with _ctrl_c_deferred() as interrupted:
            for rank, index in enumerate(longest_first(costs)):
                futures[index] = self.client.submit(
                    fn, *tasks[index], pure=False, priority=len(tasks) - rank
                )
        if interrupted:  # Ctrl-C while submitting: nothing of this run may stay queued
            self.client.cancel([future for future in futures if future is not None])
            raise KeyboardInterrupt
        return futures

    def gather(
        self, futures: list[Any], progress: Callable[[Any], None] | None = None
    ) -> list[Any]:
        """The futures' results in task order; ``progress`` is called with each as it
        arrives. However it ends, every future not yet done is cancelled."""
        from distributed import as_completed

        results: list[Any] = [None] * len(futures)
        where = {future.key: index for index, future in enumerate(futures)}
        try:
            for future in as_completed(futures, loop=self.client.loop):
                results[where[future.key]] = self._result(future, None)
                if progress is not None:
                    progress(results[where[future.key]])
        finally:
            self.client.cancel(futures)  # the finished ones are already collected
        return results

    def _results(self, futures: list[Any], timeout: float | None) -> Iterator[Any]:
        try:
            for future in futures:
                yield self._result(future, timeout)
        finally:
            self.client.cancel(futures)  # the finished ones are already collected

    def _result(self, future: Any, timeout: float | None) -> Any:
        """One future's result; a task given up on or a lost scheduler is one line."""
        from distributed.client import FutureCancelledError
        from distributed.scheduler import KilledWorker

        try:
            return future.result(timeout=timeout)
        except KilledWorker as error:
            raise InputError(
                "scheduler",
                self.address,
                f"a cluster whose workers stay up (a task's workers died too often: "
                f"{str(error).splitlines()[0]})",
            ) from None
        except (FutureCancelledError, concurrent.futures.CancelledError) as error:
            raise InputError(
                "scheduler",
                self.address,
                f"reachable for the whole run (a task was lost: {error})",
            ) from None

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        self.client.close()


def longest_first(costs: Sequence[float]) -> list[int]:
    """Task indices, the costliest first, equal costs in task order: the order to start
    tasks in so that the last ones to start are short (longest processing time first)."""
    return sorted(range(len(costs)), key=lambda index: -costs[index])


def task_size(*arguments: Any) -> float:
    """A task's rough cost when its caller gives none: the domain size k of its grid point
    (``planner.calibration``'s tasks) or scenario (``planner.batch``'s); 0 when it has none.
    A simulated trial costs O(k) on the fast path, whatever the number of users."""
    head = arguments[0] if arguments else None
    if isinstance(head, tuple) and head:  # the one tuple argument of _run_point and co.
        head = head[0]
    k = head.get("k") if isinstance(head, dict) else getattr(head, "k", None)
    try:
        return float(k)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return 0.0


@contextmanager
def cluster_executor(address: str) -> Iterator[ClusterExecutor]:
    """Connect (:func:`connect`), yield the executor, close the client however it ends."""
    client = connect(address)
    try:
        yield ClusterExecutor(client, scheduler_address(address))
    finally:
        client.close()


def map_in_order(
    function: Callable[[T], R],
    tasks: Sequence[T],
    *,
    executor: concurrent.futures.Executor | None = None,
    workers: int = 1,
    progress: Callable[[R], None] | None = None,
    cost: Callable[[T], float] = task_size,
) -> list[R]:
    """``function`` over ``tasks``, the results in task order: on ``executor`` (e.g. a
    :class:`ClusterExecutor`), else a local pool of ``workers`` processes that die with this
    one, else in this process.

    On an executor or a pool the tasks start costliest first (``cost``, an estimate of a
    task's run time; :func:`longest_first`), so that the run does not end waiting for a
    long task started last; which task runs where and when never changes its result.
    ``progress`` is called with each result as it arrives (in task order in this process).
    """
    if executor is None and workers <= 1:
        return _collect(map(function, tasks), progress)
    costs = [cost(task) for task in tasks]
    if isinstance(executor, ClusterExecutor):
        return executor.gather(
            executor.send(function, [(task,) for task in tasks], costs), progress
        )
    if executor is not None:
        return _gather(_send(executor, function, tasks, costs), progress)
    # workers that die with this process (planner.workers.pool_options, spelt out for mypy)
    pool = ProcessPoolExecutor(
        max_workers=workers, initializer=die_with_parent, initargs=(os.getpid(),)
    )
    # Ctrl-C inside the pool's submit (which forks the workers and holds the pool's lock)
    # can leave the pool unable to shut down: it is held back until all are queued
    try:
        with _ctrl_c_deferred() as interrupted:
            futures = _send(pool, function, tasks, costs)
        if interrupted:
            raise KeyboardInterrupt
        collected = _gather(futures, progress, cancel_unstarted=False)
    except BaseException:  # Ctrl-C or an error: stop the running tasks, do not wait for them
        running = dict(getattr(pool, "_processes", None) or {})  # shutdown forgets them
        for process in running.values():
            process.terminate()
        # nothing cancelled, here or in _gather: the pool's manager thread, finding its
        # workers gone, fails every pending future itself, and one already cancelled made
        # it raise InvalidStateError (CPython 3.11's terminate_broken), printed as a
        # traceback after "aborted"
        pool.shutdown(wait=False)
        raise
    pool.shutdown()
    return collected


@contextmanager
def _ctrl_c_deferred() -> Iterator[list[int]]:
    """Hold Ctrl-C (SIGINT) back while the block runs, and say whether it came.

    A ``KeyboardInterrupt`` raised inside the dask client's ``submit`` can leave the client
    half-way through talking to its event-loop thread, and the command then hangs on exit
    instead of cancelling its tasks; inside a local pool's ``submit`` it can leave the
    pool's lock held, and the shutdown that should stop the workers waits for ever. Only
    the main thread receives signals; elsewhere the block runs as it is.
    """
    caught: list[int] = []
    if threading.current_thread() is not threading.main_thread():
        yield caught
        return
    previous = signal.signal(signal.SIGINT, lambda number, _frame: caught.append(number))
    try:
        yield caught
    finally:
        signal.signal(signal.SIGINT, previous)


def _send(
    executor: concurrent.futures.Executor,
    function: Callable[[T], R],
    tasks: Sequence[T],
    costs: Sequence[float],
) -> list[concurrent.futures.Future[R]]:
    """Submit the tasks costliest first (an executor's queue is first in, first out); the
    futures in task order."""
    futures: dict[int, concurrent.futures.Future[R]] = {}
    try:
        for index in longest_first(costs):
            futures[index] = executor.submit(function, tasks[index])
    except BaseException:
        for future in futures.values():
            future.cancel()
        raise
    return [futures[index] for index in range(len(tasks))]


def _gather(
    futures: list[concurrent.futures.Future[R]],
    progress: Callable[[R], None] | None,
    *,
    cancel_unstarted: bool = True,
) -> list[R]:
    """The results in task order, ``progress`` called as each arrives; the futures not
    yet started are cancelled if this ends early (``cancel_unstarted``; a local pool whose
    workers are then terminated fails them itself)."""
    where = {id(future): index for index, future in enumerate(futures)}
    results: list[Any] = [None] * len(futures)
    try:
        for future in concurrent.futures.as_completed(futures):
            result = future.result()
            results[where[id(future)]] = result
            if progress is not None:
                progress(result)
    except BaseException:
        if cancel_unstarted:
            for future in futures:
                future.cancel()
        raise
    return results


def _collect(results: Iterable[R], progress: Callable[[R], None] | None) -> list[R]:
    collected = []
    for result in results:
        collected.append(result)
        if progress is not None:
            progress(result)
    return collected
