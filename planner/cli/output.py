"""How the commands print: JSON documents, tables (rich) as wide as the terminal or a
pipe needs, and a sweep's or batch's rows as a table, CSV or JSON to standard output or
a file; the exit code of each verdict.
"""

import sys
from enum import StrEnum
from pathlib import Path
from typing import Any

from planner.files import json_text
from planner.inputs import InputError


class OutputFormat(StrEnum):
    TABLE = "table"
    CSV = "csv"
    JSON = "json"


VERDICT_EXIT_CODES = {"pass": 0, "fail": 1, "inconclusive": 3}
"""``planner validate``'s exit code per overall verdict."""


def _print_json(document: dict[str, Any]) -> None:
    encoding = getattr(sys.stdout, "encoding", None) or "utf-8"
    ascii_only = not "α".encode(encoding, errors="ignore")  # an ASCII-only locale
    sys.stdout.write(json_text(document, indent=2, ascii_only=ascii_only) + "\n")


PIPED_WIDTH = 250
"""Columns of tables written to a pipe or file: rich's default of 80 cut numbers ("17,08…")."""


def _console() -> Any:
    """A console for tables: the terminal's width, or wide enough when not a terminal."""
    from rich.console import Console

    return Console(width=None if sys.stdout.isatty() else PIPED_WIDTH)


def _json_format(output_format: str, as_json: bool) -> str:
    """``--json`` is ``--format json`` (as on plan, compare, solve and validate)."""
    if as_json and output_format.lower() not in ("table", "json"):
        raise InputError("format", output_format, "json with --json (or leave one out)")
    return "json" if as_json else output_format


def _checked_destination(output_format: str, output: Path | None) -> OutputFormat:
    """The output format, and the output file checked before any work is done."""
    from planner.files import check_output_path
    from planner.inputs import check_choice

    chosen = OutputFormat(check_choice("format", output_format, OutputFormat))
    if output is not None:
        if chosen is OutputFormat.TABLE:
            raise InputError("format", chosen.value, "csv or json with --output")
        check_output_path(output)
    return chosen


def _emit(
    chosen_format: Any,
    output: Path | None,
    result: Any,
    renderable: Any,
    to_csv: Any,
    to_dict: Any,
) -> None:
    """Print ``result`` as a table, or its CSV or JSON to stdout or whole into ``output``."""
    if chosen_format is OutputFormat.TABLE:
        from planner.limits import check_table_rows

        check_table_rows(len(result))
        _console().print(renderable(result))
        return
    text = (
        to_csv(result)
        if chosen_format is OutputFormat.CSV
        else json_text(to_dict(result), indent=2) + "\n"
    )
    if output is None:
        sys.stdout.write(text)
        return
    from planner.files import write_atomically

    write_atomically(output, text)
