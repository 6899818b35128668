"""Pure mathematics of heterogeneous private closeness testing.

Every bound of the paper (Canonne & Sun, *Private Distribution Testing with
Heterogeneous Constraints*) is written once, in :mod:`formulas.bounds`, as a function
of an :class:`~formulas.ops.Ops` namespace: evaluated with :data:`~formulas.ops.NUMPY`
it is the fast numeric twin (vectorised, no sympy import), evaluated with
:func:`~formulas.ops.sympy_ops` it is the sympy expression that ``planner explain``
prints. :mod:`formulas.registry` lists every bound with its theorem label, validity
range and named terms. No I/O and no randomness live in this package.
"""
