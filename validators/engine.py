"""Monte Carlo verification of a tester at given group sizes, over instance families.

Each family gets its own random stream, derived from the run seed and the family's
name, so a report does not depend on which families run or in what order: the same
seed gives the same report. A family's error rate is the rejection rate under the null
or the acceptance rate under the alternative; it passes when the upper end of its 95 %
Wilson interval is at most the target.
"""

from __future__ import annotations

import time
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from validators.instances import FAMILIES, Instance, Kind, build
from validators.protocol import SimulationPath, Tester, simulate
from validators.stats import wilson_interval

MAX_CELLS_PER_CHUNK = 4_000_000
"""Trials are simulated in chunks of at most this many (trial × bin) cells."""


@dataclass(frozen=True)
class FamilyOutcome:
    family: str
    kind: str
    tv: float | None
    """Exact TV(p, q); None when the family cannot be built at this (k, α)."""
    trials: int
    errors: int
    ci_low: float
    ci_high: float
    mean_statistic: float | None

    @property
    def applicable(self) -> bool:
        return self.tv is not None

    @property
    def error_rate(self) -> float:
        return self.errors / self.trials if self.trials else float("nan")

    def passes(self, target: float) -> bool:
        return (not self.applicable) or self.ci_high <= target


@dataclass(frozen=True)
class Verification:
    n1: int
    n2: int
    trials: int
    seed: int
    path: SimulationPath
    target: float
    outcomes: tuple[FamilyOutcome, ...]
    elapsed_seconds: float

    @property
    def passed(self) -> bool:
        return all(outcome.passes(self.target) for outcome in self.outcomes)

    @property
    def worst_error_rate(self) -> float:
        return max(o.error_rate for o in self.outcomes if o.applicable)


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


def verify(
    tester: Tester,
    k: int,
    alpha: float,
    n1: int,
    n2: int,
    *,
    trials: int,
    seed: int,
    target: float,
    path: SimulationPath = SimulationPath.FAST,
    families: Sequence[str] | None = None,
    extra: Sequence[Instance] = (),
    stop_early: bool = False,
    progress: Callable[[str], None] | None = None,
) -> Verification:
    """Error rates of ``tester`` with n1, n2 users on every family (and extra instances).

    With ``stop_early`` the run ends at the first family whose observed error exceeds
    the target (a search only needs pass/fail); the report then lists fewer families.
    """
    start = time.perf_counter()
    outcomes = []
    names = list(families if families is not None else FAMILIES)
    instances: list[tuple[str, Instance | None]] = [(name, build(name, k, alpha)) for name in names]
    instances += [(instance.family, instance) for instance in extra]
    for name, instance in instances:
        if instance is None:
            outcomes.append(
                FamilyOutcome(name, FAMILIES[name][0].value, None, 0, 0, 0.0, 0.0, None)
            )
        else:
            errors, mean = count_errors(
                tester, instance, n1, n2, trials, family_rng(seed, name), path
            )
            low, high = wilson_interval(errors, trials)
            outcomes.append(
                FamilyOutcome(
                    name, instance.kind.value, instance.tv, trials, errors, low, high, mean
                )
            )
        if progress is not None:
            progress(name)
        if stop_early and outcomes[-1].applicable and outcomes[-1].error_rate > target:
            break
    return Verification(
        n1, n2, trials, seed, path, target, tuple(outcomes), time.perf_counter() - start
    )
