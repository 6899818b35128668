"""Behaviour preserved: 500 random queries give exactly the stored numbers.

``tests/golden/golden.json`` holds 500 queries drawn with a fixed seed across the five
settings — each planned (with its allocation) and compared, a third also solved for one
unknown, another third swept over 3 values, and all of them run as one batch file
through the CLI — and every numeric field of the JSON documents they produced
(:mod:`tests.golden.generate`). This test re-runs the stored inputs and requires the same
numbers: ints equal, floats equal to the last digit (JSON keeps the shortest repr, which
reads back to the identical double; the computation is deterministic numpy/math on one
platform, so nothing needs a tolerance), and the same fields — a number that appears,
disappears or changes type is a difference too. (Across machines one thing could move a
last bit: a BLAS whose dot product differs; the planner's own sums avoid threaded BLAS.)

A change that is *meant* to move numbers (a recalibration of planner/data/constants.json,
a new tester constant) regenerates the file in the same commit, with one command from the
repository root:

    python -m tests.golden.generate

and the commit message says why the numbers moved. Anything else that changes them is a
behaviour change to explain or to fix.
"""

from __future__ import annotations

import json
import math

import pytest

from tests.golden.generate import CASES, GOLDEN, QUERIES, SCHEMA, batch_case, run_paths


@pytest.fixture(scope="module")
def golden() -> dict:
    return json.loads(GOLDEN.read_text(encoding="utf-8"))


def _differences(name: str, stored: dict, current: dict, limit: int = 20) -> list[str]:
    """Paths whose value or type differs (NaN equals NaN), at most ``limit`` of them."""
    found = []
    for path in sorted(set(stored) | set(current)):
        old, new = stored.get(path, "<absent>"), current.get(path, "<absent>")
        same = type(old) is type(new) and (
            old == new or (isinstance(old, float) and math.isnan(old) and math.isnan(new))
        )
        if not same:
            found.append(f"{name} {path}: stored {old!r}, now {new!r}")
        if len(found) >= limit:
            break
    return found


def test_golden_file_is_complete(golden: dict) -> None:
    assert golden["schema"] == SCHEMA
    assert len(golden["queries"]) == len(golden["cases"]) == QUERIES
    settings = {(query["model"], query["coin"]) for query in golden["queries"]}
    assert len(settings) == 5  # the central model's coin is "private"
    for query, case in zip(golden["queries"], golden["cases"], strict=True):
        assert set(case) == set(query["paths"]) <= set(CASES)
    for path in CASES:  # every path runs a good share of the queries, in every setting
        takers = [query for query in golden["queries"] if path in query["paths"]]
        assert len(takers) >= QUERIES // 3
        assert len({(query["model"], query["coin"]) for query in takers}) == 5
    # the cases hold numbers: plans (and refusals), compares, solves, sweeps
    assert sum(len(leaves) for case in golden["cases"] for leaves in case.values()) > 50_000


def test_outputs_equal_the_golden_file(golden: dict) -> None:
    differences: list[str] = []
    for index, (query, stored) in enumerate(zip(golden["queries"], golden["cases"], strict=True)):
        for name, leaves in run_paths(query).items():
            differences += _differences(f"query {index} {name}", stored[name], leaves)
        if len(differences) >= 20:
            break
    differences += _differences("batch", golden["batch"], batch_case(golden["queries"]))
    assert not differences, "\n".join(differences[:20])
