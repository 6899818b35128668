"""Calibration on a Dask cluster: speed-up on the quick grid, and the full calibration's time.

Run: python benchmarks/bench_cluster.py [--trials 500] [--repeats 3] [--estimate]
[--skip-speedup] [--full-row SETTING:K ...]

1. Speed-up. The quick grid (``planner calibrate --quick``: k ∈ {16, 64}, α = 0.25,
   ε_strong = 1, ε_weak/ε_strong = 0.5, all five settings: 10 points) through
   ``planner.calibration.run.calibrate`` on one local worker (in process) and on a
   ``distributed.LocalCluster`` of 2 single-threaded worker processes reached through its
   scheduler's TCP address, exactly as ``planner calibrate --scheduler`` does. Both are
   warmed up first (a cluster's workers are long-lived); the median of ``--repeats`` runs
   of each is reported, with the load average, and the results are checked identical.
2. ``--estimate``: the full calibration's wall time on N cluster cores. One grid point per
   (setting, k) of each setting's own grid (``planner.calibration.grid.default_axes``: the middle
   α, ε_strong and ratio), at the README's trial counts (1000 for the local settings, 500
   otherwise), each timed on its worker; a node's time depends on the setting and k (the
   fast path costs O(k) per trial whatever n is), so the grid's total is Σ over (setting,
   k) of time × nodes at that k, and N cores need about max(total / N, longest node) plus
   at most one longest node for the last tasks' imbalance.
"""

from __future__ import annotations

import argparse
import logging
import os
import statistics
import time
from typing import Any

from planner.calibration.grid import GridPoint, calibrate_point, default_axes, grid_points
from planner.calibration.run import calibrate, point_cost
from planner.cluster import ClusterExecutor, connect, longest_first
from planner.constants import default_constants
from planner.formulas.settings import ALL_SETTINGS

QUICK_AXES: dict[str, list[float]] = {
    "k": [16, 64],
    "alpha": [0.25],
    "eps_strong": [1.0],
    "eps_ratio": [0.5],
}
"""``planner calibrate --quick``'s grid (planner/cli/calibrating.py)."""
FULL_TRIALS = {"local-private": 1000, "local-public": 1000}
"""The README's full-calibration commands: 1000 trials for the local settings, else 500."""
SEED = 20261126


def load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f}, {five:.2f}, {fifteen:.2f} ({os.cpu_count()} cores)"


def timed_point(
    point: GridPoint, trials: int, seed: int, extra: dict[str, Any]
) -> tuple[float, float]:
    """One grid point's calibration, timed where it runs (on a worker): wall and CPU
    seconds (the CPU time of the task's thread: what an idle core's wall time would be,
    whatever else the machine runs)."""
    start, cpu = time.perf_counter(), time.thread_time()
    calibrate_point(point, trials, seed, extra)
    return time.perf_counter() - start, time.thread_time() - cpu


def speedup(client: Any, trials: int, repeats: int) -> None:
    settings = [setting.key for setting in ALL_SETTINGS]
    executor = ClusterExecutor(client)

    def local() -> list[Any]:
        return calibrate(settings, trials=trials, seed=SEED, axes=QUICK_AXES, workers=1)

    def cluster() -> list[Any]:
        return calibrate(settings, trials=trials, seed=SEED, axes=QUICK_AXES, executor=executor)

    start = time.perf_counter()
    cold = cluster()  # the workers import the package and build their caches
    print(f"first run on fresh workers: {time.perf_counter() - start:.2f} s")
    warm = local()
    assert warm == cold, "the cluster's constants differ from one local worker's"

    def cpu_seconds(label: str) -> float:  # CPU time of the processes doing the work
        if label == "1 local worker":
            return time.process_time()
        return sum(client.run(time.process_time).values())

    times: dict[str, list[float]] = {"1 local worker": [], "2-process cluster": []}
    cores: dict[str, list[float]] = {label: [] for label in times}
    for _ in range(repeats):
        for label, run in (("1 local worker", local), ("2-process cluster", cluster)):
            cpu, start = cpu_seconds(label), time.perf_counter()
            result = run()
            times[label].append(time.perf_counter() - start)
            cores[label].append((cpu_seconds(label) - cpu) / times[label][-1])
            assert result == warm
    print(f"quick grid ({len(warm)} points, {trials} trials per family per check), {load()}:")
    for label, values in times.items():
        shown = ", ".join(f"{value:.2f}" for value in values)
        print(
            f"  {label:18s} median {statistics.median(values):6.2f} s  ({shown}); "
            f"cores obtained {statistics.median(cores[label]):.2f}"
        )
    ratio = statistics.median(times["1 local worker"]) / statistics.median(
        times["2-process cluster"]
    )
    print(f"  speed-up {ratio:.2f}x; results identical: yes")
    print(
        "  (cores obtained: the workers' CPU seconds per wall second. Below 1 and 2, other "
        "work took the rest: Linux shares CPU between sessions (autogroup), so a session's "
        "extra processes gain nothing while another session keeps both cores busy.)"
    )
    work = {
        label: statistics.median(times[label]) * statistics.median(cores[label]) for label in times
    }
    print(
        f"  CPU seconds per run: 1 local worker {work['1 local worker']:.2f}, cluster "
        f"{work['2-process cluster']:.2f} (its workers' event loops, transfers and contention)"
    )
    project(settings, trials)


def project(settings: list[str], trials: int) -> None:
    """What 2 idle cores would give: the points' CPU times (measured here, one by one)
    scheduled on 2 workers in the order calibrate sends them (costliest first by
    ``planner.calibration.run.point_cost``), each worker taking the next point when free. A
    projection
    (before the cluster's own CPU costs, printed above), not a measurement."""
    table = default_constants()
    points = [point for setting in settings for point in grid_points(setting, QUICK_AXES)]
    cpu = [
        timed_point(point, trials, SEED, table.for_setting(point.setting).tester_extras)[1]
        for point in points
    ]
    free = [0.0, 0.0]
    for index in longest_first([point_cost(point, trials) for point in points]):  # calibrate's
        free[free.index(min(free))] += cpu[index]
    makespan = max(free)
    print(
        f"  projection for 2 idle cores: the points' CPU times sum to {sum(cpu):.2f} s "
        f"(longest {max(cpu):.2f} s); on 2 workers, costliest first, they end after "
        f"{makespan:.2f} s: "
        f"{sum(cpu) / makespan:.2f}x before the cluster's own costs"
    )


def estimate(client: Any) -> None:
    table = default_constants()
    samples = []
    for setting in ALL_SETTINGS:
        axes = default_axes(setting.key)
        middle = {name: values[len(values) // 2] for name, values in axes.items()}
        for k in axes["k"]:
            point = grid_points(setting.key, {**{n: [v] for n, v in middle.items()}, "k": [k]})[0]
            nodes = len(grid_points(setting.key, {**axes, "k": [k]}))
            trials = FULL_TRIALS.get(setting.key, 500)
            samples.append((point, nodes, trials, table.for_setting(setting.key).tester_extras))
    print(f"timing {len(samples)} sample nodes on the cluster ({load()}) ...", flush=True)
    start = time.perf_counter()
    futures = client.map(
        timed_point,
        [p for p, _, _, _ in samples],
        [t for _, _, t, _ in samples],
        [SEED] * len(samples),
        [e for _, _, _, e in samples],
        pure=False,
    )
    seconds = client.gather(futures)
    print(f"sampled in {time.perf_counter() - start:.0f} s wall ({load()})")
    total = 0.0
    longest = 0.0
    print(
        f"  {'setting':16s} {'k':>5s} {'nodes':>5s} {'wall s':>8s} {'CPU s':>8s} {'nodes×CPU':>9s}"
    )
    for (point, nodes, _, _), (wall, cpu) in zip(samples, seconds, strict=True):
        total += nodes * cpu
        longest = max(longest, cpu)
        print(
            f"  {point.setting:16s} {point.k:5d} {nodes:5d} {wall:8.1f} {cpu:8.1f} "
            f"{nodes * cpu:9.0f}"
        )
    count = sum(nodes for _, nodes, _, _ in samples)
    print(
        f"full calibration: {count} nodes, {total / 3600:.2f} core-hours of CPU; "
        f"longest node {longest / 60:.1f} min (times on idle cores)"
    )
    for cores in (1, 2, 4, 8, 16, 32, 64, 128):
        low = max(total / cores, longest)
        print(f"  {cores:4d} cores: about {low / 60:7.1f} to {(low + longest) / 60:7.1f} min")


def full_row(client: Any, row: str) -> None:
    """Every node of one (setting, k) timed: is the middle node's time the row's mean?"""
    setting, k = row.split(":")
    axes = {**default_axes(setting), "k": [int(k)]}
    points = grid_points(setting, axes)
    middle = grid_points(
        setting, {name: [values[len(values) // 2]] for name, values in axes.items()}
    )[0]
    trials = FULL_TRIALS.get(setting, 500)
    extra = default_constants().for_setting(setting).tester_extras
    futures = client.map(
        timed_point,
        points,
        [trials] * len(points),
        [SEED] * len(points),
        [extra] * len(points),
        pure=False,
    )
    cpu = [spent for _, spent in client.gather(futures)]
    mid = cpu[points.index(middle)]
    print(
        f"{setting} k = {k}: all {len(points)} nodes {sum(cpu):.0f} CPU s (each "
        f"{min(cpu):.1f} to {max(cpu):.1f}); the middle node × {len(points)} = "
        f"{mid * len(points):.0f} CPU s ({load()})"
    )


CLUSTER_SETTINGS: dict[str, object] = {
    "distributed.scheduler.worker-saturation": 1.0,
    "distributed.worker.profile.enabled": False,
    "distributed.admin.system-monitor.interval": "2s",
    "distributed.admin.tick.interval": "200ms",
}
"""Settings for CPU-bound tasks of seconds (README, Running on a cluster): one task per
worker thread at a time (no second task queued behind a long one), no sampling profiler
and fewer monitor wake-ups competing with the task for the worker process's GIL. On this
machine: 1.64× against 1.55× with dask's defaults (3.64 s against 3.82 s)."""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=500, help="quick grid: trials per check")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--estimate", action="store_true", help="also time the full grid")
    parser.add_argument("--skip-speedup", action="store_true")
    parser.add_argument(
        "--full-row",
        metavar="SETTING:K",
        action="append",
        default=[],
        help="time every node of one (setting, k), to check the sample (repeatable)",
    )
    parser.add_argument(
        "--dask-defaults",
        action="store_true",
        help="run the cluster with dask's default settings, not CLUSTER_SETTINGS",
    )
    arguments = parser.parse_args()
    import dask
    import distributed

    print(load())
    settings = {} if arguments.dask_defaults else CLUSTER_SETTINGS
    print(f"cluster settings: {settings or 'dask defaults'}")
    dask.config.set(settings)  # before the cluster starts: its processes inherit them
    cluster = distributed.LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        dashboard_address="127.0.0.1:0",  # not 8787: a real cluster may hold it
        silence_logs=logging.ERROR,
    )
    client = connect(cluster.scheduler_address)
    try:
        if not arguments.skip_speedup:
            speedup(client, arguments.trials, arguments.repeats)
        if arguments.estimate:
            estimate(client)
        for row in arguments.full_row:
            full_row(client, row)
    finally:
        client.close()
        cluster.close()


if __name__ == "__main__":
    main()
