"""``planner plot``: users per group against one swept parameter (matplotlib, optional).

Two panels, group 1 and group 2, sharing the x axis. Per setting one colour: the plan
(solid), the homogeneous protocol at ε = min(ε1, ε2) (dashed) and the group's
identity-testing lower bound with C = 1 (dotted). Users on a log axis; the x axis is
logarithmic for k, α, ε and δ (where the bounds are power laws). Error rows leave gaps.
"""

from __future__ import annotations

import io
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from planner.files import write_atomically
from planner.inputs import InputError
from planner.sweep import Sweep

FORMATS = ("png", "svg")
AXIS_LABELS = {
    "k": "domain size k",
    "alpha": "distance α (total variation)",
    "eps1": "group 1's privacy ε1",
    "eps2": "group 2's privacy ε2",
    "delta": "δ (shuffle model)",
    "beta": "target error β",
}
LOG_AXES = ("k", "alpha", "eps1", "eps2", "delta")
STYLE_KEY = (
    ("-", "plan (this setting's protocol)"),
    ("--", "homogeneous protocol at min(ε1, ε2)"),
    (":", "lower bound, C = 1 (identity testing)"),
)


def _pyplot() -> Any:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as pyplot
    except ImportError:
        raise InputError(
            "plot",
            "matplotlib",
            "installed: pip install 'hetero-closeness-planner[plot]' (matplotlib)",
        ) from None
    return pyplot


def plot_sweep(result: Sweep, title: str) -> Any:
    """The figure of a sweep over exactly one parameter (a matplotlib ``Figure``)."""
    if len(result.varied) != 1:
        raise InputError(
            "vary",
            ",".join(result.varied) or "nothing",
            "exactly one parameter given as a list or range (the x axis)",
        )
    (parameter,) = result.varied
    if not result.ok().any():
        first = str(result.columns["status"][0]) if len(result) else "no rows"
        raise InputError("plot", f"{len(result)} rows", f"at least one valid row ({first})")
    pyplot = _pyplot()
    figure, axes = pyplot.subplots(1, 2, figsize=(11, 5.6), sharex=True, sharey=True)
    columns = result.columns
    settings = list(dict.fromkeys(columns["setting"].tolist()))
    colours = pyplot.get_cmap("tab10")
    for index, setting in enumerate(settings):
        rows = columns["setting"] == setting
        x = columns[parameter][rows].astype(float)
        order = np.argsort(x)
        colour = colours(index)
        for group, axis in ((1, axes[0]), (2, axes[1])):
            series = (
                (f"n_users_group{group}", "-", 2.0, setting),
                (f"baseline_n_users_group{group}", "--", 1.2, "_nolegend_"),
                (f"lower_bound_group{group}", ":", 1.2, "_nolegend_"),
            )
            for column, style, width, label in series:
                y = columns[column][rows].astype(float)[order]
                axis.plot(x[order], y, style, color=colour, linewidth=width, label=label)
    for group, axis in ((1, axes[0]), (2, axes[1])):
        axis.set_yscale("log")
        if parameter in LOG_AXES:
            axis.set_xscale("log")
        axis.set_xlabel(AXIS_LABELS[parameter])
        axis.set_title(f"group {group}")
        axis.grid(True, which="major", alpha=0.3)
    if parameter in LOG_AXES:  # after both panels' scales (a shared scale resets its ticks)
        for axis in axes:
            _log_ticks(axis, columns[parameter].astype(float))
    axes[0].set_ylabel("users needed (per group)")
    handles, labels = axes[0].get_legend_handles_labels()
    for style, label in STYLE_KEY:
        handles.append(axes[0].plot([], [], style, color="grey")[0])
        labels.append(label)
    figure.legend(handles, labels, loc="lower center", ncol=4, fontsize="small", frameon=False)
    figure.suptitle(title, fontsize="medium")
    figure.tight_layout(rect=(0, 0.09, 1, 1))
    return figure


def _log_ticks(axis: Any, values: Any) -> None:
    """Readable ticks on a log x axis: plain numbers at 1, 2, 5 (within two decades; 1, 2,
    3, 5 within one; decades beyond), and no labelled minor ticks (matplotlib labels
    them on a short axis, where "3×10⁻²" and "4×10⁻²" overlapped)."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    finite = values[np.isfinite(values) & (values > 0)]
    decades = math.log10(finite.max() / finite.min()) if len(finite) else 0.0
    subs = (1.0,) if decades > 2 else (1.0, 2.0, 5.0) if decades > 1 else (1.0, 2.0, 3.0, 5.0)
    axis.xaxis.set_major_locator(LogLocator(base=10, subs=subs, numticks=8))
    axis.xaxis.set_major_formatter(FuncFormatter(lambda x, _: f"{x:g}"))
    axis.xaxis.set_minor_formatter(NullFormatter())


def save_figure(figure: Any, path: Path | str) -> None:
    """Write the figure as PNG or SVG (by the file's suffix), atomically."""
    path = Path(path)
    kind = path.suffix.lower().lstrip(".")
    if kind not in FORMATS:
        raise InputError("output", str(path), "a file name ending in .png or .svg")
    buffer = io.BytesIO()
    figure.savefig(buffer, format=kind, dpi=120)
    write_atomically(path, buffer.getvalue())


def sweep_title(fixed: dict[str, Any]) -> str:
    """The fixed inputs, for the figure's title (so it reads without the command)."""
    names = {"k": "k", "alpha": "α", "eps1": "ε1", "eps2": "ε2", "delta": "δ", "beta": "β"}
    shown = []
    for name, value in fixed.items():
        if value is None or (isinstance(value, float) and math.isnan(value)):
            continue
        shown.append(f"{names[name]} = {value:g}")
    return "Users needed for closeness testing: " + ", ".join(shown)


def plot_power(curves: Sequence[tuple[Any, Sequence[Any]]], title: str) -> Any:
    """The power curve (the G*Power picture): power 1 − β against total users, a line per
    setting (``planner.power.settings_curves``); users where no plan fits leave a gap."""
    if not any(point.beta is not None for _, points in curves for point in points):
        raise InputError(
            "users",
            "the range asked",
            "a range reaching the β = 1/3 plan's users in some setting (no plan fits below)",
        )
    pyplot = _pyplot()
    figure, axis = pyplot.subplots(figsize=(8, 5.6))
    colours = pyplot.get_cmap("tab10")
    for index, (query, points) in enumerate(curves):
        x = [point.total for point in points]
        y = [point.power for point in points]  # NaN where no plan fits: a gap
        axis.plot(x, y, "-o", color=colours(index), markersize=3, label=query.setting.key)
    axis.axhline(2 / 3, linestyle=":", color="grey", linewidth=1.0)
    axis.annotate(
        "power 2/3 (β = 1/3): the least a plan backs",
        (0.01, 2 / 3),
        xycoords=("axes fraction", "data"),
        textcoords="offset points",
        xytext=(0, 4),
        fontsize="small",
        color="grey",
    )
    axis.set_xscale("log")
    axis.set_ylim(0.6, 1.0)
    axis.set_xlabel("total users n1 + n2 (split as each setting's plan splits them)")
    axis.set_ylabel("power 1 − β (β bounds both error rates)")
    axis.grid(True, which="major", alpha=0.3)
    axis.legend(loc="lower right", fontsize="small")
    axis.set_title(title, fontsize="medium")
    figure.tight_layout()
    return figure


def power_title(query: Any) -> str:
    """The fixed inputs of a power curve, for the figure's title."""
    shown = f"k = {query.k:g}, α = {query.alpha:g} (TV distance), ε1 = {query.eps1:g}, "
    shown += f"ε2 = {query.eps2:g}"
    if query.delta is not None:
        shown += f", δ = {float(query.delta)!r}"
    return "Power against total users: " + shown
