"""Today's shuffle plans against a trusted curator's noisy histograms (issue #40).

    python benchmarks/bench_curator_baseline.py [--queries 200] [--trials 400] [--seed 20261128]
        [--output curator-baseline.json] [--budget-minutes 38] [--shuffle-exact]

The baseline (``planner.validators.curator_histogram``): a trusted curator releases each
group's histogram plus per-bin discrete Laplace noise at the replace-one sensitivity 2,
each group at its own ε_g (pure DP, no δ), and the analyser runs the shuffle tester's
closeness statistic on the two noisy histograms, debiased by the noise's known variance,
with the shuffle tester's threshold rule (c∞ and the spread slope from the constants
file). No histogram-based shuffle protocol is expected to need fewer users.

Per random query (k ∈ [16, 4096], α ∈ [0.05, 0.5], ε1, ε2 ∈ [0.1, 10] log-uniform and
drawn independently, δ = 1e-6, β = 1/3), for each coin:

* today's shuffle plan (``planner.plan``, the public entry point; no simulation budget, so
  a query outside the covered region is a refusal, counted, not simulated);
* the baseline's smallest sizes on the plan's own n1:n2 split: bisection on a common
  multiplier t, sizes ⌈t·n1⌉, ⌈t·n2⌉, until every instance family's observed error over
  ``--trials`` trials is at most the target (default ``operating_error(1/3)`` ≈ 0.296,
  the criterion the shuffle plans and ``planner plan --exact`` are sized to; ``--target``
  changes it). Common random numbers across t (one seed per query); a family stops early
  once a Clopper–Pearson bound at one-sided level 1e-3 decides it, and a check stops at its
  first failing family (the family that failed last runs first);
* the central plan (``central``; the coin makes no difference there);
* with ``--shuffle-exact``, the plan's own shuffle tester searched the same way (same
  split, seed, families and criterion): plan ÷ its minimum is the planner's slack
  (calibration grid, margin), its minimum ÷ the baseline the mechanism's gap.

Coins: the private-coin plan gets the private-coin baseline (k bins). The public-coin plan
gets the baseline hashed the same way: its L and number of hashes R, the R runs' scores
averaged, the least mean taking the hash's share, i.e. the same protocol with the
curator's noise in place of the Poisson noise. Where the public-coin plan runs the
private-coin protocol (it needs fewer users), its baseline is the private-coin one, and
a baseline already searched at the same sizes is reused.

Writes a JSON summary (``--output``): the arguments, every query's row and the median and
largest ratio per coin (shuffle ÷ baseline and shuffle ÷ central, users in all), the
refusals, and the queries left when ``--budget-minutes`` (wall time) ran out: none at the
defaults, which took 12.7 minutes of CPU time on one core (docs/evidence.md).
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from planner import Coin, InputError, Model, Query, Setting, plan
from planner.plan import Plan
from planner.protocols.shuffle_private import noise_mu
from planner.statistics import operating_error
from planner.testers import build_tester, tester_parameters
from planner.validators.compression import CompressedTester
from planner.validators.curator_histogram import (
    OFFSET_FLOOR,
    CuratorHistogramTester,
    noise_variance,
)
from planner.validators.engine import family_rng
from planner.validators.instances import FAMILIES, Instance, Kind, build
from planner.validators.stats import clopper_pearson_bounds

DELTA = 1e-6
CHUNK = 100
"""Trials simulated between a family's early-stopping looks."""
EARLY_TAIL = 1e-3
"""One-sided level of the Clopper–Pearson bounds that stop a family early."""
REL_TOL = 0.03
"""The bisection stops when the passing multiplier is within this of the failing one."""
T_RANGE = (2.0**-12, 64.0)


@dataclass(frozen=True)
class Draw:
    k: int
    alpha: float
    eps1: float
    eps2: float


def draw_queries(count: int, seed: int) -> list[Draw]:
    """``count`` seeded draws: k log-uniform integers in [16, 4096], α uniform in
    [0.05, 0.5], ε1 and ε2 log-uniform in [0.1, 10], independently."""
    rng = np.random.default_rng(seed)

    def log_uniform(low: float, high: float) -> float:
        return float(math.exp(rng.uniform(math.log(low), math.log(high))))

    return [
        Draw(
            round(log_uniform(16, 4096)),
            float(rng.uniform(0.05, 0.5)),
            log_uniform(0.1, 10.0),
            log_uniform(0.1, 10.0),
        )
        for _ in range(count)
    ]


def query_for(draw: Draw, model: str, coin: str) -> Query:
    delta = DELTA if model == "shuffle" else None
    return Query(Setting(Model(model), Coin(coin)), draw.k, draw.alpha, draw.eps1, draw.eps2, delta)


def baseline_tester(draw: Draw, made: Plan, offset_floor: float) -> tuple[Any, str]:
    """The curator baseline matching the plan's protocol, and its description."""
    parameters = tester_parameters(made.tester_query)
    fraction = float(parameters.get("threshold_fraction", 0.5))
    slope = float(parameters.get("spread_slope", 0.0))
    if made.protocol == "shuffle-public" and made.compression is not None:
        L, hashes = made.compression.L, made.compression.hashes
        share = bool(parameters.get("hash_share", False))
        hashed = CompressedTester.build(
            draw.k,
            draw.alpha,
            L,
            hashes,
            lambda size, distance: CuratorHistogramTester(
                size,
                distance,
                draw.eps1,
                draw.eps2,
                fraction,
                slope,
                draw.k if share else 0,
                offset_floor,
            ),
        )
        return hashed, f"hashed L={L} R={hashes}"
    tester = CuratorHistogramTester(
        draw.k, draw.alpha, draw.eps1, draw.eps2, fraction, slope, offset_floor=offset_floor
    )
    return tester, "private"


def shuffle_tester(made: Plan) -> Any:
    """The plan's own shuffle tester, at its tester point, hashed as the plan says."""
    compression = made.compression if made.protocol == "shuffle-public" else None
    return build_tester(
        made.tester_query,
        L=compression.L if compression else None,
        hashes=compression.hashes if compression else 1,
        runs=made.runs,
    )


@dataclass
class Check:
    passed: bool
    worst_family: str
    worst_error: float
    trials: int


@dataclass
class Checker:
    """Checks a tester at given sizes over the families, common random numbers per size."""

    tester: Any
    instances: list[Instance]
    trials: int
    seed: int
    target: float
    order: list[str] = field(default_factory=list)
    simulated: int = 0

    def family_errors(self, instance: Instance, n1: int, n2: int) -> tuple[int, int, str]:
        """(errors, trials, 'fail' / 'pass' / 'done') for one family, stopping early."""
        rng = family_rng(self.seed, instance.family)
        errors = done = 0
        while done < self.trials:
            size = min(CHUNK, self.trials - done)
            batch = self.tester.simulate_fast(instance.p, instance.q, n1, n2, size, rng)
            rejects = int(np.count_nonzero(batch.rejects))
            errors += rejects if instance.kind is Kind.NULL else size - rejects
            done += size
            self.simulated += size * instance.p.size
            if done < self.trials:
                low, high = clopper_pearson_bounds(errors, done, EARLY_TAIL)
                if low > self.target:
                    return errors, done, "fail"
                if high <= self.target:
                    return errors, done, "pass"
        return errors, done, "done"

    def __call__(self, n1: int, n2: int) -> Check:
        by_name = {instance.family: instance for instance in self.instances}
        names = [name for name in self.order if name in by_name]
        names += [name for name in by_name if name not in names]
        worst = Check(True, "", -1.0, 0)
        for name in names:
            errors, done, _ = self.family_errors(by_name[name], n1, n2)
            rate = errors / done
            if rate > worst.worst_error:
                worst = Check(True, name, rate, done)
            if rate > self.target:
                self.order = [name, *(other for other in self.order if other != name)]
                return Check(False, name, rate, done)
        return worst


@dataclass
class Search:
    multiplier: float | None
    n1: int | None
    n2: int | None
    worst_family: str
    worst_error: float
    checks: int
    simulated_cells: int
    seconds: float


def sizes_at(t: float, n1: int, n2: int) -> tuple[int, int]:
    return max(2, math.ceil(t * n1)), max(2, math.ceil(t * n2))


def smallest_multiplier(
    check: Callable[[int, int], Check], n1: int, n2: int
) -> tuple[float | None, Check | None, int]:
    """The least t (to ``REL_TOL``) whose sizes pass, by doubling from t = 1 then
    geometric bisection; (None, ...) when t up to the range's top fails."""
    seen: dict[tuple[int, int], Check] = {}

    def passes(t: float) -> bool:
        sizes = sizes_at(t, n1, n2)
        if sizes not in seen:
            seen[sizes] = check(*sizes)
        return seen[sizes].passed

    low, high = T_RANGE
    if passes(1.0):
        upper, lower = 1.0, 0.5
        while lower > low and passes(lower):
            upper, lower = lower, lower / 2
        if lower <= low:
            return upper, seen[sizes_at(upper, n1, n2)], len(seen)
    else:
        lower, upper = 1.0, 2.0
        while not passes(upper):
            if upper >= high:
                return None, None, len(seen)
            lower, upper = upper, upper * 2
    while upper / lower > 1 + REL_TOL and sizes_at(lower, n1, n2) != sizes_at(upper, n1, n2):
        middle = math.sqrt(lower * upper)
        if passes(middle):
            upper = middle
        else:
            lower = middle
    return upper, seen[sizes_at(upper, n1, n2)], len(seen)


def search_baseline(
    tester: Any, draw: Draw, n1: int, n2: int, trials: int, seed: int, target: float
) -> Search:
    start = time.perf_counter()
    instances = [
        instance for name in FAMILIES if (instance := build(name, draw.k, draw.alpha)) is not None
    ]
    checker = Checker(tester, instances, trials, seed, target)
    multiplier, final, checks = smallest_multiplier(checker, n1, n2)
    seconds = time.perf_counter() - start
    if multiplier is None or final is None:
        return Search(None, None, None, "", math.nan, checks, checker.simulated, seconds)
    b1, b2 = sizes_at(multiplier, n1, n2)
    return Search(
        multiplier,
        b1,
        b2,
        final.worst_family,
        final.worst_error,
        checks,
        checker.simulated,
        seconds,
    )


def noise_columns(draw: Draw, made: Plan) -> dict[str, float]:
    """The plan's Poisson noise per bin against the curator's discrete Laplace variance."""
    return {
        "mu1_plan": made.groups[0].noise_mu or math.nan,
        "mu2_plan": made.groups[1].noise_mu or math.nan,
        "mu1_at_eps1": noise_mu(draw.eps1, DELTA, made.query.accounting),
        "mu2_at_eps2": noise_mu(draw.eps2, DELTA, made.query.accounting),
        "v1": noise_variance(draw.eps1),
        "v2": noise_variance(draw.eps2),
    }


def summary(rows: list[dict[str, Any]], coin: str) -> dict[str, Any]:
    mine = [row for row in rows if row["coin"] == coin and row.get("ratio_baseline")]
    to_baseline = [row["ratio_baseline"] for row in mine]
    to_central = [row["ratio_central"] for row in mine if row.get("ratio_central")]
    result: dict[str, Any] = {"queries": len(mine)}
    slack = [row["plan_over_exact"] for row in mine if row.get("plan_over_exact")]
    gap = [row["exact_over_baseline"] for row in mine if row.get("exact_over_baseline")]
    for name, values in (
        ("shuffle/baseline", to_baseline),
        ("shuffle/central", to_central),
        ("plan/shuffle-exact", slack),
        ("shuffle-exact/baseline", gap),
    ):
        if values:
            result[name] = {
                "median": statistics.median(values),
                "max": max(values),
                "min": min(values),
                "quartiles": statistics.quantiles(values, n=4) if len(values) > 1 else values,
            }
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--trials", type=int, default=400, help="trials per family per check")
    parser.add_argument("--seed", type=int, default=20261128)
    parser.add_argument("--output", type=Path, default=Path("curator-baseline.json"))
    parser.add_argument(
        "--target",
        type=float,
        default=operating_error(1 / 3),
        help="the most observed error any family may show (default: the operating point)",
    )
    parser.add_argument(
        "--offset-floor",
        type=float,
        default=OFFSET_FLOOR,
        help="the baseline's least weight offset, in units of √(bins) (docs/shuffle-baseline.md)",
    )
    parser.add_argument(
        "--shuffle-exact",
        action="store_true",
        help="also search the plan's own shuffle tester's least sizes the same way (about 3x "
        "the time): splits the ratio into the plan's slack and the mechanism's gap",
    )
    parser.add_argument(
        "--budget-minutes",
        type=float,
        default=38.0,
        help="stop starting new queries after this long (the rest are reported as left)",
    )
    args = parser.parse_args()
    started = time.perf_counter()
    draws = draw_queries(args.queries, args.seed)
    rows: list[dict[str, Any]] = []
    refusals: dict[str, list[str]] = {"private": [], "public": [], "central": []}
    searched: dict[tuple[Any, ...], Search] = {}
    left = 0
    for index, draw in enumerate(draws):
        if time.perf_counter() - started > 60 * args.budget_minutes:
            left = len(draws) - index
            break
        try:
            central: Plan | None = plan(query_for(draw, "central", "private"), budget_seconds=0)
        except InputError as error:
            central = None
            refusals["central"].append(f"query {index}: {error}")
        for coin in ("private", "public"):
            row: dict[str, Any] = {"query": index, "coin": coin, **vars(draw)}
            try:
                made = plan(query_for(draw, "shuffle", coin), budget_seconds=0)
            except InputError as error:
                refusals[coin].append(f"query {index}: {error}")
                rows.append({**row, "refused": str(error)})
                continue
            n1, n2 = made.n_users_group1, made.n_users_group2
            tester, kind = baseline_tester(draw, made, args.offset_floor)
            key = (index, kind, n1, n2)
            reused = key in searched
            seed = int(np.random.SeedSequence([args.seed, index]).generate_state(1)[0])
            if not reused:
                searched[key] = search_baseline(
                    tester, draw, n1, n2, args.trials, seed, args.target
                )
            found = searched[key]
            total = n1 + n2
            row |= {
                "seed": seed,
                "protocol": made.protocol,
                "baseline": kind,
                "runs": made.runs,
                "tester_point": vars(made.tester_point) if made.tester_point else None,
                "shuffle_n1": n1,
                "shuffle_n2": n2,
                "shuffle_total": total,
                "baseline_n1": found.n1,
                "baseline_n2": found.n2,
                "baseline_multiplier": found.multiplier,
                "baseline_worst_family": found.worst_family,
                "baseline_worst_error": found.worst_error,
                "baseline_checks": found.checks,
                "baseline_seconds": round(found.seconds, 2),
                "baseline_reused": reused,
                "ratio_baseline": total / (found.n1 + found.n2) if found.n1 and found.n2 else None,
                "central_total": central.total_users if central else None,
                "ratio_central": total / central.total_users if central else None,
                **noise_columns(draw, made),
            }
            if args.shuffle_exact:
                own = search_baseline(
                    shuffle_tester(made), draw, n1, n2, args.trials, seed, args.target
                )
                row |= {
                    "shuffle_exact_n1": own.n1,
                    "shuffle_exact_n2": own.n2,
                    "shuffle_exact_worst_family": own.worst_family,
                    "plan_over_exact": total / (own.n1 + own.n2) if own.n1 and own.n2 else None,
                    "exact_over_baseline": (own.n1 + own.n2) / (found.n1 + found.n2)
                    if own.n1 and own.n2 and found.n1 and found.n2
                    else None,
                }
            rows.append(row)
            baseline = f"{found.n1}+{found.n2}" if found.n1 else "none"
            print(
                f"[{time.perf_counter() - started:7.1f}s] q{index:03d} {coin:7s} k={draw.k:5d} "
                f"a={draw.alpha:.3f} e=({draw.eps1:.3g},{draw.eps2:.3g}) shuffle {n1}+{n2} "
                f"baseline {baseline} ({kind}) ratio "
                f"{row['ratio_baseline'] or math.nan:.2f} vs central "
                f"{row['ratio_central'] or math.nan:.2f} [{found.seconds:.1f}s"
                f"{', reused' if reused else ''}]",
                flush=True,
            )
    result = {
        "command": "python benchmarks/bench_curator_baseline.py",
        "arguments": {
            "queries": args.queries,
            "trials": args.trials,
            "seed": args.seed,
            "target": args.target,
            "budget_minutes": args.budget_minutes,
            "delta": DELTA,
            "beta": 1 / 3,
            "chunk": CHUNK,
            "early_tail": EARLY_TAIL,
            "rel_tol": REL_TOL,
            "offset_floor": args.offset_floor,
            "shuffle_exact": args.shuffle_exact,
        },
        "seconds": round(time.perf_counter() - started, 1),
        "summary": {coin: summary(rows, coin) for coin in ("private", "public")},
        "refusals": {coin: len(reasons) for coin, reasons in refusals.items()},
        "refusal_reasons": refusals,
        "queries_left_by_budget": left,
        "searches": len(searched),
        "rows": rows,
    }
    args.output.write_text(json.dumps(result, indent=1, default=str) + "\n", encoding="utf-8")
    print(json.dumps({key: result[key] for key in ("seconds", "summary", "refusals")}, indent=1))
    print(f"queries left by the budget: {left}; baseline searches: {len(searched)}")
    print(f"written: {args.output}")


if __name__ == "__main__":
    main()
