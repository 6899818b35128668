"""Every protocol the planner can size, one module each; :data:`PROTOCOLS` lists them.

The rest of ``planner/`` never names a setting: it asks :func:`protocol_for` for the
record (``planner.protocols.base.Protocol``) and reads what it needs there (its bounds,
sizing, tester, allocation family, colour). To add a protocol: its bound in
``formulas/``, its tester in ``validators/``, a module here, and one line below.
"""

from __future__ import annotations

import functools

from planner.formulas.settings import Coin, Model, Setting
from planner.protocols import (
    central,
    central_channels,
    local_channels,
    local_hashed,
    local_krr,
    local_private,
    local_public,
    mixed_channels,
    shuffle_messages,
    shuffle_private,
    shuffle_public,
)
from planner.protocols.base import AllocationFamily, Protocol

PROTOCOLS: tuple[Protocol, ...] = (
    local_private.PROTOCOL,
    local_public.PROTOCOL,
    shuffle_private.PROTOCOL,
    shuffle_public.PROTOCOL,
    shuffle_messages.PROTOCOL,
    shuffle_messages.PUBLIC_PROTOCOL,
    central.PROTOCOL,
    central_channels.PROTOCOL,
    local_krr.PROTOCOL,
    local_channels.PROTOCOL,
    local_hashed.PROTOCOL,
    mixed_channels.LOCAL_STRONG,
    mixed_channels.CURATOR_STRONG,
)
"""Every protocol, in the order the planner lists them (``compare``, tables, plots). The
last two serve mixed pairs only (a group under each of two models)."""

ASKED_PROTOCOLS: tuple[Protocol, ...] = tuple(
    protocol for protocol in PROTOCOLS if not protocol.setting.mechanism
)
"""The protocol of each setting a query asks for by model and coin (the paper's, one per
setting, in ``ALL_SETTINGS`` order); the others are mechanisms a plan may run instead
(:func:`other_mechanisms`), or that a query names by key (``local-private+k-rr``)."""

_BY_KEY: dict[str, Protocol] = {protocol.key: protocol for protocol in PROTOCOLS}


def protocol_for(setting: Setting | str) -> Protocol:
    """The protocol that answers a setting (or a setting key such as ``"central"``). Read
    many times a plan: by the setting's cached key, not its dataclass hash."""
    return _BY_KEY[setting if isinstance(setting, str) else setting.key]


def private_coin_protocol(protocol: Protocol) -> Protocol | None:
    """A public-coin protocol's private-coin twin (which ignores the coin), else None."""
    return None if protocol.private_coin_key is None else _BY_KEY[protocol.private_coin_key]


TRUST_ORDER: tuple[Model, ...] = tuple(sorted(Model, key=lambda model: model.trust))
"""Models from the least trusted to the most: a protocol of a less trusted model is private
under a more trusted one too (a curator or a shuffler may run users' local randomizers and
pass their reports on: the output is a post-processing of ε-LDP reports)."""


@functools.cache
def other_mechanisms(protocol: Protocol) -> tuple[Protocol, ...]:
    """The protocols a query of ``protocol``'s setting may run instead, each as private as
    the query asks, in :data:`PROTOCOLS` order: the other mechanisms of its model, and the
    protocols of every less trusted model (:data:`TRUST_ORDER`). A private-coin protocol
    serves a public-coin query too (it ignores the coin), never the other way round but
    under a curator, who holds every user's data and can draw the shared seed itself; an
    (ε, δ) protocol serves only a query that gives δ. The public-coin protocol's own
    private-coin twin is not listed (``private_coin_protocol``). The plan runs whichever
    needs the fewest users (``planner.plan``), so a more trusted model never needs more
    users than a less trusted one. Remembered per protocol (a plan asks at every point)."""
    setting = protocol.setting
    if setting.mechanism:
        return ()
    rank = TRUST_ORDER.index(setting.model)
    twin = protocol.private_coin_key
    return tuple(
        other
        for other in PROTOCOLS
        if other is not protocol
        and other.key != twin
        and not other.setting.is_mixed
        and (other.setting.coin in (setting.coin, Coin.PRIVATE) or setting.model is Model.CENTRAL)
        and (not other.needs_delta or protocol.needs_delta)
        and (
            TRUST_ORDER.index(other.setting.model) < rank
            or (other.setting.model is setting.model and bool(other.setting.mechanism))
        )
    )


@functools.cache
def delta_runs(setting: Setting) -> tuple[Setting, ...]:
    """The asked settings whose whole plans a query of ``setting`` may run when it gives a
    δ it does not need: the (ε, δ) models less trusted than its own, both coins (the
    central model's: the shuffle model; a curator holds its users' items and may run a
    shuffle protocol itself, drawing any shared seed). Empty for every other setting."""
    if setting.needs_delta or not setting.takes_delta:
        return ()
    return tuple(
        protocol.setting
        for protocol in ASKED_PROTOCOLS
        if protocol.needs_delta and protocol.setting.model.trust < setting.model.trust
    )


__all__ = [
    "ASKED_PROTOCOLS",
    "PROTOCOLS",
    "AllocationFamily",
    "Protocol",
    "delta_runs",
    "other_mechanisms",
    "private_coin_protocol",
    "protocol_for",
]
