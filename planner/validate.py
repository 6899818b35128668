"""Check a plan (or explicit group sizes) against the real tester by Monte Carlo."""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from importlib import metadata
from typing import Any

from planner.constants import ConstantTable, default_constants
from planner.files import json_text
from planner.inputs import InputError, Query, check_choice, check_integer, check_number, check_query
from planner.limits import SIMULATION_N_MAX, check_validation
from planner.plan import LoweredPoint, Plan, Split, plan
from planner.report import query_to_dict
from planner.testers import build_tester, describe_tester
from planner.validators.engine import Verification, verify
from planner.validators.instances import FAMILIES, Instance
from planner.validators.protocol import SimulationPath
from planner.validators.stats import Verdict

VALIDATE_SCHEMA = "planner.validate/3"
AUTO = "auto"
FIRST_LOOK_TRIALS = 200
"""``--trials auto``: trials per family at the first look; each later look doubles it."""
MAX_AUTO_TRIALS = 25_600
"""``--trials auto``: default cap on trials per family (the eighth look)."""
VALIDATION_CELL_BUDGET = 500_000_000
"""``--trials auto`` stops doubling where trials × k × families would pass this (a fast-path
trial costs O(k)): a few minutes at most on one core."""
USER_PATH_BUDGET = 5_000_000
"""``auto`` simulates real per-user messages when trials·(n1 + n2) is at most this."""


class PathChoice(StrEnum):
    USER = "user"
    FAST = "fast"
    AUTO = "auto"


@dataclass(frozen=True)
class ValidationReport:
    query: Query
    plan: Plan | None
    """The plan checked, or None when the sizes were given explicitly."""
    tester: dict[str, Any]
    verification: Verification
    constants_version: str
    protocol: str
    """The setting key of the protocol that ran (a public-coin query may run the private
    one)."""
    tester_point: LoweredPoint | None
    """Where the tester ran below the query (the checked plan's point, also with sizes
    given explicitly)."""

    @property
    def passed(self) -> bool:
        return self.verification.passed

    @property
    def verdict(self) -> Verdict:
        return self.verification.verdict


def checked_families(families: Sequence[str] | None) -> tuple[str, ...]:
    """The instance families a validation runs: ``families``, each checked by name and
    each once (a repeated name is one family, not two rows nor two shares of the joint
    confidence), or every family when None."""
    if families is None:
        return tuple(FAMILIES)
    if isinstance(families, (str, bytes)) or not isinstance(families, Sequence):
        raise InputError("families", families, "a list of family names (None: every family)")
    for name in families:
        if name not in FAMILIES:
            raise InputError("family", name, "one of " + ", ".join(FAMILIES))
    return tuple(dict.fromkeys(families))


def resolve_path(choice: PathChoice, n1: int, n2: int, trials: int) -> SimulationPath:
    if choice is PathChoice.AUTO:
        small = trials * (n1 + n2) <= USER_PATH_BUDGET
        return SimulationPath.USER if small else SimulationPath.FAST
    return SimulationPath(choice.value)


def check_trials(value: object, most: int = 10**7) -> int | str:
    """``--trials``: ``auto`` or a count in [1, most], refused in one line naming both."""
    if value == AUTO:
        return AUTO
    try:
        return check_integer("trials", value, 1, most)
    except InputError:
        raise InputError("trials", value, f"auto or an integer in [1, {most:,}]") from None


def trial_schedule(
    trials: int | str, k: int, families: int, max_trials: int = MAX_AUTO_TRIALS
) -> tuple[int, ...]:
    """The looks of a validation: a fixed count, or ``auto``'s doubling schedule.

    ``auto``: 200, 400, 800, … up to ``max_trials`` per family, fewer where the cost
    trials × k × families (a majority vote is checked through one run) would exceed
    :data:`VALIDATION_CELL_BUDGET` (at least one look).
    """
    if trials != AUTO:
        return (int(check_trials(trials)),)
    cap = check_integer("max-trials", max_trials, FIRST_LOOK_TRIALS, 10**7)
    affordable = VALIDATION_CELL_BUDGET // max(k * max(families, 1), 1)
    looks = [FIRST_LOOK_TRIALS]
    while looks[-1] * 2 <= min(cap, affordable):
        looks.append(looks[-1] * 2)
    return tuple(looks)


def trial_messages(checked: Plan, k: int, size1: int, size2: int) -> tuple[int, int]:
    """The messages one trial sends per group when ``checked``'s tester runs with these
    sizes: one run's users (a majority vote is checked through one of its runs) and, in
    the shuffle model, every noise message, k·μ_g per group and run. The user path holds
    them all at once (:func:`planner.limits.check_validation`)."""
    runs = checked.runs
    first, second = (
        size // runs + round(k * max(group.noise_mu or 0.0, group.noise_mu_minimum or 0.0))
        for size, group in zip((size1, size2), checked.groups, strict=True)
    )
    return first, second


def validate(
    query: Query,
    *,
    n1: object = None,
    n2: object = None,
    trials: int | str = AUTO,
    max_trials: int = MAX_AUTO_TRIALS,
    seed: int = 0,
    path: PathChoice = PathChoice.FAST,
    families: Sequence[str] | None = None,
    extra: Sequence[Instance] = (),
    constants: ConstantTable | None = None,
    target: float | None = None,
    fallback: bool = True,
    stop_early: bool = False,
    progress: Callable[[str], None] | None = None,
    checked_plan: Plan | None = None,
    split: Split = Split.FEWEST,
) -> ValidationReport:
    """Run the plan's tester (or one with the given sizes) on every family.

    ``trials``: a count per family (one look), or ``auto`` (the default): looks of 200,
    400, 800, … trials (:func:`trial_schedule`) until every family is decided. Verdicts
    hold jointly at 95 % over families and looks (:func:`planner.validators.engine.verify`).
    ``target`` overrides the error target (default: the query's β); ``fallback`` lets a
    public-coin plan run the private-coin protocol when that is cheaper (see ``plan``).
    ``checked_plan`` is the plan being checked (default: ``plan(query, split=split)``; an
    allocation's sizes are checked with the paper split's plan, whose tester they were
    sized for; pass what was
    printed, e.g. ``planner.coverage.covered_plan``'s simulated plan, whose one run meets
    β directly). Sizes given explicitly (``n1``, ``n2``: an allocation's, or the user's;
    checked here) are used the way that plan uses its own: split over its majority-vote
    runs when β < 1/3 is met by a vote (one run of r× the users has an error floor a vote
    does not). A vote is checked through one run of ⌊n/r⌋ users per group, held to the
    per-run error p* that makes the vote's error ≤ β; the report's errors and bounds are
    the vote's (``planner.validators.engine``).
    """
    # every argument checked first, each refusal an InputError naming it (a negative
    # seed had been numpy's ValueError, a text seed a TypeError, a bad path an
    # AttributeError, and a target of nan, -1 or 5 was used as it was)
    check_query(query)
    seed = check_integer("seed", seed, 0, 2**63 - 1)
    path = PathChoice(check_choice("path", path, PathChoice))
    trials = check_trials(trials)
    max_trials = check_integer("max-trials", max_trials, 1, 10**7)
    if target is not None:
        target = check_number("target", target, 0.0, 0.5, low_open=True, high_open=True)
    table = constants or default_constants()
    checked = checked_plan or plan(query, table, fallback=fallback, split=split)
    protocol_query = checked.tester_query  # the protocol that runs, where its tester runs
    if (n1 is None) != (n2 is None):
        raise InputError("n1" if n1 is None else "n2", None, "given together with the other")
    if n1 is not None and n2 is not None:
        size1, size2 = check_integer("n1", n1, 1), check_integer("n2", n2, 1)
        plan_used = None
    else:
        size1, size2, plan_used = checked.n_users_group1, checked.n_users_group2, checked
    compression = checked.compression
    tester = build_tester(
        protocol_query,
        L=compression.L if compression else None,
        hashes=compression.hashes if compression else 1,
        runs=checked.runs,
        constants=table,
    )
    selected = checked_families(families)  # each name once
    if families is not None:
        families = selected
    family_count = len(selected) + len(extra)
    # a majority vote is checked through one of its runs (planner.validators.engine), so a
    # trial costs one run whatever the vote's size
    runs = checked.runs
    for name, size in (("n1", size1), ("n2", size2)):
        if size < runs:
            raise InputError(name, size, f"at least the majority vote's {runs} runs")
        if runs > 1 and size // runs > SIMULATION_N_MAX:
            raise InputError(
                name,
                size,
                f"at most {runs} × {SIMULATION_N_MAX:.0e} (a {runs}-run vote, each run "
                f"simulated with at most {SIMULATION_N_MAX:.0e} users a group)",
            )
    schedule = trial_schedule(trials, query.k, family_count, max_trials)
    messages1, messages2 = trial_messages(checked, query.k, size1, size2)
    simulated = resolve_path(path, messages1, messages2, schedule[-1])
    user_path = simulated is SimulationPath.USER
    check_validation(
        query.k,
        schedule[-1],
        family_count,
        messages1,
        messages2,
        user_path=user_path,
    )
    verification = verify(
        tester,
        query.k,
        query.alpha,
        size1,
        size2,
        trials=schedule,
        seed=seed,
        target=query.beta if target is None else target,
        path=simulated,
        families=families,
        extra=extra,
        stop_early=stop_early,
        progress=progress,
    )
    return ValidationReport(
        query,
        plan_used,
        describe_tester(tester),
        verification,
        table.version,
        protocol=checked.protocol,
        tester_point=checked.tester_point,
    )


CONFIDENCE_METHOD = (
    "Clopper-Pearson bounds, one-sided at (1 - confidence)/(looks x families) each; a "
    "family's verdict can be wrong on one side only (the side its true error is not on), so "
    "by a union bound over families and every look all verdicts hold jointly at confidence "
    "whenever the run stops; all lower (or all upper) bounds hold jointly at confidence, "
    "both sides of every interval at 1 - 2 (1 - confidence)"
)


VOTE_CHECK_METHOD = (
    "one run simulated per trial (trials and errors count its decisions); the vote errs "
    "with probability V(p) = P(Binomial(runs, p) >= (runs+1)/2), increasing in the run's "
    "error p: error_rate and confidence_bounds are V at the run's rate and bounds, and the "
    "run is held to run_target_error, the largest p with V(p) <= target_error"
)


def code_version() -> str:
    try:
        return metadata.version("hetero-closeness-planner")
    except metadata.PackageNotFoundError:  # pragma: no cover - running from a checkout
        return "unknown"


def report_to_dict(report: ValidationReport) -> dict[str, Any]:
    """Everything needed to re-run the validation bit for bit (schema planner.validate/3)."""
    v = report.verification
    return {
        "schema": VALIDATE_SCHEMA,
        "inputs": query_to_dict(report.query),
        "warnings": list(report.query.warnings),
        "sizes_from": "plan" if report.plan is not None else "explicit",
        "coverage": report.plan.coverage.value if report.plan is not None else None,
        "protocol": report.protocol,
        "n_users_group1": v.n1,
        "n_users_group2": v.n2,
        "tester": report.tester,
        "trials": v.trials,
        "trial_schedule": list(v.schedule),
        "total_trials": v.total_trials,
        "seed": v.seed,
        "path": v.path.value,
        "target_error": v.target,
        "vote_check": (
            {
                "runs": v.vote_runs,
                "run_n_users_group1": v.n1 // v.vote_runs,
                "run_n_users_group2": v.n2 // v.vote_runs,
                "run_target_error": v.run_target,
                "method": VOTE_CHECK_METHOD,
            }
            if v.vote_runs > 1
            else None
        ),
        "confidence": v.confidence,
        "confidence_method": CONFIDENCE_METHOD,
        "families": [
            {
                "family": o.family,
                "kind": o.kind,
                "applicable": o.applicable,
                "tv": o.tv,
                "trials": o.trials,
                "errors": o.errors,
                "error_rate": o.error_rate if o.applicable else None,
                "run_error_rate": o.run_error_rate if o.applicable else None,
                "confidence_bounds": [o.ci_low, o.ci_high] if o.applicable else None,
                "mean_statistic": o.mean_statistic,
                "verdict": o.verdict.value if o.applicable else "not-applicable",
                "trials_to_decide": o.trials_to_decide,
            }
            for o in v.outcomes
        ],
        "verdict": v.verdict.value,
        "passed": report.passed,
        "elapsed_seconds": v.elapsed_seconds,
        "constants_version": report.constants_version,
        "code_version": code_version(),
        "python": sys.version.split()[0],
    }


def report_json(report: ValidationReport) -> str:
    return json_text(report_to_dict(report), indent=2) + "\n"
