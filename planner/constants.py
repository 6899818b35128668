"""The multipliers C that turn an O(·) bound into a number, read from one data file.

``data/constants.json`` holds, per setting, the source of its constant — ``proof``
(the paper's own), ``calibrated`` (Monte Carlo, with provenance) or ``order`` (C = 1,
not a guarantee) — and the multiplier applied to the registry bound.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from enum import StrEnum
from functools import lru_cache
from importlib import resources
from typing import Any


class ConstantSource(StrEnum):
    PROOF = "proof"
    CALIBRATED = "calibrated"
    ORDER = "order"


@dataclass(frozen=True)
class SettingConstant:
    """How a setting's numbers are made: ``multiplier × bound`` (a registry key)."""

    source: ConstantSource
    multiplier: float
    bound: str | None = None
    """Registry key overriding the setting's default bound (e.g. the proof-constant form)."""
    note: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ConstantTable:
    version: str
    settings: dict[str, SettingConstant]

    def for_setting(self, setting_key: str) -> SettingConstant:
        return self.settings[setting_key]


def parse_constant_table(document: dict[str, Any]) -> ConstantTable:
    """Build a table from the JSON document (see ``data/constants.json``)."""
    settings = {}
    for key, entry in document["settings"].items():
        known = {"source", "multiplier", "bound", "note"}
        settings[key] = SettingConstant(
            source=ConstantSource(entry["source"]),
            multiplier=float(entry["multiplier"]),
            bound=entry.get("bound"),
            note=entry.get("note", ""),
            extra={name: value for name, value in entry.items() if name not in known},
        )
    return ConstantTable(version=str(document["version"]), settings=settings)


@lru_cache(maxsize=1)
def default_constants() -> ConstantTable:
    """The constants shipped inside the package."""
    text = resources.files("planner").joinpath("data/constants.json").read_text("utf-8")
    return parse_constant_table(json.loads(text))
