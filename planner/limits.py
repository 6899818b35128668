"""What one request may cost, stated in one place and checked before anything is allocated.

Every limit here bounds a request's memory and running time whatever its inputs: a
request beyond one is refused with one line naming what to lower (an
:class:`~planner.inputs.InputError`, exit code 2 on the command line). The numbers are
measured on one core of a 2-core machine (``benchmarks/fuzz_cli.py`` throws hostile
invocations at all of them):

* a sweep or plot has at most :data:`SWEEP_ROWS_MAX` rows (10^5 rows: ~4 s as CSV,
  ~0.5 GB as JSON) and prints at most :data:`TABLE_ROWS_MAX` of them as a table;
* a validation simulates at most :data:`VALIDATION_CELLS_MAX` (trial × bin) cells,
  k × trials × families (~5·10^6 cells a second), at k ≤ :data:`VALIDATION_K_MAX` (each
  instance holds k-vectors) and n ≤ :data:`SIMULATION_N_MAX` users a group (the fast
  path draws int64 binomial counts that must stay exact in float64);
* the user path holds every trial's messages at once: trials × (n1 + n2) ≤
  :data:`USER_PATH_MESSAGES_MAX`;
* a plan's root-finding: every search (:func:`formulas.search.least_passing`, the
  subsampling inverse) takes O(log) steps; the exact shuffle noise μ sums ≈ 28√μ terms
  ~6 times (ε = 1e-4, δ = 1e-12: μ = 5·10^9, 2·10^6 terms, ~1 s), and ε ≥ 1e-4 and
  α ≥ 1e-6 (:mod:`planner.inputs`) bound every size a plan computes;
* a batch file holds at most :data:`BATCH_SCENARIOS_MAX` scenarios and, like a pmf
  file, at most :data:`INPUT_FILE_BYTES_MAX` bytes.
"""

from __future__ import annotations

from planner.inputs import InputError
from validators.instances import PMF_FILE_BYTES_MAX

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
BATCH_SCENARIOS_MAX = 10_000
"""Scenarios in one batch file."""
INPUT_FILE_BYTES_MAX = PMF_FILE_BYTES_MAX
"""Size of a batch or pmf file read whole (the pmf reader lives below the planner)."""


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


def check_validation(
    k: int, trials: int, families: int, n1: int, n2: int, *, user_path: bool
) -> None:
    """Refuse a validation beyond the limits above, before any instance is built."""
    if k > VALIDATION_K_MAX:
        raise InputError("k", k, f"at most {VALIDATION_K_MAX:.0e} to validate")
    for name, size in (("n1", n1), ("n2", n2)):
        if size > SIMULATION_N_MAX:
            raise InputError(name, size, f"an integer in [1, {SIMULATION_N_MAX:.0e}] to simulate")
    cells = k * trials * max(families, 1)
    if cells > VALIDATION_CELLS_MAX:
        raise InputError(
            "trials",
            trials,
            f"at most k × trials × families = {VALIDATION_CELLS_MAX:.0e} cells "
            f"(here {cells:.2e}): fewer trials or families",
        )
    if user_path and trials * (n1 + n2) > USER_PATH_MESSAGES_MAX:
        raise InputError(
            "path",
            "user",
            f"trials × (n1 + n2) ≤ {USER_PATH_MESSAGES_MAX:.0e} on the user path "
            f"(here {trials * (n1 + n2):.2e}): --path fast or fewer trials",
        )


def check_file_size(name: str, path: object, size: int) -> None:
    """Refuse an input file of more than :data:`INPUT_FILE_BYTES_MAX` bytes before reading it."""
    if size > INPUT_FILE_BYTES_MAX:
        raise InputError(name, str(path), f"a file of at most {INPUT_FILE_BYTES_MAX // 2**20} MiB")
