"""Every JSON document the planner writes, and every schema name, in one place.

The documents are plain JSON-ready data (``docs/json-schema.md``; field names never change
within a schema version): a plan (``planner.plan/1``), a solution, a sweep, a batch, a
validation, and the schema names of ``planner explain`` and ``--version``. The command line,
the HTTP service and :mod:`planner.api` build them here. This module sits low in the
import graph: it reads the planner's result types and imports none of the modules that
compute them (a sweep and a validation report are taken as they come, ``Any``).
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

from planner.inputs import Query
from planner.plan import Plan, privacy_lines
from planner.statistics import code_version

if TYPE_CHECKING:
    from planner.solve import Solution

PLAN_SCHEMA = "planner.plan/1"
SOLUTION_SCHEMA = "planner.solve/1"
COMPARE_SCHEMA = "planner.compare/1"
SWEEP_SCHEMA = "planner.sweep/6"
BATCH_SCHEMA = "planner.batch/2"
VALIDATE_SCHEMA = "planner.validate/4"
EXPLAIN_SCHEMA = "planner.explain/1"
VERSION_SCHEMA = "planner.version/1"
POWER_SCHEMA = "planner.power/1"


def query_to_dict(query: Query) -> dict[str, Any]:
    """Every input of a query (echoed in each JSON document)."""
    return {
        "model": query.setting.models_text,
        "coin": query.setting.coin.value,
        "k": query.k,
        "alpha": query.alpha,
        "eps1": query.eps1,
        "eps2": query.eps2,
        "delta": query.delta,
        "beta": query.beta,
        "accounting": query.accounting.value,
    }


def plan_to_dict(plan: Plan) -> dict[str, Any]:
    """The plan as plain JSON-ready data (schema ``planner.plan/1``)."""
    models = plan.query.setting.group_models
    groups = [
        {
            "name": group.name,
            "model": models[0 if group.name == "group 1" else 1].value,
            "eps": group.eps,
            "n_users": group.n_users,
            "paper_role": group.paper_role,
            "noise_mu": group.noise_mu,
            "noise_mu_minimum": group.noise_mu_minimum,
            "messages_per_user": group.messages_per_user,
            "baseline_n_users": group.baseline_n_users,
            "saving_users": group.saving_users,
            "saving_fraction": group.saving_fraction,
            "lower_bound": group.lower_bound,
            "optimality_gap": group.optimality_gap,
        }
        for group in plan.groups
    ]
    compression = plan.compression
    alternative = plan.alternative_accounting
    return {
        "schema": PLAN_SCHEMA,
        "inputs": query_to_dict(plan.query),
        "setting": plan.query.setting.key,
        "protocol": plan.protocol,
        "mechanism": plan.mechanism,
        "n_users_group1": plan.n_users_group1,
        "n_users_group2": plan.n_users_group2,
        "total_users": plan.total_users,
        "coverage": plan.coverage.value,
        "coverage_gaps": list(plan.coverage_gaps),
        "tester_point": None
        if plan.tester_point is None
        else {
            "eps1": plan.tester_point.eps1,
            "eps2": plan.tester_point.eps2,
            "alpha": plan.tester_point.alpha,
            "k": plan.tester_query.k,
            "delta": plan.tester_query.delta,
        },
        "split": plan.split.value,
        "groups": groups,
        "bound": {
            "key": plan.bound_key,
            "reference": plan.reference,
            "terms": [{"label": label, "value": value} for label, value in plan.terms],
            "dominant_term": plan.dominant_term,
        },
        "constant": {
            "source": plan.constant_source.value,
            "multiplier": plan.constant_multiplier,
            "version": plan.constants_version,
        },
        "repetition": {
            "method": plan.repetition.method.value,
            "runs": plan.runs,
            "per_run_error": plan.repetition.tester_beta(1 / 3),
            "factor": plan.repetition.factor,
            "vote_runs": plan.repetition.vote_runs,
            "direct_factor": plan.repetition.direct_factor,
            "direct_unavailable": plan.repetition.direct_unavailable,
            "other_method_total_users": plan.repetition.other_total_users,
        },
        "compression": None
        if compression is None
        else {
            "L": compression.L,
            "L_closed_form": compression.L_closed_form,
            "L_paper": compression.L_paper,
            "L_argmin": compression.L_argmin,
            "hashes": compression.hashes,
        },
        "alternative_accounting": None
        if alternative is None
        else {
            "accounting": alternative[0].value,
            "n_users_group1": alternative[1],
            "n_users_group2": alternative[2],
        },
        "baseline": {
            "description": "same protocol with ε = min(ε1, ε2) for both groups",
            "total_users": sum(group.baseline_n_users for group in plan.groups),
        },
        "warnings": list(plan.warnings),
    }


def solution_to_dict(solution: Solution) -> dict[str, Any]:
    value: float | int | None = solution.value
    if value is not None and solution.unknown.value in ("n1", "n2"):
        value = int(value)
    return {
        "schema": SOLUTION_SCHEMA,
        "unknown": solution.unknown.value,
        "feasible": solution.feasible,
        "value": value,
        "reason": solution.reason,
        "plan": None if solution.plan is None else plan_to_dict(solution.plan),
    }


def default_over_exact(default: Plan, found: Plan) -> float:
    """Group 1's users in the default plan over the ``--exact`` search's, like for like: the
    search sizes the paper's split, so a default plan split by the tester's variance is
    read by its paper split (``Plan.paper_split_users``; a review found 4.97 printed where
    the split alone made the difference)."""
    paper = default.paper_split_users
    n1 = default.n_users_group1 if paper is None else paper[0]
    return n1 / found.n_users_group1


def exact_to_dict(exact: Any, default: Plan) -> dict[str, Any]:
    found = exact.plan
    worst = exact.worst
    return {
        "found": found is not None,
        "searched_at": {
            "eps1": exact.query.eps1,
            "eps2": exact.query.eps2,
            "alpha": exact.query.alpha,
            "k": exact.query.k,
        },
        "protocol": found.protocol if found else None,
        "n_users_group1": found.n_users_group1 if found else None,
        "n_users_group2": found.n_users_group2 if found else None,
        "multiplier_of_order_bound": exact.multiplier,
        "trials_per_family": exact.trials,
        "seed": exact.seed,
        "target_error": exact.target,
        "confidence": exact.confidence,
        "worst_family": worst.family if worst else None,
        "worst_error_rate": worst.error_rate if worst else None,
        "worst_wilson95": [worst.ci_low, worst.ci_high] if worst else None,
        "default_over_exact_group1": default_over_exact(default, found) if found else None,
    }


def allocation_to_dict(allocation: Any) -> dict[str, Any]:
    return {
        "rule": allocation.rule.value,
        "feasible": allocation.feasible,
        "n_users_group1": allocation.n_users_group1,
        "n_users_group2": allocation.n_users_group2,
        "cost1": allocation.cost1,
        "cost2": allocation.cost2,
        "cost": allocation.cost,
        "reason": allocation.reason,
        "split": allocation.split.value,
    }


def sweep_to_dict(result: Any) -> dict[str, Any]:
    """The sweep (a :class:`planner.sweep.Sweep`) as JSON-ready data (schema
    ``planner.sweep/6``)."""
    return {
        "schema": SWEEP_SCHEMA,
        "varied": list(result.varied),
        "notes": list(result.notes),
        "rows": result.rows(),
    }


def batch_to_dict(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The rows as JSON-ready data (schema ``planner.batch/2``)."""
    return {"schema": BATCH_SCHEMA, "rows": rows}


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


def report_to_dict(report: Any) -> dict[str, Any]:
    """Everything needed to re-run the validation bit for bit (schema planner.validate/4):
    ``report`` is a :class:`planner.validate.ValidationReport`."""
    v = report.verification
    return {
        "schema": VALIDATE_SCHEMA,
        "inputs": (
            query_to_dict(report.query)
            if report.asked is None
            else {**query_to_dict(report.asked), "protocol": report.asked_protocol}
        ),
        "warnings": [
            *report.query.warnings,
            *(privacy_lines(report.plan) if report.plan is not None else ()),
        ],
        "sizes_from": "plan" if report.plan is not None else "explicit",
        "coverage": report.plan.coverage.value if report.plan is not None else None,
        "protocol": report.protocol,
        "n_users_group1": v.n1,
        "n_users_group2": v.n2,
        "messages_per_user": (
            None if report.messages_per_user is None else list(report.messages_per_user)
        ),
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


def power_to_dict(answer: Any) -> dict[str, Any]:
    """The document of ``planner power --json`` and ``/v1/power`` (schema planner.power/1)."""
    inputs = query_to_dict(answer.query)
    del inputs["beta"]  # the unknown
    lacking = answer.solution.shortfall
    document: dict[str, Any] = {
        "schema": POWER_SCHEMA,
        "inputs": {**inputs, "n1": answer.n1, "n2": answer.n2},
        "feasible": answer.solution.feasible,
        "beta": answer.beta,
        "power": answer.power,
        "reason": answer.solution.reason,
        "shortfall": None
        if lacking is None
        else {
            "group": f"group {lacking.group}",
            "needed": lacking.needed,
            "given": lacking.given,
            "short": lacking.short,
        },
        "plan": None if answer.solution.plan is None else plan_to_dict(answer.solution.plan),
        "validate_options": answer.validate_command(),
    }
    if answer.simulation is not None:
        report = answer.simulation
        document["simulation"] = {
            "verdict": report.verdict.value,
            "report": report_to_dict(report),
        }
    return document
