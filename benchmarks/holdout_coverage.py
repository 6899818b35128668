"""Hold-out over the whole accepted range: is every printed plan one a real tester meets?

Draws random queries log-uniformly over every parameter's accepted range (not the
calibration grid): setting, allocation (fewest, paper, cost, fixed-n2), k, α, ε1, ε2, δ, β. Each
query goes through what ``planner plan`` does — calibrated inside the covered region,
simulated outside it within the budget, refused otherwise — and every printed plan
(after its allocation) is checked by a fresh sequential ``planner validate`` on every
built-in family. The promise holds when no verdict is ``fail``. A plan the validator
refuses to simulate (a group above 10^15 users, or more than the 10^9 trial × bin cells a
validation may take, e.g. a majority vote at a large k) is recorded as ``unverifiable``.

    python benchmarks/holdout_coverage.py --queries 200 --seed 1 --workers 2 \\
        --region accepted --output /tmp/holdout.jsonl

One JSON line per query (resumable: queries already in the output are skipped), then a
summary. Each query's randomness derives from (seed, index) alone.
"""

from __future__ import annotations

import argparse
import json
import math
import resource
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

ACCEPTED = {
    "k": (2, 10**12),
    "alpha": (1e-4, 1.0),
    "eps": (1e-4, 20.0),
    "delta": (1e-12, 0.5),
    "beta": (0.01, 0.5),
}
"""``--region accepted``: every input's accepted range (α and β from 1e-4 and 0.01)."""
COVERED = {
    "k": (16, 10**5),
    "alpha": (0.01, 0.95),
    "eps": (0.01, 20.0),
    "delta": (1e-10, 1e-3),
    "beta": (0.01, 0.5),
}
"""``--region covered``: the box the settings' covered regions share most of (a query
outside one setting's region is still simulated or refused, as ever)."""
TARGET = {
    "k": (2, 10**5),
    "alpha": (0.01, 0.95),
    "eps": (0.01, 10.0),
    "delta": (1e-10, 1e-3),
    "beta": (0.01, 1 / 3),
}
"""``--region target``: where users plan, the box the calibration is meant to reach
(docs/coverage.md); with ``--plan-only`` it measures how much of it is calibrated,
simulated or refused."""
SMALL_EPS = {**COVERED, "eps": (0.001, 0.01)}
"""``--region small-eps``: the larger ε from 0.001 to 0.01, below the shuffle and central
grids' least node (docs/evidence.md, a setting's own tester below its covered ε)."""
TINY_EPS = {**COVERED, "eps": (1e-4, 0.001)}
"""``--region tiny-eps``: the larger ε from the input floor 10⁻⁴ to 0.001 (central's grid
reaches the floor; docs/evidence.md, central below ε = 0.01)."""
LARGE_K = {**COVERED, "k": (4096, 10**5)}
"""``--region large-k``: the covered box above the grids' largest k (docs/coverage.md, k)."""
DIRECT = {**COVERED, "alpha": (0.01, 0.5), "eps": (0.01, 1.0)}
"""``--region direct``: where a plan at β < 1/3 may take its directly calibrated factor
(ε_strong ≤ 1, α ≤ 0.5; docs/coverage.md, β below 1/3); use it with ``--beta``."""
LARGE_EPS = {**COVERED, "eps": (0.1, 20.0)}
"""``--region large-eps``: the covered box with each group's ε drawn from [0.1, 20], so that
ε_strong is above 1 in 4 queries of 5 (the shuffle grids' nodes 3, 10 and 20)."""
SMALL_ALPHA = {**DIRECT, "alpha": (0.01, 0.15), "beta": (0.01, 0.3)}
"""``--region small-alpha``: where a shuffle plan at β < 1/3 takes the factors measured
below the α = 0.15 of the other direct points (``direct_by_node``); use it with
``--setting``."""
LARGE_ALPHA = {**COVERED, "alpha": (0.5, 0.95)}
"""``--region large-alpha``: the covered box with α from [0.5, 0.95], where the local private
coin's plans at β < 1/3 read the factors measured above α = 0.5 (``direct_large_alpha``)
and the others run their tester at α = 0.5 or take the vote; use it with ``--beta``."""
LOW_PRIVACY = {**COVERED, "k": (2, 4096), "alpha": (0.03, 0.95), "eps": (2.0, 20.0)}
"""``--region low-privacy``: both groups' ε from [2, 20] and k up to 4096, where the local
plans run k-ary randomized response (its grid, ``local-private+k-rr``; above it, the
next region)."""
LOW_PRIVACY_LARGE_K = {**LOW_PRIVACY, "k": (4096, 10**5)}
"""``--region low-privacy-large-k``: both groups' ε from [2, 20] above the grids' top k, where
k-RR reads its constant at the ε of the same e^ε/k at k = 4096 and the shared hash keeps
at most 2048 buckets (docs/coverage.md, k above the grid)."""
SMALL_K = {**COVERED, "k": (2, 15), "alpha": (0.03, 0.95), "eps": (0.01, 20.0)}
"""``--region small-k``: k from 2 to 15 (yes/no questions, Likert scales), below the
paper protocols' grids, where k-RR is calibrated and every model may run it."""
SMALL_K_SMALL_EPS = {**SMALL_K, "eps": (1e-4, 0.01)}
"""``--region small-k-small-eps``: k from 2 to 15 with the larger ε below 0.01, where a
central plan runs its tester on 16 bins (docs/evidence.md, central below ε = 0.01)."""
CHANNELS = {**COVERED, "k": (2, 1024), "alpha": (0.03, 0.95), "eps": (0.125, 20.0)}
"""``--region channels``: each group's ε drawn alone from [0.125, 20] and k up to 1024, where
local plans (and any model's) may give each group its own channel (its covered region,
``local-private+channels``)."""
CHANNELS_LARGE_K = {**CHANNELS, "k": (1025, 10**5)}
"""``--region channels-large-k``: the same above the channels' grid (k from 1025 to 10⁵),
where they keep their edge's constant when the smaller ε is at most 5 and a larger one is
run at 5 (docs/coverage.md, k above the grid)."""
LOW_PRIVACY_SMALL_ALPHA = {**LOW_PRIVACY, "k": (2, 10**5), "alpha": (0.01, 0.03)}
"""``--region low-privacy-small-alpha``: both groups' ε from [2, 20] and α from [0.01, 0.03],
below the α = 0.03 node that k-RR, a channel per group and the shared hash were calibrated
from before their α = 0.01 node (docs/coverage.md, the low-privacy grids below α = 0.03)."""
CHANNELS_SMALL_ALPHA = {**CHANNELS, "alpha": (0.01, 0.03)}
"""``--region channels-small-alpha``: the channels region below α = 0.03, down to their grid's
α = 0.01 node (with ``low-privacy-small-alpha``)."""
CHANNELS_BELOW_NODE = {**CHANNELS, "k": (64, 127)}
"""``--region channels-below-node``: k just below the channels' grid node 128 (from 64),
where a plan running them weighs the node's domain (``plan.padding_domains``)."""
CHANNELS_BELOW_TOP_NODE = {**CHANNELS, "k": (512, 1023)}
"""``--region channels-below-top-node``: the same below their node 1,024 (from 512)."""
ALPHA_ABOVE_TOPS = {**COVERED, "alpha": (0.5, 1.0)}
"""``--region alpha-above-tops``: α from [0.5, 1], above the shuffle public coin's covered
top (0.5) and up to 1, above every setting's (0.95): the plan also runs its tester at a top
(docs/coverage.md, α)."""
MESSAGES = {**COVERED, "k": (16, 4096), "eps": (0.05, 20.0)}
"""``--region messages``: where the multi-message shuffle protocol is covered (k from 16
to 4,096; above 1,024 only α ≤ 0.5), for shuffle queries (docs/shuffle-multi-message.md)."""
REGIONS = {
    "accepted": ACCEPTED,
    "covered": COVERED,
    "target": TARGET,
    "large-k": LARGE_K,
    "direct": DIRECT,
    "large-eps": LARGE_EPS,
    "small-alpha": SMALL_ALPHA,
    "large-alpha": LARGE_ALPHA,
    "low-privacy": LOW_PRIVACY,
    "low-privacy-large-k": LOW_PRIVACY_LARGE_K,
    "low-privacy-small-alpha": LOW_PRIVACY_SMALL_ALPHA,
    "small-k": SMALL_K,
    "small-eps": SMALL_EPS,
    "tiny-eps": TINY_EPS,
    "small-k-small-eps": SMALL_K_SMALL_EPS,
    "channels": CHANNELS,
    "channels-large-k": CHANNELS_LARGE_K,
    "channels-small-alpha": CHANNELS_SMALL_ALPHA,
    "alpha-above-tops": ALPHA_ABOVE_TOPS,
    "channels-below-node": CHANNELS_BELOW_NODE,
    "channels-below-top-node": CHANNELS_BELOW_TOP_NODE,
    "messages": MESSAGES,
}
SETTINGS = ("local-private", "local-public", "shuffle-private", "shuffle-public", "central")
ALLOCATIONS = ("fewest", "paper", "cost", "fixed-n2")


def log_uniform(rng: np.random.Generator, low: float, high: float) -> float:
    return float(math.exp(rng.uniform(math.log(low), math.log(high))))


def draw(
    seed: int,
    index: int,
    ranges: dict[str, tuple[float, float]],
    beta: float | None = None,
    settings: tuple[str, ...] = SETTINGS,
    central_delta: bool = False,
) -> dict[str, Any]:
    """Query ``index``'s parameters (``beta``: fixed instead of drawn, the draw unchanged;
    ``settings``: the keys cycled, e.g. mixed pairs'; ``central_delta``: a central query
    draws a δ too, which its plan may spend on a shuffle protocol)."""
    from planner.formulas.settings import Setting

    rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(index,)))
    setting = settings[index % len(settings)]
    spends = Setting.from_key(setting).needs_delta or (central_delta and setting == "central")
    return {
        "index": index,
        "setting": setting,
        "allocation": ALLOCATIONS[(index // len(settings)) % len(ALLOCATIONS)],
        "k": round(log_uniform(rng, *ranges["k"])),
        "alpha": log_uniform(rng, *ranges["alpha"]),
        "eps1": log_uniform(rng, *ranges["eps"]),
        "eps2": log_uniform(rng, *ranges["eps"]),
        "delta": log_uniform(rng, *ranges["delta"]) if spends else None,
        "beta": min(log_uniform(rng, *ranges["beta"]), 0.4999) if beta is None else beta,
        "cost2_over_cost1": log_uniform(rng, 0.1, 10.0),
        "n2_factor": log_uniform(rng, 0.5, 4.0),
        "validation_seed": int(rng.integers(2**31)),
    }


def run_query(arguments: tuple[dict[str, Any], float]) -> dict[str, Any]:
    """One query, planned and validated; any exception is recorded, never raised (and the
    worker's address space is capped so that a runaway allocation is a MemoryError)."""
    hard = resource.getrlimit(resource.RLIMIT_AS)[1]
    cap = MEMORY_CAP if hard == resource.RLIM_INFINITY else min(MEMORY_CAP, hard)
    resource.setrlimit(resource.RLIMIT_AS, (cap, hard))
    try:
        return _run_query(*arguments)
    except Exception as error:  # a crash is a finding: keep it in the record
        return {**arguments[0], "outcome": "crash", "reason": f"{type(error).__name__}: {error}"}


MEMORY_CAP = 8 * 2**30


def _run_query(drawn: dict[str, Any], budget: float) -> dict[str, Any]:
    from planner.allocation import AllocationRule, allocate, split_for
    from planner.coverage import NotCoveredError, covered_plan
    from planner.formulas.settings import Setting
    from planner.inputs import InputError, Query
    from planner.plan import plan as make_plan
    from planner.validate import validate

    record = dict(drawn)
    start = time.perf_counter()
    setting = Setting.from_key(drawn["setting"])
    query = Query(
        setting,
        drawn["k"],
        drawn["alpha"],
        drawn["eps1"],
        drawn["eps2"],
        drawn["delta"],
        drawn["beta"],
    )
    rule = AllocationRule(drawn["allocation"])
    try:  # the plan the allocation starts from: its split's (its tester runs the sizes)
        result = covered_plan(query, budget_seconds=budget, split=split_for(rule))
    except NotCoveredError as error:
        record.update(outcome="refused", reason=str(error), seconds=time.perf_counter() - start)
        return record
    record.update(
        coverage=result.coverage.value,
        protocol=result.protocol,
        repetition=result.repetition.method.value,
        tester_point=None
        if result.tester_point is None
        else [*_tester_values(result.tester_point)],
    )
    n1, n2 = result.n_users_group1, result.n_users_group2
    if drawn.get("plan_only"):
        record.update(outcome="planned", n1=n1, n2=n2, seconds=time.perf_counter() - start)
        return record
    if rule not in (AllocationRule.FEWEST, AllocationRule.PAPER):
        allocated = allocate(
            result,
            rule,
            cost1=1.0,
            cost2=drawn["cost2_over_cost1"],
            n2=max(1, round(drawn["n2_factor"] * n2)),
        )
        if not allocated.feasible:
            record.update(
                outcome="no allocation",
                reason=allocated.reason,
                n1=n1,
                n2=n2,
                seconds=time.perf_counter() - start,
            )
            return record
        n1, n2 = allocated.n_users_group1, allocated.n_users_group2
        if not allocated.fallback:  # the setting's own protocol's family: its tester
            result = make_plan(query, split=allocated.split, fallback=False)
            record["protocol"] = result.protocol
        elif allocated.split is not result.split:  # the default's own sizes: its own tester
            result = covered_plan(query, budget_seconds=budget, split=allocated.split)
            record["tester_point"] = (
                None if result.tester_point is None else [*_tester_values(result.tester_point)]
            )
    try:
        report = validate(query, n1=n1, n2=n2, seed=drawn["validation_seed"], checked_plan=result)
    except InputError as error:  # beyond what a validation may simulate (limits.py)
        record.update(
            outcome="unverifiable",
            reason=str(error),
            n1=n1,
            n2=n2,
            seconds=time.perf_counter() - start,
        )
        return record
    v = report.verification
    worst = max((o for o in v.outcomes if o.applicable), key=lambda o: o.error_rate)
    record.update(
        outcome=v.verdict.value,
        n1=n1,
        n2=n2,
        total_trials=v.total_trials,
        worst_family=worst.family,
        worst_error=worst.error_rate,
        worst_bounds=[worst.ci_low, worst.ci_high],
        seconds=time.perf_counter() - start,
    )
    return record


def _tester_values(point: Any) -> list[float]:
    """(ε1, ε2, α) of a plan's tester point, and its domain k where that is larger."""
    values = [point.eps1, point.eps2, point.alpha]
    return values if point.k is None else [*values, point.k]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--budget", type=float, default=30.0, help="simulation budget (s)")
    parser.add_argument("--output", type=Path, default=Path("holdout.jsonl"))
    parser.add_argument("--region", choices=tuple(REGIONS), default="accepted")
    parser.add_argument(
        "--plan-only", action="store_true", help="plan (or refuse) each query, no validation"
    )
    parser.add_argument("--first", type=int, default=0, help="skip the queries before this one")
    parser.add_argument("--beta", type=float, default=None, help="every query at this β")
    parser.add_argument(
        "--allocation", choices=ALLOCATIONS, help="every query with this allocation (else cycled)"
    )
    parser.add_argument(
        "--setting", default=None, help="only the queries drawn for it (one of --settings)"
    )
    parser.add_argument(
        "--settings",
        nargs="+",
        default=list(SETTINGS),
        help="the setting keys cycled (default the five one-model ones; mixed pairs as "
        "local/central-private)",
    )
    parser.add_argument(
        "--central-delta",
        action="store_true",
        help="central queries draw a δ too (their plans may run a shuffle protocol)",
    )
    parser.add_argument(
        "--rerun",
        type=Path,
        default=None,
        metavar="JSONL",
        help="instead of drawing: run again the queries of an earlier output whose outcome "
        "was unverifiable or inconclusive (same queries, same validation seeds)",
    )
    args = parser.parse_args()
    done = set()
    if args.output.exists():
        done = {json.loads(line)["index"] for line in args.output.read_text().splitlines()}
    if args.rerun is not None:
        earlier = [json.loads(line) for line in args.rerun.read_text().splitlines()]
        drawn_keys = (*draw(0, 0, ACCEPTED).keys(), "plan_only")
        todo = [
            ({name: record.get(name) for name in drawn_keys}, args.budget)
            for record in earlier
            if record["outcome"] in ("unverifiable", "inconclusive") and record["index"] not in done
        ]
    else:
        ranges = REGIONS[args.region]
        todo = [
            (
                {
                    **draw(
                        args.seed, i, ranges, args.beta, tuple(args.settings), args.central_delta
                    ),
                    **({"allocation": args.allocation} if args.allocation else {}),
                    "plan_only": args.plan_only,
                },
                args.budget,
            )
            for i in range(args.first, args.queries)
            if i not in done
            and (args.setting is None or args.settings[i % len(args.settings)] == args.setting)
        ]
    with args.output.open("a") as out, ProcessPoolExecutor(args.workers) as pool:
        for record in pool.map(run_query, todo):
            out.write(json.dumps(record) + "\n")
            out.flush()
            print(
                f"{record['index']:4d} {record['setting']:16s} {record['allocation']:9s} "
                f"{record['outcome']:13s} {record.get('coverage', '')}",
                flush=True,
            )
    records = [json.loads(line) for line in args.output.read_text().splitlines()]
    outcomes: dict[str, int] = {}
    for record in records:
        key = f"{record['outcome']} ({record.get('coverage', '-')})"
        outcomes[key] = outcomes.get(key, 0) + 1
    print(json.dumps(outcomes, indent=2))


if __name__ == "__main__":
    main()
