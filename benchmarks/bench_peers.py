"""Users per group against straightforward local baselines, at homogeneous points.

For each point (k, α, ε with ε1 = ε2 = ε) it finds, for k-RR, for bit flipping (unary
encoding, RAPPOR's) and for optimized unary encoding, each with the two-channel closeness
statistic of ``validators/local_channels.py``,
the smallest n a group at which the test reaches power ≥ 2/3 at significance 1/3 on the
perturbed-uniform pair (Paninski's, TV = α): the threshold is the null statistic's 2/3
quantile at that n (simulated under the uniform pmf), as a peer test with a calibrated
p-value would do. That n is set against the planner's default plan (max of n1, n2 at the
same query, per coin) as a ratio: ours ÷ the best baseline's, for each coin.

A baseline's figure is one estimate on one pair, where a plan must hold for all 12
families with confidence; read a ratio near 1 as a tie. Extrapolates nothing: every n is
simulated.

Run: python benchmarks/bench_peers.py [--trials 1000] [--seed 1] [--quick] [--max-k 1024]
"""

from __future__ import annotations

import argparse
import json
import math
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from planner import Query, Setting
from planner.inputs import InputError
from planner.plan import plan
from planner.validators.local_channels import AffineChannel, Randomizer, closeness_statistic

POINTS_K = (16, 64, 256, 1024, 4096)
POINTS_ALPHA = (0.05, 0.1, 0.3)
POINTS_EPS = (0.1, 0.5, 1.0, 2.0, 4.0, 8.0, 20.0)
WIDTHS = (5, 5, 5, 9, 9, 9, 10, 10)
N_MAX = 10**7
"""Above this many users a group a baseline is reported as ``> N_MAX`` (not simulated)."""


def paninski(k: int, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    uniform = np.full(k, 1.0 / k)
    signs = np.where(np.arange(k) % 2 == 0, 1.0, -1.0)
    if k % 2:
        signs[-1] = 0.0
    return uniform, uniform * (1 + 2 * alpha * signs * k / (2 * (k // 2)))


def reaches(
    channel: AffineChannel, k: int, alpha: float, n: int, trials: int, rng: np.random.Generator
) -> bool:
    """Power ≥ 2/3 at significance 1/3 with n users a group (threshold: the null's 2/3
    quantile)."""
    uniform, far = paninski(k, alpha)
    null = closeness_statistic(
        channel.fast_counts(uniform, n, trials, rng),
        n,
        channel,
        channel.fast_counts(uniform, n, trials, rng),
        n,
        channel,
    )
    threshold = float(np.quantile(null, 2 / 3))
    alternative = closeness_statistic(
        channel.fast_counts(uniform, n, trials, rng),
        n,
        channel,
        channel.fast_counts(far, n, trials, rng),
        n,
        channel,
    )
    return float((alternative > threshold).mean()) >= 2 / 3


def smallest_n(
    channel: Any,
    k: int,
    alpha: float,
    trials: int,
    rng: np.random.Generator,
    *,
    look: Callable[..., bool] = reaches,
    n_max: int = N_MAX,
) -> int | None:
    """The least n (to about 3 %) reaching the target; None above ``n_max``.

    ``look(channel, k, alpha, n, trials, rng)`` says whether n users a group reach it:
    :func:`reaches` for this file's channels, another test's own for other peers
    (``bench_privateab.py``)."""
    low, high = 2, 16
    while not look(channel, k, alpha, high, trials, rng):
        low, high = high, high * 4
        if high > n_max:
            return None
    while high > low * 1.03 + 1:
        middle = int(math.sqrt(low * high))
        if look(channel, k, alpha, middle, trials, rng):
            high = middle
        else:
            low = middle
    return high


def print_ratio_summary(rows: list[dict[str, Any]], against: str) -> None:
    """Per coin, the median and range of the rows' ``ratio_private`` / ``ratio_public``
    (ours ÷ ``against``), over the rows that have one."""
    for coin in ("private", "public"):
        ratios = sorted(row[f"ratio_{coin}"] for row in rows if row[f"ratio_{coin}"] is not None)
        if ratios:
            print(
                f"{coin} coin, ours ÷ {against}: median {ratios[len(ratios) // 2]:.3g}, "
                f"range {ratios[0]:.3g} – {ratios[-1]:.3g} ({len(ratios)} points)"
            )


def ours(k: int, alpha: float, eps: float, coin: str) -> int | None:
    try:
        made = plan(Query(Setting("local", coin), k, alpha, eps, eps))
    except InputError:
        return None
    return max(made.n_users_group1, made.n_users_group2)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--trials", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--quick", action="store_true", help="k ≤ 256, α = 0.1 only")
    parser.add_argument("--output", help="write the rows as JSON here")
    parser.add_argument("--max-k", type=int, default=max(POINTS_K), help="skip larger k")
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    ks = [k for k in POINTS_K if k <= (256 if args.quick else args.max_k)]
    alphas = (0.1,) if args.quick else POINTS_ALPHA
    rows = []
    print(f"seed {args.seed}, {args.trials} trials a look; n: users a group")
    heading = ("k", "α", "ε", "k-RR", "unary", "OUE", "ours priv", "ours pub")
    widths = zip(heading, WIDTHS, strict=True)
    print(" ".join(f"{name:>{width}}" for name, width in widths), "ratio priv, pub")
    for k in ks:
        for alpha in alphas:
            for eps in POINTS_EPS:
                started = time.perf_counter()
                found = {
                    randomizer.value: smallest_n(
                        AffineChannel(randomizer, k, eps), k, alpha, args.trials, rng
                    )
                    for randomizer in Randomizer
                }
                known = [n for n in found.values() if n is not None]
                best = min(known) if known else None
                private, public = ours(k, alpha, eps, "private"), ours(k, alpha, eps, "public")
                ratios = {
                    coin: None if best is None or mine is None else mine / best
                    for coin, mine in (("private", private), ("public", public))
                }
                rows.append(
                    {
                        "k": k,
                        "alpha": alpha,
                        "eps": eps,
                        **found,
                        "ours_private": private,
                        "ours_public": public,
                        "ratio_private": ratios["private"],
                        "ratio_public": ratios["public"],
                        "seconds": round(time.perf_counter() - started, 2),
                    }
                )
                shown = ", ".join("—" if r is None else f"{r:.3g}" for r in ratios.values())
                cells = (
                    k,
                    alpha,
                    eps,
                    found["k-rr"],
                    found["unary"],
                    found["oue"],
                    private,
                    public,
                )
                print(
                    " ".join(
                        f"{'—' if cell is None else cell:>{width}}"
                        for cell, width in zip(cells, WIDTHS, strict=True)
                    ),
                    shown,
                    flush=True,
                )
    print_ratio_summary(rows, "best baseline")
    if args.output:
        with open(args.output, "w", encoding="utf-8") as file:
            json.dump(rows, file, indent=1)


if __name__ == "__main__":
    main()
