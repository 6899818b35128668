"""The real private testers and the Monte Carlo machinery that checks plans against them.

One module per protocol (randomizer, shuffler and analyzer side by side):
:mod:`planner.validators.local_private`, :mod:`planner.validators.local_public`,
:mod:`planner.validators.shuffle_private`, :mod:`planner.validators.shuffle_public`,
:mod:`planner.validators.central`. Each simulates on two paths — ``user`` (real per-user
messages) and ``fast`` (exact sufficient statistics, O(k) per trial whatever n is).
"""
