"""The multipliers C that turn an O(·) bound into a number, read from one data file.

``data/constants.json`` holds, per setting, the source of its constant — ``proof``
(the paper's own), ``calibrated`` (Monte Carlo, with provenance) or ``order`` (C = 1,
not a guarantee) — and the multiplier applied to the registry bound.
"""

from __future__ import annotations

import bisect
import functools
import itertools
import json
import math
from dataclasses import dataclass, field
from enum import StrEnum
from functools import lru_cache
from importlib import resources
from typing import Any

import numpy as np

from planner.formulas.repetition import PER_RUN_ERROR
from planner.protocols import protocol_for


class ConstantSource(StrEnum):
    PROOF = "proof"
    CALIBRATED = "calibrated"
    ORDER = "order"
    SIMULATED = "simulated"
    """Not in the file: a plan sized by simulating this very query (``planner.coverage``)."""


@dataclass(frozen=True)
class SettingConstant:
    """How a setting's numbers are made: ``multiplier × bound`` (a registry key)."""

    source: ConstantSource
    multiplier: float
    bound: str | None = None
    """Registry key overriding the setting's default bound (e.g. the proof-constant form)."""
    note: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    def grid_corners(
        self, k: int, alpha: float, eps_strong: float, eps_weak: float
    ) -> list[GridCorner] | None:
        """The grid nodes around this point with their interpolation weights (None: no grid).

        The scalar fast path of :meth:`grid_corner_arrays` (same corners, same order, zero
        weights left out; tested equal), in plain Python for the one-plan latency.

        On an axis where the point lies outside the grid, the corner keeps the point's own
        coordinate (the constant is the edge's; the bound is the point's); a clamped ratio
        keeps the point's own ε_weak.
        """
        grid = self._parsed_grid
        if grid is None:
            return None
        axes, log_axes, values, margin = grid
        point = _grid_point(k, alpha, eps_strong, eps_weak)
        choices: list[tuple[tuple[int, float, float], ...]] = []  # (index, coordinate, weight)
        ratio_clamped = False
        for position, (axis, logs, coordinate) in enumerate(
            zip(axes, log_axes, point, strict=True)
        ):
            x = math.log(coordinate)
            if len(logs) == 1 or not logs[0] <= x <= logs[-1]:
                index = 0 if (len(logs) == 1 or x < logs[0]) else len(logs) - 1
                ratio_clamped = ratio_clamped or position == 3
                choices.append(((index, coordinate, 1.0),))
                continue
            index = min(bisect.bisect_right(logs, x) - 1, len(logs) - 2)
            fraction = (x - logs[index]) / (logs[index + 1] - logs[index])
            choices.append(
                ((index, axis[index], 1.0 - fraction), (index + 1, axis[index + 1], fraction))
            )
        corners = []
        for (i0, k0, w0), (i1, a1, w1), (i2, e2, w2), (i3, r3, w3) in itertools.product(*choices):
            weight = w0 * w1 * w2 * w3
            if weight > 0:
                corners.append(
                    GridCorner(
                        weight,
                        margin * values.item(i0, i1, i2, i3),
                        round(k0),
                        a1,
                        e2,
                        eps_weak if ratio_clamped else e2 * r3,
                        (i0, i1, i2, i3),
                    )
                )
        return corners

    def compression(self) -> tuple[int, int]:
        """(L, hashes) of the constant's tester (the public coin's compressed domain and
        hashes; 2 and 1 where it has none), read each time: a caller may set them in the
        constant in place (a test does)."""
        return int(self.extra.get("L", 2)), int(self.extra.get("hashes", 1))

    @functools.cached_property
    def least_multiplier(self) -> float:
        """The least C a point's multiplier can take (``planner.plan.calibrated_multiplier``):
        the scalar C without a grid; with one, the least node's C (with the margin), as the
        multiplier is at least the geometric mean of its corners' C, weighted by
        :meth:`grid_corners`' weights (≥ 0, summing to 1). A lower limit for pruning."""
        grid = self._parsed_grid
        if grid is None:
            return self.multiplier
        _, _, values, margin = grid
        return margin * float(values.min())

    def grid_corner_arrays(
        self, k: Any, alpha: Any, eps_strong: Any, eps_weak: Any
    ) -> list[GridCorner] | None:
        """The 16 corners of each point's grid cell (multilinear in the logs), elementwise,
        less those whose weight is 0 at every point.

        Fields are arrays of the points' shape; a corner's weight is 0 where the point sits
        on its cell's other face. On an axis where the point lies outside the grid, both
        corners of that axis take the point's own coordinate and the edge's constant (the
        constant is the edge's, the bound is the point's), with weights 1 and 0; a clamped
        ratio keeps the point's own ε_weak.
        """
        grid = self._parsed_grid
        if grid is None:
            return None
        values = grid[2]
        point = [np.asarray(value, dtype=np.float64) for value in (k, alpha, eps_strong)]
        point.append(np.asarray(eps_weak, dtype=np.float64) / point[2])
        sides = []  # per axis: ((index, coordinate, weight) of the lower and upper corner)
        on_nodes = np.ones(np.shape(point[0]), dtype=bool)
        for (nodes, logs, spans), coordinate in zip(self._grid_arrays, point, strict=True):
            flat = coordinate.ravel()
            if flat.size > 1 and bool((flat == flat[0]).all()):  # one value (a sweep's ε)
                outside, (lower, upper) = _axis_sides(nodes, logs, spans, flat[:1])
                outside = np.broadcast_to(outside, coordinate.shape)
                axis_sides = (
                    tuple(np.broadcast_to(part, coordinate.shape) for part in lower),
                    tuple(np.broadcast_to(part, coordinate.shape) for part in upper),
                )
            else:
                outside, axis_sides = _axis_sides(nodes, logs, spans, coordinate)
            on_nodes = on_nodes & ~outside
            sides.append(axis_sides)
        ratio_clamped = outside  # the last axis: ε_weak/ε_strong outside its nodes
        own_weak = np.asarray(eps_weak, dtype=np.float64)
        # what several corners share is made once: k rounded per k side, ε_weak per
        # (ε_strong, ratio) side, the weight's partial products in the same order
        # ((w0·w1)·w2)·w3, and the node's flat position for one gather instead of four
        strides = [int(math.prod(values.shape[axis + 1 :])) for axis in range(4)]
        # a side weighing 0 at every point (the point on its lower node, or outside the
        # grid, on that axis everywhere: a sweep's fixed ε) gives every corner on it a
        # weight of 0 everywhere; such corners are left out (each would add exactly 0 to
        # a chord, and nothing to a largest C)
        live = [[bool(side[2].any()) for side in axis_sides] for axis_sides in sides]
        offsets = [
            [side[0] * stride for side in axis_sides]
            for axis_sides, stride in zip(sides, strides, strict=True)
        ]
        partial: dict[tuple[int, ...], Any] = {}
        position: dict[tuple[int, ...], Any] = {}
        for s0, s1 in itertools.product(range(2), repeat=2):
            if not (live[0][s0] and live[1][s1]):
                continue
            weight01 = sides[0][s0][2] * sides[1][s1][2]
            position01 = offsets[0][s0] + offsets[1][s1]
            for s2 in range(2):
                if live[2][s2]:
                    partial[s0, s1, s2] = weight01 * sides[2][s2][2]
                    position[s0, s1, s2] = position01 + offsets[2][s2]
        k_nodes: dict[int, Any] = {}
        weak_nodes: dict[tuple[int, int], Any] = {}
        margined = self._margined_values
        corners = []
        for s0, s1, s2, s3 in itertools.product(range(2), repeat=4):
            if (s0, s1, s2) not in partial or not live[3][s3]:
                continue
            (i0, k0, _), (i1, a1, _), (i2, e2, _), (i3, r3, w3) = (
                sides[0][s0],
                sides[1][s1],
                sides[2][s2],
                sides[3][s3],
            )
            if s0 not in k_nodes:
                k_nodes[s0] = np.round(k0).astype(np.int64)
            if (s2, s3) not in weak_nodes:
                weak_nodes[s2, s3] = np.where(ratio_clamped, own_weak, e2 * r3)
            flat = position[s0, s1, s2] + offsets[3][s3]
            corners.append(
                GridCorner(
                    partial[s0, s1, s2] * w3,
                    margined[flat],
                    k_nodes[s0],
                    a1,
                    e2,
                    weak_nodes[s2, s3],
                    (i0, i1, i2, i3),
                    on_nodes,
                    flat,
                )
            )
        return corners

    def grid_axis(self, name: str) -> tuple[float, ...]:
        """One axis of the calibration grid (a :data:`GRID_AXES` name); empty without one."""
        grid = self._parsed_grid
        if grid is None:
            return ()
        return tuple(grid[0][GRID_AXES.index(name)])

    def grid_nodes(self) -> tuple[np.ndarray, ...] | None:
        """Every grid node's (k, α, ε_strong, ε_weak), arrays of the grid's shape."""
        grid = self._parsed_grid
        if grid is None:
            return None
        k, alpha, eps_strong, ratio = np.meshgrid(*grid[0], indexing="ij")
        return np.round(k).astype(np.int64), alpha, eps_strong, eps_strong * ratio

    def direct_factor(
        self, beta: float, k: int, eps_strong: float | None = None, alpha: float | None = None
    ) -> float | None:
        """How many times one run's C must grow to meet β by itself (README, β).

        From the ``direct`` entry (``planner calibrate --direct``): per calibrated k, factors
        at β nodes and 1 at β = 1/3, interpolated linearly in log f against log β, then
        against log k. Above the last k its row is used (the factor moves little with k,
        and not always down: ``planner.calibration.direct.DIRECT_MARGIN``).
        None when there is no entry, β is below the last node, k is below the first, a
        node it needs has no factor (the tester's constants leave an error floor there), or
        the larger ε is above the entry's grid (``eps_strong``; None: not checked, the
        direct points' table read) or, where the setting has a ``direct_large_eps`` entry (the
        local private coin: points at ε_strong = 5 and 20, ``planner calibrate --direct
        --large-eps``), above its points, whose table it reads above the direct points': there
        the tester adds little noise, its error's tail falls more slowly than where the
        factors were measured, and only the majority vote is backed (``docs/coverage.md``).
        Likewise above the entry's largest α (``alpha``; None: not checked): a plan there
        has few users, its statistic is as discrete as the data. Below the setting's
        ``direct_alpha_min`` (where it has one) only with a ``direct_by_node`` entry: the
        shuffle testers' error tail grows heavier as α falls (private coin at k = 256,
        ε = (0.5, 0.5), β = 0.1: 1.86× one run's C at α = 0.05 and 2.39× at α = 0.01,
        against 1.69–1.83× at the α ≥ 0.15 points of k = 256), and their direct plans with
        the α ≥ 0.15 factors failed at α = 0.01 (``docs/coverage.md``, β below 1/3). That
        entry holds a table per node (α, ε_strong), α at 0.01, 0.05 and the direct points'
        0.15 and 0.5, ε_strong at the points' 0.25 and 1 and, for the private coin, 0.05
        (``direct_small_eps``): each the worst over the points at its α or a larger node
        and its ε_strong or a smaller one, as the factor falls with α and rises with ε.
        Central has such an entry too, with ε nodes 0.0004, 0.001, 0.01, 0.05, 0.25 and 1,
        each the worst over its own points only: at k = 16 its factor is least near
        ε_strong = 0.05 and rises both ways (``planner.calibration.direct
        .EPS_NODE_OWN_POINTS``).
        A query with an α and an ε_strong takes the log-log
        interpolation between the nodes around it (in ε_strong, then in α); below the first
        ε_strong node the first node's tables (at k = 256, α = 0.15, β = 0.02 the factor is
        2.07 at ε_strong = 0.05 and 2.00 at 0.01, against 2.22 at 0.25), above the last α
        node the last node's, below the first α node the vote.
        """
        return self._direct_lookup(beta, k, eps_strong, alpha)[0]

    def direct_unavailable(
        self, beta: float, k: int, eps_strong: float | None = None, alpha: float | None = None
    ) -> str | None:
        """Why :meth:`direct_factor` has no factor here (None when it has one): the first
        of its conditions the query misses, in words a plan can print."""
        factor, reason = self._direct_lookup(beta, k, eps_strong, alpha)
        return None if factor is not None else reason

    def direct_limits(self) -> tuple[float, float]:
        """The largest ε_strong and α at which :meth:`direct_factor` may have a factor (0, 0
        without direct points): the direct points' tops, or the ``direct_large_eps`` /
        ``direct_large_alpha`` points' where the setting has them."""
        regions = self.direct_regions()
        if not regions:
            return 0.0, 0.0
        return max(eps for eps, _ in regions), max(alpha for _, alpha in regions)

    def direct_regions(self) -> list[tuple[float, float]]:
        """The (ε_strong, α) tops of each region a direct table covers: the direct points'
        (and ``direct_by_node``'s), then beyond the ε_strong top with the α top kept
        (``direct_large_eps``), then beyond the α top with the ε_strong top kept
        (``direct_large_alpha``); empty without direct points. A query beyond both tops
        at once is in none: those points were measured apart."""
        direct = self.extra.get("direct") or {}
        if not direct.get("axes"):
            return []
        top_eps, top_alpha = self._measured_tops()
        regions = [(top_eps, top_alpha)]
        large_eps = self.extra.get("direct_large_eps")
        if large_eps:
            regions.append((max(large_eps["axes"]["eps_strong"]), top_alpha))
        large_alpha = self.extra.get("direct_large_alpha")
        if large_alpha:
            regions.append((top_eps, max(large_alpha["axes"]["alpha"])))
        return regions

    def _measured_tops(self) -> tuple[float, float]:
        """The largest ε_strong of the direct points (and the ``direct_by_node`` points),
        and their largest α."""
        direct = self.extra.get("direct") or {}
        band = self.extra.get("direct_by_node") or {}
        tops = [
            max(entry["axes"]["eps_strong"])
            for entry in (direct, band)
            if entry.get("axes", {}).get("eps_strong")
        ]
        alphas = direct.get("axes", {}).get("alpha")
        return (min(tops) if tops else 0.0), (max(alphas) if alphas else 0.0)

    def direct_betas(self) -> tuple[float, ...]:
        """The β nodes of every direct table (largest first): where one run may be held to
        an error by its direct factor (a vote of such runs, ``RepetitionMethod
        .DIRECT_VOTE``); empty without direct points."""
        nodes: set[float] = set()
        for name in ("direct", "direct_by_node", "direct_large_eps", "direct_large_alpha"):
            entry = self.extra.get(name) or {}
            nodes.update(float(beta) for beta in entry.get("beta", ()))
        return tuple(sorted(nodes, reverse=True))

    def run_betas(self, beta: float) -> tuple[float, ...]:
        """The errors one run may be held to for a plan at β < 1/3 by a direct factor: β
        itself, then each direct node above it (a vote of such runs,
        ``RepetitionMethod.DIRECT_VOTE``), largest last."""
        return (beta, *sorted(node for node in self.direct_betas() if node > beta))

    def has_direct_factor(self, beta: float, k: int) -> bool:
        """Whether one run may be held to β by a direct factor at (β, k), or a vote of runs
        to it by one at a direct node above β (the direct points' table read; ε_strong and
        α not checked): where a plan weighs direct calibration at all."""
        if not beta < PER_RUN_ERROR:
            return False
        return any(self.direct_factor(at, k) is not None for at in self.run_betas(beta))

    def direct_least_k(self) -> int:
        """The least k of the direct points (0 without them): below it,
        :meth:`direct_factor` has no factor."""
        direct = self.extra.get("direct") or {}
        return int(direct["k"][0]) if direct.get("k") else 0

    @functools.cached_property
    def _direct_lookup_memo(self) -> dict[tuple[Any, ...], tuple[float | None, str]]:
        return {}

    def _direct_lookup(
        self, beta: float, k: int, eps_strong: float | None, alpha: float | None
    ) -> tuple[float | None, str]:
        """:meth:`_direct_lookup_once`, remembered per (β, k, ε_strong, α): a power curve's
        solves ask the same points of every protocol again and again (half its time)."""
        key = (beta, k, eps_strong, alpha)
        memo = self._direct_lookup_memo
        found = memo.get(key)
        if found is None:
            if len(memo) >= 65536:
                memo.clear()
            found = memo[key] = self._direct_lookup_once(beta, k, eps_strong, alpha)
        return found

    def _direct_lookup_once(
        self, beta: float, k: int, eps_strong: float | None, alpha: float | None
    ) -> tuple[float | None, str]:
        direct = self.extra.get("direct")
        if not direct:
            return None, "this tester has no direct calibration"
        if not 0 < beta < PER_RUN_ERROR:
            return None, "one run already meets β ≥ 1/3"
        band = self.extra.get("direct_by_node") if alpha is not None else None
        if alpha is not None and (band or alpha < float(self.extra.get("direct_alpha_min", 0))):
            lowest = band["alpha"][0] if band else float(self.extra["direct_alpha_min"])
            if alpha < lowest:
                return None, f"α = {alpha:g} is below its measured points' {lowest:g}"
        top_eps, top_alpha = self.direct_limits()
        if eps_strong is not None and eps_strong > top_eps:
            return None, f"ε_strong = {eps_strong:g} is above its measured points' {top_eps:g}"
        if alpha is not None and alpha > top_alpha:
            return None, f"α = {alpha:g} is above its measured points' {top_alpha:g}"
        measured_eps, measured_alpha = self._measured_tops()
        above_eps = eps_strong is not None and eps_strong > measured_eps
        above_alpha = alpha is not None and alpha > measured_alpha
        if above_eps and above_alpha:
            return None, (
                f"ε_strong = {eps_strong:g} and α = {alpha:g} are both above its direct "
                f"points' ({measured_eps:g}, {measured_alpha:g}), measured beyond one at a time"
            )
        beyond = self.extra.get(
            "direct_large_eps" if above_eps else "direct_large_alpha" if above_alpha else ""
        )
        if above_alpha and beyond and band and eps_strong is not None:
            # a setting whose factor moves with ε below the direct points (its tables per
            # ε node) reads the points beyond α only from their own least ε up
            least_eps = min(beyond["axes"]["eps_strong"])
            if eps_strong < least_eps:
                return None, (
                    f"ε_strong = {eps_strong:g} is below its points' {least_eps:g} "
                    f"above α = {measured_alpha:g}"
                )
        if (above_eps or above_alpha) and not beyond:  # the other axis's top is larger
            axis, value, top = (
                ("ε_strong", eps_strong, measured_eps)
                if above_eps
                else ("α", alpha, measured_alpha)
            )
            return None, f"{axis} = {value:g} is above its measured points' {top:g}"
        if k < self.direct_least_k():
            return None, f"k = {k:,} is below its measured points' {direct['k'][0]:,}"
        top_k = self.covered_above_grid[0]
        if k > top_k:
            # above its grid a plan is covered in part only (``covered_above_grid``), and
            # its β = 1/3 run sits nearer 1/3 than the operating point: a hold-out at
            # k = 36,339, β = 0.306 erred 0.295 (0.283 – 0.308) against that point's 0.27
            return None, f"k = {k:,} is above its grid's {top_k:,.0f}, where only the vote holds"
        if beta < min(direct["beta"]):
            return None, f"β = {beta:g} is below its last calibrated β = {min(direct['beta']):g}"
        if beyond:
            factor = _direct_table_factor(beyond["beta"], beyond["k"], beyond["factor"], beta, k)
        elif band and alpha is not None:  # no ε_strong given: the worst ε node's
            at_eps = math.inf if eps_strong is None else eps_strong
            factor = _by_node_factor(band, beta, k, alpha, at_eps, self._node_tables(beta, k))
        else:
            factor = _direct_table_factor(direct["beta"], direct["k"], direct["factor"], beta, k)
        if factor is None:
            return None, "one run has an error floor above β's operating error here"
        return factor, ""

    @functools.cached_property
    def _node_tables_memo(self) -> dict[tuple[float, int], list[list[float | None]]]:
        return {}

    @functools.cached_property
    def node_units_memo(self) -> dict[tuple[Any, ...], np.ndarray]:
        """A memo for the sweep's C = 1 sizes at the grid's nodes
        (``planner.vectorised._corner_units``), kept with the constant they size."""
        return {}

    def _node_tables(self, beta: float, k: int) -> list[list[float | None]]:
        """The ``direct_by_node`` tables' factors at (β, k), a list per α node of one per
        ε node, remembered: an allocation reads them for each of its 64 members (each at
        its own ε_strong) at one (β, k), and a power curve's bisections ask again (at
        k = 1,000 they were two thirds of a central power curve's time)."""
        memo = self._node_tables_memo
        found = memo.get((beta, k))
        if found is None:
            if len(memo) >= NODE_TABLES_MEMO:
                memo.clear()
            found = memo[(beta, k)] = _node_tables(self.extra["direct_by_node"], beta, k)
        return found

    def least_cell_multipliers(
        self, k: Any, alpha: Any, eps_strong: Any, eps_weak: Any
    ) -> np.ndarray:
        """A lower limit on the multiplier at each point (at its grid position), sharper
        than :attr:`least_multiplier`: the least C (with the margin) of the nodes of the
        point's grid cell, two nodes an axis (the edge's pair outside the grid). The corners
        :meth:`grid_corner_arrays` weighs are among them, and the multiplier is at least
        their weighted geometric mean (the α tail's and the largest corner's C are no
        smaller). Without a grid: the scalar C."""
        grid = self._parsed_grid
        shape = np.shape(np.asarray(k) + np.asarray(alpha) + np.asarray(eps_strong))
        if grid is None:
            return np.full(shape, self.multiplier)
        point = [np.asarray(value, dtype=np.float64) for value in (k, alpha, eps_strong)]
        point.append(np.asarray(eps_weak, dtype=np.float64) / point[2])
        cells = tuple(
            np.broadcast_to(_cell_index(logs, np.log(x)), shape)
            for (_, logs, _), x in zip(self._grid_arrays, point, strict=True)
        )
        return self._cell_minima[cells]

    def eps_node_constants(
        self, k: Any, alpha: Any, tail_below_k: int = 0
    ) -> tuple[np.ndarray, list[tuple[np.ndarray, np.ndarray, np.ndarray]]]:
        """For a grid of one ratio node, read along ε at each point's (k, α): log C at
        every ε node (points × nodes), interpolated over k and α as
        :meth:`grid_corner_arrays` does (multilinear in the logs, the edge's C outside), and
        the (weight, k, α) of each k–α corner (a node's, or outside the grid on that axis
        the point's own coordinate; k rounded as there). Points with k below
        ``tail_below_k`` read :attr:`alpha_tail_multipliers` from their cell's lower α
        node up (``Protocol.largest_alpha_c_below_k``)."""
        grid = self._parsed_grid
        assert grid is not None and len(grid[0][3]) == 1
        values = grid[2][:, :, :, 0] * grid[3]
        k, alpha = np.broadcast_arrays(np.asarray(k, np.float64), np.asarray(alpha, np.float64))
        (k_nodes, k_logs, k_spans), (a_nodes, a_logs, a_spans) = self._grid_arrays[:2]
        _, k_sides = _axis_sides(k_nodes, k_logs, k_spans, k)
        _, a_sides = _axis_sides(a_nodes, a_logs, a_spans, alpha)
        tail = None
        if tail_below_k:
            assert self.alpha_tail_multipliers is not None
            tail = self.alpha_tail_multipliers[:, :, :, 0]
            below = (k < tail_below_k)[:, None]
            # the cell's lower α node (the upper one where the lower weighs nothing)
            low = np.where(a_sides[0][2] > 0, a_sides[0][0], a_sides[1][0])
        log_constants = np.zeros((*k.shape, values.shape[2]))
        corners = []
        for index_k, coordinate_k, weight_k in k_sides:
            for index_a, coordinate_a, weight_a in a_sides:
                weight = weight_k * weight_a
                read = values[index_k, index_a, :]
                if tail is not None:
                    read = np.where(below, tail[index_k, low, :], read)
                log_constants += np.where(weight > 0, weight, 0.0)[:, None] * np.log(read)
                corners.append((weight, np.round(coordinate_k), coordinate_a))
        return log_constants, corners

    @functools.cached_property
    def _cell_minima(self) -> np.ndarray:
        """The least C (with the margin) of each grid cell's nodes, by the cell's lower
        node on each axis (a one-node axis: that node)."""
        grid = self._parsed_grid
        assert grid is not None
        _, _, values, margin = grid
        minima = values
        for axis in range(values.ndim):
            if values.shape[axis] > 1:
                lower = np.take(minima, range(values.shape[axis] - 1), axis=axis)
                upper = np.take(minima, range(1, values.shape[axis]), axis=axis)
                minima = np.minimum(lower, upper)
        return margin * minima

    @property
    def tester_extras(self) -> dict[str, Any]:
        """The tester's free parameters kept with the constant: thresholds, L, hashes."""
        return {name: self.extra[name] for name in TESTER_EXTRAS if name in self.extra}

    @functools.cached_property
    def alpha_tail_multipliers(self) -> np.ndarray | None:
        """C (with the margin) at each grid node raised to the largest C of the α nodes at
        and above it, the other axes' nodes the same (``Protocol.largest_alpha_c_below_k``):
        non-increasing in α, so a plan reading it never needs more users at a larger α.
        None without a grid."""
        grid = self._parsed_grid
        if grid is None:
            return None
        _, _, values, margin = grid
        tail = np.maximum.accumulate(values[:, ::-1, :, :], axis=1)[:, ::-1, :, :]
        return margin * tail

    @functools.cached_property
    def _parsed_grid(
        self,
    ) -> tuple[list[list[float]], list[list[float]], np.ndarray, float] | None:
        """Axes, their logs, node values by index tuple, and the margin (parsed once)."""
        grid = self.extra.get("grid")
        if not grid:
            return None
        axes = [[float(value) for value in grid["axes"][name]] for name in GRID_AXES]
        values = np.asarray(grid["multipliers"], dtype=float).reshape([len(a) for a in axes])
        return (
            axes,
            [[math.log(v) for v in axis] for axis in axes],
            values,
            float(grid["safety_margin"]),
        )

    @functools.cached_property
    def _margined_values(self) -> np.ndarray:
        """The grid's C at every node with the safety margin, read flat (C order)."""
        grid = self._parsed_grid
        assert grid is not None
        _, _, values, margin = grid
        return margin * values.ravel()

    @functools.cached_property
    def _grid_arrays(self) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """Per grid axis: its nodes, their logs (as :attr:`_parsed_grid`'s), and each cell's
        span in log (next node's log less its lower node's; 1 where that is not above 0,
        and on a one-node axis), by the cell's lower node."""
        grid = self._parsed_grid
        assert grid is not None
        arrays = []
        for axis, logs in zip(grid[0], grid[1], strict=True):
            log_array = np.asarray(logs, dtype=np.float64)
            span = log_array[1:] - log_array[:-1]
            spans = np.where(span > 0, span, 1.0) if span.size else np.ones(1)
            arrays.append((np.asarray(axis, dtype=np.float64), log_array, spans))
        return arrays

    @functools.cached_property
    def covered(self) -> dict[str, tuple[float, float]]:
        """Where this setting's calibrated plans are backed by validation on fresh points.

        The entry's ``covered`` ranges (one per ``COVERAGE_AXES`` name it restricts), else
        the grid's extent on each grid axis; empty when the constant has no grid (the
        ``order`` and ``proof`` sources, which promise nothing).
        """
        explicit = self.extra.get("covered")
        if explicit:
            return {name: (float(low), float(high)) for name, (low, high) in explicit.items()}
        grid = self.extra.get("grid")
        if not grid:
            return {}
        return {name: (min(grid["axes"][name]), max(grid["axes"][name])) for name in GRID_AXES}

    @functools.cached_property
    def covered_above_grid(self) -> tuple[float, dict[str, tuple[float, float]]]:
        """(the grid's top k, ranges that also hold above it): the entry's
        ``covered_above_grid`` (e.g. ``{"eps_weak": [0, 5]}``: above the grid's k, only
        where the smaller ε is at most 5), else no further range."""
        ranges = self.extra.get("covered_above_grid") or {}
        top = max(self.grid_axis("k"), default=math.inf) if ranges else math.inf
        return top, {name: (float(low), float(high)) for name, (low, high) in ranges.items()}

    def uncovered_axes(self, k: Any, alpha: Any, eps_strong: Any, eps_weak: Any, delta: Any) -> Any:
        """Elementwise twin of :meth:`coverage_gaps`: a bit per ``COVERAGE_AXES`` axis the
        point lies outside of (0: covered). NaN δ (not given) is not checked."""
        point = {
            "k": np.asarray(k, dtype=np.float64),
            "alpha": np.asarray(alpha, dtype=np.float64),
            "eps_strong": np.asarray(eps_strong, dtype=np.float64),
            "eps_ratio": np.asarray(eps_weak, dtype=np.float64) / np.asarray(eps_strong),
            "delta": np.asarray(delta, dtype=np.float64),
            "eps_weak": np.asarray(eps_weak, dtype=np.float64),
        }
        shape = np.broadcast_shapes(*(value.shape for value in point.values()))
        bits = np.zeros(shape, dtype=np.int64)
        top, above = self.covered_above_grid
        for bit, name in enumerate(COVERAGE_AXES):
            for ranges, where in ((self.covered, True), (above, point["k"] > top)):
                if name not in ranges:
                    continue
                low, high = ranges[name]
                value = point[name]
                with np.errstate(invalid="ignore"):
                    outside = (value < low * (1 - 1e-9)) | (value > high * (1 + 1e-9))
                bits |= np.where(outside & where, 1 << bit, 0)
        return bits

    def coverage_gaps(
        self, k: int, alpha: float, eps_strong: float, eps_weak: float, delta: float | None
    ) -> list[tuple[str, float, float, float]]:
        """The covered ranges this point lies outside of: (axis, value, low, high) each."""
        point = dict(zip(GRID_AXES, _grid_point(k, alpha, eps_strong, eps_weak), strict=True))
        if delta is not None:
            point["delta"] = delta
        point["eps_weak"] = eps_weak
        top, above = self.covered_above_grid
        ranges = [*self.covered.items(), *(above.items() if k > top else ())]
        return [
            (name, point[name], low, high)
            for name, (low, high) in ranges
            if name in point and not low * (1 - 1e-9) <= point[name] <= high * (1 + 1e-9)
        ]


def _axis_sides(
    nodes: np.ndarray, logs: np.ndarray, spans: np.ndarray, coordinate: np.ndarray
) -> tuple[np.ndarray, tuple[tuple[np.ndarray, ...], tuple[np.ndarray, ...]]]:
    """Where each point lies outside a grid axis (``nodes``, their ``logs``, each cell's
    ``spans`` in log), and the (index, coordinate, weight) of the lower and the upper
    corner on it (outside: the edge node's index, the point's own coordinate, weights 1
    and 0)."""
    x = np.log(coordinate)
    outside = (x < logs[0]) | (x > logs[-1]) | (len(logs) == 1)
    edge = np.where(x < logs[0], 0, len(logs) - 1)
    inner = _cell_index(logs, x)
    upper_index = np.minimum(inner + 1, len(logs) - 1)
    fraction = (x - logs[inner]) / spans[inner]
    return outside, (
        (
            np.where(outside, edge, inner),
            np.where(outside, coordinate, nodes[inner]),
            np.where(outside, 1.0, 1.0 - fraction),
        ),
        (
            np.where(outside, edge, upper_index),
            np.where(outside, coordinate, nodes[upper_index]),
            np.where(outside, 0.0, fraction),
        ),
    )


def _cell_index(logs: np.ndarray, x: Any) -> Any:
    """The lower node of the grid cell around log-coordinate ``x`` on an axis of node logs
    ``logs`` (the edge cell outside the axis; 0 on a one-node axis; a NaN: the last cell).

    The cells' inner nodes above ``x`` counted off the last cell, one comparison a node
    (a grid axis has a handful): several times faster on arrays than a binary search,
    and equal to ``clip(searchsorted(logs, x, "right") − 1, 0, len − 2)``."""
    last = max(len(logs) - 2, 0)
    index = np.full(np.shape(x), last, dtype=np.intp)
    for node in logs[1:-1]:
        index -= np.less(x, node)
    return index


@dataclass(frozen=True)
class GridCorner:
    """A grid node used for one interpolation: weight, C there (with margin), coordinates.

    Scalars for one point, or arrays of the points' shape (``grid_corner_arrays``).
    """

    weight: Any
    multiplier: Any
    k: Any
    alpha: Any
    eps_strong: Any
    eps_weak: Any
    index: Any = None
    """The node's index on each grid axis (arrays, or a tuple of ints for one point)."""
    on_nodes: Any = None
    """Arrays only: true where every corner of the point is a grid node (no axis outside)."""
    flat_index: Any = None
    """Arrays only: the node's position in the grid's values read flat (C order)."""


def _direct_table_factor(
    betas: list[float], ks: list[float], rows: list[list[float | None]], beta: float, k: int
) -> float | None:
    """A direct table's factor at (β, k): per k row, log-log in β between 1 at β = 1/3 and
    the row's nodes, then log-log in k; the last row above the last k, None below the first
    k or below the last β."""
    if k < ks[0]:
        return None
    at_beta = [_log_log_between(beta, [PER_RUN_ERROR, *betas], [1.0, *row]) for row in rows]
    return _log_log_between(min(k, ks[-1]), ks, at_beta)


def _node_tables(band: dict[str, Any], beta: float, k: int) -> list[list[float | None]]:
    """Each node's table of a ``direct_by_node`` entry at (β, k), as in
    ``_direct_table_factor``: a list per α node of one factor per ε node."""
    return [
        [_direct_table_factor(band["beta"], band["k"], table, beta, k) for table in by_eps]
        for by_eps in band["factor"]
    ]


def _by_node_factor(
    band: dict[str, Any],
    beta: float,
    k: int,
    alpha: float,
    eps_strong: float,
    tables: list[list[float | None]] | None = None,
) -> float | None:
    """A ``direct_by_node`` entry's factor at (β, k, α, ε_strong): each node's table at
    (β, k) as in ``_direct_table_factor`` (``tables``: those already read,
    :func:`_node_tables`), then log-log in ε_strong per α node (the first node below it;
    with ε_strong = ∞, no ε given, the largest over the ε nodes), then log-log in α (the
    last node above it); None where a node it needs has none."""
    alphas = [float(node) for node in band["alpha"]]
    eps_nodes = [float(node) for node in band["eps_strong"]]
    eps = max(eps_strong, eps_nodes[0])
    at_alpha = []
    for at_eps in _node_tables(band, beta, k) if tables is None else tables:
        if math.isinf(eps):  # no ε_strong given: the worst node's
            known = [value for value in at_eps if value is not None]
            at_alpha.append(max(known) if len(known) == len(at_eps) else None)
        else:
            at_alpha.append(
                at_eps[-1] if eps >= eps_nodes[-1] else _log_log_between(eps, eps_nodes, at_eps)
            )
    return at_alpha[-1] if alpha >= alphas[-1] else _log_log_between(alpha, alphas, at_alpha)


def _log_log_between(x: float, nodes: list[float], values: list[float | None]) -> float | None:
    """Linear interpolation of log value against log x between the two nodes around x
    (nodes monotone, either way): a node's own value at a node; None outside the nodes
    or when a value it needs is None."""
    if x in nodes:
        return values[nodes.index(x)]
    for (x0, v0), (x1, v1) in itertools.pairwise(zip(nodes, values, strict=True)):
        if min(x0, x1) <= x <= max(x0, x1):
            if v0 is None or v1 is None:
                return None
            weight = math.log(x / x0) / math.log(x1 / x0)
            return math.exp((1 - weight) * math.log(v0) + weight * math.log(v1))
    return None


def _grid_point(k: int, alpha: float, eps_strong: float, eps_weak: float) -> list[float]:
    return [float(k), alpha, eps_strong, eps_weak / eps_strong]


GRID_AXES = ("k", "alpha", "eps_strong", "eps_ratio")
"""Axes of a calibration grid: domain size, distance, the larger ε, and ε_weak/ε_strong."""
COVERAGE_AXES = (*GRID_AXES, "delta", "eps_weak")
"""Axes a covered region may restrict: the grid's, the shuffle model's δ, and the smaller ε
where a constant's ``covered_above_grid`` restricts it above the grid's top k."""
TESTER_EXTRAS = ("tester", "L", "hashes")
"""Entries of a setting's constant that configure its tester (not the multiplier)."""
NODE_TABLES_MEMO = 4096
"""(β, k) pairs a setting remembers its ``direct_by_node`` tables at (then forgets them all)."""


@dataclass(frozen=True)
class ConstantTable:
    """The calibrated constants of every setting, with the table's version."""

    version: str
    settings: dict[str, SettingConstant]

    def for_setting(self, setting_key: str) -> SettingConstant:
        return self.settings[setting_key]

    def has_setting(self, setting_key: str) -> bool:
        """Whether the table sizes this protocol (a file written before it may not)."""
        return setting_key in self.settings

    @functools.cached_property
    def memo(self) -> dict[Any, Any]:
        """What callers derive from the whole table and keep with it (the larger domains a
        setting's plans weigh: ``planner.plan.padding_domains``)."""
        return {}


def parse_constant_table(document: dict[str, Any]) -> ConstantTable:
    """Build a table from the JSON document (see ``data/constants.json``)."""
    settings = {}
    for key, entry in document["settings"].items():
        known = {"source", "multiplier", "bound", "note"}
        settings[key] = SettingConstant(
            source=ConstantSource(entry["source"]),
            multiplier=float(entry["multiplier"]),
            bound=entry.get("bound"),
            note=entry.get("note", ""),
            extra={name: value for name, value in entry.items() if name not in known},
        )
    return ConstantTable(version=str(document["version"]), settings=settings)


@lru_cache(maxsize=1)
def default_constants() -> ConstantTable:
    """The constants shipped inside the package."""
    text = resources.files("planner").joinpath("data/constants.json").read_text("utf-8")
    return parse_constant_table(json.loads(text))


def constants_with_source(
    source: ConstantSource, base: ConstantTable | None = None
) -> ConstantTable:
    """The shipped table, or a variant whose every setting uses ``source``.

    ``order``: C = 1 everywhere (the O(·) bound itself). ``proof``: the paper's proof
    constants where it gives them (local private coin, ``theo:l2_mean_flip``), C = 1
    elsewhere. Tester parameters are kept.
    """
    table = base or default_constants()
    if source is ConstantSource.CALIBRATED:
        return table
    settings = {}
    for key, entry in table.settings.items():
        kept = entry.tester_extras
        proof = protocol_for(key).proof_bound if source is ConstantSource.PROOF else None
        if proof is not None:
            settings[key] = SettingConstant(ConstantSource.PROOF, 1.0, *proof, kept)
        else:
            note = (
                "the paper's proofs give constants for the local private-coin tester only "
                "(theo:l2_mean_flip)"
                if source is ConstantSource.PROOF
                else ""
            )
            settings[key] = SettingConstant(ConstantSource.ORDER, 1.0, None, note, kept)
    return ConstantTable(version=f"{table.version}+{source.value}", settings=settings)
