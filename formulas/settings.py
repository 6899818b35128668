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

    @property
    def counts_messages(self) -> bool:
        """Whether a plan counts each user's messages (the shuffle model: each user's
        reports reach the analyser as messages through a shuffler, one report a user where
        its group runs a local randomizer there); local users send one report and a
        curator's users their data, which no plan counts."""
        return self is Model.SHUFFLE

    @property
    def trust(self) -> int:
        """Its rank from the least trusted (local, 0) to the most (central, 2): a protocol
        of a less trusted model is private under a more trusted one too (a curator or a
        shuffler may run its users' local randomizers and pass their reports on)."""
        return _TRUST_RANK[self]


_TRUST_RANK = {Model.LOCAL: 0, Model.SHUFFLE: 1, Model.CENTRAL: 2}


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


@dataclass(frozen=True)
class Setting:
    """A privacy model together with the availability of public randomness, and the
    mechanism a protocol runs under them.

    The central model has one protocol (Thm ``theo:central``) whatever the coin, so
    ``Setting(CENTRAL, PUBLIC)`` is normalised to ``Setting(CENTRAL, PRIVATE)``.

    ``mechanism`` is empty for the paper's protocol of the model and coin, which is what a
    query asks for; a plan may run another mechanism of the same model (``Plan.protocol``
    names it, e.g. ``"local-private+k-rr"``), chosen because it needs fewer users.

    ``model2`` is set for a **mixed pair**: group 2 under another model than group 1's
    ``model`` (``"local/central-private"``: group 1's users randomize locally, group 2's
    sit with a curator). The coin belongs to the whole protocol. A query names the groups
    as the user does; a protocol's setting names them in the paper's roles, the group
    with the larger ε first (``planner.protocols.mixed_channels``).
    """

    model: Model
    coin: Coin
    mechanism: str = ""
    model2: Model | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "model", _member("model", self.model, Model))
        object.__setattr__(self, "coin", _member("coin", self.coin, Coin))
        if self.model2 is not None:
            model2 = _member("model", self.model2, Model)
            object.__setattr__(self, "model2", None if model2 is self.model else model2)
        if self.model is Model.CENTRAL and self.model2 is None:
            object.__setattr__(self, "coin", Coin.PRIVATE)

    @property
    def is_mixed(self) -> bool:
        """Whether the two groups are under different models."""
        return self.model2 is not None

    @property
    def group_models(self) -> tuple[Model, Model]:
        """Group 1's model and group 2's (the same one unless the pair is mixed)."""
        return (self.model, self.model if self.model2 is None else self.model2)

    def mirrored(self) -> Setting:
        """The setting with the two groups' models exchanged (itself when they agree)."""
        first, second = self.group_models
        return Setting(second, self.coin, self.mechanism, model2=first)

    @property
    def models_text(self) -> str:
        """The models as a query writes them: ``"local"``, or ``"local,central"`` for a
        mixed pair (:func:`parse_models` reads it back)."""
        return ",".join(dict.fromkeys(model.value for model in self.group_models))

    @property
    def less_trusted(self) -> Model:
        """The less trusted of the two groups' models (:attr:`Model.trust`)."""
        return min(self.group_models, key=lambda model: model.trust)

    @property
    def needs_delta(self) -> bool:
        """Whether a query of this setting must give δ: some group is under the shuffle
        model (:attr:`Model.needs_delta`)."""
        return any(model.needs_delta for model in self.group_models)

    @property
    def takes_delta(self) -> bool:
        """Whether a query of this setting keeps a δ it gives: one it must give
        (:attr:`needs_delta`), or the central model's own query, whose curator may then
        also run a shuffle protocol itself, (ε, δ)-DP at that δ (``planner.plan``)."""
        return self.needs_delta or (
            self.model is Model.CENTRAL and self.model2 is None and not self.mechanism
        )

    @cached_property
    def key(self) -> str:
        """Stable identifier, e.g. ``"shuffle-public"``, ``"central"`` or
        ``"local/central-private"`` (read on every plan, so computed once per setting)."""
        if self.model2 is not None:
            base = f"{self.model.value}/{self.model2.value}-{self.coin.value}"
        elif self.model is Model.CENTRAL:
            base = "central"
        else:
            base = f"{self.model.value}-{self.coin.value}"
        return f"{base}+{self.mechanism}" if self.mechanism else base

    @classmethod
    def from_key(cls, key: str) -> Setting:
        base, _, mechanism = key.partition("+")
        if base == "central":
            return cls(Model.CENTRAL, Coin.PRIVATE, mechanism)
        models, _, coin = base.partition("-")
        model, _, model2 = models.partition("/")
        return cls(Model(model), Coin(coin), mechanism, Model(model2) if model2 else None)


def parse_models(value: object) -> tuple[Model, Model | None]:
    """A query's ``model`` as written: one model for both groups (``"local"``), or two
    joined by a comma, group 1's first (``"local,central"``: a mixed pair; a slash as in a
    setting's key, ``"local/central"``, too; the same model twice is that model). Anything
    else is an ``InputError`` naming the allowed values."""
    allowed = "one of local, shuffle, central, or two of them joined by a comma (local,central)"
    if isinstance(value, Model):
        return value, None
    try:
        text = str(value).strip()
    except ValueError:  # an int too long to print
        raise InputError("model", value, allowed) from None
    if len(text) > 40:
        raise InputError("model", value, allowed)
    parts = text.replace("/", ",").split(",")  # a setting key's "local/central" too
    if len(parts) > 2:
        raise InputError("model", value, allowed)
    try:
        models = [Model(part.strip().lower()) for part in parts]
    except ValueError:
        raise InputError("model", value, allowed) from None
    if len(models) == 1 or models[0] is models[1]:
        return models[0], None
    return models[0], models[1]


def asked_key(model: str, coin: str) -> str:
    """The key a (model, coin) pair as written names: ``Setting.key`` where the model is
    known ("central" has no coin; a mixed pair's key for two models), else the two words
    joined (a row that failed to parse)."""
    if model == Model.CENTRAL.value:
        return model
    try:  # a mixed pair as written ("central,shuffle"): its key, "central/shuffle-private"
        first, second = parse_models(model)
        if second is not None:
            return Setting(first, _member("coin", coin, Coin), model2=second).key
    except (InputError, ValueError):
        pass
    return f"{model}-{coin}"


ALL_SETTINGS: tuple[Setting, ...] = (
    Setting(Model.LOCAL, Coin.PRIVATE),
    Setting(Model.LOCAL, Coin.PUBLIC),
    Setting(Model.SHUFFLE, Coin.PRIVATE),
    Setting(Model.SHUFFLE, Coin.PUBLIC),
    Setting(Model.CENTRAL, Coin.PRIVATE),
)

MIXED_SETTINGS: tuple[Setting, ...] = tuple(
    Setting(first, coin, model2=second)
    for first in Model
    for second in Model
    if first is not second
    for coin in Coin
)
"""The mixed pairs a query may ask for: group 1 under one model, group 2 under another,
per coin (``local/central-private``)."""
