"""What the central model's histogram tester (``central+channels``) saves: central plans
with and without it, at random queries over the accepted range.

"Without" is the packaged constants file with that setting's entry left out, so the
central plan weighs only the paper's tester and the local mechanisms, as before it was
built. Reports how often it runs, the ratio of users in all (with ÷ without), and any
query where it needs more (a defect: the plan weighs the old protocols too).

Run: python benchmarks/central_histogram.py --queries 300 --seed 1
"""

from __future__ import annotations

import argparse
import json
import math
import random
import statistics
from importlib import resources

from planner import Query
from planner.constants import default_constants, parse_constant_table
from planner.inputs import InputError
from planner.plan import Coverage, plan

KEY = "central+channels"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    document = json.loads(
        resources.files("planner").joinpath("data/constants.json").read_text("utf-8")
    )
    del document["settings"][KEY]
    without, with_it = parse_constant_table(document), default_constants()
    rng = random.Random(args.seed)

    def log_uniform(low: float, high: float) -> float:
        return math.exp(rng.uniform(math.log(low), math.log(high)))

    rows = []
    for _ in range(args.queries):
        point = {
            "k": round(log_uniform(2, 1e5)),
            "alpha": log_uniform(0.01, 0.95),
            "eps1": log_uniform(0.01, 20),
            "eps2": log_uniform(0.01, 20),
        }
        try:
            query = Query.build("central", "private", **point)
            before, after = plan(query, without), plan(query, with_it)
        except InputError:
            continue
        if Coverage.EXTRAPOLATED in (before.coverage, after.coverage):
            continue
        rows.append((after.total_users / before.total_users, after.protocol, point))
    ratios = [ratio for ratio, _, _ in rows]
    ran = [ratio for ratio, protocol, _ in rows if protocol == KEY]
    print(f"{len(rows)} covered central queries (seed {args.seed}); {KEY} ran at {len(ran)}")
    print(f"with ÷ without: median {statistics.median(ratios):.3f}, min {min(ratios):.3f}")
    if ran:
        print(f"where it ran: median {statistics.median(ran):.3f}, min {min(ran):.3f}")
    worse = [row for row in rows if row[0] > 1]
    print(f"queries where it needs more: {len(worse)}", *worse, sep="\n")
    return 1 if worse else 0


if __name__ == "__main__":
    raise SystemExit(main())
