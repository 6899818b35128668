"""Behaviour preserved: 500 random queries give exactly the stored numbers.

``tests/golden/golden.json`` holds 500 queries drawn with a fixed seed across the five
settings — each planned (with its allocation) and compared, a third also solved for one
unknown, another third swept over 3 values, and all of them run as one batch file
through the CLI — and every numeric field of the JSON documents they produced
(:mod:`tests.golden.generate`). This test re-runs the stored inputs and requires the same
numbers: the same fields (a number that appears, disappears or changes type is a
difference too), and each number equal to a relative :data:`RELATIVE_TOLERANCE`. The
computation is deterministic on one installation, but its last bits are not the same on
every one: scipy's special functions and root-finders moved the shuffle noise μ by up to
1.1e-13 (relative) between the releases this file was made with and numpy 2.4 / scipy 1.17,
and a count of 10^14 users computed from such a μ moves by the same relative amount (12
users in 1.2e14). Any change of the planner's own arithmetic moves numbers by far more.
(To check that a refactor changes no bit, compare two checkouts on one installation.)

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

from tests.golden.generate import CASES, GOLDEN, QUERIES, SCHEMA, run


@pytest.fixture(scope="module")
def golden() -> dict:
    return json.loads(GOLDEN.read_text(encoding="utf-8"))


RELATIVE_TOLERANCE = 1e-11
"""How far a stored number may move across installations (module docstring): 100× the
largest drift measured between library releases."""


def _same_number(old: object, new: object) -> bool:
    if old == new:
        return True
    if isinstance(old, float) and isinstance(new, float) and math.isnan(old):
        return math.isnan(new)
    if isinstance(old, int | float) and isinstance(new, int | float):
        return math.isclose(old, new, rel_tol=RELATIVE_TOLERANCE, abs_tol=0.0)
    return False


def _differences(name: str, stored: dict, current: dict, limit: int = 20) -> list[str]:
    """Paths whose value or type differs (NaN equals NaN; numbers to a relative
    :data:`RELATIVE_TOLERANCE`), at most ``limit`` of them."""
    found = []
    for path in sorted(set(stored) | set(current)):
        old, new = stored.get(path, "<absent>"), current.get(path, "<absent>")
        same = type(old) is type(new) and _same_number(old, new)
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
    # the solves CI runs keep every setting and unknown the file's solves have
    kept = [
        q
        for i, q in enumerate(golden["queries"])
        if i not in _solves_left_to_slow(golden["queries"])
    ]
    solving = {
        (q["model"], q["coin"], q["unknown"]) for q in golden["queries"] if "solve" in q["paths"]
    }
    assert {(q["model"], q["coin"], q["unknown"]) for q in kept if "solve" in q["paths"]} == solving
    # the cases hold numbers: plans (and refusals), compares, solves, sweeps
    assert sum(len(leaves) for case in golden["cases"] for leaves in case.values()) > 50_000


def _solves_left_to_slow(queries: list[dict]) -> set[int]:
    """The queries whose solve CI leaves to the ``slow`` test: every second query that
    solves (solves are two thirds of this file's time; half of them keep every setting and
    unknown in CI's run)."""
    solving = [index for index, query in enumerate(queries) if "solve" in query["paths"]]
    return set(solving[1::2])


def _compare(golden: dict, queries: list[dict], batch: bool) -> None:
    """Re-run ``queries`` (each on its listed paths) and the batch if ``batch``; the
    stored numbers of every path run must come back."""
    outcomes = run(queries, batch=batch)  # on up to two processes, as the file was made
    differences: list[str] = []
    cases = zip(queries, golden["cases"], outcomes["cases"], strict=True)
    for index, (query, stored, current) in enumerate(cases):
        for name in sorted(set(query["paths"])):
            differences += _differences(
                f"query {index} {name}", stored.get(name, {}), current.get(name, {})
            )
        if len(differences) >= 20:
            break
    if batch:
        differences += _differences("batch", golden["batch"], outcomes["batch"])
    assert not differences, "\n".join(differences[:20])


def test_outputs_equal_the_golden_file(golden: dict) -> None:
    """Every query's plan, compare and sweep, half the solves, and the batch."""
    left = _solves_left_to_slow(golden["queries"])
    queries = [
        {
            **query,
            "paths": [path for path in query["paths"] if index not in left or path != "solve"],
        }
        for index, query in enumerate(golden["queries"])
    ]
    _compare(golden, queries, batch=True)


@pytest.mark.slow
def test_the_other_solves_equal_the_golden_file(golden: dict) -> None:
    """The solves :func:`test_outputs_equal_the_golden_file` leaves out."""
    left = _solves_left_to_slow(golden["queries"])
    queries = [
        {**query, "paths": ["solve"] if index in left else []}
        for index, query in enumerate(golden["queries"])
    ]
    assert sum(bool(query["paths"]) for query in queries) >= QUERIES // 7
    _compare(golden, queries, batch=False)


def test_the_tolerance_tells_a_last_bit_from_a_change() -> None:
    """The drift seen across releases passes; one user more in a million does not."""
    assert _same_number(117436280847281, 117436280847269)  # 1e-13 relative
    assert _same_number(204.2366406280657, 204.2366406280698)
    assert not _same_number(1_000_000, 1_000_001)
    assert not _same_number(0.5, 0.5000001)
    assert not _same_number(True, 2) and _same_number(float("nan"), float("nan"))
