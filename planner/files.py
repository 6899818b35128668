"""Files the planner writes: always whole (a temporary file in the same folder, renamed)."""

from __future__ import annotations

import csv
import io
import os
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any


def write_atomically(path: Path | str, data: str | bytes) -> None:
    """Write via a temporary file in the same folder and rename: never half-written."""
    path = Path(path)
    try:
        handle, temporary = tempfile.mkstemp(
            prefix=f".{path.name}.", suffix=".tmp", dir=path.parent or Path(".")
        )
    except OSError as error:  # name the file asked for, not the temporary one
        raise OSError(error.errno, error.strerror, str(path)) from None
    try:
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


def csv_text(rows: Iterable[dict[str, Any]], fields: Sequence[str]) -> str:
    """Rows as CSV with a header of ``fields`` (None: an empty cell)."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(fields), lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({name: "" if value is None else value for name, value in row.items()})
    return buffer.getvalue()
