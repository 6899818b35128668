"""Monotone searches shared by the accounting inverses and the planner's solver."""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import overload

_DEADLINE = threading.local()
"""This thread's deadline (``until``, a ``time.monotonic()`` time, and ``seconds``), if any."""


class DeadlineExceededError(Exception):
    """A computation ran past the deadline :func:`deadline` set on its thread."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        super().__init__(f"the computation took more than {seconds:g} s")


@contextmanager
def deadline(seconds: float, since: float | None = None) -> Iterator[None]:
    """Within the block, :func:`check_deadline` (called by every search's evaluation)
    raises :class:`DeadlineExceededError` once ``seconds`` have passed: a computation on a
    server's thread ends at its cap instead of holding the thread (a thread cannot be
    killed). Without a deadline, the check does nothing. ``since``: the ``time.monotonic()``
    time the seconds count from (a request's arrival, so that its wait for a thread counts
    towards its cap), else now."""
    before = getattr(_DEADLINE, "until", None), getattr(_DEADLINE, "seconds", None)
    start = time.monotonic() if since is None else since
    _DEADLINE.until, _DEADLINE.seconds = start + seconds, seconds
    try:
        yield
    finally:
        _DEADLINE.until, _DEADLINE.seconds = before


def deadline_state() -> tuple[float | None, float | None]:
    """This thread's deadline (``until``, ``seconds``; None, None: none), for a thread it
    starts to carry (:func:`carried_deadline`)."""
    return getattr(_DEADLINE, "until", None), getattr(_DEADLINE, "seconds", None)


@contextmanager
def carried_deadline(state: tuple[float | None, float | None]) -> Iterator[None]:
    """Within the block, this thread keeps the deadline ``state`` of the thread that handed
    it work (:func:`deadline_state`): work split over threads ends at the caller's cap."""
    before = deadline_state()
    _DEADLINE.until, _DEADLINE.seconds = state
    try:
        yield
    finally:
        _DEADLINE.until, _DEADLINE.seconds = before


def check_deadline() -> None:
    """Raise :class:`DeadlineExceededError` when this thread's deadline has passed."""
    until = getattr(_DEADLINE, "until", None)
    if until is not None and time.monotonic() > until:
        raise DeadlineExceededError(_DEADLINE.seconds)


def least_passing(
    passes: Callable[[float], bool], low: float, high: float, rel_tol: float, *, grow: bool = False
) -> float:
    """Smallest x > 0 with ``passes(x)`` to relative tolerance, rounded up (the passing side).

    ``passes`` is monotone (false, then true); ``low`` fails and ``high`` passes, or with
    ``grow`` ``high`` is doubled (and ``low`` follows) until it passes. Bisection on log x.
    """
    if grow:
        while not passes(high):
            low, high = high, 2 * high
    while high / low > 1.0 + rel_tol:
        check_deadline()
        middle = math.sqrt(low * high)
        if passes(middle):
            high = middle
        else:
            low = middle
    return high


def least_below(
    value: Callable[[float], float],
    target: float,
    low: float,
    high: float,
    rel_tol: float,
    *,
    low_value: float | None = None,
    high_value: float | None = None,
) -> tuple[float, float, float, float]:
    """The bracket of the least x > 0 with ``value(x) ≤ target``, as (low, high,
    value(low), value(high)), its ends within relative tolerance: ``value`` is
    non-increasing, ``low`` fails (``value(low) > target``) and ``high`` passes. The
    passing end is one ``value`` was evaluated at (or the ``high`` given), so it passes
    exactly, whatever the steps took.

    False position on ln value(x), which a flood's δ makes close to linear in x (its tail
    falls geometrically), with the Illinois rule (an end kept twice has its pull halved),
    so a bracket of a factor 2 closes to 10⁻⁶ in a handful of evaluations where bisection
    takes about 20. A step is kept at least a quarter of the tolerance inside the
    bracket; a step from a value of 0 is a bisection on log x. ``low_value`` and
    ``high_value``: ``value`` at the ends, where already known."""
    log_target = math.log(target)
    low_value = value(low) if low_value is None else low_value
    high_value = value(high) if high_value is None else high_value

    def gap(x_value: float) -> float:  # ln value − ln target: > 0 fails, ≤ 0 passes
        return math.log(x_value) - log_target if x_value > 0.0 else -math.inf

    pull_low, pull_high = gap(low_value), gap(high_value)
    last = ""  # the end the previous step replaced
    margin = rel_tol / 4.0  # a step this near an end would hardly shrink the bracket
    while high / low > 1.0 + rel_tol:
        check_deadline()
        x = math.sqrt(low * high)
        if math.isfinite(pull_low) and math.isfinite(pull_high) and pull_low > pull_high:
            secant = high - pull_high * (high - low) / (pull_high - pull_low)
            # kept off the ends: a step just inside the tolerance of the nearer end still
            # closes the bracket when the least x lies between them
            x = min(max(secant, low * (1.0 + margin)), high / (1.0 + margin))
        x_value = value(x)
        if x_value <= target:
            high, high_value, pull_high = x, x_value, gap(x_value)
            if last == "high":  # the low end kept twice (Illinois)
                pull_low /= 2.0
            last = "high"
        else:
            low, low_value, pull_low = x, x_value, gap(x_value)
            if last == "low":
                pull_high /= 2.0
            last = "low"
    return low, high, low_value, high_value


@overload
def least_passing_integer(passes: Callable[[int], bool], start: int) -> int: ...


@overload
def least_passing_integer(
    passes: Callable[[int], bool], start: int, *, most: int
) -> int | None: ...


def least_passing_integer(
    passes: Callable[[int], bool], start: int, *, most: int | None = None
) -> int | None:
    """Smallest integer n ≥ ``start`` with ``passes(n)`` (monotone), in O(log) checks;
    None when none up to ``most`` passes (None: no cap, one must pass).

    Steps of 1, 2, 4, … until one passes, then bisection back: a unit step never ends
    once n is above 2^53, where n and n + 1 are the same float (it hung at α = 1e-12).
    """
    if passes(start):
        return start
    failing, step = start, 1
    while True:
        probe = failing + step
        if most is not None and probe > most:  # the last place left to look is the cap
            if most <= failing or not passes(most):
                return None
            passing = most
            break
        if passes(probe):
            passing = probe
            break
        failing, step = probe, 2 * step
    while passing - failing > 1:
        middle = (failing + passing) // 2
        if passes(middle):
            passing = middle
        else:
            failing = middle
    return passing


_LOG_4 = math.log(4.0)


class SeededTest:
    """``x ↦ value(x) ≤ level`` for a value that does not increase in x, answered from the
    points already evaluated wherever they decide it, and evaluated elsewhere.

    A point evaluated as passing at x_p decides every x ≥ x_p·(1 + m) (passing), one
    failing at x_f every x ≤ x_f·(1 − m) (failing), where m = :attr:`margin`. That is the
    answer evaluating would give as long as a relative step m in x moves the computed value
    by more than twice its rounding noise. :meth:`seed` evaluates a few points on both
    sides of the crossing (secant steps on log value against log x), after which a search
    (:func:`least_passing`, a bracket search) asks the same questions, gets the same
    answers and returns the same x as with the plain test — evaluating only the rare
    question that falls within m of the crossing.
    """

    margin = 1e-8

    def __init__(self, value: Callable[[float], float], level: float) -> None:
        self.value = value
        self.level = level
        self.failing = 0.0
        """Largest x evaluated as failing (0: none yet)."""
        self.passing = math.inf
        """Smallest x evaluated as passing (∞: none yet)."""
        self.evaluations = 0

    def __call__(self, x: float) -> bool:
        if x <= self.failing * (1.0 - self.margin):
            return False
        if x >= self.passing * (1.0 + self.margin):
            return True
        return self._evaluate(x)[0]

    def _evaluate(self, x: float) -> tuple[bool, float]:
        check_deadline()  # every evaluation: a sum of up to ~10^6 terms
        value = self.value(x)
        self.evaluations += 1
        passed = value <= self.level
        if passed:
            self.passing = min(self.passing, x)
        else:
            self.failing = max(self.failing, x)
        return passed, value

    def _narrow(self) -> bool:
        """Is the crossing bracketed within m/4 by evaluated points?"""
        return self.passing <= self.failing * (1.0 + self.margin / 4)

    def seed(self, guess: float, step: float = 1e-5, iterations: int = 12) -> None:
        """Evaluate near the crossing: ``guess`` (> 0), ``guess``·(1 ± step) (the first
        questions of :func:`planner.formulas.accounting._bracket_around`), secant steps on
        log value against log x until a step is below m/16, then the two sides of the last
        estimate at ± m/10 (a bracket within m/4 when the estimate is that close)."""
        if not (guess > 0 and math.isfinite(guess) and self.level > 0):
            return
        x0 = guess
        passed, v0 = self._evaluate(x0)
        x1 = x0 / (1.0 + step) if passed else x0 * (1.0 + step)
        _, v1 = self._evaluate(x1)
        for _ in range(iterations):
            if self._narrow() or not (v0 > 0 and v1 > 0) or v0 == v1:
                break
            f0, f1 = math.log(v0 / self.level), math.log(v1 / self.level)
            if f0 == f1:  # both at the value's floor (its rounding allowance): no slope
                break
            log_x0, log_x1 = math.log(x0), math.log(x1)
            log_x2 = log_x1 - f1 * (log_x1 - log_x0) / (f1 - f0)
            if self.failing > 0 and math.isfinite(self.passing):
                inside = math.log(self.failing) < log_x2 < math.log(self.passing)
                x2 = math.exp(log_x2) if inside else math.sqrt(self.failing * self.passing)
            else:  # no bracket yet: a step of at most a factor 4 (clamped before exp)
                x2 = math.exp(min(max(log_x2, log_x1 - _LOG_4), log_x1 + _LOG_4))
            if abs(math.log(x2 / x1)) < self.margin / 16:  # converged: its two sides next
                x1 = x2
                break
            x0, v0, x1 = x1, v1, x2
            _, v1 = self._evaluate(x1)
        below, above = x1 * (1.0 - self.margin / 10), x1 * (1.0 + self.margin / 10)
        # the side away from the last point evaluated first: with that point it may
        # already bracket the crossing within m/4
        last_passed = v1 <= self.level
        for x in (below, above) if last_passed else (above, below):
            if not self._narrow() and self.failing < x < self.passing:
                self._evaluate(x)
