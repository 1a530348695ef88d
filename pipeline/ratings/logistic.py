"""Logistic Elo <-> expected score conversions.

One Elo point is ``ln(10) / 400`` natural-log odds units: a difference of ``d`` Elo gives the
stronger side an expected score of ``1 / (1 + 10 ** (-d / 400))``. Both functions work on floats
and on numpy arrays (element-wise) and return the same kind they were given.
"""

from __future__ import annotations

import math
from typing import overload

import numpy as np
from numpy.typing import NDArray

from pipeline.ratings.errors import RatingsError

#: Natural-log odds units per Elo point (ln 10 / 400).
NATS_PER_ELO = math.log(10.0) / 400.0

FloatArray = NDArray[np.float64]


@overload
def elo_to_score(elo: float) -> float: ...
@overload
def elo_to_score(elo: FloatArray) -> FloatArray: ...
def elo_to_score(elo: float | FloatArray) -> float | FloatArray:
    """Expected score (0..1) of a player ``elo`` logistic-Elo points stronger than the opponent."""
    arr = np.asarray(elo, dtype=np.float64)
    if np.isnan(arr).any():
        raise RatingsError(f"Elo difference is NaN: {elo!r}")
    # 0.5 * (1 + tanh(x / 2)) is the overflow-free logistic.
    out = 0.5 * (1.0 + np.tanh(0.5 * NATS_PER_ELO * arr))
    return float(out) if np.ndim(elo) == 0 else out


@overload
def score_to_elo(score: float) -> float: ...
@overload
def score_to_elo(score: FloatArray) -> FloatArray: ...
def score_to_elo(score: float | FloatArray) -> float | FloatArray:
    """Logistic Elo difference that yields expected ``score``.

    A score of exactly 0 or 1 maps to -inf / +inf (the logistic never reaches them); a score
    outside [0, 1] or NaN raises :class:`RatingsError` instead of returning NaN.
    """
    arr = np.asarray(score, dtype=np.float64)
    bad = ~((arr >= 0.0) & (arr <= 1.0))
    if bad.any():
        raise RatingsError(f"score must lie in [0, 1], got {score!r}")
    with np.errstate(divide="ignore"):
        out = (np.log(arr) - np.log1p(-arr)) / NATS_PER_ELO
    return float(out) if np.ndim(score) == 0 else out
