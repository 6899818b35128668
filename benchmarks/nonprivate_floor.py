"""The non-private floor under the peer's figures: users a group that the χ² closeness test
of Chan, Diakonikolas, Valiant and Valiant needs, with no privacy at all, for power 2/3 at
significance 1/3 on the perturbed-uniform pair (p uniform, q = (1 ± 2α)/k alternating,
TV = α), its threshold the null's simulated 2/3 quantile (an oracle threshold: no
calibration margin, one pair, not 13 families).

Any ε-DP test of that pair is a non-private test, so a peer's figure near this floor
leaves no room below it: `privateAB`'s k-RR test at ε ≥ ln k + 2 (k = 16, α = 0.2: 70 a
group; k = 100, α = 0.1: 733; k = 1,000, α = 0.1: 2,808) against 0.7× of it.

Run: python benchmarks/nonprivate_floor.py --trials 4000 --seed 7
"""

from __future__ import annotations

import argparse

import numpy as np

PEER_POINTS = ((16, 0.2, 70), (100, 0.1, 733), (1000, 0.1, 2808))
"""(k, α, `privateAB` k-RR users a group at ε ≥ ln k + 2), from the trust-order issue."""


def chi_square(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Σ_j ((X_j − Y_j)² − X_j − Y_j)/(X_j + Y_j) over the bins seen, per trial (row)."""
    seen = x + y
    terms = ((x - y) ** 2 - seen) / np.maximum(seen, 1)
    return np.where(seen > 0, terms, 0.0).sum(axis=-1)


def power(k: int, alpha: float, n: int, trials: int, rng: np.random.Generator) -> float:
    """The test's power at n a group, its threshold the null's 2/3 quantile."""
    p = np.full(k, 1 / k)
    signs = np.where(np.arange(k) % 2 == 0, 1.0, -1.0)
    q = (1 + 2 * alpha * signs) / k
    q /= q.sum()
    null = chi_square(rng.multinomial(n, p, trials), rng.multinomial(n, p, trials))
    far = chi_square(rng.multinomial(n, p, trials), rng.multinomial(n, q, trials))
    return float(np.mean(far > np.quantile(null, 2 / 3)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--trials", type=int, default=4000)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    for k, alpha, peer in PEER_POINTS:
        low, high = 2, 4 * peer
        while high - low > max(1, low // 50):  # bisection to 2 %
            middle = (low + high) // 2
            if power(k, alpha, middle, args.trials, rng) >= 2 / 3:
                high = middle
            else:
                low = middle
        print(
            f"k = {k}, α = {alpha}: non-private χ² needs {high:,} a group; privateAB's "
            f"k-RR {peer:,}; 0.7× of it {0.7 * peer:,.0f}"
        )


if __name__ == "__main__":
    main()
