"""What every tester offers, and the one dispatcher over the two simulation paths.

A tester runs on real samples (``run``: user values of both groups → randomizers →
shuffler where there is one → analyzer) and simulates many independent executions on
the exact-fast path (``simulate_fast``: sufficient statistics, O(k) per trial).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol

import numpy as np


class SimulationPath(StrEnum):
    USER = "user"
    FAST = "fast"


@dataclass(frozen=True)
class TestResult:
    """One execution of a tester."""

    statistic: float
    """For threshold testers, the statistic divided by its threshold (reject iff > 1); the
    central tester's raw, noise-free Z. A diagnostic only: it is *not* private, and only
    ``reject`` may be released."""
    reject: bool


@dataclass(frozen=True)
class TrialBatch:
    statistics: np.ndarray
    rejects: np.ndarray


class Tester(Protocol):
    def run(
        self, samples1: np.ndarray, samples2: np.ndarray, rng: np.random.Generator
    ) -> TestResult: ...

    def simulate_fast(
        self, p: np.ndarray, q: np.ndarray, n1: int, n2: int, trials: int, rng: np.random.Generator
    ) -> TrialBatch: ...


def draw_samples(pmf: np.ndarray, n_users: int, rng: np.random.Generator) -> np.ndarray:
    """n_users i.i.d. values from pmf (one per user), in a uniformly random order."""
    return rng.choice(pmf.size, size=n_users, p=pmf)


def simulate(
    tester: Tester,
    p: np.ndarray,
    q: np.ndarray,
    n1: int,
    n2: int,
    trials: int,
    rng: np.random.Generator,
    path: SimulationPath = SimulationPath.FAST,
) -> TrialBatch:
    """``trials`` independent executions of the tester on n1 users from p, n2 from q."""
    if path is SimulationPath.FAST:
        return tester.simulate_fast(p, q, n1, n2, trials, rng)
    results = [
        tester.run(draw_samples(p, n1, rng), draw_samples(q, n2, rng), rng) for _ in range(trials)
    ]
    return TrialBatch(
        np.array([r.statistic for r in results]), np.array([r.reject for r in results])
    )


def as_trial_stack(pmf: np.ndarray, trials: int) -> np.ndarray:
    """A (trials, k) view of one pmf, or the given per-trial stack."""
    pmf = np.asarray(pmf, dtype=float)
    return np.broadcast_to(pmf, (trials, pmf.shape[-1])) if pmf.ndim == 1 else pmf
