"""What one request may cost, stated in one place and checked before anything is allocated.

Every limit here bounds a request's memory and running time whatever its inputs: a
request beyond one is refused with one line naming what to lower (an
:class:`~planner.inputs.InputError`, exit code 2 on the command line). The numbers are
measured on one core of a 2-core machine (``benchmarks/fuzz_cli.py`` throws hostile
invocations at all of them):

* a sweep or plot has at most :data:`SWEEP_ROWS_MAX` rows (10^5 rows: ~4 s as CSV,
  ~0.5 GB as JSON) and prints at most :data:`TABLE_ROWS_MAX` of them as a table;
* a validation simulates at most :data:`VALIDATION_CELLS_MAX` (trial × bin) cells,
  k × trials × families (a majority vote is checked through one run; ~5·10^6 cells a
  second), at k ≤ :data:`VALIDATION_K_MAX` (each instance holds k-vectors) and
  n ≤ :data:`SIMULATION_N_MAX` users a group (the fast path draws int64 binomial counts
  that must stay exact in float64);
* the user path holds every trial's messages at once: trials × (n1 + n2) ≤
  :data:`USER_PATH_MESSAGES_MAX`;
* a sweep's shuffle noise searches cost at most :data:`ROOT_FIND_COST_MAX` (one per
  distinct (ε, δ)) and number at most :data:`ROOT_FINDS_MAX` (its plans' own ε
  included), its multi-message rows' flood searches (one per distinct (ε, δ), for the
  messages per user) an estimated :data:`FLOOD_SEARCH_SECONDS_MAX` (beyond it those
  messages are left empty, with a note), and at most
  :data:`SWEEP_SINGLE_ROWS_MAX` rows are planned one by one, within
  :data:`SWEEP_SECONDS_MAX` of the sweep's start;
* a plan's root-finding: every search (:func:`planner.formulas.search.least_passing`, the
  subsampling inverse) takes O(log) steps; the exact shuffle noise μ sums ≈ 28√μ terms
  ~6 times (ε = 1e-4, δ = 1e-12: μ = 5·10^9, 2·10^6 terms, ~0.7 s), and ε ≥ 1e-4 and
  α ≥ 1e-6 (:mod:`planner.inputs`) bound every size a plan computes;
* a batch holds at most :data:`BATCH_SOLVES_MAX` solve rows, and with ``--validate`` at
  most :data:`BATCH_VALIDATED_MAX` rows;
* a batch file holds at most :data:`BATCH_SCENARIOS_MAX` scenarios in at most
  :data:`BATCH_FILE_BYTES_MAX` bytes (checked before it is parsed), a batch printed as a
  table at most :data:`TABLE_ROWS_MAX` rows (checked before any row runs);
* a pmf file is at most :data:`INPUT_FILE_BYTES_MAX` bytes, read in chunks and stopped at
  its first value beyond k (its values: 8 bytes each, at most k of them).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable

import numpy as np

from planner.formulas.accounting import DELTA_FLOOR
from planner.formulas.search import check_deadline
from planner.inputs import EPS_MAX, EPS_MIN, InputError

SWEEP_ROWS_MAX = 100_000
"""Rows of one sweep or plot (all settings together)."""
TABLE_ROWS_MAX = 1_000
"""Rows a sweep or batch prints as a table (rich lays a table out at ~2.5 ms a row)."""
VALIDATION_CELLS_MAX = 10**9
"""k × trials × families one validation may simulate (~3 minutes on one core)."""
VALIDATION_K_MAX = 10**6
"""Largest domain a validation simulates (instance pmfs and counts are k-vectors)."""
SIMULATION_N_MAX = 10**15
"""Largest group size a simulation takes (counts are int64, exact in float64)."""
USER_PATH_MESSAGES_MAX = 2 * 10**7
"""trials × (n1 + n2) on the user path, which holds every trial's messages at once."""
SWEEP_SINGLE_ROWS_MAX = 500
"""Valid sweep rows the vectorised path leaves to ``plan`` one by one (β < 1/3 with direct
calibration, counts ≥ 2^53): 1–11 ms each on one core (2026-11-29: a 1,000-row shuffle
public-coin sweep below k = 16, 100 values of ε2 at β = 0.1, took 11 s; 300 at ~45 ms each
before). Rows below k = 16 at β < 1/3 come here too, as their 16-bin plans may take a
direct factor."""
ROOT_FIND_COST_MAX = 10**8
"""Summed cost of the exact-noise root-finds one sweep may need, in terms of the sums of
:func:`planner.formulas.accounting.poisson_histogram_delta` (~0.1 µs a term, ~1000 terms of
overhead an evaluation, on the loaded 2-core machine): about 10 s. See
:func:`noise_root_find_cost`."""
ROOT_FINDS_MAX = 3_000
"""Noise searches (distinct (ε, δ)) one sweep may need, the plans' own ε included
(:func:`plan_noise_epsilons`): ~1.4 ms each where the sum is short (δ near 1), whatever
:data:`ROOT_FIND_COST_MAX` counts; 400 δ at two ε made 8,379 of them, 12 s."""
BATCH_SCENARIOS_MAX = 10_000
BATCH_SOLVES_MAX = 1_000
"""Solve rows in one batch: a solve takes 0.3 s at the median and up to ~8 s (a shuffle
search at a large ε), so 10,000 of them could run ~20 h (a hostile review); 1,000 stay
within minutes typically, about 2 h at worst."""
BATCH_VALIDATED_MAX = 200
"""Rows of one ``batch --validate``: each validation may take minutes (up to the cells
limit below); more rows are a benchmark, run in parts."""
"""Scenarios in one batch file."""
BATCH_FILE_BYTES_MAX = 2 * 2**20
"""Size of a batch file: 10,000 scenarios of nine fields are ~1.1 MiB of TOML, which
parses in ~2 s on the loaded machine (a review's 20 MB file took 17 s before its first
error)."""


def check_sweep_rows(rows: int) -> None:
    """Refuse a sweep of more than :data:`SWEEP_ROWS_MAX` rows (before building it)."""
    if rows > SWEEP_ROWS_MAX:
        raise InputError(
            "sweep size", f"{rows:,} rows", f"at most {SWEEP_ROWS_MAX:,} rows (fewer values)"
        )


def check_table_rows(rows: int) -> None:
    """Refuse to lay out more than :data:`TABLE_ROWS_MAX` rows as a table."""
    if rows > TABLE_ROWS_MAX:
        raise InputError(
            "format",
            f"table of {rows:,} rows",
            f"--format csv or json beyond {TABLE_ROWS_MAX:,} rows",
        )


def noise_root_find_cost(eps: float, delta: float, paper: bool) -> float:
    """Upper estimate of the terms summed to find the shuffle noise μ(ε, δ) (``exact``), or
    the ε that the lemma's μ buys (``paper``, exact below μ = 10^6, closed form above).

    A sum has ≈ 28√μ + 1000 terms' worth of work; the exact search
    (:class:`planner.formulas.search.SeededTest`) takes ≤ 6 sums once μ is in the Gaussian
    regime (μ ≥ 10^6, seeded at the Gaussian μ) and ≤ 16 below (measured: at most 15 over
    1,500 random (ε, δ), 7 on average).
    μ is estimated by the Gaussian mechanism's 4·ln(1.25/δ)/ε² (the lemma's is ~40× it).
    """
    mu = 4.0 * math.log(1.25 / delta) / eps**2
    if paper:
        mu *= 40.0
        if mu >= 1e6:
            return 1000.0
    sums = 6 if mu >= 1e6 else 16
    return sums * (28.0 * math.sqrt(mu) + 1000.0)


def check_root_finds(
    eps_values: Iterable[float], delta_values: Iterable[float], paper: bool
) -> None:
    """Refuse a sweep whose distinct shuffle (ε, δ) pairs would cost more than
    :data:`ROOT_FIND_COST_MAX` to size (invalid values cost nothing: their rows fail)."""
    epsilons = {e for e in eps_values if EPS_MIN <= e <= EPS_MAX}
    deltas = {d for d in delta_values if DELTA_FLOOR <= d < 1}
    cost = sum(noise_root_find_cost(e, d, paper) for e in epsilons for d in deltas)
    searches = len(epsilons | plan_noise_epsilons(epsilons)) * len(deltas)
    if searches > ROOT_FINDS_MAX:
        raise InputError(
            "sweep size",
            f"{searches:,} noise searches (ε, δ)",
            f"at most {ROOT_FINDS_MAX:,} (each distinct δ is searched at the asked ε and at "
            f"about {len(plan_noise_epsilons(epsilons)):,} ε of the plans' ladder and grid): "
            "fewer distinct δ values",
        )
    if cost > ROOT_FIND_COST_MAX:
        raise InputError(
            "sweep size",
            f"{len(epsilons) * len(deltas):,} distinct shuffle (ε, δ) pairs",
            f"noise searches within {ROOT_FIND_COST_MAX:.0e} terms (here {cost:.1e}; "
            "ε near 1e-4 costs most): fewer distinct ε or δ values",
        )


FLOOD_SEARCH_SECONDS_MAX = 10.0
"""Estimated wall seconds of the least-flood searches one sweep may run for its rows'
messages per user (:func:`flood_search_seconds`, one per distinct (ε, δ) of the rows that
run a multi-message protocol): a hostile review's 400 values of ε2 from 0.0049 at
δ = 10⁻¹² took 141 s where the sweep had taken 1.2 s without them."""


def flood_search_seconds(eps: float, delta: float) -> float:
    """Upper estimate of one least-flood search's seconds
    (``formulas.correlated_noise.best_flood``): 4 ms/ε·(ln(1/δ)/13.8)^0.6 + 5 ms, above
    every measured time on an idle core (ε 0.0049 – 10, δ 10⁻¹² – 0.1: 1.0 s at ε = 0.0049,
    δ = 10⁻¹², 0.03 s at ε = 0.1, δ = 10⁻⁶)."""
    return 0.004 / eps * (max(math.log(1.0 / delta), 1.0) / 13.8) ** 0.6 + 0.005


def flood_searches_seconds(pairs: Iterable[tuple[float, float]]) -> float:
    """Estimated seconds of the least-flood searches for these (ε, δ), each distinct pair
    once (:func:`flood_search_seconds`). A sweep whose multi-message rows would take more
    than :data:`FLOOD_SEARCH_SECONDS_MAX` leaves their messages per user empty and says
    why (``planner.sweep``), rather than run for minutes or refuse the users."""
    return sum(flood_search_seconds(eps, delta) for eps, delta in set(pairs))


def plan_noise_epsilons(epsilons: set[float]) -> set[float]:
    """The ε besides the asked ones at which a sweep's shuffle plans search the noise μ
    at each δ: the ladder's powers of 2 from just below the weakest asked ε up to 1, and
    the calibrated grids' ε nodes (the multiplier's corners). A hostile review's sweep of
    400 δ at two ε searched 8,379 (ε, δ) pairs, not 800: 12 s where 2 s were counted."""
    if not epsilons:
        return set()
    low = math.floor(math.log2(min(epsilons)))
    ladder = {2.0**i for i in range(low, 1)}
    return ladder | _grid_epsilons()


@functools.lru_cache(maxsize=1)
def _grid_epsilons() -> frozenset[float]:
    """The distinct ε_strong and ε_weak of the grid nodes of the packaged protocols whose
    users send noise messages (the shuffle settings')."""
    from planner.constants import default_constants
    from planner.protocols import PROTOCOLS

    found: set[float] = set()
    for key in (protocol.key for protocol in PROTOCOLS if protocol.noise_messages):
        nodes = default_constants().for_setting(key).grid_nodes()
        if nodes is None:  # no grid (the proof or order constants)
            continue
        _, _, strong, weak = nodes
        found.update(np.unique(np.concatenate([np.ravel(strong), np.ravel(weak)])).tolist())
    return frozenset(found)


SWEEP_SECONDS_MAX = 9.0
"""Seconds of its thread's CPU time a sweep may take once it plans rows one by one, checked
after each such row (CPU time, not wall time: a review found the same sweep refused after
9.5 s on a loaded machine and answered in 2.7 s minutes later; a service's wall-clock cap
per request is apart, :func:`planner.formulas.search.deadline`). Such a row costs 1–75 ms,
the first ones of a setting the most (a pace taken from the first rows had refused a 500-row
sweep that takes 6 s): a hostile run's 100 values of δ above the shuffle model's covered
10⁻³ at k = 3, β = 0.1, ε = (2, 20) took 34 s for five settings (12 s once the local runs
were shared across δ, 2026-11-29), and is refused."""


def check_sweep_pace(
    started: float, now: float, done: int, left: int, setting_key: str = ""
) -> None:
    """Refuse a setting's block of a sweep that has run :data:`SWEEP_SECONDS_MAX` since it
    ``started`` with ``left`` of its rows planned one by one still to go (``done`` so far;
    each setting has its own budget: a review found a sweep of two protocols alone, 500
    rows each and within the stated row cap, refused on their sum); past the caller's
    deadline (a service's cap per request), :class:`DeadlineExceededError`."""
    check_deadline()
    elapsed = now - started
    if elapsed > SWEEP_SECONDS_MAX and left > 0:
        whose = f" of {setting_key}" if setting_key else ""
        raise InputError(
            "sweep size",
            f"{done + left:,} rows{whose} planned one by one",
            f"a setting's rows within {SWEEP_SECONDS_MAX:g} s of CPU (these had run "
            f"{elapsed:.1f} s with {done:,} of them planned: β < 1/3 below k = 16, 2^53 "
            "users or more, a mixed pair's rows, or a protocol alone, --alone): fewer values",
        )


def check_single_rows(rows: int) -> None:
    """Refuse a sweep with more than :data:`SWEEP_SINGLE_ROWS_MAX` rows planned one by one."""
    if rows > SWEEP_SINGLE_ROWS_MAX:
        raise InputError(
            "sweep size",
            f"{rows:,} rows planned one by one",
            f"at most {SWEEP_SINGLE_ROWS_MAX:,} such rows (β < 1/3, or 2^53 users or more): "
            "fewer values",
        )


def check_validation(
    k: int,
    trials: int,
    families: int,
    n1: int,
    n2: int,
    *,
    user_path: bool,
    messages: tuple[int, int] | None = None,
) -> None:
    """Refuse a validation beyond the limits above, before any instance is built (a
    majority vote is checked through one run: ``n1``, ``n2`` are one run's users, and
    ``messages`` what one trial sends per group, the users' reports and in the shuffle
    model the noise's; None: the users alone). The users are held to
    :data:`SIMULATION_N_MAX`, the messages to the user path's limit: a shuffle check of
    n1 = 10¹⁵ users had been refused as "n1 = 1000000000304320", its messages counted
    as users (a review)."""
    if k > VALIDATION_K_MAX:
        raise InputError("k", k, f"at most {VALIDATION_K_MAX:.0e} to validate")
    for name, size in (("n1", n1), ("n2", n2)):
        if size > SIMULATION_N_MAX:
            raise InputError(name, size, f"an integer in [1, {SIMULATION_N_MAX:.0e}] to simulate")
    check_user_path(trials, *(messages or (n1, n2)), user_path=user_path)
    cells = k * trials * max(families, 1)
    if cells > VALIDATION_CELLS_MAX:
        raise InputError(
            "trials",
            trials,
            f"at most k × trials × families = {VALIDATION_CELLS_MAX:.0e} cells "
            f"(here {k:,} × {trials:,} × {max(families, 1)} = {cells:.2e}): "
            "fewer trials or families (--family)",
        )


def check_vote_sizes(n1: int, n2: int, runs: int) -> None:
    """Refuse group sizes a majority vote of ``runs`` runs cannot be split into (fewer
    users than runs) or that put more than :data:`SIMULATION_N_MAX` users in a run,
    naming the size given: one rule for ``planner validate`` and the service's jobs (a
    review found a job's refusal naming one run's share of a size it was never sent)."""
    for name, size in (("n1", n1), ("n2", n2)):
        if size < runs:
            raise InputError(name, size, f"at least the majority vote's {runs} runs")
        if runs > 1 and size // runs > SIMULATION_N_MAX:
            raise InputError(
                name,
                size,
                f"at most {runs} × {SIMULATION_N_MAX:.0e} (a {runs}-run vote, each run "
                f"simulated with at most {SIMULATION_N_MAX:.0e} users a group)",
            )


def check_user_path(trials: int, messages1: int, messages2: int, *, user_path: bool) -> None:
    """Refuse a user-path validation of more than :data:`USER_PATH_MESSAGES_MAX` trials ×
    messages (it holds every trial's messages at once): one line for the CLI and the
    service's jobs alike."""
    sent = messages1 + messages2
    if user_path and trials * sent > USER_PATH_MESSAGES_MAX:
        raise InputError(
            "path",
            "user",
            f"trials × messages ≤ {USER_PATH_MESSAGES_MAX:.0e} on the user path, the "
            f"messages of one trial being {sent:,} (the users' reports and, in the shuffle "
            f"model, the noise's) (here {trials * sent:.2e}): --path fast, or fewer "
            "trials (--trials, or --max-trials for auto's last look)",
        )


def __getattr__(name: str) -> int:
    """:data:`INPUT_FILE_BYTES_MAX`, the size of a pmf file: the pmf reader's own limit
    (it lives below the planner), imported when asked for (``planner plan`` reads no
    file; PEP 562)."""
    if name != "INPUT_FILE_BYTES_MAX":
        raise AttributeError(f"module 'planner.limits' has no attribute {name!r}")
    from planner.validators.instances import PMF_FILE_BYTES_MAX

    return PMF_FILE_BYTES_MAX


def check_file_size(name: str, path: object, size: int, most: int) -> None:
    """Refuse an input file of more than ``most`` bytes before reading it."""
    if size > most:
        raise InputError(
            name, str(path), f"a file of at most {most // 2**20} MiB (this one: {size:,} bytes)"
        )


def check_batch(solves: int, rows: int, validated: bool, *, table: bool = False) -> None:
    """Refuse a batch over :data:`BATCH_SOLVES_MAX` solve rows, with ``validated`` over
    :data:`BATCH_VALIDATED_MAX` rows, or printed as a ``table`` over
    :data:`TABLE_ROWS_MAX` rows, before any row runs (a table of 1,001 costly rows had
    been refused after 23 s of work)."""
    if solves > BATCH_SOLVES_MAX:
        raise InputError(
            "file", f"{solves:,} solve rows", f"at most {BATCH_SOLVES_MAX:,} solve rows: split it"
        )
    if validated and rows > BATCH_VALIDATED_MAX:
        raise InputError(
            "validate",
            f"{rows:,} rows",
            f"at most {BATCH_VALIDATED_MAX:,} rows to validate in one batch: split the file",
        )
    if table:
        check_table_rows(rows)
