"""Vectorised feature extraction: the evaluation features of N positions at once.

The numpy twin of :func:`engine.kernel.evaluate.features_into`, for tuning data
(Texel fits over recorded positions). Values are White minus Black, in the
order of ``engine.features.FEATURES``; a test proves both agree exactly.
Python loops run over squares, rows or ray steps only, never over positions.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from engine.batch.positions import PositionBatch
from engine.features import N_FEATURES
from engine.geometry import geometry
from engine.kernel.evaluate import (
    F_ADVANCE,
    F_BACK_RANK,
    F_BALANCE,
    F_CENTER_KING,
    F_KING,
    F_KING_APPROACH,
    F_MAIN_DIAGONAL_KING,
    F_MAN,
    F_MOBILITY,
    F_RUNAWAY,
    F_TEMPO,
    F_TRADE,
)
from engine.kernel.tables import (
    M_BOARD,
    M_CENTER,
    M_LEFT_HALF,
    M_MAIN_DIAGONAL,
    M_PROMO_BLACK,
    M_PROMO_WHITE,
    R_START_PIECES,
    T_ADVANCE_PLANES,
    T_COL,
    T_CONE,
    T_DELTAS,
    T_MASKS,
    T_ROW,
    T_ROWMASK,
    kernel_tables,
)
from engine.variants import Variant

U64 = npt.NDArray[np.uint64]
I64 = npt.NDArray[np.int64]


def _count(x: U64) -> I64:
    return np.bitwise_count(x).astype(np.int64)


def _shift(x: U64, delta: int, board: np.uint64) -> U64:
    if delta > 0:
        return (x << np.uint64(delta)) & board
    return (x >> np.uint64(-delta)) & board


def _advance(men: U64, color: int, tab: npt.NDArray[np.int64]) -> I64:
    total = np.zeros(len(men), dtype=np.int64)
    for k in range(4):
        total += (1 << k) * _count(men & np.uint64(tab[T_ADVANCE_PLANES + color * 4 + k]))
    return total


def _most_advanced(men: U64, color: int, size: int, tab: npt.NDArray[np.int64]) -> I64:
    out = np.zeros(len(men), dtype=np.int64)
    found = np.zeros(len(men), dtype=bool)
    for k in range(size):
        row = k if color == 0 else size - 1 - k
        here = ~found & ((men & np.uint64(tab[T_ROWMASK + row])) != 0)
        out[here] = size - 1 - k
        found |= here
    return out


def _quiet_moves(own: U64, kings: U64, empty: U64, color: int, variant: Variant,
                 tab: npt.NDArray[np.int64]) -> I64:
    """Non-capturing moves of one side (men forward, kings short or flying)."""
    board = np.uint64(tab[T_MASKS + M_BOARD])
    men = own & ~kings
    own_kings = own & kings
    n = np.zeros(len(own), dtype=np.int64)
    forward = (0, 1) if color == 0 else (2, 3)
    for d in range(4):
        delta = int(tab[T_DELTAS + d])
        if d in forward:
            n += _count(_shift(men, delta, board) & empty)
        if variant.flying_kings:
            reach = _shift(own_kings, delta, board) & empty
            while reach.any():
                n += _count(reach)
                reach = _shift(reach, delta, board) & empty
        else:
            n += _count(_shift(own_kings, delta, board) & empty)
    return n


def _runaways(men: U64, occupied: U64, color: int, bits: list[int],
              tab: npt.NDArray[np.int64]) -> I64:
    n = np.zeros(len(men), dtype=np.int64)
    for b in bits:
        cone = np.uint64(tab[T_CONE + color * 64 + b])
        n += (((men >> np.uint64(b)) & np.uint64(1)) == 1) & ((occupied & cone) == 0)
    return n


def _approach(kings: U64, targets: U64, bits: list[int], tab: npt.NDArray[np.int64]) -> I64:
    """Summed distance from each king to its nearest target (0 when there is no target)."""
    total = np.zeros(len(kings), dtype=np.int64)
    rows = {b: int(tab[T_ROW + b]) for b in bits}
    cols = {b: int(tab[T_COL + b]) for b in bits}
    for k in bits:
        has_king = ((kings >> np.uint64(k)) & np.uint64(1)) == 1
        if not has_king.any():
            continue
        nearest = np.full(len(kings), 1 << 30, dtype=np.int64)
        for t in bits:
            dist = max(abs(rows[t] - rows[k]), abs(cols[t] - cols[k]))
            here = ((targets >> np.uint64(t)) & np.uint64(1)) == 1
            nearest = np.where(here & (dist < nearest), dist, nearest)
        total += np.where(has_king & (nearest < (1 << 30)), nearest, 0)
    return total


def extract_features(variant: Variant, batch: PositionBatch) -> npt.NDArray[np.float64]:
    """Feature matrix ``[N, N_FEATURES]`` (White minus Black) of every position in ``batch``."""
    tab = kernel_tables(variant).packed
    geo = geometry(variant)
    bits = [int(b) for b in geo.bit_of_square]

    def mask(m: int) -> np.uint64:
        return np.uint64(tab[T_MASKS + m])

    white, black, kings = batch.white, batch.black, batch.kings
    wm, bm = white & ~kings, black & ~kings
    wk, bk = white & kings, black & kings
    occupied = white | black
    out = np.zeros((len(batch), N_FEATURES), dtype=np.float64)
    out[:, F_MAN] = _count(wm) - _count(bm)
    out[:, F_KING] = _count(wk) - _count(bk)
    out[:, F_ADVANCE] = _advance(wm, 0, tab) - _advance(bm, 1, tab)
    out[:, F_BACK_RANK] = _count(wm & mask(M_PROMO_BLACK)) - _count(bm & mask(M_PROMO_WHITE))
    out[:, F_CENTER_KING] = _count(wk & mask(M_CENTER)) - _count(bk & mask(M_CENTER))
    material = (2 * _count(wm) + 3 * _count(wk)) - (2 * _count(bm) + 3 * _count(bk))
    lead = np.sign(material)
    out[:, F_TRADE] = lead * (int(tab[R_START_PIECES]) - _count(occupied))
    approach_white = _approach(wk, black, bits, tab)
    approach_black = _approach(bk, white, bits, tab)
    out[:, F_KING_APPROACH] = np.where(lead > 0, -approach_white, np.where(lead < 0, approach_black, 0))
    empty = mask(M_BOARD) & ~occupied
    out[:, F_MOBILITY] = (_quiet_moves(white, kings, empty, 0, variant, tab)
                          - _quiet_moves(black, kings, empty, 1, variant, tab))
    out[:, F_RUNAWAY] = _runaways(wm, occupied, 0, bits, tab) - _runaways(bm, occupied, 1, bits, tab)
    left = mask(M_LEFT_HALF)
    w_gap = np.abs(_count(wm & left) - _count(wm & ~left))
    b_gap = np.abs(_count(bm & left) - _count(bm & ~left))
    out[:, F_BALANCE] = b_gap - w_gap
    out[:, F_MAIN_DIAGONAL_KING] = _count(wk & mask(M_MAIN_DIAGONAL)) - _count(bk & mask(M_MAIN_DIAGONAL))
    out[:, F_TEMPO] = (_most_advanced(wm, 0, geo.size, tab) - _most_advanced(bm, 1, geo.size, tab))
    return out
