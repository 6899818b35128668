"""A mixed pair: one group's curator releases a noisy histogram, the other group reports
locally (bounds ``curator-beside-local`` and ``local-beside-curator``).

The group under the **central** model hands its items to a trusted curator, which
releases the group's histogram with discrete Laplace noise at its ε (pure ε-DP for that
group; sensitivity 2 under replace-one neighbours). The group under the **local** model —
or under the **shuffle** model, whose users may run a local randomizer and let the
shuffler pass the reports on — reports through its best local channel at its ε (k-RR,
optimized unary encoding or bit flipping; pure ε-LDP). The analyser — the curator itself,
or anyone: what it reads is already private — debiases each release through its own
channel and runs the local channels' χ²-weighted studentized statistic on the difference
(``validators/mixed_channels.py``). Each group's privacy is its own model's guarantee and
needs no δ; the curator is trusted by its own group only.

A protocol's setting names its groups in the paper's roles, the group with the larger ε
first: ``local/central-private+channels`` is sized and calibrated where the local group
has the larger ε, ``central/local-private+channels`` where the curator's group has it. A
mixed query with the smaller ε on group 1 is planned as its mirror (``planner.plan``,
"Mixed pairs") and the plan names the groups back as asked. No shared randomness: it
answers both coins.
"""

from __future__ import annotations

import functools
from dataclasses import replace
from typing import Any

import numpy as np

from planner.formulas.bounds import channel_bits, least_noise_channel
from planner.formulas.settings import Coin, Model, Setting
from planner.formulas.subsampling import private_subsample_population, subsampling_population_ratio
from planner.inputs import Query
from planner.protocols.base import (
    AllocationFamily,
    CalibrationDesign,
    Protocol,
)
from planner.protocols.local_channels import (
    CHANNEL_PER_GROUP_GRID_AXES,
    CHANNEL_TITLES,
    CHANNELS_GRID_AXES,
    paired_sizes,
    paired_sizes_arrays,
)
from planner.protocols.local_krr import MIN_USERS, thresholds_for_beta


def bound_key(model: Model, other: Model) -> str:
    """A group's bound by its release (a curator's noisy histogram, or a local channel)
    and the other group's: its users, its ε first, the other's second."""
    if model is Model.CENTRAL:
        return "curator-beside-curator" if other is Model.CENTRAL else "curator-beside-local"
    return "local-beside-curator"


def releases_sizes(
    strong_model: Model, weak_model: Model, eps_scale: float = 1.0, ratio_floor: float = 0.0
) -> Any:
    """``Protocol.size_run`` for the pair whose stronger group is under ``strong_model``:
    each group C·(its bound) users, at least ``MIN_USERS``, the bounds read at
    ``eps_scale``·ε (a release whose noise is a curator's at a share of ε: the
    multi-message shuffle protocol's). With ``ratio_floor``, a curator's weaker group
    below that share of the stronger's ε releases from a subsample
    (:func:`weak_release_eps`): it is sized at the release's ε, and its users are the
    population whose uniform subsample of that size keeps it private at its own ε
    (``formulas.subsampling``)."""
    strong_key, weak_key = bound_key(strong_model, weak_model), bound_key(weak_model, strong_model)

    def sizes(query: Query, eps_strong: float, eps_weak: float, multiplier: float, *_: Any) -> Any:
        shared = (("k", query.k), ("alpha", query.alpha))
        released = weak_release_eps(
            query.setting, query.eps1 >= query.eps2, eps_strong, eps_weak, ratio_floor
        )
        strong, weak = eps_scale * eps_strong, eps_scale * released
        made = paired_sizes(strong_key, shared, strong, weak, multiplier, weak_key)
        if released == eps_weak:
            return made
        population = float(subsampling_population_ratio(released, eps_weak))
        return replace(
            made,
            n_weak=private_subsample_population(made.n_weak, released, eps_weak),
            order_weak=made.order_weak * population,
        )

    return sizes


def releases_sizes_arrays(
    strong_model: Model, weak_model: Model, eps_scale: float = 1.0, ratio_floor: float = 0.0
) -> Any:
    """``Protocol.size_run_arrays`` for the same pair (``paired_sizes_arrays``); with
    ``ratio_floor``, ``weak_is_group2`` (each row's named group 2 the weaker) says which
    rows' weaker group is a curator's (:func:`weak_release_eps`)."""
    strong_key, weak_key = bound_key(strong_model, weak_model), bound_key(weak_model, strong_model)
    setting = Setting(strong_model, Coin.PRIVATE, "channels", model2=weak_model)

    def sizes_arrays(
        k: Any, alpha: Any, delta: Any, eps_s: Any, eps_w: Any, multiplier: Any,
        bound_key: Any, accounting: Any, compression: Any, unit_strong: Any = None,
        weak_is_group2: Any = True,
    ) -> Any:  # fmt: skip
        shared = {"k": k, "alpha": alpha}
        released = weak_release_eps(setting, weak_is_group2, eps_s, eps_w, ratio_floor)
        strong, weak = eps_scale * eps_s, eps_scale * released
        made = paired_sizes_arrays(
            strong_key, shared, strong, weak, multiplier, unit_strong, weak_key
        )
        if multiplier is None or not ratio_floor:
            return made
        n_strong, n_weak = made
        return n_strong, private_subsample_population(n_weak, released, eps_w)

    return sizes_arrays


def weak_release_eps(
    setting: Setting, weak_is_group2: Any, eps_strong: Any, eps_weak: Any, ratio_floor: float
) -> Any:
    """The ε the weaker group's release runs at beside a group at ``eps_strong``: its own,
    or ``ratio_floor``·ε_strong where that is larger and the weaker group (named group 2
    where ``weak_is_group2``, else group 1, of ``setting``) is a curator's: below the
    grid's least ratio its calibration does not reach, and a release at the larger ε on a
    secret uniform subsample is as private (``MixedChannelsTester.curator_ratio_floor``).
    A local group's reports are private one by one and a subsample would not amplify them
    (a protocol asked alone may meet its groups the other way round). Scalars, or numpy
    arrays elementwise (a sweep's rows)."""
    if not ratio_floor:
        return eps_weak
    first, second = (channel_model(model) is Model.CENTRAL for model in setting.group_models)
    if isinstance(weak_is_group2, bool):
        curator = second if weak_is_group2 else first
        return max(eps_weak, ratio_floor * eps_strong) if curator else eps_weak
    curator_rows = np.where(weak_is_group2, second, first)
    return np.where(curator_rows, np.maximum(eps_weak, ratio_floor * eps_strong), eps_weak)


def channel_model(model: Model) -> Model:
    """The model whose channel a group under ``model`` reports through in this pair: a
    shuffle group's users run a local randomizer (private under the shuffle model too)."""
    return Model.LOCAL if model is Model.SHUFFLE else model


def run_setting(asked: Setting) -> Setting | None:
    """The mixed protocol's setting an asked mixed pair may run, groups named as asked:
    where one group is central and the other reports through a local channel (local, or
    shuffle); None otherwise (two local channels are the local model's own protocol)."""
    first, second = (channel_model(model) for model in asked.group_models)
    if first is second:
        return None
    return Setting(first, Coin.PRIVATE, "channels", model2=second)


def _named_models(query: Query) -> tuple[str, str]:
    """Each named group's channel model at a query of this protocol's setting (named in
    the setting's order: the planner mirrors a query whose group 1 has the smaller ε)."""
    first, second = query.setting.group_models
    return channel_model(first).value, channel_model(second).value


def _tester_with(ratio_floor: float) -> Any:
    """``Protocol.build_tester`` of a pair whose weaker curator is subsampled below
    ``ratio_floor`` (0: never)."""

    def tester(query: Query, parameters: dict[str, Any], L: int | None, hashes: int) -> Any:
        from planner.validators.mixed_channels import MixedChannelsTester

        model1, model2 = _named_models(query)
        return MixedChannelsTester(
            query.k,
            query.alpha,
            query.eps1,
            query.eps2,
            model1=model1,
            model2=model2,
            curator_ratio_floor=ratio_floor,
            **parameters,
        )

    return tester


def _mechanism_with(ratio_floor: float) -> Any:
    """``Protocol.mechanism``: each group's release and what it sends, from ``formulas``
    alone (a weaker curator below ``ratio_floor`` releases from a subsample)."""

    def mechanism(query: Query, bins: int) -> str:
        parts = []
        named = (query.eps1, query.eps2)
        for group, (model, eps) in enumerate(
            zip(_named_models(query), named, strict=True), start=1
        ):
            if model == Model.CENTRAL.value:
                released = max(eps, ratio_floor * named[2 - group])  # the tester's rule
                if released == eps:
                    parts.append(
                        f"group {group}: the curator releases its histogram with discrete "
                        f"Laplace noise at ε = {eps:g}"
                    )
                    continue
                parts.append(
                    f"group {group}: the curator releases the histogram of a secret uniform "
                    f"sample of its users, with discrete Laplace noise at ε′ = {released:.6g} "
                    f"(ε = {eps:g} for the group by subsampling; m and ε′ exactly in the "
                    "plan's line)"
                )
                continue
            key = least_noise_channel(query.k, eps)
            bits = channel_bits(key, query.k)
            parts.append(
                f"group {group}: {CHANNEL_TITLES[key]} at ε = {eps:g}, "
                f"{bits} bit{'s' if bits > 1 else ''} a user"
            )
        return "; ".join(parts)

    return mechanism


def _report_cells(query: Query) -> tuple[int, int]:
    """A local group's report cells (k-RR's one value, a unary encoding's k bits); a
    curator's group draws its histogram's k bins once, about one cell a user."""
    cells = []
    for model, eps in zip(_named_models(query), (query.eps1, query.eps2), strict=True):
        local = model == Model.LOCAL.value and least_noise_channel(query.k, eps) != "k-rr"
        cells.append(query.k if local else 1)
    return cells[0], cells[1]


def _bins(k: int) -> int:
    return k


CURATORS_GRID_AXES: dict[str, list[float]] = {
    **CHANNELS_GRID_AXES,
    "alpha": sorted([0.08, *CHANNELS_GRID_AXES["alpha"]]),
    "eps_strong": [1 / 32, *CHANNELS_GRID_AXES["eps_strong"]],
}
"""Two curators' grid (``central+channels``): the channels' grid with an ε node at 1/32,
so that the multi-message shuffle protocol, which reads it at θ·ε, is calibrated from
ε = 1/(32θ) ≈ 0.04 up (the shuffle model's queries from ε = 0.1, both groups), and an α
node at 0.08, between 0.03 and 0.2: there the interpolated C had been up to 1.56× the
least C a search at the query finds (k = 403, α = 0.082; ``benchmarks/curator_bare.py``)."""


MIXED_GRID_AXES: dict[str, list[float]] = {
    **CHANNELS_GRID_AXES,
    "k": CHANNEL_PER_GROUP_GRID_AXES["k"],
}
"""A local group beside a curator's (``local/central-`` and ``central/local-private+
channels``): the channels' grid with a channel per group's k nodes (16, 32, …, 1,024, a
factor 2 apart). Their plans read the largest C of their grid cell, and between k nodes
8× apart that had been a median 1.12× the interpolated C at k 64 – 127; the nodes 32, 64,
256 and 512 were added on 2026-12-01 (docs/evidence.md)."""


def releases_protocol(
    strong_model: Model, weak_model: Model, colour: str, ratio_floor: float = 0.0
) -> Protocol:
    """The protocol whose stronger group (larger ε) releases under ``strong_model`` and
    the other under ``weak_model`` (each a curator's noisy histogram or a local channel),
    read by the channels' statistic; two curators are the central model's own
    ``central+channels`` (``planner.protocols.central_channels``). ``ratio_floor``: a
    weaker curator's group below that share of the stronger's ε releases at it from a
    subsample (``Protocol.weak_release_eps``)."""
    strong_words = "a curator's group" if strong_model is Model.CENTRAL else "a local group"
    weak_words = "a curator's group" if weak_model is Model.CENTRAL else "a local group"
    setting = Setting(strong_model, Coin.PRIVATE, "channels", model2=weak_model)
    return Protocol(
        setting=setting,
        title=(
            f"mixed, {strong_words} (larger ε) beside {weak_words}"
            if setting.is_mixed
            else "central, a noisy histogram per group"
        ),
        colour=colour,
        upper_bound_key=bound_key(strong_model, weak_model),
        display_bound_key=bound_key(strong_model, weak_model),
        # a central lower bound holds for every group (a local protocol is a central one)
        lower_bound_key="lower-central",
        allocation_family=AllocationFamily.FIXED,
        # a subsampled weaker group's population grows with the stronger group's ε
        sizes_fall_with_eps=not ratio_floor,
        coupled_groups=True,
        weak_release_eps=(
            None
            if not ratio_floor
            else functools.partial(weak_release_eps, ratio_floor=ratio_floor)
        ),
        min_users=MIN_USERS,
        thresholds_for_beta=thresholds_for_beta,
        size_run=releases_sizes(strong_model, weak_model, ratio_floor=ratio_floor),
        size_run_arrays=releases_sizes_arrays(strong_model, weak_model, ratio_floor=ratio_floor),
        build_tester=_tester_with(ratio_floor),
        mechanism=_mechanism_with(ratio_floor),
        report_cells=_report_cells,
        simulated_bins=_bins,
        calibration=CalibrationDesign(
            search_range=(0.05, 5.0),
            point_seconds={16: 1.0, 128: 4.0, 1024: 40.0},
            grid_axes=(
                CURATORS_GRID_AXES
                if strong_model is weak_model is Model.CENTRAL
                else MIXED_GRID_AXES
            ),
            grid_at_operating_point=True,
        ),
    )


CURATOR_RATIO_FLOOR = CHANNELS_GRID_AXES["eps_ratio"][0]
"""Below this share of the local group's ε, the curator's group releases at it from a
uniform subsample of its users (the grid's least ratio: where the calibration ends)."""

LOCAL_STRONG = releases_protocol(
    Model.LOCAL, Model.CENTRAL, "#7fbf7b", ratio_floor=CURATOR_RATIO_FLOOR
)
"""The local group has the larger ε (``local/central-private+channels``); a curator's
group far below it is subsampled (:data:`CURATOR_RATIO_FLOOR`)."""
CURATOR_STRONG = releases_protocol(
    Model.CENTRAL, Model.LOCAL, "#af8dc3", ratio_floor=CURATOR_RATIO_FLOOR
)
"""The curator's group has the larger ε (``central/local-private+channels``); the same
floor where a plan names the groups back the other way round (``planner.plan``, "Mixed
pairs"): the tester subsamples a curator's group far below the other whichever it is."""
