"""The protocol records (``planner/protocols``): one module per protocol, and the only place
in ``planner/`` that knows a setting by name."""

from __future__ import annotations

import ast
import math
from pathlib import Path

import numpy as np
import pytest

from planner.formulas.registry import BOUNDS
from planner.formulas.settings import ALL_SETTINGS, Coin, Model, Setting
from planner.inputs import Accounting, Query
from planner.protocols import (
    ASKED_PROTOCOLS,
    PROTOCOLS,
    AllocationFamily,
    private_coin_protocol,
    protocol_for,
)
from planner.protocols.base import dense_codes, distinct_rows

ROOT = Path(__file__).resolve().parent.parent
SETTING_KEYS = frozenset(setting.key for setting in ALL_SETTINGS)
NAMED_MEMBERS = {"Model": {m.name for m in Model}, "Coin": {c.name for c in Coin}}


def _docstrings(tree: ast.AST) -> set[int]:
    """ids of the string constants that are docstrings (module, class, function)."""
    found = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr):
            value = body[0].value
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                found.add(id(value))
    return found


def names_of_settings(source: str) -> list[str]:
    """Where ``source`` names a setting: a member of ``Model`` or ``Coin`` (``Model.LOCAL``)
    or a setting key as a string (``"shuffle-public"``, ``"central"``); docstrings aside."""
    tree = ast.parse(source)
    docstrings = _docstrings(tree)
    found = []
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.attr in NAMED_MEMBERS.get(node.value.id, ())
        ):
            found.append(f"line {node.lineno}: {node.value.id}.{node.attr}")
        elif (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and id(node) not in docstrings
            and node.value in SETTING_KEYS
        ):
            found.append(f"line {node.lineno}: {node.value!r}")
    return found


def test_the_finder_sees_members_and_keys_but_not_docstrings() -> None:
    source = (
        '"""About "central" and Model.LOCAL."""\n'
        "def f(setting):\n"
        '    """Docstring naming "shuffle-public"."""\n'
        "    if setting.model is Model.SHUFFLE:\n"
        '        return "local-private"\n'
        "    return setting.coin is Coin.PUBLIC\n"
    )
    assert sorted(names_of_settings(source)) == [
        "line 4: Model.SHUFFLE",
        "line 5: 'local-private'",
        "line 6: Coin.PUBLIC",
    ]
    assert names_of_settings("x = setting.model.needs_delta\n") == []


def test_no_module_of_the_planner_names_a_setting_outside_its_protocol_modules() -> None:
    offenders = {}
    for path in sorted((ROOT / "planner").rglob("*.py")):
        if "protocols" in path.relative_to(ROOT / "planner").parts:
            continue
        found = names_of_settings(path.read_text("utf-8"))
        if found:
            offenders[str(path.relative_to(ROOT))] = found
    assert not offenders, offenders


def test_one_record_per_setting_in_the_settings_order() -> None:
    assert tuple(protocol.setting for protocol in ASKED_PROTOCOLS) == ALL_SETTINGS
    assert all(p.setting.mechanism for p in PROTOCOLS if p not in ASKED_PROTOCOLS)
    assert len({protocol.key for protocol in PROTOCOLS}) == len(PROTOCOLS)
    assert len({protocol.colour for protocol in PROTOCOLS}) == len(PROTOCOLS)
    for protocol in PROTOCOLS:
        assert protocol_for(protocol.setting) is protocol_for(protocol.key) is protocol
        for key in (protocol.upper_bound_key, protocol.display_bound_key, protocol.lower_bound_key):
            assert key in BOUNDS
        assert protocol.needs_delta is (protocol.setting.model is Model.SHUFFLE)
        twin = private_coin_protocol(protocol)
        if protocol.setting.coin is Coin.PUBLIC:
            # the setting's own private-coin protocol; a public-coin mechanism names the
            # private-coin mechanism it extends (a shared hash: a channel per group)
            assert twin is not None and twin.setting.coin is Coin.PRIVATE
            assert twin.setting.model is protocol.setting.model
            if not protocol.setting.mechanism:
                assert twin.setting == Setting(protocol.setting.model, "private")
            assert twin.allocation_family is protocol.allocation_family
        else:
            assert twin is None
        # a protocol whose users send noise messages can say how much, and what it buys
        assert (protocol.noise_mu is None) is (protocol.exact_privacy is None)
        assert (protocol.noise_mu is None) is (protocol.size_for_noise is None)
        assert protocol.noise_messages is (protocol.allocation_family is AllocationFamily.NOISE)


def _query(key: str, delta: float | None = None) -> Query:
    setting = Setting.from_key(key)
    return Query(setting, k=400, alpha=0.5, eps1=1.0, eps2=0.5, delta=delta)


def test_central_sizes_by_hand() -> None:
    """Thm ``theo:central`` at k = 400, α = 1/2, ε = 1, C = 1: the largest term is
    k^{2/3}/α^{4/3} = 400^{2/3}·2^{4/3} = 136.8…, so 137 users; the weaker group is the
    population whose subsample of 137 is ε = 1/2-private, (e − 1)/(e^{1/2} − 1) ≈ 2.65
    times as many (rounded up)."""
    k, alpha, eps = 400, 0.5, 1.0
    terms = (
        math.sqrt(k) / alpha**2,
        math.sqrt(k) / (math.sqrt(eps) * alpha),
        k ** (2 / 3) / alpha ** (4 / 3),
        k ** (1 / 3) / (eps ** (2 / 3) * alpha ** (4 / 3)),
        1 / (eps * alpha),
    )
    assert max(terms) == pytest.approx(136.798, abs=1e-3)
    sizes = protocol_for("central").size_run(
        _query("central"), 1.0, 0.5, 1.0, None, Accounting.EXACT, (2, 1)
    )
    assert sizes.n_strong == 137
    ratio = (math.e - 1) / (math.exp(0.5) - 1)
    assert 137 * ratio <= sizes.n_weak <= 137 * ratio + 1


def test_local_sizes_by_hand() -> None:
    """Thm ``theo:ldp_ns`` with C = 1: k^{3/2}/(α²ε²) = 8000/(0.25·ε²): 32,000 at ε = 1
    and 128,000 at ε = 1/2 (order bound, no tester shape)."""
    sizes = protocol_for("local-private").size_run(
        _query("local-private"), 1.0, 0.5, 1.0, None, Accounting.EXACT, (2, 1)
    )
    assert (sizes.n_strong, sizes.n_weak) == (32_000, 128_000)
    assert sizes.compression is None
    hashed = protocol_for("local-public").size_run(
        _query("local-public"), 1.0, 0.5, 1.0, None, Accounting.EXACT, (4, 3)
    )
    # Cor. theo:ldp_public_ns: k/(α²ε²) = 1,600 and 6,400; L and R as given
    assert (hashed.n_strong, hashed.n_weak) == (1_600, 6_400)
    assert hashed.compression is not None
    assert (hashed.compression.L, hashed.compression.hashes) == (4, 3)


def test_shuffle_groups_keep_equal_mixing_weights() -> None:
    """Thm ``theo:sdp_ns``: n2 = (μ2/μ1)·n1, both rounded up from one real value."""
    protocol = protocol_for("shuffle-private")
    assert protocol.noise_mu is not None
    query = _query("shuffle-private", delta=1e-6)
    sizes = protocol.size_run(query, 1.0, 0.5, 3.0, None, Accounting.EXACT, (2, 1))
    mu_strong = protocol.noise_mu(1.0, 1e-6, Accounting.EXACT)
    mu_weak = protocol.noise_mu(0.5, 1e-6, Accounting.EXACT)
    assert (sizes.mu_strong, sizes.mu_weak) == (mu_strong, mu_weak)
    assert mu_weak > mu_strong
    assert sizes.n_strong == math.ceil(3.0 * sizes.order_strong)
    assert sizes.n_weak == math.ceil(3.0 * sizes.order_strong * mu_weak / mu_strong)


def test_distinct_rows_groups_as_numpy_unique_does() -> None:
    """``planner.protocols.base.distinct_rows`` (its own one-sort ranks per column) puts two
    rows in one group exactly when ``np.unique(axis=0)`` does: NaNs are one value, -0.0 and
    0.0 one value, and each representative is a member of its group."""
    rng = np.random.default_rng(11)
    rows = 5_000
    columns = [
        rng.choice([0.5, 1.0, np.nan, -0.0, 0.0], rows),
        rng.integers(0, 7, rows).astype(np.float64),
        np.full(rows, 1e-6),
        rng.choice(np.geomspace(0.01, 20, 40), rows),
    ]
    representatives, code = distinct_rows(*columns)
    stacked = np.stack([np.nan_to_num(column, nan=-9.0) + 0.0 for column in columns], axis=1)
    _, expected = np.unique(stacked, axis=0, return_inverse=True)
    expected = expected.reshape(-1)
    # the same partition: codes map one to one onto numpy's
    pairs = set(zip(code.tolist(), expected.tolist(), strict=True))
    assert len(pairs) == len(set(code.tolist())) == len(set(expected.tolist()))
    assert code.max() + 1 == representatives.size
    np.testing.assert_array_equal(code[representatives], np.arange(representatives.size))
    ranks, count = dense_codes(columns[0])
    _, inverse = np.unique(columns[0], return_inverse=True)
    np.testing.assert_array_equal(ranks, inverse.reshape(-1))
    assert count == 4  # 0.0 (and -0.0), 0.5, 1.0 and one NaN
