"""The multi-message shuffle protocol on the public coin (``shuffle-public+messages``, issue
40): a shared hash onto K buckets, then the private coin's protocol on the buckets. Its
privacy enumerated over every hash, its bound and bucket choice against hand-computed
values, the tester's two simulation paths, and its plans' messages and users.

Statistical checks use fixed seeds; a failure is a change, not a flake: sample means
within Z = 5 standard errors, two-sample tests at a false-alarm rate of 1e-4."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats

from planner.formulas.bounds import (
    curator_beside_curator,
    curator_noise_variance,
    hashed_curator_buckets,
    hashed_curators,
)
from planner.formulas.correlated_noise import (
    Flood,
    best_flood,
    correlated_noise_delta,
    geometric_ratio,
)
from planner.formulas.settings import Coin, Model, Setting
from planner.inputs import Query
from planner.plan import plan
from planner.protocols.shuffle_messages import THETA
from planner.validators.shuffle_multi_message import (
    HashedMultiMessageTester,
    MultiMessageChannelsTester,
    randomize,
)

Z = 5.0
LEVEL = 1e-4
PUBLIC = Setting(Model.SHUFFLE, Coin.PUBLIC)
PRIVATE = Setting(Model.SHUFFLE, Coin.PRIVATE)


def _bin_view(h: int, p: float, flood: Flood, size: int) -> np.ndarray:
    """One bin's view (N⁺, N⁻) with count h, by its defining sum: N⁺ = h + G1 + F,
    N⁻ = G2 + F (G geometric of ratio p, F the flood), on the grid a, b < size, from
    scipy's laws (not the module's)."""
    geometric = (1.0 - p) * p ** np.arange(size, dtype=float)
    t = np.arange(size)
    weights = np.asarray(stats.nbinom.pmf(t, flood.shape, 1.0 - flood.ratio))
    if flood.ratio == 0.0:
        weights = np.asarray(stats.poisson.pmf(t, flood.mean))
    a = np.arange(size)[:, None]
    b = np.arange(size)[None, :]

    def at(index: np.ndarray) -> np.ndarray:
        inside = (index >= 0) & (index < size)
        return np.where(inside, geometric[np.clip(index, 0, size - 1)], 0.0)

    view = np.zeros((size, size))
    for step in range(size):
        view += weights[step] * at(a - h - step) * at(b - step)
    return view.ravel()


@pytest.mark.parametrize("flood", [Flood(0.5), Flood(0.5, 0.1)])
def test_every_item_neighbour_under_every_hash_is_within_the_accounted_delta(
    flood: Flood,
) -> None:
    """k = 4 items, K = 3 buckets, n = 2 users: for each of the 3⁴ hashes, every item
    dataset and every replace-one neighbour of it (items, not buckets), the hockey stick
    of the whole view of the three buckets is at most the accounted δ. The hash only
    relabels items, so a neighbour is a bucket neighbour or the same view."""
    eps, p, k, buckets, size = 1.0, 0.2, 4, 3, 12
    bins = [_bin_view(count, p, flood, size) for count in range(3)]
    missing = 1.0 - bins[2].sum()

    def joint(histogram: np.ndarray) -> np.ndarray:
        view = bins[int(histogram[0])]
        for count in histogram[1:]:
            view = np.multiply.outer(view, bins[int(count)]).ravel()
        return view

    hockey: dict[tuple[tuple[int, ...], tuple[int, ...]], float] = {}

    def hockey_stick(first: tuple[int, ...], second: tuple[int, ...]) -> float:
        """The view of bucket histogram ``first`` against ``second``'s (each pair once)."""
        if (first, second) not in hockey:
            gap = joint(np.asarray(first)) - math.exp(eps) * joint(np.asarray(second))
            hockey[first, second] = float(np.clip(gap, 0.0, None).sum())
        return hockey[first, second]

    worst = 0.0
    datasets = list(itertools.product(range(k), repeat=2))
    for hash_ in itertools.product(range(buckets), repeat=k):
        mapping = np.asarray(hash_)

        def histogram(items: tuple[int, ...], mapping: np.ndarray = mapping) -> tuple[int, ...]:
            return tuple(np.bincount(mapping[list(items)], minlength=buckets).tolist())

        for items in datasets:
            for user, other in itertools.product(range(2), range(k)):
                neighbour = list(items)
                neighbour[user] = other
                pair = (histogram(items), histogram(tuple(neighbour)))
                worst = max(worst, hockey_stick(*pair))
    accounted = correlated_noise_delta(eps, p, flood)
    assert worst > 0.0  # some hash separates some neighbours
    assert accounted >= worst
    assert accounted <= worst + 2 * buckets * missing + 1e-12


def test_each_user_runs_the_private_protocol_on_its_bucket() -> None:
    """The user path maps every item through one hash drawn from the run's seed, before
    any report, and both channels are the private coin's over K bins; each user's
    expected messages are 1 + K·(2p/(1 − p) + 2·E F)/n."""
    tester = HashedMultiMessageTester(64, 0.3, 1.5, 0.6, delta=1e-6, theta=THETA, buckets=16)
    assert all(channel.k == 16 for channel in tester.channels)
    items1, items2 = np.arange(64), np.arange(64)[::-1]
    hash_ = tester.draw_hash(np.random.default_rng(5))[0]
    mapped = tester.reported_values(items1, items2, np.random.default_rng(5))
    assert np.array_equal(mapped[0], hash_[items1]) and np.array_equal(mapped[1], hash_[items2])
    private = MultiMessageChannelsTester(16, 0.3, 1.5, 0.6, delta=1e-6, theta=THETA)
    assert tester.messages_per_user(500, 700) == private.messages_per_user(500, 700)
    p = geometric_ratio(1.5, THETA)
    flood = best_flood(1.5, 1e-6, p)
    assert tester.messages_per_user(500, 700)[0] == pytest.approx(
        1 + 16 * (2 * p / (1 - p) + 2 * flood.mean) / 500, rel=1e-12
    )


def test_the_user_level_and_fast_paths_agree() -> None:
    """300 user-level runs (a hash, every message, the shuffle, the counts) against 3,000
    fast ones, under the null and an alternative: two-sample KS at LEVEL and matched
    means within Z standard errors."""
    k, n1, n2 = 32, 300, 200
    tester = HashedMultiMessageTester(k, 0.4, 2.0, 1.0, delta=1e-6, theta=THETA, buckets=8)
    p = np.full(k, 1 / k)
    q = p * (1 + 0.8 * np.array([1, -1] * (k // 2)))
    rng = np.random.default_rng(31)
    for second in (p, q):
        user = np.array(
            [
                tester.run(rng.choice(k, n1, p=p), rng.choice(k, n2, p=second), rng).statistic
                for _ in range(300)
            ]
        )
        fast = tester.simulate_fast(p, second, n1, n2, 3000, rng).statistics
        assert stats.ks_2samp(user, fast).pvalue > LEVEL
        spread = math.sqrt(user.var() / user.size + fast.var() / fast.size)
        assert abs(user.mean() - fast.mean()) <= Z * spread


def test_the_bound_against_hand_computed_values() -> None:
    """k = 256, K = 16, α = 0.2, both groups at a curator's ε = 0.16: r = e^{−0.08},
    v = 2r/(1 − r)² = 312.33…, τ = α²·√K·(1 − 1/K)/k = 5.859375e-4, each group's share
    τ/2, c = K·v, n = (1 + √(1 + 4c·τ/2))/τ = 6,175.5…. Without the hash (K = k, α² scaled
    by 1 − 1/k) it is the two curators' bound."""
    r = math.exp(-0.08)
    v = 2 * r / (1 - r) ** 2
    assert v == pytest.approx(float(curator_noise_variance(0.16)), rel=1e-12)
    assert v == pytest.approx(312.33, abs=0.01)
    tau = 0.04 * 4 * (15 / 16) / 256
    by_hand = (1 + math.sqrt(1 + 4 * 16 * v * tau / 2)) / tau
    assert by_hand == pytest.approx(6175.5, abs=0.1)
    assert float(hashed_curators(256, 16, 0.2, 0.16, 0.16)[0]) == pytest.approx(by_hand, rel=1e-12)
    for k, alpha, eps1, eps2 in [(256, 0.2, 0.16, 0.16), (1000, 0.1, 2.0, 0.3)]:
        scaled = alpha * math.sqrt(1 - 1 / k)
        assert float(hashed_curators(k, k, alpha, eps1, eps2)[0]) == pytest.approx(
            float(curator_beside_curator(k, scaled, eps1, eps2)[0]), rel=1e-12
        )


def test_the_buckets_are_the_power_of_two_with_the_fewest_users() -> None:
    """Against every candidate K = 16 … min(k/2, 2048): the choice's users in all are the
    least, and the choice moves as hand computation says: small K where the noise
    dominates (k = 256, ε = 0.16: 32), k/2 where the sampling does (k = 1,024, ε = 4)."""
    for k, alpha, eps1, eps2 in [(256, 0.2, 0.16, 0.16), (4096, 0.1, 0.24, 0.1), (1024, 0.1, 4, 4)]:
        chosen = hashed_curator_buckets(k, alpha, eps1, eps2)
        totals = {
            buckets: float(
                hashed_curators(k, buckets, alpha, eps1, eps2)[0]
                + hashed_curators(k, buckets, alpha, eps2, eps1)[0]
            )
            for buckets in (2**i for i in range(4, 12))
            if 2 * buckets <= k
        }
        assert totals[chosen] == min(totals.values())
    # by hand, both groups at one ε (an equal split of τ): 2·(1 + √(1 + 2K·v·τ))/τ users
    for k, alpha, eps, expected in [(256, 0.2, 0.16, 32), (1024, 0.1, 4.0, 512)]:
        r = math.exp(-eps / 2)
        v = 2 * r / (1 - r) ** 2
        by_hand = {}
        for buckets in (16, 32, 64, 128, 256, 512):
            if 2 * buckets > k:
                continue
            tau = alpha**2 * math.sqrt(buckets) * (1 - 1 / buckets) / k
            by_hand[buckets] = 2 * (1 + math.sqrt(1 + 2 * buckets * v * tau)) / tau
        assert min(by_hand, key=by_hand.__getitem__) == expected
        assert hashed_curator_buckets(k, alpha, eps, eps) == expected
    assert hashed_curator_buckets(20, 0.2, 0.1, 0.1) == 16  # k/2 below 16: the least K


def test_a_public_coin_plan_hashes_where_the_noise_dominates() -> None:
    """k = 4,096, α = 0.1, ε = 0.3, δ = 1e-6: the public coin's plan runs the hashed
    protocol with fewer users than the private coin's plan and under a fifth of its
    messages per user; its messages are what its users' randomizers send (Z = 5)."""
    public = plan(Query(PUBLIC, 4096, 0.1, 0.3, 0.3, 1e-6))
    private = plan(Query(PRIVATE, 4096, 0.1, 0.3, 0.3, 1e-6))
    assert public.protocol == "shuffle-public+messages"
    assert private.protocol == "shuffle-private+messages"
    assert public.total_users < private.total_users
    sent_public = public.groups[0].messages_per_user
    sent_private = private.groups[0].messages_per_user
    assert sent_public is not None and sent_private is not None
    assert sent_public < sent_private / 5
    assert "buckets" in (public.mechanism or "")
    tester = public.tester_query
    buckets = int(hashed_curator_buckets(4096, 0.1, THETA * tester.eps1, THETA * tester.eps2))
    rng = np.random.default_rng(17)
    group = public.groups[0]
    p = geometric_ratio(tester.eps1, THETA)
    flood = best_flood(tester.eps1, 1e-6, p)
    _, per_user = randomize(rng.integers(0, buckets, group.n_users), buckets, p, flood, rng)
    assert abs(per_user.mean() - sent_public) <= Z * per_user.std() / math.sqrt(per_user.size)


def test_a_public_coin_plan_runs_the_private_coin_where_hashing_cannot_pay() -> None:
    """Large ε, where the sampling dominates: K ≤ k/2 would cost users, so the public coin
    runs the private coin's protocol (and never needs more users than it)."""
    public = plan(Query(PUBLIC, 1000, 0.1, 4.0, 4.0, 1e-6))
    private = plan(Query(PRIVATE, 1000, 0.1, 4.0, 4.0, 1e-6))
    assert public.protocol != "shuffle-public+messages"
    assert public.total_users <= private.total_users


def test_every_output_states_the_plans_messages_per_user(tmp_path, capsys) -> None:
    """Issue 40: every plan states its messages per user. The sweep's row, the batch's row
    and a validation of the plan give each group's messages as the plan does (a review:
    they gave none), and a validation at other sizes scales each user's share."""
    from planner.batch import read_scenarios, run_batch
    from planner.cli import main
    from planner.documents import report_to_dict
    from planner.sweep import sweep
    from planner.validate import validate

    query = Query(PUBLIC, 1000, 0.1, 1.0, 0.25, 1e-6)
    made = plan(query)
    assert made.protocol == "shuffle-public+messages"
    sent = [group.messages_per_user for group in made.groups]
    assert all(value is not None and value > 1 for value in sent)

    row = sweep([PUBLIC], k=1000, alpha=0.1, eps1=1.0, eps2=0.25, delta=1e-6).rows()[0]
    assert [row["messages_per_user_group1"], row["messages_per_user_group2"]] == pytest.approx(
        sent, rel=1e-12
    )
    path = tmp_path / "one.csv"
    path.write_text(
        "name,model,coin,k,alpha,eps1,eps2,delta\nq,shuffle,public,1000,0.1,1,0.25,1e-6\n"
    )
    batch_row = run_batch(read_scenarios(path))[0]
    assert [batch_row["messages_per_user_group1"], batch_row["messages_per_user_group2"]] == sent

    report = validate(query, trials=100, seed=3)
    assert report_to_dict(report)["messages_per_user"] == pytest.approx(sent, rel=1e-12)
    # at other sizes a group's share of its fixed noise total scales with its size (a
    # review: an allocation's validation gave none where `planner plan` gives them)
    larger = made.n_users_group1 + 1000
    explicit = validate(query, n1=larger, n2=made.n_users_group2, trials=100)
    scaled = [1 + (sent[0] - 1) * made.n_users_group1 / larger, sent[1]]
    assert report_to_dict(explicit)["messages_per_user"] == pytest.approx(scaled, rel=1e-12)

    assert main(["sweep", "-s", "shuffle-public", "-k", "1000", "--alpha", "0.1", "--eps1",
                 "1", "--eps2", "0.25,1", "--delta", "1e-6"]) == 0  # fmt: skip
    assert "messages a user" in capsys.readouterr().out


def test_a_protocol_asked_by_name_runs_alone_on_a_grid_node() -> None:
    """A review: ``--protocol shuffle-public+messages`` (k = 300) ran the private coin's
    protocol on the 512-bin node, 25,484 users under the hashed protocol's name. Asked by
    name it runs alone; the setting's own plan may still run the private coin's."""
    from planner.api import protocol_plan

    query = Query(Setting(Model.SHUFFLE, Coin.PUBLIC, "messages"), 300, 0.049, 2.8, 2.8, 1e-6)
    alone = protocol_plan(query)
    assert alone.protocol == "shuffle-public+messages"
    assert "buckets" in (alone.mechanism or "")
    default = plan(Query(PUBLIC, 300, 0.049, 2.8, 2.8, 1e-6))
    assert default.total_users <= alone.total_users


def test_a_sweep_whose_flood_searches_would_take_minutes_leaves_them_out_and_says_so(
    capsys,
) -> None:
    """A review: 400 values of ε2 from 0.0049 at δ = 10⁻¹² searched 416 floods for the
    messages per user, 141 s. Its rows keep their users; their messages are left empty
    (at once), and one line says why and how to get them (stderr beside CSV)."""
    from planner.cli import main
    from planner.sweep import sweep

    arguments = dict(k=1000, alpha=0.1, eps1=0.156, eps2="0.0049:0.156:400log", delta=1e-12)
    result = sweep([PRIVATE], **arguments)  # type: ignore[arg-type]
    rows = result.rows()
    assert all(row["status"] == "ok" and row["total_users"] for row in rows)
    assert all(row["messages_per_user_group1"] is None for row in rows)
    assert len(result.notes) == 1 and "flood searches would take about" in result.notes[0]
    code = main(["sweep", "-s", "shuffle-private", "-k", "1000", "--alpha", "0.1", "--eps1",
                 "0.156", "--eps2", "0.0049:0.156:400log", "--delta", "1e-12", "--format",
                 "csv"])  # fmt: skip
    captured = capsys.readouterr()
    assert code == 0 and captured.err.strip().startswith("note: messages per user left empty")
    # a few values: their messages are given
    few = sweep([PRIVATE], **{**arguments, "eps2": [0.0049, 0.156]})  # type: ignore[arg-type]
    assert few.notes == () and all(r["messages_per_user_group1"] for r in few.rows())
