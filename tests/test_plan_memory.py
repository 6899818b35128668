"""The planner's memories of sized points: what they keep for the garbage collector.

A service worker plans thousands of distinct queries. Each full collection walks every
tracked object, and the memories once kept about 75 tracked objects a distinct plan
(keys holding ``Setting`` and ``Accounting`` objects, (constant, value) pairs): after
4,000 distinct plans a full collection took 200-300 ms, and the service's p99 latency was
about 200 ms (``benchmarks/bench_service.py``). These tests hold the cause: entries under
plain keys, no wrapper, bounded run sizes.
"""

from __future__ import annotations

import gc
import weakref

from planner import Query, Setting, api
from planner.constants import ConstantSource, SettingConstant
from planner.plan import (
    _MEMORIES,
    _PINNED,
    _PINNED_MAX,
    _remembered,
    _strong_order_size,
)
from planner.plan import plan as raw_plan


def _clear_memories() -> None:
    for memory in _MEMORIES:
        memory.clear()
    _PINNED.clear()
    _strong_order_size.cache_clear()


def test_distinct_plans_leave_a_bounded_number_of_tracked_objects() -> None:
    """1,500 distinct plans over three models leave at most 36,000 tracked objects in the
    memories (about 19,000 when this test was written; about 30,000 since every shuffle
    plan also sizes the multi-message protocol and a channel per group: the bounded run
    sizes and sized runs, and 16 assembled plans; before the memories were bounded, about
    85 a plan, so 127,000 and growing with every further plan up to their limits)."""
    query = {"k": 1000, "alpha": 0.1, "eps1": 1, "eps2": 0.25, "delta": 1e-6}
    for model in ("shuffle", "local", "central"):
        api.plan_document(**query, model=model)  # modules and constants loaded
    _clear_memories()
    gc.collect()
    before = len(gc.get_objects())
    for k in range(16, 516):
        for model in ("shuffle", "local", "central"):
            api.plan_document(**{**query, "k": k, "model": model})
    gc.collect()
    growth = len(gc.get_objects()) - before
    remembered = sum(len(memory) for memory in _MEMORIES)
    assert remembered > 15_000, "the plans were not remembered: nothing was measured"
    assert growth <= 36_000, f"{growth} tracked objects kept by 1,500 plans"


def test_an_entry_keeps_its_constant_alive_until_the_memories_start_again() -> None:
    """A key names its constant by ``id``: while the entry stands, that constant cannot be
    freed (so no other object can take the id); past ``_PINNED_MAX`` constants every
    memory starts again and lets them go."""
    _clear_memories()
    memory = _MEMORIES[0]

    def remember_with_a_fresh_constant(value: float) -> weakref.ref[SettingConstant]:
        constant = SettingConstant(ConstantSource.CALIBRATED, value)
        assert _remembered(memory, constant, (id(constant), "point"), lambda: value) == value
        return weakref.ref(constant)

    first = remember_with_a_fresh_constant(1.5)
    gc.collect()
    assert first() is not None  # held by _PINNED while its entry stands
    assert memory[(id(first()), "point")] == 1.5
    for index in range(_PINNED_MAX):
        remember_with_a_fresh_constant(2.0 + index)
    gc.collect()
    assert first() is None, "the memories started again: the first constant is free"
    assert len(_PINNED) == 1 and len(memory) == 1


def test_plans_after_the_memories_start_again_are_the_same() -> None:
    """Clearing every memory (as an overflow does) changes no plan."""
    queries = [
        Query(Setting("shuffle", "public"), 300, 0.2, 1.0, 0.5, 1e-6),
        Query(Setting("local", "private"), 64, 0.3, 4.0, 0.5),
        Query(Setting("central", "private"), 5000, 0.05, 0.5, 0.1),
    ]
    remembered = [raw_plan(query) for query in queries]
    again = [raw_plan(query) for query in queries]  # answered from the memories
    _clear_memories()
    fresh = [raw_plan(query) for query in queries]
    assert remembered == again == fresh
