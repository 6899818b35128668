"""The real private testers and the Monte Carlo machinery that checks plans against them.

One module per protocol (randomizer, shuffler and analyzer side by side):
:mod:`planner.validators.local_private`, :mod:`planner.validators.local_public`,
:mod:`planner.validators.shuffle_private`, :mod:`planner.validators.shuffle_public`,
:mod:`planner.validators.central`; and :mod:`planner.validators.local_channels`, the local
randomizers k-RR and bit flipping with one closeness statistic for any two of them (not
yet planned: see docs/method.md, "Channels"). Each simulates on two paths — ``user`` (real per-user
messages) and ``fast`` (exact sufficient statistics, O(k) per trial whatever n is).
"""
