"""Check a plan (or explicit group sizes) against the real tester by Monte Carlo."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from planner.constants import ConstantTable, default_constants
from planner.documents import report_to_dict
from planner.files import json_text
from planner.inputs import InputError, Query, check_choice, check_integer, check_number, check_query
from planner.limits import check_validation, check_vote_sizes
from planner.plan import GroupPlan, LoweredPoint, Plan, Split, plan, poisson_groups_at
from planner.protocols import protocol_for

# check_trials and code_version are named here too: the CLI and the service import them
from planner.statistics import AUTO, MAX_AUTO_TRIALS, trial_schedule
from planner.statistics import check_trials as check_trials
from planner.statistics import code_version as code_version
from planner.testers import build_tester, describe_tester
from planner.validators.engine import Verification, verify
from planner.validators.instances import FAMILIES, Instance
from planner.validators.protocol import SimulationPath
from planner.validators.stats import Verdict

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
    messages_per_user: tuple[float, float] | None = None
    """Each group's expected messages per user at the sizes checked
    (:func:`messages_at`); None where each user sends one report, or unknown."""
    asked: Query | None = None
    """With ``--protocol``: the query as asked (``query`` is put to that protocol), which
    the report's inputs echo with the protocol's key, as ``planner plan --json`` does."""
    asked_protocol: str | None = None
    """The key ``--protocol`` named, with ``asked``."""

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


def trial_messages(checked: Plan, k: int, size1: int, size2: int) -> tuple[int, int]:
    """The messages one trial sends per group when ``checked``'s tester runs with these
    sizes: one run's users (a majority vote is checked through one of its runs) and, in
    the shuffle model, every noise message, k·μ_g per group and run. The user path holds
    them all at once (:func:`planner.limits.check_validation`)."""
    runs = checked.runs

    def messages(size: int, group: GroupPlan) -> int:
        if group.noise_mu is None and group.messages_per_user is not None:
            # a multi-message protocol: the users' own, and the noise and flood messages
            # of the plan's users (a fixed total per run, whatever the sizes checked)
            noise = (group.messages_per_user - 1.0) * (group.n_users // runs)
            return size // runs + round(noise)
        return size // runs + round(k * max(group.noise_mu or 0.0, group.noise_mu_minimum or 0.0))

    first, second = (
        messages(size, group) for size, group in zip((size1, size2), checked.groups, strict=True)
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
        run_beta=checked.repetition.tester_beta(protocol_query.beta),
    )
    selected = checked_families(families)  # each name once
    if families is not None:
        families = selected
    family_count = len(selected) + len(extra)
    # a majority vote is checked through one of its runs (planner.validators.engine), so a
    # trial costs one run whatever the vote's size
    runs = checked.runs
    check_vote_sizes(size1, size2, runs)
    domain = protocol_query.k  # the tester's k: the query's, or a larger domain's
    schedule = trial_schedule(trials, domain, family_count, max_trials)
    messages1, messages2 = trial_messages(checked, domain, size1, size2)
    # the automatic choice weighs what the user path draws: a unary report is k cells (a
    # channel per group at k = 100 took the user path with 168,583 users a group and ran
    # 13 s for 5 trials)
    cells = protocol_for(checked.protocol).report_cells
    cells1, cells2 = (1, 1) if cells is None else cells(protocol_query)
    simulated = resolve_path(path, messages1 * cells1, messages2 * cells2, schedule[-1])
    user_path = simulated is SimulationPath.USER
    check_validation(
        domain,
        schedule[-1],
        family_count,
        size1 // runs,
        size2 // runs,
        user_path=user_path,
        messages=(messages1, messages2),
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
        domain=protocol_query.k,  # a plan's tester on a larger domain: padded instances
    )
    return ValidationReport(
        query,
        plan_used,
        describe_tester(tester),
        verification,
        table.version,
        protocol=checked.protocol,
        tester_point=checked.tester_point,
        messages_per_user=messages_at(checked, size1, size2),
    )


def messages_at(checked: Plan, n1: int, n2: int) -> tuple[float, float] | None:
    """Each group's expected messages per user when ``checked``'s tester runs with n1 + n2
    users: its groups' ``messages_per_user`` at its own sizes; at other sizes (an
    allocation's, or given), a multi-message group's noise is a fixed total a run, so each
    user's share scales by the plan's size over the checked one, 1 + (m − 1)·n_plan/n.
    A Poisson protocol's groups take the noise its tester runs at those sizes
    (:func:`planner.plan.poisson_groups_at`). None where each user sends one report."""
    one, two = (group.messages_per_user for group in checked.groups)
    if one is None or two is None:
        return None
    if (n1, n2) == (checked.n_users_group1, checked.n_users_group2):
        return one, two
    if any(group.noise_mu is not None for group in checked.groups):
        # the Poisson noise the tester runs at these sizes (equal mixing weights)
        one_at, two_at = poisson_groups_at(checked, (n1, n2))
        if one_at.eager_messages is None or two_at.eager_messages is None:
            return None
        return one_at.eager_messages, two_at.eager_messages
    first, second = (
        1.0 + (sent - 1.0) * group.n_users / size
        for sent, group, size in zip((one, two), checked.groups, (n1, n2), strict=True)
    )
    return first, second


def report_json(report: ValidationReport) -> str:
    return json_text(report_to_dict(report), indent=2) + "\n"
