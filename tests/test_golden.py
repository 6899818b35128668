"""Behaviour preserved: 500 random queries give exactly the stored numbers.

``tests/golden/golden.json`` holds 500 queries drawn with a fixed seed across the five
settings (plan with its allocation, compare, solve for one unknown, a 3-value sweep, and
a batch file of them through the CLI) and every numeric field of the JSON documents they
produced (:mod:`tests.golden.generate`). This test re-runs the stored inputs and requires
the same numbers: ints equal, floats equal to the last digit (JSON keeps the shortest
repr, which reads back to the identical double; the computation is deterministic
numpy/math on one platform, so nothing needs a tolerance), and the same fields — a number
that appears, disappears or changes type is a difference too.

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

from tests.golden.generate import CASES, GOLDEN, QUERIES, SCHEMA, batch_case


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
    for case in golden["cases"]:
        assert set(case) == set(CASES)
    # the cases hold numbers: plans (and refusals), compares, solves, sweeps
    assert sum(len(leaves) for case in golden["cases"] for leaves in case.values()) > 50_000


@pytest.mark.slow  # ~2 min until the planner's exact-μ root-finds are sped up (issue #12)
def test_outputs_equal_the_golden_file(golden: dict) -> None:
    differences: list[str] = []
    for index, (query, stored) in enumerate(zip(golden["queries"], golden["cases"], strict=True)):
        for name, case in CASES.items():
            differences += _differences(f"query {index} {name}", stored[name], case(query))
        if len(differences) >= 20:
            break
    differences += _differences("batch", golden["batch"], batch_case(golden["queries"]))
    assert not differences, "\n".join(differences[:20])
