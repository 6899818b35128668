# ruff: noqa: E501  (the case tables are kept one case a line)
"""A seeded, bounded hostile run of the Python API, the command line and the HTTP service.

Every parameter of every command and route gets hostile values (NaN, ±inf, huge and tiny
numbers, negatives, zero, strings, unicode, empty, lists where scalars go, repeated
options and fields, unknown fields, huge bodies and query strings, bad files: empty,
binary, huge, wrong shape, symbolic links, directories, devices, read-only outputs;
option values that look like options) mixed with values at the edges of the documented
ranges. Three kinds of cases:

* ``api``: in-process calls of ``planner.api``'s functions and the public API
  (``Query``, ``Setting``, ``plan``, ``solve``, ``sweep``), in forked children with a
  watchdog; any exception but :class:`planner.inputs.InputError` is a defect, and so is
  a call over 10 s (a simulation: over its stated budget plus 10 s);
* ``cli``: ``python -m planner …`` subprocesses with a timeout; a traceback on stderr, an
  exit code outside {0, 1, 2, 3, 130, 141}, or exit 2 without exactly one ``error:``
  line is a defect;
* ``http``: requests to a real ``python -m planner serve`` on 127.0.0.1 with a temporary
  ``--db``, the first part of them to one HTTP process (``--workers 1``), the rest
  (``--http-share2``, default half) to two (``--workers 2``: the processes share the
  socket and the jobs database); any 5xx but the documented 503 (the per-request cap), a
  response over 10 s, and a concurrent ``/v1/health`` probe answered after more than 1 s
  are defects.

The power features are drawn like the rest: ``planner power`` (its ``--simulate`` options
too), ``--power`` wherever ``--beta`` is accepted (and beside it), ``plot --power`` (its
``--users``), ``/v1/power`` (POST, through the service's fast path or not, and GET), and
the API's power functions (``power_answer``, ``simulated_power``, ``settings_curves``,
``beta_or_power``, ``beta_spec_of_power``).

    python benchmarks/hostile_run.py --seed 20261128 --api 10000 --cli 500 --http 3000

It writes a JSON summary (counts per kind, every defect with a reproducer) to
``--output`` (default ``hostile-run.json``) and prints a short table. Exit code 1 if it
found a defect.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import math
import os
import random
import resource
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from decimal import Decimal
from fractions import Fraction
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # this checkout's planner, not an installed one
SLOW_SECONDS = 10.0
STALL_SECONDS = 1.0
EXIT_CODES = {0, 1, 2, 3, 130, 141}
MEMORY_CAP = 4 * 2**30  # address space of each case's process: a blow-up is a MemoryError

MODELS = ["local", "shuffle", "central"]
COINS = ["private", "public"]
SETTINGS = ["local-private", "local-public", "shuffle-private", "shuffle-public", "central"]
FAMILIES = ["uniform", "zipf-1", "paninski", "heavy-difference", "point-mass-heavy"]

# --- values ------------------------------------------------------------------------------

TEXT_HOSTILE = [
    "", " ", "nan", "NaN", "-nan", "inf", "-inf", "Infinity", "1e400", "-1e400", "1e-400",
    "abc", "١٢", "½", "0x10", "1_000", "1/2", "1,2", "1e", ".", "--", "-", "--k", "--help",
    "-k", "--json", "True", "None", "null", "[]", "{}", "\x00", "é", "😀", "\u202e1",
    "9" * 400, "-" + "9" * 60, "1" * 5000, "0.1 ", " 0.1", "\t1\n", "1e-320", "4.9e-324",
    "1e308", "2**64", "18446744073709551617", "-0", "+1", "1.", ".5", "0.5e", "1e+",
]  # fmt: skip
OBJ_HOSTILE: list[Any] = [
    math.nan, math.inf, -math.inf, 1e308, -1e308, 5e-324, -5e-324, -1, 0, -0.0, 1e-320,
    10**400, -(10**400), 2**63, 2**64 + 1, True, False, None, [], [1], [1, 2], {}, {"a": 1},
    (1, 2), b"1", bytearray(b"2"), Decimal("NaN"), Decimal("1e-5000"), Decimal("1e5000"),
    Fraction(1, 3), complex(1, 1), object(), {1, 2}, range(3), Ellipsis,
]  # fmt: skip
EDGES: dict[str, list[Any]] = {
    "k": [2, 3, 8, 16, 100, 1000, 4096, 10**6, 10**12, 10**12 + 1, 1, 2.5, "1e12", 1e12, 65536],
    "alpha": [1e-6, 9.99e-7, 1, 1.0000001, 0.5, 0.1, 0.01, 1e-3, 0.3, 0.05],
    "eps1": [1e-4, 9.99e-5, 20, 20.0001, 1, 0.25, 0.001, 5, 0.5, 2],
    "eps2": [1e-4, 9.99e-5, 20, 20.0001, 1, 0.25, 0.001, 5, 0.1, 0.05],
    "delta": [1e-12, 9e-13, 1 - 1e-16, 1, 0.5, 1e-6, 1e-9, 0],
    "beta": [1e-300, 0.01, 0.1, 1 / 3, 0.4999999, 0.5, 0.2, 0.05, 1e-9],
    "power": [0.5, 0.5000001, 0.8, 0.99, 0.999999, 1, 0.9],
    "n1": [1, 2, 10, 1000, 10**5, 10**6, 10**15, 10**16, 10**30, 1e30, 0],
    "n2": [1, 2, 10, 1000, 10**5, 10**6, 10**15, 10**16, 10**30, 1e30, 0],
    "trials": [1, 5, 20, 50, 200, 0, 10**6, 10**7 + 1, "auto", 25_601],
    "max_trials": [200, 199, 400, 10**7, 10**7 + 1],
    "seed": [0, 1, 2**63 - 1, 2**63, -1],
    "cost1": [1e-6, 1e6, 1e-7, 1e6 + 1, 1, 3],
    "cost2": [1e-6, 1e6, 1e-7, 1e6 + 1, 1, 0.5],
    "simulation_budget": [0, 0, 0, 0.5, 1, 3600, 3601],
    "workers": [1, 2, 0, 256, 257],
    "model": [*MODELS, "Local", " central", "quantum", ""],
    "coin": [*COINS, "PUBLIC", "both", ""],
    "accounting": ["exact", "paper", "EXACT", "approx"],
    "allocation": ["fewest", "paper", "cost", "fixed-n2", "FEWEST", " paper", "fixed_n2", "x"],
    "constants": ["calibrated", "proof", "order", "magic"],
    "path": ["user", "fast", "auto", "psychic"],
    "unknown": ["n1", "n2", "alpha", "eps2", "beta", "k", "zzz"],
}
SPECS = [
    "1:2:0", "1:2:-1", "1:2:1e9", "0:1:5log", "1:1:3", "a:b:c", "1:2:3:4", "1:2:100001",
    "0.1:0.5:100000", "1:2:3log", "-1:1:3log", "nan:1:3", "1:inf:3", "1:2:", "::", "1,2,,3",
    "1,nan,inf", "1e-4:1:50log", "0.05:1:5log", "16:4096:5log", "2:1000000000000:4log",
    "0.1,0.2,0.3", "1e-6:1:400log", "16:65536:500log", "0.01:0.5:100log", ",", "1:2:3 log",
    "1:2:1e-300", "1:2:inf", "1:2:nan", "2:3:2.5", ":" * 100, "1," * 3000,
]  # fmt: skip
USERS = [
    "1000:1000000:12log", "5000", "2", "1", "1e15", "1e16", "0:10:5", "100:1e9:60log",
    "100:1e9:61log", "1e4:1e6:13", "2:3:2", "1e3,1e4,1e5", "nan", "inf", "-5", "", "x",
    "20000:60000:12", "1e4:1e7:60log", "1" * 400,
]  # fmt: skip
"""``plot --power``'s total users: valid specs (up to the 60 points a figure holds), one
point over, and hostile ones."""
POWERS = ["0.5", "0.50000001", "0.8", "0.99", "0.999999", "1", "0.9", "1.5", "-0.8", "80%"]
SAFE: dict[str, list[Any]] = {
    "k": [100, 1000, 200], "alpha": [0.1, 0.2, 0.5], "eps1": [1.0, 0.5], "eps2": [0.25, 0.5],
    "delta": [1e-6], "beta": [1 / 3, 0.1], "n1": [5000, 20000], "n2": [5000, 400000],
}  # fmt: skip


def hostile(rng: random.Random, name: str, *, text: bool = False) -> Any:
    """A value for parameter ``name``: an edge of its range, or something hostile."""
    roll = rng.random()
    if roll < 0.45 and name in EDGES:
        value = rng.choice(EDGES[name])
    elif roll < 0.6 and name in SAFE:
        value = rng.choice(SAFE[name])
    elif roll < 0.8 or text:
        value = rng.choice(TEXT_HOSTILE)
    else:
        value = rng.choice(OBJ_HOSTILE)
    if text and not isinstance(value, str):
        value = repr(value) if isinstance(value, float) and not math.isfinite(value) else str(value)
    return value


# --- files -------------------------------------------------------------------------------


class Files:
    """Hostile input files and output paths in a temporary folder."""

    def __init__(self, root: Path) -> None:
        import numpy as np

        self.root = root
        root.mkdir(parents=True, exist_ok=True)
        f = root.joinpath
        f("empty.csv").write_text("")
        f("binary.csv").write_bytes(bytes(range(256)) * 64)
        f("nul.toml").write_bytes(b"\x00" * 4096)
        f("bom.csv").write_text("\ufeffname,model,k,alpha,eps1,eps2\nx,central,100,0.1,1,0.5\n")
        f("uniform100.csv").write_text("\n".join(["0.01"] * 100))
        f("uniform100.json").write_text(json.dumps([0.01] * 100))
        np.save(f("uniform100.npy"), np.full(100, 0.01))
        far = [0.02] * 50 + [0.0] * 50
        f("far100.csv").write_text("\n".join(map(str, far)))
        f("negative.csv").write_text("\n".join(["-0.01", "1.01"] + ["0"] * 98))
        f("nan.csv").write_text("\n".join(["nan"] * 100))
        f("inf.json").write_text("[Infinity, 0]")
        f("wrong_shape.json").write_text(json.dumps([[0.5, 0.5], [0.5, 0.5]]))
        f("dict.json").write_text(json.dumps({"p": [0.5, 0.5]}))
        f("deep.json").write_text("[" * 100_000 + "]" * 100_000)
        f("matrix.npy").write_bytes(b"")
        np.save(f("matrix.npy"), np.ones((10, 10)) / 100)
        np.save(f("object.npy"), np.array([{"a": 1}], dtype=object), allow_pickle=True)
        np.save(f("complex.npy"), np.full(100, 0.01 + 0j))
        f("fake.npy").write_bytes(b"\x93NUMPY\x01\x00\xff\xff" + b"x" * 100)
        f("long_line.csv").write_text("0.01," * 200_000)
        with open(f("huge.csv"), "wb") as handle:  # sparse: 80 MiB of NULs
            handle.truncate(80 * 2**20)
        f("big.toml").write_text("#" * (3 * 2**20))
        f("good.toml").write_text(
            '[[scenario]]\nname = "a"\nmodel = "central"\nk = 100\nalpha = 0.1\neps1 = 1\n'
            'eps2 = 0.5\n\n[[scenario]]\nname = "b"\nmodel = "local"\nk = 1000\nalpha = 1.5\n'
            "eps1 = 1\neps2 = 0.5\n"
        )
        f("good.csv").write_text(
            "name,model,k,alpha,eps1,eps2,delta\nx,shuffle,100,0.1,1,0.5,1e-6\ny,central,nan,0.1,1,1,\n"
        )
        f("unknown_field.toml").write_text('[[scenario]]\nmodel = "central"\nzzz = 1\n')
        f("types.toml").write_text(
            '[[scenario]]\nmodel = ["central"]\nk = {a = 1}\nalpha = 1979-05-27\neps1 = true\n'
            "eps2 = inf\n"
        )
        f("dup.toml").write_text("[[scenario]]\nk = 1\nk = 2\n")
        f("noheader.csv").write_text("1,2,3\n4,5,6\n")
        f("ragged.csv").write_text("name,model,k\nx,central,100,extra,extra\ny\n")
        f("many_rows.csv").write_text(
            "model,k,alpha,eps1,eps2\n" + "central,100,0.1,1,0.5\n" * 10_001
        )
        f("many_solves.csv").write_text(
            "model,k,eps1,n1,n2,alpha\n" + "central,100,1,5000,5000,0.1\n" * 1_001
        )
        f("scenario_table.toml").write_text("scenario = 5\n")
        f("bad.toml").write_text("[[scenario]\nk = ")
        f("utf16.csv").write_bytes("model,k\ncentral,100\n".encode("utf-16"))
        f("power.csv").write_text(
            "model,k,alpha,eps1,eps2,power\ncentral,100,0.1,1,0.5,0.8\nlocal,100,0.1,1,0.5,\n"
        )
        f("power.toml").write_text(
            '[[scenario]]\nmodel = "central"\nk = 100\nalpha = 0.1\neps1 = 1\neps2 = 0.5\n'
            "power = 0.9\nbeta = 0.1\n"
        )
        f("a_dir").mkdir(exist_ok=True)
        for name, target in (
            ("link_to_dir", "a_dir"),
            ("dangling", "nowhere"),
            ("loop_a", "loop_b"),
            ("loop_b", "loop_a"),
            ("link_good.toml", "good.toml"),
            ("link_uniform.csv", "uniform100.csv"),
        ):
            with contextlib.suppress(FileExistsError):
                os.symlink(target, f(name))
        f("readonly.json").write_text("{}")
        os.chmod(f("readonly.json"), 0o444)
        f("ro_dir").mkdir(exist_ok=True)
        os.chmod(f("ro_dir"), 0o555)
        f("noread.csv").write_text("0.5\n0.5\n")
        os.chmod(f("noread.csv"), 0o000)
        self.inputs = [
            str(f(name))
            for name in (
                "empty.csv", "binary.csv", "nul.toml", "bom.csv", "uniform100.csv",
                "uniform100.json", "uniform100.npy", "far100.csv", "negative.csv", "nan.csv",
                "inf.json", "wrong_shape.json", "dict.json", "deep.json", "matrix.npy",
                "object.npy", "complex.npy", "fake.npy", "long_line.csv", "huge.csv",
                "big.toml", "good.toml", "good.csv", "unknown_field.toml", "types.toml",
                "dup.toml", "noheader.csv", "ragged.csv", "many_rows.csv", "many_solves.csv",
                "scenario_table.toml", "bad.toml", "utf16.csv", "power.csv", "power.toml",
                "a_dir", "link_to_dir",
                "dangling", "loop_a", "link_good.toml", "link_uniform.csv", "noread.csv",
                "missing.toml",
            )
        ] + ["/dev/null", "/dev/zero", "", "-", "--json", "x" * 5000, "\x00"]  # fmt: skip
        self.pmfs = [p for p in self.inputs if not p.endswith(".toml")]
        self.batches = [p for p in self.inputs if not p.endswith((".npy", ".json"))]
        counter = iter(range(10**9))
        self._counter = counter
        self.fixed_outputs = [
            str(f("readonly.json")), str(f("a_dir")), str(f("ro_dir") / "out.json"),
            str(f("link_to_dir")), str(f("dangling")), str(f("loop_a")), "/dev/full",
            str(f("missing_dir") / "out.json"), "", "-", "--json", str(f("x" * 300)),
            str(f("out.txt")), "/proc/version",
        ]  # fmt: skip

    def output(self, rng: random.Random, suffix: str = ".json") -> str:
        if rng.random() < 0.5:
            return rng.choice(self.fixed_outputs)
        return str(self.root / f"out{next(self._counter)}{suffix}")


# --- API cases ---------------------------------------------------------------------------


def _maybe(rng: random.Random, name: str, share: float = 0.7) -> dict[str, Any]:
    return {name: hostile(rng, name)} if rng.random() < share else {}


def _query(rng: random.Random, *, delta: float = 0.5) -> dict[str, Any]:
    fields = {name: hostile(rng, name) for name in ("k", "alpha", "eps1", "eps2")}
    if rng.random() < delta:
        fields["delta"] = hostile(rng, "delta")
    if rng.random() < 0.3:
        fields["beta"] = hostile(rng, "beta")
    if rng.random() < 0.2:
        fields["power"] = hostile(rng, "power")
        if rng.random() < 0.7:  # --power instead of --beta, mostly; beside it, sometimes
            fields.pop("beta", None)
    if rng.random() < 0.3:
        fields["accounting"] = hostile(rng, "accounting")
    return fields


def _small_validation(rng: random.Random, fields: dict[str, Any]) -> dict[str, Any]:
    """Valid validation sizes stay small (a real k = 10^6 validation runs minutes)."""
    if rng.random() < 0.7:
        fields["k"] = rng.choice([2, 8, 16, 50, 100, "x", math.nan, 0])
    fields["trials"] = rng.choice([1, 5, 20, 0, -1, math.nan, "auto", 10**9, "5", 2.5])
    if fields["trials"] == "auto":
        fields["max_trials"] = rng.choice([200, 199, "x"])
    return fields


def api_case(rng: random.Random, files: Files) -> tuple[str, dict[str, Any]]:
    """(function name, keyword arguments)."""
    kind = rng.choices(
        [
            "plan_document", "compare_document", "solve_document", "power_document",
            "sweep_document", "sweep_csv", "explain_document", "validation_query",
            "validate_document", "batch_request", "calibration_request", "file_pair",
            "simulated_power", "Query", "Query.build", "Setting", "plan", "solve", "sweep",
            "split_of", "spec_count", "checked_simulation_budget", "power_answer",
            "settings_curves", "beta_or_power", "beta_spec_of_power",
        ],
        weights=[14, 6, 6, 6, 6, 2, 3, 6, 3, 4, 3, 3, 2, 6, 6, 2, 6, 4, 6, 1, 2, 1, 4, 2, 2, 2],
    )[0]  # fmt: skip
    if kind == "plan_document":
        args = {"model": hostile(rng, "model"), **_query(rng)}
        for name in ("coin", "constants", "allocation", "cost1", "cost2", "n2", "seed"):
            args |= _maybe(rng, name, 0.3)
        budget = rng.choice([0, 0, 0, 0, 0.5, 2, -1, math.nan, "x", 3601])
        args["simulation_budget"] = budget
        if rng.random() < 0.05:  # --exact: small k, the least trials
            args |= {"exact": True, "trials": rng.choice([50, 49, 0, "x", 10**7])}
            args["k"] = rng.choice([8, 16, 7, 2])
            args["simulation_budget"] = 0
    elif kind == "compare_document":
        args = _query(rng)
    elif kind == "solve_document":
        args = {"model": hostile(rng, "model"), **_query(rng)}
        for name in ("coin", "n1", "n2"):
            args |= _maybe(rng, name, 0.7)
        for name in ("alpha", "eps2", "n1", "n2"):  # leave out some
            if rng.random() < 0.35:
                args.pop(name, None)
    elif kind == "power_document":
        args = {"model": hostile(rng, "model"), **_query(rng)}
        args.pop("beta", None)
        args.pop("power", None)
        args |= {"n1": hostile(rng, "n1"), "n2": hostile(rng, "n2")} | _maybe(rng, "coin", 0.3)
    elif kind in ("sweep_document", "sweep_csv"):
        args = {}
        for name in ("k", "alpha", "eps1", "eps2", "delta", "beta"):
            roll = rng.random()
            if roll < 0.35:
                args[name] = rng.choice(SPECS)
            elif roll < 0.5:
                args[name] = [hostile(rng, name) for _ in range(rng.choice([0, 1, 3, 50]))]
            elif name in ("k", "alpha", "eps1", "eps2") or roll < 0.8:
                args[name] = hostile(rng, name)
        args.setdefault("k", 100)
        args.setdefault("alpha", 0.1)
        args.setdefault("eps1", 1)
        args.setdefault("eps2", 0.5)
        if rng.random() < 0.4:
            args["settings"] = rng.choice(
                [[], None, ["central"], ["central", "x"], "central", [3], SETTINGS, ["central"] * 9]
            )
        args["max_rows"] = rng.choice([20_000, 20_000, None, 0, -1])
        if rng.random() < 0.1:
            args["power"] = rng.choice(["0.8", "0.6:0.9:3", [0.8], math.nan])
        if rng.random() < 0.2:
            args["accounting"] = hostile(rng, "accounting")
    elif kind == "explain_document":
        args = {"model": hostile(rng, "model"), "coin": hostile(rng, "coin")}
        if rng.random() < 0.3:
            args["as_stated"] = rng.choice([True, False, "yes", None])
    elif kind in ("validation_query", "validate_document"):
        args = {"model": hostile(rng, "model"), **_query(rng)}
        for name in ("coin", "n1", "n2", "allocation", "cost1", "cost2"):
            args |= _maybe(rng, name, 0.25)
        if kind == "validate_document":
            args = _small_validation(rng, args)
            args |= _maybe(rng, "seed", 0.3) | _maybe(rng, "path", 0.3)
            if rng.random() < 0.2:
                args["families"] = rng.choice([[], ["uniform"], ["nope"], "uniform", [1], FAMILIES])
    elif kind == "batch_request":
        args = {"file": rng.choice([*files.batches, None, 5, b"x", Path("/")])}
        for name in ("trials", "seed", "workers"):
            args |= _maybe(rng, name, 0.4)
        args |= {"validate": rng.random() < 0.3, "table": rng.random() < 0.3}
    elif kind == "calibration_request":
        args = {
            "setting": rng.choice([None, [], ["central"], ["x"], SETTINGS, "central"]),
            "direct": rng.random() < 0.5,
            "quick": rng.random() < 0.5,
        }
        for stage in ("below_alpha_min", "small_eps", "large_eps", "large_alpha"):
            if rng.random() < 0.2:
                args[stage] = True
        for name in ("trials", "seed", "workers"):
            args |= _maybe(rng, name, 0.5)
    elif kind == "file_pair":
        args = {
            "p_file": rng.choice([*files.pmfs, None]),
            "q_file": rng.choice([*files.pmfs, None]),
            "k": rng.choice([100, 2, 10**6, 50]),
            "normalize": rng.random() < 0.3,
            "alpha": rng.choice([None, 0.1, 0.5, 1.0]),
        }
    elif kind == "simulated_power":
        args = {
            "query": {"model": rng.choice(["central", "central", "local", "shuffle"]),
                      "k": rng.choice([16, 50]), "alpha": 0.5, "eps1": 1, "eps2": 0.5,
                      "delta": 1e-6, "n1": hostile(rng, "n1"), "n2": hostile(rng, "n2")},
            "trials": rng.choice([5, 20, 0, "x", math.nan, "auto", "auto", -1, 2.5]),
            "max_trials": rng.choice([200, 200, 199, "x", 10**7 + 1, math.nan]),
            "seed": hostile(rng, "seed"),
            "path": hostile(rng, "path"),
        }  # fmt: skip
        if args["query"]["model"] != "shuffle":
            del args["query"]["delta"]
        if rng.random() < 0.5:  # sizes a plan fits, so the simulation runs
            args["query"] |= {
                "n1": rng.choice([20_000, 50_000]),
                "n2": rng.choice([20_000, 50_000]),
            }
    elif kind == "power_answer":
        args = {"model": hostile(rng, "model"), **_query(rng)}
        args.pop("beta", None)
        args.pop("power", None)
        args |= {"n1": hostile(rng, "n1"), "n2": hostile(rng, "n2")} | _maybe(rng, "coin", 0.3)
    elif kind == "settings_curves":
        args = {
            name: rng.choice(SPECS) if rng.random() < 0.15 else hostile(rng, name)
            for name in ("k", "alpha", "eps1", "eps2")
        }
        args |= _maybe(rng, "delta", 0.5) | _maybe(rng, "accounting", 0.2)
        args["settings"] = rng.choice(
            [None, None, None, [], ["central"], ["central"], ["x"], SETTINGS, ["central"] * 3,
             "central", [3], ["local-private", "shuffle-public"]]
        )  # fmt: skip
        if rng.random() < 0.6:
            args["users"] = rng.choice(USERS + SPECS[:8] + OBJ_HOSTILE[:8])
    elif kind == "beta_or_power":
        args = {
            "beta": rng.choice([None, None, 1 / 3, "0.3333333333333333", hostile(rng, "beta")]),
            "power": rng.choice([None, hostile(rng, "power"), hostile(rng, "power")]),
            "beta_given": rng.choice([None, None, True, False]),
        }
    elif kind == "beta_spec_of_power":
        args = {
            "beta": rng.choice([None, None, None, 0.1, "0.1:0.2:3"]),
            "power": rng.choice(
                ["0.8", "0.6:0.9:3", "0.6:0.99:5log", [0.8, 0.9], [0.8, "x"], [], "0.5:1:3",
                 "0.8,0.9,1", *POWERS, hostile(rng, "power"), hostile(rng, "power", text=True)]
            ),
        }  # fmt: skip
    elif kind in ("Query", "Query.build"):
        args = {"model": hostile(rng, "model"), "coin": hostile(rng, "coin"), **_query(rng)}
        args.pop("power", None)
    elif kind == "Setting":
        args = {"model": hostile(rng, "model"), "coin": hostile(rng, "coin")}
    elif kind == "plan":
        args = {"model": rng.choice(MODELS), "coin": rng.choice(COINS), **_query(rng)}
        args.pop("power", None)
        args["budget_seconds"] = rng.choice([0, 0, 0, 1, -1, math.nan, "x", None])
        args["split"] = rng.choice(["fewest", "paper", "x", None, 3])
    elif kind == "solve":
        args = {"model": rng.choice(MODELS), "coin": rng.choice(COINS), **_query(rng)}
        args.pop("power", None)
        args["unknown"] = hostile(rng, "unknown")
        args |= {"n1": hostile(rng, "n1"), "n2": hostile(rng, "n2")}
    elif kind == "sweep":
        args = {
            name: rng.choice(SPECS) if rng.random() < 0.4 else hostile(rng, name)
            for name in ("k", "alpha", "eps1", "eps2")
        }
        args["settings"] = rng.choice(
            [[], None, "central", ["central"], [3], ["local-private", "x"], [object()]]
        )
    elif kind == "split_of":
        args = {"rule": hostile(rng, "allocation")}
    elif kind == "spec_count":
        args = {"name": "k", "spec": rng.choice(SPECS + OBJ_HOSTILE)}
    else:
        args = {"value": hostile(rng, "simulation_budget")}
    if rng.random() < 0.4:  # one hostile value among valid ones: the deeper code runs
        names = [name for name in args if name in SAFE and not isinstance(args[name], list)]
        keep = rng.choice(names) if names else None
        for name in names:
            if name != keep:
                args[name] = rng.choice(SAFE[name])
        if isinstance(args.get("model"), str) and args["model"] not in MODELS:
            args["model"] = rng.choice(MODELS)
    return kind, args


def budget_of(kind: str, args: dict[str, Any]) -> float:
    """Seconds a case may take: 10, or a simulation's stated budget plus 10."""
    budget = args.get("simulation_budget", args.get("budget_seconds"))
    extra = 0.0
    if isinstance(budget, (int, float)) and not isinstance(budget, bool) and budget == budget:
        extra = max(0.0, min(float(budget), 3600.0))
    if kind in ("validate_document", "simulated_power") or args.get("exact"):
        extra = max(extra, 60.0)  # a validation's own trial and cell limits bound it
    return SLOW_SECONDS + extra


def run_api_case(kind: str, args: dict[str, Any]) -> None:
    import planner
    import planner.api as api
    from planner.plan import Split

    def query_of(fields: dict[str, Any]) -> Any:
        return planner.Query.build(
            fields.get("model"), fields.get("coin"), fields.get("k"), fields.get("alpha"),
            fields.get("eps1"), fields.get("eps2"), fields.get("delta"),
            fields.get("beta", 1 / 3), fields.get("accounting", "exact"),
        )  # fmt: skip

    documents = ("plan_document", "compare_document", "solve_document", "power_document")
    if kind in (*documents, "sweep_document", "sweep_csv"):
        getattr(api, kind)(**args)
    elif kind == "explain_document":
        api.explain_document(**args)
    elif kind == "validation_query":
        api.validation_query(**args)
    elif kind == "validate_document":
        api.validate_document(**args)
    elif kind == "batch_request":
        request = api.batch_request(**args)
        if not request.validate and len(request.scenarios) <= 50:
            api.batch_rows(request)
    elif kind == "calibration_request":
        api.calibration_request(**args)
    elif kind == "file_pair":
        api.file_pair(**args)
    elif kind == "simulated_power":
        answer = api.power_answer(**args["query"])
        api.simulated_power(
            answer,
            trials=args["trials"],
            seed=args["seed"],
            path=args["path"],
            max_trials=args.get("max_trials", 200),
        )
    elif kind == "power_answer":
        api.power_answer(**args)
    elif kind == "settings_curves":
        from planner.power import settings_curves

        settings_curves(args["settings"], **{n: v for n, v in args.items() if n != "settings"})
    elif kind == "beta_or_power":
        from planner.inputs import beta_or_power

        beta_or_power(args["beta"], args["power"], args["beta_given"])
    elif kind == "beta_spec_of_power":
        from planner.power import beta_spec_of_power

        beta_spec_of_power(args["beta"], args["power"])
    elif kind == "Query":
        planner.Query(
            planner.Setting(args["model"], args["coin"]),
            k=args.get("k"), alpha=args.get("alpha"), eps1=args.get("eps1"),
            eps2=args.get("eps2"), delta=args.get("delta"), beta=args.get("beta", 1 / 3),
        )  # fmt: skip
    elif kind == "Query.build":
        query_of(args)
    elif kind == "Setting":
        planner.Setting(args["model"], args["coin"])
    elif kind == "plan":
        split = args["split"]
        planner.plan(
            query_of(args),
            split=Split(split) if split in ("fewest", "paper") else split,
            budget_seconds=args["budget_seconds"],
        )
    elif kind == "solve":
        unknown = args["unknown"]
        known = {u.value for u in planner.Unknown}
        planner.solve(
            query_of(args),
            planner.Unknown(unknown) if isinstance(unknown, str) and unknown in known else unknown,
            n1=args["n1"],
            n2=args["n2"],
        )
    elif kind == "sweep":
        planner.sweep(args["settings"], **{n: args[n] for n in ("k", "alpha", "eps1", "eps2")})
    elif kind == "split_of":
        api.split_of(args["rule"])
    elif kind == "spec_count":
        api.spec_count(args["name"], args["spec"])
    else:
        api.checked_simulation_budget(args["value"])


def _api_reproducer(kind: str, args: dict[str, Any]) -> str:
    return f"run_api_case({kind!r}, {_short_repr(args)})  # benchmarks/hostile_run.py"


def _short_repr(value: Any, limit: int = 600) -> str:
    try:
        text = repr(value)
    except Exception:  # an int too long to print
        text = "<unprintable>"
    return text if len(text) <= limit else text[: limit - 20] + "…" + text[-20:]


def _api_child(cases: list[tuple[int, str, dict[str, Any]]], log: Path) -> None:
    """In a forked child: run the cases, one JSON line as each starts and ends."""
    from planner.inputs import InputError

    with contextlib.suppress(ValueError, OSError):
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP, MEMORY_CAP))
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    with open(log, "a", encoding="utf-8") as out:
        for index, kind, args in cases:
            out.write(json.dumps({"start": index}) + "\n")
            out.flush()
            started, cpu = time.perf_counter(), time.process_time()
            error = None
            outcome = "ok"
            try:
                run_api_case(kind, args)
            except InputError as refused:
                outcome = "input_error"
                if "\n" in str(refused):
                    error = f"InputError of several lines: {str(refused)[:300]!r}"
            except BaseException as exc:
                outcome = "exception"
                error = "".join(traceback.format_exception(exc))[-2500:]
            seconds = time.perf_counter() - started
            record = {"end": index, "outcome": outcome, "seconds": seconds, "error": error,
                      "cpu_seconds": time.process_time() - cpu}  # fmt: skip
            out.write(json.dumps(record) + "\n")
            out.flush()
    os._exit(0)


def run_api(cases: list[tuple[str, dict[str, Any]]], workdir: Path, workers: int) -> list[dict]:
    """Run the API cases in forked children (chunks), killing any case stuck 120 s."""
    import planner.api
    import planner.validate

    with contextlib.suppress(Exception):
        planner.api.plan_document(model="central", k=100, alpha=0.1, eps1=1, eps2=0.5)
    results: dict[int, dict] = {}
    chunk = 250
    pending = [list(range(i, min(i + chunk, len(cases)))) for i in range(0, len(cases), chunk)]
    running: dict[int, tuple[list[int], Path, float]] = {}
    serial = 0
    while pending or running:
        while pending and len(running) < workers:
            indices = pending.pop(0)
            serial += 1
            log = workdir / f"api{serial}.jsonl"
            log.write_text("")
            pid = os.fork()
            if pid == 0:
                os.chdir(workdir)
                _api_child([(i, *cases[i]) for i in indices], log)
            running[pid] = (indices, log, time.perf_counter())
        time.sleep(0.05)
        for pid, (indices, log, _) in list(running.items()):
            done, status = os.waitpid(pid, os.WNOHANG)
            text = log.read_text("utf-8")
            whole = text[: text.rfind("\n") + 1]  # a line still being written waits
            lines = [json.loads(x) for x in whole.splitlines() if x.strip()]
            ended = {x["end"]: x for x in lines if "end" in x}
            starts = [x["start"] for x in lines if "start" in x]
            current = starts[-1] if starts and starts[-1] not in ended else None
            stuck = current is not None and time.perf_counter() - log.stat().st_mtime > 120
            if done == 0 and not stuck:
                continue
            if done == 0:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
            results.update(ended)
            if current is not None:  # killed, crashed, or out of memory mid-case
                how = "killed after 120 s" if stuck else f"child died (status {status})"
                results[current] = {"end": current, "outcome": "exception", "seconds": 120.0,
                                    "cpu_seconds": 120.0, "error": how}  # fmt: skip
            left = [i for i in indices if i not in results]
            if left:
                pending.insert(0, left)
            del running[pid]
    records = []
    for index, (kind, args) in enumerate(cases):
        result = results[index]
        defect = result["error"]
        allowed = budget_of(kind, args)
        # CPU time: the machine is shared, so wall time measures the neighbours' load too;
        # a wall time over 3× the budget is a defect whatever the CPU time (a wait, a hang)
        if defect is None and (result["cpu_seconds"] > allowed or result["seconds"] > 3 * allowed):
            defect = (f"ran {result['seconds']:.1f} s ({result['cpu_seconds']:.1f} s CPU; "
                      f"allowed {allowed:g} s)")  # fmt: skip
        records.append({"index": index, "kind": kind, "outcome": result["outcome"],
                        "seconds": result["seconds"], "cpu_seconds": result["cpu_seconds"],
                        "defect": defect,
                        "reproducer": _api_reproducer(kind, args)})  # fmt: skip
    return records


# --- CLI cases ---------------------------------------------------------------------------


CALM: dict[str, list[str]] = {
    "k": ["100", "1000", "200"], "alpha": ["0.1", "0.2", "0.5"], "eps1": ["1", "0.5"],
    "eps2": ["0.25", "0.5", "0.1"], "delta": ["1e-6"], "beta": ["0.1", "0.2"],
    "power": ["0.8"], "n1": ["5000", "20000"], "n2": ["5000", "400000"], "seed": ["0", "7"],
    "model": MODELS, "coin": COINS, "accounting": ["exact", "paper"],
    "allocation": ["fewest", "paper", "cost", "fixed-n2"], "cost1": ["1", "2"],
    "cost2": ["1", "3"], "constants": ["calibrated", "proof", "order"],
    "path": ["fast", "auto"],
}  # fmt: skip
"""Valid command-line values: a calm case has one hostile value among them."""
_target: list[str | None] = [None]  # the one hostile parameter of a calm CLI case


def _opt(rng: random.Random, flag: str, name: str, share: float = 0.8) -> list[str]:
    if rng.random() >= share:
        return []
    if _target[0] is not None and name != _target[0] and name in CALM:
        return [flag, rng.choice(CALM[name])]
    return [flag, hostile(rng, name, text=True)]


def cli_case(rng: random.Random, files: Files) -> list[str]:
    command = rng.choices(
        ["plan", "compare", "solve", "power", "sweep", "plot", "explain", "validate", "batch",
         "calibrate", "serve", "other"],
        weights=[16, 6, 8, 7, 9, 4, 3, 9, 9, 3, 3, 3],
    )[0]  # fmt: skip
    _target[0] = rng.choice(list(CALM)) if rng.random() < 0.5 else None
    query = []
    for flag, name in (("-k", "k"), ("--alpha", "alpha"), ("--eps1", "eps1"), ("--eps2", "eps2")):
        query += _opt(rng, flag, name, 0.9)
    query += _opt(rng, "--delta", "delta", 0.5) + _opt(rng, "--beta", "beta", 0.25)
    power = _opt(rng, "--power", "power", 0.15)
    if power and "--beta" in query and rng.random() < 0.7:  # --power instead of --beta, mostly
        query = query[: query.index("--beta")] + query[query.index("--beta") + 2 :]
    query += power + _opt(rng, "--accounting", "accounting", 0.2)
    model = _opt(rng, "--model", "model", 0.92) + _opt(rng, "--coin", "coin", 0.3)
    if command == "plan":
        args = ["plan", *model, *query]
        args += _opt(rng, "--allocation", "allocation", 0.3) + _opt(rng, "--cost1", "cost1", 0.2)
        args += _opt(rng, "--cost2", "cost2", 0.2) + _opt(rng, "--n2", "n2", 0.2)
        args += _opt(rng, "--constants", "constants", 0.2)
        args += ["--simulation-budget", rng.choice(["0", "0", "0", "1", "-1", "nan", "1e9"])]
        if rng.random() < 0.05:
            args += ["--exact", "--trials", rng.choice(["50", "0", "1e9", "x"])]
            if "-k" in args:
                args[args.index("-k") + 1] = rng.choice(["8", "16", "7"])
        args += ["--json"] if rng.random() < 0.4 else []
    elif command == "compare":
        args = ["compare", *query] + (["--json"] if rng.random() < 0.4 else [])
    elif command == "solve":
        args = ["solve", *model, *query]
        args += _opt(rng, "--n1", "n1", 0.6) + _opt(rng, "--n2", "n2", 0.6)
        args += ["--json"] if rng.random() < 0.3 else []
        args = [a for i, a in enumerate(args) if not (rng.random() < 0.1 and a == "--alpha")]
    elif command == "power":
        if rng.random() < 0.9:  # power solves for β: neither --beta nor --power, mostly
            query = [a for i, a in enumerate(query)
                     if a not in ("--beta", "--power") and (i == 0 or query[i - 1] not in ("--beta", "--power"))]  # fmt: skip
        args = [
            "power",
            *model,
            *query,
            *_opt(rng, "--n1", "n1", 0.9),
            *_opt(rng, "--n2", "n2", 0.9),
        ]
        if rng.random() < 0.12:
            args += ["--simulate", "--trials", rng.choice(["5", "0", "x", "auto", "-1", "2.5"])]
            args += ["--max-trials", rng.choice(["200", "200", "199", "x", "1e30", "nan"])]
            args += _opt(rng, "--seed", "seed", 0.5) + _opt(rng, "--path", "path", 0.3)
            if rng.random() < 0.5:  # sizes a plan fits: the simulation runs (small k)
                for flag, value in (("-k", rng.choice(["16", "50"])), ("--n1", "50000"),
                                    ("--n2", "50000"), ("--alpha", "0.5")):  # fmt: skip
                    if flag in args:
                        args[args.index(flag) + 1] = value
        elif rng.random() < 0.08:  # a --simulate option without --simulate
            args += [rng.choice(["--trials", "--max-trials", "--seed", "--path"]), "5"]
        if rng.random() < 0.08:  # power solves for β: --beta is no option of it
            args += [rng.choice(["--beta", "--allocation"]), rng.choice(["0.1", "fewest"])]
        args += ["--json"] if rng.random() < 0.3 else []
    elif command in ("sweep", "plot"):
        args = [command]
        for flag, name in (("-k", "k"), ("--alpha", "alpha"), ("--eps1", "eps1"), ("--eps2", "eps2"),
                           ("--delta", "delta"), ("--beta", "beta")):  # fmt: skip
            if rng.random() < (0.9 if name not in ("delta", "beta") else 0.4):
                args += [
                    flag,
                    rng.choice(SPECS) if rng.random() < 0.5 else hostile(rng, name, text=True),
                ]
        plot_power = command == "plot" and rng.random() < 0.4
        if plot_power and rng.random() < 0.7:  # one value of each: the curves are drawn
            for flag, name in (("-k", "k"), ("--alpha", "alpha"), ("--eps1", "eps1"),
                               ("--eps2", "eps2")):  # fmt: skip
                if flag in args:
                    args[args.index(flag) + 1] = (
                        hostile(rng, name, text=True)
                        if _target[0] == name
                        else rng.choice(CALM[name])
                    )
            if "--beta" in args and rng.random() < 0.8:  # --beta beside --power: refused
                position = args.index("--beta")
                args = args[:position] + args[position + 2 :]
        for _ in range(rng.choice([0, 0, 1, 2])):
            args += ["-s", rng.choice([*SETTINGS, "x", "", "--json"])]
        if command == "sweep":
            args += ["--format", rng.choice(["table", "csv", "json", "xml", ""])]
            if rng.random() < 0.3:
                args += ["-o", files.output(rng, ".csv")]
            if rng.random() < 0.15:  # --power (specs of 1 − β) instead of --beta, or beside it
                args += ["--power", rng.choice([*POWERS, *SPECS[:10], "0.6:0.9:3", "0.8,0.9"])]
                if "--beta" in args and rng.random() < 0.7:
                    position = args.index("--beta")
                    args = args[:position] + args[position + 2 :]
        else:
            args += ["-o", files.output(rng, rng.choice([".png", ".svg", ".pdf", ""]))]
            if plot_power:
                args += ["--power"] + (["--users", rng.choice(USERS)] if rng.random() < 0.6 else [])
            elif rng.random() < 0.05:  # --users without --power
                args += ["--users", rng.choice(USERS)]
    elif command == "explain":
        args = ["explain", *model] + [
            f for f in ("--latex", "--as-stated", "--json") if rng.random() < 0.4
        ]
    elif command == "validate":
        args = ["validate", *model, *query]
        if "-k" in args:
            args[args.index("-k") + 1] = rng.choice(["16", "50", "100", "0", "nan", "1e12"])
        args += ["--trials", rng.choice(["1", "5", "20", "0", "-1", "nan", "1e30", "x"])]
        args += (
            _opt(rng, "--seed", "seed", 0.3)
            + _opt(rng, "--n1", "n1", 0.3)
            + _opt(rng, "--n2", "n2", 0.3)
        )
        args += _opt(rng, "--path", "path", 0.3)
        if rng.random() < 0.3:
            args += ["--p-file", rng.choice(files.pmfs), "--q-file", rng.choice(files.pmfs)]
            args += ["--normalize"] if rng.random() < 0.3 else []
        if rng.random() < 0.2:
            args += ["--family", rng.choice([*FAMILIES, "nope", ""])]
        if rng.random() < 0.3:
            args += ["-o", files.output(rng)]
        args += ["--simulation-budget", "0"] + (["--json"] if rng.random() < 0.3 else [])
    elif command == "batch":
        args = ["batch", rng.choice(files.batches)]
        args += (
            ["--format", rng.choice(["table", "csv", "json", "yaml"])] if rng.random() < 0.7 else []
        )
        if rng.random() < 0.3:
            args += ["-o", files.output(rng, ".csv")]
        if rng.random() < 0.15:
            args += [
                "--validate",
                "--trials",
                rng.choice(["5", "0", "x"]),
                "--workers",
                rng.choice(["1", "0", "1e9"]),
            ]
        args += _opt(rng, "--seed", "seed", 0.2)
    elif command == "calibrate":  # always one bad option: a real calibration takes minutes
        bad = rng.choice(["trials", "workers", "setting", "output", "stage"])
        args = ["calibrate", "--quick"]
        if bad == "trials":
            args += ["--trials", rng.choice(["0", "nan", "1e30", "-5", "9"])]
        elif bad == "workers":
            args += ["--workers", rng.choice(["0", "1e9", "x", "257"])]
        elif bad == "setting":
            args += ["--setting", rng.choice(["x", "", "--quick"])]
        elif bad == "stage":
            args += ["--small-eps"]
        else:  # outputs refused before anything runs (a dangling link is written through)
            # (root writes into the 0555 ro_dir: /proc refuses it)
            refused = ["readonly.json", "a_dir", "/proc/out.json", "link_to_dir", "loop_a"]
            args += ["-o", str(files.root / rng.choice(refused))]
    elif command == "serve":  # always refused before it binds
        bad = rng.choice(["host", "port", "token", "db", "jobs", "time", "workers", "workers"])
        args = ["serve", "--port", "1"] if bad != "port" else ["serve"]
        if bad == "host":
            args += ["--host", rng.choice(["0.0.0.0", "example.invalid", "", "::", "256.1.1.1"])]
        elif bad == "port":
            args += ["--port", rng.choice(["-1", "65536", "x", "nan", "1e9"])]
        elif bad == "token":
            args += ["--host", "0.0.0.0", "--token", rng.choice(["short", "", "x" * 15])]
        elif bad == "db":
            # (root writes into the 0555 ro_dir, and would serve on port 1: /proc refuses it)
            read_only = (
                "/proc/x.sqlite3" if os.geteuid() == 0 else str(files.root / "ro_dir" / "x.sqlite3")
            )
            args += ["--db", rng.choice([str(files.root / "a_dir"), read_only, "/dev/null", str(files.root / "binary.csv")])]  # fmt: skip
        elif bad == "jobs":
            args += ["--jobs", rng.choice(["0", "-1", "1e9", "x"])]
        elif bad == "workers":  # HTTP processes: 1 to 64
            args += ["--workers", rng.choice(["0", "-1", "65", "1e9", "x", "nan", "", "2.5"])]
            if rng.random() < 0.3:  # beside a scheduler (its client lives in one process)
                args += ["--scheduler", rng.choice(["tcp://", "nonsense", "tcp://127.0.0.1:0"])]
        else:
            args += ["--time-limit", rng.choice(["0", "-1", "nan", "1e99"])]
    else:
        args = rng.choice([[], ["--version"], ["--help"], ["nonsense"], ["plan", "--bogus"],
                           [rng.choice(TEXT_HOSTILE)], ["sweep", "--k"], ["plan", "--model"],
                           ["--", "plan"], ["plan", "--help", "--json"], ["-k", "5"]])  # fmt: skip
    if rng.random() < 0.08 and len(args) > 2:  # repeat an option, or drop a token
        position = rng.randrange(1, len(args))
        args = args + args[1:3] if rng.random() < 0.5 else args[:position] + args[position + 1 :]
    return args


def _cli_limits() -> None:
    with contextlib.suppress(ValueError, OSError):
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP, MEMORY_CAP))


def run_cli_case(args: list[str], workdir: Path, timeout: float) -> dict[str, Any]:
    args = [arg.replace("\x00", "") for arg in args]  # argv cannot hold a NUL
    started = time.perf_counter()
    env = {**os.environ, "COLUMNS": "120", "PYTHONPATH": str(ROOT), "PYTHONHASHSEED": "0"}
    env.pop("PLANNER_TOKEN", None)
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as errors:
        child = subprocess.Popen(
            [sys.executable, "-m", "planner", *args], cwd=workdir, env=env, stdout=out,
            stderr=errors, stdin=subprocess.DEVNULL, preexec_fn=_cli_limits,
        )  # fmt: skip
        timer = threading.Timer(timeout, child.kill)
        timer.start()
        _, status, usage = os.wait4(child.pid, 0)  # its CPU time, not only the wall's
        timer.cancel()
        child.returncode = code = os.waitstatus_to_exitcode(status)
        errors.seek(0)
        err = errors.read().decode("utf-8", "replace")
    if code == -signal.SIGKILL:
        code = None
    seconds = time.perf_counter() - started
    cpu = usage.ru_utime + usage.ru_stime
    lines = [line for line in err.splitlines() if line.strip()]
    defect = None
    if "Traceback (most recent call last)" in err:
        defect = "traceback: " + err[-2000:]
    elif code is None:
        defect = f"killed at the {timeout:g} s timeout"
    elif code not in EXIT_CODES:
        defect = f"exit code {code}: {err[-600:]!r}"
    elif code == 2 and not (len(lines) == 1 and lines[0].startswith("error: ")):
        defect = f"exit 2 without exactly one error line: {err[:600]!r}"
    elif code == 0 and _refused_output(args):
        defect = f"exit 0 with an output that must be refused: {_refused_output(args)}"
    elif cpu > _cli_budget(args) or seconds > 3 * _cli_budget(args):
        defect = f"ran {seconds:.1f} s ({cpu:.1f} s CPU)"
    command = "python -m planner " + " ".join(_quote(a) for a in args)
    return {"args": args, "code": code, "seconds": seconds, "cpu_seconds": cpu, "defect": defect,
            "reproducer": command[:2000]}  # fmt: skip


REFUSED_OUTPUTS = ("/loop_a", "/a_dir", "/link_to_dir", "/readonly.json", "/proc/version",
                   "/proc/out.json", "/missing_dir/out.json")  # fmt: skip
"""Outputs every command must refuse (exit 2), even run as root."""


def _refused_output(args: list[str]) -> str | None:
    for flag, value in itertools.pairwise(args):
        if flag in ("-o", "--output") and value.endswith(REFUSED_OUTPUTS):
            return value
    return None


def _cli_budget(args: list[str]) -> float:
    budget = 0.0
    if "--simulation-budget" in args:
        with contextlib.suppress(ValueError, IndexError):
            value = float(args[args.index("--simulation-budget") + 1])
            budget = value if 0 <= value <= 3600 else 0.0
    if (args and args[0] in ("validate", "batch")) or "--exact" in args or "--simulate" in args:
        budget = max(budget, 60.0)
    return SLOW_SECONDS + 2.0 + budget  # + the interpreter's start


def _quote(text: str) -> str:
    import shlex

    shown = text if len(text) < 120 else text[:60] + "…" + text[-20:]
    return shlex.quote(shown)


def run_cli(cases: list[list[str]], workdir: Path, workers: int) -> list[dict]:
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(workers) as pool:
        return list(pool.map(lambda a: run_cli_case(a, workdir, 120.0), cases))


# --- HTTP cases --------------------------------------------------------------------------

JSON_HOSTILE: list[Any] = [
    None, True, False, 0, -1, 1e308, -1e308, 5e-324, 10**40, -(10**40), 10**30, [], [1, 2],
    {}, {"a": 1}, "", " ", "nan", "NaN", "inf", "-inf", "Infinity", "1e400", "abc", "١٢",
    "😀", "\u0000", "x" * 201, "9" * 199, "1e-320", [[[[]]]], [None], ["1"] * 1001, 1.5,
    "--k", "null",
]  # fmt: skip
VALID_BODY: dict[str, dict[str, Any]] = {
    "plan": {"model": "shuffle", "k": 1000, "alpha": 0.1, "eps1": 1, "eps2": 0.25, "delta": 1e-6},
    "compare": {"k": 1000, "alpha": 0.1, "eps1": 1, "eps2": 0.25, "delta": 1e-6},
    "solve": {"model": "central", "k": 1000, "alpha": 0.1, "eps1": 1, "n1": 10000, "n2": 400000},
    "power": {"model": "central", "k": 200, "alpha": 0.1, "eps1": 0.5, "eps2": 0.1, "n1": 5000,
              "n2": 5000},
    "sweep": {"k": "16:4096:5log", "alpha": 0.1, "eps1": 1, "eps2": [0.25, 0.5], "delta": 1e-6},
    "validations": {"model": "central", "k": 16, "alpha": 0.5, "eps1": 1, "eps2": 0.5,
                    "trials": 5, "seed": 1},
}  # fmt: skip
ROUTE_FIELDS: dict[str, list[str]] = {
    "plan": ["model", "coin", "k", "alpha", "eps1", "eps2", "delta", "beta", "power",
             "accounting", "constants", "allocation", "cost1", "cost2", "n2"],
    "compare": ["k", "alpha", "eps1", "eps2", "delta", "beta", "power", "accounting"],
    "solve": ["model", "coin", "k", "alpha", "eps1", "eps2", "n1", "n2", "delta", "beta",
              "power", "accounting"],
    "power": ["model", "coin", "k", "alpha", "eps1", "eps2", "n1", "n2", "delta", "accounting",
              "n1", "n2", "model", "beta", "power"],
    "sweep": ["settings", "k", "alpha", "eps1", "eps2", "delta", "beta", "accounting", "power"],
    "validations": ["kind", "model", "coin", "k", "alpha", "eps1", "eps2", "delta", "beta",
                    "accounting", "n1", "n2", "trials", "max_trials", "seed", "path",
                    "families", "allocation", "cost1", "cost2", "simulation_budget", "power"],
}  # fmt: skip


def _json_value(rng: random.Random, name: str) -> Any:
    roll = rng.random()
    if name == "kind":
        return rng.choice(["validate", "exact", "plan", "x", None, 3])
    if name in ("settings", "families"):
        return rng.choice([None, [], ["central"], ["x"], "central", SETTINGS, [1], ["a"] * 40])
    if roll < 0.4 and name in EDGES:
        value = rng.choice(EDGES[name])
        return value if isinstance(value, (int, str)) or math.isfinite(value) else str(value)
    if roll < 0.5 and name in SAFE:
        return rng.choice(SAFE[name])
    if roll < 0.6 and name in ("k", "alpha", "eps1", "eps2", "delta", "beta"):
        return rng.choice(SPECS)
    return rng.choice(JSON_HOSTILE)


def http_case(rng: random.Random, job_ids: list[str]) -> dict[str, Any]:
    """A request: method, path, headers, body (bytes) and a label."""
    roll = rng.random()
    headers: dict[str, str] = {"Content-Type": "application/json"}
    if roll < 0.62:
        route = rng.choice(list(VALID_BODY))
        body: dict[str, Any] = dict(VALID_BODY[route])
        for _ in range(rng.choice([1, 1, 2, 3])):
            name = rng.choice(ROUTE_FIELDS[route])
            body[name] = _json_value(rng, name)
        if rng.random() < 0.1:
            body.pop(rng.choice(list(body)), None)
        if rng.random() < 0.08:
            body[rng.choice(["zzz", "K", "eps", "__proto__", "é", ""])] = 1
        if route == "validations" and body.get("trials") in (None, "auto"):
            body["trials"] = 5  # a valid job stays small
            if isinstance(body.get("k"), int) and body["k"] > 1000:
                body["k"] = 100
        if route == "validations" and body.get("kind") == "exact":
            body["trials"] = rng.choice([50, 0, "x"])
        if route == "validations" and body.get("kind") == "plan":
            body["simulation_budget"] = rng.choice([0, 1, -1, 601, "x"])
        text = json.dumps(body, allow_nan=True)
        if rng.random() < 0.05:  # a field named twice
            name = rng.choice(list(body) or ["k"])
            text = text[:-1] + f', "{name}": {json.dumps(_json_value(rng, name))}' + "}"
        if route == "sweep" and rng.random() < 0.2:
            headers["Accept"] = rng.choice(["text/csv", "*/*", "application/xml", "x" * 300])
        if rng.random() < 0.15:  # the fast path's content types, and ones it passes on
            headers["Content-Type"] = rng.choice(
                ["application/json; charset=utf-8", "APPLICATION/JSON", "application/json;charset=UTF-8",
                 "application/json; charset=latin-1", "text/json", "application/json, text/plain"]
            )  # fmt: skip
        path = f"/v1/{route}"
        if rng.random() < 0.05:  # a query string: the FastAPI route answers, not the fast path
            path += rng.choice(["?", "?k=5", "?token=x", "?model=local&model=central", "?%ff"])
        return {"method": "POST", "path": path, "headers": headers,
                "body": text.encode(), "label": f"POST /v1/{route}"}  # fmt: skip
    if roll < 0.72:  # GET /v1/power, /v1/explain, /v1/validations, / with query strings
        path = rng.choice(["/v1/power", "/v1/explain", "/v1/validations", "/"])
        if path == "/v1/power":
            fields = {k: str(v) for k, v in VALID_BODY["power"].items()}
            names = ROUTE_FIELDS["power"]
        elif path == "/v1/explain":
            fields, names = {"model": "shuffle"}, ["model", "coin", "as_stated", "power"]
        elif path == "/v1/validations":
            fields, names = {}, ["limit", "offset", "status"]
        else:
            fields = {
                "setting": "central",
                "k": "1000",
                "alpha": "0.1",
                "eps1": "1",
                "eps2": "0.25",
            }
            names = ["setting", "k", "alpha", "eps1", "eps2", "delta", "beta", "allocation",
                     "cost1", "cost2", "n2", "token", "bta", "power"]  # fmt: skip
        pairs = list(fields.items())
        for _ in range(rng.choice([1, 2, 3])):
            name = rng.choice(names)
            value = _json_value(rng, name)
            pair = (name, value if isinstance(value, str) else json.dumps(value))
            if name in fields and rng.random() < 0.8:  # in place: the route reads it
                pairs = [pair if n == name else (n, v) for n, v in pairs]
            else:  # beside: a name given twice, or one the route does not take
                pairs.append(pair)
        if rng.random() < 0.05:
            pairs += [("p", "1")] * 70
        if rng.random() < 0.05:
            pairs.append(("k", "9" * 5000))
        from urllib.parse import quote

        query = "&".join(f"{quote(n, safe='')}={quote(v, safe='')}" for n, v in pairs)
        return {"method": "GET", "path": f"{path}?{query}", "headers": {}, "body": b"",
                "label": f"GET {path}"}  # fmt: skip
    if roll < 0.8:  # jobs by id
        known = rng.choice(job_ids) if job_ids else "0"
        job = rng.choice([known, known, "0", "-1", "x" * 300, "..%2F..%2Fetc%2Fpasswd", "%00",
                          "é", "1e9", "9" * 40, "%20", "null"])  # fmt: skip
        method, suffix = rng.choice([("GET", ""), ("DELETE", ""), ("POST", "/rerun"),
                                     ("PUT", ""), ("GET", "/rerun")])  # fmt: skip
        base = rng.choice(["/v1/validations/", "/jobs/"]) if method == "GET" else "/v1/validations/"
        return {"method": method, "path": base + job + suffix, "headers": {}, "body": b"",
                "label": f"{method} {base}{{id}}{suffix}"}  # fmt: skip
    if roll < 0.93:  # malformed bodies and headers
        route = rng.choice(list(VALID_BODY))
        kind = rng.choice(["empty", "not json", "array", "string", "huge", "deep", "nan",
                           "form", "no type", "utf16", "huge number", "bom", "gzip", "many keys"])  # fmt: skip
        body_bytes = {
            "empty": b"",
            "not json": b"{model: central",
            "array": b"[1, 2, 3]",
            "string": b'"central"',
            "huge": b'{"k": "' + b"9" * 70_000 + b'"}',
            "deep": b"[" * 30_000 + b"]" * 30_000,
            "nan": b'{"model": "central", "k": NaN, "alpha": Infinity, "eps1": -Infinity, "eps2": 1}',
            "form": b"model=central&k=100",
            "no type": json.dumps(VALID_BODY[route]).encode(),
            "utf16": json.dumps(VALID_BODY[route]).encode("utf-16"),
            "huge number": b'{"model": "central", "k": 1' + b"0" * 5000 + b', "alpha": 0.1, "eps1": 1, "eps2": 1}',
            "bom": b"\xef\xbb\xbf" + json.dumps(VALID_BODY[route]).encode(),
            "gzip": json.dumps(VALID_BODY[route]).encode(),
            "many keys": json.dumps({f"f{i}": i for i in range(3000)}).encode(),
        }[kind]  # fmt: skip
        if kind == "form":
            headers = {"Content-Type": "application/x-www-form-urlencoded"}
        elif kind == "no type":
            headers = {}
        elif kind == "gzip":
            headers["Content-Encoding"] = "gzip"
        return {"method": "POST", "path": f"/v1/{route}", "headers": headers, "body": body_bytes,
                "label": f"POST /v1/{route} ({kind})"}  # fmt: skip
    # odd paths and methods
    method, path = rng.choice([
        ("GET", "/v1/plan"), ("PUT", "/v1/plan"), ("PATCH", "/v1/sweep"), ("GET", "/v1/nope"),
        ("GET", "/static/../../etc/passwd"), ("GET", "/static/%2e%2e%2fapp.py"),
        ("GET", "/static/calculator.css"), ("GET", "/static/" + "x" * 3000), ("GET", "/docs"),
        ("GET", "/openapi.json"), ("GET", "/docs/assets/..%2F..%2Fsecret"), ("OPTIONS", "/v1/plan"),
        ("HEAD", "/v1/health"), ("GET", "/v1/version"), ("GET", "/" + "é" * 100),
        ("DELETE", "/v1/validations"), ("GET", "/v1/explain"), ("GET", "/v1/power"),
        ("GET", "/?" + "k=1&" * 64), ("GET", "/v1/health?" + "x" * 5000),
    ])  # fmt: skip
    return {
        "method": method,
        "path": path,
        "headers": {},
        "body": b"",
        "label": f"{method} {path[:40]}",
    }


def _raw_request(port: int, case: dict[str, Any], timeout: float) -> tuple[int, bytes, float]:
    """Send one request over a fresh socket; (status, body, seconds); status 0: no answer."""
    started = time.perf_counter()
    head = [f"{case['method']} {case['path']} HTTP/1.1", f"Host: 127.0.0.1:{port}",
            "Connection: close"]  # fmt: skip
    head += [f"{name}: {value}" for name, value in case["headers"].items()]
    if case["body"] or case["method"] in ("POST", "PUT", "PATCH"):
        head.append(f"Content-Length: {len(case['body'])}")
    data = ("\r\n".join(head) + "\r\n\r\n").encode("utf-8", "surrogateescape") + case["body"]
    chunks = []
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as conn:
        conn.settimeout(timeout)
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            conn.sendall(data)
        try:
            while True:
                chunk = conn.recv(65536)
                if not chunk:
                    break
                chunks.append(chunk)
        except TimeoutError:
            pass
        except ConnectionResetError:
            pass
    raw = b"".join(chunks)
    seconds = time.perf_counter() - started
    try:
        status = int(raw.split(b" ", 2)[1])
    except (IndexError, ValueError):
        status = 0
    body = raw.split(b"\r\n\r\n", 1)[-1]
    return status, body, seconds


class HealthProbe(threading.Thread):
    """GET /v1/health every 0.2 s on a keep-alive connection: the event loop's latency."""

    def __init__(self, port: int) -> None:
        super().__init__(daemon=True)
        self.port = port
        self.stop = threading.Event()
        self.latencies: list[float] = []
        self.stalls: list[dict[str, Any]] = []

    def run(self) -> None:
        import http.client

        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        while not self.stop.is_set():
            started = time.perf_counter()
            try:
                conn.request("GET", "/v1/health")
                response = conn.getresponse()
                response.read()
                status = response.status
            except Exception as exc:
                status = f"{type(exc).__name__}"
                conn.close()
                conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
            seconds = time.perf_counter() - started
            self.latencies.append(seconds)
            if seconds > STALL_SECONDS or status != 200:
                load = os.getloadavg()[0]
                self.stalls.append({"at": time.time(), "seconds": seconds, "status": status,
                                    "load_average": load})  # fmt: skip
            self.stop.wait(0.2)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def run_http(
    cases_count: int, rng: random.Random, workdir: Path, workers: int, http_workers: int = 1
) -> dict[str, Any]:
    """The HTTP cases against one ``planner serve --workers HTTP_WORKERS`` in ``workdir``
    (its log and jobs database), ``workers`` clients at once."""
    from concurrent.futures import ThreadPoolExecutor

    workdir.mkdir(parents=True, exist_ok=True)
    port = _free_port()
    log = open(workdir / "server.log", "wb")  # noqa: SIM115
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("PLANNER_TOKEN", None)
    server = subprocess.Popen(
        [sys.executable, "-m", "planner", "serve", "--host", "127.0.0.1", "--port", str(port),
         "--db", str(workdir / "jobs.sqlite3"), "--jobs", "1", "--time-limit", "60",
         "--workers", str(http_workers)],
        cwd=workdir, env=env, stdout=log, stderr=subprocess.STDOUT,
    )  # fmt: skip
    try:
        deadline = time.time() + 60
        while time.time() < deadline:
            with contextlib.suppress(OSError):
                status, _, _ = _raw_request(port, {"method": "GET", "path": "/v1/health",
                                                   "headers": {}, "body": b""}, 5)  # fmt: skip
                if status == 200:
                    break
            time.sleep(0.3)
        else:
            raise RuntimeError("the server did not start: " + (workdir / "server.log").read_text())
        probe = HealthProbe(port)
        probe.start()
        job_ids: list[str] = []
        records: list[dict[str, Any]] = []
        lock = threading.Lock()

        def one(case: dict[str, Any]) -> dict[str, Any]:
            began = time.time()
            try:
                status, body, seconds = _raw_request(port, case, 60.0)
            except OSError as exc:
                status, body, seconds = 0, str(exc).encode(), 60.0
            if case["path"] == "/v1/validations" and status == 202:
                with contextlib.suppress(Exception), lock:
                    job_ids.append(json.loads(body)["id"])
            defect = None
            if status >= 500 and status != 503:
                defect = f"status {status}: {body[:300]!r}"
            elif status == 0:
                defect = "no answer (connection dropped or timed out)"
            elif seconds > SLOW_SECONDS:
                defect = f"answered after {seconds:.1f} s (status {status})"
            elif status == 400 and body == b"Invalid HTTP request received.":
                pass  # uvicorn's own line for a request that is not HTTP (a raw é in the path)
            elif 400 <= status < 500 and case["path"].startswith("/v1"):
                try:
                    error = json.loads(body)["error"]
                    if "\n" in error or not error:
                        defect = f"status {status} with a multi-line error {error[:300]!r}"
                except Exception:
                    if case["method"] != "HEAD":
                        defect = f"status {status} without a JSON error line: {body[:200]!r}"
            shown = (
                case["body"]
                if len(case["body"]) < 1500
                else case["body"][:700] + b"..." + case["body"][-100:]
            )
            return {"label": case["label"], "status": status, "seconds": seconds, "defect": defect,
                    "server_workers": http_workers,
                    "began": began, "ended": began + seconds,
                    "reproducer": {"method": case["method"], "path": case["path"][:1500],
                                   "headers": case["headers"],
                                   "body": shown.decode("utf-8", "replace"),
                                   "body_bytes": len(case["body"])}}  # fmt: skip

        batch = 200
        with ThreadPoolExecutor(workers) as pool:
            for start in range(0, cases_count, batch):
                cases = [http_case(rng, job_ids) for _ in range(min(batch, cases_count - start))]
                records += list(pool.map(one, cases))
                if len(job_ids) > 40:  # keep the queue below its cap: cancel what runs
                    for job in job_ids[-40:]:
                        with contextlib.suppress(OSError):
                            _raw_request(port, {"method": "DELETE", "path": f"/v1/validations/{job}",
                                                "headers": {}, "body": b""}, 10)  # fmt: skip
                    del job_ids[:-5]
        probe.stop.set()
        probe.join(5)
        return {"records": records, "probe": probe, "server_alive": server.poll() is None}
    finally:
        server.send_signal(signal.SIGINT)
        try:
            server.wait(20)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        log.close()


def _slowest_cpu(records: list[dict[str, Any]]) -> dict[str, Any]:
    top = max(records, key=lambda r: r["cpu_seconds"])
    return {"cpu_seconds": round(top["cpu_seconds"], 2), "seconds": round(top["seconds"], 2),
            "case": top["reproducer"]}  # fmt: skip


# --- main --------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=20261128)
    parser.add_argument("--api", type=int, default=10_000)
    parser.add_argument("--cli", type=int, default=500)
    parser.add_argument("--http", type=int, default=3_000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument(
        "--http-share2",
        type=float,
        default=0.5,
        help="share of the HTTP cases sent to a `planner serve --workers 2` (the rest: 1)",
    )
    parser.add_argument("--output", type=Path, default=Path("hostile-run.json"))
    options = parser.parse_args(argv)
    summary: dict[str, Any] = {
        "command": "python benchmarks/hostile_run.py " + " ".join(argv or sys.argv[1:]),
        "seed": options.seed,
        "date": time.strftime("%Y-%m-%d"),
    }
    defects: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="planner-hostile-") as folder:
        root = Path(folder)
        try:
            files = Files(root / "files")
            if options.api:
                rng = random.Random(f"{options.seed}-api")
                cases = [api_case(rng, files) for _ in range(options.api)]
                started = time.perf_counter()
                records = run_api(cases, root, options.workers)
                slowest = max(records, key=lambda r: r["seconds"])
                summary["api"] = {
                    "cases": len(records),
                    "wall_seconds": round(time.perf_counter() - started, 1),
                    "input_errors": sum(r["outcome"] == "input_error" for r in records),
                    "answered": sum(r["outcome"] == "ok" for r in records),
                    "exceptions": sum(r["outcome"] == "exception" for r in records),
                    "over_10_s": sum(r["seconds"] > SLOW_SECONDS for r in records),
                    "over_10_s_cpu": sum(r["cpu_seconds"] > SLOW_SECONDS for r in records),
                    "slowest": {"seconds": round(slowest["seconds"], 2), "case": slowest["reproducer"]},
                    "slowest_cpu": _slowest_cpu(records),
                    "defects": sum(r["defect"] is not None for r in records),
                }  # fmt: skip
                defects += [{"kind": "api", **r} for r in records if r["defect"]]
            if options.cli:
                rng = random.Random(f"{options.seed}-cli")
                cases = [cli_case(rng, files) for _ in range(options.cli)]
                started = time.perf_counter()
                records = run_cli(cases, root / "files", options.workers)
                slowest = max(records, key=lambda r: r["seconds"])
                codes: dict[str, int] = {}
                for r in records:
                    codes[str(r["code"])] = codes.get(str(r["code"]), 0) + 1
                summary["cli"] = {
                    "cases": len(records),
                    "wall_seconds": round(time.perf_counter() - started, 1),
                    "exit_codes": dict(sorted(codes.items())),
                    "tracebacks": sum(bool(r["defect"] and r["defect"].startswith("traceback")) for r in records),
                    "over_10_s": sum(r["seconds"] > SLOW_SECONDS for r in records),
                    "over_10_s_cpu": sum(r["cpu_seconds"] > SLOW_SECONDS for r in records),
                    "slowest": {"seconds": round(slowest["seconds"], 2), "case": slowest["reproducer"]},
                    "slowest_cpu": _slowest_cpu(records),
                    "defects": sum(r["defect"] is not None for r in records),
                }  # fmt: skip
                defects += [{"kind": "cli", **r} for r in records if r["defect"]]
            if options.http:
                rng = random.Random(f"{options.seed}-http")
                started = time.perf_counter()
                second = round(options.http * min(max(options.http_share2, 0.0), 1.0))
                records, latencies, stalls, alive = [], [], [], True
                by_server: dict[str, dict[str, Any]] = {}
                log_text = ""
                for http_workers, count in ((1, options.http - second), (2, second)):
                    if not count:
                        continue
                    began = time.perf_counter()
                    folder = root / f"http-workers{http_workers}"
                    result = run_http(count, rng, folder, 2 * options.workers, http_workers)
                    part = result["records"]
                    records += part
                    latencies += result["probe"].latencies
                    stalls += result["probe"].stalls
                    alive = alive and result["server_alive"]
                    text = (folder / "server.log").read_text("utf-8", "replace")
                    log_text += f"--- planner serve --workers {http_workers} ---\n{text}"
                    by_server[f"workers_{http_workers}"] = {
                        "cases": len(part),
                        "wall_seconds": round(time.perf_counter() - began, 1),
                        "5xx": sum(r["status"] >= 500 for r in part),
                        "health_probes": len(result["probe"].latencies),
                        "health_max_seconds": round(max(result["probe"].latencies, default=0.0), 3),
                        "server_tracebacks": text.count("Traceback (most recent"),
                        "defects": sum(r["defect"] is not None for r in part) + len(result["probe"].stalls),
                    }  # fmt: skip
                slowest = max(records, key=lambda r: r["seconds"])
                statuses: dict[str, int] = {}
                for r in records:
                    statuses[str(r["status"])] = statuses.get(str(r["status"]), 0) + 1
                summary["http"] = {
                    "cases": len(records),
                    "wall_seconds": round(time.perf_counter() - started, 1),
                    "statuses": dict(sorted(statuses.items())),
                    "5xx": sum(r["status"] >= 500 for r in records),
                    "503": sum(r["status"] == 503 for r in records),
                    "over_10_s": sum(r["seconds"] > SLOW_SECONDS for r in records),
                    "slowest": {"seconds": round(slowest["seconds"], 2), "case": slowest["label"]},
                    "health_probes": len(latencies),
                    "health_max_seconds": round(max(latencies, default=0.0), 3),
                    "stalls_over_1_s": len(stalls),
                    "server_alive_at_end": alive,
                    "by_server": by_server,
                    "defects": sum(r["defect"] is not None for r in records) + len(stalls),
                }  # fmt: skip
                defects += [{"kind": "http", **r} for r in records if r["defect"]]
                for stall in stalls:  # the requests in flight while the probe waited
                    start, end = stall["at"] - stall["seconds"], stall["at"]
                    stall["in_flight"] = [
                        {"label": r["label"], "seconds": round(r["seconds"], 2),
                         "reproducer": r["reproducer"]}
                        for r in records if r["began"] < end and r["ended"] > start
                    ]  # fmt: skip
                    defects.append({"kind": "stall", **stall})
                summary["http"]["server_tracebacks"] = log_text.count("Traceback (most recent")
                if summary["http"]["server_tracebacks"]:
                    (options.output.with_suffix(".server.log")).write_text(log_text[-200_000:])
        finally:
            for path in (root / "files" / "ro_dir", root / "files" / "noread.csv"):
                with contextlib.suppress(OSError):
                    os.chmod(path, 0o755)
    summary["defects"] = len(defects)
    summary["defect_list"] = defects
    options.output.write_text(json.dumps(summary, indent=2, default=str, ensure_ascii=False))
    print(f"hostile run, seed {options.seed}: {options.output}")
    print(f"{'kind':<6}{'cases':>8}{'defects':>9}{'slowest s':>11}  notes")
    for kind in ("api", "cli", "http"):
        if kind in summary:
            part = summary[kind]
            note = ""
            if kind == "http":
                note = (f"5xx {part['5xx']}, health max {part['health_max_seconds']} s, "
                        f"stalls {part['stalls_over_1_s']}, server tracebacks {part['server_tracebacks']}")  # fmt: skip
            elif kind == "cli":
                note = f"tracebacks {part['tracebacks']}, exit codes {part['exit_codes']}"
            else:
                note = f"exceptions {part['exceptions']}, over 10 s {part['over_10_s']}"
            print(
                f"{kind:<6}{part['cases']:>8}{part['defects']:>9}{part['slowest']['seconds']:>11}  {note}"
            )
    return 1 if defects else 0


if __name__ == "__main__":
    sys.exit(main())
