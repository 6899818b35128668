"""``planner sweep`` and ``planner plot``: plans over ranges or lists of values, as rows
or as a figure."""

import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from planner.cli.options import (
    AccountingOpt,
    FormatOpt,
    OutputOpt,
    SettingsOpt,
    SpecAlpha,
    SpecBeta,
    SpecDelta,
    SpecEps1,
    SpecEps2,
    SpecK,
    SpecPower,
    _beta_spec,
    _only_with,
    _typed,
)
from planner.cli.output import OutputFormat, _checked_destination, _emit, _json_format


def _sweep_from_options(
    settings: list[str] | None,
    k: str,
    alpha: str,
    eps1: str,
    eps2: str,
    delta: str | None,
    beta: Any,
    accounting: str,
    as_table: bool = False,
    alone: bool = False,
) -> Any:
    from planner import api

    return api.sweep_result(
        settings=settings or None,  # no --setting: every setting
        k=k,
        alpha=alpha,
        eps1=eps1,
        eps2=eps2,
        delta=delta,
        beta=beta,
        accounting=accounting,
        as_table=as_table,
        alone=alone,
    )


def sweep(
    k: SpecK,
    alpha: SpecAlpha,
    eps1: SpecEps1,
    eps2: SpecEps2,
    settings: SettingsOpt = None,
    delta: SpecDelta = None,
    beta: SpecBeta = "0.3333333333333333",
    power: SpecPower = None,
    accounting: AccountingOpt = "exact",
    output_format: FormatOpt = "table",
    output: OutputOpt = None,
    as_json: Annotated[bool, typer.Option("--json", help="Same as --format json.")] = False,
    alone: Annotated[
        bool,
        typer.Option(
            "--alone",
            help="Each setting's own protocol alone, as planner plan --protocol KEY (e.g. "
            "-s shuffle-private: the Poisson protocol, where the plan runs the multi-message "
            "one); each row planned one by one, at most 500 rows a setting; not with a mixed "
            "pair.",
        ),
    ] = False,
) -> None:
    """Plans over a range or list of values of one or more parameters, a row each.

    Example: planner sweep -s local-private -s shuffle-private -k 1000 --alpha 0.1
    --eps1 1 --eps2 0.05:1:20log --delta 1e-6 --format csv
    """
    from planner.report import sweep_renderable
    from planner.sweep import sweep_to_csv, sweep_to_dict

    chosen_format = _checked_destination(_json_format(output_format, as_json), output)
    beta = _beta_spec(beta, power)
    as_table = chosen_format is OutputFormat.TABLE  # its row cap, checked before any sizing
    result = _sweep_from_options(
        settings, k, alpha, eps1, eps2, delta, beta, accounting, as_table=as_table, alone=alone
    )
    _emit(chosen_format, output, result, sweep_renderable, sweep_to_csv, sweep_to_dict)
    if chosen_format is not OutputFormat.TABLE:  # the table's caption says them
        for line in result.notes:
            sys.stderr.write(f"note: {line}\n")


def plot(
    k: SpecK,
    alpha: SpecAlpha,
    eps1: SpecEps1,
    eps2: SpecEps2,
    output: Annotated[
        Path, typer.Option("--output", "-o", metavar="FILE.png|FILE.svg", help="The figure.")
    ],
    settings: SettingsOpt = None,
    delta: SpecDelta = None,
    beta: SpecBeta = "0.3333333333333333",
    accounting: AccountingOpt = "exact",
    power: Annotated[
        bool,
        typer.Option(
            "--power",
            help="The power curve instead: power 1 − β against total users (each setting's "
            "plan's split), one value of every other parameter.",
        ),
    ] = False,
    users: Annotated[
        str | None,
        typer.Option(
            "--users",
            metavar="SPEC",
            help="--power: the total users (default: 0.5 to 30 times each setting's plan).",
        ),
    ] = None,
) -> None:
    """Users per group against the one swept parameter, a line per setting (needs [plot]);
    with --power, the power 1 − β against total users.

    Example: planner plot -k 1000 --alpha 0.1 --eps1 1 --eps2 0.05:1:30log --delta 1e-6
    -o eps2.png
    """
    from planner.files import check_output_path
    from planner.plot import plot_sweep, save_figure, sweep_title

    output = check_output_path(output, suffixes=(".png", ".svg"))
    _only_with(power, "--power", "users")
    if power:
        from planner.inputs import InputError
        from planner.plot import plot_power, power_title
        from planner.power import settings_curves

        if _typed("beta"):
            raise InputError("beta", beta, "left out with --power (the curve solves for β)")
        curves = settings_curves(
            settings,
            k=k,
            alpha=alpha,
            eps1=eps1,
            eps2=eps2,
            delta=delta,
            accounting=accounting,
            users=users,
        )
        save_figure(plot_power(curves, power_title(curves[0][0])), output)
        points = sum(len(each) for _, each in curves)
        backed = sum(point.beta is not None for _, each in curves for point in each)
        typer.echo(f"wrote {output} ({points} points, {backed} with a plan)")
        return
    result = _sweep_from_options(settings, k, alpha, eps1, eps2, delta, beta, accounting)
    fixed = {  # the parsed values: a spec like 1000:1000:3 collapses to one number
        name: float(result.columns[name][0])
        for name, value in (
            ("k", k),
            ("alpha", alpha),
            ("eps1", eps1),
            ("eps2", eps2),
            ("delta", delta),
        )
        if value is not None and name not in result.varied and len(result)
    }
    save_figure(plot_sweep(result, sweep_title(fixed)), output)
    typer.echo(f"wrote {output} ({len(result)} plans, {int(result.ok().sum())} ok)")
