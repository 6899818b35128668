"""Monte Carlo verification of a tester at given group sizes, over instance families.

Each family gets its own random stream, derived from the run seed and the family's
name, so a report does not depend on which families run or in what order: the same
seed gives the same report. A family's error rate is the rejection rate under the null
or the acceptance rate under the alternative. Its verdict is three-valued
(:class:`planner.validators.stats.Verdict`): ``pass`` when its upper confidence bound is within
the target, ``fail`` when its lower bound is above, else ``inconclusive``. Each bound is
one-sided at (1 − confidence)/(looks · families); a verdict can be wrong on one side only
(the side the family's true error is not on), so every verdict holds jointly at the
confidence over every family and every look of a sequential run.

A majority vote over r runs (:class:`MajorityVoteTester`) is checked through one of its
runs: the runs are independent and equal, so the vote errs with probability
V(p) = P(Binomial(r, p) ≥ (r+1)/2), p one run's error, increasing in p. Each family's run
is simulated at ⌊n/r⌋ users per group and held to p* = the largest p with V(p) ≤ β; its
bounds [lo, hi] on p give [V(lo), V(hi)] on the vote's error with the same confidence.
This costs 1/r of simulating the vote, and p* (about 0.2–0.3) is certified in far fewer
trials than β itself.
"""

from __future__ import annotations

import time
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np

from planner.formulas.repetition import majority_vote_error, majority_vote_run_target
from planner.validators.instances import FAMILIES, Instance, Kind, build
from planner.validators.protocol import SimulationPath, Tester, simulate
from planner.validators.repetition import MajorityVoteTester
from planner.validators.stats import Verdict, clopper_pearson_bounds, trials_to_decide, verdict_of

DEFAULT_CONFIDENCE = 0.95
"""Joint confidence of a verification's verdicts."""
MAX_CELLS_PER_CHUNK = 4_000_000
"""Trials are simulated in chunks of at most this many (trial × bin) cells."""


@dataclass(frozen=True)
class FamilyOutcome:
    family: str
    kind: str
    tv: float | None
    """Exact TV(p, q); None when the family cannot be built at this (k, α)."""
    trials: int
    """Trials run on this family (a sequential run stops a family once it is decided)."""
    errors: int
    ci_low: float
    """Lower confidence bound on the error, simultaneous over families and looks (of a
    vote: on the vote's error, V at the run's bound)."""
    ci_high: float
    """Upper confidence bound on the error, simultaneous over families and looks."""
    mean_statistic: float | None
    verdict: Verdict = Verdict.PASS
    """pass / fail / inconclusive against the target (pass when not applicable)."""
    trials_to_decide: int | None = None
    """Inconclusive only: roughly how many trials in all would decide it (None: unknown)."""
    vote_runs: int = 1
    """A majority vote's runs: ``trials`` and ``errors`` count one run's decisions."""

    @property
    def applicable(self) -> bool:
        return self.tv is not None

    @property
    def run_error_rate(self) -> float:
        """The simulated run's observed error (the tester's own when it is no vote)."""
        return self.errors / self.trials if self.trials else float("nan")

    @property
    def error_rate(self) -> float:
        """The observed error of the tester checked (of a vote: V at the run's error)."""
        rate = self.run_error_rate
        if self.vote_runs == 1 or not self.trials:
            return rate
        return majority_vote_error(self.vote_runs, rate)

    def passes(self, target: float) -> bool:
        """Certified within ``target`` (the verdict's target)."""
        return (not self.applicable) or self.ci_high <= target


@dataclass(frozen=True)
class Verification:
    n1: int
    n2: int
    trials: int
    """The most trials any family ran."""
    seed: int
    path: SimulationPath
    target: float
    outcomes: tuple[FamilyOutcome, ...]
    elapsed_seconds: float
    schedule: tuple[int, ...] = ()
    """Cumulative trials per family at each look (one look: a fixed trial count)."""
    confidence: float = DEFAULT_CONFIDENCE
    """Joint confidence of every verdict (over families and every look; of each side's
    bounds; both sides of every interval at once: 1 − 2(1 − confidence))."""
    vote_runs: int = 1
    """A majority vote's runs (checked through one run; ``n1``, ``n2`` are the vote's)."""

    @property
    def run_target(self) -> float:
        """The error one run is held to: ``target`` itself, or p* for a vote."""
        if self.vote_runs == 1:
            return self.target
        return majority_vote_run_target(self.vote_runs, self.target)

    @property
    def verdict(self) -> Verdict:
        """fail if any family fails; pass if every family passes; else inconclusive."""
        verdicts = [o.verdict for o in self.outcomes if o.applicable]
        if Verdict.FAIL in verdicts:
            return Verdict.FAIL
        if all(v is Verdict.PASS for v in verdicts):
            return Verdict.PASS
        return Verdict.INCONCLUSIVE

    @property
    def passed(self) -> bool:
        return self.verdict is Verdict.PASS

    @property
    def worst_error_rate(self) -> float:
        return max(o.error_rate for o in self.outcomes if o.applicable)

    @property
    def total_trials(self) -> int:
        return sum(o.trials for o in self.outcomes)


def family_rng(seed: int, family: str) -> np.random.Generator:
    """The family's own stream: SeedSequence(seed, spawn_key = crc32(name))."""
    return np.random.default_rng(
        np.random.SeedSequence(seed, spawn_key=(zlib.crc32(family.encode("utf-8")),))
    )


def count_errors(
    tester: Tester,
    instance: Instance,
    n1: int,
    n2: int,
    trials: int,
    rng: np.random.Generator,
    path: SimulationPath,
) -> tuple[int, float]:
    """(errors, mean statistic) over ``trials`` executions, simulated in chunks."""
    chunk = max(1, MAX_CELLS_PER_CHUNK // max(instance.p.size, 1))
    if path is SimulationPath.USER:
        chunk = trials
    errors, statistic_sum, done = 0, 0.0, 0
    while done < trials:
        size = min(chunk, trials - done)
        batch = simulate(tester, instance.p, instance.q, n1, n2, size, rng, path)
        rejects = int(np.count_nonzero(batch.rejects))
        errors += rejects if instance.kind is Kind.NULL else size - rejects
        statistic_sum += float(np.sum(batch.statistics))
        done += size
    return errors, statistic_sum / trials


def padded(instance: Instance | None, domain: int) -> Instance | None:
    """``instance`` on ``domain`` ≥ its k bins: the bins it adds have probability 0."""
    if instance is None:
        return None
    extra = domain - instance.p.size
    if extra < 0:
        raise ValueError(f"a domain of {domain} bins cannot hold an instance of {instance.p.size}")
    return replace(
        instance,
        p=np.concatenate([instance.p, np.zeros(extra)]),
        q=np.concatenate([instance.q, np.zeros(extra)]),
    )


def verify(
    tester: Tester,
    k: int,
    alpha: float,
    n1: int,
    n2: int,
    *,
    trials: int | Sequence[int],
    seed: int,
    target: float,
    confidence: float = DEFAULT_CONFIDENCE,
    path: SimulationPath = SimulationPath.FAST,
    families: Sequence[str] | None = None,
    extra: Sequence[Instance] = (),
    stop_early: bool = False,
    progress: Callable[[str], None] | None = None,
    domain: int | None = None,
) -> Verification:
    """Error rates of ``tester`` with n1, n2 users on every family (and extra instances).

    ``domain``: the tester's k when it is larger than the instances' ``k`` (a plan's tester
    on a larger domain): each instance's p and q get bins of probability 0 up to it, which
    changes neither their total variation nor what a user of the smaller domain holds.

    ``trials`` is a trial count (one look) or a schedule of cumulative counts (looks).
    At each look every undecided family runs up to the look's count, and gets exact
    Clopper–Pearson bounds at one-sided level ``(1 − confidence)/(looks · families)``:
    a union bound over families, looks and the two sides, so that every verdict holds
    jointly at ``confidence`` however early the run stops. A family stops once decided;
    the run stops at the first ``fail`` or when every family is decided.

    With ``stop_early`` the run ends at the first family whose observed error exceeds
    the target (a calibration search needs only that); the report then lists fewer
    families. A :class:`MajorityVoteTester` is checked through one run (module docstring).
    """
    start = time.perf_counter()
    schedule = (trials,) if isinstance(trials, int) else tuple(trials)
    if not schedule or list(schedule) != sorted(set(schedule)) or schedule[0] < 1:
        raise ValueError(f"trial schedule must be increasing positive counts: {schedule}")
    names = list(families if families is not None else FAMILIES)
    instances: list[tuple[str, Instance | None]] = [(name, build(name, k, alpha)) for name in names]
    instances += [(instance.family, instance) for instance in extra]
    if domain is not None and domain != k:
        instances = [(name, padded(instance, domain)) for name, instance in instances]
    applicable = sum(instance is not None for _, instance in instances)
    tail = (1 - confidence) / (len(schedule) * max(applicable, 1))
    runs = [_FamilyRun(name, instance, family_rng(seed, name)) for name, instance in instances]
    vote_runs, simulated, run_n1, run_n2 = 1, tester, n1, n2
    if isinstance(tester, MajorityVoteTester):
        vote_runs, simulated = tester.runs, tester.base
        run_n1, run_n2 = tester.run_sizes(n1, n2)
    run_target = majority_vote_run_target(vote_runs, target) if vote_runs > 1 else target
    stopped = False
    for look in schedule:
        for run in runs:
            if run.instance is None or run.verdict is not Verdict.INCONCLUSIVE:
                continue
            run.advance(simulated, run_n1, run_n2, look, path, tail, run_target)
            if progress is not None:
                progress(f"{run.name} ({run.trials} trials)")
            if stop_early and run.errors > run_target * run.trials:
                stopped = True
                break
        decided = [run.verdict for run in runs if run.instance is not None]
        if stopped or Verdict.FAIL in decided or Verdict.INCONCLUSIVE not in decided:
            break
    outcomes = tuple(
        run.outcome(run_target, tail, vote_runs)
        for run in runs
        if not (stopped and run.instance is not None and run.trials == 0)
    )
    return Verification(
        n1,
        n2,
        max((o.trials for o in outcomes), default=0),
        seed,
        path,
        target,
        outcomes,
        time.perf_counter() - start,
        schedule,
        confidence,
        vote_runs,
    )


class _FamilyRun:
    """One family's running count across the looks of a verification."""

    def __init__(self, name: str, instance: Instance | None, rng: np.random.Generator) -> None:
        self.name, self.instance, self.rng = name, instance, rng
        self.trials = self.errors = 0
        self.statistic_sum = 0.0
        self.bounds = (0.0, 1.0)
        self.verdict = Verdict.INCONCLUSIVE

    def advance(
        self,
        tester: Tester,
        n1: int,
        n2: int,
        look: int,
        path: SimulationPath,
        tail: float,
        target: float,
    ) -> None:
        assert self.instance is not None
        more = look - self.trials
        errors, mean = count_errors(tester, self.instance, n1, n2, more, self.rng, path)
        self.trials, self.errors = look, self.errors + errors
        self.statistic_sum += mean * more
        self.bounds = clopper_pearson_bounds(self.errors, self.trials, tail)
        self.verdict = verdict_of(*self.bounds, target)

    def outcome(self, run_target: float, tail: float, vote_runs: int = 1) -> FamilyOutcome:
        """The family's outcome; the verdict is the run's against ``run_target``, which for
        a vote is the vote's against β (V is increasing), and the bounds are V's."""
        if self.instance is None:
            return FamilyOutcome(
                self.name, FAMILIES[self.name][0].value, None, 0, 0, 0.0, 0.0, None
            )
        undecided = self.verdict is Verdict.INCONCLUSIVE
        low, high = self.bounds
        if vote_runs > 1:
            low, high = (majority_vote_error(vote_runs, bound) for bound in (low, high))
        return FamilyOutcome(
            self.name,
            self.instance.kind.value,
            self.instance.tv,
            self.trials,
            self.errors,
            low,
            high,
            self.statistic_sum / self.trials if self.trials else None,
            self.verdict,
            trials_to_decide(self.errors, self.trials, run_target, tail) if undecided else None,
            vote_runs,
        )
