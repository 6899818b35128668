"""How much the current constants change plan sizes against an earlier constants file.

    git show <commit>:planner/data/constants.json > /tmp/before.json
    python benchmarks/plan_size_change.py /tmp/before.json --queries 300 --seed 3

Random queries log-uniform inside the box every earlier grid covered (k ∈ [16, 4096],
α ∈ [0.05, 0.5], ε_strong ∈ [0.25, 1], ε_weak/ε_strong ∈ [0.25, 1], δ ∈ [1e-9, 1e-4]),
at β = 1/3 and β = 0.1: per setting, the median of total users now ÷ before.

The earlier plans are the paper's split (the default before 2026-11-27); today's are the
default, the fewest users in all. ``--exact N`` also runs ``planner plan --exact`` (its
defaults: 1000 trials per family, seed 0) on the first N queries of each setting and β:
the smallest plan by simulation at the default's tester point, with no margin. Its ratio
to the earlier plan is how far a calibration with no slack at all could shrink that plan;
default ÷ exact is what today's calibration costs.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
from dataclasses import replace
from pathlib import Path

import numpy as np

from planner.constants import parse_constant_table
from planner.exact import exact_plan
from planner.formulas.settings import ALL_SETTINGS, Model
from planner.inputs import Query
from planner.plan import Split, plan


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("before", help="an earlier constants.json")
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--seed", type=int, default=3)
    parser.add_argument(
        "--exact", type=int, default=0, metavar="N", help="--exact on the first N queries"
    )
    parser.add_argument(
        "--setting",
        action="append",
        choices=[setting.key for setting in ALL_SETTINGS],
        help="only these settings (repeatable; default all)",
    )
    args = parser.parse_args()
    before = parse_constant_table(json.loads(Path(args.before).read_text(encoding="utf-8")))
    rng = np.random.default_rng(args.seed)

    def log_uniform(low: float, high: float) -> float:
        return float(math.exp(rng.uniform(math.log(low), math.log(high))))

    for beta in (1 / 3, 0.1):
        print(f"beta = {beta:.3g}: median (and range) of total users now / before")
        for setting in ALL_SETTINGS:
            # a skipped setting still draws its queries: the others' stay the same
            skipped = bool(args.setting) and setting.key not in args.setting
            ratios, exact_over_before, default_over_exact = [], [], []
            for index in range(args.queries):
                eps_strong = log_uniform(0.25, 1.0)
                eps_weak = eps_strong * log_uniform(0.25, 1.0)
                query = Query(
                    setting,
                    round(log_uniform(16, 4096)),
                    log_uniform(0.05, 0.5),
                    eps_strong,
                    eps_weak,
                    log_uniform(1e-9, 1e-4) if setting.model is Model.SHUFFLE else None,
                    beta,
                )
                if skipped:
                    continue
                made = plan(query)
                now, earlier = made.total_users, plan(query, before, split=Split.PAPER).total_users
                ratios.append(now / earlier)
                if index < args.exact:
                    point = made.tester_point  # searched where the default's tester runs
                    at = (
                        query
                        if point is None
                        else replace(query, eps1=point.eps1, eps2=point.eps2, alpha=point.alpha)
                    )
                    searched = exact_plan(at).plan  # EXACT_TRIALS per family, seed 0
                    if searched is not None:
                        exact_over_before.append(searched.total_users / earlier)
                        default_over_exact.append(now / searched.total_users)
            if skipped:
                continue
            print(f"  {setting.key:16s} {_summary(ratios)}")
            if exact_over_before:
                print(f"    exact / before   {_summary(exact_over_before)}")
                print(f"    default / exact  {_summary(default_over_exact)}")


def _summary(values: list[float]) -> str:
    return f"{statistics.median(values):.3f} [{min(values):.3f}, {max(values):.3f}]"


if __name__ == "__main__":
    main()
