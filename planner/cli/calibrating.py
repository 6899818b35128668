"""``planner calibrate``: each setting's constant fitted by Monte Carlo, written to the
constants file."""

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from planner.cli.options import SchedulerOpt, _not_with_scheduler, _tasks_executor
from planner.cli.output import _checked_destination
from planner.files import json_text
from planner.inputs import InputError


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
                "0.05 for the shuffle private coin, 0.01 and 0.05 for central (the settings "
                "it applies to, the default)."
            ),
        ),
    ] = False,
    large_eps: Annotated[
        bool,
        typer.Option(
            "--large-eps",
            help=(
                "With --direct: the factors above ε_strong = 1, at 5 and 20, for the local "
                "private coin (the default and only setting), written as the table its plans "
                "read above ε_strong = 1 (direct_large_eps)."
            ),
        ),
    ] = False,
    large_alpha: Annotated[
        bool,
        typer.Option(
            "--large-alpha",
            help=(
                "With --direct: the factors above α = 0.5, at 0.75 and 0.95, for the local "
                "private coin (the default and only setting), written as the table its plans "
                "read above α = 0.5 (direct_large_alpha)."
            ),
        ),
    ] = False,
) -> None:
    """Fit each setting's constant C on a grid by Monte Carlo; write the constants file.

    Finished grid points are kept in OUTPUT.partial.jsonl as they come: the same command
    run again after an interruption continues where it stopped, with the same result.
    """
    import datetime

    from planner import calibrate as calibration
    from planner.api import SETTING_KEYS
    from planner.files import write_atomically
    from planner.inputs import check_integer
    from planner.validate import code_version

    _not_with_scheduler(scheduler, workers)
    _checked_destination("json", output)
    keys = list(SETTING_KEYS)
    chosen = setting or keys
    for key in chosen:
        if key not in keys:
            raise InputError("setting", key, "one of " + ", ".join(keys))
    quick_axes: dict[str, list[float]] = {
        "k": [16, 64],
        "alpha": [0.25],
        "eps_strong": [1.0],
        "eps_ratio": [0.5],
    }
    # the stages that add points to a setting's direct factors, one at a time, each for
    # the settings it applies to (by default, every one of them); the shuffle private
    # coin's factor falls below ε = 0.25, central's moves both ways, the shuffle public
    # coin's does not move (docs/coverage.md)
    stages = {
        "below-alpha-min": (below_alpha_min, calibration.DIRECT_BY_NODE_SETTINGS),
        "small-eps": (small_eps, calibration.DIRECT_SMALL_EPS_SETTINGS),
        "large-eps": (large_eps, calibration.beyond_settings("eps_strong")),
        "large-alpha": (large_alpha, calibration.beyond_settings("alpha")),
    }
    given = [name for name, (chosen_stage, _) in stages.items() if chosen_stage]
    for name in given:
        if not direct:
            raise InputError(name, "set without --direct", "used together with --direct")
    if len(given) > 1:
        raise InputError(given[0], f"set with --{given[1]}", "left out: one stage at a time")
    if given and quick:
        raise InputError("quick", f"set with --{given[0]}", "left out: its points are fixed")
    if given:
        allowed = list(stages[given[0]][1])
        chosen = setting or allowed
        for key in chosen:
            if key not in allowed:
                raise InputError(
                    "setting", key, "one of " + ", ".join(allowed) + f" (with --{given[0]})"
                )
    grid = calibration.DIRECT_AXES if direct else None  # None: each setting's own grid
    if below_alpha_min:
        grid = calibration.BELOW_ALPHA_MIN_AXES
    axes = quick_axes if quick else grid
    # --small-eps, --large-eps and --large-alpha measure each setting at its own values
    beyond = "eps_strong" if large_eps else "alpha" if large_alpha else None
    axes_by_setting: dict[str, dict[str, list[float]]] = {}
    if small_eps:
        axes_by_setting = {key: calibration.small_eps_axes(key) for key in chosen}
    if beyond is not None:
        axes_by_setting = {key: calibration.beyond_axes(key, beyond) for key in chosen}
    trial_count = check_integer("trials", trials, 10, 10**6)
    run_seed = check_integer("seed", seed, 0, 2**63 - 1)
    worker_count = check_integer("workers", workers, 1, 256)
    total = sum(len(calibration.grid_points(key, axes_by_setting.get(key, axes))) for key in chosen)
    # finished points are kept here as they come: a run stopped for any reason continues
    # where it stopped when the same command is run again
    checkpoint = output.with_name(output.name + ".partial.jsonl")
    from rich.progress import Progress

    with (
        _tasks_executor(scheduler) as executor,
        Progress(disable=not sys.stderr.isatty()) as progress,
    ):
        task = progress.add_task("calibrating", total=total)
        results = calibration.calibrate(
            chosen,
            direct=direct,
            trials=trial_count,
            seed=run_seed,
            axes=axes,
            axes_by_setting=axes_by_setting,
            executor=executor,
            workers=worker_count,
            progress=lambda result: progress.update(
                task, advance=1, description=f"{result.point.setting} k={result.point.k}"
            ),
            checkpoint=checkpoint,
        )
    if direct:
        _write_direct_factors(
            results,
            chosen,
            trial_count,
            run_seed,
            axes,
            output,
            axes_by_setting=axes_by_setting,
            below_alpha_min=below_alpha_min,
            small_eps=small_eps,
            beyond=beyond,
        )
        checkpoint.unlink(missing_ok=True)
        return
    document = calibration.constants_document(
        results,
        trials=trial_count,
        seed=run_seed,
        axes=axes,
        created=datetime.date.today().isoformat(),
        code_version=code_version(),
    )
    write_atomically(output, json_text(document, indent=2) + "\n")
    checkpoint.unlink(missing_ok=True)
    for key in chosen:
        entry = document["settings"][key]
        values = entry["grid"]["multipliers"]
        typer.echo(
            f"{key}: C from {min(values):.3g} to {max(values):.3g} on "
            f"{len(values)} grid points (× {entry['grid']['safety_margin']} margin)"
        )
    typer.echo(f"wrote {output}")


def _shown_row(betas: list[float], row: list[float | None]) -> str:
    """A direct factor row as calibrate prints it: ``β = 0.2: 1.5, …`` (``vote only`` where
    the row has none)."""
    return ", ".join(
        f"β = {beta:g}: " + ("vote only" if factor is None else f"{factor:.3g}")
        for beta, factor in zip(betas, row, strict=True)
    )


def _write_direct_factors(
    results: list[Any],
    chosen: list[str],
    trials: int,
    seed: int,
    axes: Any,
    output: Path,
    *,
    axes_by_setting: dict[str, Any] | None = None,
    below_alpha_min: bool = False,
    small_eps: bool = False,
    beyond: str | None = None,
) -> None:
    """Put each setting's direct-calibration factors into (a copy of) the packaged file
    (``beyond``: the axis, ε_strong or α, of points beyond the direct points' top)."""
    import datetime
    from importlib import resources

    from planner import calibrate as calibration
    from planner.files import write_atomically
    from planner.validate import code_version

    document = json.loads(
        resources.files("planner").joinpath("data/constants.json").read_text("utf-8")
    )
    for key in chosen:
        own = [result for result in results if result.point.setting == key]
        made = {
            "trials": trials,
            "seed": seed,
            "axes": (axes_by_setting or {}).get(key, axes),
            "created": datetime.date.today().isoformat(),
            "code_version": code_version(),
        }
        entry_now = document["settings"][key]
        if beyond is not None:
            large = calibration.beyond_entry(own, entry_now["direct"], axis=beyond, **made)
            entry_now[calibration.BEYOND_ENTRY[beyond]] = large
            symbol = calibration.BEYOND_SYMBOL[beyond]
            for k, row in zip(large["k"], large["factor"], strict=True):
                typer.echo(
                    f"{key}, {symbol} above the direct points', k = {k}: direct-calibration "
                    + _shown_row(large["beta"], row)
                )
            continue
        if below_alpha_min or small_eps:
            if small_eps:
                entry_now["direct_small_eps"] = calibration.small_eps_entry(own, **made)
                band = calibration.rebuilt_by_node_entry(
                    key,
                    entry_now["direct_by_node"],
                    entry_now["direct"],
                    entry_now["direct_small_eps"],
                )
            else:
                band = calibration.by_node_entry(
                    own, entry_now["direct"], **made, small_eps=entry_now.get("direct_small_eps")
                )
            entry_now["direct_by_node"] = band
            for alpha, by_eps in zip(band["alpha"], band["factor"], strict=True):
                for eps_strong, table in zip(band["eps_strong"], by_eps, strict=True):
                    for k, row in zip(band["k"], table, strict=True):
                        typer.echo(
                            f"{key}, α node {alpha:g}, ε_strong node {eps_strong:g}, k = {k}: "
                            f"direct-calibration {_shown_row(band['beta'], row)}"
                        )
            continue
        entry = calibration.direct_entry(own, **made)
        document["settings"][key] = calibration.with_direct(key, document["settings"][key], entry)
        for k, moved, row in zip(
            entry["k"], entry["operating_factor"], entry["factor"], strict=True
        ):
            typer.echo(
                f"{key}, k = {k}: operating factor {moved:.3g}; direct-calibration factor "
                + _shown_row(entry["beta"], row)
            )
    document["created"] = datetime.date.today().isoformat()
    document["version"] = calibration.content_version(document["created"], document["settings"])
    write_atomically(output, json_text(document, indent=2) + "\n")
    typer.echo(f"wrote {output}")
