"""Shared helpers for the test suite."""

from __future__ import annotations

import signal

from planner.formulas.settings import ALL_SETTINGS, Model, Setting
from planner.inputs import Query


def make_query(
    setting: Setting | str,
    k: int = 1000,
    alpha: float = 0.1,
    eps1: float = 1.0,
    eps2: float = 0.25,
    delta: float = 1e-6,
    **extra,
) -> Query:
    if isinstance(setting, str):
        setting = Setting.from_key(setting)
    return Query(
        setting, k, alpha, eps1, eps2, delta if setting.model is Model.SHUFFLE else None, **extra
    )


SETTING_KEYS = [setting.key for setting in ALL_SETTINGS]


def order_table():
    """Every setting at C = 1 on the theorem's own bound (``--constants order``)."""
    from planner.constants import ConstantSource, constants_with_source

    return constants_with_source(ConstantSource.ORDER)


def sigint_as_from_a_terminal() -> None:
    """``preexec_fn`` for a command a test will Ctrl-C: SIGINT at its default, as a terminal
    starts it. A suite run as a background job of a non-interactive shell (``pytest &``)
    has SIGINT ignored; every child inherits that, and Python then installs no
    KeyboardInterrupt handler at all."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
