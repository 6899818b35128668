"""Majority vote over r runs on disjoint users (README, β): each user takes part once."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from planner.validators.compression import split_sizes
from planner.validators.protocol import TestResult, TrialBatch


@dataclass(frozen=True)
class MajorityVoteTester:
    """Runs ``base`` on r disjoint user subsets (user i → subset i mod r); majority decides."""

    base: Any
    runs: int

    def run(
        self, samples1: np.ndarray, samples2: np.ndarray, rng: np.random.Generator
    ) -> TestResult:
        votes = [
            self.base.run(samples1[r :: self.runs], samples2[r :: self.runs], rng).reject
            for r in range(self.runs)
        ]
        fraction = float(np.mean(votes))
        return TestResult(fraction, fraction > 0.5)

    def simulate_fast(
        self, p: np.ndarray, q: np.ndarray, n1: int, n2: int, trials: int, rng: np.random.Generator
    ) -> TrialBatch:
        sizes1, sizes2 = split_sizes(n1, self.runs), split_sizes(n2, self.runs)
        votes = sum(
            self.base.simulate_fast(p, q, sizes1[r], sizes2[r], trials, rng).rejects.astype(int)
            for r in range(self.runs)
        )
        fraction = votes / self.runs
        return TrialBatch(fraction, fraction > 0.5)
