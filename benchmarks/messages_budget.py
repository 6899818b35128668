"""What a budget of messages per user would cost in users, for the multi-message protocol.

Over the seeded random shuffle queries of ``shuffle_messages.py`` (k log-uniform in
[16, 4096], α uniform in [0.05, 0.5], ε1 and ε2 each log-uniform in [0.1, 10]; δ = 10⁻⁶),
for a budget M of messages per user (each group's), the fewest users in all that the
private-coin multi-message protocol (``shuffle-private+messages``) reaches within M:

* over the share θ of each group's ε spent on the estimate's noise, θ ∈ {0.3, …, 0.9}
  (the planner runs θ = 0.8): the estimate's law is a curator's release at θ·ε, so its
  users are the ``central+channels`` plan's at (θ·ε1, θ·ε2), and each group's flood is
  ``best_flood`` at its own (ε_g, δ, e^{−θε_g/2});
* each group then raised to the users that bring its messages per user,
  1 + k·(2p/(1 − p) + 2·E F)/n_g, down to M where its plan's are above.

Raising a group above its plan is not validated here, so the figures are an estimate in
the protocol's favour: what a budget costs at least, by this route. The ratio is to the
``central+channels`` plan at (ε1, ε2), the curator-histogram baseline of the issue; the
Poisson protocol's own plan (``shuffle-private`` alone) is listed beside it, with its
messages. Plans only, no simulation; one line per query, then the medians. Usage::

    python benchmarks/messages_budget.py --queries 200 --seed 1
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_curator_baseline import DELTA, draw_queries

from planner.formulas.correlated_noise import flood_option, noise_messages_per_bin
from planner.formulas.settings import Coin, Model, Setting
from planner.inputs import Query
from planner.plan import plan

CURATOR = Setting(Model.CENTRAL, Coin.PRIVATE, "channels", model2=Model.CENTRAL)
THETAS = (0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)
BUDGETS = (5.0, 10.0, 20.0, 40.0, math.inf)


def noise_per_bin(eps: float, theta: float, cache: dict[tuple[float, float], float]) -> float:
    """One bin's expected noise messages from a group at (ε, δ) and θ (∞ without a flood)."""
    if (eps, theta) not in cache:
        try:
            option = flood_option(eps, DELTA, theta)
            cache[eps, theta] = float(noise_messages_per_bin(option.p, option.flood.mean))
        except ValueError:
            cache[eps, theta] = math.inf
    return cache[eps, theta]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    cache: dict[tuple[float, float], float] = {}
    ratios: dict[float, list[float]] = {budget: [] for budget in BUDGETS}
    poisson_ratios, poisson_messages = [], []
    for draw in draw_queries(args.queries, args.seed):
        eps = (draw.eps1, draw.eps2)
        curator = plan(Query(CURATOR, draw.k, draw.alpha, *eps)).total_users
        best = {budget: math.inf for budget in BUDGETS}
        for theta in THETAS:
            sized = plan(Query(CURATOR, draw.k, draw.alpha, theta * eps[0], theta * eps[1]))
            users = [group.n_users for group in sized.groups]
            noise = [draw.k * noise_per_bin(e, theta, cache) for e in eps]
            for budget in BUDGETS:
                if budget == math.inf:
                    total = sum(users) if all(math.isfinite(x) for x in noise) else math.inf
                else:
                    total = sum(
                        max(n, math.ceil(x / (budget - 1))) if math.isfinite(x) else math.inf
                        for n, x in zip(users, noise, strict=True)
                    )
                best[budget] = min(best[budget], total)
        poisson = plan(
            Query(Setting(Model.SHUFFLE, Coin.PRIVATE), draw.k, draw.alpha, *eps, DELTA),
            fallback=False,
        )
        poisson_ratios.append(poisson.total_users / curator)
        poisson_messages.append(max(g.messages_per_user or 1.0 for g in poisson.groups))
        for budget in BUDGETS:
            ratios[budget].append(best[budget] / curator)
        print(
            f"k={draw.k:5d} α={draw.alpha:.3f} ε=({eps[0]:.3g}, {eps[1]:.3g}) "
            + " ".join(f"M={budget:g}: {best[budget] / curator:.2f}" for budget in BUDGETS)
            + f"  Poisson {poisson_ratios[-1]:.2f} ({poisson_messages[-1]:.1f} messages)",
            flush=True,
        )
    print(f"\n{args.queries} queries, users ÷ the curator-histogram plan (central+channels):")
    for budget in BUDGETS:
        values = ratios[budget]
        print(
            f"  multi-message within {budget:g} messages a user: median "
            f"{statistics.median(values):.2f}, 90th percentile "
            f"{statistics.quantiles(values, n=10)[-1]:.2f}, max {max(values):.2f}"
        )
    print(
        f"  Poisson protocol alone: median {statistics.median(poisson_ratios):.2f}, max "
        f"{max(poisson_ratios):.2f}; its messages a user median "
        f"{statistics.median(poisson_messages):.1f}"
    )


if __name__ == "__main__":
    main()
