"""``planner plan`` writes its table to a pipe without rich: byte for byte what rich wrote.

``planner.cli.output.print_blocks`` renders a plan's blocks itself where the output is
plain text, and hands them to rich wherever the two might differ. These tests hold the
two renderings equal on plans across every setting, with warnings and large numbers,
and on random text, and check each fallback.
"""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys

import numpy as np
from rich.console import Console

from planner import Query, plan
from planner.cli.output import PIPED_WIDTH, _plain_table, _plain_text, plain_lines
from planner.formulas.settings import ALL_SETTINGS, Model
from planner.inputs import InputError
from planner.report import TableBlock, TextBlock, plan_blocks, rich_renderable


def _rich_text(blocks: list) -> str:
    console = Console(file=io.StringIO(), width=PIPED_WIDTH, force_terminal=False)
    for block in blocks:
        console.print(rich_renderable(block))
    return console.file.getvalue()  # type: ignore[attr-defined]


def _plain(blocks: list) -> str | None:
    lines = plain_lines(blocks)
    return None if lines is None else "".join(f"{line}\n" for line in lines)


def _random_queries(count: int, seed: int) -> list[Query]:
    rng = np.random.default_rng(seed)
    queries = []
    while len(queries) < count:
        setting = ALL_SETTINGS[int(rng.integers(len(ALL_SETTINGS)))]
        try:
            queries.append(
                Query(
                    setting,
                    k=int(np.exp(rng.uniform(np.log(2), np.log(10**5)))),
                    alpha=float(np.exp(rng.uniform(np.log(0.02), np.log(0.9)))),
                    eps1=float(np.exp(rng.uniform(np.log(0.05), np.log(20)))),
                    eps2=float(np.exp(rng.uniform(np.log(0.05), np.log(20)))),
                    delta=1e-6 if setting.model is Model.SHUFFLE else None,
                )
            )
        except InputError:
            continue
    return queries


def test_plain_rendering_equals_rich_on_random_plans() -> None:
    compared = 0
    for query in _random_queries(40, seed=731):
        try:
            blocks = plan_blocks(plan(query))
        except InputError:  # outside the covered region: the CLI simulates or refuses
            continue
        plain = _plain(blocks)
        assert plain is not None, query  # the planner's own text needs no fallback
        assert plain == _rich_text(blocks), query
        compared += 1
    assert compared >= 25


def test_fallbacks_where_rich_would_differ() -> None:
    table = TableBlock("a title", (("", "left"), ("n", "right")), (("users", "1,000"),))
    assert _plain_table(table) is not None
    # a title wider than its table is a line of its own, unbroken (it broke at the
    # table's width: a plan's "β =" / "0.3333"); a word wider than a line: rich folds it
    wide = _plain_table(TableBlock("t" * 40, table.columns, table.rows))
    assert wide is not None and wide[0] == "t" * 40
    assert _plain_table(TableBlock("t" * (PIPED_WIDTH + 1), table.columns, table.rows)) is None
    # markup and emoji codes in a cell: rich reads them
    assert _plain_table(TableBlock("x", table.columns, (("[bold]u[/bold]", "1"),))) is None
    assert _plain_table(TableBlock("x", table.columns, (("a :smile: b", "1"),))) is None
    # wide characters, and lines rich would wrap
    assert _plain_table(TableBlock("x", table.columns, (("数", "1"),))) is None
    assert _plain_text(TextBlock(("w" * (PIPED_WIDTH + 1),))) is None
    assert _plain_text(TextBlock(("a\tb",))) is None
    # what falls back prints as rich does, and the rest equals rich
    blocks = (table, TableBlock("t" * 40, table.columns, table.rows), TextBlock(("a", "b")))
    for block in (*blocks, TextBlock(("x",), "yellow")):
        assert _plain([block]) == _rich_text([block])


def test_line_breaking_equals_rich_on_random_text() -> None:
    """Long lines and titles break where rich breaks them (words of random lengths and
    runs of spaces, titles wider than their table)."""
    rng = np.random.default_rng(5)
    wrapped_texts = wrapped_titles = 0
    for _ in range(300):
        words = [
            "x" * int(rng.integers(1, 30)) + " " * int(rng.integers(0, 4))
            for _ in range(int(rng.integers(1, 40)))
        ]
        text = " " * int(rng.integers(0, 3)) + "".join(words)
        lines = _plain([TextBlock((text, "a short line"))])
        assert lines is not None  # every word fits a line: no fallback
        assert lines == _rich_text([TextBlock((text, "a short line"))]), repr(text)
        wrapped_texts += lines.count("\n") > 2
        table = TableBlock(text, (("", "left"), ("n", "right")), (("users needed", "1,234"),))
        plain = _plain([table])
        assert plain == _rich_text([table]), repr(text)
        wrapped_titles += plain.count("\n") > 6
    assert wrapped_texts >= 50 and wrapped_titles >= 50  # the breaking itself was compared


def test_cli_pipe_output_equals_rich_with_its_styles_removed() -> None:
    """Through a pipe: plain where nothing asks for styles; under FORCE_COLOR rich writes
    it, with escape codes, and without them the two are the same text."""
    argv = [sys.executable, "-m", "planner", "plan", "--model", "shuffle", "-k", "1000"]
    argv += ["--alpha", "0.1", "--eps1", "1", "--eps2", "0.25", "--delta", "1e-6"]
    base = {k: v for k, v in os.environ.items() if k not in _STYLING}
    outputs = [
        subprocess.run(
            argv,
            capture_output=True,
            text=True,
            encoding="utf-8",
            env={**base, **extra, "PYTHONIOENCODING": "utf-8"},
            check=True,
        ).stdout
        for extra in ({}, {"FORCE_COLOR": "1"})
    ]
    assert "\x1b[" not in outputs[0] and "\x1b[" in outputs[1]
    assert "warning:" in outputs[0]  # the styled (yellow) block is among them
    assert outputs[0] == re.sub(r"\x1b\[[0-9;]*m", "", outputs[1])


_STYLING = ("FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE", "NO_COLOR")
