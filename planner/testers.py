"""The real tester behind a plan: which protocol, with which free constants."""

from __future__ import annotations

from typing import Any

from planner.constants import ConstantTable, default_constants
from planner.formulas.repetition import PER_RUN_ERROR
from planner.formulas.settings import Setting
from planner.inputs import Query
from planner.protocols import protocol_for


def tester_parameters(
    query: Query, constants: ConstantTable | None = None, *, run_beta: float | None = None
) -> dict[str, Any]:
    """The tester's free constants for this setting, from the constants file, for one run
    held to ``run_beta`` (default: the query's β; a majority vote's runs: 1/3)."""
    entry = (constants or default_constants()).for_setting(query.setting.key)
    parameters = dict(entry.extra.get("tester", {}))
    return parameters_for_beta(
        query.setting, parameters, query.beta if run_beta is None else run_beta
    )


def parameters_for_beta(
    setting: Setting, parameters: dict[str, Any], beta: float
) -> dict[str, Any]:
    """The file's tester constants (tuned at β = 1/3) for one run that must meet ``beta``:
    the protocol's ``thresholds_for_beta`` where it has one (central's thresholds leave a
    null error floor, raised below 1/3); the other testers' thresholds are fractions of the
    alternative's expected statistic, whose null error falls as n grows: their constants
    stay."""
    adapt = protocol_for(setting).thresholds_for_beta
    return parameters if adapt is None else adapt(parameters, beta)


def build_tester(
    query: Query,
    *,
    L: int | None = None,
    hashes: int = 1,
    runs: int = 1,
    constants: ConstantTable | None = None,
    run_beta: float | None = None,
) -> Any:
    """The setting's protocol for named groups 1 (p, ε1) and 2 (q, ε2): ``runs`` runs
    (a majority vote), each held to ``run_beta`` (default: 1/3 in a vote, else the query's
    β; a vote of directly calibrated runs, ``Repetition.tester_beta``)."""
    from planner.validators.repetition import MajorityVoteTester

    if run_beta is None:
        run_beta = PER_RUN_ERROR if runs > 1 else query.beta
    parameters = tester_parameters(query, constants, run_beta=run_beta)
    tester = protocol_for(query.setting).build_tester(query, parameters, L, hashes)
    return MajorityVoteTester(tester, runs) if runs > 1 else tester


def describe_tester(tester: Any) -> dict[str, Any]:
    """Class and parameters, enough to rebuild the tester."""
    from planner.validators.repetition import MajorityVoteTester

    if isinstance(tester, MajorityVoteTester):
        return {
            "class": type(tester).__name__,
            "majority_vote_runs": tester.runs,
            "base": describe_tester(tester.base),
        }
    fields = {name: value for name, value in vars(tester).items() if name != "base"}
    description = {"class": type(tester).__name__, **fields}
    if hasattr(tester, "base"):
        description["base"] = describe_tester(tester.base)
    return description
