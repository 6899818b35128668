"""Hostile invocations of the command line and the Python API, and a runner that records
tracebacks, slow runs and peak memory (issue 11).

Each case runs in its own forked child of a process that has already imported the
planner, so a hang is killed at ``--timeout`` seconds and each child's peak resident
memory is read from ``wait4``. CLI cases call the real entry point ``planner.cli:main``;
a traceback is any exception escaping it (or a ``Traceback`` on stderr), and exit code 2
must come with exactly one ``error: …`` line. API cases call ``Query``, ``plan``,
``solve``, ``sweep``, ``allocate`` and ``validate`` with hostile values, where only
:class:`planner.inputs.InputError` may escape.

Legitimate heavy requests are bounded by :mod:`planner.limits` (a validation may take
minutes), not by this harness's 10 s: so that a run measures robustness rather than Monte
Carlo time, validations get ``--trials`` and ``-k`` and plans ``--simulation-budget`` from
pools whose valid values are small (``auto`` trials and a real calibration are left out);
every other value may be anything in the hostile pools, limits included.

    python -m tests.fuzz --count 10000 --seed 1     # the full run (~15 min on 2 cores)
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import random
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SLOW_SECONDS = 10.0
EXIT_CODES = {0, 1, 2, 3, 130}
TRACEBACK_EXIT = 99

NUMBERS = [
    "0", "-0", "-1", "1", "2", "0.5", "0.1", "1e-6", "5e-7", "1e-12", "1e-300", "1e-400",
    "1e308", "1e400", "-1e400", "nan", "NaN", "inf", "-inf", "Infinity", "abc", "", " ",
    "1_000", "0x10", "1/2", "١٢", "½", "2.5", "9" * 400, "-" + "9" * 50, "True", "None",
    "1,2", "1e", ".", "--", "1e-4", "20", "20.000001", "9.99e-5", "0.9999999999999999",
    "\x00", "é", "1" * 5000,
]  # fmt: skip
SPECS = [
    "1:2:0", "1:2:-1", "1:2:1e9", "0:1:5log", "1:1:3", "a:b:c", "1:2:3:4", "1:2:100001",
    "0.1:0.5:100000", "1:2:3log", "-1:1:3log", "nan:1:3", "1:inf:3", "1:2:", "::", "1,2,,3",
    "1,nan,inf", "1e-4:1:50log", "0.05:1:5log", "16:4096:5log", "2:1000000000000:4log",
]  # fmt: skip
MODELS = ["local", "shuffle", "central", "LOCAL", "quantum", "", "shuffle-private"]
COINS = ["private", "public", "gold", ""]
SETTINGS = ["local-private", "local-public", "shuffle-private", "shuffle-public", "central", "x"]


def grants_time(case: Any) -> bool:
    """A plan whose ``--simulation-budget`` (as the CLI reads it, e.g. the hostile pool's
    ``1_000``) allows more than :data:`SLOW_SECONDS`: its simulation may take that long, as
    asked (a run found k = 1000, α = 1 simulating for 12 s under a budget of 1_000 s)."""
    if not isinstance(case, list) or "--simulation-budget" not in case:
        return False
    at = len(case) - 1 - case[::-1].index("--simulation-budget")
    try:
        return at + 1 < len(case) and float(case[at + 1]) > SLOW_SECONDS
    except ValueError:
        return False


def too_slow(outcome: Outcome) -> bool:
    """Over :data:`SLOW_SECONDS`, unless the case itself granted the time."""
    return outcome.seconds > SLOW_SECONDS and not grants_time(outcome.case)


def _pick(rng: random.Random, valid: list[str], hostile_share: float = 0.12) -> str:
    if rng.random() < hostile_share:
        return rng.choice(NUMBERS)
    return rng.choice(valid)


VALID = {
    "k": ["2", "16", "100", "1000", "100000", "1e6", "1000000000000"],
    "alpha": ["1e-6", "0.01", "0.1", "0.5", "1"],
    "eps1": ["1e-4", "0.01", "0.25", "1", "5", "20"],
    "eps2": ["1e-4", "0.01", "0.25", "1", "5", "20"],
    "delta": ["1e-12", "1e-6", "0.5", "0.999"],
    "beta": ["0.05", "0.2", "0.3333333333333333", "0.49"],
    "n1": ["1", "10", "1000", "1e6", "1e15", "1e30"],
    "n2": ["1", "10", "1000", "1e6", "1e15", "1e30"],
    "trials": ["0", "1", "5", "20", "-3", "1e30"],
    "seed": ["0", "1", "9223372036854775807", "9223372036854775808", "9007199254740993"],
    "cost1": ["1", "0.5", "1e12", "1e13"],
    "cost2": ["1", "0.5", "1e12", "1e13"],
    "simulation-budget": ["0", "1", "2", "3601", "-1"],
    "workers": ["0", "1", "300"],
}


VALIDATE_K = ["2", "16", "100", "1000", "1e4", "1000001", "1e12"]
"""k for validations: the valid ones cost ≤ 10^4 × 20 trials × 12 families; the others are
refused (planner.limits.VALIDATION_K_MAX)."""


def _option(rng: random.Random, name: str, chance: float = 0.85) -> list[str]:
    if rng.random() > chance:
        return []
    flag = "-k" if name == "k" else f"--{name}"
    return [flag, _pick(rng, VALID.get(name, ["1"]))]


def _query_options(rng: random.Random, *, spec: bool = False) -> list[str]:
    args: list[str] = []
    for name in ("k", "alpha", "eps1", "eps2", "delta", "beta"):
        chance = 0.9 if name in ("k", "alpha", "eps1", "eps2") else 0.4
        if spec and rng.random() < 0.3:
            args += ["-k" if name == "k" else f"--{name}", rng.choice(SPECS)]
        else:
            args += _option(rng, name, chance)
    if rng.random() < 0.2:
        args += ["--accounting", rng.choice(["exact", "paper", "guess"])]
    return args


def _model(rng: random.Random) -> list[str]:
    args = ["--model", rng.choice(MODELS)] if rng.random() < 0.95 else []
    if rng.random() < 0.4:
        args += ["--coin", rng.choice(COINS)]
    return args


@dataclass
class Workspace:
    """Hostile input files and output paths, made once per run."""

    root: Path
    inputs: list[str] = field(default_factory=list)
    pmfs: list[str] = field(default_factory=list)
    outputs: list[str] = field(default_factory=list)

    @classmethod
    def create(cls, root: Path) -> Workspace:
        import numpy as np

        space = cls(root)
        files: dict[str, str | bytes] = {
            "ok.toml": '[[scenario]]\nmodel = "local"\nk = 100\nalpha = 0.5\neps1 = 1\neps2 = 1\n',
            "ok.csv": "name,model,k,alpha,eps1,eps2\na,central,100,0.5,1,0.5\n",
            "long.csv": "name,model,k\na,local,100,extra\n",
            "list.toml": "scenario = [1, 2]\n",
            "date.toml": '[[scenario]]\nmodel = "local"\nk = 1\nwhen = 1979-05-27\n',
            "big.csv": "name,model\nx," + "a" * 200_000 + "\n",
            "bad.toml": "[[scenario]\n",
            "binary.csv": bytes(range(256)) * 10,
            "empty.csv": "",
            "header.csv": "name,model\n",
            "unknown.toml": '[[scenario]]\ncolour = "red"\n',
            "many.csv": "model,k,alpha,eps1,eps2\n" + "local,100,0.5,1,1\n" * 10_001,
            "solve.csv": "model,k,alpha,eps1,n1,n2\ncentral,100,0.5,1,1e30,1e30\n",
            "nested.json": "[" * 50_000 + "]" * 50_000,
            "huge.json": "[" + "9" * 400 + ", 1]",
            "text.json": '["a", "b"]',
            "dict.json": '{"p": [0.5, 0.5]}',
            "neg.csv": "-0.5\n1.5\n",
            "nan.csv": "nan\n1\n",
            "pmf.txt": "0.5 0.5\n",
            "pmf.bin": "0.5 0.5\n",
        }
        for name, content in files.items():
            path = root / name
            if isinstance(content, bytes):
                path.write_bytes(content)
            else:
                path.write_text(content, "utf-8")
        np.save(root / "uniform100.npy", np.full(100, 0.01))
        np.save(root / "uniform16.npy", np.full(16, 1 / 16))
        np.save(root / "struct.npy", np.zeros(3, dtype=[("a", "f8"), ("b", "i4")]))
        np.save(root / "complex.npy", np.full(16, 1 / 16, dtype=complex))
        np.save(root / "matrix.npy", np.full((4, 4), 1 / 16))
        np.save(root / "objects.npy", np.array([1, "x"], dtype=object), allow_pickle=True)
        (root / "folder").mkdir()
        os.mkfifo(root / "fifo.csv")
        listed = [str(root / name) for name in files] + [str(root / "folder"), "/dev/zero"]
        space.inputs = [*listed, str(root / "missing.toml"), str(root / "fifo.csv"), ""]
        space.pmfs = [
            *(str(root / name) for name in files if name.endswith((".json", ".csv", ".txt"))),
            *(str(root / name) for name in ("uniform100.npy", "uniform16.npy", "struct.npy")),
            *(str(root / name) for name in ("complex.npy", "matrix.npy", "objects.npy")),
            "/dev/zero",
            str(root / "fifo.csv"),
        ]
        space.outputs = [
            str(root / "out.csv"),
            str(root / "out.json"),
            str(root / "out.png"),
            str(root / "out.svg"),
            str(root / "folder"),
            str(root / "missing" / "x.csv"),
            "",
            ".",
            "/dev/null/x.csv",
            "/proc/version",
            str(root / ("x" * 300)),
        ]
        return space


def _cli_case(rng: random.Random, space: Workspace) -> list[str]:
    command = rng.choices(
        [
            "plan",
            "compare",
            "sweep",
            "plot",
            "batch",
            "explain",
            "solve",
            "validate",
            "calibrate",
            "misc",
        ],
        weights=[22, 8, 16, 5, 8, 4, 12, 18, 2, 5],
    )[0]
    if command == "plan":
        args = ["plan", *_model(rng), *_query_options(rng)]
        args += ["--simulation-budget", _pick(rng, VALID["simulation-budget"], 0.2)]
        if rng.random() < 0.2:
            args += ["--exact", "--trials", rng.choice(["50", "0", "1e9"])]
            args += ["--simulation-budget", "0"]
        if rng.random() < 0.3:
            args += ["--allocation", rng.choice(["cost", "fixed-n2", "paper", "nope"])]
            args += (
                _option(rng, "cost1", 0.4) + _option(rng, "cost2", 0.3) + _option(rng, "n2", 0.5)
            )
        for extra in ("trials", "seed", "cost1", "n2"):
            args += _option(rng, extra, 0.05)
        if rng.random() < 0.3:
            args += ["--constants", rng.choice(["calibrated", "proof", "order", "magic"])]
        args += ["--json"] if rng.random() < 0.4 else []
    elif command == "compare":
        args = ["compare", *_query_options(rng)] + (["--json"] if rng.random() < 0.4 else [])
    elif command in ("sweep", "plot"):
        args = [command, *_query_options(rng, spec=True)]
        for _ in range(rng.choice([0, 0, 1, 2])):
            args += ["-s", rng.choice(SETTINGS)]
        if command == "sweep":
            args += ["--format", rng.choice(["table", "csv", "json", "xml"])]
            if rng.random() < 0.3:
                args += ["-o", rng.choice(space.outputs)]
        else:
            args += ["-o", rng.choice(space.outputs)]
    elif command == "batch":
        args = ["batch", rng.choice(space.inputs), "--format", rng.choice(["table", "csv", "json"])]
        if rng.random() < 0.3:
            args += ["-o", rng.choice(space.outputs)]
    elif command == "explain":
        args = ["explain", *_model(rng)]
        args += [flag for flag in ("--latex", "--as-stated") if rng.random() < 0.4]
    elif command == "solve":
        args = ["solve", *_model(rng)]
        for name in ("k", "eps1", "delta", "beta", "alpha", "eps2", "n1", "n2"):
            args += _option(rng, name, 0.9 if name in ("k", "eps1") else 0.5)
        args += ["--json"] if rng.random() < 0.3 else []
    elif command == "validate":
        args = ["validate", *_model(rng), *_query_options(rng)]
        if "-k" in args:  # valid sizes stay small: a legitimate k = 10^6 runs for minutes
            args[args.index("-k") + 1] = _pick(rng, VALIDATE_K)
        args += ["--trials", _pick(rng, VALID["trials"], 0.1)]
        args += _option(rng, "seed", 0.3) + _option(rng, "n1", 0.3) + _option(rng, "n2", 0.3)
        if rng.random() < 0.3:
            args += ["--path", rng.choice(["user", "fast", "auto", "psychic"])]
        if rng.random() < 0.25:
            args += ["--p-file", rng.choice(space.pmfs), "--q-file", rng.choice(space.pmfs)]
        if rng.random() < 0.2:
            args += ["--family", rng.choice(["uniform", "paninski", "nope"])]
        if rng.random() < 0.2:
            args += ["-o", rng.choice(space.outputs)]
        if rng.random() < 0.15:
            args += ["--allocation", rng.choice(["cost", "fixed-n2"]), *_option(rng, "n2", 0.5)]
    elif command == "calibrate":  # always one bad option: a real calibration takes minutes
        bad = rng.choice(["trials", "workers", "setting", "output"])
        args = ["calibrate", "--quick"]
        if bad == "trials":
            args += ["--trials", rng.choice(["0", "nan", "1e30", "-5"])]
        elif bad == "workers":
            args += ["--workers", rng.choice(["0", "1e9", "x"])]
        elif bad == "setting":
            args += ["--setting", rng.choice(["x", "", "local"])]
        else:
            args += ["-o", rng.choice([o for o in space.outputs if "out." not in o])]
    else:
        args = rng.choice(
            [
                [],
                ["--version"],
                ["--help"],
                ["plan", "--help"],
                ["nonsense"],
                ["plan", "--bogus"],
                [rng.choice(NUMBERS)],
                ["sweep", "--k"],
                ["plan", "--model"],
                ["--", "plan"],
            ]
        )
    if rng.random() < 0.05 and len(args) > 2:  # drop or duplicate a random token
        position = rng.randrange(1, len(args))
        args = args[:position] + args[position + 1 :] if rng.random() < 0.5 else args + args[1:3]
    return args


def _api_case(rng: random.Random) -> tuple[str, dict[str, Any]]:
    def value(name: str) -> Any:
        roll = rng.random()
        if roll < 0.3:
            return rng.choice(VALID.get(name, ["1"]))
        if roll < 0.55:
            return rng.choice([True, False, None, 10**400, -(10**400), float("nan"), [], {}, "x"])
        if roll < 0.75:
            return rng.choice(NUMBERS)
        return rng.choice([2, 100, 0.1, 0.5, 1.0, 1e-4, 20.0, 1e-6, 10**12, 0])

    function = rng.choice(["query", "plan", "solve", "sweep", "allocate", "validate"])
    fields = {name: value(name) for name in ("k", "alpha", "eps1", "eps2", "delta", "beta")}
    fields["model"] = rng.choice([*MODELS, None, 3])
    fields["coin"] = rng.choice([*COINS, None])
    extra = {
        "unknown": rng.choice(["n1", "n2", "alpha", "eps2", "zzz", None, 5]),
        "n1": value("n1"),
        "n2": value("n2"),
        "trials": rng.choice([1, 5, 0, -1, True, None, "auto", 10**30]),
        "seed": rng.choice([0, -1, 2**63 - 1, 2**64, None, "7"]),
        "rule": rng.choice(["cost", "fixed-n2", "paper", "x", None]),
        "settings": rng.choice([[], None, ["local-private"], ["central", "x"], "central", [3]]),
        "raw": rng.random() < 0.1,
    }
    return function, {**fields, **extra}


def _run_api(function: str, args: dict[str, Any]) -> None:
    from planner import Query, plan, solve, sweep
    from planner.allocation import AllocationRule, allocate
    from planner.inputs import InputError
    from planner.solve import Unknown
    from planner.validate import validate

    try:
        if function == "sweep":
            sweep(
                args["settings"],
                **{name: args[name] for name in ("k", "alpha", "eps1", "eps2", "delta", "beta")},
            )
            return
        query = (
            args["model"]
            if args["raw"]
            else Query.build(
                args["model"],
                args["coin"],
                args["k"],
                args["alpha"],
                args["eps1"],
                args["eps2"],
                args["delta"],
                args["beta"] if args["beta"] is not None else 1 / 3,
            )
        )
        if function == "plan":
            plan(query, budget_seconds=0)  # outside the covered region: refused, not simulated
        elif function == "solve":
            unknown = args["unknown"]
            solve(
                query,
                Unknown(unknown) if unknown in tuple(Unknown) else unknown,
                args["n1"],
                args["n2"],
            )
        elif function == "allocate":
            rule = args["rule"]
            allocate(
                plan(query),
                AllocationRule(rule) if rule in tuple(AllocationRule) else rule,
                n2=args["n2"],
            )
        elif function == "validate":
            validate(query, trials=args["trials"], seed=args["seed"], n1=args["n1"], n2=args["n2"])
    except InputError:
        return


# --- running ---------------------------------------------------------------------------


@dataclass
class Outcome:
    case: list[str] | tuple[str, dict[str, Any]]
    code: int | None
    seconds: float
    peak_kib: int
    traceback: str | None
    violation: str | None


def _child(case: Any, out: Path, err: Path) -> None:
    """In the forked child: run the case with stdout/stderr to files; exit with its code."""
    os.dup2(os.open(out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC), 1)
    os.dup2(os.open(err, os.O_WRONLY | os.O_CREAT | os.O_TRUNC), 2)
    # a fresh text layer on the fds (pytest, say, may have replaced sys.stdout/err)
    sys.stdout = open(1, "w", encoding="utf-8", errors="replace", closefd=False)  # noqa: SIM115
    sys.stderr = open(2, "w", encoding="utf-8", errors="replace", closefd=False)  # noqa: SIM115
    code = 0
    try:
        if isinstance(case, list):
            from planner.cli import main

            code = main(case)
        else:
            _run_api(*case)
    except BaseException:
        sys.stderr.write(traceback.format_exc())
        code = TRACEBACK_EXIT
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code if isinstance(code, int) and 0 <= code < 256 else TRACEBACK_EXIT)


def _judge(case: Any, code: int | None, err_text: str) -> tuple[str | None, str | None]:
    """(traceback, contract violation) of a finished case."""
    if code == TRACEBACK_EXIT or "Traceback (most recent call last)" in err_text:
        return err_text[-3000:], None
    if code is None:
        return None, "killed at the timeout"
    if isinstance(case, list):
        if code not in EXIT_CODES:
            return None, f"exit code {code}"
        lines = [line for line in err_text.splitlines() if line.strip()]
        if code == 2 and not (len(lines) == 1 and lines[0].startswith("error: ")):
            return None, f"exit 2 without one error line: {err_text[:300]!r}"
    return None, None


def run_cases(
    cases: list[Any], *, workers: int = 2, timeout: float = 60.0, workdir: Path
) -> list[Outcome]:
    """Run every case in a forked child, ``workers`` at a time, killing any over ``timeout``."""
    import signal

    _preload()
    outcomes: list[Outcome | None] = [None] * len(cases)
    running: dict[int, tuple[int, float]] = {}
    pending = list(range(len(cases)))[::-1]
    previous = os.getcwd()
    os.chdir(workdir)
    try:
        while pending or running:
            while pending and len(running) < workers:
                index = pending.pop()
                out, err = workdir / f".out{index % 64}", workdir / f".err{index % 64}"
                pid = os.fork()
                if pid == 0:
                    _child(cases[index], out, err)
                running[pid] = (index, time.perf_counter())
            pid, status, usage = os.wait4(-1, os.WNOHANG)
            now = time.perf_counter()
            if pid == 0:
                for child, (_, started) in list(running.items()):
                    if now - started > timeout:
                        os.kill(child, signal.SIGKILL)
                time.sleep(0.002)
                continue
            index, started = running.pop(pid)
            code = os.waitstatus_to_exitcode(status)
            err_text = (workdir / f".err{index % 64}").read_text("utf-8", errors="replace")
            killed = code < 0
            trace, violation = _judge(cases[index], None if killed else code, err_text)
            outcomes[index] = Outcome(
                cases[index],
                None if killed else code,
                now - started,
                usage.ru_maxrss,
                trace,
                violation,
            )
    finally:
        os.chdir(previous)
    return [outcome for outcome in outcomes if outcome is not None]


def _preload() -> None:
    """Import what the cases use once, before forking (each child then starts warm)."""
    import importlib

    for module in (
        "planner.cli", "planner.api", "planner.report", "planner.coverage", "planner.batch",
        "planner.solve", "planner.allocation", "planner.exact", "planner.sweep",
        "planner.validate", "planner.validators.engine", "rich.console", "rich.table",
        "rich.progress", "scipy.stats", "scipy.special", "sympy",
    ):  # fmt: skip
        importlib.import_module(module)
    with contextlib.suppress(Exception):  # matplotlib is optional
        importlib.import_module("planner.plot")._pyplot()
    from planner.cli import main

    query = ["-k", "100", "--alpha", "0.5", "--eps1", "1", "--eps2", "0.5", "--delta", "1e-6"]
    sink = io.StringIO()
    with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
        for warm_up in (["compare", *query], ["plan", "--model", "central", *query[:8]]):
            with contextlib.suppress(Exception):  # a broken main is the cases' finding
                main(warm_up)  # constants loaded, typer's commands built: children start warm


def generate(count: int, seed: int, space: Workspace, api_share: float = 0.15) -> list[Any]:
    rng = random.Random(seed)
    return [
        _api_case(rng) if rng.random() < api_share else _cli_case(rng, space) for _ in range(count)
    ]


def summary(outcomes: list[Outcome]) -> dict[str, Any]:
    slowest = max(outcomes, key=lambda o: o.seconds)
    return {
        "invocations": len(outcomes),
        "cli": sum(isinstance(o.case, list) for o in outcomes),
        "api": sum(not isinstance(o.case, list) for o in outcomes),
        "tracebacks": sum(o.traceback is not None for o in outcomes),
        "contract_violations": sum(o.violation is not None for o in outcomes),
        "over_10_s": sum(too_slow(o) for o in outcomes),
        "max_seconds": round(slowest.seconds, 2),
        "slowest_case": slowest.case if isinstance(slowest.case, list) else str(slowest.case),
        "peak_memory_mib": round(max(o.peak_kib for o in outcomes) / 1024, 1),
        "exit_codes": {
            str(code): sum(o.code == code for o in outcomes)
            for code in sorted({o.code for o in outcomes}, key=str)
        },
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=60.0)
    parser.add_argument("--report", type=Path, help="Write every finding here (JSON).")
    options = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="planner-fuzz-") as folder:
        space = Workspace.create(Path(folder))
        cases = generate(options.count, options.seed, space)
        started = time.perf_counter()
        outcomes = run_cases(
            cases, workers=options.workers, timeout=options.timeout, workdir=space.root
        )
        result = summary(outcomes)
        result["wall_seconds"] = round(time.perf_counter() - started, 1)
        result["command"] = f"python -m tests.fuzz --count {options.count} --seed {options.seed}"
    print(json.dumps(result, indent=2, ensure_ascii=False))
    findings = [o for o in outcomes if o.traceback or o.violation or too_slow(o)]
    for outcome in findings[:20]:
        print("---", outcome.case, outcome.code, f"{outcome.seconds:.1f}s", file=sys.stderr)
        print(outcome.traceback or outcome.violation or "slow", file=sys.stderr)
    if options.report:
        options.report.write_text(
            json.dumps([o.__dict__ for o in findings], indent=2, default=str), "utf-8"
        )
    return 1 if result["tracebacks"] or result["contract_violations"] or result["over_10_s"] else 0


if __name__ == "__main__":
    sys.exit(main())
