"""``planner batch``: a file of scenarios, a row each (optionally validated)."""

import sys
from pathlib import Path
from typing import Annotated

import typer

from planner.cli.options import (
    FormatOpt,
    OutputOpt,
    SchedulerOpt,
    _not_with_scheduler,
    _only_with,
    _tasks_executor,
)
from planner.cli.output import (
    VERDICT_EXIT_CODES,
    OutputFormat,
    _checked_destination,
    _emit,
    _json_format,
)


def batch(
    file: Annotated[Path, typer.Argument(metavar="FILE", help="Scenarios: a .toml or .csv file.")],
    output_format: FormatOpt = "table",
    output: OutputOpt = None,
    as_json: Annotated[bool, typer.Option("--json", help="Same as --format json.")] = False,
    validate: Annotated[
        bool,
        typer.Option(
            "--validate",
            help="Also check every plan against the real tester (as planner validate); rows "
            "carry the verdict; exit 1 if one fails, 3 if one is not certified.",
        ),
    ] = False,
    trials: Annotated[
        str,
        typer.Option(
            "--trials", metavar="auto|INT", help="--validate: trials per family (as validate)."
        ),
    ] = "auto",
    seed: Annotated[
        str,
        typer.Option(
            "--seed", metavar="INT", help="--validate: run seed (each row's derives from it)."
        ),
    ] = "0",
    scheduler: SchedulerOpt = None,
    workers: Annotated[
        str, typer.Option("--workers", metavar="INT", help="--validate: local worker processes.")
    ] = "1",
) -> None:
    """One row per scenario (a plan, or a solve with one of n1, n2, alpha, eps2 left out).

    TOML: [[scenario]] tables; CSV: a header row. Fields: name, model, coin, k, alpha,
    eps1, eps2, delta, beta, accounting, n1, n2, and in a plan scenario protocol (that
    protocol alone, as plan --protocol) (see README).
    """
    from planner import api
    from planner.batch import batch_to_csv
    from planner.documents import batch_to_dict
    from planner.report import batch_renderable

    _only_with(validate, "--validate", "trials", "seed", "scheduler", "workers")
    _not_with_scheduler(scheduler, workers)
    chosen_format = _checked_destination(_json_format(output_format, as_json), output)
    request = api.batch_request(
        file,
        validate=validate,
        trials=trials,
        seed=seed,
        workers=workers,
        table=chosen_format is OutputFormat.TABLE,
    )
    if not validate:
        rows = api.batch_rows(request)
    else:
        from rich.progress import Progress

        with (
            _tasks_executor(scheduler) as executor,
            Progress(transient=True, disable=not sys.stderr.isatty()) as progress,
        ):
            task = progress.add_task("validating", total=len(request.scenarios))
            rows = api.batch_rows(
                request,
                executor=executor,
                progress=lambda row: progress.update(
                    task, advance=1, description=str(row["name"] or row["model"])
                ),
            )
    _emit(chosen_format, output, rows, batch_renderable, batch_to_csv, batch_to_dict)
    if validate:
        verdicts = {row["verdict"] for row in rows if row["verdict"] is not None}
        if "fail" in verdicts:
            raise typer.Exit(VERDICT_EXIT_CODES["fail"])
        if verdicts - {"pass"}:  # inconclusive, or a validation that could not run
            raise typer.Exit(VERDICT_EXIT_CODES["inconclusive"])
