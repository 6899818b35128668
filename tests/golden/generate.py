"""The golden file: 500 random queries through plan, compare, solve, sweep and batch.

``python -m tests.golden.generate`` (from the repository root) draws the queries with a
fixed seed, runs each through :mod:`planner.api` and the CLI's ``planner batch … --format
json``, and writes every numeric field of every JSON document to
``tests/golden/golden.json``, beside the inputs that produced it. ``tests/test_golden.py``
re-runs the stored inputs and compares. Regenerate only when a change is *meant* to move
numbers (a recalibration), in that same commit.

Every query goes through ``plan`` (with its allocation: the paper's rule, cost or fixed-n2),
``compare`` and the batch file (as a plan scenario); one in three also through ``solve``
(for one unknown; every second of those also as a batch solve scenario) and another one in
three through a 3-value ``sweep`` — the paths a query takes are stored with it. A solve
plans ~60 points and a shuffle allocation sizes 64 family members, each at its own
exact-noise search: the whole takes a few minutes, run on up to two processes (``run``).
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import multiprocessing
import os
import sys
import tempfile
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

GOLDEN = Path(__file__).with_name("golden.json")
SEED = 20261212
QUERIES = 500
SETTINGS = ("local-private", "local-public", "shuffle-private", "shuffle-public", "central")
SCHEMA = "tests.golden/1"
DELTAS = (1e-10, 1e-9, 1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3)
"""δ of the shuffle queries: the covered range's decades. A few values, as deployments
use: each new δ costs exact-μ root-finds at every calibration node (cached in-process)."""
Leaves = dict[str, int | float]
"""A document's numeric fields by path (``groups/0/n_users``); an error: ``{"error": 1}``
under the error's class name (``error/NotCoveredError``)."""


def _sig(value: float, digits: int = 4) -> float:
    """``value`` to ``digits`` significant digits (readable inputs; any float would do)."""
    return float(f"{value:.{digits}g}")


def _log_uniform(rng: np.random.Generator, low: float, high: float) -> float:
    return float(math.exp(rng.uniform(math.log(low), math.log(high))))


def draw_queries(seed: int = SEED, count: int = QUERIES) -> list[dict[str, Any]]:
    """``count`` random queries across the five settings: mostly inside the covered
    region, one in five over the wide accepted ranges (refusals and edges included)."""
    rng = np.random.default_rng(seed)
    queries = []
    for index in range(count):
        setting = SETTINGS[index % len(SETTINGS)] if index < 50 else str(rng.choice(SETTINGS))
        model, coin = setting.split("-") if "-" in setting else (setting, "private")
        wide = rng.random() < 0.2
        k = round(_log_uniform(rng, 2, 10**5) if wide else _log_uniform(rng, 16, 4096))
        alpha = _sig(_log_uniform(rng, 0.01, 1.0) if wide else _log_uniform(rng, 0.05, 0.5))
        eps_strong = _sig(_log_uniform(rng, 1e-3, 15) if wide else _log_uniform(rng, 0.25, 3))
        ratio = _sig(_log_uniform(rng, 1e-3, 1) if wide else _log_uniform(rng, 0.02, 1))
        if model == "shuffle":  # tiny ε means huge μ: each exact-μ root-find costs ~0.1 s
            eps_strong = max(eps_strong, 0.05)
        eps_weak = _sig(max(eps_strong * ratio, 1e-4 if model != "shuffle" else 0.02))
        eps1, eps2 = (eps_strong, eps_weak) if rng.random() < 0.7 else (eps_weak, eps_strong)
        delta = float(rng.choice(DELTAS)) if model == "shuffle" else None
        if model != "shuffle" and rng.random() < 0.1:
            delta = 1e-6  # accepted and ignored, with a warning
        beta = 1 / 3 if rng.random() < 0.5 else _sig(_log_uniform(rng, 0.005, 0.45), 3)
        accounting = "paper" if model == "shuffle" and rng.random() < 0.2 else "exact"
        # a shuffle allocation under the paper accounting locates each of its 64 family
        # members on the grid with an exact-ε root-find (seconds): exact accounting only
        paper_share = 8 if model == "shuffle" else 4  # a shuffle family: 64 noise searches
        allocation = str(rng.choice(["paper"] * paper_share + ["cost", "fixed-n2"]))
        if accounting == "paper":
            allocation = "paper"
        # solving a shuffle query for ε2 costs an exact-μ root-find per bisection step
        unknowns = ["n1", "n2", "alpha", "eps2"]
        weights = [0.3, 0.3, 0.3, 0.1] if model == "shuffle" else [0.25] * 4
        unknown = str(rng.choice(unknowns, p=weights))
        queries.append(
            {
                "model": model,
                "coin": coin,
                "k": k,
                "alpha": alpha,
                "eps1": eps1,
                "eps2": eps2,
                "delta": delta,
                "beta": beta,
                "accounting": accounting,
                "allocation": allocation,
                "cost1": _sig(_log_uniform(rng, 0.1, 10), 2),
                "cost2": _sig(_log_uniform(rng, 0.1, 10), 2),
                "n2_fraction": _sig(_log_uniform(rng, 0.3, 3), 3),
                "unknown": unknown,
                "n_fraction": _sig(_log_uniform(rng, 0.5, 3), 3),
                "swept": str(rng.choice(["k", "alpha", "eps1", "eps2", "delta", "beta"])),
                "sweep_factors": [_sig(_log_uniform(rng, 0.3, 3), 3) for _ in range(2)],
                "paths": ["plan", "compare", *(("solve",), ("sweep",), ())[index % 3]],
            }
        )
    return queries


def numeric_leaves(document: Any, prefix: str = "") -> Leaves:
    """Every int and float of a JSON document by its path (bools and text left out)."""
    leaves: Leaves = {}
    if isinstance(document, dict):
        items: Iterator[tuple[Any, Any]] = iter(document.items())
    elif isinstance(document, list):
        items = iter(enumerate(document))
    else:
        if isinstance(document, (int, float)) and not isinstance(document, bool):
            leaves[prefix] = document
        return leaves
    for key, value in items:
        leaves.update(numeric_leaves(value, f"{prefix}/{key}" if prefix else str(key)))
    return leaves


def _outcome(call: Callable[[], dict[str, Any]]) -> Leaves:
    """The numeric fields of ``call()``'s document, or its input error's class name."""
    from planner.inputs import InputError

    try:
        return numeric_leaves(call())
    except InputError as error:
        return {f"error/{type(error).__name__}": 1}


def _plan_inputs(query: dict[str, Any]) -> dict[str, Any]:
    return {
        name: query[name]
        for name in ("model", "coin", "k", "alpha", "eps1", "eps2", "delta", "beta", "accounting")
    }


def plan_case(query: dict[str, Any]) -> Leaves:
    """``planner plan --json`` (no simulation: outside the covered region it refuses)."""
    from planner import api

    extra: dict[str, Any] = {"allocation": query["allocation"]}
    if query["allocation"] == "cost":
        extra.update(cost1=str(query["cost1"]), cost2=str(query["cost2"]))
    if query["allocation"] == "fixed-n2":
        extra["n2"] = query["fixed_n2"]
    return _outcome(lambda: api.plan_document(**_plan_inputs(query), **extra, simulation_budget=0))


def compare_case(query: dict[str, Any]) -> Leaves:
    """``planner compare --json`` with the query's shared inputs."""
    from planner import api

    inputs = _plan_inputs(query)
    del inputs["model"], inputs["coin"]
    if query["model"] != "shuffle":
        inputs["delta"] = None
    return _outcome(lambda: api.compare_document(**inputs))


def solve_case(query: dict[str, Any]) -> Leaves:
    """``planner solve --json`` with the query's unknown left out."""
    from planner import api

    inputs = {**_plan_inputs(query), "n1": query["solve_n1"], "n2": query["solve_n2"]}
    inputs[query["unknown"]] = None
    return _outcome(lambda: api.solve_document(**inputs))


def sweep_case(query: dict[str, Any]) -> Leaves:
    """``planner sweep --format json``: the query's setting, one parameter at 3 values."""
    from planner import api

    inputs = _plan_inputs(query)
    setting = inputs.pop("model") + ("" if query["model"] == "central" else "-" + inputs["coin"])
    del inputs["coin"]
    name = query["swept"]
    value = inputs[name] if inputs[name] is not None else 1e-6
    values = [value, *(value * factor for factor in query["sweep_factors"])]
    if name == "k":
        values = [round(v) for v in values]
    if name == "delta":  # neighbouring values of DELTAS (δ = 1e-6 where it is ignored)
        at = DELTAS.index(value) if value in DELTAS else DELTAS.index(1e-6)
        at = min(max(at, 1), len(DELTAS) - 2)
        values = list(DELTAS[at - 1 : at + 2])
    inputs[name] = values
    return _outcome(lambda: api.sweep_document(settings=[setting], **inputs))


BATCH_SOLVE_EVERY = 6
"""Every query is a plan scenario of the batch; every sixth also a solve scenario (one of
those ``solve_case`` checks: the batch adds its rows' assembly)."""


def batch_scenarios(queries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each query as a plan scenario, and some as a solve scenario (unknown left out)."""
    scenarios = []
    for index, query in enumerate(queries):
        plan = {name: value for name, value in _plan_inputs(query).items() if value is not None}
        scenarios.append({"name": f"plan {index}", **plan})
        if index % BATCH_SOLVE_EVERY == 0:
            solve = {**plan, "n1": query["solve_n1"], "n2": query["solve_n2"]}
            del solve[query["unknown"]]
            scenarios.append({"name": f"solve {index}", **solve})
    return scenarios


def batch_case(queries: list[dict[str, Any]]) -> Leaves:
    """``planner batch FILE --format json`` on every query's two scenarios (one file)."""
    from planner.cli import main

    fields = ("name", "model", "coin", "k", "alpha", "eps1", "eps2", "delta", "beta")
    fields += ("accounting", "n1", "n2")
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "scenarios.toml"
        lines = []
        for scenario in batch_scenarios(queries):
            lines.append("[[scenario]]")
            lines.extend(
                f"{name} = {json.dumps(scenario[name])}" for name in fields if name in scenario
            )
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            code = main(["batch", str(path), "--format", "json"])
    if code != 0:
        raise RuntimeError(f"planner batch exited {code}")
    return numeric_leaves(json.loads(out.getvalue()))


def with_sizes(query: dict[str, Any]) -> dict[str, Any]:
    """The query with the group sizes its solve and fixed-n2 allocation use: the plan's
    own sizes times the drawn fractions (solves near their answer, mostly feasible), or
    fixed sizes where the query has no plan."""
    from planner import api
    from planner.inputs import InputError

    try:
        document = api.plan_document(**_plan_inputs(query), simulation_budget=0)
        n1, n2 = document["n_users_group1"], document["n_users_group2"]
    except InputError:
        n1, n2 = 10_000, 100_000
    fraction = query["n_fraction"]
    return {
        **query,
        "solve_n1": max(1, round(n1 * fraction)),
        "solve_n2": max(1, round(n2 * fraction)),
        "fixed_n2": max(1, round(n2 * query["n2_fraction"])),
    }


CASES: dict[str, Callable[[dict[str, Any]], Leaves]] = {
    "plan": plan_case,
    "compare": compare_case,
    "solve": solve_case,
    "sweep": sweep_case,
}


def run_paths(query: dict[str, Any]) -> dict[str, Leaves]:
    """The query's outcome on each of its paths."""
    return {name: CASES[name](query) for name in query["paths"]}


WORKERS = min(2, os.cpu_count() or 1)
"""Processes the cases run on: each is independent and deterministic, so one process or
several give the same numbers (the comparison took about 4.5 of CI's 14.5 minutes on one)."""


def run(
    queries: list[dict[str, Any]], workers: int = WORKERS, batch: bool = True
) -> dict[str, Any]:
    """Every query's outcomes, and (``batch``) the batch's: what the golden file stores.
    With more than one worker, on fresh (spawned) processes: no lock or thread of the
    caller's is inherited."""
    if workers <= 1:
        cases = [run_paths(query) for query in queries]
        return {"cases": cases, "batch": batch_case(queries) if batch else {}}
    with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn")) as pool:
        batched = pool.submit(batch_case, queries) if batch else None
        cases = list(pool.map(run_paths, queries, chunksize=10))
        return {"cases": cases, "batch": batched.result() if batched is not None else {}}


def main() -> None:
    queries = [with_sizes(query) for query in draw_queries()]
    outcomes = run(queries)
    lines = [
        "{",
        f'"schema": {json.dumps(SCHEMA)}, "seed": {SEED},',
        '"queries": [',
        ",\n".join(json.dumps(query) for query in queries),
        "],",
        '"cases": [',
        ",\n".join(json.dumps(case, sort_keys=True) for case in outcomes["cases"]),
        "],",
        f'"batch": {json.dumps(outcomes["batch"], sort_keys=True)}',
        "}",
    ]
    GOLDEN.write_text("\n".join(lines) + "\n", encoding="utf-8")
    count = sum(len(leaves) for case in outcomes["cases"] for leaves in case.values())
    count += len(outcomes["batch"])
    sys.stdout.write(f"wrote {GOLDEN} ({len(queries)} queries, {count:,} numbers)\n")


if __name__ == "__main__":
    main()
