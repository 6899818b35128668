"""Central model, a noisy histogram per group (bound ``curator-beside-curator``).

The curator releases each group's histogram with discrete Laplace noise at that group's
ε (sensitivity 2 under replace-one neighbours: pure ε_g-DP for group g, no δ, no
subsampling), and the analyser runs the local channels' χ²-weighted studentized
statistic on the two debiased releases (``validators/mixed_channels.py`` with both groups
``"central"``). Each bin's noise variance is about 8/ε², so where the sampling noise
dominates it (large ε or small α) this tester needs about the non-private ℓ2 closeness
test's users, fewer than the paper's central tester (Thm ``theo:central``), whose single
noisy statistic wins where the noise dominates. A central query runs whichever needs
fewer users (``planner.protocols.other_mechanisms``). A shuffler can at best deliver
such a histogram, with more noise, so this tester is what histogram-based shuffle
protocols approach (the two calibrations' slack aside: at k = 16, α = 0.02, ε = (4, 2) the
shuffle plan at δ = 10⁻³ needs 24,583 users, this one 24,728).
"""

from __future__ import annotations

from planner.formulas.settings import Model
from planner.protocols.mixed_channels import releases_protocol

PROTOCOL = releases_protocol(Model.CENTRAL, Model.CENTRAL, "#5e3c99")
"""``central+channels``: both groups' curators release noisy histograms."""
