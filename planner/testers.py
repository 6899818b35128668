"""The real tester behind a plan: which protocol, with which free constants."""

from __future__ import annotations

from typing import Any

from planner.constants import ConstantTable, default_constants
from planner.formulas.settings import Coin, Model
from planner.inputs import Query
from planner.plan import noise_mu
from planner.validators.central import CentralTester
from planner.validators.local_private import LocalPrivateTester
from planner.validators.local_public import local_public_tester
from planner.validators.repetition import MajorityVoteTester
from planner.validators.shuffle_private import ShufflePrivateTester
from planner.validators.shuffle_public import shuffle_public_tester


def tester_parameters(query: Query, constants: ConstantTable | None = None) -> dict[str, Any]:
    """The tester's free constants for this setting, from the constants file."""
    entry = (constants or default_constants()).for_setting(query.setting.key)
    return dict(entry.extra.get("tester", {}))


def build_tester(
    query: Query,
    *,
    L: int | None = None,
    hashes: int = 1,
    runs: int = 1,
    constants: ConstantTable | None = None,
) -> Any:
    """The setting's protocol for named groups 1 (p, ε1) and 2 (q, ε2)."""
    parameters = tester_parameters(query, constants)
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
        return {"majority_vote_runs": tester.runs, "base": describe_tester(tester.base)}
    fields = {name: value for name, value in vars(tester).items() if name != "base"}
    description = {"class": type(tester).__name__, **fields}
    if hasattr(tester, "base"):
        description["base"] = describe_tester(tester.base)
    return description
