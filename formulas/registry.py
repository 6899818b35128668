"""One registry of every bound: its theorem, validity range, named terms and how they combine.

>>> BOUNDS["local-private"].evaluate(k=1024, alpha=0.1, eps=1.0)   # C = 1
3276800.0
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

import numpy as np

from planner.formulas import bounds
from planner.formulas.ops import NUMPY, sympy_ops


class Combine(StrEnum):
    """How the terms of a bound make the bound (the O(·) is the same either way)."""

    SUM = "sum"
    MAX = "max"


SYMBOL_NAMES: dict[str, str] = {
    "k": "k",
    "K": "K",
    "L": "L",
    "alpha": "alpha",
    "eps": "epsilon",
    "eps1": "epsilon_1",
    "eps2": "epsilon_2",
    "mu1": "mu_1",
    "mu2": "mu_2",
    "delta": "delta",
}


@dataclass(frozen=True)
class Bound:
    """A sample-complexity bound with C = 1, as a function of named parameters."""

    key: str
    title: str
    reference: str
    """LaTeX label of the theorem or table in the paper."""
    parameters: tuple[str, ...]
    term_labels: tuple[str, ...]
    combine: Combine
    function: Callable[..., tuple[Any, ...]]
    validity: str
    """Parameter range in which the paper proves the bound."""
    counts: str = "users per group"
    eps_max: float = math.inf
    """The largest ε the bound's theorem assumes (1 for the paper's theorems; inf where it
    holds at every ε): a plan sized by it above that ε says so."""

    def terms(self, **values: Any) -> tuple[Any, ...]:
        """Numeric terms (floats or numpy arrays), in the order of ``term_labels``."""
        return self.function(**self._arguments(values), ops=NUMPY)

    def evaluate(self, **values: Any) -> Any:
        """Numeric value of the bound (vectorised over array arguments)."""
        raw = self.terms(**values)
        # scalars: no array machinery (floats, incl. numpy's, checked first: np.ndim is slow)
        if all(isinstance(term, float) for term in raw) or all(np.ndim(term) == 0 for term in raw):
            return float(sum(raw)) if self.combine is Combine.SUM else float(max(raw))
        terms = np.broadcast_arrays(*raw)
        stacked = np.stack(terms)
        total = stacked.sum(axis=0) if self.combine is Combine.SUM else stacked.max(axis=0)
        return total[()] if total.ndim == 0 else total

    def dominant_term(self, **values: Any) -> str:
        """Label of the largest term at a scalar parameter point."""
        terms = [float(term) for term in self.terms(**values)]
        return self.term_labels[int(np.argmax(terms))]

    def symbols(self) -> dict[str, Any]:
        import sympy

        return {name: sympy.Symbol(SYMBOL_NAMES[name], positive=True) for name in self.parameters}

    def symbolic_terms(self) -> tuple[Any, ...]:
        """The terms as sympy expressions in positive symbols."""
        return self.function(**self.symbols(), ops=sympy_ops())

    def symbolic(self) -> Any:
        """The whole bound as one sympy expression."""
        import sympy

        terms = self.symbolic_terms()
        return sympy.Add(*terms) if self.combine is Combine.SUM else sympy.Max(*terms)

    def _arguments(self, values: dict[str, Any]) -> dict[str, Any]:
        if len(values) == len(self.parameters) and all(name in values for name in self.parameters):
            return values
        missing = set(self.parameters) - set(values)
        extra = set(values) - set(self.parameters)
        if missing or extra:
            raise TypeError(
                f"bound {self.key!r} takes {self.parameters}; missing {sorted(missing)}, "
                f"unexpected {sorted(extra)}"
            )
        return values


_PER_GROUP_LOCAL = "per group g, at ε = ε_g; k ≥ 2, α ∈ (0, 1], ε_g ∈ (0, 1]"
_LOWER_LOCAL = (
    "per group g, at ε = ε_g; k ≥ 2, α ∈ (0, 1], ε_g > 0; g(ε) = max(ε, (e^ε − 1)/(e − 1)): "
    "the paper's bound for ε ≤ 1, the χ² contraction (e^ε − 1)² above it, and never below "
    "the non-private closeness terms"
)
_SHUFFLE_VALIDITY = (
    "group 1 = the group with the larger ε (μ1 ≤ μ2); k ≥ 2, α ∈ (0, 1], ε_g ∈ (0, 1], "
    "δ ∈ (0, 1); group 2 gets n2 = (μ2/μ1)·n1"
)

BOUNDS: dict[str, Bound] = {
    bound.key: bound
    for bound in (
        Bound(
            key="local-private",
            title="Local DP, private coin",
            reference="theo:ldp_ns",
            parameters=("k", "alpha", "eps"),
            term_labels=("k^(3/2)/(α²ε²)",),
            combine=Combine.SUM,
            function=bounds.local_private,
            validity=_PER_GROUP_LOCAL,
            eps_max=1.0,
        ),
        Bound(
            key="local-private-proof",
            title="Local DP, private coin, the proof's constants",
            reference="theo:l2_mean_flip",
            parameters=("K", "alpha", "eps"),
            term_labels=("1600·K^(3/2)/(α²ε²)",),
            combine=Combine.SUM,
            function=bounds.local_private_proof,
            validity=_PER_GROUP_LOCAL + "; K = smallest power of two ≥ k",
            eps_max=1.0,
        ),
        Bound(
            key="local-private-hadamard",
            title="Local DP, private coin, in the tester's shape (Hadamard padding kept)",
            reference="theo:l2_mean_flip",
            parameters=("k", "K", "alpha", "eps"),
            term_labels=("k·√K/(α²ε²)",),
            combine=Combine.SUM,
            function=bounds.local_private_hadamard,
            validity=_PER_GROUP_LOCAL + "; K = smallest power of two ≥ k",
            eps_max=1.0,
        ),
        Bound(
            key="local-private-tester",
            title="Local DP, private coin, in the tester's shape for every ε",
            reference="theo:l2_mean_flip",
            parameters=("k", "K", "alpha", "eps"),
            term_labels=("k·√K·(γ²/4)/α²",),
            combine=Combine.SUM,
            function=bounds.local_private_tester,
            validity=(
                "per group g, at ε = ε_g; k ≥ 2, α ∈ (0, 1], ε_g > 0; K = smallest power "
                "of two ≥ k; γ = (e^ε + 1)/(e^ε − 1)"
            ),
        ),
        Bound(
            key="local-krr",
            title="Local DP, k-ary randomized response in both groups",
            reference="k-RR closeness (docs/method.md)",
            parameters=("k", "alpha", "eps"),
            term_labels=("k^(2/3)/(aα)^(4/3)", "√k/(aα)²"),
            combine=Combine.SUM,
            function=bounds.local_krr,
            validity=(
                "both groups at ε = min(ε1, ε2); k ≥ 2, α ∈ (0, 1], ε > 0; "
                "a = (e^ε − 1)/(e^ε + k − 1)"
            ),
        ),
        Bound(
            key="local-channels",
            title="Local DP, each group through its own channel (k-RR or unary encoding)",
            reference="one channel per group (docs/method.md)",
            parameters=("k", "alpha", "eps1", "eps2"),
            term_labels=("√k·√w1·(√w1 + √w2)/α²",),
            combine=Combine.SUM,
            function=bounds.local_channels,
            validity=(
                "group 1's users (group 2's: ε1 and ε2 exchanged); k ≥ 2, α ∈ (0, 1], "
                "ε_g > 0; w_g = min(k-RR's (1 − 1/k)/a², optimized unary encoding's "
                "k·π(1 − π)/a²) at ε_g"
            ),
        ),
        Bound(
            key="curator-beside-local",
            title="Mixed pair: group 1's curator releases a noisy histogram, group 2 is local",
            reference="mixed pairs (docs/method.md)",
            parameters=("k", "alpha", "eps1", "eps2"),
            term_labels=("(1 + √(1 + 4k·v1·τ1))/(2τ1), τ1 the curator's share of α²/√k",),
            combine=Combine.SUM,
            function=bounds.curator_beside_local,
            validity=(
                "group 1's users (the curator's, at ε1; group 2 local at ε2); k ≥ 2, "
                "α ∈ (0, 1], ε_g > 0; v1 = 2r/(1 − r)², r = e^(−ε1/2)"
            ),
        ),
        Bound(
            key="curator-beside-curator",
            title="Central DP: each group's curator releases a noisy histogram",
            reference="a noisy histogram per group (docs/method.md)",
            parameters=("k", "alpha", "eps1", "eps2"),
            term_labels=("(1 + √(1 + 4k·v1·τ1))/(2τ1), τ1 group 1's share of α²/√k",),
            combine=Combine.SUM,
            function=bounds.curator_beside_curator,
            validity=(
                "group 1's users (group 2's: ε1 and ε2 exchanged); k ≥ 2, α ∈ (0, 1], "
                "ε_g > 0; v_g = 2r/(1 − r)², r = e^(−ε_g/2)"
            ),
        ),
        Bound(
            key="local-beside-curator",
            title="Mixed pair: group 1 is local, group 2's curator releases a noisy histogram",
            reference="mixed pairs (docs/method.md)",
            parameters=("k", "alpha", "eps1", "eps2"),
            term_labels=("√w1·(√w1 + √w2′)·√k/α², w2′ the curator's effective noise",),
            combine=Combine.SUM,
            function=bounds.local_beside_curator,
            validity=(
                "group 1's users (local at ε1, beside a curator's group at ε2); k ≥ 2, "
                "α ∈ (0, 1], ε_g > 0; w1 as local-channels"
            ),
        ),
        Bound(
            key="local-hashed-channels",
            title="Local DP, public coin: a shared hash onto K buckets, a channel per group",
            reference="a shared hash, then a channel per group (docs/method.md)",
            parameters=("k", "K", "alpha", "eps1", "eps2"),
            term_labels=("k·√w1·(√w1 + √w2)/(√K·(1 − 1/K)·α²)",),
            combine=Combine.SUM,
            function=bounds.hashed_channels,
            validity=(
                "group 1's users (group 2's: ε1 and ε2 exchanged); k ≥ 2, 2 ≤ K ≤ k, "
                "α ∈ (0, 1], ε_g > 0; w_g = the least channel noise over K bins at ε_g; "
                "K from hashed_buckets"
            ),
        ),
        Bound(
            key="curator-hashed",
            title=(
                "A shared hash onto K buckets, then each group's curator releases a noisy histogram"
            ),
            reference="a shared hash, then two curators' histograms (docs/method.md)",
            parameters=("k", "K", "alpha", "eps1", "eps2"),
            term_labels=("(1 + √(1 + 4K·v1·τ1))/(2τ1), τ1 group 1's share of α²·√K·(1 − 1/K)/k",),
            combine=Combine.SUM,
            function=bounds.hashed_curators,
            validity=(
                "group 1's users (group 2's: ε1 and ε2 exchanged); k ≥ 2, 2 ≤ K ≤ k, "
                "α ∈ (0, 1], ε_g > 0; v_g = 2r/(1 − r)², r = e^(−ε_g/2); "
                "K from hashed_curator_buckets"
            ),
        ),
        Bound(
            key="local-public-tester",
            title="Local DP, public coin, in the tester's shape for every ε",
            reference="theo:ldp_public_ns",
            parameters=("k", "alpha", "eps"),
            term_labels=("k·(γ²/4)/α²",),
            combine=Combine.SUM,
            function=bounds.local_public_tester,
            validity="per group g, at ε = ε_g; k ≥ 2, α ∈ (0, 1], ε_g > 0; γ = (e^ε + 1)/(e^ε − 1)",
        ),
        Bound(
            key="local-public",
            title="Local DP, public coin",
            reference="theo:ldp_public_ns",
            parameters=("k", "alpha", "eps"),
            term_labels=("k/(α²ε²)",),
            combine=Combine.SUM,
            function=bounds.local_public,
            validity=_PER_GROUP_LOCAL,
            eps_max=1.0,
        ),
        Bound(
            key="local-public-compressed",
            title="Local DP, public coin, hashed to L values",
            reference="theo:ldp_public_ns",
            parameters=("k", "alpha", "eps", "L"),
            term_labels=("k·√L/(α²ε²)",),
            combine=Combine.SUM,
            function=bounds.local_public_compressed,
            validity=_PER_GROUP_LOCAL + "; L ∈ [2, k]",
            eps_max=1.0,
        ),
        Bound(
            key="shuffle-private",
            title="Shuffle DP, private coin (μ-form)",
            reference="theo:sdp_ns",
            parameters=("k", "alpha", "mu1", "mu2"),
            term_labels=(
                "√k/α²",
                "k^(3/4)·√μ1/α",
                "min(1/(α⁴μ1μ2), k^(2/3)/α^(4/3)·(μ1/μ2)^(1/3))",
            ),
            combine=Combine.SUM,
            function=bounds.shuffle_private,
            validity=_SHUFFLE_VALIDITY,
            eps_max=1.0,
            counts="users of group 1",
        ),
        Bound(
            key="shuffle-private-eps",
            title="Shuffle DP, private coin (ε-form, as stated)",
            reference="theo:sdp_ns",
            parameters=("k", "alpha", "eps1", "eps2", "delta"),
            term_labels=(
                "√k/α²",
                "k^(3/4)·√log(1/δ)/(αε1)",
                "min(ε1²ε2²/(α⁴log²(1/δ)), k^(2/3)/α^(4/3)·(ε2/ε1)^(2/3))",
            ),
            combine=Combine.SUM,
            function=bounds.shuffle_private_eps,
            validity=_SHUFFLE_VALIDITY,
            eps_max=1.0,
            counts="users of group 1",
        ),
        Bound(
            key="shuffle-public-compressed",
            title="Shuffle DP, public coin, hashed to L values (μ-form)",
            reference="theo:sdp_public_ns",
            parameters=("k", "alpha", "mu1", "mu2", "L"),
            term_labels=(
                "k/(√L·α²)",
                "L^(1/4)·√k·√μ1/α",
                "min(k²/(L²α⁴μ1μ2), k^(2/3)/α^(4/3)·(μ1/μ2)^(1/3))",
            ),
            combine=Combine.SUM,
            function=bounds.shuffle_public_compressed,
            validity=_SHUFFLE_VALIDITY + "; L ∈ [2, k]",
            eps_max=1.0,
            counts="users of group 1",
        ),
        Bound(
            key="shuffle-public-eps",
            title="Shuffle DP, public coin (ε-form, as stated)",
            reference="theo:sdp_public_ns",
            parameters=("k", "alpha", "eps1", "delta"),
            term_labels=(
                "√k/α²",
                "k^(2/3)·log^(1/3)(1/δ)/(α^(4/3)ε1^(2/3))",
                "√k·√log(1/δ)/(αε1)",
            ),
            combine=Combine.SUM,
            function=bounds.shuffle_public_eps,
            validity=_SHUFFLE_VALIDITY,
            eps_max=1.0,
            counts="users of group 1",
        ),
        Bound(
            key="central",
            title="Central DP",
            reference="theo:central",
            parameters=("k", "alpha", "eps"),
            term_labels=(
                "√k/α²",
                "√k/(√ε·α)",
                "k^(2/3)/α^(4/3)",
                "k^(1/3)/(ε^(2/3)α^(4/3))",
                "1/(εα)",
            ),
            combine=Combine.MAX,
            function=bounds.central,
            validity=(
                "group 1 = the group with the larger ε, at ε = ε1; k ≥ 2, α ∈ (0, 1], "
                "ε ∈ (0, 1]; group 2 gets n2 = n1·(e^{ε1}−1)/(e^{ε2}−1) (theo:subsampling)"
            ),
            eps_max=1.0,
            counts="users of group 1",
        ),
        Bound(
            key="nonprivate-closeness",
            title="Closeness testing without privacy",
            reference="tab:testing",
            parameters=("k", "alpha"),
            term_labels=("√k/α²", "k^(2/3)/α^(4/3)"),
            combine=Combine.SUM,
            function=bounds.nonprivate_closeness,
            validity="k ≥ 2, α ∈ (0, 1]",
        ),
        Bound(
            key="nonprivate-identity",
            title="Identity testing without privacy",
            reference="tab:testing",
            parameters=("k", "alpha"),
            term_labels=("√k/α²",),
            combine=Combine.SUM,
            function=bounds.nonprivate_identity,
            validity="k ≥ 2, α ∈ (0, 1]",
        ),
        Bound(
            key="lower-local-private",
            title="Lower bound, local DP, private coin (identity testing at ε_g)",
            reference="tab:testing:DP",
            parameters=("k", "alpha", "eps"),
            term_labels=("k^(3/2)/(α²g(ε)²)", "k^(2/3)/α^(4/3)", "√k/α²"),
            combine=Combine.MAX,
            function=bounds.local_private_lower,
            validity=_LOWER_LOCAL,
        ),
        Bound(
            key="lower-local-public",
            title="Lower bound, local DP, public coin (identity testing at ε_g)",
            reference="tab:testing:DP",
            parameters=("k", "alpha", "eps"),
            term_labels=("k/(α²g(ε)²)", "k^(2/3)/α^(4/3)", "√k/α²"),
            combine=Combine.MAX,
            function=bounds.local_public_lower,
            validity=_LOWER_LOCAL,
        ),
        Bound(
            key="lower-shuffle",
            title="Lower bound, shuffle DP (identity testing at ε_g)",
            reference="tab:testing:DP",
            parameters=("k", "alpha", "eps"),
            term_labels=("k^(2/3)/(α^(4/3)ε^(2/3))", "√k/α²", "1/(αε)"),
            combine=Combine.SUM,
            function=bounds.lower_shuffle,
            validity="per group g, at ε = ε_g; k ≥ 2, α ∈ (0, 1], ε_g ∈ (0, 1]",
            eps_max=1.0,
        ),
        Bound(
            key="lower-central",
            title="Lower bound, central DP (identity testing at ε_g)",
            reference="tab:testing:DP",
            parameters=("k", "alpha", "eps"),
            term_labels=("√k/α²", "√k/(α√ε)", "k^(1/3)/(α^(4/3)ε^(2/3))", "1/(αε)"),
            combine=Combine.SUM,
            function=bounds.lower_central,
            validity="per group g, at ε = ε_g; k ≥ 2, α ∈ (0, 1], ε_g ∈ (0, 1]",
            eps_max=1.0,
        ),
    )
}
