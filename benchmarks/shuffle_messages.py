"""Shuffle plans with the multi-message protocol, against a curator's histograms.

Over seeded random shuffle queries (``bench_curator_baseline.draw_queries``: k
log-uniform in [16, 4096], α uniform in [0.05, 0.5], ε1 and ε2 each log-uniform in
[0.1, 10]; δ = 10⁻⁶), for each coin:

* the default shuffle plan (which weighs ``shuffle-private+messages`` and, for the public
  coin, its hashed form ``shuffle-public+messages``), the protocol it runs, its coverage
  and its groups' messages per user (the larger of the two);
* the Poisson protocol's own plan (``shuffle-private`` / ``shuffle-public``, no other
  mechanism), as before this protocol;
* the ``central+channels`` plan at (ε1, ε2): the same statistic on a curator's discrete
  Laplace histograms, calibrated the same way (the plan-level twin of the curator
  baseline of ``bench_curator_baseline.py``, which searches a bare tester instead);
* the central plan (pure ε-DP).

Plans only: no simulation. One line per query, then the medians and extremes. Usage::

    python benchmarks/shuffle_messages.py --queries 200 --seed 1
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_curator_baseline import DELTA, draw_queries

from planner.formulas.settings import Coin, Model, Setting
from planner.inputs import Query
from planner.plan import Coverage, plan

CURATOR = Setting(Model.CENTRAL, Coin.PRIVATE, "channels", model2=Model.CENTRAL)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    draws = draw_queries(args.queries, args.seed)
    for coin in (Coin.PRIVATE, Coin.PUBLIC):
        rows = []
        for draw in draws:
            shuffle = Query(
                Setting(Model.SHUFFLE, coin), draw.k, draw.alpha, draw.eps1, draw.eps2, DELTA
            )
            made = plan(shuffle)
            poisson = plan(shuffle, fallback=False)
            curator = plan(Query(CURATOR, draw.k, draw.alpha, draw.eps1, draw.eps2))
            central = plan(
                Query(
                    Setting(Model.CENTRAL, Coin.PRIVATE), draw.k, draw.alpha, draw.eps1, draw.eps2
                )
            )
            messages = max((g.messages_per_user or 1.0) for g in made.groups)
            row = {
                "k": draw.k,
                "alpha": draw.alpha,
                "eps": (draw.eps1, draw.eps2),
                "protocol": made.protocol,
                "covered": made.coverage is Coverage.CALIBRATED,
                "curator_covered": curator.coverage is Coverage.CALIBRATED,
                "to_curator": made.total_users / curator.total_users,
                "to_poisson": made.total_users / poisson.total_users,
                "to_central": made.total_users / central.total_users,
                "messages": messages,
            }
            rows.append(row)
            print(
                f"{coin.value:7s} k={draw.k:5d} α={draw.alpha:.3f} ε=({draw.eps1:.3g}, "
                f"{draw.eps2:.3g}) {made.protocol:26s} {made.total_users:>9,d} "
                f"÷curator {row['to_curator']:.3f} ÷poisson {row['to_poisson']:.3f} "
                f"÷central {row['to_central']:.2f} messages {messages:.1f}"
                + ("" if row["covered"] else " (not covered)"),
                flush=True,
            )
        summarise(coin, rows)


def summarise(coin: Coin, rows: list[dict[str, object]]) -> None:
    def stats(values: list[float]) -> str:
        quartiles = statistics.quantiles(values, n=4)
        return (
            f"median {statistics.median(values):.3f} (quartiles {quartiles[0]:.3f}–"
            f"{quartiles[2]:.3f}), min {min(values):.3f}, max {max(values):.3f}"
        )

    both = [r for r in rows if r["covered"] and r["curator_covered"]]
    runs = [r for r in rows if str(r["protocol"]).endswith("+messages")]
    hashed = sum(r["protocol"] == "shuffle-public+messages" for r in rows)
    print(
        f"\n{coin.value} coin, {len(rows)} queries; multi-message runs at {len(runs)}"
        f" (on a shared hash at {hashed})"
    )
    for name, key, chosen in (
        ("plan ÷ curator plan (both covered)", "to_curator", both),
        ("plan ÷ Poisson protocol's plan", "to_poisson", rows),
        ("plan ÷ central plan", "to_central", rows),
        ("messages per user (larger group)", "messages", rows),
        ("messages per user where multi-message runs", "messages", runs),
    ):
        values = [float(r[key]) for r in chosen]  # type: ignore[arg-type]
        if len(values) >= 2:
            print(f"  {name}: {stats(values)} over {len(values)}")
    print(
        f"  at most 10 messages: {sum(float(r['messages']) <= 10 for r in rows)} of {len(rows)}\n"
    )  # type: ignore[arg-type]


if __name__ == "__main__":
    main()
