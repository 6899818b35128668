"""The fuzz harness (tests/fuzz.py): hostile CLI and API invocations, no traceback, no hang.

The default suite runs a fast subset; ``pytest -m slow`` runs the full 10,000.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests import fuzz


def _run(count: int, seed: int, tmp_path: Path) -> list[fuzz.Outcome]:
    space = fuzz.Workspace.create(tmp_path)
    cases = fuzz.generate(count, seed, space)
    return fuzz.run_cases(cases, workers=2, timeout=60.0, workdir=space.root)


def _assert_clean(outcomes: list[fuzz.Outcome]) -> None:
    tracebacks = [(o.case, o.traceback) for o in outcomes if o.traceback]
    assert not tracebacks, tracebacks[:3]
    violations = [(o.case, o.violation) for o in outcomes if o.violation]
    assert not violations, violations[:3]
    assert max(o.peak_kib for o in outcomes) < 2**20  # 1 GiB
    codes = {o.code for o in outcomes if isinstance(o.case, list)}
    assert {0, 2} <= codes  # the generator reaches real answers and refusals alike


def test_a_fast_subset_of_hostile_invocations_is_clean(tmp_path: Path) -> None:
    outcomes = _run(200, 20261126, tmp_path)
    assert len(outcomes) == 200
    _assert_clean(outcomes)
    slow = [(o.case, round(o.seconds, 1)) for o in outcomes if fuzz.too_slow(o)]
    assert not slow, slow


def test_a_case_that_grants_a_long_simulation_may_take_it() -> None:
    budget = ["plan", "--model", "local", "-k", "1000", "--alpha", "1"]
    assert fuzz.grants_time([*budget, "--simulation-budget", "1_000"])
    assert not fuzz.grants_time([*budget, "--simulation-budget", "3"])
    assert not fuzz.grants_time([*budget, "--simulation-budget", "nope"])
    assert not fuzz.grants_time([*budget, "--simulation-budget"]) and not fuzz.grants_time(budget)
    # the last one counts here (the CLI refuses a repeated option in one line)
    assert fuzz.grants_time([*budget, "--simulation-budget", "1", "--simulation-budget", "60"])


def test_the_harness_catches_a_traceback_and_a_hang(tmp_path: Path, monkeypatch) -> None:
    """The harness can fail: an exception escaping main, and a run past the timeout."""
    import planner.cli

    def broken(argv: list[str]) -> int:
        if argv == ["hang"]:
            import time

            time.sleep(30)
        raise ZeroDivisionError("planted")

    monkeypatch.setattr(planner.cli, "main", broken)
    outcomes = fuzz.run_cases([["boom"], ["hang"]], workers=2, timeout=1.0, workdir=tmp_path)
    assert outcomes[0].traceback is not None and "planted" in outcomes[0].traceback
    assert outcomes[1].code is None and outcomes[1].violation == "killed at the timeout"


@pytest.mark.slow
def test_ten_thousand_hostile_invocations_are_clean(tmp_path: Path) -> None:
    outcomes = _run(10_000, 1, tmp_path)
    assert len(outcomes) == 10_000
    _assert_clean(outcomes)
    slow = [(o.case, round(o.seconds, 1)) for o in outcomes if fuzz.too_slow(o)]
    assert not slow, slow[:5]
