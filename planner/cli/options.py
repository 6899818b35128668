"""The options several commands share, and the checks of what was typed.

Each option is a type: ``Annotated`` with the ``typer.Option`` that names it and holds
its help. Options are raw text (:mod:`planner.inputs` checks them) or flags, so typer's
own coercion is skipped for them (:func:`planner.cli._command`).
"""

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any

import typer

from planner.inputs import ALLOWED, InputError
from planner.protocols import PROTOCOLS

# one query's options (plan, compare, solve, validate, explain)
Model = Annotated[
    str,
    typer.Option(
        "--model",
        "-m",
        metavar="MODEL[,MODEL]",
        help="Privacy model: local, shuffle or central; two joined by a comma (local,central) "
        "put group 1 under the first and group 2 under the second.",
    ),
]
OneModel = Annotated[
    str, typer.Option("--model", "-m", metavar="local|shuffle|central", help="Privacy model.")
]
MixedModelOpt = Annotated[
    str | None,
    typer.Option(
        "--model",
        "-m",
        metavar="MODEL,MODEL",
        help="A mixed pair (local,central: group 1 local, group 2 central) whose rows to add.",
    ),
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
    typer.Option(
        "--delta",
        "-d",
        metavar="FLOAT",
        help=(
            "δ in [1e-12, 1): needed by the shuffle model; a central plan may spend it "
            "(then (ε, δ)-DP, and says so)."
        ),
    ),
]
BetaOpt = Annotated[
    str, typer.Option("--beta", "-b", metavar="FLOAT", help="Target error probability in (0, 0.5).")
]
PowerOpt = Annotated[
    str | None,
    typer.Option(
        "--power",
        metavar="FLOAT",
        help="Power 1 − β in (0.5, 1), instead of --beta (e.g. --power 0.8 is --beta 0.2).",
    ),
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

# sweep and plot: each parameter a spec of values
SettingsOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--setting",
        "-s",
        metavar="KEY",
        help="A setting or a mechanism alone to sweep (repeat for several): "
        + ", ".join(protocol.key for protocol in PROTOCOLS)
        + "; or a mixed pair, group 1's model first: local/central-private, "
        "central/shuffle-public, … (six ordered pairs, either coin). Default: the five "
        "settings (shuffle ones need --delta).",
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
    typer.Option(
        "--delta",
        "-d",
        metavar="SPEC",
        help="δ (the shuffle model's; central rows may spend it)." + SPEC_HELP,
    ),
]
SpecBeta = Annotated[
    str, typer.Option("--beta", "-b", metavar="SPEC", help="Target error." + SPEC_HELP)
]
SpecPower = Annotated[
    str | None,
    typer.Option("--power", metavar="SPEC", help="Power 1 − β, instead of --beta." + SPEC_HELP),
]

# rows written as a table, CSV or JSON (sweep, batch)
FormatOpt = Annotated[
    str, typer.Option("--format", "-f", metavar="table|csv|json", help="Output format.")
]
OutputOpt = Annotated[
    Path | None, typer.Option("--output", "-o", metavar="FILE", help="Write to FILE (whole).")
]

# where batch --validate and calibrate run their tasks
SchedulerOpt = Annotated[
    str | None,
    typer.Option(
        "--scheduler",
        metavar="ADDRESS",
        help="Run the tasks on the dask scheduler at tcp://host:port instead of local "
        "processes (needs the dask extra; see README, Running on a cluster).",
    ),
]


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


def _beta(beta: str, power: str | None) -> Any:
    """``--beta``, or 1 − ``--power``; both typed is one line naming the two."""
    from planner.inputs import beta_or_power

    return beta_or_power(beta, power, beta_given=_typed("beta"))


def _beta_spec(beta: str, power: str | None) -> Any:
    """A sweep's ``--beta`` spec, or its ``--power`` spec as β values."""
    if power is None:
        return beta
    from planner.inputs import refuse_beta_with_power
    from planner.power import beta_spec_of_power

    refuse_beta_with_power(beta, power, beta_given=_typed("beta"))
    return beta_spec_of_power(None, power)
