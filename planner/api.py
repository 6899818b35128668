"""The one request → response layer: each function takes raw inputs, returns a JSON document.

The documents are exactly those the CLI's ``--json`` prints (same schema names, same
numbers), built by the same ``*_to_dict`` functions in :mod:`planner.documents`. Every bad
input raises :class:`planner.inputs.InputError` (one line naming the parameter and its
allowed range).
The HTTP service (:mod:`planner.service`) calls only this module.

Cost caps (``max_rows`` of a sweep, the validation limits) are arguments, so a caller that
serves strangers can bound what one request may cost before any work starts.
"""

from __future__ import annotations

import functools
import math
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, NamedTuple

from planner.alone import protocol_plan, protocol_query
from planner.documents import (
    COMPARE_SCHEMA,
    EXPLAIN_SCHEMA,
    VERSION_SCHEMA,
    allocation_to_dict,
    batch_to_dict,
    exact_to_dict,
    plan_to_dict,
    query_to_dict,
    report_to_dict,
    solution_to_dict,
    sweep_to_dict,
)
from planner.formulas.search import DeadlineExceededError, check_deadline, deadline
from planner.formulas.settings import MIXED_SETTINGS, Coin, Model, Setting, parse_models
from planner.inputs import (
    DEFAULT_BETA,
    InputError,
    Query,
    as_float,
    beta_or_power,
    beta_text,
    check_choice,
    check_integer,
)
from planner.plan import Coverage, Plan, Split
from planner.plan import plan as make_plan
from planner.protocols import ASKED_PROTOCOLS, PROTOCOLS

if TYPE_CHECKING:
    from pathlib import Path

    from planner.solve import Solution
    from planner.validators.instances import Instance

SETTING_KEYS = tuple(protocol.key for protocol in ASKED_PROTOCOLS)
"""The settings a query asks for by model and coin."""
MIXED_SETTING_KEYS = tuple(setting.key for setting in MIXED_SETTINGS)
"""The mixed pairs a query asks for: group 1 under one model, group 2 under another, per
coin (``local/central-private``)."""
PROTOCOL_KEYS = tuple(protocol.key for protocol in PROTOCOLS)
"""Every protocol's key: the settings' own and the mechanisms a plan may run instead."""


def asked_needs_delta(key: str) -> bool:
    """Whether a query of the asked setting ``key`` (one of :data:`SETTING_KEYS` or
    :data:`MIXED_SETTING_KEYS`) must give δ: some group is under the shuffle model."""
    return (key in SETTING_KEYS or key in MIXED_SETTING_KEYS) and Setting.from_key(key).needs_delta


def split_of(rule: object) -> Split:
    """The split of the plan an ``allocation`` starts from (``allocation.split_for``): the
    default's for ``fewest``, the paper's for ``paper``, ``cost`` and ``fixed-n2``."""
    if isinstance(rule, str) and rule.lower() in ("fewest", "paper"):  # the common cases,
        return Split(rule.lower())  # without importing the allocations
    from planner.allocation import AllocationRule, split_for

    return split_for(check_choice("allocation", rule, AllocationRule))


def _allocation(result: Plan, rule: object, cost1: object, cost2: object, n2: object) -> Any:
    """The allocation asked for, or None for a plan's own split (``fewest``, ``paper``);
    ``result`` is the query's plan by the rule's split (:func:`split_of`)."""
    if isinstance(rule, str) and rule.lower() in ("fewest", "paper"):
        return None
    from planner.allocation import AllocationRule, allocate

    chosen = check_choice("allocation", rule, AllocationRule)
    if chosen in (AllocationRule.FEWEST, AllocationRule.PAPER):
        return None
    if chosen is AllocationRule.FIXED_N2 and n2 is not None:
        # a printed plan names its ``planner validate`` check, which simulates at most
        # SIMULATION_N_MAX a group (a solve's search may try more: not checked there)
        from planner.limits import SIMULATION_N_MAX

        allowed = (
            f"an integer in [1, {SIMULATION_N_MAX:.0e}] (the largest group a validation simulates)"
        )
        try:  # one line for every bad n2 (a review: 1e400 had been told "≥ 1" alone)
            check_integer("n2", n2, 1, int(SIMULATION_N_MAX))
        except InputError:
            raise InputError("n2", n2, allowed) from None
    return allocate(result, chosen, cost1=cost1, cost2=cost2, n2=n2)


DEFAULT_SIMULATION_BUDGET = 30.0
"""``planner plan``'s default: seconds a query outside the covered region may simulate."""


def checked_simulation_budget(value: object, most: float | None = None) -> float:
    """``--simulation-budget``: seconds in [0, 3600] a query outside the covered region
    may simulate (``coverage.SIMULATION_BUDGET_MAX``), or in [0, ``most``] (a service's
    plan job: its own cap, named in the refusal)."""
    from planner.coverage import SIMULATION_BUDGET_MAX

    return _seconds("simulation-budget", value, SIMULATION_BUDGET_MAX if most is None else most)


def _seconds(name: str, value: object, most: float) -> float:
    try:
        number = as_float(value)
    except (TypeError, ValueError, OverflowError):
        number = math.nan
    if not 0.0 <= number <= most:  # NaN fails too
        raise InputError(name, value, f"a number of seconds in [0, {most:g}]")
    return number


def covered(
    query: Query, table: Any = None, budget: float = 0.0, split: Split = Split.FEWEST
) -> Plan:
    """The plan inside the covered region, simulated within ``budget`` s outside it, or
    :class:`~planner.coverage.NotCoveredError` (an ``InputError``) naming the parameter."""
    from planner.coverage import covered_plan

    return covered_plan(query, table, budget_seconds=budget, split=split)


@dataclass(frozen=True)
class PlanAnswer:
    """``planner plan``'s answer: the plan, its allocation and the ``--exact`` search."""

    plan: Plan
    allocation: Any = None
    """An :class:`planner.allocation.Allocation`, or None for the paper's rule."""
    exact: Any = None
    """An :class:`planner.exact.ExactPlan`, or None without ``exact``."""
    asked: Query | None = None
    """With ``protocol``: the query as asked (the plan's is put to that protocol)."""
    protocol: str | None = None
    """The protocol asked for by its key (``--protocol``), or None."""

    @property
    def shown(self) -> Plan:
        """The plan as printed: with a feasible allocation, its sizes (the paper's split
        is in a warning and in ``allocation``)."""
        if self.allocation is None:
            return self.plan
        from planner.allocation import allocated_plan

        return allocated_plan(self.plan, self.allocation)

    def to_dict(self) -> dict[str, Any]:
        """Schema ``planner.plan/1`` (with ``exact`` and ``allocation`` when asked for)."""
        document = plan_to_dict(self.shown)
        if self.asked is not None and self.protocol is not None:  # as asked, to replay it
            document["inputs"] = {**query_to_dict(self.asked), "protocol": self.protocol}
        if self.exact is not None:
            document["exact"] = exact_to_dict(self.exact, self.plan)
        if self.allocation is not None:
            document["allocation"] = allocation_to_dict(self.allocation)
        return document


EXACT_MAX_SECONDS = 300.0
"""The ``--exact`` search's cost limit: its estimated time (``simulation_seconds``, which
errs long: about 4× on this project's machine), for the protocol the plan runs
(:func:`exact_query`) and, where that is a public-coin protocol, the private-coin one it
also searches. Checked before any simulation
(a fuzz case, k = 100,000 with 50 trials, ran 81 s unbounded)."""


def exact_query(query: Query, made: Plan, trials: int) -> Query:
    """What ``--exact`` searches for ``query``, whose plan is ``made``: the protocol the plan
    runs, where its tester runs (like for like: a shuffle query's own Poisson protocol,
    searched instead, had needed 2.1× the default multi-message plan's users at k = 90,
    α = 0.24, ε = (4.52, 0.658); a mixed pair's: the mixed protocol, or the one protocol
    both groups run). ``InputError`` where the plan is a majority vote (the search sizes
    one run) and for a search of ``trials`` estimated above the cost limit
    (:func:`check_exact_cost`)."""
    if made.repetition.runs > 1:
        # the search sizes one run held to β (direct calibration); a vote's sizes searched
        # so had been printed beside the plan's (7× apart) and failed planner validate,
        # which runs the vote (a review: a mixed pair at β = 0.1)
        raise InputError(
            "exact",
            "on",
            f"left out at β = {beta_text(query.beta)} here: the plan is a majority vote of "
            f"{made.repetition.runs} runs (its protocol has no direct calibration there), "
            "--exact searches one run held to β, and planner validate --n1 --n2 checks a "
            "vote's sizes",
        )
    # a central query that gives δ: the protocol its plan runs, the pure ε-DP tester or a
    # shuffle protocol the curator runs itself at that δ (it had been refused, and so was
    # ``--protocol shuffle-private --exact`` there; a review)
    searched = replace(made.tester_query, warnings=query.warnings)
    check_exact_cost(searched, trials)
    return searched


def check_exact_cost(query: Query, trials: int) -> None:
    """Refuse an ``--exact`` search of ``query`` (:func:`exact_query`) estimated above
    ``EXACT_MAX_SECONDS``, naming the estimate and what to lower."""
    from planner.coverage import seconds_text, simulation_seconds
    from planner.simulation import private_coin_twin

    twin = private_coin_twin(query)
    needed = simulation_seconds(query, trials) + (
        0.0 if twin is None else simulation_seconds(twin, trials)
    )
    if needed > EXACT_MAX_SECONDS:
        raise InputError(
            "exact",
            f"{trials} trials at k = {query.k:,}",
            f"a search estimated within {EXACT_MAX_SECONDS:g} s (this one: about "
            f"{seconds_text(needed)} s; fewer --trials, or planner validate for given sizes)",
        )


def plan_answer(
    *,
    model: object,
    k: object,
    alpha: object,
    eps1: object,
    eps2: object,
    coin: object = "private",
    delta: object = None,
    beta: object = DEFAULT_BETA,
    accounting: object = "exact",
    constants: object = "calibrated",
    allocation: object = "fewest",
    cost1: object = "1",
    cost2: object = "1",
    n2: object = None,
    exact: bool = False,
    trials: object = 1000,
    seed: object = 0,
    simulation_budget: object = DEFAULT_SIMULATION_BUDGET,
    power: object = None,
    protocol: object = None,
) -> PlanAnswer:
    """``planner plan``: the plan, its allocation and (``exact``) the searched sizes.

    Outside the covered region the query is simulated if that fits ``simulation_budget``
    seconds, and refused (``InputError``) otherwise; 0 always refuses. ``power`` (1 − β)
    may stand for ``beta``. ``protocol`` (a key, e.g. ``shuffle-private``): that protocol
    alone, where it is covered (:func:`protocol_query`).
    """
    from planner.constants import ConstantSource, constants_with_source

    beta = beta_or_power(beta, power)
    query = Query.build(model, coin, k, alpha, eps1, eps2, delta, beta, accounting)
    source = check_choice("constants", constants, ConstantSource)
    table = constants_with_source(source)
    budget = checked_simulation_budget(simulation_budget)
    allocated = None
    if protocol is not None:
        alone = protocol_query(query, protocol)
        if str(allocation).lower() != "fewest":
            raise InputError("protocol", str(protocol), "given without --allocation (alone)")
        if source is not ConstantSource.CALIBRATED:
            raise InputError("protocol", str(protocol), "given with calibrated constants only")
        result = protocol_plan(alone, table, query)
    else:
        result = covered(query, table, budget, split_of(allocation))
        if split_of(allocation) is Split.FEWEST:
            result = _paper_split_named(result, query, table)
        if str(allocation).lower() in ("fewest", "paper"):  # not an allocation's resizing
            result = _beside_a_third(result, query, table, split_of(allocation))
        allocated = _allocation(result, allocation, cost1, cost2, n2)
        if allocated is not None and not allocated.feasible:  # no plan to print, as validate
            raise InputError("allocation", str(allocation), f"feasible: {allocated.reason}")
    exact_result = None
    if exact:  # the search of the protocol the printed plan runs (with ``protocol``, that one)
        from planner.exact import exact_plan

        exact_trials = check_integer("trials", trials, 50, 10**6)
        searched = exact_query(query, result, exact_trials)
        exact_result = exact_plan(
            searched, trials=exact_trials, seed=check_integer("seed", seed, 0, 2**63 - 1)
        )
    if protocol is not None:
        return PlanAnswer(result, None, exact_result, query, str(protocol))
    return PlanAnswer(result, allocated, exact_result)


BELOW_A_THIRD_LINE = "β below 1/3"
"""How the line that prices a β below 1/3 against 1/3 opens (:func:`_beside_a_third`)."""
BELOW_A_THIRD_SHOWN = 0.99
"""The line is shown where β = 1/3 needs at most this share of the plan's users (a review:
it had fired for one user in 8,957)."""


def _beside_a_third(result: Plan, query: Query, table: Any, split: Split) -> Plan:
    """A plan for β < 1/3 with a line giving the users the same query needs at β = 1/3,
    where that is fewer. Below 1/3 a tester runs once only where it was calibrated
    directly at β, and a majority vote of runs elsewhere, so a β a hair below 1/3 can cost
    far more (a new user's review: shuffle, k = 200, α = 0.15, ε = (4, 0.5), β = 0.3333
    needed 8,889 users against 4,881 at 1/3; the plan's title had read "β = 0.3333").
    The β = 1/3 plan is made only where it is covered, never simulated for the line."""
    from planner.coverage import NotCoveredError
    from planner.formulas.repetition import PER_RUN_ERROR

    if not query.beta < PER_RUN_ERROR:
        return result
    try:
        third = covered(replace(query, beta=PER_RUN_ERROR), table, 0.0, split)
    except NotCoveredError:
        return result
    if third.total_users >= BELOW_A_THIRD_SHOWN * result.total_users:
        return result
    line = (
        f"{BELOW_A_THIRD_LINE} (β = {beta_text(query.beta, 6)}) needs {result.total_users:,} "
        f"users in all; β = 1/3, the default, needs {third.total_users:,} "
        f"({third.n_users_group1:,} + {third.n_users_group2:,}): below 1/3 a tester runs "
        "once only where it is calibrated directly at β, else a majority vote of runs"
    )
    return replace(result, warnings=(*result.warnings, line))


def _paper_split_named(result: Plan, query: Query, table: Any) -> Plan:
    """A printed default plan whose line names the paper split's sizes, with the sizes
    ``--allocation paper`` gives: the line read the cheapest run at the points the default
    weighed, which is not how the paper split's plan chooses (a review: local k = 691,
    α = 0.648, ε = (0.285, 6.18) named 1,232,613 + 16,309 where the allocation gives
    2,579,545 + 52,062; 11 of 97 such lines). The paper split's plan is made only where
    the line is printed, and never simulated for it (no wait beside the plan): where it is
    not covered, or needs no fewer users in any group, the line goes."""
    from planner.plan import PAPER_SPLIT_LINE, paper_split_line

    if not any(line.startswith(PAPER_SPLIT_LINE) for line in result.warnings):
        return result
    paper = make_plan(query, table, split=Split.PAPER)
    named = ""
    if paper.coverage is Coverage.CALIBRATED:
        named = paper_split_line((paper.n_users_group1, paper.n_users_group2), result)
    lines = tuple(
        (named if line.startswith(PAPER_SPLIT_LINE) else line)
        for line in result.warnings
        if named or not line.startswith(PAPER_SPLIT_LINE)
    )
    return replace(result, warnings=lines)


def plan_document(**inputs: Any) -> dict[str, Any]:
    """``planner plan --json`` (the inputs of :func:`plan_answer`)."""
    return plan_answer(**inputs).to_dict()


@dataclass(frozen=True)
class CompareAnswer:
    """``planner compare``'s answer: covered plans, cheapest first, and those refused."""

    plans: list[Plan]
    not_covered: list[tuple[str, str]]
    """(setting, why) for each setting whose plan is outside its covered region."""
    query: Query
    """The validated shared inputs (the last setting's query), for headings."""

    def to_dict(self) -> dict[str, Any]:
        """Schema ``planner.compare/1``."""
        return {
            "schema": COMPARE_SCHEMA,
            "plans": [plan_to_dict(item) for item in self.plans],
            "not_covered": [{"setting": key, "reason": why} for key, why in self.not_covered],
        }


def compare_answer(
    *,
    k: object,
    alpha: object,
    eps1: object,
    eps2: object,
    delta: object = None,
    beta: object = DEFAULT_BETA,
    accounting: object = "exact",
    power: object = None,
    model: object = None,
) -> CompareAnswer:
    """Every setting (the shuffle ones only with δ), and each mechanism a setting may run
    (``local-private+k-rr``, …) on its own: covered plans, fewest users first. Where a
    setting's plan runs another protocol, the setting's own protocol alone follows too (as
    ``planner plan --protocol`` plans it). Where
    ``model`` names two models (``"local,central"``), also that mixed pair's plan under each
    coin and its mixed protocol on its own."""
    from planner.constants import default_constants
    from planner.coverage import NotCoveredError

    beta = beta_or_power(beta, power)
    pair = None if model is None else parse_models(model)
    if pair is not None and pair[1] is None:
        raise InputError(
            "model",
            model,
            "two models joined by a comma (local,central): compare lists every one-model "
            "setting already",
        )
    plans, refused = [], []
    table = default_constants()
    for protocol in PROTOCOLS:
        setting = protocol.setting
        if setting.is_mixed:
            continue  # a mixed pair's rows follow, where the query names one
        if setting.needs_delta and delta is None:
            continue
        if setting.mechanism and not table.has_setting(setting.key):
            continue  # a mechanism not calibrated yet is weighed by no plan
        query = Query.build(
            setting.model,
            setting.coin,
            k,
            alpha,
            eps1,
            eps2,
            delta if setting.needs_delta else None,  # a central row stays pure ε-DP
            beta,
            accounting,
        )
        if setting.mechanism:
            # the mechanism alone, as the plan of a local query weighs it: no other protocol
            # runs in its place, and only where it is covered (never simulated)
            query = replace(query, setting=setting)
            alone = make_plan(query, table, fallback=False)
            if alone.coverage is Coverage.EXTRAPOLATED:
                refused.append((setting.key, "; ".join(alone.coverage_gaps)))
            else:
                plans.append(alone)
            continue
        try:
            made = covered(query)
        except NotCoveredError as error:
            why = "; ".join(error.gaps)
            refused.append((setting.key, f"{why} ({simulation_words(query)})"))
            continue
        plans.append(made)
        if made.protocol != setting.key:
            # the setting's own protocol alone too (``planner plan --protocol KEY``), where
            # the plan runs another: a user weighing users against messages (the Poisson
            # shuffle protocol sends a few a user, the multi-message one tens) sees both
            own = make_plan(query, table, fallback=False)
            if own.coverage is Coverage.CALIBRATED and own.protocol == setting.key:
                plans.append(own)
    if pair is not None and pair[1] is not None:
        _mixed_rows(model, k, alpha, eps1, eps2, delta, beta, accounting, plans, refused)
    plans.sort(key=lambda item: item.total_users)
    return CompareAnswer(plans, refused, query)


SIMULATES_WITHIN_BUDGET = "planner plan simulates it within its budget"
"""``compare``'s words for a refused row that ``planner plan`` simulates by default (the
service's page says its own)."""


def simulation_words(query: Query) -> str:
    """What ``planner plan`` does with a query outside the covered region, in words for
    ``compare``'s refused rows: it simulates it within its default budget, or the
    simulation would take longer (a new user's trial found "simulates it within its
    budget" beside a query ``planner plan`` refuses at about 20,000 s), or below
    k = 8 it simulates nothing."""
    from planner.coverage import (
        SIMULATION_BUDGET_MAX,
        SIMULATION_BUDGET_SECONDS,
        seconds_text,
        simulation_seconds,
    )
    from planner.simulation import SIMULATION_K_MIN

    if query.k < SIMULATION_K_MIN:
        return f"planner plan simulates no query below k = {SIMULATION_K_MIN}"
    needed = simulation_seconds(query, 1000)
    if needed <= SIMULATION_BUDGET_SECONDS:
        return SIMULATES_WITHIN_BUDGET
    if needed > SIMULATION_BUDGET_MAX:
        return (
            f"a simulation would take about {seconds_text(needed)} s, beyond any budget (at most "
            f"{SIMULATION_BUDGET_MAX:,.0f} s): planner plan refuses it"
        )
    return (
        f"a simulation would take about {seconds_text(needed)} s, above planner plan's default "
        f"{SIMULATION_BUDGET_SECONDS:g} s budget: --simulation-budget, or a plan job"
    )


def _mixed_rows(
    model: object,
    k: object,
    alpha: object,
    eps1: object,
    eps2: object,
    delta: object,
    beta: object,
    accounting: object,
    plans: list[Plan],
    refused: list[tuple[str, str]],
) -> None:
    """``compare``'s rows of a mixed pair: its plan under each coin (the shuffle model's
    only with δ), then each mixed protocol it may run on its own where that is covered."""
    from planner.constants import default_constants
    from planner.coverage import NotCoveredError
    from planner.plan import mixed_runs

    table = default_constants()
    alone: dict[str, Query] = {}
    first, second = parse_models(model)
    for coin in Coin:
        if Setting(first, coin, model2=second).needs_delta and delta is None:
            continue  # as the shuffle settings: the report says to give δ
        query = Query.build(model, coin.value, k, alpha, eps1, eps2, delta, beta, accounting)
        try:
            plans.append(covered(query))
        except NotCoveredError as error:
            why = "; ".join(error.gaps)
            refused.append((query.setting.key, f"{why} ({simulation_words(query)})"))
        for run in mixed_runs(query):
            if run.setting.is_mixed and table.has_setting(run.setting.key):
                alone.setdefault(run.setting.key, run)
    for key, run in alone.items():
        made = make_plan(run, table, fallback=False)
        if made.coverage is Coverage.EXTRAPOLATED:
            refused.append((key, "; ".join(made.coverage_gaps)))
        else:
            plans.append(made)


def compare_document(**inputs: Any) -> dict[str, Any]:
    """``planner compare --json`` (the inputs of :func:`compare_answer`)."""
    return compare_answer(**inputs).to_dict()


def solve_answer(
    *,
    model: object,
    k: object,
    eps1: object,
    coin: object = "private",
    alpha: object = None,
    eps2: object = None,
    n1: object = None,
    n2: object = None,
    delta: object = None,
    beta: object = DEFAULT_BETA,
    accounting: object = "exact",
    power: object = None,
) -> Solution:
    """``planner solve``: exactly one of n1, n2, alpha, eps2 is left out (None)."""
    from planner.solve import left_out
    from planner.solve import solve as solve_for

    beta = beta_or_power(beta, power)
    unknown = left_out({"n1": n1, "n2": n2, "alpha": alpha, "eps2": eps2})
    template = Query.build(
        model,
        coin,
        k,
        alpha if alpha is not None else 0.5,
        eps1,
        eps2 if eps2 is not None else eps1,
        delta,
        beta,
        accounting,
    )
    return solve_for(template, unknown, n1=n1, n2=n2)


def solve_document(**inputs: Any) -> dict[str, Any]:
    """``planner solve --json`` (the inputs of :func:`solve_answer`)."""
    return solution_to_dict(solve_answer(**inputs))


def power_answer(
    *,
    model: object,
    k: object,
    alpha: object,
    eps1: object,
    eps2: object,
    n1: object,
    n2: object,
    coin: object = "private",
    delta: object = None,
    accounting: object = "exact",
) -> Any:
    """``planner power``: the smallest β (and the power 1 − β) for which a plan fits the
    given ``n1`` and ``n2`` (a :class:`planner.power.PowerAnswer`)."""
    from planner.power import PowerAnswer, solve_power

    for name, value in (("n1", n1), ("n2", n2)):
        if value is None:
            raise InputError(name, None, "given: the users group " + name[1] + " has")
    query = Query.build(model, coin, k, alpha, eps1, eps2, delta, DEFAULT_BETA, accounting)
    sizes = check_integer("n1", n1, 1), check_integer("n2", n2, 1)
    solution = solve_power(query, *sizes)
    if solution.value is not None:
        query = replace(query, beta=float(solution.value))  # the query the plan answers
    return PowerAnswer(query, *sizes, solution)


def power_document(**inputs: Any) -> dict[str, Any]:
    """``planner power --json`` (schema ``planner.power/1``; the inputs of
    :func:`power_answer`)."""
    return power_answer(**inputs).to_dict()


def simulated_power(
    answer: Any,
    *,
    trials: object = "auto",
    max_trials: object = None,
    seed: object = 0,
    path: object = "auto",
    progress: Callable[[str], None] | None = None,
) -> Any:
    """``planner power --simulate``: the answer with its plan checked by Monte Carlo as
    ``planner validate --beta β --allocation fixed-n2 --n2 N`` checks it (sequential
    verdicts, seeded); an infeasible answer is returned as it is."""
    from planner.validate import MAX_AUTO_TRIALS, PathChoice, check_trials, validate

    trial_count = check_trials(trials)
    cap = check_integer(
        "max-trials", MAX_AUTO_TRIALS if max_trials is None else max_trials, 200, 10**7
    )
    run_seed = check_integer("seed", seed, 0, 2**63 - 1)
    chosen_path = check_choice("path", path, PathChoice)
    found = answer.solution.plan
    if found is None:
        return answer
    query = answer.query  # at the solved β
    target = validation_query(
        model=query.setting.models_text,
        coin=query.setting.coin.value,
        k=query.k,
        alpha=query.alpha,
        eps1=query.eps1,
        eps2=query.eps2,
        delta=query.delta,
        beta=query.beta,
        accounting=query.accounting.value,
        allocation="fixed-n2",
        n2=found.n_users_group2,
    )
    report = validate(
        target.query,
        n1=target.n1,
        n2=target.n2,
        split=target.split,
        fallback=target.fallback,
        trials=trial_count,
        max_trials=cap,
        seed=run_seed,
        path=chosen_path,
        progress=progress,
    )
    return replace(answer, simulation=report)


def spec_count(name: str, spec: object) -> int:
    """How many values a sweep parameter names, without building them (None: one)."""
    if spec is None:
        return 1
    if isinstance(spec, (list, tuple)):
        return max(len(spec), 1)
    if isinstance(spec, (int, float)):
        return 1
    text = str(spec).strip()
    if ":" in text:
        parts = text.split(":")
        count = parts[-1].strip().lower()
        count = count[:-3] if count.endswith("log") else count
        try:
            number = float(count)
        except ValueError:
            return 1  # parse_values will reject it with the documented message
        return int(number) if math.isfinite(number) and number >= 1 else 1
    return text.count(",") + 1


def sweep_result(
    *,
    k: object,
    alpha: object,
    eps1: object,
    eps2: object,
    settings: Sequence[str] | None = None,
    delta: object = None,
    beta: object = str(DEFAULT_BETA),
    accounting: object = "exact",
    max_rows: int | None = None,
    power: object = None,
    as_table: bool = False,
    alone: object = False,
) -> Any:
    """``planner sweep``'s rows (a :class:`planner.sweep.Sweep`).

    Each numeric parameter is a value, a list or a spec string (``0.05:1:20log``).
    ``max_rows`` refuses a sweep of more rows before any value is built; ``as_table``
    refuses one of more rows than a table lays out before any row is sized. ``power`` (a
    value, list or spec of 1 − β) may stand for ``beta``. ``alone``: each setting's own
    protocol alone (``planner sweep --alone``, as ``planner plan --protocol KEY``).
    """
    from planner.inputs import Accounting
    from planner.limits import check_table_rows
    from planner.sweep import sweep

    if power is not None:
        from planner.power import beta_spec_of_power

        beta = beta_spec_of_power(beta, power)
    by_key = {protocol.key: protocol.setting for protocol in PROTOCOLS}
    by_key |= {key: Setting.from_key(key) for key in MIXED_SETTING_KEYS}
    if settings is not None and len(settings) == 0:
        raise InputError("settings", "[]", "a non-empty list of settings, or none: every setting")
    if settings:
        unknown = [key for key in settings if key not in by_key]
        if unknown:
            raise InputError("setting", unknown[0], "one of " + ", ".join(by_key))
        chosen = [by_key[key] for key in dict.fromkeys(settings)]
    else:
        chosen = [p.setting for p in ASKED_PROTOCOLS if not p.needs_delta or delta is not None]
    if max_rows is not None:
        given = {"k": k, "alpha": alpha, "eps1": eps1, "eps2": eps2, "delta": delta, "beta": beta}
        rows = len(chosen) * math.prod(spec_count(name, value) for name, value in given.items())
        if rows > max_rows:
            raise InputError("rows", f"{rows:,}", f"at most {max_rows:,} rows per sweep")
    return sweep(
        chosen,
        k=k,
        alpha=alpha,
        eps1=eps1,
        eps2=eps2,
        delta=delta,
        beta=beta,
        accounting=check_choice("accounting", accounting, Accounting),
        check_rows=check_table_rows if as_table else None,
        alone=alone,  # checked by ``sweep``
    )


def sweep_document(**inputs: Any) -> dict[str, Any]:
    """``planner sweep --format json`` (schema ``planner.sweep/6``)."""
    return sweep_to_dict(sweep_result(**inputs))


def sweep_csv(**inputs: Any) -> str:
    """``planner sweep --format csv``."""
    from planner.sweep import sweep_to_csv

    return sweep_to_csv(sweep_result(**inputs))


def explained_bounds(model: object, coin: object = "private", as_stated: bool = False) -> Any:
    """``planner explain``'s setting and its (role, bound) pairs: the upper bound (the
    μ-form used for numbers, or the paper's ε-form ``as_stated``) and the lower bound."""
    from planner.formulas.registry import BOUNDS
    from planner.protocols import protocol_for

    setting = Setting(_explained_model(model), check_choice("coin", coin, Coin))
    protocol = protocol_for(setting)
    upper = protocol.display_bound_key if as_stated else protocol.upper_bound_key
    return setting, [("upper", BOUNDS[upper]), ("lower", BOUNDS[protocol.lower_bound_key])]


def explained_mechanisms(model: object, coin: object = "private") -> list[dict[str, str]]:
    """The other protocols a plan of the setting may run (``other_mechanisms``), each with
    its upper bound's key and theorem: ``planner explain`` shows the setting's own bound,
    while its plan may run one of these (a new user's review: the default shuffle plan
    runs the multi-message protocol, and explain showed only the paper's Poisson one)."""
    from planner.formulas.registry import BOUNDS
    from planner.protocols import other_mechanisms, protocol_for

    setting = Setting(_explained_model(model), check_choice("coin", coin, Coin))
    return [
        {
            "protocol": other.key,
            "title": other.title,
            "bound": other.upper_bound_key,
            "reference": BOUNDS[other.upper_bound_key].reference,
        }
        for other in other_mechanisms(protocol_for(setting))
    ]


def explain_document(
    model: object, coin: object = "private", as_stated: bool = False
) -> dict[str, Any]:
    """What ``planner explain`` prints, as data: each bound's terms as text and LaTeX."""
    # checked before the cache, which cannot hash a hostile list
    chosen = _explained_model(model), check_choice("coin", coin, Coin)
    return _explain_document(chosen[0].value, chosen[1].value, bool(as_stated))


def _explained_model(model: object) -> Model:
    """``explain``'s one model (any case, surrounding spaces), or one line saying a pair is
    not one."""
    try:
        return Model(str(model).strip().lower())
    except ValueError:  # also an int too long to print
        raise InputError(
            "model", model, "one of local, shuffle, central (explain shows one model's bounds)"
        ) from None


@functools.lru_cache(maxsize=32)
def _explain_document(model: str, coin: str, as_stated: bool) -> dict[str, Any]:
    import sympy

    setting, pairs = explained_bounds(model, coin, as_stated)
    bounds = []
    for role, bound in pairs:
        bounds.append(
            {
                "role": role,
                "key": bound.key,
                "title": bound.title,
                "reference": bound.reference,
                "counts": bound.counts,
                "combine": bound.combine.value,
                "validity": bound.validity,
                "latex": sympy.latex(bound.symbolic()),
                "terms": [
                    {"label": label, "text": str(term), "latex": sympy.latex(term)}
                    for label, term in zip(bound.term_labels, bound.symbolic_terms(), strict=True)
                ],
            }
        )
    return {
        "schema": EXPLAIN_SCHEMA,
        "setting": setting.key,
        "as_stated": as_stated,
        "bounds": bounds,
        "mechanisms": explained_mechanisms(model, coin),
    }


class ValidationTarget(NamedTuple):
    """What a validation checks: the query, the sizes (None, None: the plan's own) and the
    split of the plan whose tester runs (``validate``'s ``split``); ``fallback`` False: the
    setting's own protocol's plan (an allocation on its family, ``Allocation.fallback``)."""

    query: Query
    n1: int | None
    n2: int | None
    split: Split
    fallback: bool = True
    asked: Query | None = None
    """With ``--protocol``: the query as asked (``query`` is put to that protocol)."""


def _given_sizes(n1: object, n2: object) -> tuple[int, int] | tuple[None, None]:
    """A validation's given sizes, both or neither (``InputError`` naming the one alone)."""
    if (n1 is None) != (n2 is None):
        raise InputError("n1" if n1 is None else "n2", None, "given together with the other")
    if n1 is None:
        return None, None
    return check_integer("n1", n1, 1), check_integer("n2", n2, 1)


def validation_query(
    *,
    model: object,
    k: object,
    alpha: object,
    eps1: object,
    eps2: object,
    coin: object = "private",
    delta: object = None,
    beta: object = DEFAULT_BETA,
    accounting: object = "exact",
    n1: object = None,
    n2: object = None,
    allocation: object = "fewest",
    cost1: object = "1",
    cost2: object = "1",
    power: object = None,
    protocol: object = None,
) -> ValidationTarget:
    """The query, the sizes a validation checks (None, None: the plan's own) and the split
    of the plan whose tester checks them. ``protocol`` (a key, as ``planner plan
    --protocol``): that protocol's plan alone, and its tester.

    With ``allocation`` cost or fixed-n2 the allocated sizes (fixed-n2 takes group 2's
    size from ``n2``), checked with the paper split's tester they were sized for; an
    infeasible allocation is an :class:`InputError` naming it. ``power`` (1 − β) may
    stand for ``beta``.
    """
    beta = beta_or_power(beta, power)
    query = Query.build(model, coin, k, alpha, eps1, eps2, delta, beta, accounting)
    rule = allocation.lower() if isinstance(allocation, str) else allocation
    for name, size, meaningless in (
        ("n1", n1, rule in ("cost", "fixed-n2")),
        ("n2", n2, rule == "cost"),
    ):
        if size is not None and meaningless:
            raise InputError(
                name, size, f"left out with --allocation {rule}: the allocation sets that size"
            )
    if protocol is not None:
        if rule != "fewest":
            raise InputError("protocol", str(protocol), "given without --allocation (alone)")
        alone = protocol_query(query, protocol)
        first, second = _given_sizes(n1, n2)
        return ValidationTarget(alone, first, second, Split.FEWEST, False, query)
    split = split_of(allocation)
    allocated = _allocation(make_plan(query, split=split), allocation, cost1, cost2, n2)
    if allocated is not None:
        if not allocated.feasible:
            raise InputError("allocation", str(allocation), f"feasible: {allocated.reason}")
        sizes = allocated.n_users_group1, allocated.n_users_group2
        if allocated.run is not None:  # a query planned by runs: the run the sizes belong to
            whose = "pair's" if query.setting.is_mixed else "query's"
            note = f"the {query.setting.key} {whose} allocation runs {allocated.run.setting.key}"
            run = replace(allocated.run, warnings=(*query.warnings, note))
            return ValidationTarget(run, *sizes, allocated.split, allocated.fallback)
        # its tester's plan: the split's, and the setting's own protocol where so allocated
        return ValidationTarget(query, *sizes, allocated.split, allocated.fallback)
    first, second = _given_sizes(n1, n2)
    if first is None:
        return ValidationTarget(query, None, None, split)
    if split is Split.FEWEST:  # sizes from a paper-split plan are run by another tester
        point = make_plan(query).tester_point
        if point != make_plan(query, split=Split.PAPER).tester_point:
            where = "the query" if point is None else f"ε1 = {point.eps1:g}, ε2 = {point.eps2:g}"
            note = (
                f"sizes given: run by the default plan's tester (at {where}); sizes planned "
                "with --allocation paper need that flag (its tester runs elsewhere)"
            )
            query = replace(query, warnings=(*query.warnings, note))
    return ValidationTarget(query, first, second, split)


def printed_plan(
    target: ValidationTarget,
    protocol: object = None,
    *,
    budget_seconds: float = DEFAULT_SIMULATION_BUDGET,
    simulate: bool = True,
) -> Plan | None:
    """The plan a validation checks, as ``planner plan`` prints it: None where sizes are
    given; with ``protocol``, that protocol's plan alone (:func:`protocol_plan`); else the
    covered plan, simulated outside the covered region within ``budget_seconds`` (with
    ``simulate`` False only checked to be simulable: a service job refused at submission,
    ``planner.coverage.coverable_plan``). One rule for ``planner validate`` and the
    service's validation jobs."""
    from planner.coverage import coverable_plan, covered_plan

    if target.n1 is not None or target.n2 is not None:
        return None
    if protocol is not None:
        return protocol_plan(target.query, asked=target.asked)
    if not simulate:
        return coverable_plan(target.query, budget_seconds=budget_seconds, split=target.split)
    return covered_plan(target.query, budget_seconds=budget_seconds, split=target.split)


def file_pair(
    p_file: Path | None,
    q_file: Path | None,
    k: int,
    *,
    normalize: bool = False,
    alpha: float | None = None,
) -> Instance | None:
    """``planner validate --p-file/--q-file``: the pair of pmfs read from two files (None
    when neither is given), each refusal an :class:`InputError` naming the file or k. A
    pair that differs is checked as a far pair, so its TV must be at least ``alpha``
    (when given): between 0 and α the test promises nothing either way."""
    if (p_file is None) != (q_file is None):
        raise InputError(
            "p-file" if p_file is None else "q-file", None, "given together with the other"
        )
    if p_file is None or q_file is None:
        return None
    from planner.validators.instances import PmfFileError, PmfSizeError, file_instance

    try:  # each file read no further than k values: its length is known beforehand
        instance = file_instance(p_file, q_file, normalize=normalize, k=k)
    except PmfSizeError as error:
        name = "p-file" if error.side == "p" else "q-file"
        held = f"more than {k:,}" if error.count is None else f"{error.count:,}"
        raise InputError("k", k, f"the pmf files' size (the {name} holds {held} values)") from None
    except PmfFileError as error:
        text = str(error)
        if error.side == "p":
            name, path = "p-file", p_file
        else:  # its own fault, or the pair's (sizes differ)
            name, path = "q-file", q_file
        reason = text.split(": ", 1)[-1] if text.startswith("pmf file ") else text
        raise InputError(name, str(path), f"a usable pmf file ({reason})") from None
    if instance.p.size != k:
        raise InputError("k", k, f"the pmf files' size {instance.p.size}")
    # a pair written at TV = α reads back a rounding below it (0.19999999999999996)
    if alpha is not None and 0.0 < instance.tv < alpha * (1 - 1e-9):
        raise InputError(
            "q-file",
            str(q_file),
            f"a pmf equal to the p-file's or at least α = {alpha:g} from it in TV (this "
            f"pair's TV is {instance.tv:.4g}: between 0 and α the test promises nothing)",
        )
    return instance


def validation_sizes(target: ValidationTarget) -> tuple[int, int]:
    """The group sizes a validation will simulate."""
    if target.n1 is not None and target.n2 is not None:
        return target.n1, target.n2
    result = make_plan(target.query, split=target.split, fallback=target.fallback)
    return result.n_users_group1, result.n_users_group2


def validation_runs(target: ValidationTarget) -> int:
    """The runs of the query's plan (a majority vote's r, else 1): a validation checks the
    vote through one run of ⌊n/r⌋ users per group (sizes given explicitly are split over
    them as the plan's own are)."""
    return make_plan(target.query, split=target.split, fallback=target.fallback).runs


def validate_document(
    *,
    trials: object = "auto",
    max_trials: object = None,
    seed: object = 0,
    path: object = "auto",
    families: Sequence[str] | None = None,
    progress: Callable[[str], None] | None = None,
    **inputs: Any,
) -> dict[str, Any]:
    """``planner validate --json`` (schema ``planner.validate/…``), without pmf files.

    ``trials`` is ``"auto"`` (looks of 200, 400, … up to ``max_trials`` until every family
    is decided, as the CLI's default) or a count. ``inputs`` are those of
    :func:`validation_query`. ``progress(note)`` is called as each family's look finishes.
    """
    from planner.statistics import AUTO, MAX_AUTO_TRIALS
    from planner.validate import PathChoice, checked_families, validate

    target = validation_query(**inputs)
    query, n1, n2, split, fallback, _ = target
    printed = printed_plan(target, inputs.get("protocol"))
    report = validate(
        query,
        n1=n1,
        n2=n2,
        checked_plan=printed,
        split=split,
        fallback=fallback,
        trials=AUTO if trials == AUTO else check_integer("trials", trials, 1, 10**7),
        max_trials=check_integer(
            "max-trials", MAX_AUTO_TRIALS if max_trials is None else max_trials, 200, 10**7
        ),
        seed=check_integer("seed", seed, 0, 2**63 - 1),
        path=check_choice("path", path, PathChoice),
        families=None if families is None or families == [] else checked_families(families),
        progress=progress,
    )
    return report_to_dict(asked_report(report, target))


def asked_report(report: Any, target: ValidationTarget) -> Any:
    """``report`` (a :class:`planner.validate.ValidationReport`) carrying the query as
    asked where ``--protocol`` put it to one protocol: its inputs echo that query and the
    key (the protocol's query's setting, whose key it is), as ``planner plan --json`` does
    (a review: they echoed the protocol's query)."""
    if target.asked is None:
        return report
    return replace(report, asked=target.asked, asked_protocol=target.query.setting.key)


@dataclass(frozen=True)
class BatchRequest:
    """``planner batch FILE``'s checked inputs: its scenarios (read, within the limits) and
    the validation's options. No row has run yet."""

    scenarios: list[dict[str, Any]]
    validate: bool
    trials: int | str
    seed: int
    workers: int


def batch_request(
    file: Path | str,
    *,
    validate: bool = False,
    trials: object = "auto",
    seed: object = "0",
    workers: object = "1",
    table: bool = False,
) -> BatchRequest:
    """``planner batch``'s inputs checked and its file read, in the CLI's order (trials,
    seed, workers, the file, then the batch limits: ``table``, printed as a table, holds
    fewer rows), before any row runs."""
    from planner.batch import read_scenarios
    from planner.limits import check_batch
    from planner.statistics import check_trials

    trial_count = check_trials(trials)
    run_seed = check_integer("seed", seed, 0, 2**63 - 1)
    worker_count = check_integer("workers", workers, 1, 256)
    scenarios = read_scenarios(file)
    solves = sum(1 for row in scenarios if row.get("n1") is not None or row.get("n2") is not None)
    check_batch(solves, len(scenarios), validate, table=table)
    return BatchRequest(scenarios, validate, trial_count, run_seed, worker_count)


def batch_rows(
    request: BatchRequest,
    *,
    executor: Any = None,
    progress: Callable[[dict[str, Any]], None] | None = None,
) -> list[dict[str, Any]]:
    """One row per scenario (``planner batch``'s rows): with ``validate``, each plan is
    also validated on ``executor`` (a cluster's, e.g. :func:`planner.cluster.cluster_executor`)
    or the request's local ``workers``; ``progress(row)`` as each validated row finishes."""
    from planner.batch import run_batch

    if not request.validate:
        return run_batch(request.scenarios)
    return run_batch(
        request.scenarios,
        validate=True,
        trials=request.trials,
        seed=request.seed,
        executor=executor,
        workers=request.workers,
        progress=progress,
    )


def batch_document(file: Path | str, **options: Any) -> dict[str, Any]:
    """``planner batch FILE --format json`` (schema ``planner.batch/2``; ``options`` those of
    :func:`batch_request`), run in this process."""
    return batch_to_dict(batch_rows(batch_request(file, **options)))


def batch_csv(file: Path | str, **options: Any) -> str:
    """``planner batch FILE --format csv``."""
    from planner.batch import batch_to_csv

    return batch_to_csv(batch_rows(batch_request(file, **options)))


CALIBRATION_STAGES = ("below-alpha-min", "small-eps", "large-eps", "large-alpha")
"""``planner calibrate --direct``'s stages that add points to a setting's direct factors,
one at a time (the CLI's option names)."""
QUICK_AXES: dict[str, list[float]] = {
    "k": [16, 64],
    "alpha": [0.25],
    "eps_strong": [1.0],
    "eps_ratio": [0.5],
}
"""``planner calibrate --quick``: a 2-point grid (a smoke test)."""


@dataclass(frozen=True)
class CalibrationRequest:
    """``planner calibrate``'s checked inputs: what runs, on which points. Nothing has run."""

    settings: list[str]
    direct: bool
    axes: dict[str, list[float]] | None
    """Every setting's axes (None: each setting's own grid)."""
    axes_by_setting: dict[str, dict[str, list[float]]]
    """A setting's own axes in place of ``axes`` (the ``--small-eps``, ``--large-*`` stages)."""
    below_alpha_min: bool
    small_eps: bool
    beyond: str | None
    """The axis (``eps_strong`` or ``alpha``) of ``--large-eps`` / ``--large-alpha``."""
    trials: int
    seed: int
    workers: int

    @property
    def total(self) -> int:
        """The grid points the run has (a progress bar's total)."""
        from planner.calibration.grid import grid_points

        return sum(
            len(grid_points(key, self.axes_by_setting.get(key, self.axes))) for key in self.settings
        )


def calibration_request(
    setting: Sequence[str] | None = None,
    *,
    direct: bool = False,
    quick: bool = False,
    below_alpha_min: bool = False,
    small_eps: bool = False,
    large_eps: bool = False,
    large_alpha: bool = False,
    trials: object = "500",
    seed: object = "0",
    workers: object = "2",
) -> CalibrationRequest:
    """``planner calibrate``'s options checked, in the CLI's order (the settings, the
    stages, then trials, seed and workers), each refusal an :class:`InputError`."""
    from planner.calibration.direct import (
        BELOW_ALPHA_MIN_AXES,
        DIRECT_AXES,
        DIRECT_BY_NODE_SETTINGS,
        DIRECT_SMALL_EPS_SETTINGS,
        beyond_axes,
        beyond_settings,
        small_eps_axes,
    )

    keys = list(PROTOCOL_KEYS)
    chosen = list(setting or keys)
    for key in chosen:
        if key not in keys:
            raise InputError("setting", key, "one of " + ", ".join(keys))
    # the stages that add points to a setting's direct factors, one at a time, each for
    # the settings it applies to (by default, every one of them); the shuffle private
    # coin's factor falls below ε = 0.25, central's moves both ways, the shuffle public
    # coin's does not move (docs/coverage.md)
    stages = {
        "below-alpha-min": (below_alpha_min, DIRECT_BY_NODE_SETTINGS),
        "small-eps": (small_eps, DIRECT_SMALL_EPS_SETTINGS),
        "large-eps": (large_eps, beyond_settings("eps_strong")),
        "large-alpha": (large_alpha, beyond_settings("alpha")),
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
        chosen = list(setting or allowed)
        for key in chosen:
            if key not in allowed:
                raise InputError(
                    "setting", key, "one of " + ", ".join(allowed) + f" (with --{given[0]})"
                )
    grid = DIRECT_AXES if direct else None  # None: each setting's own grid
    if below_alpha_min:
        grid = BELOW_ALPHA_MIN_AXES
    axes = QUICK_AXES if quick else grid
    # --small-eps, --large-eps and --large-alpha measure each setting at its own values
    beyond = "eps_strong" if large_eps else "alpha" if large_alpha else None
    axes_by_setting: dict[str, dict[str, list[float]]] = {}
    if small_eps:
        axes_by_setting = {key: small_eps_axes(key) for key in chosen}
    if beyond is not None:
        axes_by_setting = {key: beyond_axes(key, beyond) for key in chosen}
    return CalibrationRequest(
        settings=chosen,
        direct=direct,
        axes=axes,
        axes_by_setting=axes_by_setting,
        below_alpha_min=below_alpha_min,
        small_eps=small_eps,
        beyond=beyond,
        trials=check_integer("trials", trials, 10, 10**6),
        seed=check_integer("seed", seed, 0, 2**63 - 1),
        workers=check_integer("workers", workers, 1, 256),
    )


class CalibrationAnswer(NamedTuple):
    """A calibration's constants file, and the lines ``planner calibrate`` prints about it
    (before its last line, ``wrote OUTPUT``)."""

    document: dict[str, Any]
    lines: list[str]


def calibration_answer(
    request: CalibrationRequest,
    *,
    executor: Any = None,
    progress: Callable[[Any], None] | None = None,
    checkpoint: Path | None = None,
) -> CalibrationAnswer:
    """Run the request's calibration (on ``executor``, or the request's local ``workers``;
    ``progress(result)`` per finished point; finished points kept in ``checkpoint``, a
    JSON-lines file a run stopped for any reason continues from) and build its constants
    file: a grid run's own (:func:`planner.calibration.document.constants_document`), or
    with ``direct`` the packaged file with the new direct factors put in."""
    from planner.calibration.run import calibrate

    results = calibrate(
        request.settings,
        direct=request.direct,
        trials=request.trials,
        seed=request.seed,
        axes=request.axes,
        axes_by_setting=request.axes_by_setting,
        executor=executor,
        workers=request.workers,
        progress=progress,
        checkpoint=checkpoint,
    )
    return calibration_document(request, results)


def calibration_document(request: CalibrationRequest, results: list[Any]) -> CalibrationAnswer:
    """The constants file and the printed lines of a finished calibration run (its
    ``results``, one per grid point): what :func:`calibration_answer` returns."""
    import datetime

    from planner.calibration.document import constants_document, direct_factors_document
    from planner.statistics import code_version

    created = datetime.date.today().isoformat()
    if request.direct:
        document = direct_factors_document(
            results,
            request.settings,
            trials=request.trials,
            seed=request.seed,
            axes=request.axes,
            created=created,
            code_version=code_version(),
            axes_by_setting=request.axes_by_setting,
            below_alpha_min=request.below_alpha_min,
            small_eps=request.small_eps,
            beyond=request.beyond,
        )
    else:
        document = constants_document(
            results,
            trials=request.trials,
            seed=request.seed,
            axes=request.axes,
            created=created,
            code_version=code_version(),
        )
    return CalibrationAnswer(document, _calibration_lines(request, document))


def calibrate_document(**inputs: Any) -> dict[str, Any]:
    """``planner calibrate``'s constants file (the inputs of :func:`calibration_request`),
    run in this process without a checkpoint."""
    return calibration_answer(calibration_request(**inputs)).document


def _shown_row(betas: list[float], row: list[float | None]) -> str:
    """A direct factor row as calibrate prints it: ``β = 0.2: 1.5, …`` (``vote only`` where
    the row has none)."""
    return ", ".join(
        f"β = {beta:g}: " + ("vote only" if factor is None else f"{factor:.3g}")
        for beta, factor in zip(betas, row, strict=True)
    )


def _calibration_lines(request: CalibrationRequest, document: dict[str, Any]) -> list[str]:
    """What ``planner calibrate`` prints about each setting's new entry."""
    from planner.calibration.direct import BEYOND_ENTRY, BEYOND_SYMBOL

    lines: list[str] = []
    for key in request.settings:
        entry = document["settings"][key]
        if not request.direct:
            values = entry["grid"]["multipliers"]
            lines.append(
                f"{key}: C from {min(values):.3g} to {max(values):.3g} on "
                f"{len(values)} grid points (× {entry['grid']['safety_margin']} margin)"
            )
        elif request.beyond is not None:
            large = entry[BEYOND_ENTRY[request.beyond]]
            symbol = BEYOND_SYMBOL[request.beyond]
            for k, row in zip(large["k"], large["factor"], strict=True):
                lines.append(
                    f"{key}, {symbol} above the direct points', k = {k}: direct-calibration "
                    + _shown_row(large["beta"], row)
                )
        elif request.below_alpha_min or request.small_eps:
            band = entry["direct_by_node"]
            for alpha, by_eps in zip(band["alpha"], band["factor"], strict=True):
                for eps_strong, table in zip(band["eps_strong"], by_eps, strict=True):
                    for k, row in zip(band["k"], table, strict=True):
                        lines.append(
                            f"{key}, α node {alpha:g}, ε_strong node {eps_strong:g}, k = {k}: "
                            f"direct-calibration {_shown_row(band['beta'], row)}"
                        )
        else:
            direct = entry["direct"]
            for k, moved, row in zip(
                direct["k"], direct["operating_factor"], direct["factor"], strict=True
            ):
                lines.append(
                    f"{key}, k = {k}: operating factor {moved:.3g}; direct-calibration factor "
                    + _shown_row(direct["beta"], row)
                )
    return lines


@functools.lru_cache(maxsize=1)
def _versions() -> tuple[str, str, str]:
    from planner.constants import default_constants
    from planner.statistics import code_version

    return code_version(), default_constants().version, sys.version.split()[0]


def version_document() -> dict[str, Any]:
    """The code and constants versions (what every report records)."""
    code, constants, python = _versions()
    return {
        "schema": VERSION_SCHEMA,
        "code_version": code,
        "constants_version": constants,
        "python": python,
    }


__all__ = [
    "SETTING_KEYS",
    "BatchRequest",
    "CalibrationAnswer",
    "CalibrationRequest",
    "CompareAnswer",
    "DeadlineExceededError",
    "PlanAnswer",
    "batch_csv",
    "batch_document",
    "batch_request",
    "batch_rows",
    "calibrate_document",
    "calibration_answer",
    "calibration_document",
    "calibration_request",
    "check_deadline",
    "compare_answer",
    "compare_document",
    "deadline",
    "explain_document",
    "file_pair",
    "plan_answer",
    "plan_document",
    "power_answer",
    "power_document",
    "printed_plan",
    "simulated_power",
    "solve_answer",
    "solve_document",
    "spec_count",
    "sweep_csv",
    "sweep_document",
    "sweep_result",
    "validate_document",
    "validation_query",
    "validation_sizes",
    "version_document",
]
