"""Pure mathematics of heterogeneous private closeness testing.

Every bound of the paper (Canonne & Sun, *Private Distribution Testing with
Heterogeneous Constraints*) is written once, in :mod:`planner.formulas.bounds`, as a
function of an :class:`~planner.formulas.ops.Ops` namespace: evaluated with
:data:`~planner.formulas.ops.NUMPY` it is the fast numeric twin (vectorised, no sympy
import), evaluated with
:func:`~planner.formulas.ops.sympy_ops` it is the sympy expression that ``planner explain``
prints. :mod:`planner.formulas.registry` lists every bound with its theorem label, validity
range and named terms. No I/O and no randomness live in this package.
"""
