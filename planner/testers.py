"""The real tester behind a plan: which protocol, with which free constants."""

from __future__ import annotations

from typing import Any

from planner.constants import ConstantTable, default_constants
from planner.formulas.repetition import PER_RUN_ERROR
from planner.formulas.settings import Coin, Model, Setting
from planner.inputs import Query
from planner.plan import noise_mu
from planner.validators.central import CentralTester, shifts_for_error
from planner.validators.local_private import LocalPrivateTester
from planner.validators.local_public import local_public_tester
from planner.validators.repetition import MajorityVoteTester
from planner.validators.shuffle_private import ShufflePrivateTester
from planner.validators.shuffle_public import shuffle_public_tester


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
    """The file's tester constants (tuned at β = 1/3) for one run that must meet ``beta``.

    Central's threshold constants leave a null error floor (``shifts_for_error``): below
    1/3 they are raised so that the floor falls with the operating error of β. The other
    testers' thresholds are fractions of the alternative's expected statistic, whose null
    error falls as n grows: their constants stay.
    """
    if setting.model is not Model.CENTRAL or beta >= PER_RUN_ERROR:
        return parameters
    from planner.statistics import operating_error  # scipy: only when validating

    shift_scale, shift_privacy = shifts_for_error(  # the file's, else the class defaults
        float(parameters.get("shift_scale", CentralTester.shift_scale)),
        float(parameters.get("shift_privacy", CentralTester.shift_privacy)),
        operating_error(PER_RUN_ERROR),
        operating_error(beta),
    )
    return {**parameters, "shift_scale": shift_scale, "shift_privacy": shift_privacy}


def build_tester(
    query: Query,
    *,
    L: int | None = None,
    hashes: int = 1,
    runs: int = 1,
    constants: ConstantTable | None = None,
) -> Any:
    """The setting's protocol for named groups 1 (p, ε1) and 2 (q, ε2)."""
    parameters = tester_parameters(
        query, constants, run_beta=PER_RUN_ERROR if runs > 1 else query.beta
    )
    setting = query.setting
    if setting.model is Model.LOCAL:
        if setting.coin is Coin.PUBLIC:
            assert L is not None
            tester: Any = local_public_tester(
                query.k, query.alpha, query.eps1, query.eps2, L, hashes, **parameters
            )
        else:
            tester = LocalPrivateTester(query.k, query.alpha, query.eps1, query.eps2, **parameters)
    elif setting.model is Model.SHUFFLE:
        assert query.delta is not None
        mu1 = noise_mu(query.eps1, query.delta, query.accounting)
        mu2 = noise_mu(query.eps2, query.delta, query.accounting)
        if setting.coin is Coin.PUBLIC:
            assert L is not None
            tester = shuffle_public_tester(query.k, query.alpha, mu1, mu2, L, hashes, **parameters)
        else:
            tester = ShufflePrivateTester(query.k, query.alpha, mu1, mu2, **parameters)
    else:
        tester = CentralTester(query.k, query.eps1, query.eps2, **parameters)
    return MajorityVoteTester(tester, runs) if runs > 1 else tester


def describe_tester(tester: Any) -> dict[str, Any]:
    """Class and parameters, enough to rebuild the tester."""
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
