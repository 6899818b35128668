"""Validator speed: trials/s at k = 1024 (fast path), n = 1e4 vs 1e9, fast vs user at 1e6.

Run: python benchmarks/bench_validators.py
"""

from __future__ import annotations

import time

import numpy as np

from planner.formulas.settings import ALL_SETTINGS, Model
from planner.inputs import Query
from planner.testers import build_tester
from planner.validators.instances import build
from planner.validators.protocol import SimulationPath, simulate


def tester_for(setting, k: int):
    query = Query(setting, k, 0.1, 1.0, 0.25, 1e-6 if setting.model is Model.SHUFFLE else None)
    return build_tester(query, L=16, hashes=1)


def seconds_per_trial(
    tester, instance, n1: int, n2: int, trials: int, path: SimulationPath
) -> float:
    rng = np.random.default_rng(0)
    simulate(tester, instance.p, instance.q, n1, n2, min(trials, 5), rng, path)  # warm up
    start = time.perf_counter()
    simulate(tester, instance.p, instance.q, n1, n2, trials, rng, path)
    return (time.perf_counter() - start) / trials


def main() -> None:
    k = 1024
    instance = build("paninski", k, 0.1)
    print(f"fast path at k = {k} (Paninski), trials per second:")
    for setting in ALL_SETTINGS:
        per_trial = seconds_per_trial(
            tester_for(setting, k), instance, 50_000, 200_000, 400, SimulationPath.FAST
        )
        print(f"  {setting.key:16s} {1 / per_trial:10.0f} trials/s")
    print("fast path, seconds per trial at n = 1e4 vs n = 1e9 (k = 1024):")
    for setting in ALL_SETTINGS:
        tester = tester_for(setting, k)
        small = seconds_per_trial(tester, instance, 10_000, 10_000, 200, SimulationPath.FAST)
        large = seconds_per_trial(tester, instance, 10**9, 10**9, 200, SimulationPath.FAST)
        print(
            f"  {setting.key:16s} {small * 1e3:8.3f} ms  vs {large * 1e3:8.3f} ms  "
            f"(ratio {large / small:.2f})"
        )
    print("n = 1e6 per group, k = 1024: user-level vs fast, seconds per trial:")
    for setting in ALL_SETTINGS:
        tester = tester_for(setting, k)
        user = seconds_per_trial(tester, instance, 10**6, 10**6, 2, SimulationPath.USER)
        fast = seconds_per_trial(tester, instance, 10**6, 10**6, 200, SimulationPath.FAST)
        print(
            f"  {setting.key:16s} user {user:8.3f} s  fast {fast * 1e3:8.3f} ms  "
            f"speed-up {user / fast:8.0f}×"
        )


if __name__ == "__main__":
    main()
