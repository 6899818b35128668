"""The testers: both simulation paths agree, reports are reproducible, plans are met."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy import stats

from planner.calibration.search import error_at, smallest_multiplier, table_with
from planner.testers import build_tester
from planner.validate import report_json, validate
from planner.validators.instances import (
    FAMILIES,
    Kind,
    PmfFileError,
    build,
    file_instance,
    load_pmf,
)
from planner.validators.protocol import SimulationPath, simulate
from tests.conftest import SETTING_KEYS, make_query


@pytest.mark.parametrize("key", SETTING_KEYS)
@pytest.mark.parametrize("family", ["zipf-1", "paninski"])
def test_user_level_and_fast_paths_give_the_same_statistic_law(key: str, family: str) -> None:
    query = make_query(key, k=16, alpha=0.3, eps1=1.0, eps2=0.5, delta=1e-3)
    tester = build_tester(query, L=8, hashes=2)
    instance = build(family, 16, 0.3)
    n1, n2 = 3000, 6000
    user = simulate(
        tester, instance.p, instance.q, n1, n2, 300, np.random.default_rng(1), SimulationPath.USER
    )
    fast = simulate(
        tester, instance.p, instance.q, n1, n2, 300, np.random.default_rng(2), SimulationPath.FAST
    )
    assert stats.ks_2samp(user.statistics, fast.statistics).pvalue > 1e-3
    assert (
        stats.ks_2samp(user.statistics, fast.statistics + 10 * fast.statistics.std() + 1).pvalue
        < 1e-6
    )  # the comparison has power


@pytest.mark.parametrize("key", SETTING_KEYS)
def test_user_level_and_fast_paths_reject_at_the_same_rate(key: str) -> None:
    """The decisions too (central: real Laplace noise vs its exact rejection probability)."""
    query = make_query(key, k=16, alpha=0.3, eps1=1.0, eps2=0.5, delta=1e-3)
    tester = build_tester(query, L=8, hashes=2)
    instance = build("zipf-1", 16, 0.3)
    n1, n2, trials = 400, 700, 1500
    rates = [
        simulate(
            tester, instance.p, instance.q, n1, n2, trials, np.random.default_rng(seed), path
        ).rejects.mean()
        for seed, path in ((3, SimulationPath.USER), (4, SimulationPath.FAST))
    ]
    pooled = np.mean(rates)
    standard_error = np.sqrt(2 * pooled * (1 - pooled) / trials)
    assert 0.005 < pooled < 0.995  # neither path is degenerate at this size
    assert abs(rates[0] - rates[1]) < 4 * standard_error


@pytest.mark.parametrize("key", SETTING_KEYS)
def test_same_seed_same_report_and_family_streams_are_independent(key: str) -> None:
    query = make_query(key, k=32, alpha=0.3)
    first = validate(query, n1=2000, n2=9000, trials=50, seed=7)
    again = validate(query, n1=2000, n2=9000, trials=50, seed=7)
    strip = lambda text: [line for line in text.splitlines() if "elapsed" not in line]  # noqa: E731
    assert strip(report_json(first)) == strip(report_json(again))
    subset = validate(query, n1=2000, n2=9000, trials=50, seed=7, families=["paninski"])
    full = {o.family: o for o in first.verification.outcomes}
    alone, among_all = subset.verification.outcomes[0], full["paninski"]
    assert (alone.trials, alone.errors, alone.mean_statistic) == (
        among_all.trials,
        among_all.errors,
        among_all.mean_statistic,
    )
    # the joint bounds pay for every family checked (Bonferroni): one family alone is tighter
    assert alone.ci_high - alone.ci_low < among_all.ci_high - among_all.ci_low


def test_every_far_family_is_far_and_every_null_family_is_null() -> None:
    for k in (2, 3, 16, 1000):
        for alpha in (0.05, 0.25, 0.5, 1.0):
            for name, (kind, _) in FAMILIES.items():
                instance = build(name, k, alpha)
                if instance is None:
                    continue
                if kind is Kind.NULL:
                    assert instance.tv == 0.0
                else:
                    assert instance.tv >= alpha * (1 - 1e-9)
    assert build("paninski", 100, 0.1).tv == pytest.approx(0.1, rel=1e-12)
    assert build("heavy-difference", 100, 0.6) is None  # reported as not applicable, not dropped
    # Paninski's pair stops where q reaches 0; the symmetric pair keeps the same spread
    # difference (|p − q| = 2α/k on every element: the least ℓ2 distance for its TV) up to
    # α = 1, with p and q mirror images about the uniform pmf
    assert build("paninski", 100, 0.5) is not None and build("paninski", 100, 0.51) is None
    for alpha in (0.1, 0.5, 0.6, 0.95, 1.0):
        spread = build("paninski-symmetric", 100, alpha)
        assert spread is not None and spread.tv == pytest.approx(alpha, rel=1e-12)
        assert np.allclose(np.abs(spread.p - spread.q), 2 * alpha / 100)
        assert np.allclose(spread.p + spread.q, 2 / 100)
        assert spread.p.min() >= 0 and spread.q.min() >= 0
    # hand-computed at k = 4, α = 1/2: Paninski's q empties two elements, the mirror pair
    # puts 3/8 and 1/8 on alternate elements
    assert build("paninski", 4, 0.5).q.tolist() == [0.5, 0.0, 0.5, 0.0]
    assert build("paninski-symmetric", 4, 0.5).p.tolist() == [0.375, 0.125, 0.375, 0.125]
    # the heavy null: 1/2 on element 0 in both, the mirrored pair at TV 2α on the other
    # k − 1 scaled to the other 1/2; hand-computed at k = 5, α = 1/4: the light parts are
    # 1/2·(3/8, 1/8, 3/8, 1/8) and 1/2·(1/8, 3/8, 1/8, 3/8)
    heavy = build("heavy-null-light-difference", 5, 0.25)
    assert heavy.p.tolist() == [0.5, 0.1875, 0.0625, 0.1875, 0.0625]
    assert heavy.q.tolist() == [0.5, 0.0625, 0.1875, 0.0625, 0.1875]
    for k in (3, 16, 1001):
        for alpha in (0.01, 0.2, 0.5):
            pair = build("heavy-null-light-difference", k, alpha)
            assert pair.p[0] == pytest.approx(0.5) and pair.q[0] == pytest.approx(0.5)
            assert pair.tv == pytest.approx(alpha, rel=1e-12)
        assert build("heavy-null-light-difference", k, 0.51) is None


def test_pmf_files_are_validated(tmp_path) -> None:
    good = tmp_path / "p.csv"
    good.write_text("0.25, 0.25\n0.5\n")
    assert load_pmf(good).tolist() == [0.25, 0.25, 0.5]
    (tmp_path / "q.json").write_text("[0.5, 0.25, 0.25]")
    np.save(tmp_path / "r.npy", np.array([0.2, 0.8]))
    assert file_instance(good, tmp_path / "q.json").kind is Kind.FAR
    for name, text, message in [
        ("bad.csv", "0.5, nan, 0.5", "finite"),
        ("neg.csv", "1.5, -0.5", "non-negative"),
        ("sum.json", "[0.5, 0.6]", "sum"),
        ("junk.csv", "a, b", "cannot read"),
        ("pmf.xml", "<x/>", "unknown format"),
    ]:
        path = tmp_path / name
        path.write_text(text)
        with pytest.raises(PmfFileError, match=message):
            load_pmf(path)
    (tmp_path / "unnormalised.csv").write_text("2, 2")
    assert load_pmf(tmp_path / "unnormalised.csv", normalize=True).tolist() == [0.5, 0.5]
    with pytest.raises(PmfFileError, match="different k"):
        file_instance(good, tmp_path / "r.npy")


MEASURE = {  # (k, α, ε1, ε2): small-k points for the multiple-of-the-order-bound test
    "local-private": dict(k=64, alpha=0.25, eps1=1.0, eps2=0.5),
    "local-public": dict(k=64, alpha=0.25, eps1=1.0, eps2=0.5),
    "shuffle-private": dict(k=64, alpha=0.25, eps1=1.0, eps2=0.5),
    "shuffle-public": dict(k=64, alpha=0.25, eps1=1.0, eps2=0.5),
    "central": dict(k=64, alpha=0.25, eps1=1.0, eps2=0.5),
}
PUBLIC_HASHING = {"local-public": {"L": 8, "hashes": 1}}


@pytest.mark.parametrize("key", SETTING_KEYS)
def test_multiple_of_the_order_bound_works_at_one_and_a_half_and_fails_at_a_tenth(key) -> None:
    """M: smallest C (order bound) with error ≤ 1/3 on every family; then fresh seeds."""
    query = make_query(key, **MEASURE[key])
    extra = PUBLIC_HASHING.get(key, {})
    search = smallest_multiplier(
        query,
        trials=300,
        seed=101,
        low=0.01,
        high=1000,
        rel_tol=0.05,
        **extra,
    )
    multiple = search.multiplier
    assert multiple is not None and 0.05 < multiple < 100
    above = error_at(query, table_with(key, 1.5 * multiple, **extra), trials=1500, seed=202)
    for outcome in above.outcomes:
        if outcome.applicable:
            assert outcome.ci_high <= 1 / 3, (outcome.family, outcome.error_rate)
    below = error_at(
        query, table_with(key, multiple / 10, **extra), trials=600, seed=303, families=["paninski"]
    )
    assert below.outcomes[0].ci_low > 1 / 3  # it fails on Paninski, not trivially accepting


def test_public_seed_fixes_the_hashes_and_only_them() -> None:
    from planner.validators.local_public import local_public_tester

    tester = local_public_tester(64, 0.3, 1.0, 0.5, L=8, hashes=2)
    instance = build("paninski", 64, 0.3)
    samples = [
        np.random.default_rng(s).choice(64, 4000, p=pmf)
        for s, pmf in ((1, instance.p), (2, instance.q))
    ]
    same_coin = [
        tester.run(*samples, np.random.default_rng(9), public_seed=42).statistic for _ in range(2)
    ]
    other_coin = tester.run(*samples, np.random.default_rng(9), public_seed=43).statistic
    assert same_coin[0] == same_coin[1] != other_coin


def test_an_interrupted_report_write_leaves_nothing_behind(tmp_path, monkeypatch) -> None:
    import os

    from planner.files import write_atomically

    target = tmp_path / "report.json"
    write_atomically(target, "old report\n")

    def interrupted(*_args, **_kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "replace", interrupted)
    with pytest.raises(KeyboardInterrupt):
        write_atomically(target, "new report that must not appear half-written\n")
    assert target.read_text() == "old report\n"
    assert [p.name for p in tmp_path.iterdir()] == ["report.json"]


def test_a_paper_accounting_shuffle_plan_is_met() -> None:
    """The lemma's larger μ reads its constant at the exact privacy of that μ (ε′ < ε)."""
    query = make_query("shuffle-private", k=300, alpha=0.15, eps1=1.0, eps2=0.3, accounting="paper")
    report = validate(query, seed=3)
    assert report.passed, [(o.family, o.error_rate) for o in report.verification.outcomes]


@pytest.mark.parametrize("equal", [True, False], ids=["null", "far"])
def test_local_statistic_is_unbiased_for_the_block_distance(equal: bool) -> None:
    """E[Z2] = Σ_j (p(C_j) − q(C_j))² exactly (the pooled U-statistic, eq:z2), including
    unequal ε and block sizes that differ by one."""
    from planner.validators.hadamard import block_probabilities
    from planner.validators.local_private import LocalPrivateTester

    rng = np.random.default_rng(5)
    p = rng.dirichlet(np.ones(12))
    q = p if equal else rng.dirichlet(np.ones(12))
    tester = LocalPrivateTester(12, 0.2, 1.0, 0.4)
    trials = 40_000
    z2 = tester.simulate_fast(p, q, 1003, 2710, trials, rng).statistics * tester.threshold
    truth = float(np.sum((block_probabilities(p) - block_probabilities(q)) ** 2))
    standard_error = z2.std() / np.sqrt(trials)
    assert abs(z2.mean() - truth) < 4 * standard_error
    assert standard_error < 0.05 * max(truth, z2.std())  # the check has power


def test_shuffle_noise_is_never_below_a_groups_minimum() -> None:
    """μ_g = s·n_g with s = max_g μ_g^min/n_g can round one bit below the binding group's
    minimum; the protocol raises it back (the group's ε rests on its minimum)."""
    from planner.validators.shuffle_private import noise_levels

    rng = np.random.default_rng(5)
    below_before = 0
    for _ in range(20_000):
        n1, n2 = (int(value) for value in rng.integers(1, 10**7, size=2))
        mu1, mu2 = (float(value) for value in np.exp(rng.uniform(-3, 8, size=2)))
        scale = max(mu1 / n1, mu2 / n2)
        below_before += scale * n1 < mu1 or scale * n2 < mu2
        noise1, noise2 = noise_levels(n1, n2, mu1, mu2)
        assert noise1 >= mu1 and noise2 >= mu2
        assert noise1 / n1 == pytest.approx(noise2 / n2, rel=1e-12)  # equal mixing weights
    assert below_before > 0  # the rounding this guards against does happen


def test_a_family_named_twice_is_checked_once() -> None:
    """A repeated --family is one row and one share of the joint confidence."""
    query = make_query("central", k=64, alpha=0.25)
    twice = validate(query, n1=500, n2=500, trials=50, seed=3, families=["paninski", "paninski"])
    once = validate(query, n1=500, n2=500, trials=50, seed=3, families=["paninski"])
    assert [o.family for o in twice.verification.outcomes] == ["paninski"]
    first, alone = twice.verification.outcomes[0], once.verification.outcomes[0]
    assert (first.errors, first.ci_low, first.ci_high) == (
        alone.errors,
        alone.ci_low,
        alone.ci_high,
    )


def test_local_threshold_fraction_follows_the_alternatives_spread() -> None:
    """c = c∞·2/(1 + ρ), ρ² = 1 + s/√(K − 1): hand values at K = 16 and 4096 (s = 4.8,
    c∞ = ½: ρ = √(1 + 4.8/√15) = 1.49645 → c = 0.40056; ρ = √(1 + 4.8/√4095) = 1.03684 →
    c = 0.49096), c rising towards c∞ with K, and s = 0 giving the constant fraction."""
    from planner.validators.local_private import LocalPrivateTester

    def fraction(k: int, slope: float = 4.8, limit: float = 0.5) -> float:
        return LocalPrivateTester(k, 0.2, 1.0, 0.5, limit, slope).fraction

    assert fraction(16) == pytest.approx(0.40056, abs=5e-5)
    assert fraction(4096) == pytest.approx(0.49096, abs=5e-5)
    assert fraction(9) == fraction(16)  # the same Hadamard order K = 16
    rising = [fraction(2**power) for power in range(1, 16)]
    assert all(a < b < 0.5 for a, b in itertools.pairwise(rising))
    assert fraction(300, slope=0.0, limit=0.15) == 0.15
    tester = LocalPrivateTester(300, 0.2, 1.0, 0.5, 0.5, 4.8)
    assert tester.threshold == pytest.approx(tester.fraction * 512 / 300 * 0.2**2)


def test_shuffle_threshold_fraction_follows_the_alternatives_spread() -> None:
    """The shuffle tester's c over its k bins: ρ² = 1 + s/√k. Hand values (c∞ = 0.55,
    s = 12.8): k = 16, ρ = √4.2 = 2.04939, c = 1.1/3.04939 = 0.36073; k = 4096, ρ = √1.2 =
    1.09545, c = 1.1/2.09545 = 0.52495. The threshold scales with c alone, and s = 0 is
    the constant fraction."""
    from planner.validators.shuffle_private import ShufflePrivateTester
    from planner.validators.threshold import balanced_fraction

    def tester(k: int, limit: float = 0.55, slope: float = 12.8) -> ShufflePrivateTester:
        return ShufflePrivateTester(k, 0.2, 3.0, 12.0, limit, slope)

    assert tester(16).fraction == pytest.approx(0.36073, abs=5e-5)
    assert tester(4096).fraction == pytest.approx(0.52495, abs=5e-5)
    assert tester(100, 0.35, 0.0).fraction == 0.35
    assert balanced_fraction(0.5, 3.0, 1) == pytest.approx(0.5 * 2 / 3)  # ρ = 2
    rising = [tester(2**power).fraction for power in range(1, 20)]
    assert all(a < b < 0.55 for a, b in itertools.pairwise(rising))
    ratio = tester(100).threshold(500, 900) / tester(100, 0.35, 0.0).threshold(500, 900)
    assert ratio == pytest.approx(tester(100).fraction / 0.35)


def test_hashed_mean_share_by_hand_and_against_random_hashes() -> None:
    """The share of a Paninski pair's signal a random hash [k] → [L] keeps, against the
    unhashed least mean at α_L (``compression.hashed_mean_share``).

    By hand: with no noise it is P(a bin is not empty) = 1 − (1 − 1/L)^k; k = L = 16:
    (15/16)^16 = exp(16·ln 0.9375) = exp(−1.032616) = 0.356074, share 0.643926. All noise
    (kept = 0): every bin weighs 1/L and the share is E[m]/(k/L) = 1. Against random
    hashes: Σ_b (1 − γ)²δ_b²/w_b averaged over 4000 hashes of a Paninski pair, divided by
    the bound 4α²(L/k)(1 − 1/L)(1 − γ)²; the formula treats the pair's two differences as
    independent signs, which is within 5 % here and errs low (a lower threshold: never a
    smaller plan than the signal supports)."""
    from planner.validators.compression import hashed_mean_share

    assert hashed_mean_share(16, 16, 1.0) == pytest.approx(0.643926, abs=2e-6)
    assert hashed_mean_share(4096, 4096, 0.0) == pytest.approx(1.0, abs=1e-9)
    assert hashed_mean_share(4096, 8, 1.0) == pytest.approx(1.0, abs=1e-9)  # L ≪ k
    shares = [hashed_mean_share(256, 256, kept) for kept in (0.0, 0.25, 0.5, 0.75, 1.0)]
    assert all(a > b for a, b in itertools.pairwise(shares))  # less noise, less share
    rng = np.random.default_rng(1)
    alpha, trials = 0.2, 4000
    for k, L, gamma in ((64, 64, 0.0), (64, 32, 0.5), (256, 256, 0.2), (16, 8, 0.0)):
        difference = np.tile([2 * alpha / k, -2 * alpha / k], k // 2)
        hashed = rng.integers(0, L, size=(trials, k)) + L * np.arange(trials)[:, None]
        delta = np.bincount(
            hashed.ravel(), weights=np.tile(difference, trials), minlength=trials * L
        ).reshape(trials, L)
        members = np.bincount(hashed.ravel(), minlength=trials * L).reshape(trials, L)
        weight = (1 - gamma) * members / k + gamma / L
        terms = np.where(members > 0, delta**2 / np.where(weight > 0, weight, 1.0), 0.0)
        simulated = (1 - gamma) ** 2 * terms.sum(axis=1)
        bound = 4 * alpha**2 * (L / k) * (1 - 1 / L) * (1 - gamma) ** 2
        observed = simulated.mean() / bound
        error = simulated.std() / np.sqrt(trials) / bound
        formula = hashed_mean_share(k, L, 1 - gamma)
        assert abs(formula - observed) <= 0.05 * observed, (k, L, gamma, observed, formula)
        assert formula <= observed + 3 * error, (k, L, gamma, observed, formula)


def test_the_hashed_shuffle_threshold_takes_the_hash_share() -> None:
    """The public-coin shuffle tester's threshold on its L bins is the private-coin one at
    α_L times ``hashed_mean_share(k, L, 1 − γ)`` (with ``hash_share``), else unchanged."""
    from planner.validators.compression import hashed_mean_share
    from planner.validators.shuffle_private import noise_levels
    from planner.validators.shuffle_public import shuffle_public_tester

    plain = shuffle_public_tester(256, 0.1, 2.0, 5.0, 256, 1, 0.55, 12.8)
    shared = shuffle_public_tester(256, 0.1, 2.0, 5.0, 256, 1, 0.55, 12.8, hash_share=True)
    n1, n2 = 30_000, 60_000
    mu1, _ = noise_levels(n1, n2, 2.0, 5.0)
    kept = n1 / (n1 + 256 * mu1)
    ratio = shared.base.threshold(n1, n2) / plain.base.threshold(n1, n2)
    assert ratio == pytest.approx(hashed_mean_share(256, 256, kept), rel=1e-12)
    assert 0.63 < ratio < 0.7  # little noise at these sizes: near 1 − 1/e
