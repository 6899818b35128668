"""``planner power``: the error bound β, and the power 1 − β, that given users reach."""

from typing import Annotated

import typer

from planner.cli.options import (
    AccountingOpt,
    AlphaOpt,
    CoinOpt,
    DeltaOpt,
    Eps1Opt,
    Eps2Opt,
    JsonOpt,
    KOpt,
    Model,
    _only_with,
)
from planner.cli.output import VERDICT_EXIT_CODES, _console, _print_json


def power(
    model: Model,
    k: KOpt,
    alpha: AlphaOpt,
    eps1: Eps1Opt,
    eps2: Eps2Opt,
    n1: Annotated[str, typer.Option("--n1", metavar="INT", help="Group 1's users (given).")],
    n2: Annotated[str, typer.Option("--n2", metavar="INT", help="Group 2's users (given).")],
    coin: CoinOpt = "private",
    delta: DeltaOpt = None,
    accounting: AccountingOpt = "exact",
    simulate: Annotated[
        bool,
        typer.Option(
            "--simulate",
            help="Confirm by Monte Carlo: run planner validate's sequential verdicts on the "
            "plan found.",
        ),
    ] = False,
    trials: Annotated[
        str,
        typer.Option(
            "--trials", metavar="auto|INT", help="--simulate: trials per family (auto: looks)."
        ),
    ] = "auto",
    max_trials: Annotated[
        str, typer.Option("--max-trials", metavar="INT", help="--simulate: cap for auto.")
    ] = "25600",
    seed: Annotated[str, typer.Option("--seed", metavar="INT", help="--simulate: seed.")] = "0",
    path: Annotated[
        str, typer.Option("--path", metavar="user|fast|auto", help="--simulate: path.")
    ] = "auto",
    as_json: JsonOpt = False,
) -> None:
    """The power 1 − β that --n1 and --n2 users reach: β is the smallest error bound
    (both error kinds) a plan fits them at; α is a total-variation distance, not a
    significance level.

    Exit 0, or 1 when no plan fits (one line names the group short of users); with
    --simulate the verdict's exit code (0 pass, 1 fail, 3 inconclusive).
    """
    from planner import api

    _only_with(simulate, "--simulate", "trials", "max_trials", "seed", "path")
    answer = api.power_answer(
        model=model,
        coin=coin,
        k=k,
        alpha=alpha,
        eps1=eps1,
        eps2=eps2,
        n1=n1,
        n2=n2,
        delta=delta,
        accounting=accounting,
    )
    if simulate and answer.solution.feasible:
        from planner.cli.validating import _with_progress

        answer = _with_progress(
            lambda progress: api.simulated_power(
                answer,
                trials=trials,
                max_trials=max_trials,
                seed=seed,
                path=path,
                progress=progress,
            ),
            None,
        )
    if as_json:
        _print_json(answer.to_dict())
    else:
        _print_answer(answer)
    if not answer.solution.feasible:
        raise typer.Exit(1)
    if answer.simulation is not None:
        raise typer.Exit(VERDICT_EXIT_CODES[answer.simulation.verdict.value])


def _print_answer(answer: object) -> None:
    from planner.power import PowerAnswer
    from planner.report import plan_renderables, verdict_line
    from planner.solve import BETA_FLOOR

    assert isinstance(answer, PowerAnswer)
    sizes = f"n1 = {answer.n1:,}, n2 = {answer.n2:,}"
    if answer.beta is None or answer.power is None or answer.solution.plan is None:
        typer.echo(f"no power backed with {sizes}: {answer.solution.reason}")
        return
    beta = "1/3" if answer.beta == 1 / 3 else f"{answer.beta:.6g}"
    if answer.beta == 1 / 3:
        shown = "2/3"
    elif answer.beta < 1e-6:  # 1 − 1e-12 is not 1
        shown = f"1 − {answer.beta:.6g}"
        if answer.beta <= BETA_FLOOR:
            shown += " at least (the search's floor)"
    else:  # exactly 1 − β (β has 6 significant digits): not rounded up
        shown = f"{answer.power:.10g}"
    console = _console()
    console.print(
        f"power = {shown} with {sizes}: β = {beta} bounds both error rates (the calibrated "
        f"worst-family error: p = q rejected, TV(p, q) ≥ α = {answer.query.alpha:g} "
        "accepted; α is a distance, not a significance level)",
        highlight=False,
        markup=False,
    )
    found = answer.solution.plan
    console.print(f"the plan at β = {beta}:", highlight=False, markup=False)
    for item in plan_renderables(found):
        console.print(item, highlight=False)
    if answer.simulation is not None:
        report = answer.simulation
        v = report.verification
        console.print(
            f"simulated ({v.trials:,} trials/family at most, seed {v.seed}): " + verdict_line(v),
            highlight=False,
            markup=False,
        )
    else:
        console.print(
            f"check it: planner validate (the same query) {answer.validate_command()}, or "
            "planner power --simulate",
            highlight=False,
            markup=False,
        )
