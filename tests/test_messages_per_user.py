"""Every shuffle plan states each group's messages per user (issue 40), wherever its sizes
come from: the Poisson protocol at an allocation's or a given pair of sizes, and a
shuffle plan that runs a local randomizer (one report a user). The expected figures are
computed here from the tester's own noise rule (``validators.shuffle_private
.noise_levels``, equal mixing weights) and the message count each user draws, not read
from the planner."""

from __future__ import annotations

import numpy as np
import pytest

from planner import api
from planner.allocation import AllocationRule, allocate, allocated_plan
from planner.formulas.settings import Coin, Model, Setting
from planner.inputs import Query
from planner.plan import Split, plan
from planner.sweep import sweep
from planner.validate import messages_at
from planner.validators.shuffle_private import noise_levels, randomize


def _expected(checked, sizes: tuple[int, int]) -> tuple[float, float]:
    """1 + bins·hashes·μ_g/n_g with μ_g the tester's noise at one run's sizes."""
    runs = checked.runs
    per_run = [size // runs for size in sizes]
    low = [group.noise_mu_minimum for group in checked.groups]
    mu = noise_levels(per_run[0], per_run[1], low[0], low[1])
    compression = checked.compression
    bins = compression.L * compression.hashes if compression is not None else checked.tester_query.k
    first, second = (1.0 + bins * m / n for m, n in zip(mu, per_run, strict=True))
    return first, second


@pytest.mark.parametrize(
    ("coin", "rule", "extra"),
    [
        (Coin.PRIVATE, AllocationRule.COST, {"cost1": 1.0, "cost2": 3.0}),
        (Coin.PRIVATE, AllocationRule.FIXED_N2, {"n2": 300_000}),
        (Coin.PUBLIC, AllocationRule.FIXED_N2, {"n2": 60_000}),
    ],
)
def test_a_poisson_allocation_states_the_messages_its_tester_sends(coin, rule, extra) -> None:
    """A review: ``--allocation cost`` and ``fixed-n2`` of the Poisson protocol had left
    μ and messages per user empty. Each group's μ is now the tester's at the allocated
    sizes (the stronger group's raised noise included)."""
    query = Query(Setting(Model.SHUFFLE, coin), 9644, 0.195, 1.09, 0.163, 1e-9)
    if coin is Coin.PUBLIC:
        query = Query(Setting(Model.SHUFFLE, coin), 1000, 0.1, 1.0, 0.25, 1e-6)
    own = plan(query, fallback=False, split=Split.PAPER)  # the Poisson protocol's family
    assert own.protocol in ("shuffle-private", "shuffle-public")
    allocation = allocate(own, rule, **extra)
    assert allocation.feasible
    made = allocated_plan(own, allocation)
    sizes = (made.n_users_group1, made.n_users_group2)
    assert sizes != (own.n_users_group1, own.n_users_group2)
    expected = _expected(own, sizes)
    for group, value in zip(made.groups, expected, strict=True):
        assert group.noise_mu is not None and group.noise_mu >= group.noise_mu_minimum
        assert group.messages_per_user == pytest.approx(value, rel=1e-12)
    # a validation at those sizes states the same figures
    assert messages_at(own, *sizes) == pytest.approx(expected, rel=1e-12)


def test_a_validation_at_given_sizes_states_the_messages_its_users_send() -> None:
    """``validate --n1 2000 --n2 3000`` of the Poisson protocol: the tester's noise there
    is μ = s·n_g with s = max(μ1/2000, μ2/3000); the users' randomizers send that many
    noise messages on average (a draw of 200 runs, within Z = 5 standard errors)."""
    query = Query(Setting(Model.SHUFFLE, Coin.PRIVATE), 100, 0.3, 1.0, 0.5, 1e-6)
    own = plan(query, fallback=False)
    assert own.protocol == "shuffle-private" and own.runs == 1
    expected = _expected(own, (2000, 3000))
    assert messages_at(own, 2000, 3000) == pytest.approx(expected, rel=1e-12)
    low = [group.noise_mu_minimum for group in own.groups]
    mu = noise_levels(2000, 3000, low[0], low[1])
    rng = np.random.default_rng(20261130)
    for n, m, value in zip((2000, 3000), mu, expected, strict=True):
        counts = [randomize(np.zeros(n, dtype=np.int64), 100, m, rng).size / n for _ in range(200)]
        spread = np.std(counts, ddof=1) / np.sqrt(len(counts))
        assert abs(np.mean(counts) - value) <= 5 * spread


def test_power_states_the_messages_of_its_plan() -> None:
    """``planner power`` at given sizes prints the plan it fits, now with its messages."""
    document = api.power_document(
        model="shuffle", k=1000, alpha=0.1, eps1=1, eps2=0.25, delta=1e-6, n1=40000, n2=90000
    )
    fitted = document["plan"]
    assert fitted is not None
    for group in fitted["groups"]:
        assert group["messages_per_user"] is not None and group["messages_per_user"] >= 1.0


def test_a_shuffle_plan_that_runs_a_local_randomizer_states_one_message() -> None:
    """A review: such plans stated no messages per user. Each user sends its one report,
    in ``planner plan`` and in a sweep's row alike."""
    inputs = {"k": 11418, "alpha": 0.0504, "eps1": 0.0202, "eps2": 0.123, "delta": 2.1e-12}
    document = api.plan_document(model="shuffle", **inputs)
    assert document["protocol"].startswith("local-")
    assert [g["messages_per_user"] for g in document["groups"]] == [1.0, 1.0]
    rows = sweep([Setting(Model.SHUFFLE, Coin.PRIVATE)], **inputs).rows()
    assert rows[0]["protocol"] == document["protocol"]
    assert (rows[0]["messages_per_user_group1"], rows[0]["messages_per_user_group2"]) == (1, 1)
    local = api.plan_document(model="local", **{**inputs, "delta": None})
    assert [g["messages_per_user"] for g in local["groups"]] == [None, None]


@pytest.mark.parametrize(
    ("inputs", "expected"),
    [
        # a mixed pair's run (a review: its shuffle group stated nothing)
        (
            dict(model="local,shuffle", coin="public", k=2000, alpha=0.05, eps1=8, eps2=6),
            [None, 1.0],
        ),
        (dict(model="shuffle,central", k=31, alpha=0.2, eps1=12, eps2=5), [1.0, None]),
        # a plan on a larger domain, by a coupled protocol on its node (the review: "—")
        (dict(model="shuffle", k=1000, alpha=0.6, eps1=8, eps2=15), [1.0, 1.0]),
        # a central query that gives δ, run by its shuffle run's local randomizer: a
        # curator's groups state none (the review: "1 / 1" there, "—" without δ)
        (dict(model="central", k=64, alpha=0.05, eps1=13.101, eps2=13.101), [None, None]),
    ],
)
def test_every_path_states_messages_as_the_asked_models_count_them(inputs, expected) -> None:
    """A protocol without noise messages (a local randomizer, a curator's tester) run for
    a query: each shuffle group sends its one report, a local or a curator's group none,
    whichever path planned it; the sweep's row says the same."""
    document = api.plan_document(**inputs, delta=1e-6)
    assert not document["protocol"].startswith("shuffle")
    assert [g["messages_per_user"] for g in document["groups"]] == expected
    setting = Setting.from_key(document["setting"])
    row = sweep(
        [setting],
        k=inputs["k"],
        alpha=inputs["alpha"],
        eps1=inputs["eps1"],
        eps2=inputs["eps2"],
        delta=1e-6,
    ).rows()[0]
    assert row["protocol"] == document["protocol"]
    assert [row["messages_per_user_group1"], row["messages_per_user_group2"]] == expected
