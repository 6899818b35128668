"""Shared helpers for the test suite."""

from __future__ import annotations

import signal

import pytest

from planner.formulas.settings import ALL_SETTINGS, Model, Setting
from planner.inputs import Query

SERIAL_MODULES = frozenset(
    {
        "test_cluster",  # Dask clusters started and stopped
        "test_service_cluster",
        "test_service_fault",  # a server killed and restarted
        "test_service_browser",  # headless Chromium
        "test_fuzz",  # the hostile CLI sample, each invocation timed
        "test_service_fuzz",  # the hostile HTTP sample
    }
)
"""Test modules marked ``serial`` (and ``heavy``): servers, clusters and subprocesses that
time themselves, so CI runs them one at a time, after the rest (the README's test
command)."""
HEAVY_MODULES = SERIAL_MODULES | {
    "test_golden",  # 500 stored queries through every path
    "test_typing",  # mypy over the three packages
    "test_packaging",  # a wheel built, every shown output re-run
}
"""Test modules that run only with the ``heavy`` marker: CI's run (the README's test
command, everything but ``slow``), not the default ``python -m pytest`` a developer runs
while working."""
HEAVY_TESTS = (
    ("test_calibration", "provenance"),  # shipped tables re-derived from their raw runs
    ("test_coverage", "test_the_queries_that_failed_now_pass_or_are_refused"),
    ("test_privacy", "test_central_reject_probability_ratio_is_within_each_groups_epsilon"),
    ("test_privacy", "test_conditional_statistic_sensitivity_is_within_four_counts"),
    # Monte Carlo or many plans
    ("test_api", "test_a_validated_batch_is_the_cli_json_but_for_the_clock"),
    ("test_plan_properties", "test_a_public_coin_plan_never_needs_more_users_than_the_private"),
    ("test_plan_properties", "test_planning_a_plans_tester_point_again_gives_the_same_plan"),
    ("test_sweep", "test_the_user_guides_python_example_runs"),
    ("test_verdicts", "test_stopping_when_decided_does_not_inflate_the_error"),
    ("test_candidate_pruning", "test_vectorised_pruning_changes_no_row"),  # μ root-finds
)
"""(module, name fragment) of single tests that run only with the ``heavy`` marker (and
every one of :data:`SERIAL_TESTS`)."""
SERIAL_TESTS = (
    # jobs run in worker processes, real servers, subprocesses interrupted
    ("test_service", "test_outside_the_covered_region_plan_refuses_and_a_plan_job_simulates"),
    ("test_service", "test_a_validation_job_reports_the_cli_json_with_progress_and_provenance"),
    ("test_service", "test_a_job_whose_process_dies_fails_alone"),
    ("test_service", "test_an_exact_job_gives_the_plan_exact_document"),
    ("test_service", "test_a_job_with_default_trials_is_the_cli_default_validation"),
    ("test_service_workers", "runs_once"),  # a job through the other HTTP process
    ("test_service_workers", "test_serve_with_two_workers"),
    ("test_review_defects", "broken_pipe"),
    ("test_review_defects", "test_the_token_is_redacted_from_the_access_log"),
    ("test_reliability", "ctrl_c"),
    ("test_reliability", "test_output_streams_that_fail_are_one_line_not_a_traceback"),
    ("test_calibration", "test_an_interrupted_calibration_continues_where_it_stopped"),
    ("test_calibration", "test_planner_calibrate_continues_from_its_partial_file"),
    ("test_calibration", "test_one_worker_and_two_workers_give_identical_constants"),
    ("test_hostile_findings", "test_a_sample_of_the_hostile_run_is_clean"),  # cases timed
)
"""(module, name fragment) of single tests marked ``serial`` (and ``heavy``), as
:data:`SERIAL_MODULES`."""


def _named(module: str, name: str, modules: frozenset[str], tests: tuple) -> bool:
    return module in modules or any(
        module == listed and fragment in name for listed, fragment in tests
    )


@pytest.hookimpl(tryfirst=True)  # before ``-m`` deselects by marker
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark the heavy tests (:data:`HEAVY_MODULES`, :data:`HEAVY_TESTS`) and among them
    the serial ones (:data:`SERIAL_MODULES`, :data:`SERIAL_TESTS`)."""
    for item in items:
        module = item.module.__name__.rsplit(".", 1)[-1] if item.module else ""
        if _named(module, item.name, SERIAL_MODULES, SERIAL_TESTS):
            item.add_marker(pytest.mark.serial)
            item.add_marker(pytest.mark.heavy)
        elif _named(module, item.name, HEAVY_MODULES, HEAVY_TESTS):
            item.add_marker(pytest.mark.heavy)


def make_query(
    setting: Setting | str,
    k: int = 1000,
    alpha: float = 0.1,
    eps1: float = 1.0,
    eps2: float = 0.25,
    delta: float = 1e-6,
    **extra,
) -> Query:
    if isinstance(setting, str):
        setting = Setting.from_key(setting)
    return Query(
        setting, k, alpha, eps1, eps2, delta if setting.model is Model.SHUFFLE else None, **extra
    )


SETTING_KEYS = [setting.key for setting in ALL_SETTINGS]


def order_table():
    """Every setting at C = 1 on the theorem's own bound (``--constants order``)."""
    from planner.constants import ConstantSource, constants_with_source

    return constants_with_source(ConstantSource.ORDER)


def sigint_as_from_a_terminal() -> None:
    """``preexec_fn`` for a command a test will Ctrl-C: SIGINT at its default, as a terminal
    starts it. A suite run as a background job of a non-interactive shell (``pytest &``)
    has SIGINT ignored; every child inherits that, and Python then installs no
    KeyboardInterrupt handler at all."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def wait_for_cpu_seconds(pid: int, seconds: float, timeout: float = 60.0) -> None:
    """Wait until process ``pid`` has used ``seconds`` of CPU time (user + system, from
    /proc): past its imports (about 0.5 s of CPU) however loaded the machine is, where a
    fixed sleep is not."""
    import os
    import time

    ticks = os.sysconf("SC_CLK_TCK")
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
        # after the command name: state is field 3, utime and stime fields 14 and 15
        if (int(fields[11]) + int(fields[12])) / ticks >= seconds:
            return
        time.sleep(0.05)
    raise AssertionError(f"process {pid} did not use {seconds} s of CPU in {timeout} s")
