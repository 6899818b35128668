"""Files the planner writes: always whole, with the mode the umask gives new files.

Data goes to a temporary file in the target's folder, named ``.<name>.<pid>.<random>.tmp``,
which is renamed over the target once complete. A run killed outright (SIGKILL) cannot
remove its temporary file; the next write into the same folder removes those whose
process is gone, so none outlives the next run.
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import math
import os
import re
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from planner.inputs import InputError

_TEMPORARY = re.compile(r"^\.(?P<name>.+)\.(?P<pid>\d+)\.[^.]+\.tmp$")
_STREAM = re.compile(
    r"^/(dev/(stdin|stdout|stderr|fd/\d+)|proc/(self|thread-self|\d+)(/task/\d+)?/fd/\d+)$"
)
"""The names of a process's open descriptors: ``/dev/stdout``, ``/dev/fd/N``,
``/proc/<pid>/fd/N`` (:func:`standard_stream`)."""
LINK_HOPS = 40
"""Symbolic links followed at most when looking for a descriptor's name (as the kernel)."""


def check_output_path(path: Path | str | None, *, suffixes: Sequence[str] = ()) -> Path:
    """The output file asked for, checked before any work: not a folder, in a writable one.

    Refuses with one line (``InputError``) an empty name, an existing folder, a missing
    or unwritable parent folder, or (when ``suffixes`` are given) another file type.
    """
    allowed = "a file name in an existing, writable folder"
    if suffixes:
        allowed = f"a file name ending in {' or '.join(suffixes)}, in an existing, writable folder"
    text = "" if path is None else str(path)
    if not text.strip() or text.endswith(os.sep):
        raise InputError("output", text, allowed)
    if text == "-":  # the usual name for stdout, which --json (or --format) prints to
        raise InputError("output", text, allowed + " (for stdout, leave --output out)")
    stream = standard_stream(text)
    if stream is not None:
        shown = f"{stream} is" if stream == text else f"it leads to {stream},"
        raise InputError(
            "output",
            text,
            allowed + f" ({shown} an open stream, not a file: for stdout, leave --output out)",
        )
    path = Path(text)
    try:
        if path.is_symlink():  # a loop of links is refused (it would replace the link)
            with contextlib.suppress(FileNotFoundError):  # a dangling link: its target made
                os.path.realpath(path, strict=True)
        real = real_target(path)  # a symlink is written through, to its target
        if real.is_dir():
            raise InputError("output", text, allowed + " (this is a folder)")
        if real.exists() and not real.is_file():  # renaming over /dev/null would replace it
            raise InputError("output", text, allowed + " (not a regular file)")
        if real.exists() and not _writable(real):  # renaming over it would replace it
            raise InputError("output", text, allowed + " (the file is read-only)")
    except OSError as error:  # e.g. a name too long, a symlink loop
        raise InputError("output", text, allowed + f" ({error.strerror})") from None
    if suffixes and path.suffix.lower() not in suffixes:
        raise InputError("output", text, allowed)
    parent = real.parent
    if not parent.is_dir():
        raise InputError("output", text, allowed + f" ({parent} is not a folder)")
    try:  # the real test (os.access says yes to root in /proc and on read-only mounts)
        handle, probe = tempfile.mkstemp(
            prefix=f".{real.name}.{os.getpid()}.", suffix=".tmp", dir=parent
        )
    except OSError as error:
        raise InputError("output", text, allowed + f" ({error.strerror})") from None
    os.close(handle)
    os.unlink(probe)
    return path


def standard_stream(text: str) -> str | None:
    """The descriptor's name (``/dev/stdout``, ``/dev/fd/1``, ``/proc/<pid>/fd/N``) that
    ``text`` is or leads to through symbolic links, or None for a file's name.

    A hostile review: ``--output /dev/stdout`` with stdout redirected to a log had been
    followed to the log file and the output renamed over it, destroying the log (and
    with stdout a pipe, refused as "No such file or directory")."""
    current = os.path.abspath(text)
    for _ in range(LINK_HOPS):
        parent, name = os.path.split(current)
        try:
            real_parent = os.path.realpath(parent)
        except (OSError, ValueError):
            return None
        for candidate in (current, os.path.join(real_parent, name)):
            if _STREAM.match(candidate):
                return candidate
        try:
            target = os.readlink(current)
        except (OSError, ValueError):  # not a link (or no such file): a file's name
            return None
        current = os.path.normpath(os.path.join(real_parent, target))
    return None


def real_target(path: Path) -> Path:
    """The file a write to ``path`` changes: ``path``, or the file its symlinks lead to
    (followed as ``open`` follows them; a dangling link's target is created)."""
    return Path(os.path.realpath(path)) if path.is_symlink() else path


def _writable(path: Path) -> bool:
    """Whether the existing file may be replaced: writable for this process and not
    read-only by its mode (root may write anything, but a 0444 file says "keep me")."""
    return os.access(path, os.W_OK) and path.stat().st_mode & 0o222 != 0


def write_atomically(path: Path | str, data: str | bytes) -> None:
    """Write via a temporary file in the same folder and rename: never half-written.

    The file gets the mode a new file gets under the current umask (0644 under umask 022),
    as ``open(path, "w")`` would give it; a mode already on ``path`` is kept. A read-only
    file is refused (one line naming ``output``), not replaced. A symlink is written
    through: its target is replaced atomically (the temporary file beside the target),
    and the link stays a link.
    """
    path = real_target(check_output_path(path))
    _remove_stale_temporaries(path)
    try:
        handle, temporary = tempfile.mkstemp(
            prefix=f".{path.name}.{os.getpid()}.", suffix=".tmp", dir=path.parent
        )
    except OSError as error:  # name the file asked for, not the temporary one
        raise OSError(error.errno, error.strerror, str(path)) from None
    try:
        os.fchmod(handle, _mode_for(path))
        if isinstance(data, bytes):
            with os.fdopen(handle, "wb") as stream:
                stream.write(data)
        else:
            with os.fdopen(handle, "w", encoding="utf-8") as stream:
                stream.write(data)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def _mode_for(path: Path) -> int:
    """The existing file's mode, or 0o666 less the umask (what ``open`` would create)."""
    try:
        return path.stat().st_mode & 0o7777
    except OSError:
        return 0o666 & ~_umask()


def _umask() -> int:
    """The process umask, read without changing it where the system allows (Linux)."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o022)  # elsewhere: set and restore (not thread-safe, but brief)
    os.umask(mask)
    return mask


def _remove_stale_temporaries(path: Path) -> None:
    """Remove this target's temporary files left by processes that no longer run."""
    try:
        candidates = list(path.parent.glob(f".{glob_escape(path.name)}.*.tmp"))
    except OSError:
        return
    for candidate in candidates:
        match = _TEMPORARY.match(candidate.name)
        if match is None or match["name"] != path.name:
            continue
        if not _running(int(match["pid"])):
            candidate.unlink(missing_ok=True)


def glob_escape(name: str) -> str:
    """``name`` with glob's special characters taken literally."""
    return re.sub(r"([*?\[])", r"[\1]", name)


def _running(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return True  # someone else's process (or not a pid): leave its file alone
    return True


FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
"""What makes a spreadsheet read a cell as a formula (OWASP's list for CSV injection)."""
_NUMBER = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$")


def csv_cell(value: Any) -> Any:
    """A value as a CSV cell: None empty, and text a spreadsheet would run as a formula
    (starting with = + - @, a tab or a carriage return) behind a single quote, as OWASP
    advises; a number, or text that is a plain number (``-5``), is left as it is.

    A hostile review: ``planner batch --format csv`` echoed a scenario named
    ``=HYPERLINK(…)`` (or ``+cmd|calc``, ``@SUM(1)``) verbatim, a formula once opened."""
    if value is None:
        return ""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS) and not _NUMBER.match(value):
        return "'" + value
    return value


def csv_text(rows: Iterable[dict[str, Any]], fields: Sequence[str]) -> str:
    """Rows as CSV with a header of ``fields``, each cell as :func:`csv_cell` writes it."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(fields), lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({name: csv_cell(value) for name, value in row.items()})
    return buffer.getvalue()


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def json_text(document: Any, indent: int | None = None, *, ascii_only: bool = False) -> str:
    """The document as strict JSON (RFC 8259) in encodable UTF-8, as the CLI prints it and
    the service sends it: a non-finite number (an error row echoing an input ``nan``) is
    written as its text, ``"nan"``, not the ``NaN`` strict parsers refuse, and a lone
    surrogate (echoed from a request) as its ``\\ud800`` escape, which UTF-8 cannot hold.
    ``ascii_only``: every non-ASCII character escaped (a stream that cannot encode them)."""
    try:
        text = json.dumps(document, indent=indent, ensure_ascii=ascii_only, allow_nan=False)
    except ValueError:  # a nan or inf somewhere: the walk is paid only then
        text = json.dumps(_finite(document), indent=indent, ensure_ascii=ascii_only)
    if ascii_only:
        return text
    return _LONE_SURROGATE.sub(lambda match: f"\\u{ord(match.group()):04x}", text)


def _finite(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, dict):
        return {key: _finite(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(item) for item in value]
    return value
