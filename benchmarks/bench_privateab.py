"""privateAB's LDP two-sample tests against the planner, at homogeneous points.

privateAB (PyPI 0.0.2; Mun, Kwak & Kim, "Minimax optimal two-sample testing under local
differential privacy", JMLR 2025) privatizes each user's item with its ``client`` class
and tests with a ``server`` class. Each of its tests runs here unmodified through those
classes, on the CPU, one torch thread:

* ``krr-chi``: k-ary randomized response (``client.release_private("genrr", …)``: one
  label a user) and its χ² statistic (``server_multinomial_genrr``);
* ``rappor-projchi``: RAPPOR-style bit flipping (``"bitflip"``: k bits a user, each
  flipped with chance 1/(1 + e^{ε/2})) and the projected χ² statistic
  (``server_multinomial_bitflip``: the mean difference projected off the all-ones vector,
  studentized by the pooled k×k covariance's Cholesky factor);
* with ``--tests``: ``lapu-projchi`` and ``disclapu-projchi`` (k Laplace or discrete
  Laplace coordinates a user, same server) and ``rappor-ell2`` (bit flipping and the ℓ2
  U-statistic, ``server_ell2``, which has only a permutation p-value: ``--permutations``).

The χ² and projected-χ² servers' p-value is their own ``release_p_value()``, the
asymptotic χ²(k − 1) tail; a test rejects when it is below 1/3. For each test and point
(k, α, ε1 = ε2 = ε) the search of ``bench_peers.smallest_n`` finds the least n a group at
which the test rejects Paninski's pair (``bench_peers.paninski``: uniform against the
perturbed uniform at TV = α) with power ≥ 2/3; a look stops once its outcome over
``--trials`` trials is decided. At that n the null (uniform in both groups) is run
``--trials`` times more: the size, which is 1/3 if the p-values are calibrated. Against
it: the planner's default plan for the same query (max of n1, n2, per coin) and the ratio
ours ÷ the best privateAB test.

Cost: a trial privatizes and tests 2n users, O(n·k) time and memory for every mechanism
(k-RR's client draws from an n×k probability matrix; bit flipping holds an n×k int64 array
a group, 64 bits a cell). A test is not run past ``--max-cells`` n·k cells a group or
``--max-seconds`` a point; one over a limit is skipped, with the reason, at every point
needing more users (smaller ε or α, larger k). The table shows "n (size)", ">n (time)"
(the largest n seen to fail before the time ran out), ">n_max" or "skip"; the ratio is
taken over the least n found, so it is None where no test finished. The limits are on wall
time, so where a search stops depends on the machine as well as the seed.

torch and privateAB are not project dependencies. What worked (Debian 12): ``apt-get
install python3-torch libopenblas0-serial`` (OpenBLAS: torch's generic BLAS made the k×k
covariance 35× slower), ``/usr/bin/python3 -m venv --system-site-packages VENV``, ``VENV/bin/pip
install 'numpy>=1.26,<2' -e .`` and ``VENV/bin/pip install --no-deps privateAB==0.0.2``.

Run: nice -n 19 VENV/bin/python benchmarks/bench_privateab.py [--trials 200] [--seed 1]
[--quick] [--alphas 0.1] [--tests krr-chi rappor-projchi] [--output FILE]
Check that it runs (k = 16, α = 0.1, ε = 4; seconds; one line and exit 0 without torch or
privateAB): VENV/bin/python benchmarks/bench_privateab.py --quick --trials 60
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_peers import N_MAX, ours, paninski, print_ratio_summary, smallest_n

from planner.files import write_atomically

POINTS_K = (16, 64, 256, 1024)
POINTS_ALPHA = (0.1,)
POINTS_EPS = (8.0, 4.0, 2.0, 1.0, 0.5)
"""Largest ε first: a test over its limits at ε is skipped at every smaller ε."""
LEVEL = 1 / 3
"""Reject when the p-value is below this."""


@dataclass(frozen=True)
class PeerTest:
    mechanism: str
    """``client.release_private``'s method name."""
    server: str
    """A class of ``privateAB.server``."""
    permutation: bool = False
    """``release_p_value_permutation(B)`` instead of the asymptotic ``release_p_value()``."""


TESTS = {
    "krr-chi": PeerTest("genrr", "server_multinomial_genrr"),
    "rappor-projchi": PeerTest("bitflip", "server_multinomial_bitflip"),
    "lapu-projchi": PeerTest("lapu", "server_multinomial_bitflip"),
    "disclapu-projchi": PeerTest("disclapu", "server_multinomial_bitflip"),
    "rappor-ell2": PeerTest("bitflip", "server_ell2", permutation=True),
}
DEFAULT_TESTS = ("krr-chi", "rappor-projchi")


class OverBudgetError(Exception):
    """A point's time ran out mid-search."""


@dataclass
class Runner:
    """One privateAB test at one ε: privatizes two groups and returns the server's p-value."""

    test: PeerTest
    eps: float
    permutations: int
    deadline: float
    looks: list[tuple[int, int, int, bool]] = field(default_factory=list)
    """(n, rejections, trials run, target reached) for each look of the search."""
    errors: int = 0
    """Trials where privateAB raised (counted as not rejecting)."""

    def __post_init__(self) -> None:
        import privateAB.server
        from privateAB.client import client

        self.client = client()
        self.server_class = getattr(privateAB.server, self.test.server)

    def p_value(self, data_1: Any, data_2: Any, k: int) -> float | None:
        import torch

        private_1 = self.client.release_private(self.test.mechanism, data_1, k, self.eps, "cpu")
        private_2 = self.client.release_private(self.test.mechanism, data_2, k, self.eps, "cpu")
        server = self.server_class(self.eps)
        try:
            server.load_private_data_multinomial(private_1, private_2, k, "cpu", "cpu")
            if self.test.permutation:
                p_value, _ = server.release_p_value_permutation(self.permutations)
            else:
                p_value, _ = server.release_p_value()
        except (RuntimeError, ValueError, torch.linalg.LinAlgError):
            # e.g. the projected χ²'s pooled covariance is singular while 2n ≤ k
            self.errors += 1
            return None
        p_value = float(p_value)
        return None if math.isnan(p_value) else p_value

    def rejections(
        self, pair: tuple[np.ndarray, np.ndarray], n: int, trials: int, rng: np.random.Generator
    ) -> tuple[int, int]:
        """(rejections, trials run), stopping once ≥ 2/3 of ``trials`` is settled."""
        k = len(pair[0])
        need = -(-2 * trials // 3)
        rejected = run = 0
        while run < trials and rejected < need and run - rejected <= trials - need:
            if time.perf_counter() > self.deadline:
                raise OverBudgetError
            data = [torch_draw(pmf, n, rng) for pmf in pair]
            p_value = self.p_value(*data, k)
            rejected += p_value is not None and p_value < LEVEL
            run += 1
        return rejected, run

    def bracket(self) -> tuple[int | None, int | None]:
        """The largest n seen to fail and the least seen to reach the target."""
        fails = [n for n, _, _, reached in self.looks if not reached]
        passes = [n for n, _, _, reached in self.looks if reached]
        return max(fails, default=None), min(passes, default=None)


def look(
    runner: Runner, k: int, alpha: float, n: int, trials: int, rng: np.random.Generator
) -> bool:
    """Power ≥ 2/3 at level 1/3 with n users a group (``bench_peers.smallest_n``'s look)."""
    rejected, run = runner.rejections(paninski(k, alpha), n, trials, rng)
    reached = 3 * rejected >= 2 * trials
    runner.looks.append((n, rejected, run, reached))
    return reached


def run_test(
    name: str, k: int, alpha: float, eps: float, args: argparse.Namespace, rng: np.random.Generator
) -> dict[str, Any]:
    started = time.perf_counter()
    runner = Runner(TESTS[name], eps, args.permutations, started + args.max_seconds)
    n_max = min(N_MAX, args.max_cells // k)
    row: dict[str, Any] = {"n": None, "size": None, "n_max": n_max}
    try:
        found = smallest_n(runner, k, alpha, args.trials, rng, look=look, n_max=n_max)
        if found is None:
            row["over"] = f"n > {n_max} (n·k > {args.max_cells:.0e} cells a group)"
        else:
            uniform = paninski(k, alpha)[0]
            row["n"] = found
            row["size"] = null_rate(runner, uniform, found, args.trials, rng)
    except OverBudgetError:
        low, high = runner.bracket()
        row["over"] = f"over {args.max_seconds:.0f} s"
        row["bracket"] = [low, high]
    row["errors"] = runner.errors
    row["looks"] = runner.looks
    row["seconds"] = round(time.perf_counter() - started, 1)
    return row


def torch_draw(pmf: np.ndarray, n: int, rng: np.random.Generator) -> Any:
    import torch

    return torch.from_numpy(rng.choice(len(pmf), size=n, p=pmf))


def null_rate(
    runner: Runner, uniform: np.ndarray, n: int, trials: int, rng: np.random.Generator
) -> float:
    """The rejection rate at level 1/3 with both groups uniform (all ``trials`` run)."""
    k = len(uniform)
    rejected = 0
    for _ in range(trials):
        p_value = runner.p_value(torch_draw(uniform, n, rng), torch_draw(uniform, n, rng), k)
        rejected += p_value is not None and p_value < LEVEL
    return rejected / trials


def dominated(over: list[tuple[int, float, float]], k: int, alpha: float, eps: float) -> str:
    """The point, if any, over a limit that needs no more users than this one."""
    for k0, alpha0, eps0 in over:
        if k0 <= k and alpha0 >= alpha and eps0 >= eps:
            return f"over a limit at k={k0}, α={alpha0}, ε={eps0:g}, which needs fewer users"
    return ""


def cell(row: dict[str, Any] | None) -> str:
    if row is None:
        return "skip"
    if row["n"] is not None:
        return f"{row['n']} ({row['size']:.2f})"
    if "bracket" not in row:
        return f">{row['n_max']}"
    low = row["bracket"][0]
    return f">{low} (time)" if low else "over (time)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--trials", type=int, default=200, help="trials a look, and for size")
    parser.add_argument("--seed", type=int, default=1, help="numpy's and torch's seed")
    parser.add_argument("--quick", action="store_true", help="k = 16, α = 0.1, ε = 4 only")
    parser.add_argument("--alphas", type=float, nargs="+", default=list(POINTS_ALPHA))
    parser.add_argument("--tests", nargs="+", choices=sorted(TESTS), default=DEFAULT_TESTS)
    parser.add_argument("--permutations", type=int, default=99, help="for rappor-ell2")
    parser.add_argument("--max-cells", type=float, default=4e7, help="n·k a group")
    parser.add_argument("--max-seconds", type=float, default=150.0, help="a test a point")
    parser.add_argument("--output", help="write the rows as JSON here")
    args = parser.parse_args()
    try:
        import privateAB
        import torch
    except ImportError as missing:
        print(f"skipped: privateAB's tests need torch and privateAB ({missing})")
        return
    torch.set_num_threads(1)
    torch.manual_seed(args.seed)
    warnings.filterwarnings("ignore", message="torch.cholesky is deprecated")
    rng = np.random.default_rng(args.seed)
    args.max_cells = int(args.max_cells)
    ks, alphas, epsilons = POINTS_K, args.alphas, POINTS_EPS
    if args.quick:
        ks, alphas, epsilons = (16,), (0.1,), (4.0,)
    meta = {
        "seed": args.seed,
        "trials": args.trials,
        "level": LEVEL,
        "tests": {name: vars(TESTS[name]) for name in args.tests},
        "permutations": args.permutations,
        "max_cells": args.max_cells,
        "max_seconds": args.max_seconds,
        "torch": torch.__version__,
        "privateAB": privateAB.__version__,
        "power_standard_error_at_2/3": round(math.sqrt(2 / 9 / args.trials), 4),
    }
    print(
        f"seed {args.seed}, {args.trials} trials a look and for the size (s.e. "
        f"{meta['power_standard_error_at_2/3']:.3f} at 2/3); n: users a group (size at n); "
        f"torch {torch.__version__}, privateAB {privateAB.__version__}"
    )
    names = list(args.tests)
    print(
        f"{'k':>5} {'α':>5} {'ε':>4} "
        + " ".join(f"{name:>16}" for name in names)
        + f" {'ours priv':>10} {'ours pub':>10}  ratio priv, pub"
    )
    rows: list[dict[str, Any]] = []
    over: dict[str, list[tuple[int, float, float]]] = {name: [] for name in names}
    for k in ks:
        for alpha in alphas:
            for eps in epsilons:
                results: dict[str, dict[str, Any] | None] = {}
                for name in names:
                    reason = dominated(over[name], k, alpha, eps)
                    if reason:
                        print(f"skip {name} at k={k}, α={alpha}, ε={eps:g}: {reason}", flush=True)
                        results[name] = None
                        continue
                    results[name] = run_test(name, k, alpha, eps, args, rng)
                    if results[name]["n"] is None:
                        over[name].append((k, alpha, eps))
                        print(
                            f"over {name} at k={k}, α={alpha}, ε={eps:g}: {results[name]['over']}",
                            flush=True,
                        )
                known = [r["n"] for r in results.values() if r and r["n"] is not None]
                best = min(known) if known else None
                private, public = ours(k, alpha, eps, "private"), ours(k, alpha, eps, "public")
                ratios = [
                    None if best is None or mine is None else mine / best
                    for mine in (private, public)
                ]
                rows.append(
                    {
                        "k": k,
                        "alpha": alpha,
                        "eps": eps,
                        **results,
                        "best": best,
                        "ours_private": private,
                        "ours_public": public,
                        "ratio_private": ratios[0],
                        "ratio_public": ratios[1],
                    }
                )
                shown = ", ".join("—" if r is None else f"{r:.3g}" for r in ratios)
                print(
                    f"{k:>5} {alpha:>5} {eps:>4g} "
                    + " ".join(f"{cell(results[name]):>16}" for name in names)
                    + f" {private or '—':>10} {public or '—':>10}  {shown}",
                    flush=True,
                )
                if args.output:
                    write_atomically(
                        args.output, json.dumps({"meta": meta, "rows": rows}, indent=1)
                    )
    print_ratio_summary(rows, "best privateAB test")


if __name__ == "__main__":
    main()
