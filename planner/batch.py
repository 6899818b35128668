"""``planner batch``: a file of scenarios, one result row each.

A scenario is a plan query (``model``, ``coin``, ``k``, ``alpha``, ``eps1``, ``eps2``,
``delta``, ``beta``, ``accounting``), or a solve query when ``n1`` or ``n2`` is given:
then exactly one of ``n1``, ``n2``, ``alpha``, ``eps2`` is left out and solved for
(:func:`planner.solve.solve`). ``name`` labels the row. TOML files hold ``[[scenario]]``
tables; CSV files a header row of field names (an empty cell: not given). A malformed
file stops with one line naming it; a scenario with bad values gets an error row and
the others still run.

With ``validate`` every row that has a plan is also checked against the real tester
(:func:`planner.validate.validate`, as ``planner validate`` does) and carries its verdict;
the scenarios then run on a local process pool or a Dask cluster
(:mod:`planner.cluster`), with the same rows whatever runs them: each row's seed derives
from the run seed and the row's position (:func:`row_seed`).
"""

from __future__ import annotations

import concurrent.futures
import csv
import io
import os
import tomllib
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from planner.alone import ProtocolNotCoveredError, protocol_plan, protocol_query
from planner.coverage import NotCoveredError, covered_plan
from planner.documents import batch_to_dict  # named here too: the CLI imports it from here
from planner.files import csv_text
from planner.inputs import DEFAULT_BETA, InputError, Query
from planner.limits import BATCH_FILE_BYTES_MAX, BATCH_SCENARIOS_MAX, check_file_size
from planner.plan import Plan
from planner.solve import Unknown, left_out, solve

FIELDS = (
    "name",
    "model",
    "coin",
    "k",
    "alpha",
    "eps1",
    "eps2",
    "delta",
    "beta",
    "accounting",
    "n1",
    "n2",
)
"""What a scenario may say (model, k, eps1 always; see the module doc for the rest), and
its row repeats."""
SCENARIO_FIELDS = (*FIELDS, "protocol")
"""What a scenario may say: :data:`FIELDS`, and in a plan scenario ``protocol``, a
protocol's key (``planner plan --protocol``): that protocol alone, where it answers the
query and is covered. The row's own ``protocol`` field (:data:`RESULT_FIELDS`) then names
it."""
RESULT_FIELDS = (
    "kind",
    "status",
    "protocol",
    "n_users_group1",
    "n_users_group2",
    "total_users",
    "messages_per_user_group1",
    "messages_per_user_group2",
    "solved_for",
    "solved_value",
)
"""What a row adds to its scenario's fields (stable within ``planner.batch/2``; ``/1`` had
no messages per user)."""
VALIDATION_FIELDS = ("verdict", "worst_error_rate", "validation_trials", "validation_seed")
"""What ``--validate`` adds: the verdict (``pass``, ``fail``, ``inconclusive``; ``not run:
<why>`` when the validation is refused; null without a plan), the worst family's observed
error, the most trials any family ran and the row's seed (``planner validate --seed``)."""


def read_scenarios(path: Path | str) -> list[dict[str, Any]]:
    """The scenarios of a ``.toml`` or ``.csv`` file (values as written: checked later)."""
    allowed = "a readable .toml file of [[scenario]] tables or a .csv file with a header row"
    if not isinstance(path, (str, os.PathLike)):
        raise InputError("file", path, f"{allowed} (a path)")
    path = Path(path)
    try:  # a name too long for the file system raises here
        regular, there = path.is_file(), path.exists()
    except (OSError, ValueError) as error:  # ValueError: a NUL in the name
        reason = getattr(error, "strerror", None) or error.__class__.__name__
        raise InputError("file", str(path), f"{allowed} ({reason})") from None
    if not regular:  # a folder, a device (/dev/zero never ends), a FIFO, nothing
        what = "no such file" if not there else "not a regular file"
        raise InputError("file", str(path), f"{allowed} ({what})")
    try:
        check_file_size("file", path, path.stat().st_size, BATCH_FILE_BYTES_MAX)
        text = path.read_text(encoding="utf-8-sig")  # a spreadsheet's BOM is no header
    except (OSError, UnicodeDecodeError) as error:
        raise InputError("file", str(path), f"{allowed} ({error.__class__.__name__})") from None
    suffix = path.suffix.lower()
    if suffix == ".toml":
        tables = text.count("[[scenario]]")  # a bound on the scenarios, before parsing
        if tables > BATCH_SCENARIOS_MAX:
            raise InputError(
                "file", str(path), f"at most {BATCH_SCENARIOS_MAX:,} scenarios (it has {tables:,})"
            )
        try:
            document = tomllib.loads(text)
        except tomllib.TOMLDecodeError as error:
            raise InputError("file", str(path), f"valid TOML ({error})") from None
        except RecursionError:  # arrays nested hundreds deep
            raise InputError("file", str(path), "valid TOML (nested too deeply)") from None
        scenarios = document.get("scenario")
        if (
            not isinstance(scenarios, list)
            or set(document) != {"scenario"}
            or not all(isinstance(scenario, dict) for scenario in scenarios)
        ):
            raise InputError("file", str(path), "TOML with [[scenario]] tables only")
    elif suffix == ".csv":
        scenarios = _csv_scenarios(path, text)
    else:
        raise InputError("file", str(path), allowed)
    if not scenarios:
        raise InputError("file", str(path), "at least one scenario")
    if len(scenarios) > BATCH_SCENARIOS_MAX:
        raise InputError("file", str(path), f"at most {BATCH_SCENARIOS_MAX:,} scenarios")
    for number, scenario in enumerate(scenarios, start=1):
        for name, value in scenario.items():
            if isinstance(value, bool) or not isinstance(value, (str, int, float)):
                raise InputError(
                    "file",
                    str(path),
                    f"fields that are numbers or text (scenario {number}'s {name} is a "
                    f"{type(value).__name__})",
                )
        unknown = sorted(set(scenario) - set(SCENARIO_FIELDS))
        if unknown:
            raise InputError(
                "file",
                str(path),
                f"scenarios with fields among {', '.join(SCENARIO_FIELDS)} "
                f"(scenario {number} has {unknown[0]!r})",
            )
    return scenarios


def _csv_scenarios(path: Path, text: str) -> list[dict[str, Any]]:
    """A CSV file's rows as scenarios (empty cells left out)."""
    try:
        # strict: an unterminated quote is an error, not a field that swallows the rows
        # after it
        reader = csv.reader(io.StringIO(text), strict=True)
        header = next(reader, None)
        if not header or not any(name.strip() for name in header):
            raise InputError("file", str(path), "CSV with a header row of field names")
        header = [name.strip() for name in header]
        unknown = [name for name in header if name and name not in SCENARIO_FIELDS]
        if unknown:  # a file without its header row reads its first scenario as one
            raise InputError(
                "file",
                str(path),
                f"CSV whose first row names fields among {', '.join(SCENARIO_FIELDS)} (it has "
                f"{unknown[0]!r}: is the header row missing?)",
            )
        repeated = [name for name in header if name and header.count(name) > 1]
        if repeated:  # which of the two columns would a row mean?
            raise InputError(
                "file",
                str(path),
                f"CSV naming each field once (the header names {repeated[0]!r} twice)",
            )
        scenarios = []
        for line, cells in enumerate(reader, start=2):
            if not any(cell.strip() for cell in cells):
                continue  # a blank line
            if len(cells) > len(header):
                raise InputError(
                    "file", str(path), f"CSV rows no longer than the header (line {line})"
                )
            named = zip(header[: len(cells)], cells, strict=True)
            scenarios.append({name: cell.strip() for name, cell in named if cell.strip()})
            if len(scenarios) > BATCH_SCENARIOS_MAX:
                break
    except csv.Error as error:  # a field over csv's size limit, a NUL byte, a quote, …
        raise InputError(
            "file", str(path), f"valid CSV ({error}, line {reader.line_num})"
        ) from None
    return scenarios


def run_batch(
    scenarios: list[dict[str, Any]],
    *,
    validate: bool = False,
    trials: int | str = "auto",
    seed: int = 0,
    executor: concurrent.futures.Executor | None = None,
    workers: int = 1,
    progress: Callable[[dict[str, Any]], None] | None = None,
) -> list[dict[str, Any]]:
    """One row per scenario: its fields, then the result (or why there is none).

    ``validate``: each plan is also validated (``trials``: ``auto`` or a count per family;
    row i's seed is :func:`row_seed` (seed, i)), on ``executor`` (e.g. a
    :class:`planner.cluster.ClusterExecutor`) or a pool of ``workers`` local processes;
    the rows, in file order, do not depend on which. ``progress`` gets each row.
    """
    if not validate:
        return [_run_one(scenario) for scenario in scenarios]
    from planner.cluster import map_in_order

    tasks = [(scenario, trials, row_seed(seed, index)) for index, scenario in enumerate(scenarios)]
    return map_in_order(
        _validated_row, tasks, executor=executor, workers=workers, progress=progress
    )


def row_seed(seed: int, index: int) -> int:
    """Row ``index``'s validation seed, from the run seed and the row alone (not the
    worker that runs it)."""
    key = zlib.crc32(f"batch row {index}".encode())
    return int(np.random.SeedSequence(seed, spawn_key=(key,)).generate_state(1)[0])


def _validated_row(arguments: tuple[dict[str, Any], int | str, int]) -> dict[str, Any]:
    """A scenario's row with its plan validated (a top-level function: picklable)."""
    from planner.validate import PathChoice, validate

    scenario, trials, seed = arguments
    row, checked = _row_and_plan(scenario)
    row.update(dict.fromkeys(VALIDATION_FIELDS))
    if checked is None:  # an invalid or infeasible row has no plan to certify: exit 3
        row["verdict"] = "not run: no plan"
        return row
    row["validation_seed"] = seed
    # exactly what `planner validate <the row's query> --seed <seed>` runs (a solve row:
    # at its solved value with --allocation fixed-n2 --n2 <its n2>, the split solve weighs)
    try:
        report = validate(
            checked.query, trials=trials, seed=seed, path=PathChoice.AUTO, checked_plan=checked
        )
    except (InputError, ValueError, ArithmeticError) as error:
        row["verdict"] = f"not run: {error}"
        return row
    row.update(
        verdict=report.verdict.value,
        worst_error_rate=report.verification.worst_error_rate,
        validation_trials=report.verification.trials,
    )
    return row


def _run_one(scenario: dict[str, Any]) -> dict[str, Any]:
    return _row_and_plan(scenario)[0]


def _row_and_plan(scenario: dict[str, Any]) -> tuple[dict[str, Any], Plan | None]:
    """The scenario's row, and the plan behind it (None on a row without numbers)."""
    row: dict[str, Any] = {name: scenario.get(name) for name in FIELDS}
    row.update(dict.fromkeys(RESULT_FIELDS))
    solving = scenario.get("n1") is not None or scenario.get("n2") is not None
    row["kind"] = "solve" if solving else "plan"
    try:
        if solving:
            return row, _solve_into(row, scenario)
        return row, _plan_into(row, scenario)
    except (InputError, ValueError, ArithmeticError) as error:
        row["status"] = f"error: {error}"
    return row, None


def _query(scenario: dict[str, Any], alpha: Any, eps2: Any) -> Query:
    for required in ("model", "k", "eps1"):
        if scenario.get(required) is None:
            raise InputError(required, None, "given in every scenario")
    return Query.build(
        scenario["model"],
        scenario.get("coin", "private"),
        scenario["k"],
        alpha,
        scenario["eps1"],
        eps2,
        scenario.get("delta"),
        scenario.get("beta", DEFAULT_BETA),
        scenario.get("accounting", "exact"),
    )


def _plan_into(row: dict[str, Any], scenario: dict[str, Any]) -> Plan | None:
    for required in ("alpha", "eps2"):
        if scenario.get(required) is None:
            raise InputError(required, None, "given in a plan scenario (no n1, n2)")
    query = _query(scenario, scenario["alpha"], scenario["eps2"])
    if scenario.get("protocol") is not None:  # that protocol alone (planner plan --protocol)
        row["protocol"] = scenario["protocol"]  # the key asked, on an error row too
        try:
            result = protocol_plan(protocol_query(query, scenario["protocol"]), asked=query)
        except ProtocolNotCoveredError as error:
            row["status"] = "not covered: " + "; ".join(error.uncovered)
            return None
        row.update(status="ok", **_plan_numbers(result))
        return result
    try:
        result = covered_plan(query, budget_seconds=0)
    except NotCoveredError as error:
        row["status"] = "not covered: " + "; ".join(error.gaps)
        return None
    row.update(status="ok", **_plan_numbers(result))
    return result


def _plan_numbers(made: Plan) -> dict[str, Any]:
    """A row's numbers from its plan: the protocol, the users, and each group's expected
    messages per user (null where each user sends one report)."""
    return {
        "protocol": made.protocol,
        "n_users_group1": made.n_users_group1,
        "n_users_group2": made.n_users_group2,
        "total_users": made.total_users,
        "messages_per_user_group1": made.groups[0].messages_per_user,
        "messages_per_user_group2": made.groups[1].messages_per_user,
    }


def _solve_into(row: dict[str, Any], scenario: dict[str, Any]) -> Plan | None:
    if scenario.get("protocol") is not None:  # as planner solve, which has no --protocol
        raise InputError("protocol", scenario["protocol"], "left out of a solve scenario (n1, n2)")
    unknown = left_out(scenario)
    template = _query(
        scenario,
        scenario.get("alpha", 0.5),
        scenario.get("eps2", scenario["eps1"]),
    )
    solution = solve(template, unknown, n1=scenario.get("n1"), n2=scenario.get("n2"))
    row["solved_for"] = unknown.value
    if not solution.feasible:
        row["status"] = f"infeasible: {solution.reason}"
        return None
    assert solution.plan is not None and solution.value is not None
    value = solution.value
    row.update(
        status="ok",
        **_plan_numbers(solution.plan),
        solved_value=int(value) if unknown in (Unknown.N1, Unknown.N2) else value,
    )
    return solution.plan


def batch_to_csv(rows: list[dict[str, Any]]) -> str:
    validated = bool(rows) and "verdict" in rows[0]
    return csv_text(rows, FIELDS + RESULT_FIELDS + (VALIDATION_FIELDS if validated else ()))


__all__ = [
    "FIELDS",
    "RESULT_FIELDS",
    "VALIDATION_FIELDS",
    "batch_to_csv",
    "batch_to_dict",
    "read_scenarios",
    "row_seed",
    "run_batch",
]
