"""Does relaxing a group's ε ever cost users? Steps where the default plan's total grows.

For each setting, at every (k, α, ε2) of a small grid, ε1 runs over a geometric ladder
from 0.1 to 20 (``--steps`` values); a step counts when both plans are covered
(calibrated), and rises when the second needs more users in all. Prints, per setting, the
rising steps and the largest rises with where they happen.

    python benchmarks/monotone_in_eps.py                      # ε2 ∈ {0.1, 0.5, 1}
    python benchmarks/monotone_in_eps.py --eps2 3,5,10        # both groups at low privacy
"""

from __future__ import annotations

import argparse
import itertools
import time

import numpy as np

from planner.formulas.settings import Setting
from planner.inputs import InputError, Query
from planner.plan import Coverage, plan

SETTINGS = ("local-private", "local-public", "shuffle-private", "shuffle-public", "central")


def rises(key: str, ks: list[int], alphas: list[float], eps2s: list[float], steps: int):
    eps1s = np.geomspace(0.1, 20.0, steps)
    found, compared = [], 0
    for k, alpha, eps2 in itertools.product(ks, alphas, eps2s):
        delta = 1e-8 if key.startswith("shuffle") else None
        previous = None
        for eps1 in eps1s:
            query = Query(Setting.from_key(key), k, alpha, float(eps1), eps2, delta)
            try:
                made = plan(query)
            except InputError:
                previous = None
                continue
            if made.coverage is not Coverage.CALIBRATED:
                previous = None
                continue
            if previous is not None:
                compared += 1
                if made.total_users > previous[1]:
                    ratio = made.total_users / previous[1]
                    found.append((ratio, k, alpha, eps2, previous[0], float(eps1)))
            previous = (float(eps1), made.total_users)
    return sorted(found, reverse=True), compared


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--k", default="16,200,1000,4096")
    parser.add_argument("--alpha", default="0.05,0.1,0.3")
    parser.add_argument("--eps2", default="0.1,0.5,1")
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--settings", default=",".join(SETTINGS))
    args = parser.parse_args()
    ks = [int(v) for v in args.k.split(",")]
    alphas = [float(v) for v in args.alpha.split(",")]
    eps2s = [float(v) for v in args.eps2.split(",")]
    for key in args.settings.split(","):
        start = time.perf_counter()
        found, compared = rises(key, ks, alphas, eps2s, args.steps)
        worst = ", ".join(
            f"{ratio - 1:.2%} (k = {k}, α = {alpha}, ε2 = {eps2}, ε1 {a:.3g} → {b:.3g})"
            for ratio, k, alpha, eps2, a, b in found[:3]
        )
        print(
            f"{key}: {len(found)} of {compared} steps rose"
            + (f"; largest {worst}" if found else "")
            + f" [{time.perf_counter() - start:.0f} s]",
            flush=True,
        )


if __name__ == "__main__":
    main()
