"""The five testing settings: a privacy model and a coin."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from functools import cached_property
from typing import TypeVar

from planner.formulas.errors import InputError


class Model(StrEnum):
    """Where the trust sits: each user (local), a per-group shuffler, or a curator."""

    LOCAL = "local"
    SHUFFLE = "shuffle"
    CENTRAL = "central"

    @property
    def needs_delta(self) -> bool:
        """Whether its protocols are (ε, δ)-DP, so a query must give δ (the shuffle
        model's Poisson noise); local and central protocols are pure ε-DP."""
        return self is Model.SHUFFLE


class Coin(StrEnum):
    """Private coin: no shared randomness. Public coin: a public random seed."""

    PRIVATE = "private"
    PUBLIC = "public"


_Member = TypeVar("_Member", Model, Coin)


def _member(name: str, value: object, kind: type[_Member]) -> _Member:
    """``value`` as a member of ``kind``, spelt as the command line takes it (any case,
    surrounding spaces: ``"LOCAL"``), or an ``InputError`` (a ``ValueError``) naming the
    allowed values."""
    if isinstance(value, kind):
        return value
    try:
        return kind(str(value).strip().lower())
    except ValueError:  # also an int too long to print
        allowed = ", ".join(member.value for member in kind)
        raise InputError(name, value, f"one of {allowed}") from None


@dataclass(frozen=True, order=True)
class Setting:
    """A privacy model together with the availability of public randomness, and the
    mechanism a protocol runs under them.

    The central model has one protocol (Thm ``theo:central``) whatever the coin, so
    ``Setting(CENTRAL, PUBLIC)`` is normalised to ``Setting(CENTRAL, PRIVATE)``.

    ``mechanism`` is empty for the paper's protocol of the model and coin, which is what a
    query asks for; a plan may run another mechanism of the same model (``Plan.protocol``
    names it, e.g. ``"local-private+k-rr"``), chosen because it needs fewer users.
    """

    model: Model
    coin: Coin
    mechanism: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "model", _member("model", self.model, Model))
        object.__setattr__(self, "coin", _member("coin", self.coin, Coin))
        if self.model is Model.CENTRAL:
            object.__setattr__(self, "coin", Coin.PRIVATE)

    @cached_property
    def key(self) -> str:
        """Stable identifier, e.g. ``"shuffle-public"`` or ``"central"`` (read on every plan,
        so computed once per setting)."""
        base = "central" if self.model is Model.CENTRAL else f"{self.model.value}-{self.coin.value}"
        return f"{base}+{self.mechanism}" if self.mechanism else base

    @classmethod
    def from_key(cls, key: str) -> Setting:
        base, _, mechanism = key.partition("+")
        if base == "central":
            return cls(Model.CENTRAL, Coin.PRIVATE, mechanism)
        model, _, coin = base.partition("-")
        return cls(Model(model), Coin(coin), mechanism)


def asked_key(model: str, coin: str) -> str:
    """The key a (model, coin) pair as written names: ``Setting.key`` where the model is
    known ("central" has no coin), else the two words joined (a row that failed to parse)."""
    if model == Model.CENTRAL.value:
        return model
    return f"{model}-{coin}"


ALL_SETTINGS: tuple[Setting, ...] = (
    Setting(Model.LOCAL, Coin.PRIVATE),
    Setting(Model.LOCAL, Coin.PUBLIC),
    Setting(Model.SHUFFLE, Coin.PRIVATE),
    Setting(Model.SHUFFLE, Coin.PUBLIC),
    Setting(Model.CENTRAL, Coin.PRIVATE),
)
