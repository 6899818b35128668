"""What-if sweeps: plans over a product of parameter values, one row each, vectorised.

A parameter is varied by giving a sequence of values (the API) or a value spec (the CLI,
:func:`parse_values`). Rows run setting by setting, then over the product of the varied
values in the order k, alpha, eps1, eps2, delta, beta (the last varies fastest). Each row
echoes its inputs and has a status: ``ok``, or the one-line reason its query is invalid —
a bad row never aborts the sweep. The numbers come from :func:`planner.vectorised.
plan_columns` (rows that it does not answer exactly go through :func:`planner.plan.plan`),
so every row equals a single ``plan`` call.
"""

from __future__ import annotations

import itertools
import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from planner.constants import COVERAGE_AXES, ConstantTable, default_constants
from planner.documents import sweep_to_dict  # named here too: the CLI imports it from here
from planner.formulas.search import check_deadline
from planner.formulas.settings import Setting
from planner.inputs import (
    DEFAULT_BETA,
    DELTA_FLOOR,
    K_MAX,
    Accounting,
    InputError,
    Query,
    check_alpha,
    check_beta,
    check_choice,
    check_delta,
    check_eps,
    check_integer,
)
from planner.limits import (
    FLOOD_SEARCH_SECONDS_MAX,
    SWEEP_SINGLE_ROWS_MAX,
    check_root_finds,
    check_single_rows,
    check_sweep_pace,
    check_sweep_rows,
    flood_searches_seconds,
)
from planner.plan import Coverage, delta_top, plan
from planner.protocols import delta_runs, protocol_for

PARAMETERS = ("k", "alpha", "eps1", "eps2", "delta", "beta")
"""The numeric inputs of a plan, in the order rows vary (the last fastest)."""
INTEGER_PARAMETERS = ("k",)
VALUE_SPEC = (
    "a number, a list a,b,c, or a range start:stop:count (linear) or start:stop:countlog "
    "(geometric), e.g. 0.05:1:20log"
)
NUMBER_COLUMNS = (
    "n_users_group1",
    "n_users_group2",
    "total_users",
    "baseline_n_users_group1",
    "baseline_n_users_group2",
    "lower_bound_group1",
    "lower_bound_group2",
    "runs",
    "tester_eps1",
    "tester_eps2",
    "tester_alpha",
    "tester_k",
    "tester_delta",
    "messages_per_user_group1",
    "messages_per_user_group2",
)
"""A row's numbers (empty where the row has no plan; the tester's also where it runs at
the query; the messages where each user sends one report)."""
COLUMNS = (
    "setting",
    "protocol",
    *PARAMETERS,
    "accounting",
    "status",
    *NUMBER_COLUMNS,
)
"""Field names of a row, in order (stable within ``planner.sweep/6``; ``/5`` had no
``messages_per_user_*``, ``/4`` no ``tester_delta``, ``/3`` no ``tester_k``, ``/2`` no
``tester_*``, ``/1`` no ``runs``)."""
TESTER_COLUMNS = ("tester_eps1", "tester_eps2", "tester_alpha", "tester_k", "tester_delta")
"""``plan``'s ``tester_point`` per row (null: the tester runs at the row's inputs;
``tester_k`` null: on the row's own domain; ``tester_delta`` null: at the row's δ)."""
MESSAGES_COLUMNS = ("messages_per_user_group1", "messages_per_user_group2")
"""Each group's expected messages per user, its own report included, as ``plan``'s groups
give them (null where each user sends one report)."""
COUNT_COLUMNS = (
    "n_users_group1",
    "n_users_group2",
    "total_users",
    "baseline_n_users_group1",
    "baseline_n_users_group2",
    "runs",
)


def parse_values(name: str, spec: str) -> list[float]:
    """The values a spec names: ``1000``, ``64,256,1024``, ``0.1:0.5:5`` or ``0.05:1:20log``.

    Ranges include both ends. An integer parameter's (k's) range points are rounded,
    duplicates dropped; its listed values stay as written, so ``-k 2.5`` is refused as
    ``planner plan -k 2.5`` is (a single value in one line, a listed one in its row).
    """
    text = str(spec).strip()
    ranged = ":" in text
    try:
        if ranged:
            start, stop, count = text.split(":")
            geometric = count.lower().endswith("log")
            points = int(count[:-3] if geometric else count)
            low, high = float(start), float(stop)
            if points < 1 or not (math.isfinite(low) and math.isfinite(high)):
                raise ValueError
            check_sweep_rows(points)  # before numpy allocates the range
            if geometric and not (low > 0 and high > 0):
                raise ValueError
            values = (np.geomspace if geometric else np.linspace)(low, high, points).tolist()
        else:
            values = [float(item) for item in text.split(",")]
    except InputError:
        raise
    except (ValueError, OverflowError):
        raise InputError(name, spec, VALUE_SPEC) from None
    if name in INTEGER_PARAMETERS:  # NaN and ±inf stay: their rows say they are invalid
        values = list(
            dict.fromkeys(
                float(round(value)) if ranged and math.isfinite(value) else value
                for value in values
            )
        )
    return values


@dataclass(frozen=True)
class Sweep:
    """A sweep's rows as columns (numpy arrays, NaN counts on error rows)."""

    varied: tuple[str, ...]
    """The parameters given more than one value."""
    columns: dict[str, np.ndarray]
    exact_counts: dict[int, dict[str, int]] = field(default_factory=dict)
    """The counts of the rows ``plan`` answered one by one (those at 2^53 users or more
    among them), as exact integers: the float columns round counts above 2^53."""
    notes: tuple[str, ...] = ()
    """What the rows leave out, one line each (a multi-message protocol's messages per
    user where their flood searches would take too long)."""

    def __len__(self) -> int:
        return len(self.columns["status"])

    def rows(self) -> list[dict[str, Any]]:
        """One dict per row with the fields of :data:`COLUMNS` (counts as ints or None)."""
        listed = {name: self.columns[name].tolist() for name in COLUMNS}
        rows = []
        for index in range(len(self)):
            row = {name: listed[name][index] for name in COLUMNS}
            for name in COUNT_COLUMNS:
                value = row[name]
                row[name] = None if value is None or math.isnan(value) else int(value)
            for name in (
                "lower_bound_group1",
                "lower_bound_group2",
                "delta",
                *TESTER_COLUMNS,
                *MESSAGES_COLUMNS,
            ):
                if row[name] is not None and math.isnan(row[name]):
                    row[name] = None
            if row["k"] == row["k"] and float(row["k"]).is_integer():  # not NaN, whole
                row["k"] = int(row["k"])
            if row["tester_k"] is not None:  # a domain: a whole number of bins
                row["tester_k"] = int(row["tester_k"])
            row.update(self.exact_counts.get(index, {}))
            if row["protocol"] == "":
                row["protocol"] = None
            rows.append(row)
        return rows

    def ok(self) -> np.ndarray:
        return self.columns["status"] == "ok"


def sweep(
    settings: Sequence[Setting],
    *,
    k: Any,
    alpha: Any,
    eps1: Any,
    eps2: Any,
    delta: Any = None,
    beta: Any = DEFAULT_BETA,
    accounting: Accounting | str = Accounting.EXACT,
    constants: ConstantTable | None = None,
    check_rows: Callable[[int], None] | None = None,
    alone: object = False,
) -> Sweep:
    """Plans for every setting and every combination of the varied values.

    Each parameter is one value or a sequence of values (varied). ``delta=None`` means
    not given (rows of the shuffle model then report that they need it).
    ``check_rows(rows)`` may refuse the sweep's row count before any row is sized (a
    table's cap, ``planner.limits.check_table_rows``). ``alone``: each setting's own
    protocol alone, as ``planner plan --protocol KEY`` plans it (a mechanism's key always
    runs alone), each row planned one by one (:data:`~planner.limits.SWEEP_SINGLE_ROWS_MAX`
    rows a setting at most); not for a mixed pair, as ``--protocol``.
    """
    table = constants or default_constants()
    settings = _checked_settings(settings)
    if not isinstance(alone, bool):
        raise InputError("alone", alone, "true or false")
    if alone:
        for setting in settings:
            if setting.is_mixed:
                raise InputError(
                    "setting",
                    setting.key,
                    "one model's setting when each runs alone (a protocol alone is planned "
                    "for one model's query, not a mixed pair's)",
                )
    accounting = check_choice("accounting", accounting or Accounting.EXACT, Accounting)
    given: Mapping[str, Any] = {
        "k": k,
        "alpha": alpha,
        "eps1": eps1,
        "eps2": eps2,
        "delta": delta,
        "beta": beta,
    }
    values = {name: _as_values(name, value) for name, value in given.items()}
    for name, value in given.items():
        if value is not None:  # delta None: not given (shuffle rows say they need it)
            _refuse_if_none_valid(name, values[name])
    varied = tuple(name for name in PARAMETERS if len(values[name]) > 1)
    per_setting = math.prod(len(values[name]) for name in PARAMETERS)
    check_sweep_rows(per_setting * len(settings))
    if check_rows is not None:
        check_rows(per_setting * len(settings))
    spending = [setting for setting in settings if setting.needs_delta]
    if delta is not None:  # a central query's shuffle runs search δ too
        spending += [run for setting in settings for run in delta_runs(setting)]
    if spending:
        check_root_finds(
            values["eps1"] + values["eps2"],
            _searched_deltas(spending, values["delta"], table),
            accounting is Accounting.PAPER,
        )
    mesh = np.meshgrid(*(np.asarray(values[name]) for name in PARAMETERS), indexing="ij")
    grid = {name: axis.ravel() for name, axis in zip(PARAMETERS, mesh, strict=True)}
    blocks = []
    for setting in settings:
        check_deadline()  # a service's cap per request (each block's searches check it too)
        started = time.thread_time()  # each setting's own budget (``check_sweep_pace``)
        blocks.append(_setting_block(setting, grid, accounting, table, started, alone))
    columns = {name: np.concatenate([block.columns[name] for block in blocks]) for name in COLUMNS}
    exact_counts = {}
    for offset, block in zip(
        itertools.accumulate([0] + [len(grid["k"])] * len(blocks)), blocks, strict=False
    ):
        exact_counts.update({offset + row: counts for row, counts in block.exact_counts.items()})
    notes = tuple(line for block in blocks for line in block.notes)
    if alone:
        notes = (ALONE_NOTE, *notes)
    return Sweep(varied, columns, exact_counts, notes)


ALONE_NOTE = (
    "each setting's own protocol runs alone (--alone), as planner plan --protocol KEY plans "
    "it: no other mechanism is weighed"
)
"""The line a sweep ``alone`` says (its rows cannot be told from a default sweep's that
run the same protocol)."""


def _as_typed(value: float) -> float | int:
    """A whole number as an int (``k = 1``, not ``k = 1.0``, in a refusal), else itself."""
    return int(value) if math.isfinite(value) and float(value).is_integer() else value


_CHECKS: dict[str, Callable[[float], object]] = {
    "k": lambda value: check_integer("k", _as_typed(value), 2, K_MAX),
    "alpha": check_alpha,
    "eps1": lambda value: check_eps("eps1", value),
    "eps2": lambda value: check_eps("eps2", value),
    "delta": check_delta,
    "beta": check_beta,
}


def _searched_deltas(
    settings: Sequence[Setting], deltas: list[float], table: ConstantTable
) -> list[float]:
    """The δ values a sweep's noise searches run at: a valid δ above the covered top is
    planned at the top (``plan.delta_capped``), so the values above it are one search."""
    tops = {delta_top(setting, table) for setting in settings if setting.needs_delta}
    if len(tops) != 1 or None in tops:
        return deltas
    top = tops.pop()
    assert top is not None
    return [min(delta, top) if top < delta < 1 else delta for delta in deltas]


def _refuse_if_none_valid(name: str, values: list[float]) -> None:
    """One line (the first value's) when no value of a parameter is valid: every row
    would be an error (``-k nan`` had printed one per setting and exited 0). A list
    with some valid values keeps its rows, the invalid ones marked as errors."""
    check = _CHECKS[name]
    first: InputError | None = None
    for value in values:
        try:
            check(value)
        except InputError as error:
            first = first or error
        else:
            return
    if first is not None:
        raise first


def _checked_settings(settings: Any) -> list[Setting]:
    """The settings to sweep: a non-empty sequence of :class:`Setting` (or their keys)."""
    if isinstance(settings, (Setting, str)) or not isinstance(settings, Sequence) or not settings:
        raise InputError("settings", settings, "a non-empty list of settings")
    try:
        return [item if isinstance(item, Setting) else Setting.from_key(item) for item in settings]
    except (KeyError, ValueError, TypeError, AttributeError):
        raise InputError("settings", settings, "a non-empty list of settings") from None


def _as_values(name: str, value: Any) -> list[float]:
    if value is None:
        return [math.nan]
    if isinstance(value, str):
        return parse_values(name, value)
    if isinstance(value, np.ndarray):
        if value.ndim > 1:
            raise InputError(name, f"an array of shape {value.shape}", VALUE_SPEC)
        value = np.atleast_1d(value).tolist()
    items = value if isinstance(value, Sequence) else [value]
    if not items:
        raise InputError(name, "[]", f"at least one value ({VALUE_SPEC})")
    check_sweep_rows(len(items))
    try:
        if any(isinstance(item, bool) for item in items):
            raise TypeError
        return [float(item) for item in items]
    except (TypeError, ValueError, OverflowError):
        raise InputError(name, value, VALUE_SPEC) from None


@dataclass(frozen=True)
class _Block:
    """One setting's rows of a sweep: its columns, the counts of the rows ``plan`` answered
    (by row), and the lines said of them (messages left out: :func:`_messages`)."""

    columns: dict[str, np.ndarray]
    exact_counts: dict[int, dict[str, int]]
    notes: tuple[str, ...] = ()


def _setting_block(
    setting: Setting,
    grid: dict[str, np.ndarray],
    accounting: Accounting,
    table: ConstantTable,
    started: float,
    alone: bool = False,
) -> _Block:
    from planner.vectorised import plan_columns, valid_rows  # not on `planner plan`'s path

    k, alpha, eps1, eps2, delta, beta = (grid[name] for name in PARAMETERS)
    if setting.is_mixed or (alone and not setting.mechanism):
        return _one_by_one_block(setting, grid, accounting, table, started, alone)
    if delta_runs(setting) and not np.isnan(delta).all():
        return _central_delta_block(setting, grid, accounting, table, started)
    numbers = plan_columns(setting, k, alpha, eps1, eps2, delta, beta, accounting, table)
    size = len(grid["k"])
    columns: dict[str, np.ndarray] = {
        "setting": np.full(size, setting.key, dtype=object),
        "protocol": numbers.protocol.astype(object),
        **{name: grid[name].copy() for name in PARAMETERS},
        "accounting": np.full(size, accounting.value, dtype=object),
        "status": np.full(size, "ok", dtype=object),
        "n_users_group1": numbers.n_users_group1,
        "n_users_group2": numbers.n_users_group2,
        "total_users": numbers.n_users_group1 + numbers.n_users_group2,
        "baseline_n_users_group1": numbers.baseline_n_users_group1,
        "baseline_n_users_group2": numbers.baseline_n_users_group2,
        "lower_bound_group1": numbers.lower_bound_group1,
        "lower_bound_group2": numbers.lower_bound_group2,
        "runs": numbers.runs,
        "tester_eps1": numbers.tester_eps1,
        "tester_eps2": numbers.tester_eps2,
        "tester_alpha": numbers.tester_alpha,
        "tester_k": numbers.tester_k,
        "tester_delta": numbers.tester_delta,
    }
    for code in np.unique(numbers.uncovered[numbers.uncovered != 0]):
        rows = numbers.uncovered == code
        columns["status"][rows] = not_covered_status(int(code), setting)
        for name in NUMBER_COLUMNS[: -len(MESSAGES_COLUMNS)]:
            columns[name][rows] = np.nan
    *sent, left_out = _messages(columns, numbers.regular, accounting, table)
    columns.update(zip(MESSAGES_COLUMNS, sent, strict=True))
    _one_report_rows(setting, columns)
    exact_counts: dict[int, dict[str, int]] = {}
    single = np.flatnonzero(~numbers.regular)
    valid = valid_rows(setting, k, alpha, eps1, eps2, delta, beta)
    check_single_rows(int(np.count_nonzero(valid[single])))
    for done, row in enumerate(single, start=1):
        _answer_one(setting, grid, accounting, table, int(row), columns, exact_counts)
        check_sweep_pace(started, time.thread_time(), done, len(single) - done, setting.key)
    return _Block(columns, exact_counts, (left_out,) if left_out else ())


def _one_report_rows(setting: Setting, columns: dict[str, np.ndarray]) -> None:
    """The rows run by a protocol that sends no noise messages (a local randomizer, a
    curator's tester): each group's messages per user as the setting's models count them,
    1 for a shuffle group's one report, empty otherwise (``planner.plan.stated_messages``)."""
    answered = columns["status"] == "ok"
    for key in sorted(set(columns["protocol"][answered].tolist()) - {""}):  # "": ``plan``'s
        if not protocol_for(key).sends_reports_only:
            continue
        rows = answered & (columns["protocol"] == key)
        for column, model in zip(MESSAGES_COLUMNS, setting.group_models, strict=True):
            columns[column][rows] = 1.0 if model.counts_messages else np.nan


def _messages(
    columns: dict[str, np.ndarray],
    regular: np.ndarray,
    accounting: Accounting,
    table: ConstantTable,
) -> tuple[np.ndarray, np.ndarray, str]:
    """Each group's expected messages per user on the rows ``plan_columns`` answered, for
    the protocols whose users send several (``Protocol.messages_per_user_arrays``), at
    each row's tester point: NaN elsewhere (``_answer_one`` fills the rows ``plan``
    answers). A multi-message protocol's rows are left empty where their flood searches
    would take more than ``FLOOD_SEARCH_SECONDS_MAX`` (a review: 141 s for 416 of them),
    and the third value says so ("" otherwise)."""
    size = len(columns["status"])
    sent = (np.full(size, np.nan), np.full(size, np.nan))
    left_out = []
    answered = regular & (columns["status"] == "ok")
    for key in sorted(set(columns["protocol"][answered].tolist())):
        protocol = protocol_for(key)
        if protocol.messages_per_user_arrays is None:
            continue
        rows = answered & (columns["protocol"] == key)
        # each row's tester point: its tester_* where set, else its own inputs
        point = {
            name: np.where(
                np.isnan(columns[f"tester_{name}"][rows]),
                columns[name][rows],
                columns[f"tester_{name}"][rows],
            )
            for name in ("k", "alpha", "delta", "eps1", "eps2")
        }
        if protocol.noise_mu is None:  # a multi-message protocol: a flood search per (ε, δ)
            seconds = flood_searches_seconds(
                (float(eps), float(delta))
                for name in ("eps1", "eps2")
                for eps, delta in zip(point[name], point["delta"], strict=True)
            )
            if seconds > FLOOD_SEARCH_SECONDS_MAX:
                left_out.append(
                    f"messages per user left empty on {int(rows.sum()):,} rows of {key}: "
                    f"their flood searches would take about {seconds:.0f} s (at most "
                    f"{FLOOD_SEARCH_SECONDS_MAX:g}); fewer distinct ε or δ values give them, "
                    "and planner plan gives a row's"
                )
                continue
        runs = columns["runs"][rows]
        one, two = protocol.messages_per_user_arrays(
            point["k"],
            point["alpha"],
            point["delta"],
            point["eps1"],
            point["eps2"],
            columns["n_users_group1"][rows] / runs,
            columns["n_users_group2"][rows] / runs,
            accounting,
            table.for_setting(key).compression(),
        )
        sent[0][rows], sent[1][rows] = one, two
    return sent[0], sent[1], "; ".join(left_out)


def _central_delta_block(
    setting: Setting,
    grid: dict[str, np.ndarray],
    accounting: Accounting,
    table: ConstantTable,
    started: float,
) -> _Block:
    """Rows of a central query that gives δ, as ``planner.plan.central_delta_plan`` plans
    them: the pure ε-DP central row, or a shuffle protocol's row at the row's δ where that
    is covered and needs fewer users in all (the central row on a tie), with the central
    model's lower bounds and the row's δ."""
    pure = {**grid, "delta": np.full(len(grid["k"]), np.nan)}
    own = _setting_block(setting, pure, accounting, table, started)
    columns, exact_counts, notes = own.columns, own.exact_counts, list(own.notes)
    taken = columns["status"] == "ok"
    for run in delta_runs(setting):
        run_block = _setting_block(run, grid, accounting, table, started)
        other, other_exact = run_block.columns, run_block.exact_counts
        notes += run_block.notes  # its rows' messages left empty: said, with the setting's
        fewer = (other["status"] == "ok") & (
            ~taken | (other["total_users"] < columns["total_users"])
        )
        for name in COLUMNS:
            if name in ("setting", *PARAMETERS, "lower_bound_group1", "lower_bound_group2"):
                continue
            columns[name][fewer] = other[name][fewer]
        for row in np.flatnonzero(fewer):
            exact_counts.pop(int(row), None)
            if int(row) in other_exact:
                exact_counts[int(row)] = other_exact[int(row)]
        taken |= fewer
    _one_report_rows(setting, columns)  # a shuffle run's local randomizer, stated centrally
    columns["delta"] = grid["delta"].copy()
    for row in np.flatnonzero(~((grid["delta"] >= DELTA_FLOOR) & (grid["delta"] < 1.0))):
        try:  # the row's δ, as ``Query`` checks it for a central query that gives one
            check_delta(float(grid["delta"][row]))
        except InputError as error:
            columns["status"][row] = f"error: {error}"
            columns["protocol"][row] = ""
            for name in NUMBER_COLUMNS:
                columns[name][row] = np.nan
            exact_counts.pop(int(row), None)
    return _Block(columns, exact_counts, tuple(notes))


def _one_by_one_block(
    setting: Setting,
    grid: dict[str, np.ndarray],
    accounting: Accounting,
    table: ConstantTable,
    started: float,
    alone: bool,
) -> _Block:
    """A mixed pair's rows, or a setting's own protocol's ``alone``, each planned by
    ``plan`` (no vectorised twin: it reads a mechanism's key, not "alone"): at most
    :data:`~planner.limits.SWEEP_SINGLE_ROWS_MAX` rows, each a few plans."""
    size = len(grid["k"])
    if size > SWEEP_SINGLE_ROWS_MAX:
        what = f"the mixed pair {setting.key}" if setting.is_mixed else f"{setting.key} alone"
        raise InputError(
            "sweep size",
            f"{size:,} rows of {what}",
            f"at most {SWEEP_SINGLE_ROWS_MAX:,} rows a mixed pair or a protocol alone (each "
            "is planned one by one): fewer values",
        )
    columns: dict[str, np.ndarray] = {
        "setting": np.full(size, setting.key, dtype=object),
        "protocol": np.full(size, "", dtype=object),
        **{name: grid[name].copy() for name in PARAMETERS},
        "accounting": np.full(size, accounting.value, dtype=object),
        "status": np.full(size, "ok", dtype=object),
        **{name: np.full(size, np.nan) for name in NUMBER_COLUMNS},
    }
    exact_counts: dict[int, dict[str, int]] = {}
    for row in range(size):
        _answer_one(setting, grid, accounting, table, row, columns, exact_counts, alone)
        check_sweep_pace(started, time.thread_time(), row + 1, size - row - 1, setting.key)
    return _Block(columns, exact_counts)


def axes_bits(axes: Sequence[str]) -> int:
    """The bit mask of ``COVERAGE_AXES`` names (``PlanColumns.uncovered``'s code)."""
    return sum(1 << COVERAGE_AXES.index(name) for name in set(axes))


def not_covered_status(axes_bits: int, setting: Setting | None = None, alone: bool = False) -> str:
    """A row's status when its plan lies outside the covered region (no numbers given).

    For a mechanism swept alone (``shuffle-private+messages``), or a setting's own
    protocol ``alone``, it says what ``planner plan --protocol`` does there: it refuses,
    and the setting's own plan weighs the others (a review found the row promising a
    simulation, which is made only of a setting's own protocol)."""
    names = [name for bit, name in enumerate(COVERAGE_AXES) if axes_bits & (1 << bit)]
    if setting is not None and (setting.mechanism or alone):
        whose = "this mechanism's" if setting.mechanism else "this protocol's"
        return (
            f"not covered: {', '.join(names)} outside {whose} covered region "
            "(planner plan --protocol refuses such a query; the setting's own plan weighs "
            "the other protocols)"
        )
    return (
        f"not covered: {', '.join(names)} outside the covered region (planner plan "
        "simulates such a query where it can, from k = 8, or refuses it)"
    )


def _answer_one(
    setting: Setting,
    grid: dict[str, np.ndarray],
    accounting: Accounting,
    table: ConstantTable,
    row: int,
    columns: dict[str, np.ndarray],
    exact_counts: dict[int, dict[str, int]],
    alone: bool = False,
) -> None:
    """A row the vectorised path left open: ``plan`` answers it, or says why it can't
    (``alone``: the setting's own protocol alone, ``planner plan --protocol KEY``)."""
    inputs = {name: float(grid[name][row]) for name in PARAMETERS}
    delta = None if math.isnan(inputs["delta"]) else inputs["delta"]
    try:
        query = Query(
            setting,
            check_integer("k", _as_typed(inputs["k"]), 2, K_MAX),  # as Query checks it
            inputs["alpha"],
            inputs["eps1"],
            inputs["eps2"],
            delta,
            inputs["beta"],
            accounting=accounting,
        )
        # a mechanism swept by its key runs alone (``planner plan --protocol KEY``)
        result = plan(query, table, fallback=not (setting.mechanism or alone))
    except (InputError, ValueError, ArithmeticError, OverflowError) as error:
        columns["status"][row] = f"error: {error}"
        return
    if result.coverage is Coverage.EXTRAPOLATED:
        bits = axes_bits(result.coverage_axes)
        columns["status"][row] = not_covered_status(bits, setting, alone)
        return
    counts = {
        "n_users_group1": result.n_users_group1,
        "n_users_group2": result.n_users_group2,
        "total_users": result.total_users,
        "baseline_n_users_group1": result.groups[0].baseline_n_users,
        "baseline_n_users_group2": result.groups[1].baseline_n_users,
    }
    for name, value in counts.items():
        columns[name][row] = float(value)
    columns["lower_bound_group1"][row] = result.groups[0].lower_bound
    columns["lower_bound_group2"][row] = result.groups[1].lower_bound
    for column, group in zip(MESSAGES_COLUMNS, result.groups, strict=True):
        sent = group.messages_per_user
        columns[column][row] = math.nan if sent is None else sent
    columns["runs"][row] = float(result.runs)
    point = result.tester_point
    if point is not None:
        values = (
            point.eps1,
            point.eps2,
            point.alpha,
            math.nan if point.k is None else point.k,
            math.nan if point.delta is None else point.delta,
        )
        for column, at in zip(TESTER_COLUMNS, values, strict=True):
            columns[column][row] = at
    columns["protocol"][row] = result.protocol
    exact_counts[row] = counts


def sweep_to_csv(result: Sweep) -> str:
    """One CSV line per row, the fields of :data:`COLUMNS` as header (empty: none)."""
    from planner.files import csv_text

    return csv_text(result.rows(), COLUMNS)


__all__ = [
    "COLUMNS",
    "Sweep",
    "parse_values",
    "sweep",
    "sweep_to_csv",
    "sweep_to_dict",
]
