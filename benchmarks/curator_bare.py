"""Shuffle plans against the bare curator baseline: the least users a curator's noisy
histograms need, searched per query (issue #40's acceptance measure).

The baseline is the statistic the shuffle plans run, on a trusted curator's histograms
with per-bin discrete Laplace noise at the replace-one sensitivity 2 (``central+channels``,
each group at its own ε), its size found by simulation at each query with no calibration
slack: ``planner.exact.exact_plan`` (what ``planner plan --exact`` runs), the smallest
multiplier C on the protocol's bound with every one of the 13 instance families' observed
error at most the operating point 0.296 (β = 1/3), 1,000 trials a family and check,
common random numbers across C. A histogram-based shuffle protocol cannot beat it: a
shuffler can at best deliver such a histogram.

Per query (``bench_curator_baseline.draw_queries``: k log-uniform in [16, 4096], α uniform
in [0.05, 0.5], ε1, ε2 log-uniform in [0.1, 10]; δ = 10⁻⁶; every ``--stride``-th of
``--queries`` draws) it prints the shuffle plan of each coin, the calibrated curator plan,
the bare one and the ratios; then the medians and extremes of

* shuffle plan ÷ bare curator (the acceptance: at most 1.5, median at most 1.3);
* calibrated curator plan ÷ bare curator (the planner's slack: grid, margin);
* shuffle plan ÷ calibrated curator plan (the protocol's price, θ = 0.8);
* with ``--exact-shuffle``, the private-coin shuffle plan's own exact search (``planner
  plan --exact``: the protocol it runs, searched the same way at its tester point) ÷ bare
  curator: the protocol's price without the calibration's slack.

Usage (about 40 CPU-minutes at the defaults, twice that with ``--exact-shuffle``)::

    python benchmarks/curator_bare.py --queries 200 --stride 5 --seed 1 --workers 2
"""

from __future__ import annotations

import argparse
import statistics
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_curator_baseline import DELTA, Draw, draw_queries

from planner.api import plan_answer
from planner.exact import exact_plan
from planner.formulas.settings import Coin, Model, Setting
from planner.inputs import Query
from planner.plan import plan

CURATOR = Setting(Model.CENTRAL, Coin.PRIVATE, "channels", model2=Model.CENTRAL)
TRIALS = 1000


def measure(arguments: tuple[int, Draw, int, bool]) -> dict[str, Any]:
    """One query's plans and its bare curator baseline (a top-level function: picklable)."""
    index, draw, seed, exact_shuffle = arguments
    row: dict[str, Any] = {"index": index, "k": draw.k, "alpha": draw.alpha}
    row["eps"] = (draw.eps1, draw.eps2)
    for coin in (Coin.PRIVATE, Coin.PUBLIC):
        shuffle = Query(
            Setting(Model.SHUFFLE, coin), draw.k, draw.alpha, draw.eps1, draw.eps2, DELTA
        )
        made = plan(shuffle)
        row[f"{coin.value}_protocol"] = made.protocol
        row[f"{coin.value}_total"] = made.total_users
    curator = Query(CURATOR, draw.k, draw.alpha, draw.eps1, draw.eps2)
    row["curator_total"] = plan(curator).total_users
    bare = exact_plan(curator, trials=TRIALS, seed=seed, private_coin_too=False)
    row["bare_total"] = None if bare.plan is None else bare.plan.total_users
    row["bare_worst"] = None if bare.worst is None else str(bare.worst)
    if exact_shuffle:
        answer = plan_answer(
            model="shuffle",
            k=draw.k,
            alpha=draw.alpha,
            eps1=draw.eps1,
            eps2=draw.eps2,
            delta=DELTA,
            exact=True,
            trials=TRIALS,
            seed=seed,
        )
        found = answer.exact.plan if answer.exact is not None else None
        row["exact_protocol"] = None if found is None else found.protocol
        row["exact_total"] = None if found is None else found.total_users
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--stride", type=int, default=5)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--exact-shuffle", action="store_true")
    args = parser.parse_args()
    draws = draw_queries(args.queries, args.seed)
    tasks = [
        (i, draws[i], args.seed * 100_003 + i, args.exact_shuffle)
        for i in range(0, len(draws), args.stride)
    ]
    rows: list[dict[str, Any]] = []
    with ProcessPoolExecutor(args.workers) as pool:
        for row in pool.map(measure, tasks):
            rows.append(row)
            bare = row["bare_total"]
            ratios = (
                "bare search found no C"
                if bare is None
                else (
                    f"private ÷ bare {row['private_total'] / bare:.3f}, public ÷ bare "
                    f"{row['public_total'] / bare:.3f}, curator plan ÷ bare "
                    f"{row['curator_total'] / bare:.3f}"
                )
            )
            print(
                f"#{row['index']:3d} k={row['k']:5d} α={row['alpha']:.3f} ε=({row['eps'][0]:.3g}, "
                f"{row['eps'][1]:.3g}) {row['private_protocol']} {row['private_total']:,} / "
                f"{row['public_protocol']} {row['public_total']:,}; curator plan "
                f"{row['curator_total']:,}, bare {bare if bare is None else f'{bare:,}'}: {ratios}"
                + (
                    f"; exact shuffle {row['exact_protocol']} {row['exact_total']:,}"
                    if row.get("exact_total")
                    else ""
                ),
                flush=True,
            )
    found = [row for row in rows if row["bare_total"]]
    print(f"\n{len(found)} of {len(rows)} queries with a bare curator size")
    for name, numerator, denominator in (
        ("private-coin shuffle plan ÷ bare curator", "private_total", "bare_total"),
        ("public-coin shuffle plan ÷ bare curator", "public_total", "bare_total"),
        ("calibrated curator plan ÷ bare curator (slack)", "curator_total", "bare_total"),
        ("private-coin shuffle plan ÷ calibrated curator plan", "private_total", "curator_total"),
        ("exact private-coin shuffle search ÷ bare curator", "exact_total", "bare_total"),
    ):
        values = [
            row[numerator] / row[denominator] for row in found if row.get(numerator) is not None
        ]
        if len(values) >= 2:
            quartiles = statistics.quantiles(values, n=4)
            print(
                f"  {name}: median {statistics.median(values):.3f} (quartiles "
                f"{quartiles[0]:.3f}–{quartiles[2]:.3f}), min {min(values):.3f}, "
                f"max {max(values):.3f}"
            )


if __name__ == "__main__":
    main()
