"""``planner validate``: the real private tester run on every instance family."""

import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from planner.cli.options import (
    AccountingOpt,
    AllocationOpt,
    AlphaOpt,
    BetaOpt,
    CoinOpt,
    Cost1Opt,
    Cost2Opt,
    DeltaOpt,
    Eps1Opt,
    Eps2Opt,
    JsonOpt,
    KOpt,
    Model,
    PowerOpt,
    SimulationBudgetOpt,
    _beta,
    _only_with,
)
from planner.cli.output import VERDICT_EXIT_CODES, _checked_destination, _console


def validate(
    model: Model,
    k: KOpt,
    alpha: AlphaOpt,
    eps1: Eps1Opt,
    eps2: Eps2Opt,
    coin: CoinOpt = "private",
    delta: DeltaOpt = None,
    beta: BetaOpt = "0.3333333333333333",
    power: PowerOpt = None,
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
    protocol: Annotated[
        str | None,
        typer.Option(
            "--protocol",
            metavar="KEY",
            help="Check one protocol's plan alone, as planner plan --protocol prints it.",
        ),
    ] = None,
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
    target = api.validation_query(
        model=model,
        coin=coin,
        k=k,
        alpha=alpha,
        eps1=eps1,
        eps2=eps2,
        delta=delta,
        beta=_beta(beta, power),
        accounting=accounting,
        n1=n1,
        n2=n2,
        allocation=allocation,
        cost1=cost1,
        cost2=cost2,
        protocol=protocol,
    )
    query, n1_checked, n2_checked, split, fallback, _ = target
    instance = api.file_pair(p_file, q_file, query.k, normalize=normalize, alpha=query.alpha)
    extra = [] if instance is None else [instance]
    path_choice = check_choice("path", path, PathChoice)
    trial_count = check_trials(trials)
    trial_cap = check_integer("max-trials", max_trials, 200, 10**7)
    run_seed = check_integer("seed", seed, 0, 2**63 - 1)
    families = [] if extra and not family else family
    budget = api.checked_simulation_budget(simulation_budget)
    printed = api.printed_plan(target, protocol, budget_seconds=budget)
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
            fallback=fallback,
        ),
        None,
    )
    report = api.asked_report(report, target)
    text = report_json(report)
    if output is not None:
        from planner.files import write_atomically

        write_atomically(output, text)
    if as_json:
        sys.stdout.write(text)
    else:
        from planner.documents import report_to_dict
        from planner.report import validation_renderable

        console = _console()
        console.print(validation_renderable(report))
        for warning in report_to_dict(report)["warnings"]:  # as `planner plan` prints them
            console.print(f"warning: {warning}", highlight=False, markup=False)
    raise typer.Exit(VERDICT_EXIT_CODES[report.verdict.value])


def _with_progress(work: Any, total: int | None) -> Any:
    """Run ``work(progress)`` under a transient progress bar on a terminal (``total``
    None: a running indicator, as a sequential validation's length is not known)."""
    from rich.progress import Progress

    with Progress(transient=True, disable=not sys.stderr.isatty()) as progress:
        task = progress.add_task("validating", total=total)
        return work(lambda name: progress.update(task, advance=1, description=name))
