"""``planner calibrate``: each setting's constant fitted by Monte Carlo, written to the
constants file."""

import sys
from pathlib import Path
from typing import Annotated

import typer

from planner.cli.options import SchedulerOpt, _not_with_scheduler, _tasks_executor
from planner.cli.output import _checked_destination
from planner.files import json_text


def calibrate(
    setting: Annotated[
        list[str] | None,
        typer.Option(
            "--setting", metavar="KEY", help="Settings to calibrate (repeatable; default all)."
        ),
    ] = None,
    trials: Annotated[
        str, typer.Option("--trials", metavar="INT", help="Trials per family per check.")
    ] = "500",
    seed: Annotated[str, typer.Option("--seed", metavar="INT")] = "0",
    workers: Annotated[
        str, typer.Option("--workers", metavar="INT", help="Local worker processes.")
    ] = "2",
    scheduler: SchedulerOpt = None,
    output: Annotated[
        Path, typer.Option("--output", "-o", help="Constants file to write (atomically).")
    ] = Path("constants.json"),
    quick: Annotated[bool, typer.Option("--quick", help="A 2-point grid (smoke test).")] = False,
    direct: Annotated[
        bool,
        typer.Option(
            "--direct",
            help=(
                "Instead: the operating factor at β = 1/3 and one run's factor at "
                "β = 0.2 … 0.01 (direct calibration at β)."
            ),
        ),
    ] = False,
    below_alpha_min: Annotated[
        bool,
        typer.Option(
            "--below-alpha-min",
            help=(
                "With --direct: the factors below the direct points' α, at α = 0.01 and "
                "0.05 (the shuffle and central settings, which are the default), written "
                "with the direct points' as one table per (α, ε_strong) node (direct_by_node)."
            ),
        ),
    ] = False,
    small_eps: Annotated[
        bool,
        typer.Option(
            "--small-eps",
            help=(
                "With --direct: the factors below ε_strong = 0.25 at every α node of the "
                "direct_by_node tables (after --below-alpha-min), their smallest ε nodes: "
                "0.05 for the shuffle private coin, 0.0004, 0.001, 0.01 and 0.05 for central "
                "(the settings it applies to, the default)."
            ),
        ),
    ] = False,
    large_eps: Annotated[
        bool,
        typer.Option(
            "--large-eps",
            help=(
                "With --direct: the factors above ε_strong = 1, at 5 and 20, for the local "
                "private coin, k-RR and a channel per group (the settings it applies to, the "
                "default), written as the table their plans read above ε_strong = 1 "
                "(direct_large_eps)."
            ),
        ),
    ] = False,
    large_alpha: Annotated[
        bool,
        typer.Option(
            "--large-alpha",
            help=(
                "With --direct: the factors above α = 0.5, at 0.75 and 0.95, for the five "
                "paper settings (the default), written as the table their plans read above "
                "α = 0.5 (direct_large_alpha; where a setting's factors are tabled per ε "
                "node, from ε_strong = 0.25 up)."
            ),
        ),
    ] = False,
) -> None:
    """Fit each setting's constant C on a grid by Monte Carlo; write the constants file.

    Finished grid points are kept in OUTPUT.partial.jsonl as they come: the same command
    run again after an interruption continues where it stopped, with the same result.
    """
    from planner import api
    from planner.files import write_atomically

    _not_with_scheduler(scheduler, workers)
    _checked_destination("json", output)
    request = api.calibration_request(
        setting,
        direct=direct,
        quick=quick,
        below_alpha_min=below_alpha_min,
        small_eps=small_eps,
        large_eps=large_eps,
        large_alpha=large_alpha,
        trials=trials,
        seed=seed,
        workers=workers,
    )
    # finished points are kept here as they come: a run stopped for any reason continues
    # where it stopped when the same command is run again
    checkpoint = output.with_name(output.name + ".partial.jsonl")
    from rich.progress import Progress

    with (
        _tasks_executor(scheduler) as executor,
        Progress(disable=not sys.stderr.isatty()) as progress,
    ):
        task = progress.add_task("calibrating", total=request.total)
        answer = api.calibration_answer(
            request,
            executor=executor,
            progress=lambda result: progress.update(
                task, advance=1, description=f"{result.point.setting} k={result.point.k}"
            ),
            checkpoint=checkpoint,
        )
    write_atomically(output, json_text(answer.document, indent=2) + "\n")
    checkpoint.unlink(missing_ok=True)
    for line in answer.lines:
        typer.echo(line)
    typer.echo(f"wrote {output}")
