"""Verification jobs and their reports in an embedded SQLite database (WAL).

One row per job holds its request, status, progress, report (or error) and provenance
(seed, trials, code and constants version, times). The file survives a crash: SQLite's
write-ahead log keeps it consistent, and :meth:`JobStore.recover` marks every job that was
``running`` when the server died as ``interrupted``.
"""

from __future__ import annotations

import fcntl
import json
import os
import sqlite3
import threading
import time
import uuid
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any, TextIO

from planner.inputs import InputError
from planner.service.limits import cut_text

SCHEMA = """
CREATE TABLE IF NOT EXISTS jobs (
    id TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    status TEXT NOT NULL,
    request TEXT NOT NULL,
    seed INTEGER NOT NULL,
    trials INTEGER NOT NULL,
    code_version TEXT NOT NULL,
    constants_version TEXT NOT NULL,
    created REAL NOT NULL,
    started REAL,
    finished REAL,
    progress_done INTEGER NOT NULL DEFAULT 0,
    progress_total INTEGER NOT NULL DEFAULT 0,
    progress_note TEXT NOT NULL DEFAULT '',
    report TEXT,
    error TEXT,
    rerun_of TEXT,
    cancel_requested INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS jobs_by_created ON jobs (created);
CREATE INDEX IF NOT EXISTS jobs_by_status ON jobs (status);
"""


class JobStatus(StrEnum):
    QUEUED = "queued"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"
    INTERRUPTED = "interrupted"
    CANCELLED = "cancelled"


FINISHED = (JobStatus.DONE, JobStatus.FAILED, JobStatus.INTERRUPTED, JobStatus.CANCELLED)


@dataclass(frozen=True)
class Job:
    id: str
    kind: str
    status: JobStatus
    request: dict[str, Any]
    seed: int
    trials: int
    code_version: str
    constants_version: str
    created: float
    started: float | None
    finished: float | None
    progress_done: int
    progress_total: int
    progress_note: str
    report: dict[str, Any] | None
    error: str | None
    rerun_of: str | None
    cancel_requested: bool

    def to_dict(self, *, with_report: bool = True) -> dict[str, Any]:
        """The job as JSON-ready data (schema ``planner.job/1``)."""
        document: dict[str, Any] = {
            "schema": "planner.job/1",
            "id": self.id,
            "kind": self.kind,
            "status": self.status.value,
            "progress": {
                "done": self.progress_done,
                "total": self.progress_total,
                "fraction": self.progress_done / self.progress_total
                if self.progress_total
                else 0.0,
                "last": self.progress_note,
            },
            "request": self.request,
            "provenance": {
                "seed": self.seed,
                "trials": self.trials,
                "code_version": self.code_version,
                "constants_version": self.constants_version,
                "created": _iso(self.created),
                "started": _iso(self.started),
                "finished": _iso(self.finished),
                "rerun_of": self.rerun_of,
            },
            "error": self.error,
        }
        if with_report:
            document["report"] = self.report
        return document


def _iso(stamp: float | None) -> str | None:
    if stamp is None:
        return None
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(stamp)) + f".{int(stamp % 1 * 1000):03d}Z"


class QueueFullError(Exception):
    """A job refused because ``max_queued`` jobs are already queued (``waiting`` of them)."""

    def __init__(self, waiting: int) -> None:
        super().__init__(f"{waiting} jobs queued")
        self.waiting = waiting


SQLITE_BUSY, SQLITE_LOCKED, SQLITE_FULL = 5, 6, 13
"""SQLite's primary result codes (an extended code's low byte)."""


def store_status(error: sqlite3.Error) -> int:
    """The HTTP status of a job store's SQLite error: 503 for busy or locked (the only
    conditions that pass by themselves), 507 for a full disk, 500 for any other (a corrupt
    or read-only file, an I/O error). An error this code raised, without SQLite's code, is
    read by its words."""
    code = getattr(error, "sqlite_errorcode", None)
    if code is None:
        text = str(error).lower()
        if "locked" in text or "busy" in text:
            return 503
        return 507 if "disk is full" in text else 500
    primary = code & 0xFF
    if primary in (SQLITE_BUSY, SQLITE_LOCKED):
        return 503
    return 507 if primary == SQLITE_FULL else 500


def passes(error: sqlite3.Error) -> bool:
    """Whether a job store's error passes by itself (busy or locked: another process's
    write), as :func:`store_status`'s 503 says; any other (a corrupt or read-only file, a
    full disk, an I/O error) waits for the operator."""
    return store_status(error) == 503


def default_database() -> Path:
    """``$XDG_DATA_HOME/hetero-closeness-planner/jobs.sqlite3`` (or ~/.local/share/…)."""
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "hetero-closeness-planner" / "jobs.sqlite3"


class JobStore:
    """Thread-safe access to the jobs table of one database file.

    ``owner``: hold the file for this process (a server's store) through exclusive locks
    on ``<file>.lock`` and on the database file itself, or refuse in one line naming ``db``
    while another process holds either. A second server on the same file had marked the
    first one's running jobs ``interrupted`` (:meth:`recover`) and would have run its queue twice.
    """

    def __init__(self, path: Path | str, *, owner: bool = False) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if owner:
            _refuse_if_served(self.path)  # before reading it: its WAL is another name's
        _check_database_file(self.path)  # before its lock file is made beside it
        made = _create_with_umask(self.path)
        lock_existed = _lock_path(self.path).exists()
        self._owner_lock: _Hold | None = None
        try:
            self._owner_lock = _hold(self.path) if owner else None
            self._lock = threading.Lock()
            self._db = sqlite3.connect(
                self.path, timeout=30, check_same_thread=False, isolation_level=None
            )
            self._db.row_factory = sqlite3.Row
            with self._lock:
                self._db.execute("PRAGMA journal_mode=WAL")
                self._db.execute("PRAGMA synchronous=NORMAL")
                self._db.executescript(SCHEMA)
            # /v1/health's counts (on the event loop) on a connection and lock of their
            # own: in WAL mode a reader waits for no writer, and the count waits for no
            # other operation of this store (:meth:`counts`)
            self._reader_lock = threading.Lock()
            self._reader = sqlite3.connect(
                self.path, timeout=30, check_same_thread=False, isolation_level=None
            )
        except BaseException:  # refused: nothing of this start is left behind, but only
            # what this process holds the lock over (a server starting beside it at the same
            # moment may have made, and be using, the lock file and the database)
            if self._owner_lock is not None:
                if made:
                    self.path.unlink(missing_ok=True)
                if not lock_existed:
                    _lock_path(self.path).unlink(missing_ok=True)
                self._owner_lock.close()
            raise
        # a store never closed (a start-up that failed after opening it) releases its locks
        # once collected: the database file's lock is a bare descriptor, which nothing else
        # closes, and a second store in this process had been refused (a review)
        self._release = weakref.finalize(self, _release, self._reader, self._db, self._owner_lock)
        self._release.atexit = False  # the process's end releases them (threads may still run)

    def close(self) -> None:
        """Close the connections, then release the locks (once; again does nothing)."""
        with self._reader_lock, self._lock:
            self._release()
        self._owner_lock = None

    def __enter__(self) -> JobStore:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def _execute(self, sql: str, parameters: tuple[Any, ...] = ()) -> sqlite3.Cursor:
        with self._lock:
            return self._db.execute(sql, parameters)

    @contextmanager
    def _waiting_at_most(self, wait: float | None) -> Iterator[sqlite3.Connection]:
        """The connection, this store's lock held, given up after about ``wait`` seconds
        (``sqlite3.OperationalError``) waiting for this store's other work and for another
        process's lock on the database alike (None: the busy timeout, 30 s)."""
        if wait is None:
            with self._lock:
                yield self._db
            return
        if not self._lock.acquire(timeout=max(0.0, wait)):
            raise sqlite3.OperationalError("database is locked (by this store's other work)")
        try:
            usual = int(self._db.execute("PRAGMA busy_timeout").fetchone()[0])
            self._db.execute(f"PRAGMA busy_timeout = {max(0, int(wait * 1000))}")
            try:
                yield self._db
            finally:
                self._db.execute(f"PRAGMA busy_timeout = {usual}")
        finally:
            self._lock.release()

    def create(
        self,
        kind: str,
        request: dict[str, Any],
        *,
        seed: int,
        trials: int,
        code_version: str,
        constants_version: str,
        progress_total: int,
        rerun_of: str | None = None,
        max_queued: int | None = None,
        max_stored: int | None = None,
    ) -> Job:
        """Store a job as queued. ``max_queued``: refuse (:class:`QueueFullError`) while that
        many jobs are queued, counted and stored in one write transaction, so that the HTTP
        processes of ``planner serve --workers N`` together never pass the cap.
        ``max_stored``: keep at most that many jobs, deleting the oldest finished ones to
        make room, in the same transaction (a review grew a store by 2,000 jobs in 7 s,
        with no end)."""
        job_id = uuid.uuid4().hex
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")  # other processes' writes wait for this one
            try:
                if max_queued is not None:
                    waiting = int(
                        self._db.execute(
                            "SELECT COUNT(*) FROM jobs WHERE status = ?",
                            (JobStatus.QUEUED.value,),
                        ).fetchone()[0]
                    )
                    if waiting >= max_queued:
                        raise QueueFullError(waiting)
                if max_stored is not None:
                    stored = int(self._db.execute("SELECT COUNT(*) FROM jobs").fetchone()[0])
                    if stored >= max_stored:
                        finished = tuple(status.value for status in FINISHED)
                        marks = ", ".join("?" * len(finished))
                        self._db.execute(
                            "DELETE FROM jobs WHERE id IN (SELECT id FROM jobs WHERE status IN "
                            f"({marks}) ORDER BY created LIMIT ?)",
                            (*finished, stored - max_stored + 1),
                        )
                self._db.execute(
                    "INSERT INTO jobs (id, kind, status, request, seed, trials, code_version, "
                    "constants_version, created, progress_total, rerun_of) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        job_id,
                        kind,
                        JobStatus.QUEUED.value,
                        json.dumps(request, sort_keys=True),
                        seed,
                        trials,
                        code_version,
                        constants_version,
                        time.time(),
                        progress_total,
                        rerun_of,
                    ),
                )
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")
        job = self.get(job_id)
        assert job is not None
        return job

    def get(self, job_id: str) -> Job | None:
        row = self._execute("SELECT * FROM jobs WHERE id = ?", (job_id,)).fetchone()
        return None if row is None else _job(row)

    def page(
        self, *, limit: int, offset: int, status: JobStatus | None = None
    ) -> tuple[list[Job], int]:
        """Jobs newest first (only those in ``status`` when given), and how many there are
        in all."""
        where, chosen = ("WHERE status = ?", (status.value,)) if status else ("", ())
        with self._lock:
            rows = self._db.execute(
                f"SELECT * FROM jobs {where} ORDER BY created DESC, id LIMIT ? OFFSET ?",
                (*chosen, limit, offset),
            ).fetchall()
            total = self._db.execute(f"SELECT COUNT(*) FROM jobs {where}", chosen).fetchone()[0]
        return [_job(row) for row in rows], int(total)

    def counts(self) -> dict[str, int]:
        """Jobs by status, read on the store's second connection: ``/v1/health`` asks on the
        event loop, and behind the store's lock it had waited for whatever held it (a
        job's insert waiting for another process's write: the loop stood 1.6 s in a hostile
        run of ``planner serve --workers 2``)."""
        with self._reader_lock:
            rows = self._reader.execute(
                "SELECT status, COUNT(*) FROM jobs GROUP BY status"
            ).fetchall()
        counted = {status.value: 0 for status in JobStatus}
        counted.update({row[0]: int(row[1]) for row in rows})
        return counted

    def next_queued(self) -> Job | None:
        row = self._execute(
            "SELECT * FROM jobs WHERE status = ? ORDER BY created, id LIMIT 1",
            (JobStatus.QUEUED.value,),
        ).fetchone()
        return None if row is None else _job(row)

    def mark_running(self, job_id: str) -> bool:
        """queued → running; False if the job was cancelled meanwhile."""
        cursor = self._execute(
            "UPDATE jobs SET status = ?, started = ? WHERE id = ? AND status = ?",
            (JobStatus.RUNNING.value, time.time(), job_id, JobStatus.QUEUED.value),
        )
        return cursor.rowcount == 1

    def progress(self, job_id: str, done: int, note: str) -> None:
        self._execute(
            "UPDATE jobs SET progress_done = ?, progress_note = ? WHERE id = ? AND status = ?",
            (done, note, job_id, JobStatus.RUNNING.value),
        )

    def finish(
        self,
        job_id: str,
        status: JobStatus,
        *,
        report: dict[str, Any] | None = None,
        error: str | None = None,
        wait: float | None = None,
    ) -> None:
        """Record a job's outcome. ``wait``: give up (``sqlite3.OperationalError``) after
        about this many seconds, waiting for this store's other work and for another
        process's lock on the database alike, instead of the busy timeout (30 s)."""
        with self._waiting_at_most(wait) as db:
            db.execute(
                "UPDATE jobs SET status = ?, finished = ?, report = ?, error = ?, "
                "progress_done = CASE WHEN ? THEN progress_total ELSE progress_done END "
                "WHERE id = ? AND status IN (?, ?)",
                (
                    status.value,
                    time.time(),
                    None if report is None else json.dumps(report),
                    error,
                    status is JobStatus.DONE,
                    job_id,
                    JobStatus.QUEUED.value,
                    JobStatus.RUNNING.value,
                ),
            )

    def probe(self, *, wait: float | None = None) -> None:
        """Write to the database without changing what it holds (its ``user_version`` set
        to itself: one page written to the write-ahead log), raising what a job's write
        would meet: a read-only, corrupt or unreachable file, a full disk. The runner asks
        while the store fails (:data:`planner.service.runner.PROBE_SECONDS`) to learn that
        it takes writes again; ``wait`` as :meth:`finish`'s."""
        with self._waiting_at_most(wait) as db:
            version = int(db.execute("PRAGMA user_version").fetchone()[0])
            db.execute(f"PRAGMA user_version = {version}")

    def cancel(self, job_id: str) -> Job | None:
        """Cancel a queued job at once; ask the runner to stop a running one."""
        self._execute(
            "UPDATE jobs SET status = ?, finished = ?, error = ? WHERE id = ? AND status = ?",
            (
                JobStatus.CANCELLED.value,
                time.time(),
                "cancelled before it started",
                job_id,
                JobStatus.QUEUED.value,
            ),
        )
        self._execute(
            "UPDATE jobs SET cancel_requested = 1 WHERE id = ? AND status = ?",
            (job_id, JobStatus.RUNNING.value),
        )
        return self.get(job_id)

    def cancel_requested(self) -> set[str]:
        rows = self._execute(
            "SELECT id FROM jobs WHERE cancel_requested = 1 AND status = ?",
            (JobStatus.RUNNING.value,),
        ).fetchall()
        return {row[0] for row in rows}

    def recover(self) -> int:
        """Mark jobs left ``running`` by a dead server ``interrupted``; how many there were."""
        cursor = self._execute(
            "UPDATE jobs SET status = ?, finished = ?, error = ? WHERE status = ?",
            (
                JobStatus.INTERRUPTED.value,
                time.time(),
                "the server stopped while this job ran; POST /v1/validations/{id}/rerun "
                "runs it again",
                JobStatus.RUNNING.value,
            ),
        )
        return cursor.rowcount

    def integrity(self) -> str:
        return str(self._execute("PRAGMA integrity_check").fetchone()[0])


SQLITE_HEADER = b"SQLite format 3\x00"


def _check_database_file(path: Path) -> None:
    """Refuse, in one line naming ``db`` and before anything is written beside it, a path
    that is not a jobs database: a directory, a device or FIFO (``--db /dev/null`` had left
    ``/dev/null.lock`` and ``/dev/null-journal``), or a file that is neither empty nor an
    SQLite database (``--db notes.txt`` had left ``notes.txt.lock``)."""
    if not path.exists():
        return
    if path.is_dir():
        raise InputError("db", str(path), "a database file, not a directory")
    if not path.is_file():
        raise InputError("db", str(path), "a regular database file (not a device or a FIFO)")
    try:
        with open(path, "rb") as handle:
            header = handle.read(len(SQLITE_HEADER))
    except OSError as error:
        reason = error.strerror or type(error).__name__
        raise InputError("db", str(path), f"a readable SQLite database file ({reason})") from None
    if header and header != SQLITE_HEADER:
        raise InputError("db", str(path), "an SQLite database file (this one is another file)")
    if header:
        _check_jobs_schema(path)


JOB_COLUMNS = frozenset(
    line.split()[0]
    for line in SCHEMA.split("CREATE TABLE IF NOT EXISTS jobs (")[1].split(");")[0].splitlines()
    if line.strip()
)
"""The columns of the ``jobs`` table (:data:`SCHEMA`)."""


def _check_jobs_schema(path: Path) -> None:
    """Read, without writing, an SQLite file's tables: refuse one that holds any table but
    a jobs table of this schema (a review: another program's database, refused only when
    the schema script failed, had been switched to WAL and given this store's index)."""
    from urllib.request import pathname2url

    try:
        reader = sqlite3.connect(f"file:{pathname2url(str(path.resolve()))}?mode=ro", uri=True)
        try:
            tables = {
                str(row[0])
                for row in reader.execute(
                    "SELECT name FROM sqlite_master WHERE type = 'table' "
                    "AND name NOT LIKE 'sqlite_%'"
                )
            }
            columns = (
                {str(row[1]) for row in reader.execute("PRAGMA table_info(jobs)")}
                if "jobs" in tables
                else set()
            )
        finally:
            reader.close()
    except sqlite3.Error as error:
        reason = str(error).splitlines()[0] if str(error) else type(error).__name__
        raise InputError("db", str(path), f"a readable SQLite database file ({reason})") from None
    others = sorted(tables - {"jobs"})
    if others or ("jobs" in tables and not columns >= JOB_COLUMNS):
        held = ", ".join(others) if others else "a jobs table of other columns"
        raise InputError(
            "db",
            str(path),
            f"a planner jobs database or a new file (this SQLite file holds {cut_text(held)})",
        )


def _create_with_umask(path: Path) -> bool:
    """Create the database file, empty, with the mode the umask gives a new file (SQLite
    makes its own 0644 whatever the umask; its -wal and -shm files take the database's
    mode): True if this call made it."""
    try:
        descriptor = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o666)
    except FileExistsError:
        return False
    os.close(descriptor)
    return True


def _lock_path(database: Path) -> Path:
    """``<database>.lock``, beside the real file (symlinks resolved)."""
    real = database.resolve()
    return real.with_name(real.name + ".lock")


class _Hold:
    """The two locks a server's store holds (:func:`_hold`), released together."""

    def __init__(self, note: TextIO, database: int) -> None:
        self.note = note
        self.database = database

    def close(self) -> None:
        os.close(self.database)
        self.note.close()


def _release(reader: sqlite3.Connection, db: sqlite3.Connection, hold: _Hold | None) -> None:
    """Close a store's connections, then its locks (closing the database file's descriptor
    drops this process's ``fcntl`` locks on it: SQLite's, so after its connections)."""
    reader.close()
    db.close()
    if hold is not None:
        hold.close()


def _hold(database: Path) -> _Hold:
    """Exclusive locks held while the returned :class:`_Hold` stays open (the kernel drops
    them when the process dies, even by SIGKILL): on ``<database>.lock``, where the
    holder's process id is written (symlinks resolved), and on the database file itself,
    so that a second name for the same file (a hard link, a bind mount) meets the same
    lock (a hostile review started two servers on one database through a hard link, each
    with its own lock file, and jobs were lost). The database file's lock is ``flock``,
    which SQLite's own ``fcntl`` locks do not see; its descriptor is closed only after
    the store's connections (closing it drops this process's ``fcntl`` locks on the
    file)."""
    handle = open(_lock_path(database), "a+", encoding="utf-8")  # noqa: SIM115
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.seek(0)
        holder = handle.read().strip()[:20] or "another process"
        handle.close()
        raise _in_use(database, f"process {holder} serves it") from None
    try:
        descriptor = os.open(database, os.O_RDONLY)
    except OSError:
        handle.close()
        raise
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(descriptor)
        if os.fstat(handle.fileno()).st_size == 0:  # made by this start: not left behind
            _lock_path(database).unlink(missing_ok=True)
        handle.close()
        raise _in_use(database, "another process serves this file under another name") from None
    handle.seek(0)
    handle.truncate()
    handle.write(f"{os.getpid()}\n")
    handle.flush()
    return _Hold(handle, descriptor)


def _refuse_if_served(database: Path) -> None:
    """Refuse, before anything reads or writes it, a database file another server holds
    (:func:`_hold`) under any name: read through a second name, SQLite looks for the
    write-ahead log beside that name, does not find the server's, and answers "disk I/O
    error". The lock is only tried here; :func:`_hold` takes it."""
    if not database.is_file():
        return
    try:
        descriptor = os.open(database, os.O_RDONLY)
    except OSError:
        return  # _check_database_file says why
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        raise _in_use(database, _holder(database)) from None
    finally:
        os.close(descriptor)


def _holder(database: Path) -> str:
    """Who holds a database file that is locked: the process named in this name's lock
    file when that lock is held too (the same name), else another name's server."""
    try:
        with open(_lock_path(database), encoding="utf-8") as note:
            try:
                fcntl.flock(note, fcntl.LOCK_SH | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = note.read().strip()[:20]
                return f"process {holder} serves it" if holder else "another process serves it"
    except OSError:
        pass
    return "another process serves this file under another name"


def _in_use(database: Path, holder: str) -> InputError:
    """The one line refusing a database another ``planner serve`` holds."""
    return InputError(
        "db",
        str(database),
        f"a database no other planner serve is using ({holder}; stop it, or give this one "
        "its own --db)",
    )


def _job(row: sqlite3.Row) -> Job:
    return Job(
        id=row["id"],
        kind=row["kind"],
        status=JobStatus(row["status"]),
        request=json.loads(row["request"]),
        seed=int(row["seed"]),
        trials=int(row["trials"]),
        code_version=row["code_version"],
        constants_version=row["constants_version"],
        created=float(row["created"]),
        started=row["started"],
        finished=row["finished"],
        progress_done=int(row["progress_done"]),
        progress_total=int(row["progress_total"]),
        progress_note=row["progress_note"],
        report=None if row["report"] is None else json.loads(row["report"]),
        error=row["error"],
        rerun_of=row["rerun_of"],
        cancel_requested=bool(row["cancel_requested"]),
    )
