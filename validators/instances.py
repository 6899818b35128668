"""Instance families for validation (README), and user-supplied pmf files.

A family builds a pair (p, q) over [k] for a distance α: null families have p = q;
far families have TV(p, q) ≥ α, and report the exact TV. A family that cannot be
built at some (k, α) (e.g. Paninski needs α ≤ 1/2) returns None and is reported as
not applicable, never silently dropped.
"""

from __future__ import annotations

import array
import math
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

import numpy as np


class Kind(StrEnum):
    NULL = "null"
    FAR = "far"


@dataclass(frozen=True)
class Instance:
    family: str
    kind: Kind
    p: np.ndarray
    q: np.ndarray

    @property
    def tv(self) -> float:
        """Exact total-variation distance ½‖p − q‖₁."""
        return 0.5 * float(np.abs(self.p - self.q).sum())


Builder = Callable[[int, float], tuple[np.ndarray, np.ndarray] | None]


def _normalised(weights: np.ndarray) -> np.ndarray:
    return weights / weights.sum()


def zipf(k: int, exponent: float) -> np.ndarray:
    return _normalised(1.0 / np.arange(1, k + 1) ** exponent)


def _same(pmf: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return pmf, pmf.copy()


def _uniform(k: int, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    return _same(np.full(k, 1.0 / k))


def _one_heavy(k: int, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    pmf = np.full(k, 0.5 / (k - 1))
    pmf[0] = 0.5
    return _same(pmf)


def _few_heavy_many_light(k: int, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    heavy = max(1, min(k - 1, round(k ** (1 / 3))))
    pmf = np.full(k, 0.5 / (k - heavy))
    pmf[:heavy] = 0.5 / heavy
    return _same(pmf)


def _point_mass_heavy(k: int, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    pmf = np.full(k, 0.05 / (k - 1))
    pmf[0] = 0.95
    return _same(pmf)


def _paninski(k: int, alpha: float) -> tuple[np.ndarray, np.ndarray] | None:
    """Paninski's pair: p uniform, q = 1/k ± 2α/paired on alternate paired elements.

    The difference is spread evenly over every paired element: the smallest ℓ2 distance
    a TV of α allows, the hardest pair for the ℓ2-type statistics. Built up to
    α = paired/2k (about 1/2), where q reaches 0 on half the elements.
    """
    paired = k - k % 2
    step = 2 * alpha / paired  # each paired element moves by step, TV = paired·step/2 = α
    if paired == 0 or step > 1.0 / k:
        return None
    p = np.full(k, 1.0 / k)
    q = p.copy()
    q[0:paired:2] += step
    q[1:paired:2] -= step
    return p, q


def _paninski_symmetric(k: int, alpha: float) -> tuple[np.ndarray, np.ndarray] | None:
    """The same spread difference with p and q mirror images about the uniform pmf.

    Both keep (1 − α)/k everywhere and put the rest, α, on alternate elements: p spread
    over the even ones, q over the odd ones. At an even k, p, q = (1 ± α)/k and each
    element differs by 2α/k, as in ``paninski``; at an odd k every element differs too
    (α/⌈k/2⌉ on the even ones, α/⌊k/2⌋ on the odd ones), none is left equal. TV is exactly
    α up to α = 1. Neither pair is the harder one for every tester: Paninski's q
    approaches 0 on half its elements as α nears 1/2, where this pair's counts stay alike
    on every element. Reviews found plans failing this pair before it was a family
    (central, k = 4, α = 0.5, ε = (2, 2), 13 + 13 users: 0.35) and before it covered
    every element at an odd k (shuffle private, k = 5, α = 0.5, ε = (10, 10): 0.36).
    """
    if k < 2:
        return None
    p = np.full(k, (1.0 - alpha) / k)
    q = p.copy()
    p[0::2] += alpha / len(p[0::2])
    q[1::2] += alpha / len(q[1::2])
    return p, q


def _perturbed_zipf(k: int, alpha: float) -> tuple[np.ndarray, np.ndarray] | None:
    """p = Zipf(1); q moves mass c·min(p_i, p_{i+1}) inside adjacent pairs, TV = α."""
    p = zipf(k, 1.0)
    paired = k - k % 2
    movable = np.minimum(p[0:paired:2], p[1:paired:2])
    scale = alpha / movable.sum()
    if scale > 1.0:
        return None
    q = p.copy()
    q[0:paired:2] -= scale * movable
    q[1:paired:2] += scale * movable
    return p, q


def _light_difference(k: int, alpha: float) -> tuple[np.ndarray, np.ndarray] | None:
    """Shared heavy-ish half; p and q each put mass α on *disjoint* light quarters.

    The difference is spread over light elements: the k^{2/3}/α^{4/3} regime, where
    only collisions among light elements reveal it.
    """
    if k < 4 or alpha >= 1.0:
        return None
    common = k // 2
    quarter = (k - common) // 2
    p = np.zeros(k)
    q = np.zeros(k)
    p[:common] = q[:common] = (1 - alpha) / common
    p[common : common + quarter] = alpha / quarter
    q[common + quarter : common + 2 * quarter] = alpha / quarter
    return p, q


def _heavy_difference(k: int, alpha: float) -> tuple[np.ndarray, np.ndarray] | None:
    """Four heavy elements carry the whole difference (+, +, −, − swapped between p, q).

    A random hash onto L = 2 bins cancels it with probability 3/8 (README).
    """
    if k < 5 or alpha > 0.5:
        return None
    base = np.full(k, 0.5 / (k - 4))
    base[:4] = 0.125
    shift = np.array([1, 1, -1, -1]) * alpha / 4
    p, q = base.copy(), base.copy()
    p[:4] += shift
    q[:4] -= shift
    return p, q


def _heavy_null_light_difference(k: int, alpha: float) -> tuple[np.ndarray, np.ndarray] | None:
    """Half the mass on one shared bin; on the light rest, p and q mirror images.

    Both put 1/2 on element 0. On the other k − 1 elements they are ``paninski_symmetric``'s
    pair at a TV of 2α, scaled to the remaining 1/2: the whole difference sits where both
    are light. An unweighted ℓ2 statistic's null spread is set by ‖p‖₂, which the heavy
    element makes large, so it misses this difference at low noise; χ² weights do not
    (docs/method.md, "Why χ² weights"). A review found plans of the ℓ2 channels failing a
    pair of this kind (local private, k = 1000, α = 0.2, ε = (8, 8), 1,619 users a group:
    error 0.82). Built up to α = 1/2, where the light parts are disjoint.
    """
    if k < 3 or alpha > 0.5:
        return None
    light = _paninski_symmetric(k - 1, 2.0 * alpha)
    if light is None:
        return None
    p = np.concatenate(([0.5], 0.5 * light[0]))
    q = np.concatenate(([0.5], 0.5 * light[1]))
    return p, q


FAMILIES: dict[str, tuple[Kind, Builder]] = {
    "uniform": (Kind.NULL, _uniform),
    "zipf-0.5": (Kind.NULL, lambda k, a: _same(zipf(k, 0.5))),
    "zipf-1": (Kind.NULL, lambda k, a: _same(zipf(k, 1.0))),
    "zipf-1.5": (Kind.NULL, lambda k, a: _same(zipf(k, 1.5))),
    "one-heavy": (Kind.NULL, _one_heavy),
    "few-heavy-many-light": (Kind.NULL, _few_heavy_many_light),
    "point-mass-heavy": (Kind.NULL, _point_mass_heavy),
    "paninski": (Kind.FAR, _paninski),
    "paninski-symmetric": (Kind.FAR, _paninski_symmetric),
    "perturbed-zipf": (Kind.FAR, _perturbed_zipf),
    "light-difference": (Kind.FAR, _light_difference),
    "heavy-difference": (Kind.FAR, _heavy_difference),
    "heavy-null-light-difference": (Kind.FAR, _heavy_null_light_difference),
}


def build(family: str, k: int, alpha: float) -> Instance | None:
    """The family's instance at (k, α), or None where it cannot be built."""
    kind, builder = FAMILIES[family]
    pair = builder(k, alpha)
    if pair is None:
        return None
    p, q = (np.clip(x, 0.0, None) for x in pair)
    instance = Instance(family, kind, _normalised(p), _normalised(q))
    if kind is Kind.FAR and instance.tv < alpha * (1 - 1e-9):
        raise AssertionError(f"family {family} built TV {instance.tv} < α = {alpha}")
    return instance


PMF_FILE_BYTES_MAX = 64 * 2**20
"""A pmf file is at most this many bytes (listed in ``planner.limits``). It is read in
chunks of :data:`PMF_CHUNK_CHARS` into an array of 8 bytes a value (at most k values when
k is known): whole, its text, tokens and Python floats had cost ~29× its size (1.9 GB for
a 64 MiB CSV)."""
PMF_CHUNK_CHARS = 1 << 18
_JSON_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
_JSON_TOKENS = re.compile(r"[\[\],]|[^\s\[\],]+")


class PmfFileError(ValueError):
    """A user pmf file that cannot be used; ``str()`` is the one line shown to users.
    ``side``: which file of a pair (``"p"`` or ``"q"``; None: the pair, or one file read
    alone), set by :func:`file_instance`."""

    side: str | None = None


class PmfSizeError(PmfFileError):
    """A pmf file whose number of values is not the k asked for: ``count`` values, or
    (None) more than k, read no further than its first value beyond k."""

    def __init__(self, path: Path, k: int, count: int | None) -> None:
        self.path, self.k, self.count = path, k, count
        held = f"more than {k:,}" if count is None else f"{count:,}"
        super().__init__(f"pmf file {path}: holds {held} values, not k = {k:,}")


class _Values:
    """Floats appended into an 8-byte-a-value array: at most ``k`` of them when ``k`` is
    given (:class:`PmfSizeError` at the first beyond it)."""

    def __init__(self, path: Path, k: int | None) -> None:
        self.path, self.k = path, k
        self.data = array.array("d")

    def add(self, tokens: list[str]) -> None:
        if self.k is not None and len(self.data) + len(tokens) > self.k:
            raise PmfSizeError(self.path, self.k, None)
        self.data.extend(float(token) for token in tokens)

    def as_array(self) -> np.ndarray:
        return np.frombuffer(self.data, dtype=float).copy() if self.data else np.zeros(0)


def _chunks(path: Path) -> Iterator[str]:
    """The file's text (UTF-8, a byte order mark dropped) in pieces that end between
    tokens: a token cut by a chunk's end is carried into the next piece."""
    carried = ""
    with open(path, encoding="utf-8-sig") as stream:
        while chunk := stream.read(PMF_CHUNK_CHARS):
            text = carried + chunk
            cut = max(text.rfind(mark) for mark in (" ", "\n", "\r", "\t", ",", "[", "]"))
            if cut < 0:
                carried = text
                if len(carried) > PMF_CHUNK_CHARS:  # one "value" of a mebibyte
                    raise ValueError("a value longer than 1 MiB")
                continue
            carried = text[cut + 1 :]
            yield text[: cut + 1]
    if carried:
        yield carried


def _csv_values(path: Path, values: _Values) -> None:
    for text in _chunks(path):
        values.add(text.replace(",", " ").split())


def _json_values(path: Path, values: _Values) -> None:
    """A JSON list of numbers, checked token by token (``[`` numbers and commas ``]``)."""
    refused = PmfFileError(f"pmf file {path}: must hold a JSON list of numbers")
    state = "start"  # start, first (a value or ]), value, comma (a , or ]), end
    for text in _chunks(path):
        numbers: list[str] = []
        for token in _JSON_TOKENS.findall(text):
            if state == "start" and token == "[":
                state = "first"
            elif state in ("first", "value") and _JSON_NUMBER.fullmatch(token):
                numbers.append(token)
                state = "comma"
            elif (state == "first" or state == "comma") and token == "]":
                state = "end"
            elif state == "comma" and token == ",":
                state = "value"
            else:
                raise refused
        values.add(numbers)
    if state != "end":
        raise refused


def load_pmf(
    path: str | Path, *, normalize: bool = False, tolerance: float = 1e-9, k: int | None = None
) -> np.ndarray:
    """Read a pmf from CSV (one value per line or comma-separated), JSON (a list) or NPY.

    It must be finite and non-negative and sum to 1 within ``tolerance``; with
    ``normalize`` a positive total is rescaled to 1 first. With ``k``, a file of any other
    number of values is a :class:`PmfSizeError`, raised at its first value beyond k (an
    NPY file's at its header), before anything else is read or checked.
    """
    try:  # a name too long for the file system raises here
        path = Path(path)
        regular = path.is_file()
    except (OSError, TypeError, ValueError) as error:
        reason = getattr(error, "strerror", None) or type(error).__name__
        raise PmfFileError(f"pmf file {path}: cannot read it ({reason})") from None
    if not regular:  # a folder, a device (/dev/zero never ends), a FIFO, nothing
        what = "not a regular file" if path.exists() else "no such file"
        raise PmfFileError(f"pmf file {path}: {what}")
    try:
        if path.stat().st_size > PMF_FILE_BYTES_MAX:
            raise PmfFileError(f"pmf file {path}: larger than {PMF_FILE_BYTES_MAX // 2**20} MiB")
        suffix = path.suffix.lower()
        if suffix == ".npy":
            # memory-mapped first: a header declaring more data than the file holds is
            # refused (a ValueError) before any allocation, then the data is copied in
            mapped = np.load(path, allow_pickle=False, mmap_mode="r")
            if mapped.dtype.kind not in "biuf":  # structured, complex, text, objects
                raise PmfFileError(f"pmf file {path}: must hold real numbers ({mapped.dtype})")
            if k is not None and mapped.ndim == 1 and mapped.size != k:
                raise PmfSizeError(path, k, mapped.size if mapped.size < k else None)
            values = np.array(mapped)
        elif suffix in (".json", ".csv", ".txt"):
            read = _Values(path, k)
            (_json_values if suffix == ".json" else _csv_values)(path, read)
            values = read.as_array()
        else:
            raise PmfFileError(f"pmf file {path}: unknown format (use .csv, .json or .npy)")
    except PmfFileError:
        raise
    except (OSError, ValueError, TypeError, OverflowError, RecursionError, MemoryError) as error:
        # OverflowError: an integer beyond float64; RecursionError: deeply nested JSON
        reason = " ".join(str(error).split())[:120] or type(error).__name__
        raise PmfFileError(f"pmf file {path}: cannot read it ({reason})") from None
    values = np.asarray(values, dtype=float)
    if values.ndim != 1 or values.size < 2:
        raise PmfFileError(f"pmf file {path}: must hold a flat list of at least 2 numbers")
    if k is not None and values.size != k:
        raise PmfSizeError(path, k, values.size)
    if not np.all(np.isfinite(values)):
        raise PmfFileError(f"pmf file {path}: values must be finite")
    if np.any(values < 0):
        raise PmfFileError(f"pmf file {path}: values must be non-negative")
    total = float(values.sum())
    if normalize and total > 0:
        values = values / total
        total = 1.0
    if not math.isclose(total, 1.0, rel_tol=0.0, abs_tol=tolerance):
        raise PmfFileError(
            f"pmf file {path}: values sum to {total!r}, not 1 within "
            f"{tolerance:g} (pass --normalize to rescale)"
        )
    return values


def file_instance(
    p_path: str | Path, q_path: str | Path, *, normalize: bool = False, k: int | None = None
) -> Instance:
    """A user-supplied pair; null if the two pmfs are equal, far otherwise. With ``k``,
    each file must hold k values (:class:`PmfSizeError`, read no further than k)."""
    loaded = []
    for side, path in (("p", p_path), ("q", q_path)):
        try:
            loaded.append(load_pmf(path, normalize=normalize, k=k))
        except PmfFileError as error:
            error.side = side  # the two may share a name (a review: p's fault named q)
            raise
    p, q = loaded
    if p.size != q.size:
        raise PmfFileError(f"pmf files have different k: {p.size} and {q.size}")
    kind = Kind.NULL if np.array_equal(p, q) else Kind.FAR
    return Instance(f"file:{Path(p_path).name}|{Path(q_path).name}", kind, p, q)
