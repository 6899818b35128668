"""A hostile pair search against the printed plans at small k: is there a pair the plan fails?

At so few categories a handful of built-in families is thin evidence about every pair, so
for each query (setting, k, α, ε1, ε2) this takes the printed plan and its real tester,
then searches pmf pairs for the largest error:

1. ``--random`` random pairs: a null pair p = q (p Dirichlet(½) or a point mass mixed in),
   and a far pair (p, q) with TV(p, q) = α exactly (q = p moved along a random direction,
   clipped to the simplex, then rescaled to TV α);
2. hill-climbing from the ``--climb-from`` worst: each step perturbs p (and q, keeping TV
   = α for a far pair) and keeps the move when the estimated error grows;
3. the worst pair found is confirmed with ``--confirm`` fresh trials: it fails when the
   Clopper–Pearson lower bound (99 %) of its error is above the plan's target β.

Errors are estimated on the fast path with the plan's own tester (tester point, vote,
threshold), so a figure here is what ``planner validate --p-file … --q-file …`` would
report for the pair.

    python benchmarks/hostile_pairs.py --seed 20261128 --output /tmp/hostile-pairs.json

Exit code 1 when some plan fails a pair.
"""

from __future__ import annotations

import argparse
import itertools
import json
import time
from dataclasses import replace
from typing import Any

import numpy as np
from scipy.stats import beta as beta_distribution

from planner import Query
from planner.coverage import NotCoveredError, covered_plan
from planner.inputs import InputError
from planner.testers import build_tester

SETTINGS = (
    ("local", "private"),
    ("local", "public"),
    ("shuffle", "private"),
    ("shuffle", "public"),
    ("central", "private"),
)


def _tv(p: np.ndarray, q: np.ndarray) -> float:
    return 0.5 * float(np.abs(p - q).sum())


def far_pair(rng: np.random.Generator, k: int, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """A random pair at TV exactly α (p random, q = p + t·d on the simplex)."""
    for _ in range(1000):
        p = rng.dirichlet(np.full(k, 0.5))
        direction = rng.normal(size=k)
        direction -= direction.mean()
        direction /= np.abs(direction).sum() / 2  # TV 1 per unit step
        q = np.clip(p + alpha * direction, 0.0, None)
        q /= q.sum()
        tv = _tv(p, q)
        if tv > 0:
            q = p + (q - p) * (alpha / tv)
            if q.min() >= 0 and abs(_tv(p, q) - alpha) < 1e-9:
                return p, q
    mass = np.zeros(k)  # a pair that always exists: move α from element 0 to 1
    mass[0] = 1.0
    q = mass.copy()
    q[0] -= alpha
    q[1] += alpha
    return mass, q


def null_pair(rng: np.random.Generator, k: int) -> tuple[np.ndarray, np.ndarray]:
    p = rng.dirichlet(np.full(k, 0.3 if rng.random() < 0.5 else 1.0))
    if rng.random() < 0.3:  # a heavy atom
        p = 0.5 * p
        p[rng.integers(k)] += 0.5
    return p, p.copy()


def error(
    tester: Any,
    pair: tuple[np.ndarray, np.ndarray],
    far: bool,
    n1: int,
    n2: int,
    trials: int,
    rng: np.random.Generator,
    domain: int = 0,
) -> float:
    """The tester's error on the pair (a vote's through its runs, as validate does); a
    tester on a larger domain than the pair's (``tester_point.k``) gets the pair padded
    with empty bins, as ``planner validate`` pads its instances."""
    from planner.validators.protocol import SimulationPath, simulate
    from planner.validators.repetition import MajorityVoteTester

    extra = domain - pair[0].size
    if extra > 0:
        pair = (
            np.concatenate([pair[0], np.zeros(extra)]),
            np.concatenate([pair[1], np.zeros(extra)]),
        )
    runs, base, m1, m2 = 1, tester, n1, n2
    if isinstance(tester, MajorityVoteTester):
        runs, base = tester.runs, tester.base
        m1, m2 = tester.run_sizes(n1, n2)
    batch = simulate(base, pair[0], pair[1], m1, m2, trials, rng, SimulationPath.FAST)
    run_error = float(np.mean(~batch.rejects if far else batch.rejects))
    if runs == 1:
        return run_error
    from planner.formulas.repetition import majority_vote_error

    return float(majority_vote_error(runs, run_error))


def perturb(
    rng: np.random.Generator,
    pair: tuple[np.ndarray, np.ndarray],
    far: bool,
    alpha: float,
    scale: float,
) -> tuple[np.ndarray, np.ndarray]:
    p, q = pair
    k = p.size
    step = rng.normal(scale=scale, size=k)
    new_p = np.clip(p + step, 0.0, None)
    if new_p.sum() <= 0:
        return pair
    new_p /= new_p.sum()
    if not far:
        return new_p, new_p.copy()
    shift = q - p + rng.normal(scale=scale, size=k)
    shift -= shift.mean()
    tv = 0.5 * np.abs(shift).sum()
    if tv == 0:
        return pair
    new_q = new_p + shift * (alpha / tv)
    if new_q.min() < 0:
        return pair
    return new_p, new_q


def search(args: argparse.Namespace, query: Query, rng: np.random.Generator) -> dict[str, Any]:
    record: dict[str, Any] = {
        "setting": query.setting.key,
        "k": query.k,
        "alpha": query.alpha,
        "eps1": query.eps1,
        "eps2": query.eps2,
    }
    try:
        made = covered_plan(query)
    except (NotCoveredError, InputError) as refused:
        return {**record, "outcome": "refused", "reason": str(refused)}
    tester_query = made.tester_query
    domain = tester_query.k  # the query's k, or a larger domain's (pairs padded)
    tester = build_tester(
        tester_query,
        L=made.compression.L if made.compression else None,
        hashes=made.compression.hashes if made.compression else 1,
        runs=made.runs,
    )
    n1, n2 = made.n_users_group1, made.n_users_group2
    record.update(protocol=made.protocol, coverage=made.coverage.value, n1=n1, n2=n2)
    scored = []
    for index in range(args.random):
        far = index % 2 == 1
        pair = far_pair(rng, query.k, query.alpha) if far else null_pair(rng, query.k)
        scored.append((error(tester, pair, far, n1, n2, args.trials, rng, domain), far, pair))
    scored.sort(key=lambda item: -item[0])
    best = scored[0]
    for start in scored[: args.climb_from]:
        current = start
        for _ in range(args.steps):
            candidate_pair = perturb(rng, current[2], current[1], query.alpha, 0.05)
            value = error(tester, candidate_pair, current[1], n1, n2, args.trials, rng, domain)
            if value > current[0]:
                current = (value, current[1], candidate_pair)
        if current[0] > best[0]:
            best = current
    confirmed = error(tester, best[2], best[1], n1, n2, args.confirm, rng, domain)
    failures = round(confirmed * args.confirm)
    low = (
        float(beta_distribution.ppf(0.01, failures, args.confirm - failures + 1))
        if failures > 0
        else 0.0
    )
    record.update(
        domain=domain,
        outcome="fail" if low > query.beta else "pass",
        worst_kind="far" if best[1] else "null",
        worst_p=[round(float(x), 6) for x in best[2][0]],
        worst_q=[round(float(x), 6) for x in best[2][1]],
        search_error=best[0],
        confirmed_error=confirmed,
        confirmed_lower_99=low,
    )
    return record


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=20261128)
    parser.add_argument("--k", type=int, nargs="*", default=[2, 3, 4, 5, 6, 7])
    parser.add_argument("--alpha", type=float, nargs="*", default=[0.1, 0.3, 0.6])
    parser.add_argument("--eps", type=float, nargs="*", default=[0.5, 2.0, 10.0])
    parser.add_argument("--random", type=int, default=60)
    parser.add_argument("--climb-from", type=int, default=3)
    parser.add_argument("--steps", type=int, default=15)
    parser.add_argument("--trials", type=int, default=300)
    parser.add_argument("--confirm", type=int, default=4000)
    parser.add_argument("--output", default="hostile-pairs.json")
    args = parser.parse_args()
    records = []
    start = time.perf_counter()
    for index, ((model, coin), k, alpha, eps) in enumerate(
        itertools.product(SETTINGS, args.k, args.alpha, args.eps)
    ):
        rng = np.random.default_rng(np.random.SeedSequence(args.seed, spawn_key=(index,)))
        delta = 1e-6 if model == "shuffle" else None
        query = Query.build(model, coin, k, alpha, eps, eps / 2 if index % 2 else eps, delta)
        record = search(args, replace(query), rng)
        records.append(record)
        print(
            f"{record['setting']:15s} k={k} α={alpha:g} ε=({query.eps1:g}, {query.eps2:g}) "
            f"{record.get('protocol', '-'):18s} on {record.get('domain', k):>2} bins "
            f"{record['outcome']:7s} "
            f"{record.get('confirmed_error', float('nan')):.3f}",
            flush=True,
        )
    outcomes = {
        name: sum(r["outcome"] == name for r in records) for name in ("pass", "fail", "refused")
    }
    summary = {
        "command": "python benchmarks/hostile_pairs.py "
        + " ".join(
            f"--{name.replace('_', '-')} {value}"
            for name, value in vars(args).items()
            if not isinstance(value, list)
        ),
        "seconds": time.perf_counter() - start,
        "outcomes": outcomes,
        "records": records,
    }
    with open(args.output, "w", encoding="utf-8") as handle:
        json.dump(summary, handle, indent=1)
    print(json.dumps(outcomes), f"{summary['seconds']:.0f} s")
    return 1 if outcomes["fail"] else 0


if __name__ == "__main__":
    raise SystemExit(main())
