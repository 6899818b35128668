"""Hold-outs for one protocol on its own: random points of its covered region, each planned
with that protocol alone (no other mechanism may replace it) and validated sequentially on
the instance families (all of them, or those named by ``--families``).

Where ``holdout_coverage.py`` checks what ``planner plan`` prints (whichever protocol a
query runs), this checks a mechanism that plans choose only now and then, e.g.
``local-private+channels``, at β = 1/3 (or ``--beta``).

Run: python benchmarks/holdout_protocol.py --setting local-private+channels --queries 40
     --seed 71 --output /tmp/holdout-protocol.jsonl [--k-range 4096 100000]
     [--alpha-range 0.01 0.03] [--eps-range 4 20] [--ratio-range 0.5 1]
     [--families heavy-null-light-difference]
"""

from __future__ import annotations

import argparse
import json
import math
from collections import Counter
from pathlib import Path

import numpy as np

from planner import Query
from planner.api import PROTOCOL_KEYS
from planner.constants import default_constants
from planner.formulas.settings import Setting
from planner.inputs import EPS_MIN
from planner.limits import SIMULATION_N_MAX
from planner.plan import plan
from planner.validate import validate


def log_uniform(rng: np.random.Generator, low: float, high: float) -> float:
    return float(math.exp(rng.uniform(math.log(low), math.log(high))))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--setting", choices=PROTOCOL_KEYS, required=True)
    parser.add_argument("--queries", type=int, default=40)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--delta", type=float, default=1e-6, help="for (ε, δ) protocols")
    parser.add_argument("--beta", type=float, default=1 / 3, help="the plans' error target")
    parser.add_argument("--output", type=Path, default=Path("holdout-protocol.jsonl"))
    parser.add_argument(
        "--families", nargs="+", default=None, help="validate on these families only"
    )
    for option, what in (
        ("--k-range", "draw k from this part of the covered range (e.g. above the grid's top k)"),
        ("--alpha-range", "draw α from this part of the covered range"),
        ("--eps-range", "draw the larger ε from this part of the covered range"),
        (
            "--ratio-range",
            "draw ε_weak/ε_strong from this range (default: the covered one, from 1e-3)",
        ),
    ):
        parser.add_argument(
            option, type=float, nargs=2, default=None, metavar=("LOW", "HIGH"), help=what
        )
    parser.add_argument(
        "--strong-group",
        choices=("random", "1", "2"),
        default="random",
        help="the named group with the larger ε (a mixed protocol's orientation)",
    )
    args = parser.parse_args()
    setting = Setting.from_key(args.setting)
    covered = default_constants().for_setting(args.setting).covered
    rng = np.random.default_rng(args.seed)
    records = []
    with args.output.open("a") as out:
        for index in range(args.queries):
            k = round(log_uniform(rng, *(args.k_range or covered["k"])))
            alpha = log_uniform(rng, *(args.alpha_range or covered["alpha"]))
            eps_strong = log_uniform(rng, *(args.eps_range or covered["eps_strong"]))
            low_ratio = max(covered.get("eps_ratio", (1e-3, 1.0))[0], 1e-3)
            eps_weak = eps_strong * log_uniform(rng, *(args.ratio_range or (low_ratio, 1.0)))
            eps_weak = max(eps_weak, EPS_MIN)  # a small ε_strong times a small ratio
            first = rng.random() < 0.5  # drawn whatever the option: the same queries' ε
            first = first if args.strong_group == "random" else args.strong_group == "1"
            eps1, eps2 = (eps_strong, eps_weak) if first else (eps_weak, eps_strong)
            delta = args.delta if setting.model.needs_delta else None
            query = Query(setting, k, alpha, eps1, eps2, delta, args.beta)
            made = plan(query, fallback=False)
            record = {
                "index": index,
                "k": k,
                "alpha": alpha,
                "eps1": eps1,
                "eps2": eps2,
                "coverage": made.coverage.value,
                "n1": made.n_users_group1,
                "n2": made.n_users_group2,
                "mechanism": made.mechanism,
            }
            too_many = max(made.n_users_group1, made.n_users_group2) > SIMULATION_N_MAX
            if made.coverage.value == "calibrated" and too_many:
                record.update(verdict="beyond the simulation's users")
            elif made.coverage.value == "calibrated":
                report = validate(
                    query,
                    seed=1000 + index,
                    checked_plan=made,
                    fallback=False,
                    families=args.families,
                )
                outcomes = [o for o in report.verification.outcomes if o.applicable]
                if outcomes:
                    worst = max(outcomes, key=lambda o: o.error_rate)
                    record.update(
                        verdict=report.verification.verdict.value,
                        worst_family=worst.family,
                        worst_error=worst.error_rate,
                        worst_bounds=[worst.ci_low, worst.ci_high],
                    )
                else:  # the named families are not built at this (k, α)
                    record.update(verdict="no family applies")
            out.write(json.dumps(record) + "\n")
            out.flush()
            records.append(record)
            print(
                index,
                record.get("verdict", record["coverage"]),
                k,
                f"{alpha:.3g}",
                f"{eps1:.3g}",
                f"{eps2:.3g}",
                record["n1"],
                record["n2"],
                flush=True,
            )
    print(json.dumps(Counter(r.get("verdict", r["coverage"]) for r in records)))


if __name__ == "__main__":
    main()
