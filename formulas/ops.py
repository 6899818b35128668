"""The arithmetic namespace every bound is written against.

A bound is written once, as a function taking an :class:`Ops`; :data:`NUMPY` evaluates
it on floats or arrays, :func:`sympy_ops` builds the exact symbolic expression.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True)
class Ops:
    """Elementary functions used by the bounds (numpy or sympy flavour)."""

    sqrt: Callable[[Any], Any]
    exp: Callable[[Any], Any]
    log: Callable[[Any], Any]
    minimum: Callable[[Any, Any], Any]
    maximum: Callable[[Any, Any], Any]
    fraction: Callable[[int, int], Any]
    """``fraction(3, 2)`` is the float 1.5 for numpy and the exact Rational for sympy."""


def _float_fraction(numerator: int, denominator: int) -> float:
    return numerator / denominator


NUMPY = Ops(
    sqrt=np.sqrt,
    exp=np.exp,
    log=np.log,
    minimum=np.minimum,
    maximum=np.maximum,
    fraction=_float_fraction,
)


def sympy_ops() -> Ops:
    """The sympy flavour; imports sympy on first use only (it costs ~0.3 s)."""
    import sympy

    return Ops(
        sqrt=sympy.sqrt,
        exp=sympy.exp,
        log=sympy.log,
        minimum=sympy.Min,
        maximum=sympy.Max,
        fraction=sympy.Rational,
    )
