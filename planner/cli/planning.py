"""``planner plan``, ``planner compare`` and ``planner explain``: one query's plan, the
five settings side by side, and the formula behind a setting."""

import dataclasses
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
    MixedModelOpt,
    Model,
    OneModel,
    PowerOpt,
    SimulationBudgetOpt,
    _beta,
    _only_with,
)
from planner.cli.output import _console, _print_json, print_blocks


def plan(
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
    protocol: Annotated[
        str | None,
        typer.Option(
            "--protocol",
            metavar="KEY",
            help="One protocol alone, where it is covered: the setting's own (e.g. "
            "shuffle-private, Poisson noise messages) or a mechanism its plan weighs "
            "(shuffle-private+messages, local-private+k-rr, …). Default: the fewest users.",
        ),
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """How many users each group needs (n1 for ε1, n2 for ε2).

    Inside the covered region the calibrated constants size the plan; outside it the
    real tester is simulated at this very query (within --simulation-budget), or the
    query is refused with the covered range (exit 2). The plan's coverage line says which.
    """
    from planner import api
    from planner.report import allocation_renderable, exact_renderable, plan_blocks

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
        beta=_beta(beta, power),
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
        protocol=protocol,
    )
    if as_json:
        _print_json(answer.to_dict())
        return
    shown = answer.shown
    if answer.allocation is not None:  # its line below gives the reason: not twice
        said = f"allocation {answer.allocation.rule.value}: "
        kept = tuple(line for line in shown.warnings if not line.startswith(said))
        shown = dataclasses.replace(shown, warnings=kept)
    print_blocks(plan_blocks(shown))
    if answer.exact is None and answer.allocation is None:
        return
    console = _console()
    if answer.exact is not None:
        console.print(exact_renderable(answer.exact, answer.plan))
    if answer.allocation is not None:
        console.print(allocation_renderable(answer.allocation, answer.plan))


def compare(
    k: KOpt,
    alpha: AlphaOpt,
    eps1: Eps1Opt,
    eps2: Eps2Opt,
    delta: DeltaOpt = None,
    beta: BetaOpt = "0.3333333333333333",
    power: PowerOpt = None,
    accounting: AccountingOpt = "exact",
    model: MixedModelOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """All five settings side by side, cheapest (fewest users in total) first.

    A setting whose plan would fall outside its covered region is listed as not covered,
    with the reason (``planner plan`` can simulate it). ``--model local,central`` adds
    that mixed pair's rows.
    """
    from planner import api
    from planner.report import compare_renderable

    answer = api.compare_answer(
        k=k,
        alpha=alpha,
        eps1=eps1,
        eps2=eps2,
        delta=delta,
        beta=_beta(beta, power),
        accounting=accounting,
        model=model,
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


def explain(
    model: OneModel,
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
    others = api.explained_mechanisms(model, coin)
    if others:
        typer.echo("a plan may instead run (planner plan names the one it runs and its bound):")
        for other in others:
            typer.echo(
                f"  {other['protocol']}: {other['title']}; bound {other['bound']} — "
                f"{other['reference']}"
            )


def _pretty(term: Any) -> str:
    """A term as 2-D text; sympy prints min/max only as code, so their arguments go apart."""
    import sympy

    if isinstance(term, (sympy.Min, sympy.Max)):
        name = "min" if isinstance(term, sympy.Min) else "max"
        parts = [sympy.pretty(argument, num_columns=100) for argument in term.args]
        return f"{name} of:\n" + "\nand\n".join(parts)
    return sympy.pretty(term, num_columns=100)
