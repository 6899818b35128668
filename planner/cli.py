"""The ``planner`` command line: a thin typer layer over :mod:`planner.api`.

Every bad input ends in one line ``error: …`` naming the parameter and its allowed
range, exit code 2, no traceback.

No ``from __future__ import annotations`` here: typer reads every command's signature
each time it builds the CLI, and string annotations would be evaluated (twice) on every
start; as objects they are built once, at import.
"""

import contextlib
import dataclasses
import errno
import io
import json
import os
import sys
from collections.abc import Iterator
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer

from planner.argv import refuse_repeated_options
from planner.files import json_text
from planner.inputs import ALLOWED, InputError
from planner.pipes import EXIT_CODES_HELP
from planner.startup import started


class OutputFormat(StrEnum):
    TABLE = "table"
    CSV = "csv"
    JSON = "json"


_USAGE_ERROR: type[Exception] = typer.BadParameter.__mro__[1]
"""click's UsageError, from wherever this typer takes click (vendored or not)."""

app = typer.Typer(
    add_completion=False,
    help="Sample-size planner for private closeness testing under heterogeneous privacy. "
    + EXIT_CODES_HELP,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,  # help text is plain: [plot], [[scenario]] and 20log stay as written
)


def _show_version(value: bool) -> None:
    if value:
        from planner.validate import code_version

        typer.echo(f"planner {code_version()}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_show_version, is_eager=True, help="Print the version and exit."
        ),
    ] = False,
) -> None:
    """Sample-size planner for private closeness testing under heterogeneous privacy."""


Model = Annotated[
    str, typer.Option("--model", "-m", metavar="local|shuffle|central", help="Privacy model.")
]
CoinOpt = Annotated[
    str, typer.Option("--coin", "-c", metavar="private|public", help="Shared randomness available?")
]
KOpt = Annotated[
    str, typer.Option("-k", "--k", metavar="INT", help=f"Domain size, {ALLOWED['k']}.")
]
AlphaOpt = Annotated[
    str,
    typer.Option(
        "--alpha", "-a", metavar="FLOAT", help=f"TV distance to detect, {ALLOWED['alpha']}."
    ),
]
Eps1Opt = Annotated[
    str, typer.Option("--eps1", metavar="FLOAT", help=f"Group 1's ε, {ALLOWED['eps1']}.")
]
Eps2Opt = Annotated[
    str, typer.Option("--eps2", metavar="FLOAT", help=f"Group 2's ε, {ALLOWED['eps2']}.")
]
DeltaOpt = Annotated[
    str | None,
    typer.Option("--delta", "-d", metavar="FLOAT", help="δ in [1e-12, 1); shuffle model only."),
]
BetaOpt = Annotated[
    str, typer.Option("--beta", "-b", metavar="FLOAT", help="Target error probability in (0, 0.5).")
]
AccountingOpt = Annotated[
    str,
    typer.Option(
        "--accounting",
        metavar="exact|paper",
        help="Shuffle noise μ: exact two-bin hockey-stick (default) or the paper's lemma.",
    ),
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print the documented JSON document.")]
AllocationOpt = Annotated[
    str,
    typer.Option(
        "--allocation",
        metavar="fewest|paper|cost|fixed-n2",
        help=(
            "Split of users: the fewest in all (default), the paper's rule, the cheapest "
            "cost1·n1 + cost2·n2, or a given n2."
        ),
    ),
]
Cost1Opt = Annotated[str, typer.Option("--cost1", metavar="FLOAT", help="Cost per group-1 user.")]
Cost2Opt = Annotated[str, typer.Option("--cost2", metavar="FLOAT", help="Cost per group-2 user.")]

SimulationBudgetOpt = Annotated[
    str,
    typer.Option(
        "--simulation-budget",
        metavar="SECONDS",
        help="Outside the covered region, simulate this query for at most this long "
        "(0: refuse instead).",
    ),
]


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


@app.command()
def plan(
    model: Model,
    k: KOpt,
    alpha: AlphaOpt,
    eps1: Eps1Opt,
    eps2: Eps2Opt,
    coin: CoinOpt = "private",
    delta: DeltaOpt = None,
    beta: BetaOpt = "0.3333333333333333",
    accounting: AccountingOpt = "exact",
    exact: Annotated[
        bool,
        typer.Option(
            "--exact", help="Also search this very query's minimal n by simulation (seconds)."
        ),
    ] = False,
    trials: Annotated[
        str, typer.Option("--trials", metavar="INT", help="--exact: trials per family per check.")
    ] = "1000",
    seed: Annotated[str, typer.Option("--seed", metavar="INT", help="--exact: seed.")] = "0",
    constants: Annotated[
        str,
        typer.Option(
            "--constants",
            metavar="calibrated|proof|order",
            help="Source of C: Monte Carlo (default), the paper's proofs, or C = 1.",
        ),
    ] = "calibrated",
    allocation: AllocationOpt = "fewest",
    cost1: Cost1Opt = "1",
    cost2: Cost2Opt = "1",
    n2: Annotated[
        str | None,
        typer.Option("--n2", metavar="INT", help="Group 2's given size (--allocation fixed-n2)."),
    ] = None,
    simulation_budget: SimulationBudgetOpt = "30",
    as_json: JsonOpt = False,
) -> None:
    """How many users each group needs (n1 for ε1, n2 for ε2).

    Inside the covered region the calibrated constants size the plan; outside it the
    real tester is simulated at this very query (within --simulation-budget), or the
    query is refused with the covered range (exit 2). The plan's coverage line says which.
    """
    from planner import api
    from planner.report import allocation_renderable, exact_renderable, plan_renderables

    _only_with(exact, "--exact", "trials", "seed")
    _only_with(allocation.lower() == "cost", "--allocation cost", "cost1", "cost2")
    _only_with(allocation.lower() == "fixed-n2", "--allocation fixed-n2", "n2")
    answer = api.plan_answer(
        model=model,
        coin=coin,
        k=k,
        alpha=alpha,
        eps1=eps1,
        eps2=eps2,
        delta=delta,
        beta=beta,
        accounting=accounting,
        constants=constants,
        allocation=allocation,
        cost1=cost1,
        cost2=cost2,
        n2=n2,
        exact=exact,
        trials=trials,
        seed=seed,
        simulation_budget=simulation_budget,
    )
    if as_json:
        _print_json(answer.to_dict())
        return
    console = _console()
    shown = answer.shown
    if answer.allocation is not None:  # its line below gives the reason: not twice
        said = f"allocation {answer.allocation.rule.value}: "
        kept = tuple(line for line in shown.warnings if not line.startswith(said))
        shown = dataclasses.replace(shown, warnings=kept)
    for renderable in plan_renderables(shown):
        console.print(renderable)
    if answer.exact is not None:
        console.print(exact_renderable(answer.exact, answer.plan))
    if answer.allocation is not None:
        console.print(allocation_renderable(answer.allocation, answer.plan))


@app.command()
def compare(
    k: KOpt,
    alpha: AlphaOpt,
    eps1: Eps1Opt,
    eps2: Eps2Opt,
    delta: DeltaOpt = None,
    beta: BetaOpt = "0.3333333333333333",
    accounting: AccountingOpt = "exact",
    as_json: JsonOpt = False,
) -> None:
    """All five settings side by side, cheapest (fewest users in total) first.

    A setting whose plan would fall outside its covered region is listed as not covered,
    with the reason (``planner plan`` can simulate it).
    """
    from planner import api
    from planner.report import compare_renderable

    answer = api.compare_answer(
        k=k, alpha=alpha, eps1=eps1, eps2=eps2, delta=delta, beta=beta, accounting=accounting
    )
    if as_json:
        _print_json(answer.to_dict())
        return
    console = _console()
    console.print(
        compare_renderable(
            answer.plans,
            None if delta is None else float(delta),
            answer.query,
            answer.not_covered,
        )
    )
    if delta is None:
        console.print("shuffle settings left out: give --delta to include them")


SettingsOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--setting",
        "-s",
        metavar="KEY",
        help="A setting to sweep (repeat for several): local-private, local-public, "
        "shuffle-private, shuffle-public, central. Default: all (shuffle ones need --delta).",
    ),
]
SPEC_HELP = " One value, a list a,b,c, or a range start:stop:count[log]."
SpecK = Annotated[str, typer.Option("-k", "--k", metavar="SPEC", help="Domain size." + SPEC_HELP)]
SpecAlpha = Annotated[
    str, typer.Option("--alpha", "-a", metavar="SPEC", help="Distance." + SPEC_HELP)
]
SpecEps1 = Annotated[str, typer.Option("--eps1", metavar="SPEC", help="Group 1's ε." + SPEC_HELP)]
SpecEps2 = Annotated[str, typer.Option("--eps2", metavar="SPEC", help="Group 2's ε." + SPEC_HELP)]
SpecDelta = Annotated[
    str | None,
    typer.Option("--delta", "-d", metavar="SPEC", help="δ (shuffle model)." + SPEC_HELP),
]
SpecBeta = Annotated[
    str, typer.Option("--beta", "-b", metavar="SPEC", help="Target error." + SPEC_HELP)
]
FormatOpt = Annotated[
    str, typer.Option("--format", "-f", metavar="table|csv|json", help="Output format.")
]
OutputOpt = Annotated[
    Path | None, typer.Option("--output", "-o", metavar="FILE", help="Write to FILE (whole).")
]


def _sweep_from_options(
    settings: list[str] | None,
    k: str,
    alpha: str,
    eps1: str,
    eps2: str,
    delta: str | None,
    beta: str,
    accounting: str,
) -> Any:
    from planner import api

    return api.sweep_result(
        settings=settings,
        k=k,
        alpha=alpha,
        eps1=eps1,
        eps2=eps2,
        delta=delta,
        beta=beta,
        accounting=accounting,
    )


@app.command()
def sweep(
    k: SpecK,
    alpha: SpecAlpha,
    eps1: SpecEps1,
    eps2: SpecEps2,
    settings: SettingsOpt = None,
    delta: SpecDelta = None,
    beta: SpecBeta = "0.3333333333333333",
    accounting: AccountingOpt = "exact",
    output_format: FormatOpt = "table",
    output: OutputOpt = None,
    as_json: Annotated[bool, typer.Option("--json", help="Same as --format json.")] = False,
) -> None:
    """Plans over a range or list of values of one or more parameters, a row each.

    Example: planner sweep -s local-private -s shuffle-private -k 1000 --alpha 0.1
    --eps1 1 --eps2 0.05:1:20log --delta 1e-6 --format csv
    """
    from planner.report import sweep_renderable
    from planner.sweep import sweep_to_csv, sweep_to_dict

    chosen_format = _checked_destination(_json_format(output_format, as_json), output)
    result = _sweep_from_options(settings, k, alpha, eps1, eps2, delta, beta, accounting)
    _emit(chosen_format, output, result, sweep_renderable, sweep_to_csv, sweep_to_dict)


@app.command()
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
) -> None:
    """Users per group against the one swept parameter, a line per setting (needs [plot]).

    Example: planner plot -k 1000 --alpha 0.1 --eps1 1 --eps2 0.05:1:30log --delta 1e-6
    -o eps2.png
    """
    from planner.files import check_output_path
    from planner.plot import plot_sweep, save_figure, sweep_title

    output = check_output_path(output, suffixes=(".png", ".svg"))
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


SchedulerOpt = Annotated[
    str | None,
    typer.Option(
        "--scheduler",
        metavar="ADDRESS",
        help="Run the tasks on the dask scheduler at tcp://host:port instead of local "
        "processes (needs the dask extra; see README, Running on a cluster).",
    ),
]


@app.command()
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
    eps1, eps2, delta, beta, accounting, n1, n2 (see README).
    """
    from planner.batch import batch_to_csv, batch_to_dict, read_scenarios, run_batch
    from planner.inputs import check_integer
    from planner.report import batch_renderable
    from planner.validate import check_trials

    _only_with(validate, "--validate", "trials", "seed", "scheduler", "workers")
    _not_with_scheduler(scheduler, workers)
    chosen_format = _checked_destination(_json_format(output_format, as_json), output)
    trial_count = check_trials(trials)
    run_seed = check_integer("seed", seed, 0, 2**63 - 1)
    worker_count = check_integer("workers", workers, 1, 256)
    scenarios = read_scenarios(file)
    from planner.limits import check_batch

    solves = sum(1 for row in scenarios if row.get("n1") is not None or row.get("n2") is not None)
    check_batch(solves, len(scenarios), validate, table=chosen_format is OutputFormat.TABLE)
    if not validate:
        rows = run_batch(scenarios)
    else:
        from rich.progress import Progress

        with (
            _tasks_executor(scheduler) as executor,
            Progress(transient=True, disable=not sys.stderr.isatty()) as progress,
        ):
            task = progress.add_task("validating", total=len(scenarios))
            rows = run_batch(
                scenarios,
                validate=True,
                trials=trial_count,
                seed=run_seed,
                executor=executor,
                workers=worker_count,
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


def _not_with_scheduler(scheduler: str | None, workers: str) -> None:
    """``--workers`` (the local pool) and ``--scheduler`` (a cluster) exclude each other."""
    if scheduler is not None and _typed("workers"):
        raise InputError(
            "workers", workers, "left out with --scheduler (the cluster's workers run the tasks)"
        )


@contextlib.contextmanager
def _tasks_executor(scheduler: str | None) -> Iterator[Any]:
    """None (the local pool of --workers), or an executor on the dask scheduler; its
    client is closed however the work ends (Ctrl-C cancels the tasks not yet done)."""
    if scheduler is None:
        yield None
        return
    from planner.cluster import cluster_executor

    with cluster_executor(scheduler) as executor:
        yield executor


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


@app.command()
def explain(
    model: Model,
    coin: CoinOpt = "private",
    latex: Annotated[bool, typer.Option("--latex", help="Print LaTeX.")] = False,
    as_stated: Annotated[
        bool,
        typer.Option(
            "--as-stated",
            help="Shuffle: the paper's ε-form instead of the μ-form used for numbers.",
        ),
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """The formula behind a setting: expression, named terms, theorem, validity."""
    import sympy

    from planner import api

    if as_json:  # GET /v1/explain's document
        _print_json(api.explain_document(model, coin, as_stated))
        return

    _, pairs = api.explained_bounds(model, coin, as_stated)
    for role, bound in pairs:
        heading = f"{role} bound"
        typer.echo(f"{heading}: {bound.title} — {bound.reference}")
        typer.echo(f"  counts: {bound.counts}; the terms combine by {bound.combine.value}")
        typer.echo(f"  valid for: {bound.validity}")
        if latex:
            typer.echo("  " + sympy.latex(bound.symbolic()))
        else:
            for label, term in zip(bound.term_labels, bound.symbolic_terms(), strict=True):
                typer.echo(f"  term {label}:")
                typer.echo(_pretty(term))
        typer.echo("")


@app.command()
def solve(
    model: Model,
    k: KOpt,
    eps1: Eps1Opt,
    coin: CoinOpt = "private",
    alpha: Annotated[
        str | None,
        typer.Option("--alpha", "-a", metavar="FLOAT", help="Distance; leave out to solve for it."),
    ] = None,
    eps2: Annotated[
        str | None,
        typer.Option("--eps2", metavar="FLOAT", help="Group 2's ε; leave out to solve for it."),
    ] = None,
    n1: Annotated[
        str | None, typer.Option("--n1", metavar="INT", help="Group 1's users; leave out to solve.")
    ] = None,
    n2: Annotated[
        str | None, typer.Option("--n2", metavar="INT", help="Group 2's users; leave out to solve.")
    ] = None,
    delta: DeltaOpt = None,
    beta: BetaOpt = "0.3333333333333333",
    accounting: AccountingOpt = "exact",
    as_json: JsonOpt = False,
) -> None:
    """Solve for the one parameter left out of --n1, --n2, --alpha, --eps2."""
    from planner import api
    from planner.report import solution_to_dict, tester_point_words
    from planner.solve import Unknown

    solution = api.solve_answer(
        model=model,
        coin=coin,
        k=k,
        eps1=eps1,
        alpha=alpha,
        eps2=eps2,
        n1=n1,
        n2=n2,
        delta=delta,
        beta=beta,
        accounting=accounting,
    )
    unknown = solution.unknown
    if as_json:
        _print_json(solution_to_dict(solution))
    elif solution.feasible:
        assert solution.value is not None and solution.plan is not None
        shown = (
            f"{int(solution.value):,}"
            if unknown in (Unknown.N1, Unknown.N2)
            else f"{solution.value:.6g}"
        )
        from planner.limits import SIMULATION_N_MAX

        sizes = solution.plan.n_users_group1, solution.plan.n_users_group2
        check = (
            f"which planner validate --allocation fixed-n2 --n2 {sizes[1]} checks"
            if max(sizes) <= SIMULATION_N_MAX
            else f"too many to simulate (validate takes up to {SIMULATION_N_MAX:.0e} a group)"
        )
        typer.echo(
            f"{unknown.value} = {shown}   ({solution.reason}; run as n1 = {sizes[0]:,}, "
            f"n2 = {sizes[1]:,}, {check}; constant {solution.plan.constant_source.value})"
            + (
                f"; {tester_point_words(solution.plan)}"
                if solution.plan.tester_point is not None
                else ""
            )
        )
    else:
        typer.echo(f"infeasible: {solution.reason}")
    if not solution.feasible:
        raise typer.Exit(1)


@app.command()
def validate(
    model: Model,
    k: KOpt,
    alpha: AlphaOpt,
    eps1: Eps1Opt,
    eps2: Eps2Opt,
    coin: CoinOpt = "private",
    delta: DeltaOpt = None,
    beta: BetaOpt = "0.3333333333333333",
    accounting: AccountingOpt = "exact",
    n1: Annotated[
        str | None,
        typer.Option("--n1", metavar="INT", help="Check these sizes instead of the plan's."),
    ] = None,
    n2: Annotated[str | None, typer.Option("--n2", metavar="INT")] = None,
    trials: Annotated[
        str,
        typer.Option(
            "--trials",
            metavar="auto|INT",
            help="Trials per family: auto (looks of 200, 400, 800, … until every family "
            "is decided) or a fixed count (one look).",
        ),
    ] = "auto",
    max_trials: Annotated[
        str,
        typer.Option("--max-trials", metavar="INT", help="Cap on trials per family for auto."),
    ] = "25600",
    seed: Annotated[str, typer.Option("--seed", metavar="INT", help="Run seed.")] = "0",
    path: Annotated[
        str, typer.Option("--path", metavar="user|fast|auto", help="Simulation path.")
    ] = "auto",
    family: Annotated[
        list[str] | None,
        typer.Option("--family", metavar="NAME", help="Only these families (repeatable)."),
    ] = None,
    p_file: Annotated[
        Path | None, typer.Option("--p-file", help="Group 1's pmf (CSV/JSON/NPY).")
    ] = None,
    q_file: Annotated[Path | None, typer.Option("--q-file", help="Group 2's pmf.")] = None,
    normalize: Annotated[
        bool, typer.Option("--normalize", help="Rescale pmf files to sum to 1.")
    ] = False,
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write the JSON report here (atomically).")
    ] = None,
    allocation: AllocationOpt = "fewest",
    cost1: Cost1Opt = "1",
    cost2: Cost2Opt = "1",
    simulation_budget: SimulationBudgetOpt = "30",
    as_json: JsonOpt = False,
) -> None:
    """Run the real private tester on every instance family and report its error rates.

    Verdict per family and overall, jointly at 95 % over families and looks: pass
    (certified within β, exit 0), fail (shown above β, exit 1), inconclusive (neither;
    more trials would decide, exit 3). With --allocation cost|fixed-n2 the allocated
    sizes are checked (fixed-n2 takes group 2's size from --n2).
    """
    from planner import api
    from planner.inputs import check_choice, check_integer
    from planner.validate import PathChoice, check_trials, report_json
    from planner.validate import validate as run_validation

    _only_with(allocation.lower() == "cost", "--allocation cost", "cost1", "cost2")
    _checked_destination("json", output)
    # the sizes to check: the plan's, the allocation's (an infeasible one is refused), or
    # the given ones, as the service's validation jobs take them
    query, n1_checked, n2_checked, split = api.validation_query(
        model=model,
        coin=coin,
        k=k,
        alpha=alpha,
        eps1=eps1,
        eps2=eps2,
        delta=delta,
        beta=beta,
        accounting=accounting,
        n1=n1,
        n2=n2,
        allocation=allocation,
        cost1=cost1,
        cost2=cost2,
    )
    instance = api.file_pair(p_file, q_file, query.k, normalize=normalize, alpha=query.alpha)
    extra = [] if instance is None else [instance]
    path_choice = check_choice("path", path, PathChoice)
    trial_count = check_trials(trials)
    trial_cap = check_integer("max-trials", max_trials, 200, 10**7)
    run_seed = check_integer("seed", seed, 0, 2**63 - 1)
    families = [] if extra and not family else family
    # the plan `planner plan` prints: calibrated, or simulated outside the covered region
    from planner.coverage import covered_plan

    budget = api.checked_simulation_budget(simulation_budget)
    given = n1_checked is not None or n2_checked is not None
    printed = None if given else covered_plan(query, budget_seconds=budget, split=split)
    report = _with_progress(
        lambda progress: run_validation(
            query,
            n1=n1_checked,
            n2=n2_checked,
            trials=trial_count,
            max_trials=trial_cap,
            seed=run_seed,
            path=path_choice,
            families=families,
            extra=extra,
            progress=progress,
            checked_plan=printed,
            split=split,
        ),
        None,
    )
    text = report_json(report)
    if output is not None:
        from planner.files import write_atomically

        write_atomically(output, text)
    if as_json:
        sys.stdout.write(text)
    else:
        from planner.report import validation_renderable

        console = _console()
        console.print(validation_renderable(report))
        for warning in report.query.warnings:  # as `planner plan` prints them
            console.print(f"warning: {warning}", highlight=False, markup=False)
    raise typer.Exit(VERDICT_EXIT_CODES[report.verdict.value])


@app.command()
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


@app.command()
def serve(
    host: Annotated[
        str, typer.Option("--host", help="Address to bind; not loopback needs --token.")
    ] = "127.0.0.1",
    port: Annotated[str, typer.Option("--port", metavar="INT", help="TCP port.")] = "8000",
    db: Annotated[
        Path | None,
        typer.Option("--db", help="Jobs database (default: in the user's data directory)."),
    ] = None,
    jobs: Annotated[
        str, typer.Option("--jobs", metavar="INT", help="Verification jobs run at once.")
    ] = "2",
    token: Annotated[
        str | None,
        typer.Option(
            "--token",
            envvar="PLANNER_TOKEN",
            metavar="T",
            help="Bearer token every request must carry (or set PLANNER_TOKEN).",
        ),
    ] = None,
    time_limit: Annotated[
        str, typer.Option("--time-limit", metavar="SECONDS", help="Per-job time limit.")
    ] = "600",
    scheduler: Annotated[
        str | None,
        typer.Option(
            "--scheduler",
            metavar="ADDRESS",
            help="Run the verification jobs on the dask scheduler at tcp://host:port instead "
            "of local processes (needs the dask extra; see README, Running on a cluster).",
        ),
    ] = None,
    access_log: Annotated[
        bool,
        typer.Option(
            "--access-log",
            help="Log a line per request (client, method, path, status), uvicorn's access "
            "log, besides its start and stop lines; without it, warnings only.",
        ),
    ] = False,
) -> None:
    """Serve the HTTP API (/v1, OpenAPI at /docs) and the web calculator (/)."""
    from planner.cluster import scheduler_address
    from planner.inputs import check_integer
    from planner.service.server import check_binding
    from planner.service.server import serve as run_server
    from planner.service.store import default_database

    check_binding(host, token)
    if scheduler is not None:
        scheduler_address(scheduler)  # a malformed address: one line before anything else
    run_server(
        host=host,
        port=check_integer("port", port, 1, 65535),
        database=db or default_database(),
        workers=check_integer("jobs", jobs, 1, 64),
        token=token,
        time_limit=check_integer("time-limit", time_limit, 1, 86400),
        scheduler=scheduler,
        access_log=access_log,
    )


def _pretty(term: Any) -> str:
    """A term as 2-D text; sympy prints min/max only as code, so their arguments go apart."""
    import sympy

    if isinstance(term, (sympy.Min, sympy.Max)):
        name = "min" if isinstance(term, sympy.Min) else "max"
        parts = [sympy.pretty(argument, num_columns=100) for argument in term.args]
        return f"{name} of:\n" + "\nand\n".join(parts)
    return sympy.pretty(term, num_columns=100)


def _only_with(condition: bool, needs: str, *names: str) -> None:
    """Refuse options typed on the command line that mean nothing without ``needs``."""
    import importlib

    click_package = typer.Context.__mro__[1].__module__.rsplit(".", 1)[0]  # vendored or not
    context = importlib.import_module(click_package + ".globals").get_current_context()
    typed = importlib.import_module(click_package + ".core").ParameterSource.COMMANDLINE
    for name in names:
        if not condition and context.get_parameter_source(name) is typed:
            shown = name.replace("_", "-")
            raise InputError(shown, context.params[name], f"given with {needs} only")


def _typed(name: str) -> bool:
    """Was the current command's option ``name`` typed on the command line?"""
    import importlib

    click_package = typer.Context.__mro__[1].__module__.rsplit(".", 1)[0]  # vendored or not
    context = importlib.import_module(click_package + ".globals").get_current_context()
    typed = importlib.import_module(click_package + ".core").ParameterSource.COMMANDLINE
    return bool(context.get_parameter_source(name) is typed)


def _with_progress(work: Any, total: int | None) -> Any:
    """Run ``work(progress)`` under a transient progress bar on a terminal (``total``
    None: a running indicator, as a sequential validation's length is not known)."""
    from rich.progress import Progress

    with Progress(transient=True, disable=not sys.stderr.isatty()) as progress:
        task = progress.add_task("validating", total=total)
        return work(lambda name: progress.update(task, advance=1, description=name))


def _command() -> Any:
    """The click command typer builds from ``app``, its options' text taken as typed.

    typer (0.2x) coerces every option through a pydantic ``TypeAdapter``: importing
    pydantic and building the adapters was a third of ``planner plan``'s start-up
    (docs/architecture.md, "Speed"). The options of this CLI are raw text that
    :mod:`planner.inputs` checks itself, and flags; typer's adapter returns a ``str``
    option's text and a flag's bool unchanged, so a value already of its option's type
    (``str`` or ``bool``) is kept as it is, and anything else (paths, lists, a flag given
    text) goes through typer's own coercion, as does every option of a typer without
    these internals.
    """
    command = typer.main.get_command(app)
    try:
        from typer._coercion import RuntimeParam, build_runtime_param
    except ImportError:  # pragma: no cover - another typer: its own coercion
        return command

    class AsTyped(RuntimeParam):
        def _coerce_value(self, value: Any, param: Any, ctx: Any) -> Any:
            if type(value) is self.annotation:
                return value
            own = build_runtime_param(param.type_descriptor)
            return own._coerce_value(value, param=param, ctx=ctx)

    for each in (command, *getattr(command, "commands", {}).values()):
        # the context only names the help option, which click creates here once
        for param in each.get_params(each.context_class(each)):
            described = getattr(param, "type_descriptor", None)
            if (
                described is not None
                and described.annotation in (str, bool)
                and described.file_annotation is None
                and described.parameter_info.parser is None
                and getattr(param, "_runtime_param", False) is None
            ):
                param._runtime_param = AsTyped(described.parameter_info, described.annotation)
    return command


class _ClosedOutput(io.TextIOBase):
    """Standard output when the process started without one: writing to it is the
    ``OSError`` :func:`main` turns into one line ("cannot write standard output")."""

    encoding = "utf-8"

    def write(self, text: str) -> int:
        raise OSError(errno.EBADF, "standard output is closed")

    def isatty(self) -> bool:
        return False


def main(argv: list[str] | None = None) -> int:
    """Entry point: run the app and turn every input error into one line and exit 2."""
    args = sys.argv[1:] if argv is None else argv
    if sys.stderr is None:  # started with standard error closed (2>&-): nowhere to say why
        return 2
    if sys.stdout is None:  # closed (>&-): a command writing only to --output still runs
        sys.stdout = _ClosedOutput()
    for stream in (sys.stdout, sys.stderr):  # an ASCII-only locale: α as \u03b1, no crash
        if isinstance(stream, io.TextIOWrapper):
            stream.reconfigure(errors="backslashreplace")
    started()  # from here on, Ctrl-C is this function's KeyboardInterrupt
    try:
        # what ``app(...)`` does (its exception hook only prettifies, and that is off)
        command = _command()
        refuse_repeated_options(command, args)
        result = command(args=args or ["--help"], standalone_mode=False, prog_name="planner")
        if result == 130:  # typer turns Ctrl-C into exit code 130, silently
            raise KeyboardInterrupt
    except InputError as error:
        sys.stderr.write(f"error: {error}\n")
        return 2
    except SystemExit as error:  # click's and rich's exit 1 on a broken pipe
        from planner.pipes import broken_pipe, is_broken_pipe

        if not is_broken_pipe(error):
            raise
        return broken_pipe()  # stdout's reader went away (| head): its own exit code
    except OSError as error:  # e.g. --output into a folder that does not exist
        where = "standard output" if error.filename is None else error.filename
        sys.stderr.write(f"error: cannot write {where}: {error.strerror or error}\n")
        return 2
    except _USAGE_ERROR as error:
        sys.stderr.write(f"error: {error.format_message()}\n")  # type: ignore[attr-defined]
        return 2
    except typer.Exit as error:
        return error.exit_code
    except (typer.Abort, KeyboardInterrupt):
        sys.stderr.write("aborted\n")
        return 130
    return result if isinstance(result, int) else 0


def exit_with(code: int) -> NoReturn:
    """End the process with :func:`main`'s code.

    After Ctrl-C ("aborted", 130) the process ends at once: the interpreter's shutdown
    would join an interrupted worker pool's management thread, whose pipes are closed by
    then ("Exception ignored … Bad file descriptor" on stderr, seen under load)."""
    from planner.pipes import flushed

    code = flushed(code)  # a broken pipe met at the last flush: 141, not a warning
    if code == 130:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(130)
    sys.exit(code)


def run() -> None:
    """The ``planner`` command."""
    exit_with(main())


if __name__ == "__main__":  # pragma: no cover
    run()
