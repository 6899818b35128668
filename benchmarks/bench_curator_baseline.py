"""Today's shuffle plans against a trusted curator's noisy histograms (issue #40).

    python benchmarks/bench_curator_baseline.py [--queries 200] [--trials 400] [--seed 20261128]
        [--output curator-baseline.json] [--budget-minutes 38] [--shuffle-exact]
        [--multi-message THETA ...]

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
  (calibration grid, margin), its minimum ÷ the baseline the mechanism's gap;
* with ``--multi-message THETA`` (repeatable), the multi-message shuffle tester
  (``planner.validators.shuffle_multi_message``: correlated discrete Laplace noise with a
  cancelling flood) at share θ of each ε, p_g = e^{−θε_g/2} and the least flood λ_g for
  (ε_g, δ), searched exactly as the baseline (same split, seed, families, criterion,
  threshold rule and offset floor; the public coin hashed with the plan's L and R by
  ``shuffle_multi_message_public_tester``). The row records its sizes, its users in all
  over the baseline's and over the plan's, each group's (p, λ), noise variance and
  expected messages per user at the found sizes (``expected_messages_per_user``, the
  noise spread over k bins, or L·R when hashed) and the worst family. Where
  ``least_flood`` finds no flood for (ε_g, δ) at θ, a refusal for that θ is recorded.
  Its tester at θ = 1 would be the baseline itself (its estimate's noise is the
  curator's at ε_c = θε), so mm ÷ baseline is what the share 1 − θ left to the flood
  costs.

Coins: the private-coin plan gets the private-coin baseline (k bins). The public-coin plan
gets the baseline hashed the same way: its L and number of hashes R, the R runs' scores
averaged, the least mean taking the hash's share, i.e. the same protocol with the
curator's noise in place of the Poisson noise. Where the public-coin plan runs the
private-coin protocol (it needs fewer users), its baseline is the private-coin one, and
a baseline already searched at the same sizes is reused.

Writes a JSON summary (``--output``): the arguments, every query's row and the median,
largest and smallest ratio per coin (shuffle ÷ baseline and shuffle ÷ central, users in
all; with the options above, plan ÷ its tester's minimum, that minimum ÷ the baseline, and
per θ mm ÷ baseline, mm ÷ plan and the messages per user, over all users and in the
group that sends more), the refusals (per θ too), and the queries left when
``--budget-minutes`` (wall time) ran out: none at the defaults, which took 12.7 minutes of
CPU time on one core (docs/evidence.md).
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from planner import Coin, InputError, Model, Query, Setting, plan
from planner.formulas.correlated_noise import expected_messages_per_user
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
from planner.validators.shuffle_multi_message import (
    ShuffleMultiMessageTester,
    shuffle_multi_message_public_tester,
)
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


def threshold_rule(made: Plan) -> tuple[float, float, bool]:
    """The shuffle tester's threshold constants from the constants file, which every tester
    here shares: (threshold fraction, spread slope, whether a hashed threshold takes the
    hash's share of the signal)."""
    parameters = tester_parameters(made.tester_query)
    return (
        float(parameters.get("threshold_fraction", 0.5)),
        float(parameters.get("spread_slope", 0.0)),
        bool(parameters.get("hash_share", False)),
    )


def plan_hashing(made: Plan) -> tuple[int, int] | None:
    """(L, R) when the plan runs the public-coin protocol, None when it runs the private
    one (a public-coin plan may, when it needs fewer users)."""
    if made.protocol == "shuffle-public" and made.compression is not None:
        return made.compression.L, made.compression.hashes
    return None


def kind_of(hashing: tuple[int, int] | None) -> str:
    return f"hashed L={hashing[0]} R={hashing[1]}" if hashing else "private"


def baseline_tester(draw: Draw, made: Plan, offset_floor: float) -> tuple[Any, str]:
    """The curator baseline matching the plan's protocol, and its description."""
    fraction, slope, share = threshold_rule(made)
    hashing = plan_hashing(made)

    def curator(size: int, distance: float, hashed_from: int = 0) -> CuratorHistogramTester:
        return CuratorHistogramTester(
            size, distance, draw.eps1, draw.eps2, fraction, slope, hashed_from, offset_floor
        )

    if hashing:
        L, hashes = hashing
        hashed = CompressedTester.build(
            draw.k,
            draw.alpha,
            L,
            hashes,
            lambda size, distance: curator(size, distance, draw.k if share else 0),
        )
        return hashed, kind_of(hashing)
    return curator(draw.k, draw.alpha), kind_of(hashing)


def multi_message_tester(
    draw: Draw, made: Plan, theta: float, offset_floor: float
) -> tuple[Any, str, ShuffleMultiMessageTester, int]:
    """The multi-message protocol at share θ matching the plan's protocol as the baseline
    does (private, or hashed with the plan's L and R by the public-coin wrapper), with the
    baseline's threshold rule and offset floor; also its per-group (p, λ) and the bins its
    noise covers (k, or L·R). ValueError (from ``least_flood``) when no flood meets
    (ε_g, δ) at this θ."""
    fraction, slope, share = threshold_rule(made)
    private = ShuffleMultiMessageTester.for_privacy(
        draw.k, draw.alpha, draw.eps1, draw.eps2, DELTA, theta, fraction, slope
    )
    private = replace(private, offset_floor=offset_floor)
    hashing = plan_hashing(made)
    if not hashing:
        return private, kind_of(hashing), private, draw.k
    L, hashes = hashing
    hashed = shuffle_multi_message_public_tester(
        draw.k,
        draw.alpha,
        private.p1,
        private.lam1,
        private.p2,
        private.lam2,
        L,
        hashes,
        fraction,
        slope,
        share,
    )
    hashed = replace(hashed, base=replace(hashed.base, offset_floor=offset_floor))
    return hashed, kind_of(hashing), private, L * hashes


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


def search_tester(
    tester: Any, draw: Draw, n1: int, n2: int, trials: int, seed: int, target: float
) -> Search:
    """A tester's least sizes on the split n1:n2 (:func:`smallest_multiplier`) over every
    family that exists at (k, α), with common random numbers from ``seed``."""
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


def search_once(
    searched: dict[tuple[Any, ...], Search],
    key: tuple[Any, ...],
    tester: Any,
    draw: Draw,
    n1: int,
    n2: int,
    args: argparse.Namespace,
    seed: int,
) -> tuple[Search, bool]:
    """:func:`search_tester` unless ``key`` (the query, the tester and the sizes) was
    searched already; and whether it was reused."""
    reused = key in searched
    if not reused:
        searched[key] = search_tester(tester, draw, n1, n2, args.trials, seed, args.target)
    return searched[key], reused


def found_total(found: Search) -> int | None:
    """The found sizes' users in all, None when no size up to the range's top passed."""
    return found.n1 + found.n2 if found.n1 and found.n2 else None


def multi_message_columns(
    private: ShuffleMultiMessageTester,
    bins: int,
    found: Search,
    reused: bool,
    baseline_total: int | None,
    plan_total: int,
) -> dict[str, Any]:
    """One θ's row entry: the found sizes, their ratios to the baseline and the plan, each
    group's (p, λ) and its expected messages per user at the found sizes (its noise spread
    over ``bins``: k, or L·R when hashed)."""
    total = found_total(found)
    entry: dict[str, Any] = {
        "n1": found.n1,
        "n2": found.n2,
        "total": total,
        "multiplier": found.multiplier,
        "over_baseline": total / baseline_total if total and baseline_total else None,
        "over_plan": total / plan_total if total else None,
        "worst_family": found.worst_family,
        "worst_error": found.worst_error,
        "checks": found.checks,
        "seconds": round(found.seconds, 2),
        "reused": reused,
        "p1": private.p1,
        "p2": private.p2,
        "lam1": private.lam1,
        "lam2": private.lam2,
        "variance1": private.variances[0],
        "variance2": private.variances[1],
    }
    if found.n1 and found.n2:
        m1 = float(expected_messages_per_user(found.n1, bins, private.p1, private.lam1))
        m2 = float(expected_messages_per_user(found.n2, bins, private.p2, private.lam2))
        entry |= {
            "messages1": m1,
            "messages2": m2,
            "messages": (found.n1 * m1 + found.n2 * m2) / (found.n1 + found.n2),
            "messages_larger": max(m1, m2),
        }
    return entry


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


def spread(values: list[float]) -> dict[str, Any]:
    return {
        "median": statistics.median(values),
        "max": max(values),
        "min": min(values),
        "quartiles": statistics.quantiles(values, n=4) if len(values) > 1 else values,
    }


def summary(rows: list[dict[str, Any]], coin: str, thetas: list[float]) -> dict[str, Any]:
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
            result[name] = spread(values)
    for theta in thetas:
        label = f"{theta:g}"
        entries = [
            row["multi_message"][label]
            for row in rows
            if row["coin"] == coin and "multi_message" in row
        ]
        sized = [entry for entry in entries if entry.get("over_baseline")]
        mm: dict[str, Any] = {
            "queries": len(sized),
            "refused": sum("refused" in entry for entry in entries),
            "not_found": sum(
                "refused" not in entry and not entry.get("total") for entry in entries
            ),
            "over_baseline_above_1.5": sum(entry["over_baseline"] > 1.5 for entry in sized),
        }
        for name, key in (
            ("mm/baseline", "over_baseline"),
            ("mm/plan", "over_plan"),
            ("messages per user", "messages"),
            ("messages per user, larger group", "messages_larger"),
        ):
            mm[name] = spread([entry[key] for entry in sized]) if sized else None
        result[f"multi-message theta={label}"] = mm
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
        "--multi-message",
        type=float,
        action="append",
        default=[],
        metavar="THETA",
        help="also search the multi-message shuffle tester at this share θ of ε the same way "
        "(repeatable; validators/shuffle_multi_message.py)",
    )
    parser.add_argument(
        "--budget-minutes",
        type=float,
        default=38.0,
        help="stop starting new queries after this long (the rest are reported as left)",
    )
    args = parser.parse_args()
    thetas: list[float] = args.multi_message
    if any(not theta > 0 for theta in thetas):
        parser.error("--multi-message takes a share θ > 0")
    started = time.perf_counter()
    draws = draw_queries(args.queries, args.seed)
    rows: list[dict[str, Any]] = []
    refusals: dict[str, list[str]] = {"private": [], "public": [], "central": []}
    for theta in thetas:
        for coin in ("private", "public"):
            refusals[f"multi-message theta={theta:g} {coin}"] = []
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
            seed = int(np.random.SeedSequence([args.seed, index]).generate_state(1)[0])
            found, reused = search_once(
                searched, ("baseline", index, kind, n1, n2), tester, draw, n1, n2, args, seed
            )
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
                own = search_tester(
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
            mm_text = ""
            if thetas:
                row["multi_message"] = {}
            for theta in thetas:
                label = f"{theta:g}"
                try:
                    mm_tester, mm_kind, private, bins = multi_message_tester(
                        draw, made, theta, args.offset_floor
                    )
                except ValueError as error:
                    refusals[f"multi-message theta={label} {coin}"].append(
                        f"query {index}: {error}"
                    )
                    row["multi_message"][label] = {"refused": str(error)}
                    mm_text += f" mm{label} refused"
                    continue
                mm_found, mm_reused = search_once(
                    searched,
                    ("multi-message", theta, index, mm_kind, n1, n2),
                    mm_tester,
                    draw,
                    n1,
                    n2,
                    args,
                    seed,
                )
                entry = multi_message_columns(
                    private, bins, mm_found, mm_reused, found_total(found), total
                )
                row["multi_message"][label] = entry
                mm_text += (
                    f" mm{label} {entry['over_baseline'] or math.nan:.2f}x"
                    f"/{entry.get('messages', math.nan):.1f}msg"
                )
            rows.append(row)
            baseline = f"{found.n1}+{found.n2}" if found.n1 else "none"
            print(
                f"[{time.perf_counter() - started:7.1f}s] q{index:03d} {coin:7s} k={draw.k:5d} "
                f"a={draw.alpha:.3f} e=({draw.eps1:.3g},{draw.eps2:.3g}) shuffle {n1}+{n2} "
                f"baseline {baseline} ({kind}) ratio "
                f"{row['ratio_baseline'] or math.nan:.2f} vs central "
                f"{row['ratio_central'] or math.nan:.2f}{mm_text} [{found.seconds:.1f}s"
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
            "multi_message": thetas,
        },
        "seconds": round(time.perf_counter() - started, 1),
        "summary": {coin: summary(rows, coin, thetas) for coin in ("private", "public")},
        "refusals": {coin: len(reasons) for coin, reasons in refusals.items()},
        "refusal_reasons": refusals,
        "queries_left_by_budget": left,
        "searches": sum(key[0] == "baseline" for key in searched),
        "multi_message_searches": sum(key[0] == "multi-message" for key in searched),
        "rows": rows,
    }
    args.output.write_text(json.dumps(result, indent=1, default=str) + "\n", encoding="utf-8")
    print(json.dumps({key: result[key] for key in ("seconds", "summary", "refusals")}, indent=1))
    print(f"queries left by the budget: {left}; searches (baseline and mm): {len(searched)}")
    print(f"written: {args.output}")


if __name__ == "__main__":
    main()
