"""Which queries may be sized by simulating their own tester (``--exact``, or a plan outside
the covered region): k from :data:`SIMULATION_K_MIN`, and a public-coin query's
private-coin twin. Shared by :mod:`planner.coverage` and :mod:`planner.exact`, below both.
"""

from __future__ import annotations

from dataclasses import replace

from planner.inputs import InputError, Query
from planner.protocols import private_coin_protocol, protocol_for

SIMULATION_K_MIN = 8
"""The smallest k at which a query is sized by simulating it (``--exact``, or a plan outside
the covered region). Below it the pmf pairs are few-dimensional and a hostile review
(2026-11-28) built pairs outside the built-in families that the simulated plans failed at
k = 3 to 7 in every setting: a point mass against its spread (shuffle, k = 3: error 0.47),
p uniform against a spike (central, k = 3: 0.39), and a pair the local tester's Hadamard
blocks cannot see with 4 users a group (local, k = 3 to 5: 1.0). Every setting's covered
k starts at 16 (central's was 4 until its interpolated plans of 4 to 7 users failed the
mirrored spread pair: its ``covered_note``)."""


def check_simulation_k(query: Query) -> None:
    """Raise :class:`InputError` when the query's k is below :data:`SIMULATION_K_MIN`."""
    if query.k < SIMULATION_K_MIN:
        raise InputError(
            "k",
            query.k,
            f"at least {SIMULATION_K_MIN} to be sized by simulation (below it pairs outside the "
            "built-in families defeat simulated plans: docs/coverage.md)",
        )


def private_coin_twin(query: Query) -> Query | None:
    """The query's private-coin twin (a public-coin query may run that protocol), or None."""
    private = private_coin_protocol(protocol_for(query.setting))
    if private is None:
        return None
    return replace(query, setting=private.setting, warnings=())
