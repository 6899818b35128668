"""The default split (fewest users in all) against the paper's split, on random queries.

    python benchmarks/split_change.py --queries 300 --seed 3

Per setting and β, over random queries inside the calibration box (k ∈ [16, 4096],
α ∈ [0.05, 0.5], ε_strong ∈ [0.25, 1], ε_weak/ε_strong ∈ [0.25, 1], δ ∈ [1e-9, 1e-4], the
draws of ``plan_size_change.py``) and over the accepted range (k ∈ [16, 10^5],
α ∈ [0.01, 1], ε ∈ [0.05, 20] each): how many default plans differ from the paper's
split, and the median and smallest ratio of their users in all. ``--before FILE`` also
gives the median of the default's total over an earlier constants file's paper split
(the box only).
"""

from __future__ import annotations

import argparse
import functools
import json
import math
import statistics
from pathlib import Path

import numpy as np

from planner.constants import parse_constant_table
from planner.formulas.settings import ALL_SETTINGS, Model
from planner.inputs import Query
from planner.plan import Split, plan


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--seed", type=int, default=3)
    parser.add_argument("--before", type=Path, help="an earlier constants.json")
    args = parser.parse_args()
    before = (
        parse_constant_table(json.loads(args.before.read_text(encoding="utf-8")))
        if args.before
        else None
    )
    for region in ("box", "accepted"):
        rng = np.random.default_rng(args.seed)
        log_uniform = functools.partial(_log_uniform, rng)
        for beta in (1 / 3, 0.1):
            print(f"{region}, beta = {beta:.3g}: default / paper's split (users in all)")
            for setting in ALL_SETTINGS:
                ratios, over_before, changed = [], [], 0
                for _ in range(args.queries):
                    if region == "box":
                        eps_strong = log_uniform(0.25, 1.0)
                        eps1, eps2 = eps_strong, eps_strong * log_uniform(0.25, 1.0)
                        k, alpha = round(log_uniform(16, 4096)), log_uniform(0.05, 0.5)
                    else:
                        eps1, eps2 = log_uniform(0.05, 20), log_uniform(0.05, 20)
                        k, alpha = round(log_uniform(16, 1e5)), log_uniform(0.01, 1.0)
                    shuffle = setting.model is Model.SHUFFLE
                    delta = log_uniform(1e-9, 1e-4) if shuffle else None
                    query = Query(setting, k, alpha, eps1, eps2, delta, beta)
                    fewest, paper = plan(query), plan(query, split=Split.PAPER)
                    ratios.append(fewest.total_users / paper.total_users)
                    changed += fewest.total_users < paper.total_users
                    if before is not None and region == "box":
                        earlier = plan(query, before, split=Split.PAPER).total_users
                        over_before.append(fewest.total_users / earlier)
                line = (
                    f"  {setting.key:16s} changed {changed:4d} of {args.queries}; "
                    f"median {statistics.median(ratios):.3f}, smallest {min(ratios):.3g}"
                )
                if over_before:
                    line += f"; default / earlier paper split: {statistics.median(over_before):.3f}"
                print(line, flush=True)


def _log_uniform(rng: np.random.Generator, low: float, high: float) -> float:
    return float(math.exp(rng.uniform(math.log(low), math.log(high))))


if __name__ == "__main__":
    main()
