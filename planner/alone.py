"""One protocol alone: a query put to a protocol by its key.

``planner plan|validate --protocol KEY``, ``/v1/plan``'s ``protocol`` and a batch
scenario's ``protocol`` field plan a query with that protocol alone, where it answers the
query and is covered: :func:`protocol_query` checks the key, :func:`protocol_plan` plans
it. (A module of its own: ``planner.api`` and ``planner.batch`` both use it, and the API
imports the batch.)
"""

from __future__ import annotations

from dataclasses import replace

from planner.constants import ConstantTable
from planner.inputs import InputError, Query
from planner.plan import Coverage, Plan
from planner.plan import plan as make_plan


class ProtocolNotCoveredError(InputError):
    """A protocol asked for alone outside its covered region: one line naming the
    ``protocol`` and the ranges the query is outside of (``uncovered``); no simulation
    (the simulated plan is the setting's, not one protocol's)."""

    def __init__(self, key: str, uncovered: tuple[str, ...]) -> None:
        words = "; ".join(uncovered) or "no calibrated constant"
        super().__init__("protocol", key, f"covered at this query ({words})")
        self.uncovered = uncovered


def protocol_plan(
    alone: Query, table: ConstantTable | None = None, asked: Query | None = None
) -> Plan:
    """The plan of a query put to one protocol (:func:`protocol_query`), where it is
    covered; ``InputError`` naming the gaps elsewhere (no simulation).

    With the ``asked`` query it was put from, the plan says what the asked setting's plans
    say where they run that protocol (a review found both missing): each group's messages
    per user as the asked models count them (a shuffle query run by a local randomizer:
    1 a user, ``planner.plan.stated_messages``), and for a central query that gives δ run
    by a shuffle protocol, the line that each group is then (ε, δ)-DP
    (``planner.plan.central_delta_line``)."""
    from planner.plan import central_delta_line, spends_delta_by_choice, stated_messages

    made = make_plan(alone, table, fallback=False)
    if made.coverage is not Coverage.CALIBRATED:
        raise ProtocolNotCoveredError(alone.setting.key, tuple(made.coverage_gaps))
    # its lines name no --allocation, which a protocol alone refuses (a review)
    made = replace(made, warnings=tuple(w for w in made.warnings if "--allocation" not in w))
    if asked is None:
        return made
    made = stated_messages(made, asked)
    if spends_delta_by_choice(asked) and alone.setting.needs_delta:
        made = replace(made, warnings=(*made.warnings, central_delta_line(made, asked.delta)))
    return made


def protocol_query(query: Query, protocol: object) -> Query:
    """The query put to one protocol by its key: the asked setting's own, or a mechanism
    its plan may run instead (``planner.protocols.other_mechanisms``, with the public
    coin's private-coin twin), e.g. ``shuffle-private`` (Poisson noise messages) or
    ``shuffle-private+messages`` for a shuffle query; for a central query that gives δ,
    also the shuffle protocols its curator may run itself (``planner.protocols
    .delta_runs``: a review found ``--protocol shuffle-private`` refused where the plan
    ran it). ``InputError`` naming the keys that answer it otherwise."""
    from planner.plan import spends_delta_by_choice
    from planner.protocols import (
        delta_runs,
        other_mechanisms,
        private_coin_protocol,
        protocol_for,
    )

    if query.setting.is_mixed:
        raise InputError("protocol", str(protocol), "given for one model, not a mixed pair")
    asked = [query.setting]
    if spends_delta_by_choice(query):
        asked.extend(delta_runs(query.setting))
    keys: list[str] = []
    for setting in asked:
        own = protocol_for(setting)
        twin = private_coin_protocol(own)
        for candidate in (own, *((twin,) if twin is not None else ()), *other_mechanisms(own)):
            if candidate.key not in keys:
                keys.append(candidate.key)
    if protocol not in keys:
        raise InputError("protocol", str(protocol), "one of " + ", ".join(keys))
    return replace(query, setting=protocol_for(str(protocol)).setting)
