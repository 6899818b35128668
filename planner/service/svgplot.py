"""The web page's figure: users per group against ε2, log–log, as inline SVG (no libraries).

One colour per setting; solid lines are group 2, dashed lines group 1; a vertical line
marks the query's own ε2. The numbers are a sweep's rows (:func:`planner.api.sweep_result`).
"""

from __future__ import annotations

import math
from html import escape
from typing import Any

from planner.protocols import PROTOCOLS

COLOURS = {protocol.key: protocol.colour for protocol in PROTOCOLS}
WIDTH, HEIGHT = 640, 360
LEFT, RIGHT, TOP, BOTTOM = 64, 150, 16, 44


def eps2_values(eps1: float, eps2: float, points: int = 24) -> list[float]:
    """A geometric range of ε2 around the query's (always containing it)."""
    low = max(1e-4, min(eps2, eps1) / 5)
    high = min(20.0, max(eps1, eps2 * 2))
    if high <= low:
        high = low * 10
    step = (math.log(high) - math.log(low)) / (points - 1)
    values = [math.exp(math.log(low) + index * step) for index in range(points)]
    return sorted({*values, eps2})


def _ticks(low: float, high: float) -> list[float]:
    first = math.floor(math.log10(low) + 1e-9)
    last = math.ceil(math.log10(high) - 1e-9)
    ticks = [10.0**power for power in range(first, last + 1)]
    if len(ticks) <= 3:
        ticks = sorted({t * m for t in ticks for m in (1, 2, 5)})
    return [tick for tick in ticks if low * (1 - 1e-9) <= tick <= high * (1 + 1e-9)]


def _label(value: float) -> str:
    if value >= 1e6:
        return f"{value:.0e}".replace("e+0", "e").replace("e+", "e")
    return f"{value:,.0f}" if value >= 1 else f"{value:g}"


def _line(x1: float, x2: float, y1: float, y2: float, attributes: str) -> str:
    return f'<line x1="{x1:.1f}" x2="{x2:.1f}" y1="{y1:.1f}" y2="{y2:.1f}" {attributes}/>'


def _text(x: float, y: float, content: str, attributes: str) -> str:
    return f'<text x="{x:.1f}" y="{y:.1f}" {attributes}>{escape(content)}</text>'


def users_against_eps2(rows: list[dict[str, Any]], eps2: float) -> str:
    """The SVG element of the figure (an empty-state message without ok rows)."""
    series: dict[str, list[tuple[float, float, float]]] = {}
    for row in rows:
        if row["status"] != "ok":
            continue
        series.setdefault(row["setting"], []).append(
            (row["eps2"], row["n_users_group1"], row["n_users_group2"])
        )
    description = "Users per group against ε2; solid: group 2, dashed: group 1."
    if not series:
        return f'<p class="note">{escape(description)} No plan to draw for these inputs.</p>'
    xs = [x for points in series.values() for x, _, _ in points]
    ys = [y for points in series.values() for _, a, b in points for y in (a, b) if y > 0]
    x_low, x_high = min(xs), max(xs)
    y_low, y_high = min(ys) / 1.3, max(ys) * 1.3
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM

    def px(x: float) -> float:
        span = math.log(x_high) - math.log(x_low) or 1.0
        return LEFT + (math.log(x) - math.log(x_low)) / span * plot_w

    def py(y: float) -> float:
        span = math.log(y_high) - math.log(y_low) or 1.0
        return TOP + plot_h - (math.log(y) - math.log(y_low)) / span * plot_h

    parts = [
        f'<svg viewBox="0 0 {WIDTH} {HEIGHT}" role="img" aria-labelledby="plot-title" '
        'class="plot" xmlns="http://www.w3.org/2000/svg">',
        f'<title id="plot-title">{escape(description)}</title>',
        f'<rect x="{LEFT}" y="{TOP}" width="{plot_w}" height="{plot_h}" class="frame"/>',
    ]
    for tick in _ticks(y_low, y_high):
        y = py(tick)
        parts.append(_line(LEFT, LEFT + plot_w, y, y, 'class="grid"'))
        parts.append(_text(LEFT - 6, y + 4, _label(tick), 'class="tick" text-anchor="end"'))
    for tick in _ticks(x_low, x_high):
        x = px(tick)
        parts.append(_line(x, x, TOP, TOP + plot_h, 'class="grid"'))
        parts.append(_text(x, TOP + plot_h + 16, _label(tick), 'class="tick" text-anchor="middle"'))
    parts.append(
        _text(
            LEFT + plot_w / 2,
            HEIGHT - 6,
            "ε2 (group 2's privacy)",
            'class="axis" text-anchor="middle"',
        )
    )
    parts.append(
        f'<text x="14" y="{TOP + plot_h / 2:.0f}" class="axis" text-anchor="middle" '
        f'transform="rotate(-90 14 {TOP + plot_h / 2:.0f})">users</text>'
    )
    if x_low <= eps2 <= x_high:
        x = px(eps2)
        parts.append(_line(x, x, TOP, TOP + plot_h, 'class="marker"'))
    for index, (setting, points) in enumerate(series.items()):
        colour = COLOURS.get(setting, "#333")
        points.sort()
        for column, dash in ((2, ""), (1, ' stroke-dasharray="6 4"')):
            path = " ".join(
                f"{'M' if i == 0 else 'L'}{px(p[0]):.1f},{py(p[column]):.1f}"
                for i, p in enumerate(points)
                if p[column] > 0
            )
            parts.append(f'<path d="{path}" stroke="{colour}" fill="none" stroke-width="2"{dash}/>')
        y = TOP + 14 + index * 18
        x = LEFT + plot_w + 10
        parts.append(_line(x, x + 22, y - 4, y - 4, f'stroke="{colour}" stroke-width="3"'))
        parts.append(_text(x + 28, y, setting, 'class="legend"'))
    y = TOP + 14 + len(series) * 18 + 8
    x = LEFT + plot_w + 10
    parts.append(_text(x, y, "— group 2", 'class="legend"'))
    parts.append(_text(x, y + 16, "- - group 1", 'class="legend"'))
    parts.append("</svg>")
    return "\n".join(parts)
