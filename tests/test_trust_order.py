"""A more trusted model never needs more users than a less trusted one at the same query.

A curator or a shuffler may run the users' local randomizers and pass their reports on
(the output is a post-processing of ε-LDP reports), so a central or shuffle plan weighs
the local protocols too (``planner.protocols.other_mechanisms``) and runs whichever needs
the fewest users. Checked on random queries over the accepted range, per coin, where both
plans are covered (a covered plan is preferred to a cheaper extrapolated one).
"""

from __future__ import annotations

import numpy as np
import pytest

from planner import Query
from planner.inputs import InputError
from planner.plan import Coverage, plan

QUERIES = 60


def _queries() -> list[dict[str, float]]:
    rng = np.random.default_rng(20261128)
    drawn = []
    for _ in range(QUERIES):
        drawn.append(
            {
                "k": round(float(np.exp(rng.uniform(np.log(2), np.log(1e5))))),
                "alpha": float(np.exp(rng.uniform(np.log(0.01), np.log(0.95)))),
                "eps1": float(np.exp(rng.uniform(np.log(0.01), np.log(20)))),
                "eps2": float(np.exp(rng.uniform(np.log(0.01), np.log(20)))),
            }
        )
    return drawn


def _total(model: str, coin: str, point: dict[str, float]) -> int | None:
    """The plan's users in all, or None where it is refused or not covered."""
    delta = 1e-6 if model == "shuffle" else None
    try:
        made = plan(Query.build(model, coin, delta=delta, **point))  # type: ignore[arg-type]
    except InputError:
        return None
    return made.total_users if made.coverage is Coverage.CALIBRATED else None


@pytest.mark.parametrize("coin", ["private", "public"])
def test_more_trusted_models_never_need_more_users(coin: str) -> None:
    compared = 0
    for point in _queries():
        local = _total("local", coin, point)
        shuffle = _total("shuffle", coin, point)
        central = _total("central", coin, point)
        for trusted, less, names in (
            (shuffle, local, "shuffle ≤ local"),
            (central, local, "central ≤ local"),
        ):
            if trusted is None or less is None:
                continue
            compared += 1
            assert trusted <= less, (names, coin, point, trusted, less)
    assert compared >= QUERIES  # most pairs are covered: the check is not vacuous
