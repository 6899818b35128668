"""Noise level of the (distributed) Poisson mechanism, from Lemma ``lemma:poisson_mech``.

The lemma is for a Δ-sensitive *scalar*. A group's histogram under the paper's
neighbouring relation (replace one user's value) changes two bins, by +1 and −1, and
every bin carries independent Poisson(μ) noise. We therefore give each bin the budget
(ε/2, δ/2) with Δ = 1 and compose the two changed bins (basic composition): the
histogram is then (ε, δ)-DP. This is the ``paper`` accounting; the exact accounting
lives in :mod:`planner.formulas.accounting`.
"""

from __future__ import annotations

from typing import Any

from planner.formulas.ops import NUMPY, Ops


def poisson_lemma_lambda(eps: Any, delta: Any, sensitivity: Any = 1, ops: Ops = NUMPY) -> Any:
    """λ of Lemma ``lemma:poisson_mech``: 16·log(10/δ)/(1−e^{−ε/Δ})² + 2Δ/(1−e^{−ε/Δ})."""
    shrink = 1 - ops.exp(-eps / sensitivity)
    return 16 * ops.log(10 / delta) / shrink**2 + 2 * sensitivity / shrink


def poisson_mu_paper(eps: Any, delta: Any, ops: Ops = NUMPY) -> Any:
    """Per-bin noise μ making a histogram (ε, δ)-DP under replace-one: λ(ε/2, δ/2, Δ=1)."""
    return poisson_lemma_lambda(eps / 2, delta / 2, 1, ops=ops)
