"""What a mixed pair saves: group 1 reports locally, group 2 sits with a trusted curator.

For each query (k, α, ε1 of the local group, ε2 of the curator's group) this finds by
simulation the fewest users in all with which each of two testers keeps every family's
observed error at or below β = 1/3:

* **mixed**: group 1 through its best local randomizer, group 2 through the curator's
  discrete-Laplace histogram (``validators/mixed_channels.py``);
* **both local**: both groups through their best local randomizers
  (``ChannelsTester``: what a planner must do today, both groups under the less trusted
  model).

Both read the same studentized statistic with the same κ, so the ratio isolates the
curator's channel. The search: for each split n2/n1 in a small set, the least total by
bisection on a log scale (``--trials`` trials per family per look, seeded); the best split
is kept. The planner's own covered plan for the both-local query is printed beside them
(it carries calibrated margins the bare search does not).

    python benchmarks/bench_mixed_trust.py --trials 300 --seed 1

Not a plan: bare searches without calibrated margins (``planner plan --model
local,central`` prints the plan).
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

from planner import Query, Setting
from planner.api import covered
from planner.validators.engine import verify
from planner.validators.local_channels import ChannelsTester
from planner.validators.mixed_channels import MixedChannelsTester

FAMILIES = ("uniform", "zipf-1", "one-heavy", "paninski", "paninski-symmetric", "perturbed-zipf")
QUERIES = (
    (100, 0.2, 1.0, 1.0),
    (100, 0.2, 2.0, 0.5),
    (1000, 0.1, 1.0, 1.0),
    (1000, 0.1, 2.0, 1.0),
    (1000, 0.2, 0.5, 0.5),
)
SPLITS = (0.25, 0.5, 1.0)
"""n2/n1 tried (the curator's group needs fewer: its channel is the quieter)."""


def meets(tester: object, k: int, alpha: float, n1: int, n2: int, trials: int, seed: int) -> bool:
    """Every family's observed error at or below 1/3."""
    result = verify(
        tester,  # type: ignore[arg-type]
        k,
        alpha,
        n1,
        n2,
        trials=trials,
        seed=seed,
        target=1 / 3,
        families=FAMILIES,
        stop_early=True,
    )
    return all(outcome.error_rate <= 1 / 3 for outcome in result.outcomes) and len(
        result.outcomes
    ) == len(FAMILIES)


def least_total(tester: object, k: int, alpha: float, split: float, trials: int, seed: int) -> int:
    """The least n1 + n2 (to 2 %) at n2 = split·n1 meeting every family."""
    low, high = 8.0, 16.0
    while not meets(tester, k, alpha, *sizes(high, split), trials, seed):
        low, high = high, high * 2
        if high > 1e9:
            return -1
    while high / low > 1.02:
        middle = (low * high) ** 0.5
        if meets(tester, k, alpha, *sizes(middle, split), trials, seed):
            high = middle
        else:
            low = middle
    return sum(sizes(high, split))


def sizes(total: float, split: float) -> tuple[int, int]:
    n1 = max(2, round(total / (1 + split)))
    return n1, max(2, round(total - n1))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--trials", type=int, default=300)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--output", default="mixed-trust.json")
    args = parser.parse_args()
    rows = []
    start = time.perf_counter()
    for k, alpha, eps_local, eps_curator in QUERIES:
        mixed = MixedChannelsTester(
            k, alpha, eps_local, eps_curator, model1="local", model2="central"
        )
        local = ChannelsTester(k, alpha, eps_local, eps_curator)
        best_mixed = min(
            t
            for t in (least_total(mixed, k, alpha, s, args.trials, args.seed) for s in SPLITS)
            if t > 0
        )
        best_local = min(
            t
            for t in (
                least_total(local, k, alpha, s, args.trials, args.seed) for s in (*SPLITS, 2.0)
            )
            if t > 0
        )
        planned = covered(
            Query(Setting("local", "private"), k, alpha, eps_local, eps_curator), None, 0.0
        ).total_users
        row = {
            "k": k,
            "alpha": alpha,
            "eps_local": eps_local,
            "eps_curator": eps_curator,
            "mixed_total": best_mixed,
            "both_local_total": best_local,
            "saving": best_local / best_mixed,
            "both_local_plan": planned,
        }
        rows.append(row)
        print(
            f"k={k:5d} α={alpha:g} ε=({eps_local:g} local, {eps_curator:g} curator): mixed "
            f"{best_mixed:,}, both local {best_local:,} (×{best_local / best_mixed:.2f}); "
            f"the both-local plan {planned:,}",
            flush=True,
        )
    savings = sorted(row["saving"] for row in rows)
    summary = {
        "command": "python benchmarks/bench_mixed_trust.py "
        f"--trials {args.trials} --seed {args.seed}",
        "seconds": round(time.perf_counter() - start, 1),
        "median_saving": float(np.median(savings)),
        "rows": rows,
    }
    with open(args.output, "w", encoding="utf-8") as handle:
        json.dump(summary, handle, indent=2)
    print(f"median saving ×{summary['median_saving']:.2f}, {summary['seconds']:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
