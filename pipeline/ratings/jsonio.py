"""Strict JSON helpers for the ratings layer's result files: exact key sets and compact matrices.

Readers check every object's keys against the set they expect (an unknown or a missing key is a
one-line :class:`RatingsError` naming it and the source), and matrices of floats travel as
base64 of little-endian float64 bytes with their shape, so a round trip is exact and a matrix
of a thousand bootstrap rows stays a single short string. Nothing read is executed.
"""

from __future__ import annotations

import base64
import binascii
import math
from collections.abc import Iterable
from typing import Any

import numpy as np
from numpy.typing import NDArray

from engine.errors import quote
from pipeline.ratings.errors import RatingsError

#: The one matrix encoding written and read.
MATRIX_ENCODING = "base64-float64-le"


def check_keys(data: Any, expected: Iterable[str], where: str) -> dict[str, Any]:
    """``data`` as a dict with exactly the ``expected`` keys, else a one-line error naming the odd ones."""
    if not isinstance(data, dict):
        raise RatingsError(f"{where}: expected a JSON object, got {quote(data)}")
    want = set(expected)
    missing, extra = sorted(want - set(data)), sorted(set(data) - want)
    if missing or extra:
        parts = [f"missing key(s) {missing}"] if missing else []
        parts += [f"unknown key(s) {extra}"] if extra else []
        raise RatingsError(f"{where}: {'; '.join(parts)}")
    return data


def get_float(data: dict[str, Any], key: str, where: str, *, finite: bool = True) -> float:
    """A JSON number (not a bool); ``finite=False`` also accepts null as NaN."""
    value = data[key]
    if value is None and not finite:
        return math.nan
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise RatingsError(f"{where}.{key} must be a number, got {quote(value)}")
    if finite and not math.isfinite(value):
        raise RatingsError(f"{where}.{key} must be finite, got {value!r}")
    return float(value)


def get_int(data: dict[str, Any], key: str, where: str, *, minimum: int = 0) -> int:
    value = data[key]
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise RatingsError(f"{where}.{key} must be an integer >= {minimum}, got {quote(value)}")
    return value


def get_str(data: dict[str, Any], key: str, where: str) -> str:
    value = data[key]
    if not isinstance(value, str) or not value:
        raise RatingsError(f"{where}.{key} must be a non-empty string, got {quote(value)}")
    return value


def get_list(data: dict[str, Any], key: str, where: str) -> list[Any]:
    value = data[key]
    if not isinstance(value, list):
        raise RatingsError(f"{where}.{key} must be a list, got {quote(value)}")
    return value


def float_list(values: NDArray[np.float64]) -> list[float | None]:
    """Floats for JSON (which has no infinity or NaN): non-finite values become null."""
    return [float(v) if math.isfinite(v) else None for v in np.asarray(values, dtype=np.float64).tolist()]


def floats_from_json(data: dict[str, Any], key: str, where: str, length: int) -> NDArray[np.float64]:
    """A list of ``length`` finite numbers as a float64 array."""
    items = get_list(data, key, where)
    if len(items) != length:
        raise RatingsError(f"{where}.{key} must hold {length} numbers, got {len(items)}")
    out = np.empty(length)
    for i, v in enumerate(items):
        if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v):
            raise RatingsError(f"{where}.{key}[{i}] must be a finite number, got {quote(v)}")
        out[i] = v
    return out


def matrix_to_json(matrix: NDArray[np.float64]) -> dict[str, Any]:
    """A 2-D float matrix as ``{"encoding", "shape", "data"}`` (base64 of float64 little-endian)."""
    arr = np.ascontiguousarray(matrix, dtype="<f8")
    if arr.ndim != 2:
        raise RatingsError(f"only 2-D matrices are encoded, got shape {arr.shape}")
    return {"encoding": MATRIX_ENCODING, "shape": list(arr.shape),
            "data": base64.b64encode(arr.tobytes()).decode("ascii")}


def matrix_from_json(data: Any, where: str, *, columns: int) -> NDArray[np.float64]:
    """The matrix :func:`matrix_to_json` wrote, checked to have ``columns`` columns and finite values."""
    obj = check_keys(data, ("encoding", "shape", "data"), where)
    if obj["encoding"] != MATRIX_ENCODING:
        raise RatingsError(f"{where}.encoding must be {MATRIX_ENCODING!r}, got {quote(obj['encoding'])}")
    shape = obj["shape"]
    if (not isinstance(shape, list) or len(shape) != 2
            or not all(isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in shape)):
        raise RatingsError(f"{where}.shape must be [rows, columns], got {quote(shape)}")
    if shape[1] != columns:
        raise RatingsError(f"{where}.shape has {shape[1]} columns, expected {columns}")
    if not isinstance(obj["data"], str):
        raise RatingsError(f"{where}.data must be a base64 string, got {quote(obj['data'])}")
    try:
        raw = base64.b64decode(obj["data"].encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError) as err:
        raise RatingsError(f"{where}.data is not valid base64 ({err})") from None
    if len(raw) != 8 * shape[0] * shape[1]:
        raise RatingsError(f"{where}.data holds {len(raw)} bytes, expected {8 * shape[0] * shape[1]} "
                           f"for shape {shape}")
    out = np.frombuffer(raw, dtype="<f8").reshape(shape).astype(np.float64)
    if not np.all(np.isfinite(out)):
        raise RatingsError(f"{where}.data holds non-finite values")
    return out


def readonly(arr: NDArray[Any]) -> NDArray[Any]:
    """A copy of ``arr`` that cannot be written (the result dataclasses are frozen all the way down)."""
    out = np.array(arr, copy=True)
    out.flags.writeable = False
    return out
