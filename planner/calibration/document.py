"""The constants file a calibration writes: a grid run's document
(:func:`constants_document`), a direct run's entries put into the packaged file
(:func:`direct_factors_document`, :func:`with_direct`) and the file's version.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from importlib import resources
from typing import Any

from planner.calibration.direct import (
    BEYOND_ENTRY,
    DirectResult,
    beyond_entry,
    by_node_entry,
    direct_entry,
    rebuilt_beyond_entry,
    rebuilt_by_node_entry,
    small_eps_entry,
)
from planner.calibration.grid import (
    CALIBRATION_TARGET,
    GRID_AT_OPERATING_POINT,
    GRID_DELTA,
    GRID_REL_TOL,
    PointResult,
    default_axes,
    grid_target,
    retargeted_multipliers,
    safety_margin,
)
from planner.calibration.search import SEARCH_RANGE, search_provenance
from planner.constants import TESTER_EXTRAS, ConstantTable


def with_direct(setting: str, entry: dict[str, Any], direct: dict[str, Any]) -> dict[str, Any]:
    """A setting's constants entry with a new ``direct`` entry, its grid retargeted and
    its ``direct_by_node``, ``direct_large_eps`` and ``direct_large_alpha`` entries (made
    with the direct table and its points) rebuilt; those measured at other k rows than
    the new entry's (under ``--quick``) are left out, as they cannot be read beside it."""
    changed = {**entry, "direct": direct}
    ks = [int(k) for k in direct["k"]]
    for name in (*BEYOND_ENTRY.values(), "direct_by_node", "direct_small_eps"):
        if name in entry and [int(k) for k in entry[name]["axes"]["k"]] != ks:
            del changed[name]  # measured at other k rows (a --quick run): not carried over
    for axis, name in BEYOND_ENTRY.items():
        if name in changed:
            changed[name] = rebuilt_beyond_entry(setting, entry[name], direct, axis)
    if "direct_by_node" in changed:
        changed["direct_by_node"] = rebuilt_by_node_entry(
            setting, entry["direct_by_node"], direct, changed.get("direct_small_eps")
        )
    # a grid fitted at the operating point is not moved by the direct entry's operating
    # factor: its C stay as they are (made again, the multi-message grid's envelope would
    # build a query at its node ε = 25, above the accepted ε)
    fitted_at = float(entry.get("grid", {}).get("target", CALIBRATION_TARGET))
    if "grid" in entry and fitted_at == CALIBRATION_TARGET:
        multipliers = retargeted_multipliers(setting, changed)
        margin = float(entry["grid"]["safety_margin"])
        changed["grid"] = {**entry["grid"], "multipliers": multipliers}
        changed["multiplier"] = margin * max(multipliers)
    return changed


def constants_document(
    results: Sequence[PointResult],
    *,
    trials: int,
    seed: int,
    axes: dict[str, list[float]] | None = None,
    base: ConstantTable | None = None,
    created: str,
    code_version: str,
) -> dict[str, Any]:
    """The constants file: per calibrated setting a grid of C, with provenance (``axes``:
    the grid of every setting; default each setting's own, ``default_axes``)."""

    document = (
        json.loads(resources.files("planner").joinpath("data/constants.json").read_text("utf-8"))
        if base is None
        else None
    )
    settings = dict(document["settings"]) if document else {}
    by_setting: dict[str, list[PointResult]] = {}
    for result in results:
        by_setting.setdefault(result.point.setting, []).append(result)
    for setting, points in by_setting.items():
        setting_axes = axes or default_axes(setting)
        previous = dict(settings.get(setting, {}))
        failed = [p for p in points if p.multiplier is None]
        high = SEARCH_RANGE[setting][1]
        raw = [p.multiplier if p.multiplier is not None else high for p in points]
        # at the operating point: each node's C times the direct entry's operating factor
        multipliers = retargeted_multipliers(
            setting,
            {
                **{
                    name: previous[name]
                    for name in ("L", "hashes", "bound", "direct")
                    if name in previous
                },
                "grid": {
                    "axes": setting_axes,
                    "raw_multipliers": raw,
                    "target": grid_target(setting),
                },
            },
        )
        kept = {
            name: previous[name]
            for name in (
                "bound",
                *TESTER_EXTRAS,
                "direct",
                "direct_alpha_min",
                "direct_by_node",
                "direct_small_eps",
                "direct_large_eps",
                "direct_large_alpha",
            )
            if name in previous
        }
        # The covered region is a claim about evidence (docs/coverage.md), partly argued
        # beyond the grid: a refit on a grid that spans every earlier node keeps it; any
        # other grid (a --quick run) is covered by its own extent only.
        earlier_axes = previous.get("grid", {}).get("axes", {})
        if all(set(values) <= set(setting_axes[name]) for name, values in earlier_axes.items()):
            kept.update(
                {
                    name: previous[name]
                    for name in ("covered", "covered_note", "covered_above_grid")
                    if name in previous
                }
            )
        settings[setting] = {
            "source": "calibrated",
            "multiplier": safety_margin(setting) * max(multipliers),
            **kept,
            "note": (
                (
                    "Monte Carlo calibration: smallest C with every family's observed error "
                    f"≤ {grid_target(setting):.4g} (the operating point at β = 1/3) at each "
                    "grid point"
                )
                if setting in GRID_AT_OPERATING_POINT
                else (
                    "Monte Carlo calibration: smallest C with every family's observed error "
                    f"≤ {CALIBRATION_TARGET} at each grid point, times the direct entry's "
                    "operating factor (the operating point at β = 1/3)"
                )
            )
            + f"; plans use the log-space interpolation × {safety_margin(setting)}",
            "provenance": {
                "command": f"planner calibrate --setting {setting} --trials {trials} --seed {seed}",
                "trials_per_family": trials,
                "seed": seed,
                "created": created,
                "code_version": code_version,
                **search_provenance(setting, rel_tol=GRID_REL_TOL, target=grid_target(setting)),
            },
            "grid": {
                "axes": {name: list(values) for name, values in setting_axes.items()},
                "target": grid_target(setting),
                "multipliers": multipliers,
                "raw_multipliers": raw,
                "safety_margin": safety_margin(setting),
                "worst_families": [p.worst_family for p in points],
                "never_passed": [repr(p.point) for p in failed],
            },
        }
    # a run of some settings merged into a file that holds others: the file's provenance is
    # each setting's own (the document-level one would describe only this run)
    partial = set(by_setting) != set(settings)
    # and its history of per-setting refits (provenance.notes) stays with it
    history = (document or {}).get("provenance", {}).get("notes") if partial else None
    command = (
        "per setting: see each setting's provenance.command"
        if partial
        else f"planner calibrate --trials {trials} --seed {seed}"
    )
    return {
        "format": 1,
        "version": content_version(created, settings),
        "created": created,
        "description": (
            "Multipliers C applied to the bound with C = 1 (formulas.registry). "
            "source = calibrated: fitted by Monte Carlo on the real testers; "
            "proof: the paper's proof constants; order: C = 1, not a guarantee."
        ),
        "provenance": {
            "command": command,
            "trials_per_family": "per setting" if partial else trials,
            "seed": seed,
            "criterion": (
                f"observed error ≤ {CALIBRATION_TARGET} on every instance family (a grid "
                "whose target says so: ≤ operating_error(1/3))"
            ),
            "grid_delta": GRID_DELTA,
            "safety_margins": {
                key: safety_margin(key)
                for key, entry in settings.items()
                if entry.get("source") == "calibrated"
            },
            "code_version": code_version,
            "simulation_path": "fast (exact sufficient statistics)",
            **({"notes": history} if history else {}),
        },
        "settings": settings,
        # what else the file says (e.g. tester_tuning: how the testers' free constants
        # were chosen) is kept as it was
        **{
            name: value
            for name, value in (document or {}).items()
            if name not in {"format", "version", "created", "description", "provenance", "settings"}
        },
    }


def content_version(created: str, settings: dict[str, Any]) -> str:
    """A constants file's version: its date and a digest of every setting's entry, so that
    any change to any number (a grid run, a direct run) gives a new version."""
    digest = hashlib.sha256(json.dumps(settings, sort_keys=True).encode("utf-8")).hexdigest()
    return f"calibrated-{created}-{digest[:8]}"


def direct_factors_document(
    results: Sequence[DirectResult],
    settings: Sequence[str],
    *,
    trials: int,
    seed: int,
    axes: dict[str, list[float]] | None,
    created: str,
    code_version: str,
    axes_by_setting: dict[str, dict[str, list[float]]] | None = None,
    below_alpha_min: bool = False,
    small_eps: bool = False,
    beyond: str | None = None,
) -> dict[str, Any]:
    """The packaged constants file with each setting's direct-calibration factors put in
    (``planner calibrate --direct``): its ``direct`` entry (the grid retargeted by it,
    :func:`with_direct`), or with ``below_alpha_min`` / ``small_eps`` its
    ``direct_by_node`` tables (and ``direct_small_eps`` points), or with ``beyond`` (the
    axis, ε_strong or α, of points beyond the direct points' top) that axis's entry."""
    document = json.loads(
        resources.files("planner").joinpath("data/constants.json").read_text("utf-8")
    )
    for key in settings:
        own = [result for result in results if result.point.setting == key]
        made: dict[str, Any] = {
            "trials": trials,
            "seed": seed,
            "axes": (axes_by_setting or {}).get(key, axes),
            "created": created,
            "code_version": code_version,
        }
        entry_now = document["settings"][key]
        if beyond is not None:
            large = beyond_entry(own, entry_now["direct"], axis=beyond, **made)
            entry_now[BEYOND_ENTRY[beyond]] = large
            continue
        if below_alpha_min or small_eps:
            if small_eps:
                entry_now["direct_small_eps"] = small_eps_entry(own, **made)
                band = rebuilt_by_node_entry(
                    key,
                    entry_now["direct_by_node"],
                    entry_now["direct"],
                    entry_now["direct_small_eps"],
                )
            else:
                band = by_node_entry(
                    own, entry_now["direct"], **made, small_eps=entry_now.get("direct_small_eps")
                )
            entry_now["direct_by_node"] = band
            continue
        entry = direct_entry(own, **made)
        document["settings"][key] = with_direct(key, document["settings"][key], entry)
    document["created"] = created
    document["version"] = content_version(document["created"], document["settings"])
    return document
