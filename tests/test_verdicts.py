"""Three-valued verdicts (pass / fail / inconclusive) and sequential verification.

The bounds are checked against binomial sums by hand, the stopping rule against a
tester whose error sits exactly on the target (no verdict may then say ``fail`` more
often than the stated 5 %), and the CLI's exit codes on real plans.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from planner.cli import main
from planner.plan import plan
from planner.statistics import trial_schedule
from planner.validate import validate
from planner.validators.engine import verify
from planner.validators.instances import FAMILIES
from planner.validators.protocol import TrialBatch
from planner.validators.stats import (
    Verdict,
    clopper_pearson_bounds,
    trials_to_decide,
    verdict_of,
    wilson_interval,
)
from tests.conftest import SETTING_KEYS, make_query


def _rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


def _binomial_cdf(count: int, trials: int, rate: float) -> float:
    return sum(
        math.comb(trials, i) * rate**i * (1 - rate) ** (trials - i) for i in range(count + 1)
    )


@pytest.mark.parametrize(("errors", "trials"), [(0, 10), (3, 10), (10, 10), (37, 120)])
def test_clopper_pearson_bounds_are_the_binomial_tail_quantiles(errors: int, trials: int) -> None:
    tail = 0.01
    low, high = clopper_pearson_bounds(errors, trials, tail)
    if errors < trials:  # P(X ≤ errors | high) = tail
        assert _binomial_cdf(errors, trials, high) == pytest.approx(tail, rel=1e-9)
    else:
        assert high == 1.0
    if errors > 0:  # P(X ≥ errors | low) = tail
        assert 1 - _binomial_cdf(errors - 1, trials, low) == pytest.approx(tail, rel=1e-9)
    else:
        assert low == 0.0
    assert low <= errors / trials <= high


def test_zero_errors_upper_bound_in_closed_form() -> None:
    """0 of n: the upper bound solves (1 − u)^n = tail."""
    assert clopper_pearson_bounds(0, 200, 0.05)[1] == pytest.approx(1 - 0.05 ** (1 / 200))


def test_verdict_of_the_two_bounds() -> None:
    assert verdict_of(0.1, 0.3, 1 / 3) is Verdict.PASS
    assert verdict_of(0.34, 0.5, 1 / 3) is Verdict.FAIL
    assert verdict_of(0.3, 0.36, 1 / 3) is Verdict.INCONCLUSIVE


def test_trials_to_decide_shrinks_with_the_distance_to_the_target() -> None:
    near = trials_to_decide(30, 100, 1 / 3, 0.001)
    far = trials_to_decide(20, 100, 1 / 3, 0.001)
    assert near is not None and far is not None and near > far > 100
    # the fewest N whose bounds at the same rate decide: 20 % of N errors at N = far, not
    # at far − 1 (Clopper–Pearson upper bound ≤ 1/3 from N = far on)
    assert clopper_pearson_bounds(round(0.2 * far), far, 0.001)[1] <= 1 / 3
    assert clopper_pearson_bounds(round(0.2 * (far - 1)), far - 1, 0.001)[1] > 1 / 3
    # no errors: the upper bound is 1 − tail^(1/N) ≤ target from N = ln(tail)/ln(1 − target)
    # on: ln(0.05/88)/ln(0.7) = 20.95, so 21 trials in all, more than the 10 run (and the
    # 1 run): never a count already spent
    assert trials_to_decide(0, 10, 0.3, 0.05 / 88) == 21
    assert trials_to_decide(0, 1, 0.3, 0.05 / 88) == 21
    assert trials_to_decide(1, 3, 1 / 3, 0.001) is None  # the rate sits on the target


def test_auto_schedule_doubles_to_the_cap_within_the_cost_budget() -> None:
    assert trial_schedule("auto", 100, 11) == (200, 400, 800, 1600, 3200, 6400, 12800, 25600)
    assert trial_schedule("auto", 100, 11, max_trials=1000) == (200, 400, 800)
    budgeted = trial_schedule("auto", 60_000, 11)
    assert budgeted[-1] * 60_000 * 11 <= 500_000_000 and budgeted[0] == 200
    assert trial_schedule("auto", 10**9, 11) == (200,)  # at least one look
    assert trial_schedule(150, 100, 11) == (150,)
    # 500e6 // (3181 · 11) = 14,289: the looks stop at 12,800 (a vote too: one run a trial)
    assert trial_schedule("auto", 3181, 11)[-1] == 12800


class _OnTheTarget:
    """A tester whose error on every family is exactly ``rate`` (null: rejects w.p. rate;
    far: accepts w.p. rate)."""

    def __init__(self, rate: float) -> None:
        self.rate = rate

    def simulate_fast(self, p, q, n1, n2, trials, rng) -> TrialBatch:
        reject_probability = self.rate if np.array_equal(p, q) else 1 - self.rate
        rejects = rng.random(trials) < reject_probability
        return TrialBatch(rejects.astype(float), rejects)

    def run(self, samples1, samples2, rng):  # pragma: no cover - the fast path is used
        raise NotImplementedError


def test_stopping_when_decided_does_not_inflate_the_error() -> None:
    """Error exactly at β on every family, 8 looks: a ``fail`` is a wrong verdict; the
    union bound keeps it ≤ 5 %. 300 sequential runs: if the true rate of wrong verdicts
    were 5 %, P(more than 24 of 300) < 1 %. A naive rule (each look's 95 % Wilson bound,
    family by family) says ``fail`` far more often, so the check can tell them apart."""
    beta = 1 / 3
    tester = _OnTheTarget(beta)
    wrong = naive_wrong = 0
    for run in range(300):
        result = verify(
            tester, 16, 0.3, 100, 100, trials=trial_schedule("auto", 16, 11), seed=run, target=beta
        )
        wrong += result.verdict is Verdict.FAIL
        rng = np.random.default_rng(10_000 + run)
        naive_errors = np.zeros(len(FAMILIES), dtype=int)
        naive_trials = 0
        for look in trial_schedule("auto", 16, len(FAMILIES)):
            naive_errors += rng.binomial(look - naive_trials, beta, size=len(FAMILIES))
            naive_trials = look
            if any(wilson_interval(int(e), naive_trials)[0] > beta for e in naive_errors):
                naive_wrong += 1
                break
    assert wrong <= 24, wrong
    assert naive_wrong >= 60, naive_wrong  # the naive rule says fail in ≈ 75 % of runs here


def test_a_family_stops_once_decided_and_the_run_records_what_it_used() -> None:
    query = make_query("central", k=64, alpha=0.25, eps1=1.0, eps2=0.5)
    report = validate(query, seed=4)
    v = report.verification
    assert report.verdict is Verdict.PASS
    assert v.schedule[0] == 200 and v.trials in v.schedule
    trials = {o.family: o.trials for o in v.outcomes if o.applicable}
    assert min(trials.values()) == 200  # the easy families were certified at the first look
    assert v.total_trials == sum(o.trials for o in v.outcomes)
    assert validate(query, seed=4).verification.outcomes == v.outcomes  # same seed, same run


@pytest.mark.parametrize("key", SETTING_KEYS)
def test_a_correct_plan_checked_with_few_trials_is_never_a_fail(key: str) -> None:
    """100 trials cannot certify a plan at error ≈ 0.26, but must not call it failed."""
    query = make_query(key, k=64, alpha=0.25, eps1=1.0, eps2=0.5)
    verdicts = {validate(query, trials=100, seed=seed).verdict for seed in range(3)}
    assert Verdict.FAIL not in verdicts


@pytest.mark.parametrize("key", SETTING_KEYS)
def test_a_plan_at_a_fifth_of_the_default_fails(key: str) -> None:
    query = make_query(key, k=64, alpha=0.25, eps1=1.0, eps2=0.5)
    default = plan(query)
    report = validate(query, n1=default.n_users_group1 // 5, n2=default.n_users_group2 // 5, seed=1)
    assert report.verdict is Verdict.FAIL, [
        (o.family, o.error_rate) for o in report.verification.outcomes
    ]


def test_cli_exit_codes_follow_the_verdict(capsys) -> None:
    point = ["--model", "central", "-k", "64", "--alpha", "0.25", "--eps1", "1", "--eps2", "0.5"]
    assert main(["validate", *point, "--json"]) == 0
    assert main(["validate", *point, "--n1", "40", "--n2", "80", "--json"]) == 1
    assert main(["validate", *point, "--trials", "20", "--json"]) == 3
    capsys.readouterr()


def test_a_vote_checked_through_one_run_reports_the_votes_error_and_bounds() -> None:
    """Runs erring with probability 0.3 each: a 5-run vote errs with
    V(0.3) = P(Bin(5, 0.3) ≥ 3) = 10·0.09·0.49 + 5·0.027·0.7 + 0.00243 = 0.16308. The
    report's error and bounds are V at the run's; simulating the whole vote (r runs a
    trial) gives the same rate within its 99.9 % interval; the verdict is the vote's
    against β (pass at 0.3, fail at 0.1), and the run is held to p* with V(p*) = β."""
    from planner.formulas.repetition import majority_vote_error, majority_vote_run_target
    from planner.validators.repetition import MajorityVoteTester

    assert majority_vote_error(5, 0.3) == pytest.approx(0.16308, abs=1e-12)
    vote = MajorityVoteTester(_OnTheTarget(0.3), 5)
    checked = verify(vote, 16, 0.3, 500, 500, trials=4000, seed=3, target=0.3)
    assert checked.vote_runs == 5 and checked.run_target == majority_vote_run_target(5, 0.3)
    for outcome in (o for o in checked.outcomes if o.applicable):
        run_rate = outcome.errors / outcome.trials
        assert outcome.run_error_rate == run_rate and abs(run_rate - 0.3) < 0.03
        assert outcome.error_rate == pytest.approx(majority_vote_error(5, run_rate))
        low, high = clopper_pearson_bounds(
            outcome.errors, outcome.trials, (1 - checked.confidence) / len(FAMILIES)
        )
        assert outcome.ci_low == pytest.approx(majority_vote_error(5, low))
        assert outcome.ci_high == pytest.approx(majority_vote_error(5, high))
        assert outcome.ci_low <= 0.16308 <= outcome.ci_high
    assert checked.verdict is Verdict.PASS
    assert verify(vote, 16, 0.3, 500, 500, trials=4000, seed=3, target=0.1).verdict is (
        Verdict.FAIL
    )
    whole = vote.simulate_fast(np.ones(16) / 16, np.ones(16) / 16, 500, 500, 20_000, _rng(5))
    low, high = wilson_interval(int(whole.rejects.sum()), 20_000, z=3.29)  # 99.9 %
    assert low <= 0.16308 <= high


def test_the_majority_vote_run_target_by_hand() -> None:
    """3 runs: V(p) = 3p² − 2p³ = 0.1 at p = 0.195800; one run: β itself; V(p*) ≤ β < V
    just above p*."""
    from planner.formulas.repetition import majority_vote_error, majority_vote_run_target

    assert majority_vote_run_target(3, 0.1) == pytest.approx(0.195800, abs=1e-6)
    assert majority_vote_run_target(1, 0.1) == 0.1
    for runs, beta in ((3, 0.1), (15, 0.1), (47, 0.01), (7, 0.2)):
        target = majority_vote_run_target(runs, beta)
        assert majority_vote_error(runs, target) <= beta < majority_vote_error(runs, target + 1e-9)
    with pytest.raises(ValueError):
        majority_vote_run_target(4, 0.1)


def test_validating_a_vote_plan_simulates_one_run_and_says_so() -> None:
    """A local public-coin plan at β = 0.05 is a majority vote (no direct factor below
    β = 0.2): its validation simulates one run of ⌊n/r⌋ users a group, and the JSON says
    how; sizes below the vote's run count are refused."""
    from planner.documents import report_to_dict
    from planner.inputs import InputError

    query = make_query("local-public", k=64, alpha=0.3, eps1=1.0, eps2=0.5, beta=0.05)
    checked = plan(query, fallback=False)
    assert checked.runs > 1
    report = validate(query, seed=2, fallback=False)
    document = report_to_dict(report)
    vote = document["vote_check"]
    assert vote["runs"] == checked.runs
    assert document["tester"]["class"] == "MajorityVoteTester"
    assert document["tester"]["majority_vote_runs"] == checked.runs
    assert vote["run_n_users_group1"] == checked.n_users_group1 // checked.runs
    assert document["n_users_group1"] == checked.n_users_group1
    # r is the fewest runs whose vote meets β at 1/3 a run, so p* is a little above 1/3
    assert document["target_error"] == 0.05 and 1 / 3 <= vote["run_target_error"] < 0.4
    assert report.verdict is Verdict.PASS
    # the looks of one run's validation: the vote's r runs do not shorten them
    assert report.verification.schedule == trial_schedule("auto", 64, 11)
    with pytest.raises(InputError, match="n1"):
        validate(query, n1=checked.runs - 1, n2=10**6, fallback=False)
