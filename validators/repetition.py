"""Majority vote over r runs on disjoint users (README, β): each user takes part once."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from planner.validators.protocol import TestResult, TrialBatch


@dataclass(frozen=True)
class MajorityVoteTester:
    """Runs ``base`` on r disjoint user subsets of ⌊n/r⌋ users each (user i → subset
    i mod r; the n mod r users left over take no part); the majority decides.

    Equal runs make the vote's error exactly P(Binomial(r, p) ≥ (r+1)/2), p one run's
    error (``planner.formulas.repetition.majority_vote_error``): the runs are independent
    (disjoint users, their own randomness), which lets a validation simulate one run and
    bound the vote from it (``planner.validators.engine.verify``). Plans size a vote as r
    times one run, so nobody is left over there.
    """

    base: Any
    runs: int

    def run_sizes(self, n1: int, n2: int) -> tuple[int, int]:
        """Each run's users per group."""
        return n1 // self.runs, n2 // self.runs

    def run(
        self, samples1: np.ndarray, samples2: np.ndarray, rng: np.random.Generator
    ) -> TestResult:
        used1, used2 = (self.runs * size for size in self.run_sizes(len(samples1), len(samples2)))
        votes = [
            self.base.run(
                samples1[:used1][r :: self.runs], samples2[:used2][r :: self.runs], rng
            ).reject
            for r in range(self.runs)
        ]
        fraction = float(np.mean(votes))
        return TestResult(fraction, fraction > 0.5)

    def simulate_fast(
        self, p: np.ndarray, q: np.ndarray, n1: int, n2: int, trials: int, rng: np.random.Generator
    ) -> TrialBatch:
        size1, size2 = self.run_sizes(n1, n2)
        votes = sum(
            self.base.simulate_fast(p, q, size1, size2, trials, rng).rejects.astype(int)
            for _ in range(self.runs)
        )
        fraction = votes / self.runs
        return TrialBatch(fraction, fraction > 0.5)
