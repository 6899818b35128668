"""A more trusted model never needs more users than a less trusted one at the same query.

A curator or a shuffler may run the users' local randomizers and pass their reports on
(the output is a post-processing of ε-LDP reports), so a central or shuffle plan weighs
the local protocols too (``planner.protocols.other_mechanisms``) and runs whichever needs
the fewest users. A central query that gives δ may also run the shuffle protocols (its
curator runs them itself: (ε, δ)-DP at that δ), so it never needs more users than the
shuffle plan of the same query. Checked on random queries over the accepted range, per
coin, where both plans are covered (a covered plan is preferred to a cheaper extrapolated
one).
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
    delta = 1e-6 if model != "local" else None  # a central query's δ: it may run shuffle
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
            (central, shuffle, "central ≤ shuffle"),
        ):
            if trusted is None or less is None:
                continue
            compared += 1
            assert trusted <= less, (names, coin, point, trusted, less)
    assert compared >= 3 * QUERIES // 2  # most pairs are covered: the check is not vacuous


@pytest.mark.parametrize(("k", "alpha", "eps1", "eps2"), [(8, 0.01, 14.0, 8.0)])
def test_a_central_plan_weighs_the_rungs_a_local_plan_weighs(
    k: int, alpha: float, eps1: float, eps2: float
) -> None:
    """Both run k-RR at high ε; the local plan found a cheaper tester point on its grids'
    ladder (k = 8: the weaker group at ε = 7, 71,938 users), which the central plan did not
    weigh (72,404): its ladder now holds the rungs of every protocol it may run (a review
    of 2026-11-29 found 427 such queries on its grid)."""
    central = _total("central", "private", {"k": k, "alpha": alpha, "eps1": eps1, "eps2": eps2})
    local = _total("local", "private", {"k": k, "alpha": alpha, "eps1": eps1, "eps2": eps2})
    assert central is not None and local is not None
    assert central <= local


@pytest.mark.parametrize("coin", ["private", "public"])
def test_at_low_privacy_a_local_plan_is_near_the_central_one(coin: str) -> None:
    """Where both ε are at least ln k + 2 a report is mostly its user's own item, and a local
    plan needs at most 1.5× the central plan's users (over 60 random queries, α from the
    least covered 0.01: below k-RR's old α = 0.03 node a local query had run the Hadamard
    response, 1.0·10¹¹ users at k = 66,080, α = 0.021, ε = (13.2, 14.2) against central's
    1.3·10⁶)."""
    rng = np.random.default_rng(20261129)
    compared = 0
    for _ in range(QUERIES):
        k = round(float(np.exp(rng.uniform(np.log(2), np.log(1e5)))))
        least = np.log(k) + 2
        point = {
            "k": k,
            "alpha": float(np.exp(rng.uniform(np.log(0.01), np.log(0.95)))),
            "eps1": float(np.exp(rng.uniform(np.log(least), np.log(20)))),
            "eps2": float(np.exp(rng.uniform(np.log(least), np.log(20)))),
        }
        local, central = _total("local", coin, point), _total("central", coin, point)
        if local is None or central is None:
            continue
        compared += 1
        assert local <= 1.5 * central, (coin, point, local, central)
    assert compared >= QUERIES * 3 // 4
