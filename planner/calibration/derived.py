"""Constants derived from another protocol's calibration, not fitted by their own run.

A protocol whose tester is, in law, another protocol's tester at a rescaled ε reads that
protocol's grid with each ε node rescaled: the multi-message shuffle protocol's analyser
sees exactly a curator's noisy histograms at θ·ε (``planner/protocols/
shuffle_messages.py``), so its constant at (k, α, ε_strong, ratio) is
``central+channels``'s at (k, α, θ·ε_strong, ratio). The ratio of the two ε is unchanged.
"""

from __future__ import annotations

import copy
from typing import Any

from planner.inputs import EPS_MAX


def eps_scaled_entry(
    source: dict[str, Any],
    source_key: str,
    eps_scale: float,
    reason: str,
    eps_weak_min: float | None = None,
) -> dict[str, Any]:
    """``source``'s constants entry read at ε·``eps_scale``: the ε_strong of its grid, of
    its covered region and of the range it covers above its grid's k divided by it (the
    covered top kept within the accepted ε), the multipliers, their source ("calibrated":
    fitted by simulating the same tester) and everything else unchanged, its provenance
    naming the source entry's.
    ``eps_weak_min``: the least smaller ε the derived protocol runs at (its covered
    ``eps_weak`` from there up), where the protocol itself, not its tester, sets one."""
    if not 0.0 < eps_scale <= 1.0:
        raise ValueError(f"eps_scale must be in (0, 1], not {eps_scale}")
    entry = copy.deepcopy(source)
    entry["grid"]["axes"]["eps_strong"] = [
        eps / eps_scale for eps in source["grid"]["axes"]["eps_strong"]
    ]
    low, high = source["covered"]["eps_strong"]
    entry["covered"]["eps_strong"] = [low / eps_scale, min(high / eps_scale, EPS_MAX)]
    if eps_weak_min is not None:
        entry["covered"]["eps_weak"] = [eps_weak_min, EPS_MAX]
    above = source.get("covered_above_grid") or {}
    if "eps_strong" in above:  # a range above the grid's k is an ε_strong range too
        low, high = above["eps_strong"]
        entry["covered_above_grid"]["eps_strong"] = [
            low / eps_scale,
            min(high / eps_scale, EPS_MAX),
        ]
    entry["covered_note"] = (
        f"{source_key}'s covered region with each eps_strong divided by {eps_scale:g}: "
        + source.get("covered_note", "")
    )
    entry["note"] = f"{source_key}'s calibration read at {eps_scale:g}·ε: {reason}"
    entry["provenance"] = {
        "derived_from": source_key,
        "eps_scale": eps_scale,
        "source_provenance": source["provenance"],
    }
    return entry
