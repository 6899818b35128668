"""Printed plans on a heavy null bin beside a light difference.

p puts mass ``h`` on one bin and spreads the rest evenly; q keeps the heavy bin and moves
mass ±c·p_j between neighbouring light bins (a Paninski pattern on the light part), c
chosen so that TV(p, q) = α exactly. An unweighted ℓ2 statistic's null spread grows with
‖p‖₂, which the heavy bin sets, while the difference sits where p is small: the channels'
statistic missed it at low noise until it took χ² weights (docs/evidence.md, "A curator's
histogram per group: built, then withdrawn", and "Chi-square weights for the channels
statistic"). Since 2026-11-29 the instance family ``heavy-null-light-difference`` (the
mirrored pattern at h = 1/2) is in every calibration and validation; this script keeps the
first pair, at any ``--heavy``. For each query it validates the printed plan on the pair
(``planner validate … --p-file --q-file`` does the same), sequentially, at β = 1/3.

    python benchmarks/heavy_null_pair.py --seed 1

Exit code 1 when some printed plan fails the pair.
"""

from __future__ import annotations

import argparse
import itertools
import sys

import numpy as np

from planner import Query, Setting
from planner.coverage import covered_plan
from planner.validate import validate
from planner.validators.instances import Instance, Kind


def heavy_null_pair(k: int, alpha: float, heavy: float) -> Instance:
    """p: ``heavy`` on bin 0, the rest even; q: the light bins paired, ±c·p_j, TV = α."""
    light = (1.0 - heavy) / (k - 1)
    p = np.full(k, light)
    p[0] = heavy
    paired = (k - 1) // 2 * 2  # light bins 1 … paired moved in pairs; an odd one is kept
    c = 2.0 * alpha / (light * paired)
    if not 0 < c <= 1:
        raise ValueError(f"α = {alpha} needs c = {c:.3g} ∉ (0, 1]: lower α or the heavy mass")
    q = p.copy()
    q[1 : paired + 1 : 2] += c * light
    q[2 : paired + 1 : 2] -= c * light
    instance = Instance(f"heavy-null-{heavy:g}", Kind.FAR, p, q)
    if abs(instance.tv - alpha) > 1e-12 or abs(q.sum() - 1.0) > 1e-12 or q.min() < 0:
        raise AssertionError(f"the pair is not a pmf pair at TV α = {alpha}: {instance.tv}")
    return instance


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--heavy", type=float, default=0.5)
    parser.add_argument("--alpha", type=float, default=0.2)
    parser.add_argument("--k", type=int, nargs="+", default=[128, 1000])
    parser.add_argument("--eps", type=float, nargs="+", default=[1.0, 2.0, 4.0, 6.0, 8.0, 10.0])
    args = parser.parse_args()
    settings = (
        ("local", "private"),
        ("local", "public"),
        ("shuffle", "private"),
        ("central", "private"),
    )
    failed = 0
    for (model, coin), k, eps in itertools.product(settings, args.k, args.eps):
        delta = 1e-6 if model == "shuffle" else None
        query = Query(Setting(model, coin), k, args.alpha, eps, eps, delta=delta)
        printed = covered_plan(query)
        pair = heavy_null_pair(k, args.alpha, args.heavy)
        report = validate(
            query, seed=args.seed, families=["uniform"], extra=[pair], checked_plan=printed
        )
        (outcome,) = [o for o in report.verification.outcomes if o.family == pair.family]
        verdict = outcome.verdict.value if hasattr(outcome.verdict, "value") else outcome.verdict
        failed += verdict == "fail"
        print(
            f"{model}-{coin:7s} k={k:5d} ε={eps:4g}: {printed.protocol:24s} "
            f"{printed.n_users_group1:>11,} a group  error {outcome.error_rate:.3f}  {verdict}",
            flush=True,
        )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
