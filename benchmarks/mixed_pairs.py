"""What mixed pairs save, and the trust order, at random queries over the accepted range.

For ``--queries`` random queries (each of the six ordered model pairs, both coins; k from
2 to 10⁵, α from 0.01 to 1, each ε from 0.05 to 20, δ from 10⁻¹⁰ to 10⁻⁴ where a group
is under the shuffle model, β = 1/3) this plans

* the mixed query (``planner.api.covered``, as ``planner plan`` prints it, no simulation
  budget), and
* the plan that puts both groups under the less trusted of the two models,

and reports the saving (less trusted ÷ mixed, in users in all), how often the mixed
protocol ran, the refusals (no covered plan), and any query where the mixed plan needs
more users than the less trusted one (a defect: it may always run that plan).

It also checks the trust order of one-model plans at the same queries: central ≤ shuffle
≤ local in users in all, per coin, where both plans are covered (the shuffle plan only
with δ).

    python benchmarks/mixed_pairs.py --queries 240 --seed 1
"""

from __future__ import annotations

import argparse
import json
import math
import random
import statistics
import time
from typing import Any

from planner import Query
from planner.api import covered
from planner.coverage import NotCoveredError
from planner.formulas.settings import Model, Setting
from planner.plan import mixed_runs

PAIRS = [(first, second) for first in Model for second in Model if first is not second]


def random_query(rng: random.Random) -> Query:
    first, second = rng.choice(PAIRS)
    shuffle = Model.SHUFFLE in (first, second)
    return Query.build(
        f"{first.value},{second.value}",
        rng.choice(("private", "public")),
        round(10 ** rng.uniform(math.log10(2), 5)),
        10 ** rng.uniform(-2, 0),
        10 ** rng.uniform(math.log10(0.05), math.log10(20)),
        10 ** rng.uniform(math.log10(0.05), math.log10(20)),
        10 ** rng.uniform(-10, -4) if shuffle else None,
    )


def users(query: Query) -> tuple[int | None, str]:
    """Users in all of the printed plan (None: refused) and the protocol that ran."""
    try:
        made = covered(query)
    except NotCoveredError:
        return None, ""
    return made.total_users, made.protocol


def one_model(query: Query, model: Model, delta: float | None) -> Query:
    setting = Setting(model, query.setting.coin)
    return Query(setting, query.k, query.alpha, query.eps1, query.eps2, delta)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--queries", type=int, default=240)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--output", default="mixed-pairs.json")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    started = time.perf_counter()
    rows: list[dict[str, Any]] = []
    order_checked, order_broken = 0, []
    for _ in range(args.queries):
        query = random_query(rng)
        mixed, ran = users(query)
        less, _ = users(mixed_runs(query)[0])
        row = {
            "setting": query.setting.key,
            "k": query.k,
            "alpha": query.alpha,
            "eps1": query.eps1,
            "eps2": query.eps2,
            "delta": query.delta,
            "mixed": mixed,
            "ran": ran,
            "less_trusted": less,
        }
        rows.append(row)
        delta = query.delta if query.delta is not None else 1e-6
        totals = {model: users(one_model(query, model, delta))[0] for model in Model}
        for lower, higher in ((Model.LOCAL, Model.SHUFFLE), (Model.SHUFFLE, Model.CENTRAL)):
            if totals[lower] is not None and totals[higher] is not None:
                order_checked += 1
                if totals[higher] > totals[lower]:
                    order_broken.append((query.setting.coin.value, query.k, query.alpha,
                                         query.eps1, query.eps2, delta, higher.value,
                                         totals[higher], lower.value, totals[lower]))  # fmt: skip
    planned = [row for row in rows if row["mixed"] is not None and row["less_trusted"]]
    savings = [row["less_trusted"] / row["mixed"] for row in planned]
    worse = [row for row in planned if row["mixed"] > row["less_trusted"]]
    with_mixed = [row for row in planned if "/" in row["ran"]]
    summary = {
        "command": f"python benchmarks/mixed_pairs.py --queries {args.queries} --seed {args.seed}",
        "seconds": round(time.perf_counter() - started, 1),
        "queries": len(rows),
        "refused": sum(row["mixed"] is None for row in rows),
        "planned": len(planned),
        "mixed_protocol_ran": len(with_mixed),
        "median_saving": statistics.median(savings) if savings else None,
        "median_saving_where_mixed_ran": (
            statistics.median(row["less_trusted"] / row["mixed"] for row in with_mixed)
            if with_mixed
            else None
        ),
        "largest_saving": max(savings, default=None),
        "mixed_above_less_trusted": len(worse),
        "trust_order_pairs_checked": order_checked,
        "trust_order_broken": order_broken,
        "rows": rows,
    }
    with open(args.output, "w", encoding="utf-8") as handle:
        json.dump(summary, handle, indent=2)
    for name, value in summary.items():
        if name not in ("rows", "trust_order_broken"):
            print(f"{name}: {value}")
    print(f"trust order broken: {len(order_broken)}")
    for item in order_broken[:10]:
        print("  ", item)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
