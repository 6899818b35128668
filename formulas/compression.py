"""Choice of the compressed domain size L for public-coin protocols (README).

Three answers are reported side by side, for the public-coin shuffle bound
n1(L) = a·L^{-1/2} + b·L^{1/4} + min(c·L^{-2}, d) with a = k/α², b = √(kμ1)/α,
c = k²/(α⁴μ1μ2), d = k^{2/3}(μ1/μ2)^{1/3}/α^{4/3}:

* ``paper_L`` — the paper's choice in the proof of ``theo:sdp_public_ns``, the L that
  *balances* the first two terms: min(k, max(2, k^{2/3}/(α^{4/3}μ1^{2/3}))).
* ``closed_form_L`` — the stationary point, in closed form. On the min's first branch,
  d n1/dL = 0 ⇔ (multiplying by 4L³, u = L^{3/4}) b·u³ − 2a·u² − 8c = 0, a cubic with
  exactly one positive root (one sign change) and a non-negative discriminant, so
  Cardano's formula gives it with real cube roots. On the constant branch the cubic
  loses its last term and u = 2a/b, i.e. L = 2^{4/3}·(paper's L). At an interior
  optimum the first branch is always the active one (there T3/T2 = 1/(8μ2) and the
  branches cross only where μ2 < 2^{-4}), which is why the paper's two-term balance is
  off by the factor 2^{4/3} and a few percent of users.
* ``integer_argmin`` — the exact integer minimiser over [2, k] of the full bound.

Closed form and integer argmin agree to within rounding (the function is unimodal).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from planner.formulas.ops import NUMPY, Ops


def paper_L(k: Any, alpha: Any, mu1: Any, ops: Ops = NUMPY) -> Any:
    """The paper's L (balance point of the first two terms), clipped to [2, k]."""
    balance = k ** ops.fraction(2, 3) / (alpha ** ops.fraction(4, 3) * mu1 ** ops.fraction(2, 3))
    return ops.minimum(k, ops.maximum(2, balance))


def _stationary_L(
    k: Any,
    alpha: Any,
    mu1: Any,
    mu2: Any,
    maximum: Callable[[Any, Any], Any],
    choose: Callable[[Any, Any, Any], Any],
) -> Any:
    """Cardano's stationary point, written once for floats (``max``, a conditional) and
    arrays (``np.maximum``, ``np.where``)."""
    a = k / alpha**2
    b = np.sqrt(k * mu1) / alpha
    c = k**2 / (alpha**4 * mu1 * mu2)
    d = k ** (2 / 3) * (mu1 / mu2) ** (1 / 3) / alpha ** (4 / 3)
    # u³ + p2·u² + p0 = 0 with u = L^{3/4}; depressed by u = t − p2/3.
    p2, p0 = -2 * a / b, -8 * c / b
    depressed_p = -(p2**2) / 3
    depressed_q = 2 * p2**3 / 27 + p0
    discriminant = maximum(0.0, (depressed_q / 2) ** 2 + (depressed_p / 3) ** 3)
    root = np.cbrt(-depressed_q / 2 + np.sqrt(discriminant)) + np.cbrt(
        -depressed_q / 2 - np.sqrt(discriminant)
    )
    stationary = (root - p2 / 3) ** (4 / 3)
    # where the constant branch is active: the two-term stationary point
    return choose(c / stationary**2 > d, (2 * a / b) ** (4 / 3), stationary)


def closed_form_L(k: float, alpha: float, mu1: float, mu2: float) -> float:
    """Stationary point of the public-coin shuffle bound, by Cardano (see module doc)."""
    stationary = _stationary_L(
        k,
        alpha,
        mu1,
        mu2,
        max,
        lambda active, two_term, three_term: two_term if active else three_term,
    )
    return float(min(k, max(2.0, float(stationary))))


def closed_form_L_guess(k: Any, alpha: Any, mu1: Any, mu2: Any) -> np.ndarray:
    """:func:`closed_form_L` elementwise, as a guess for :func:`integer_argmin` (arrays in).

    The same formula with cube roots for the powers of thirds (x^{4/3} = x·∛x), several
    times faster on arrays than ``np.power``; it may differ from :func:`closed_form_L` in
    the last bits, which moves no integer argmin (the search checks its guess's window
    and searches wherever the window does not show the minimiser)."""
    k, alpha, mu1, mu2 = (np.asarray(value, dtype=np.float64) for value in (k, alpha, mu1, mu2))
    with np.errstate(all="ignore"):
        alpha_sq = alpha * alpha
        a = k / alpha_sq
        b = np.sqrt(k * mu1) / alpha
        c = k * k / (alpha_sq * alpha_sq * mu1 * mu2)
        d = np.cbrt(k * k * mu1 / mu2) / (alpha * np.cbrt(alpha))
        p2, p0 = -2 * a / b, -8 * c / b
        depressed_p = -(p2 * p2) / 3
        depressed_q = 2 * p2 * p2 * p2 / 27 + p0
        half_q = depressed_q / 2
        third_p = depressed_p / 3
        root_discriminant = np.sqrt(np.maximum(0.0, half_q * half_q + third_p * third_p * third_p))
        u = np.cbrt(-half_q + root_discriminant) + np.cbrt(-half_q - root_discriminant) - p2 / 3
        stationary = np.where(u >= 0, u * np.cbrt(u), np.nan)
        two_term = -p2  # 2a/b
        stationary = np.where(
            c / (stationary * stationary) > d, two_term * np.cbrt(two_term), stationary
        )
        return np.minimum(k, np.maximum(2.0, stationary))


SEARCH_FAN = 16
"""Points a step of :func:`integer_argmin`'s search tests, for one point or many alike (so
a point's answer does not depend on the others searched with it)."""
GUESS_WINDOW = 2
"""Integers on each side of a guess that :func:`integer_argmin` looks at first."""
GUESS_RANGE_MAX = 2**20
"""Guesses are used for searches up to here: below it, neighbouring values of the bound
differ near its minimiser by ≳ 1e-13 relative, far above rounding (see integer_argmin)."""


def integer_argmin(
    cost: Callable[[np.ndarray], np.ndarray], lower: Any, upper: Any, guess: Any = None
) -> Any:
    """Exact minimiser over the integers of [lower, upper] of a unimodal ``cost``.

    Unimodal here means: strictly decreasing, then never decreasing. The minimiser (ties go
    to the smaller argument: fewer bins, less noise in total) is then the first m with
    cost(m + 1) ≥ cost(m), a monotone predicate, found by a many-way search: each step
    tests ``fan`` evenly spaced m and keeps the gap where the predicate turns true; a
    window narrower than ``fan`` (:data:`SEARCH_FAN`) is searched exhaustively. ``lower``
    and ``upper`` may be arrays, searched elementwise at once. ``cost`` takes an integer
    array of shape (m, *points) and returns values of that shape. Scalars in, int out.

    The public-coin shuffle bound is unimodal in L: its derivative is L^{-3/4}·(b/4 −
    a/2·L^{-3/4} − 2c·L^{-9/4}·1[min on its first branch]) with a bracket increasing in L,
    so it changes sign at most once.

    ``guess`` (of ``lower``'s shape; e.g. :func:`closed_form_L`): a point near each
    minimiser. The integers within :data:`GUESS_WINDOW` of it are looked at first; when
    every window's minimum is not at a window edge inside [lower, upper], unimodality makes
    it the minimiser, which the search would find too (ties: the first), and the search is
    skipped (otherwise it runs as without a guess). For upper ≤ :data:`GUESS_RANGE_MAX` the
    computed values are unimodal as well: near the minimiser L* neighbouring values differ
    by ~1/(2L*²) relative, ≳ 1e-13.
    """
    low, high = (np.array(bound, dtype=np.int64) for bound in np.broadcast_arrays(lower, upper))
    fan = SEARCH_FAN
    if guess is not None:
        near, shown = _argmin_near(cost, low, high, np.asarray(guess, dtype=np.float64))
        if shown.all():
            return int(near) if low.ndim == 0 else near
    column = (-1,) + (1,) * low.ndim
    # Each point's steps depend on its own [low, high] alone (a fan step while it is at
    # least ``fan`` wide, then one look at every integer left), whatever the other points
    # of the call: where the computed values are not unimodal (upper above
    # GUESS_RANGE_MAX, where neighbours can tie in floating point), the answer is then
    # the same searched alone or among any others (a review found a sweep's threaded
    # blocks, with their own fans, differing from one block by a user in 10^10).
    while True:
        wide = (high - low) >= fan
        if not wide.any():  # consecutive integers: look at every one
            width = int((high - low).max(initial=0))
            candidates = np.minimum(low + np.arange(width + 1).reshape(column), high)
            best = np.argmin(cost(candidates), axis=0)
            low = np.take_along_axis(candidates, best[None], axis=0)[0]
            break
        candidates = low + ((high - low) * np.arange(fan).reshape(column)) // fan  # < high
        values = cost(np.concatenate([candidates, candidates + 1]))
        rising = values[fan:] >= values[:fan]
        first = np.argmax(rising, axis=0)  # the first rising candidate (0 if none)
        chosen = np.take_along_axis(candidates, first[None], axis=0)[0]
        before = np.take_along_axis(candidates, np.maximum(first - 1, 0)[None], axis=0)[0]
        found = rising.any(axis=0)
        new_low = np.where(found, np.where(first > 0, before + 1, low), candidates[-1] + 1)
        low = np.where(wide, new_low, low)
        high = np.where(wide & found, chosen, high)
    return int(low) if low.ndim == 0 else low


def _argmin_near(
    cost: Callable[[np.ndarray], np.ndarray], low: np.ndarray, high: np.ndarray, guess: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Each window's minimiser, and where it is the minimiser over [low, high]."""
    usable = np.isfinite(guess) & (high <= GUESS_RANGE_MAX)
    centre = np.clip(np.round(np.where(usable, guess, low)), low, high).astype(np.int64)
    start = np.maximum(low, centre - GUESS_WINDOW)
    stop = np.minimum(high, centre + GUESS_WINDOW)
    column = (-1,) + (1,) * low.ndim
    candidates = np.minimum(start + np.arange(2 * GUESS_WINDOW + 1).reshape(column), stop)
    best_index = np.argmin(cost(candidates), axis=0)
    best = np.take_along_axis(candidates, np.asarray(best_index)[None], axis=0)[0]
    shown = usable & ((best > start) | (start == low)) & ((best < stop) | (stop == high))
    return best, shown
