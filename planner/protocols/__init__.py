"""Every protocol the planner can size, one module each; :data:`PROTOCOLS` lists them.

The rest of ``planner/`` never names a setting: it asks :func:`protocol_for` for the
record (``planner.protocols.base.Protocol``) and reads what it needs there (its bounds,
sizing, tester, allocation family, colour). To add a protocol: its bound in
``formulas/``, its tester in ``validators/``, a module here, and one line below.
"""

from __future__ import annotations

from planner.formulas.settings import Setting
from planner.protocols import central, local_private, local_public, shuffle_private, shuffle_public
from planner.protocols.base import AllocationFamily, Protocol

PROTOCOLS: tuple[Protocol, ...] = (
    local_private.PROTOCOL,
    local_public.PROTOCOL,
    shuffle_private.PROTOCOL,
    shuffle_public.PROTOCOL,
    central.PROTOCOL,
)
"""Every protocol, in the order the planner lists them (``compare``, tables, plots)."""

_BY_KEY: dict[str, Protocol] = {protocol.key: protocol for protocol in PROTOCOLS}


def protocol_for(setting: Setting | str) -> Protocol:
    """The protocol that answers a setting (or a setting key such as ``"central"``). Read
    many times a plan: by the setting's cached key, not its dataclass hash."""
    return _BY_KEY[setting if isinstance(setting, str) else setting.key]


def private_coin_protocol(protocol: Protocol) -> Protocol | None:
    """A public-coin protocol's private-coin twin (which ignores the coin), else None."""
    return None if protocol.private_coin_key is None else _BY_KEY[protocol.private_coin_key]


__all__ = ["PROTOCOLS", "AllocationFamily", "Protocol", "private_coin_protocol", "protocol_for"]
