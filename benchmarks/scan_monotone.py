"""Scan for plans that grow when the query gets easier: each random query of the accepted
range planned as ``planner plan`` does (``covered_plan``, no simulation), then again with
ε1, ε2 or α raised by 10 % (capped at 20 and 1: above 0.95, every covered region's α top,
the plan runs at a node below; a review found 3.3× there), k lowered by 10 % (at least 2), β
raised by 10 % (below 1/2) and, in the shuffle model, δ raised 10× (at most 10⁻³); a
change that needs more than 1 % more users in all is listed, largest first. Every other
query asks β below 1/3 (log-uniform from 0.01) and a shuffle query's δ is log-uniform in
[10⁻¹⁰, 10⁻⁴].

Run: python benchmarks/scan_monotone.py [--queries 4000] [--seed 1]
"""

from __future__ import annotations

import argparse
import math

import numpy as np

from planner import Query, Setting
from planner.api import covered
from planner.inputs import InputError

SETTINGS = [
    Setting("local", "private"),
    Setting("local", "public"),
    Setting("shuffle", "private"),
    Setting("shuffle", "public"),
    Setting("central", "private"),
    Setting.from_key("local/central-private"),
    Setting.from_key("shuffle/central-private"),
]


def users(query: Query) -> int | None:
    """Users in all of the printed plan, or None where it is refused."""
    try:
        return covered(query, None, 0.0).total_users
    except InputError:
        return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--queries", type=int, default=4000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    found, planned = [], 0
    for index in range(args.queries):
        setting = SETTINGS[index % len(SETTINGS)]
        k = round(math.exp(rng.uniform(math.log(2), math.log(1e5))))
        alpha = math.exp(rng.uniform(math.log(0.01), math.log(1.0)))
        eps1, eps2 = (math.exp(rng.uniform(math.log(0.05), math.log(20))) for _ in range(2))
        log_delta = rng.uniform(math.log(1e-10), math.log(1e-4))
        delta = math.exp(log_delta) if setting.needs_delta else None
        log_beta = rng.uniform(math.log(0.01), math.log(1 / 3))
        beta = math.exp(log_beta) if index % 2 else 1 / 3
        query = Query(setting, k, alpha, eps1, eps2, delta, beta)
        before = users(query)
        if before is None:
            continue
        planned += 1
        changes = [
            ("eps1", Query(setting, k, alpha, min(20.0, eps1 * 1.1), eps2, delta, beta)),
            ("eps2", Query(setting, k, alpha, eps1, min(20.0, eps2 * 1.1), delta, beta)),
            ("alpha", Query(setting, k, min(1.0, alpha * 1.1), eps1, eps2, delta, beta)),
            ("k", Query(setting, max(2, math.floor(k / 1.1)), alpha, eps1, eps2, delta, beta)),
            ("beta", Query(setting, k, alpha, eps1, eps2, delta, min(0.49, beta * 1.1))),
        ]
        if delta is not None:
            changes.append(("delta", Query(setting, k, alpha, eps1, eps2, delta * 10, beta)))
        for name, easier in changes:
            after = users(easier)
            if after is not None and after > before * 1.01:
                found.append(
                    (
                        after / before,
                        setting.key,
                        k,
                        alpha,
                        eps1,
                        eps2,
                        delta,
                        beta,
                        name,
                        before,
                        after,
                    )
                )
    found.sort(reverse=True)
    print(f"{planned} queries planned, {len(found)} changes needing more than 1 % more users")
    for ratio, key, k, alpha, eps1, eps2, delta, beta, name, before, after in found[:25]:
        print(
            f"  ×{ratio:.3f} {key} k={k} α={alpha:.4g} ε=({eps1:.4g}, {eps2:.4g}) "
            f"δ={delta} β={beta:.4g} {name} made easier: {before:,} → {after:,}"
        )


if __name__ == "__main__":
    main()
