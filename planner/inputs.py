"""A planning query and its validation: one clear line per bad parameter."""

from __future__ import annotations

import dataclasses
import math
import numbers
from dataclasses import dataclass, field
from decimal import Decimal
from enum import StrEnum
from typing import Any, SupportsFloat, SupportsIndex, TypeVar

from planner.formulas.accounting import DELTA_FLOOR
from planner.formulas.errors import ALLOWED as ALLOWED_BY_NAME
from planner.formulas.errors import InputError
from planner.formulas.settings import Coin, Setting, parse_models

K_MAX = 10**12
ALPHA_MIN = 1e-6
"""Below it no size is meaningful (n ≥ 1/α² > 10^12) and the far instance families
cannot be built in float64 (TV rounds below α)."""
EPS_MIN = 1e-4
EPS_MAX = 20.0
DEFAULT_BETA = 1 / 3


class Accounting(StrEnum):
    """How the shuffle protocol's Poisson noise μ is sized (README)."""

    PAPER = "paper"
    EXACT = "exact"


ALLOWED: dict[str, str] = {
    "k": f"an integer in [2, {K_MAX:.0e}]",
    "alpha": f"a number in [{ALPHA_MIN:g}, 1]",
    "eps1": f"a number in [{EPS_MIN:g}, {EPS_MAX:g}]",
    "eps2": f"a number in [{EPS_MIN:g}, {EPS_MAX:g}]",
    "delta": f"a number in [{DELTA_FLOOR:g}, 1)",
    "beta": "a number in (0, 0.5)",
    "power": "a number in (0.5, 1) (power = 1 − beta)",
    "n1": "an integer in [1, 1e100]",
    "n2": "an integer in [1, 1e100]",
    "model": "one of local, shuffle, central, or two of them joined by a comma (local,central)",
    "coin": "one of private, public",
    "accounting": "one of paper, exact",
    "allocation": "one of fewest, paper, cost, fixed-n2",
    "constants": "one of calibrated, proof, order",
    "cost1": "a number in [1e-06, 1e+06]",
    "cost2": "a number in [1e-06, 1e+06]",
    "path": "one of user, fast, auto",
    "format": "one of table, csv, json",
    "unknown": "one of n1, n2, alpha, eps2, beta",
    "split": "one of fewest, paper, homogeneous",
    "simulation-budget": "a number of seconds in [0, 3600]",
    "target": "a number in (0, 0.5) (an error rate, as beta)",
}
ALLOWED_BY_NAME.update(ALLOWED)  # InputError's default line for each (formulas.errors)


_FLOAT_CONVERTIBLE = (str, bytes, bytearray, memoryview, SupportsFloat, SupportsIndex)
"""What ``float()`` accepts: text, buffers, and objects with ``__float__`` or ``__index__``."""


def as_float(value: object) -> float:
    """``float(value)`` for any object: the same float, or the same exception."""
    if isinstance(value, (float, int)):  # the common case, without the protocol checks
        return float(value)
    if not isinstance(value, _FLOAT_CONVERTIBLE):
        raise TypeError(f"float() argument must be a string or a real number, not {value!r}")
    return float(value)


def check_number(
    name: str, value: object, low: float, high: float, *, low_open: bool, high_open: bool
) -> float:
    """Return ``value`` as a float if it is finite and in the interval, else raise.

    ``True``/``False`` are not numbers here, and an int too large for a float is out of
    range (not an ``OverflowError``).
    """
    if isinstance(value, bool):
        raise InputError(name, value)
    try:
        number = as_float(value)
    except (TypeError, ValueError, OverflowError):
        raise InputError(name, value) from None
    if not math.isfinite(number):
        raise InputError(name, value)
    above_low = number > low if low_open else number >= low
    below_high = number < high if high_open else number <= high
    if not (above_low and below_high):
        raise InputError(name, value)
    return number


def check_integer(name: str, value: object, low: int, high: int | None = None) -> int:
    """Return ``value`` as an int if it is an integer (2.0 is fine, 2.5 is not) in range.

    Text is read exactly (``9223372036854775807`` and ``1e30`` are those integers, not
    their nearest floats); a float must be whole.
    """
    allowed = ALLOWED.get(name) or (
        f"an integer in [{low}, 1e100]" if high is None else f"an integer in [{low}, {high}]"
    )
    if isinstance(value, bool):
        raise InputError(name, value, allowed)
    if isinstance(value, numbers.Integral):  # int, numpy integers: exact
        number: Decimal | int = int(value)
    else:
        try:
            number = Decimal(value if isinstance(value, str) else as_float(value))
        except (TypeError, ValueError, ArithmeticError):
            raise InputError(name, value, allowed) from None
        if not number.is_finite() or number != number.to_integral_value():
            raise InputError(name, value, allowed)
    # compared before int() so that "1e999999999" never becomes a billion-digit int
    if number < low or number > (_INTEGER_CEILING if high is None else high):
        raise InputError(name, value, allowed)
    return int(number)


_INTEGER_CEILING = 10**100
"""Integers without an upper limit of their own are still refused beyond this (and their
line says so: a review found n1 = 1e200 told "an integer ≥ 1")."""


def check_query(value: object) -> None:
    """Refuse anything but a :class:`Query` where the API takes one (e.g. ``plan(None)``)."""
    if not isinstance(value, Query):
        raise InputError("query", value, "a planner.Query (build one with Query(...))")


_Choice = TypeVar("_Choice", bound=StrEnum)


def check_choice(name: str, value: object, choices: type[_Choice]) -> _Choice:
    """``value`` as a member of ``choices`` (case-insensitive), else an :class:`InputError`."""
    try:
        return choices(str(value).lower())
    except ValueError:
        raise InputError(name, value) from None


def check_alpha(value: object) -> float:
    return check_number("alpha", value, ALPHA_MIN, 1.0, low_open=False, high_open=False)


def check_eps(name: str, value: object) -> float:
    return check_number(name, value, EPS_MIN, EPS_MAX, low_open=False, high_open=False)


def check_delta(value: object) -> float:
    """δ down to the exact accounting's floor (both accountings locate the grid with it)."""
    return check_number("delta", value, DELTA_FLOOR, 1.0, low_open=False, high_open=True)


DEFAULT_BETA_TEXT = "1/3"
"""How the default β is written, and read back (``--beta 1/3``): a plan's title had read
"β = 0.3333", and a user who typed that back asked for an error below 1/3, which a
tester without direct calibration meets only by a majority vote of three runs (a new
user's review: 8,889 users in all against 4,881 at 1/3)."""


def check_beta(value: object) -> float:
    if isinstance(value, str) and value.strip() == DEFAULT_BETA_TEXT:
        return DEFAULT_BETA
    return check_number("beta", value, 0.0, 0.5, low_open=True, high_open=True)


def beta_text(beta: float, digits: int = 4) -> str:
    """β to ``digits`` significant digits, or more where rounding would show a β below ½
    as ½ (a review: β = 0.4999999 read "β = 0.5 > 1/3", a value the accepted range
    excludes); the default β exactly is "1/3" (:data:`DEFAULT_BETA_TEXT`)."""
    if beta == DEFAULT_BETA:
        return DEFAULT_BETA_TEXT
    text = f"{beta:.{digits}g}"
    return text if beta >= 0.5 or float(text) < 0.5 else repr(float(beta))


def check_power(value: object) -> float:
    """A power 1 − β: a number in (0.5, 1)."""
    return check_number("power", value, 0.5, 1.0, low_open=True, high_open=True)


def beta_or_power(beta: object, power: object, beta_given: bool | None = None) -> object:
    """The β a query takes when it may be given as ``power`` (1 − β) instead: ``beta``
    when ``power`` is None, else 1 − power. Both given is an :class:`InputError` naming
    the two; ``beta_given`` says whether β was given (None: when it is neither None nor
    the default 1/3)."""
    if power is None:
        return DEFAULT_BETA if beta is None else beta
    refuse_beta_with_power(beta, power, beta_given)
    return 1.0 - check_power(power)


def refuse_beta_with_power(beta: object, power: object, beta_given: bool | None = None) -> None:
    """Both β and its power given: one line naming the two (see :func:`beta_or_power`)."""
    if power is None:
        return
    if beta_given is None:
        beta_given = beta is not None and not _is_default_beta(beta)
    if beta_given:
        raise InputError(
            "power",
            power,
            "left out when beta is given (power = 1 − beta: give one of beta and power)",
        )


def _is_default_beta(value: object) -> bool:
    try:
        return as_float(value) == DEFAULT_BETA
    except (TypeError, ValueError, OverflowError):
        return False


@dataclass(frozen=True)
class Query:
    """Everything a plan depends on; constructing one validates it.

    ``eps1``/``eps2`` belong to the *named* groups 1 and 2, in either order; the planner
    itself puts the larger ε in the paper's "group 1" role. ``delta`` is required by the
    shuffle model; a central query may give one, and its curator may then also run a
    shuffle protocol itself, (ε, δ)-DP at that δ; a local query's is ignored (pure DP).
    """

    setting: Setting
    k: int
    alpha: float
    eps1: float
    eps2: float
    delta: float | None = None
    beta: float = DEFAULT_BETA
    accounting: Accounting = Accounting.EXACT
    warnings: tuple[str, ...] = field(default=(), compare=False)

    def __post_init__(self) -> None:
        setting = self.setting
        if not isinstance(setting, Setting):
            raise InputError("model", setting)
        set_ = object.__setattr__
        # Values already of their type and in range are kept as they are (what the checks
        # would return); anything else goes through the check, which converts or refuses.
        k, alpha, eps1, eps2, beta = self.k, self.alpha, self.eps1, self.eps2, self.beta
        if not (type(k) is int and 2 <= k <= K_MAX):
            set_(self, "k", check_integer("k", k, 2, K_MAX))
        if not (type(alpha) is float and ALPHA_MIN <= alpha <= 1.0):
            set_(self, "alpha", check_alpha(alpha))
        if not (type(eps1) is float and EPS_MIN <= eps1 <= EPS_MAX):
            set_(self, "eps1", check_eps("eps1", eps1))
        if not (type(eps2) is float and EPS_MIN <= eps2 <= EPS_MAX):
            set_(self, "eps2", check_eps("eps2", eps2))
        if not (type(beta) is float and 0.0 < beta < 0.5):
            set_(self, "beta", check_beta(beta))
        if type(self.accounting) is not Accounting:
            set_(self, "accounting", check_choice("accounting", self.accounting, Accounting))
        warnings = list(self.warnings)
        if setting.needs_delta:
            delta = self.delta
            if delta is None:
                raise InputError(
                    "delta", None, f"given for the shuffle model: a number in [{DELTA_FLOOR:g}, 1)"
                )
            if not (type(delta) is float and DELTA_FLOOR <= delta < 1.0):
                set_(self, "delta", check_delta(delta))
        elif setting.takes_delta and self.delta is not None:  # central: δ kept where given
            if not (type(self.delta) is float and DELTA_FLOOR <= self.delta < 1.0):
                set_(self, "delta", check_delta(self.delta))
        else:
            if self.delta is not None:
                check_delta(self.delta)
                words = _models_words(setting, "is", "are")
                warnings.append(f"delta is ignored: the {words} pure ε-DP")
                set_(self, "delta", None)
            if self.accounting is Accounting.PAPER:  # the shuffle noise's alone
                warnings.append(
                    f"accounting paper is ignored: the {_models_words(setting, 'adds', 'add')} no "
                    "shuffle noise to account for"
                )
                set_(self, "accounting", Accounting.EXACT)
        set_(self, "warnings", tuple(warnings))

    @classmethod
    def build(
        cls,
        model: object,
        coin: object,
        k: object,
        alpha: object,
        eps1: object,
        eps2: object,
        delta: object = None,
        beta: object = DEFAULT_BETA,
        accounting: object = Accounting.EXACT,
    ) -> Query:
        """Validate raw values (e.g. from the command line) into a query."""
        model_, model2 = parse_models(model)
        coin_ = check_choice("coin", coin, Coin)
        warnings: list[str] = []
        if Setting(model_, coin_, model2=model2).coin is not coin_:  # the coin changes nothing
            warnings.append(f"the {model_.value} model has no public-coin variant: same protocol")
        # checked in __post_init__'s order, so the first bad value is the one reported
        k_ = check_integer("k", k, 2, K_MAX)
        alpha_ = check_alpha(alpha)
        eps1_, eps2_ = check_eps("eps1", eps1), check_eps("eps2", eps2)
        beta_ = check_beta(beta)
        accounting_ = check_choice("accounting", accounting, Accounting)
        return cls(
            setting=Setting(model_, coin_, model2=model2),
            k=k_,
            alpha=alpha_,
            eps1=eps1_,
            eps2=eps2_,
            delta=None if delta is None else check_delta(delta),
            beta=beta_,
            accounting=accounting_,
            warnings=tuple(warnings),
        )


def _models_words(setting: Setting, singular: str, plural: str) -> str:
    """ "local protocol is" or "local and central protocols are": the setting's models and
    a verb agreeing with them."""
    if setting.model2 is None:
        return f"{setting.model.value} protocol {singular}"
    return f"{setting.model.value} and {setting.model2.value} protocols {plural}"


def _restore_query(fields: dict[str, Any]) -> Query:
    """A query from fields ``Query`` already accepted, without checking them again."""
    query = object.__new__(Query)
    query.__dict__.update(fields)
    return query


def with_setting(query: Query, setting: Setting) -> Query:
    """``dataclasses.replace(query, setting=setting, warnings=())`` without validating the
    fields again when ``setting`` has the query's model: δ's rule depends on the model only,
    so the fields stay those ``Query`` accepted (each plan asks for this once or twice)."""
    if setting.model is not query.setting.model:
        return dataclasses.replace(query, setting=setting, warnings=())
    if not query.warnings and (setting is query.setting or setting == query.setting):
        return query  # already that query
    return _restore_query({**query.__dict__, "setting": setting, "warnings": ()})


def apart_texts(
    value: float, asked: float, digits: int = 4, asked_digits: int = 6
) -> tuple[str, str]:
    """``value`` and ``asked`` as text, ``value`` with at least ``digits`` significant
    figures and ``asked`` with ``asked_digits`` (``:g``), both with more where that is what
    tells two different numbers apart: a tester run at ε1 = 0.999964 had read "ε1 = 1
    (asked 1)" (a review)."""
    while True:
        value_text, asked_text = f"{value:.{digits}g}", f"{asked:.{asked_digits}g}"
        if value_text != asked_text or value == asked or digits >= 17:
            return value_text, asked_text
        digits += 1
        asked_digits = max(asked_digits, digits)


def at_point(query: Query, eps1: float, eps2: float, alpha: float) -> Query:
    """``dataclasses.replace(query, eps1=eps1, eps2=eps2, alpha=alpha)`` without checking
    the query again when the three are floats in the accepted ranges (what ``Query``
    keeps as given; its other fields and δ's rule do not depend on them): a plan asks for
    each tester point below its query."""
    if (
        type(eps1) is float
        and type(eps2) is float
        and type(alpha) is float
        and EPS_MIN <= eps1 <= EPS_MAX
        and EPS_MIN <= eps2 <= EPS_MAX
        and ALPHA_MIN <= alpha <= 1.0
    ):
        return _restore_query({**query.__dict__, "eps1": eps1, "eps2": eps2, "alpha": alpha})
    return dataclasses.replace(query, eps1=eps1, eps2=eps2, alpha=alpha)
