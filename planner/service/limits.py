"""What one request may cost, checked before any work starts.

Every refusal is an :class:`~planner.inputs.InputError` (HTTP 422 with its one line) or a
:class:`BodyTooLargeError` (HTTP 413). A job's process also has a time limit and a memory cap
(:mod:`planner.service.runner`), so whatever slips through is stopped.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from planner.inputs import InputError, Query, check_choice, check_integer
from planner.limits import check_validation, check_vote_sizes

ARITHMETIC_LINE = (
    "invalid inputs: no finite plan for these values (a number too small or too large "
    "to compute with)"
)
"""The one line (HTTP 422) for inputs inside their ranges whose numbers overflow (e.g.
α = 1e-320): the API's and the web page's."""


MAX_REQUEST_SECONDS = 20.0
"""``POST /v1/plan``, ``/v1/compare``, ``/v1/solve`` and ``/v1/sweep``: seconds one request may
compute (503 beyond, naming the cap). A solve had run 17–19 s (shuffle public, ε1 = 0.01, β
= 0.4999999, n2 = 1, accounting paper: ~80 fitting plans, each with fresh exact noise
searches at ε ≈ 0.01), holding a thread of the pool the whole time; the computation checks
its deadline at every search step (:func:`planner.formulas.search.deadline`), so its thread
is free within a step of the cap (``create_app(request_time_limit=…)`` changes it)."""
MAX_QUEUED_JOBS = 100
"""Jobs waiting at once: past it a submission is a 429 (a review queued 300 in a second,
each allowed up to 600 s: the queue and its database grew without bound)."""
LINE_VALUE_CHARS = 60
"""A name or value a 422 line echoes is cut to this many characters (:func:`cut_text`)."""


def cut_text(text: str, most: int = LINE_VALUE_CHARS) -> str:
    """``text`` as a line echoes it: at most ``most`` characters, "..." where it is cut."""
    return text if len(text) <= most else text[: most - 3] + "..."


MAX_STORED_JOBS = 100_000
"""Jobs the store keeps: a new one past it deletes the oldest finished jobs (their ids then
answer 404). About 60 MB of jobs without reports; a validation's report adds a few KB."""
MAX_BODY_BYTES = 64 * 1024
MAX_QUERY_BYTES = 4 * 1024
"""A request's query string (after ``?``) at most this many bytes (414 beyond it), checked
before it is parsed: a review's 60 KB query string of 16,000 names took 3.5 s to check on
the event loop, stalling every other request (no token needed for ``/v1/health``)."""
MAX_QUERY_PARAMETERS = 64
"""A request's query string holds at most this many parameters (422 beyond it); every
route takes at most 12 (the calculator page's form)."""
MAX_SWEEP_ROWS = 20_000
MAX_CONCURRENT_SWEEPS = 2
"""``POST /v1/sweep``s computed at once in one HTTP process (429 beyond): a sweep may
compute for the cap per request (:data:`MAX_REQUEST_SECONDS`) on every core it has."""
COMPUTE_THREADS = 40
"""Answers computed at once in one HTTP process (plans, compares, solves, power, sweeps,
explanations, the calculator page), a limit of their own on the worker threads
(``ServiceState.compute_threads``; the same 40 as the default pool they used to share): the
job routes and the pages' polls keep the default pool, which forty held solves had
filled, so that ``GET /v1/validations`` waited up to the cap per request."""
MAX_JOB_K = 10**6
MAX_TRIALS = 25_600
"""Trials per family (a count, or auto's cap): the CLI's default cap for auto."""
MAX_FAST_CELLS = 4 * 10**8
"""Fast path: trials × k per family at most this (k = 10⁶ at 400 trials)."""
MAX_PAGE = 100
"""``GET /v1/validations``: jobs per page (``limit``) at most this."""
MAX_OFFSET = 10**9
"""``GET /v1/validations``: ``offset`` at most this."""
MAX_EXACT_TRIALS = 5_000
MAX_SIMULATION_SECONDS = 600
"""A plan job's simulation budget at most this (the default job time limit)."""
QUERY_FIELDS = ("model", "coin", "k", "alpha", "eps1", "eps2", "delta", "beta")
MAX_EXACT_K = 10**5


def _split_rule(fields: dict[str, Any]) -> str:
    """A plan or exact job's split: ``fewest`` (the default) or ``paper``; the allocations
    that resize a plan (cost, fixed-n2) are ``POST /v1/plan``'s and validation jobs'."""
    rule = fields.get("allocation", "fewest")
    if not isinstance(rule, str) or rule.lower() not in ("fewest", "paper"):
        raise InputError("allocation", rule, "fewest or paper for a job of kind plan or exact")
    return rule.lower()


class BodyTooLargeError(Exception):
    """A request body over :data:`MAX_BODY_BYTES`."""

    def __init__(self, size: int | None = None) -> None:
        shown = "more" if size is None else f"{size:,}"
        super().__init__(f"invalid body = {shown} bytes: must be at most {MAX_BODY_BYTES:,} bytes")


class QueryTooLargeError(Exception):
    """A query string over :data:`MAX_QUERY_BYTES` or :data:`MAX_QUERY_PARAMETERS`;
    ``status`` is the HTTP status of the refusal."""

    def __init__(self, size: int, parameters: int) -> None:
        if size > MAX_QUERY_BYTES:
            self.status = 414
            line = f"invalid query = {size:,} bytes: must be at most {MAX_QUERY_BYTES:,} bytes"
        else:
            self.status = 422
            line = (
                f"invalid query = {parameters:,} parameters: must be at most "
                f"{MAX_QUERY_PARAMETERS} parameters"
            )
        super().__init__(line)


def check_query_string(query: bytes) -> None:
    """Refuse a query string over :data:`MAX_QUERY_BYTES` or :data:`MAX_QUERY_PARAMETERS`
    before anything parses it (a count of separators: linear, no allocation)."""
    parameters = query.count(b"&") + 1 if query else 0
    if len(query) > MAX_QUERY_BYTES or parameters > MAX_QUERY_PARAMETERS:
        raise QueryTooLargeError(len(query), parameters)


@dataclass(frozen=True)
class JobPlan:
    """A checked job request: what to store and run."""

    kind: str
    request: dict[str, Any]
    seed: int
    trials: int
    steps: int


UNUSED_BY_KIND = {
    "validate": ("simulation_budget",),
    "exact": ("n1", "n2", "max_trials", "path", "families", "simulation_budget"),
    # seed: a plan job simulates as planner plan does, at its fixed seed (a review found a
    # seed recorded in the job's provenance that played no part in its report)
    "plan": ("n1", "n2", "trials", "max_trials", "path", "families", "protocol", "seed"),
}
"""The request fields a job of each kind never reads: given, they are refused, not ignored."""


def check_job(fields: dict[str, Any], given: Iterable[str] = ()) -> JobPlan:
    """Check a validation or exact request against the caps; normalise its defaults.
    ``given``: the fields the client sent (a field the job's kind does not read is
    refused)."""
    from planner import api
    from planner.coverage import coverable_plan
    from planner.plan import plan as make_plan
    from planner.validate import (
        AUTO,
        PathChoice,
        SimulationPath,
        check_trials,
        checked_families,
        resolve_path,
        trial_messages,
        trial_schedule,
    )

    kind = fields.pop("kind", "validate")
    for name in UNUSED_BY_KIND.get(kind, ()):
        if name in given and fields.get(name) is not None:  # null: as if left out
            raise InputError(name, fields.get(name), f"left out of a job of kind {kind}")
    budget = fields.pop("simulation_budget", 30)
    seed = check_integer("seed", fields.get("seed", 0), 0, 2**63 - 1)
    if kind == "plan":
        request = {name: fields.get(name) for name in QUERY_FIELDS}
        request["accounting"] = fields.get("accounting", "exact")
        query = Query.build(**request)  # every input checked now, not in the job
        request["allocation"] = _split_rule(fields)
        # the service's own cap, named (a review: "[0, 3600]", the command line's, had
        # refused 601 and 30.5 alike)
        seconds = api.checked_simulation_budget(budget, most=MAX_SIMULATION_SECONDS)
        # refused now where the job would refuse before simulating (k below the
        # simulation floor, a simulation over its budget), not after it was queued
        split = api.split_of(request["allocation"])
        coverable_plan(query, budget_seconds=seconds, split=split)
        return JobPlan(kind, {**request, "simulation_budget": seconds}, seed, 0, 1)
    if kind == "exact":
        trials = check_integer("trials", _given(fields, "trials", 1000), 50, MAX_EXACT_TRIALS)
        request = {name: fields.get(name) for name in QUERY_FIELDS}
        request["accounting"] = fields.get("accounting", "exact")
        query = Query.build(**request)  # every input checked now, not in the job
        request["allocation"] = _split_rule(fields)
        k = check_integer("k", request["k"], 2)
        if k > MAX_EXACT_K:
            raise InputError("k", request["k"], f"an integer in [2, {MAX_EXACT_K:,}] for --exact")
        # the job's own plan, and its search refused as planner plan --exact refuses it
        protocol = fields.get("protocol")
        if protocol is None:
            made = coverable_plan(query, split=api.split_of(request["allocation"]))
        else:  # one protocol's plan alone, as planner plan --protocol --exact
            if request["allocation"] != "fewest":
                raise InputError("protocol", str(protocol), "given without allocation (alone)")
            made = api.protocol_plan(api.protocol_query(query, protocol), asked=query)
            request["protocol"] = str(protocol)
        api.exact_query(query, made, trials)
        return JobPlan(kind, {**request, "trials": trials, "seed": seed}, seed, trials, 1)
    asked_trials = _given(fields, "trials", AUTO)
    count = check_trials(asked_trials, MAX_TRIALS)
    cap = _given(fields, "max_trials", MAX_TRIALS)
    max_trials = check_integer("max-trials", cap, 200, MAX_TRIALS)
    families = fields.get("families") or None
    family_count = len(checked_families(families))
    query_fields = {
        name: value
        for name, value in fields.items()
        if name not in ("trials", "max_trials", "seed", "path", "families")
    }
    target = api.validation_query(**query_fields)
    query = target.query
    if query.k > MAX_JOB_K:
        raise InputError("k", query.k, f"an integer in [2, {MAX_JOB_K:,}] for a validation job")
    path = PathChoice(check_choice("path", fields.get("path", "auto"), PathChoice))
    # the plan the job checks (as api.validate_document picks it): without sizes given,
    # the covered plan, refused now where the job would refuse it (local k = 10^6: its
    # simulation is over the budget)
    if target.n1 is not None and target.n2 is not None:
        checked = make_plan(query, split=target.split, fallback=target.fallback)
        sizes = (target.n1, target.n2)
    else:  # the plan's own, as the job picks it, without simulating
        printed = api.printed_plan(target, fields.get("protocol"), simulate=False)
        assert printed is not None  # no sizes given
        checked = printed
        sizes = (checked.n_users_group1, checked.n_users_group2)
    # what one trial sends: one run's users and, in the shuffle model, the noise's
    # messages (the user path holds them all; users alone had let such jobs in)
    size1, size2 = trial_messages(checked, query.k, *sizes)
    looks = trial_schedule(count, query.k, family_count, max_trials)
    largest = looks[-1]
    simulated = resolve_path(path, size1, size2, largest)
    if simulated is SimulationPath.FAST and largest * query.k > MAX_FAST_CELLS:
        raise InputError(
            "trials",
            asked_trials,
            f"at most {MAX_FAST_CELLS // query.k:,} at k = {query.k:,} "
            f"(trials × k ≤ {MAX_FAST_CELLS:.0e})",
        )
    # the engine's own limits (k × trials × families, users a run simulates), as the CLI
    # refuses them before any work: a job accepted here does not fail on them later
    runs = checked.runs
    check_vote_sizes(*sizes, runs)  # as planner validate: a size the vote cannot split
    check_validation(
        query.k,
        largest,
        family_count,
        sizes[0] // runs,
        sizes[1] // runs,
        user_path=simulated is SimulationPath.USER,
        messages=(size1, size2),
    )
    request = {**fields, "trials": count, "max_trials": max_trials, "seed": seed}
    request |= {"path": path.value, "families": list(families) if families else None}
    return JobPlan("validate", request, seed, largest, family_count * len(looks))


def _given(fields: dict[str, Any], name: str, default: object) -> object:
    """A request field, or ``default`` when it is absent or null (never when it is 0 or
    "": those are values, checked and refused like any other)."""
    value = fields.get(name)
    return default if value is None else value
