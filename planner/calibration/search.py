"""The search for the smallest constant C at which the real tester meets the error target.

n(C) is the plan with multiplier C on the setting's bound (C = 1: the ``order`` form),
so the search goes through :func:`planner.plan.plan` itself: what is calibrated is
exactly what is printed. A multiplier *passes* a point when the tester's error is at
most the target on every instance family; the smallest passing C is found by bisection
on log C with common random numbers (the same seed at every C). Also the per-query
search of ``--exact`` (:func:`exact_search`) and what every search's numbers depend on
(:func:`search_provenance`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from planner.constants import ConstantSource, ConstantTable, SettingConstant, default_constants
from planner.formulas.search import least_passing
from planner.formulas.settings import Setting
from planner.inputs import Query
from planner.protocols import PROTOCOLS
from planner.statistics import operating_error
from planner.testers import parameters_for_beta
from planner.validate import validate
from planner.validators.engine import Verification
from planner.validators.instances import FAMILIES


def table_with(
    setting_key: str, multiplier: float, base: ConstantTable | None = None, **extra: Any
) -> ConstantTable:
    """A copy of the constants with this setting's C (order form) and tester extras.

    A calibrated grid is dropped: the multiplier given here is the one used everywhere; a
    bound override that gives the tester's shape (not the proof's constants) is kept, so
    that calibration and plans multiply the same expression. A mixed protocol's C is set
    under both of its keys (``local/central-…`` and ``central/local-…``, the same
    protocol with its groups named either way): a plan whose group 2 has the larger ε
    runs as its mirror and reads the mirrored key (``plan._planned_run``), so with one
    key set a search there had bisected a C that no size read.
    """
    mirrored = Setting.from_key(setting_key).mirrored().key
    if mirrored != setting_key:
        base = _with_multiplier(mirrored, multiplier, base, **extra)
    return _with_multiplier(setting_key, multiplier, base, **extra)


def _with_multiplier(
    setting_key: str, multiplier: float, base: ConstantTable | None, **extra: Any
) -> ConstantTable:
    """:func:`table_with` for one key."""
    table = base or default_constants()
    if table.has_setting(setting_key):
        entry = table.for_setting(setting_key)
    else:  # a protocol's first calibration: its own bound, its tester's defaults
        entry = SettingConstant(ConstantSource.ORDER, multiplier)
    merged = {name: value for name, value in {**entry.extra, **extra}.items() if name != "grid"}
    shape = None if entry.source is ConstantSource.PROOF else entry.bound  # keep a shape
    changed = SettingConstant(ConstantSource.ORDER, multiplier, shape, entry.note, merged)
    return replace(table, settings={**table.settings, setting_key: changed})


def error_at(
    query: Query,
    table: ConstantTable,
    *,
    trials: int,
    seed: int,
    families: Sequence[str] | None = None,
    target: float | None = None,
    stop_early: bool = False,
) -> Verification:
    """The setting's own protocol (no public→private fallback) checked at ``table``'s C."""
    return validate(
        query,
        trials=trials,
        seed=seed,
        families=families,
        constants=table,
        target=target,
        fallback=False,
        stop_early=stop_early,
    ).verification


def passes(verification: Verification) -> bool:
    """Every family's observed error rate is at most the target (calibration and --exact
    pick targets below β, the operating point, so that ``planner validate --trials auto``
    then certifies the plan)."""
    return verification.worst_error_rate <= verification.target


@dataclass(frozen=True)
class MultiplierSearch:
    multiplier: float | None
    """Smallest passing C (to the relative tolerance); None if even ``high`` fails."""
    verification: Verification | None
    """The check at that C."""


def smallest_multiplier(
    query: Query,
    *,
    trials: int = 400,
    seed: int = 0,
    low: float = 1e-3,
    high: float = 1e3,
    rel_tol: float = 0.02,
    families: Sequence[str] | None = None,
    target: float | None = None,
    base: ConstantTable | None = None,
    **extra: Any,
) -> MultiplierSearch:
    """Bisection on log C for the smallest C that passes the query's point.

    ``target`` is the error every family must meet (default: the query's β); the sizes
    come from the query as given (its β also sets majority-vote runs).
    """
    key = query.setting.key

    def check(multiplier: float, stop_early: bool = True) -> Verification:
        return error_at(
            query,
            table_with(key, multiplier, base, **extra),
            trials=trials,
            seed=seed,
            families=families,
            target=target,
            stop_early=stop_early,
        )

    top = check(high, stop_early=False)
    if not passes(top):
        return MultiplierSearch(None, top)
    if passes(check(low)):
        return MultiplierSearch(low, check(low, stop_early=False))
    found = least_passing(lambda multiplier: passes(check(multiplier)), low, high, rel_tol)
    # the winner's full report (a search check may have stopped at a failing family)
    return MultiplierSearch(found, top if found == high else check(found, stop_early=False))


SEARCH_RANGE: dict[str, tuple[float, float]] = {
    protocol.key: protocol.calibration.search_range for protocol in PROTOCOLS
}
"""Each protocol's bisection range for C (``CalibrationDesign.search_range``)."""


def search_provenance(setting: str, *, rel_tol: float, target: float | None) -> dict[str, Any]:
    """What a calibration's numbers depend on besides trials and seed: the instance
    families, the search's range, precision and target, the simulation path, the commit."""
    return {
        "families": list(FAMILIES),
        "search_range": list(SEARCH_RANGE[setting]),
        "rel_tol": rel_tol,
        "target": target if target is not None else "operating_error(β) per β, see targets",
        "simulation_path": "fast (exact sufficient statistics)",
        "common_random_numbers": "the same seed at every C of a search",
        "git_commit": git_commit(),
    }


def git_commit() -> str:
    """The checkout's commit (with ``+dirty`` when it has uncommitted changes), or
    "unknown" outside a git checkout."""
    import subprocess

    here = Path(__file__).resolve().parent
    try:
        head = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=here, capture_output=True, text=True, timeout=5
        )
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=here,
            capture_output=True,
            text=True,
            timeout=5,
        )
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    if head.returncode != 0:
        return "unknown"
    return head.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")


def exact_search(
    query: Query, *, trials: int = 1000, seed: int = 0, base: ConstantTable | None = None
) -> MultiplierSearch:
    """Per-query search: the smallest C (order bound) whose plan passes reliably.

    The tester runs once (no majority vote: for β < 1/3 this is direct calibration at β)
    and every family's observed error must be at most ``operating_error(β)`` — the
    operating point of the grid and the direct factors, at this very query (common random
    numbers across C).
    """
    table = base or default_constants()
    entry = table.for_setting(query.setting.key)
    extra = dict(entry.tester_extras)
    # the one run is held to β: its tester takes the constants plans use for β
    extra["tester"] = parameters_for_beta(query.setting, dict(extra.get("tester", {})), query.beta)
    low, high = SEARCH_RANGE[query.setting.key]
    sizing = replace(query, beta=1 / 3)
    return smallest_multiplier(
        sizing,
        trials=trials,
        seed=seed,
        low=low / 4,
        high=high * 4,
        rel_tol=0.02,
        target=operating_error(query.beta),
        base=table,
        **extra,
    )
