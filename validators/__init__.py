"""The real private testers and the Monte Carlo machinery that checks plans against them.

One module per protocol (randomizer, shuffler and analyzer side by side):
:mod:`validators.local_private`, :mod:`validators.local_public`,
:mod:`validators.shuffle_private`, :mod:`validators.shuffle_public`,
:mod:`validators.central`. Each simulates on two paths — ``user`` (real per-user
messages) and ``fast`` (exact sufficient statistics, O(k) per trial whatever n is).
"""
