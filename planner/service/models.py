"""The request types of the HTTP API (their JSON Schema is the OpenAPI at ``/docs``).

Fields mirror the CLI's options. Numbers may be given as JSON numbers or strings (as on
the command line); :mod:`planner.api` checks each against its allowed range, so a bad
value gets the CLI's own one-line message. Unknown fields are refused.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictFloat, StrictInt, StrictStr

Integer = Annotated[StrictInt, Field(ge=-(10**30), le=10**30)]
"""An integer JSON number (bounded so that every one converts to a float)."""
Text = Annotated[StrictStr, Field(max_length=200)]
Number = Integer | StrictFloat | Text
"""A number, or its text as on the command line (``"1e-6"``)."""
Values = Annotated[list[Integer | StrictFloat], Field(max_length=1000)]
Spec = Integer | StrictFloat | Text | Values
"""A sweep value: one number, a list, or a spec string (``"0.05:1:20log"``)."""

ModelName = Annotated[
    StrictStr,
    Field(
        description="local, shuffle or central; two joined by a comma (local,central) put "
        "group 1 under the first and group 2 under the second",
        examples=["shuffle"],
    ),
]
CoinName = Annotated[StrictStr, Field(description="private or public")]
POWER_HELP = "power 1 − beta in (0.5, 1), instead of beta (0.8 is beta 0.2)"


DELTA_DESCRIPTION = (
    "δ in [1e-12, 1): needed by the shuffle model; a central plan may spend it (then "
    "(ε, δ)-DP, and it says so)"
)


class Request(BaseModel):
    model_config = ConfigDict(extra="forbid")


class QueryFields(Request):
    k: Number = Field(description="domain size, an integer in [2, 1e12]", examples=[1000])
    alpha: Number = Field(description="TV distance to detect, in [1e-06, 1]", examples=[0.1])
    eps1: Number = Field(description="group 1's ε, in [1e-4, 20]", examples=[1.0])
    eps2: Number = Field(description="group 2's ε, in [1e-4, 20]", examples=[0.25])
    delta: Number | None = Field(None, description=DELTA_DESCRIPTION)
    beta: Number = Field(1 / 3, description="target error probability in (0, 0.5)")
    accounting: StrictStr = Field("exact", description="shuffle noise: exact or paper")
    power: Number | None = Field(None, description=POWER_HELP)


class PlanRequest(QueryFields):
    """``planner plan --json`` (``--exact`` runs as a job: ``POST /v1/validations``)."""

    model: ModelName
    coin: CoinName = "private"
    constants: StrictStr = Field("calibrated", description="calibrated, proof or order")
    allocation: StrictStr = Field("fewest", description="fewest, paper, cost or fixed-n2")
    cost1: Number = Field(1, description="cost per group-1 user (allocation cost)")
    cost2: Number = Field(1, description="cost per group-2 user (allocation cost)")
    n2: Number | None = Field(None, description="group 2's given size (allocation fixed-n2)")
    protocol: StrictStr | None = Field(
        None,
        description="one protocol alone by its key (e.g. shuffle-private: Poisson noise "
        "messages), where it is covered; default: the protocol needing the fewest users",
    )


class CompareRequest(QueryFields):
    """``planner compare --json``: every setting (shuffle ones only with δ); ``model``, a
    mixed pair (``local,central``), adds its rows."""

    model: ModelName | None = None


class SolveRequest(Request):
    """``planner solve --json``: leave out exactly one of n1, n2, alpha, eps2."""

    model: ModelName
    coin: CoinName = "private"
    k: Number
    eps1: Number
    alpha: Number | None = None
    eps2: Number | None = None
    n1: Number | None = None
    n2: Number | None = None
    delta: Number | None = None
    beta: Number = 1 / 3
    accounting: StrictStr = "exact"
    power: Number | None = Field(None, description=POWER_HELP)


class SweepRequest(Request):
    """``planner sweep``: every combination of the listed values, for every setting."""

    settings: Annotated[list[StrictStr], Field(max_length=5)] | None = Field(
        None, description="setting keys; default all (the shuffle ones need delta)"
    )
    k: Spec
    alpha: Spec
    eps1: Spec
    eps2: Spec
    delta: Spec | None = None
    beta: Spec = "0.3333333333333333"
    accounting: StrictStr = "exact"
    power: Spec | None = Field(None, description=POWER_HELP)
    alone: StrictBool = Field(
        False, description="each setting's own protocol alone (planner sweep --alone)"
    )


class ValidationRequest(Request):
    """A job: ``planner validate`` (kind validate), ``plan --exact`` (exact), or a plan
    outside the covered region, simulated within ``simulation_budget`` s (plan)."""

    kind: Literal["validate", "exact", "plan"] = "validate"
    model: ModelName
    coin: CoinName = "private"
    k: Number
    alpha: Number
    eps1: Number
    eps2: Number
    delta: Number | None = None
    beta: Number = 1 / 3
    accounting: StrictStr = "exact"
    n1: Number | None = Field(None, description="check these sizes instead of the plan's")
    n2: Number | None = None
    trials: Number | None = Field(
        None,
        description="trials per family: auto (default: looks of 200, 400, … until decided) "
        "or a count; exact: per check (default 1000)",
    )
    max_trials: Number | None = Field(None, description="cap on trials per family for auto")
    seed: Number = Field(0, description="run seed: the same request and seed, the same report")
    path: StrictStr = Field("auto", description="user, fast or auto")
    families: Annotated[list[StrictStr], Field(max_length=32)] | None = None
    allocation: StrictStr = "fewest"
    cost1: Number = 1
    cost2: Number = 1
    simulation_budget: Number = Field(30, description="kind plan: seconds it may simulate")
    power: Number | None = Field(None, description=POWER_HELP)
    protocol: StrictStr | None = Field(
        None,
        description="kinds validate and exact: one protocol's plan alone, by its key, checked "
        "with its tester or searched (as POST /v1/plan's protocol); default: the protocol "
        "needing the fewest users",
    )


class PowerRequest(Request):
    """``planner power --json``: the smallest error bound β, and the power 1 − β, that a
    plan fits the given n1 and n2 at (GET: the same fields as query parameters)."""

    model: ModelName
    coin: CoinName = "private"
    k: Number = Field(description="domain size, an integer in [2, 1e12]", examples=[200])
    alpha: Number = Field(
        description="TV distance to detect (not a significance level), in [1e-06, 1]",
        examples=[0.1],
    )
    eps1: Number = Field(description="group 1's ε, in [1e-4, 20]", examples=[0.5])
    eps2: Number = Field(description="group 2's ε, in [1e-4, 20]", examples=[0.1])
    n1: Number = Field(
        description="group 1's users (given), an integer in [1, 1e100]", examples=[5000]
    )
    n2: Number = Field(
        description="group 2's users (given), an integer in [1, 1e100]", examples=[5000]
    )
    delta: Number | None = Field(None, description=DELTA_DESCRIPTION)
    accounting: StrictStr = Field("exact", description="shuffle noise: exact or paper")
