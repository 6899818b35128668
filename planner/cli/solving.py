"""``planner solve``: the one parameter left out of n1, n2, α and ε2."""

from typing import Annotated

import typer

from planner.cli.options import (
    AccountingOpt,
    BetaOpt,
    CoinOpt,
    DeltaOpt,
    Eps1Opt,
    JsonOpt,
    KOpt,
    Model,
    PowerOpt,
    _beta,
)
from planner.cli.output import _print_json


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
    power: PowerOpt = None,
    accounting: AccountingOpt = "exact",
    as_json: JsonOpt = False,
) -> None:
    """Solve for the one parameter left out of --n1, --n2, --alpha, --eps2."""
    from planner import api
    from planner.plan import privacy_lines
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
        beta=_beta(beta, power),
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
        for line in privacy_lines(solution.plan):
            typer.echo(f"warning: {line}")
    else:
        typer.echo(f"infeasible: {solution.reason}")
    if not solution.feasible:
        raise typer.Exit(1)
