"""How the commands print: JSON documents, tables (rich) as wide as the terminal or a
pipe needs, and a sweep's or batch's rows as a table, CSV or JSON to standard output or
a file; the exit code of each verdict.
"""

import os
import re
import sys
import unicodedata
from collections.abc import Sequence
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any

from planner.files import json_text
from planner.inputs import InputError

if TYPE_CHECKING:
    from planner.report import Block, TableBlock, TextBlock


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


_RICH_STYLING_VARIABLES = ("FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE")
"""Variables under which rich may style text written to a pipe."""
_EMOJI_CODE = re.compile(r":\S+?:")
"""What rich would read as an emoji code in a table's text (``:smile:``)."""


def _plain_width(text: str) -> int | None:
    """Terminal cells of ``text`` where each character takes one (rich's measure for the
    text the planner prints); None where one may not (wide, combining or control)."""
    for character in text:
        if not character.isprintable() or unicodedata.combining(character):
            return None
        if unicodedata.east_asian_width(character) in ("W", "F"):
            return None
    return len(text)


_WORD = re.compile(r"\s*\S+\s*")
"""A word with the white space around it, as rich's line breaking reads words."""


def _wrapped(text: str, width: int) -> list[str] | None:
    """``text`` broken into lines of ``width`` cells as rich breaks a line of text: before
    a word whose visible part does not fit what is left of the line, each line keeping
    its words' trailing space up to the width; None where a word is longer than a line
    (rich folds it)."""
    if not text.strip():  # no word: the line as it is
        return [text] if len(text) <= width else None
    lines: list[str] = []
    current = ""
    for match in _WORD.finditer(text):
        word = match.group()
        visible = len(word.rstrip())
        if visible > width:
            return None
        if width - len(current) >= visible or not current:
            current += word
        else:
            lines.append(current)
            current = word
    lines.append(current)
    return [line[:width] for line in lines]  # past the width there is only trailing space


def _plain_table(block: "TableBlock") -> list[str] | None:
    """The lines rich prints for ``block`` (its title as a line of text above it, then its
    default heavy-headed box with one space of padding: ``planner.report.titled``), or
    None where they might differ: a cell rich would read as markup or emoji, or a table
    over ``PIPED_WIDTH``."""
    from planner.report import TextBlock

    texts = [block.title, *(heading for heading, _ in block.columns)]
    texts += [cell for row in block.rows for cell in row]
    if any(_plain_width(text) is None or "[" in text or _EMOJI_CODE.search(text) for text in texts):
        return None
    widths = [
        max(len(text) for text in (heading, *(row[i] for row in block.rows)))
        for i, (heading, _) in enumerate(block.columns)
    ]
    total = sum(widths) + 3 * len(widths) + 1
    title = _plain_text(TextBlock((block.title,)))
    if total > PIPED_WIDTH or title is None:
        return None

    def line(cells: Sequence[str], edge: str) -> str:
        padded = (
            text.rjust(width) if justify == "right" else text.ljust(width)
            for text, width, (_, justify) in zip(cells, widths, block.columns, strict=True)
        )
        return edge + edge.join(f" {text} " for text in padded) + edge

    def rule(left: str, fill: str, inner: str, right: str) -> str:
        return left + inner.join(fill * (width + 2) for width in widths) + right

    return [
        *title,
        rule("┏", "━", "┳", "┓"),
        line([heading for heading, _ in block.columns], "┃"),
        rule("┡", "━", "╇", "┩"),
        *(line(row, "│") for row in block.rows),
        rule("└", "─", "┴", "┘"),
    ]


def _plain_text(block: "TextBlock") -> list[str] | None:
    """The lines rich prints for ``block``, wrapped at ``PIPED_WIDTH``, or None where they
    might differ (a tab, a wide character, a word longer than a line)."""
    lines: list[str] = []
    for text in block.lines:
        wrapped = _wrapped(text, PIPED_WIDTH) if _plain_width(text) is not None else None
        if wrapped is None:
            return None
        lines += wrapped
    return lines


def plain_lines(blocks: Sequence["Block"]) -> list[str] | None:
    """The lines rich prints for ``blocks`` as plain text, or None where one block's
    might differ from rich's (:func:`_plain_table`, :func:`_plain_text`)."""
    from planner.report import TableBlock

    lines: list[str] = []
    for block in blocks:
        rendered = _plain_table(block) if isinstance(block, TableBlock) else _plain_text(block)
        if rendered is None:
            return None
        lines += rendered
    return lines


def print_blocks(blocks: Sequence["Block"]) -> None:
    """Print tables and text as rich does; without importing rich where the output is
    plain text (a pipe or file, no variable asking rich for styles), which is most of
    ``planner plan``'s start-up cost left (docs/architecture.md, "Speed")."""
    encoding = (getattr(sys.stdout, "encoding", None) or "").lower().replace("-", "")
    plain = (
        plain_lines(blocks)
        if encoding == "utf8"
        and not sys.stdout.isatty()
        and not any(name in os.environ for name in _RICH_STYLING_VARIABLES)
        else None
    )
    if plain is None:
        from planner.report import rich_renderable

        console = _console()
        for block in blocks:
            console.print(rich_renderable(block))
        return
    sys.stdout.write("".join(f"{text}\n" for text in plain))


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
