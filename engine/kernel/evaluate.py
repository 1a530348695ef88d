"""Scalar evaluation: a weighted sum of the features declared in engine.features.

Each feature is computed White-minus-Black by one small inline function; the
feature vector (for tests, tuning data) and the score (for the search) use the
same functions, and the score skips every feature whose weight is zero.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from engine.kernel.bits import ONE, ZERO, lowest_bit, popcount
from engine.kernel.jit import njit
from engine.kernel.movegen import count_quiet
from engine.kernel.tables import (
    M_CENTER,
    M_LEFT_HALF,
    M_MAIN_DIAGONAL,
    M_PROMO_BLACK,
    M_PROMO_WHITE,
    R_SIZE,
    R_START_PIECES,
    T_ADVANCE_PLANES,
    T_COL,
    T_CONE,
    T_MASKS,
    T_ROW,
    T_ROWMASK,
)

F_MAN = 0
F_KING = 1
F_ADVANCE = 2
F_BACK_RANK = 3
F_CENTER_KING = 4
F_TRADE = 5
F_KING_APPROACH = 6
F_MOBILITY = 7
F_RUNAWAY = 8
F_BALANCE = 9
F_MAIN_DIAGONAL_KING = 10
F_TEMPO = 11
N_FEATURES = 12


@njit(inline="always", cache=True)
def _mask(tab: npt.NDArray[np.int64], m: int) -> np.uint64:
    return np.uint64(tab[T_MASKS + m])


@njit(inline="always", cache=True)
def _advance(men: np.uint64, color: int, tab: npt.NDArray[np.int64]) -> int:
    """Rows advanced from the own back row, summed over ``men`` (by bit planes)."""
    base = T_ADVANCE_PLANES + color * 4
    return (popcount(men & np.uint64(tab[base])) + 2 * popcount(men & np.uint64(tab[base + 1]))
            + 4 * popcount(men & np.uint64(tab[base + 2])) + 8 * popcount(men & np.uint64(tab[base + 3])))


@njit(inline="always", cache=True)
def _most_advanced(men: np.uint64, color: int, tab: npt.NDArray[np.int64]) -> int:
    """Rows advanced by the furthest man (0 without men)."""
    size = tab[R_SIZE]
    for k in range(size):
        r = k if color == 0 else size - 1 - k
        if (men & np.uint64(tab[T_ROWMASK + r])) != ZERO:
            return int(size - 1 - k)
    return 0


@njit(inline="always", cache=True)
def _runaways(men: np.uint64, occupied: np.uint64, color: int, tab: npt.NDArray[np.int64]) -> int:
    """Men with nothing in the cone of squares ahead of them."""
    n = 0
    rest = men
    while rest != ZERO:
        b = lowest_bit(rest)
        rest &= rest - ONE
        if (np.uint64(tab[T_CONE + color * 64 + b]) & occupied) == ZERO:
            n += 1
    return n


@njit(inline="always", cache=True)
def _approach(kings: np.uint64, targets: np.uint64, tab: npt.NDArray[np.int64]) -> int:
    """Summed distance (max of row and column gaps) from each king to its nearest target."""
    total = 0
    rest = kings
    while rest != ZERO:
        k = lowest_bit(rest)
        rest &= rest - ONE
        kr = tab[T_ROW + k]
        kc = tab[T_COL + k]
        best = 1 << 30
        others = targets
        while others != ZERO:
            t = lowest_bit(others)
            others &= others - ONE
            dist = max(abs(tab[T_ROW + t] - kr), abs(tab[T_COL + t] - kc))
            if dist < best:
                best = dist
        if best < (1 << 30):
            total += best
    return total


@njit(inline="always", cache=True)
def _lead(white: np.uint64, black: np.uint64, kings: np.uint64) -> int:
    """+1 if White leads in material (man 2, king 3), -1 if Black does, else 0."""
    w = 2 * popcount(white & ~kings) + 3 * popcount(white & kings)
    b = 2 * popcount(black & ~kings) + 3 * popcount(black & kings)
    if w > b:
        return 1
    if b > w:
        return -1
    return 0


@njit(inline="always", cache=True)
def _f_man(white: np.uint64, black: np.uint64, kings: np.uint64, tab: npt.NDArray[np.int64]) -> int:
    return popcount(white & ~kings) - popcount(black & ~kings)


@njit(inline="always", cache=True)
def _f_king(white: np.uint64, black: np.uint64, kings: np.uint64, tab: npt.NDArray[np.int64]) -> int:
    return popcount(white & kings) - popcount(black & kings)


@njit(inline="always", cache=True)
def _f_advance(white: np.uint64, black: np.uint64, kings: np.uint64, tab: npt.NDArray[np.int64]) -> int:
    return _advance(white & ~kings, 0, tab) - _advance(black & ~kings, 1, tab)


@njit(inline="always", cache=True)
def _f_back_rank(white: np.uint64, black: np.uint64, kings: np.uint64,
                 tab: npt.NDArray[np.int64]) -> int:
    # a man's own back row is the row where the opponent's men are crowned
    return (popcount(white & ~kings & _mask(tab, M_PROMO_BLACK))
            - popcount(black & ~kings & _mask(tab, M_PROMO_WHITE)))


@njit(inline="always", cache=True)
def _f_center_king(white: np.uint64, black: np.uint64, kings: np.uint64,
                   tab: npt.NDArray[np.int64]) -> int:
    centre = _mask(tab, M_CENTER)
    return popcount(white & kings & centre) - popcount(black & kings & centre)


@njit(inline="always", cache=True)
def _f_trade(white: np.uint64, black: np.uint64, kings: np.uint64, tab: npt.NDArray[np.int64]) -> int:
    return int(_lead(white, black, kings) * (tab[R_START_PIECES] - popcount(white | black)))


@njit(inline="always", cache=True)
def _f_king_approach(white: np.uint64, black: np.uint64, kings: np.uint64,
                     tab: npt.NDArray[np.int64]) -> int:
    if (kings & (white | black)) == ZERO:
        return 0
    lead = _lead(white, black, kings)
    if lead > 0:
        return -_approach(white & kings, black, tab)
    if lead < 0:
        return _approach(black & kings, white, tab)
    return 0


@njit(inline="always", cache=True)
def _f_mobility(white: np.uint64, black: np.uint64, kings: np.uint64, tab: npt.NDArray[np.int64]) -> int:
    empty = np.uint64(tab[T_MASKS]) & ~(white | black)
    return count_quiet(white, kings, empty, 0, tab) - count_quiet(black, kings, empty, 1, tab)


@njit(inline="always", cache=True)
def _f_runaway(white: np.uint64, black: np.uint64, kings: np.uint64, tab: npt.NDArray[np.int64]) -> int:
    occupied = white | black
    return _runaways(white & ~kings, occupied, 0, tab) - _runaways(black & ~kings, occupied, 1, tab)


@njit(inline="always", cache=True)
def _f_balance(white: np.uint64, black: np.uint64, kings: np.uint64, tab: npt.NDArray[np.int64]) -> int:
    left = _mask(tab, M_LEFT_HALF)
    wm = white & ~kings
    bm = black & ~kings
    w_gap = abs(popcount(wm & left) - popcount(wm & ~left))
    b_gap = abs(popcount(bm & left) - popcount(bm & ~left))
    return b_gap - w_gap


@njit(inline="always", cache=True)
def _f_main_diagonal_king(white: np.uint64, black: np.uint64, kings: np.uint64,
                          tab: npt.NDArray[np.int64]) -> int:
    diagonal = _mask(tab, M_MAIN_DIAGONAL)
    return popcount(white & kings & diagonal) - popcount(black & kings & diagonal)


@njit(inline="always", cache=True)
def _f_tempo(white: np.uint64, black: np.uint64, kings: np.uint64, tab: npt.NDArray[np.int64]) -> int:
    return _most_advanced(white & ~kings, 0, tab) - _most_advanced(black & ~kings, 1, tab)


@njit(cache=True)
def feature_value(
    f: int, white: np.uint64, black: np.uint64, kings: np.uint64, tab: npt.NDArray[np.int64]
) -> int:
    """Feature ``f`` of the position, White minus Black."""
    if f == F_MAN:
        return _f_man(white, black, kings, tab)
    if f == F_KING:
        return _f_king(white, black, kings, tab)
    if f == F_ADVANCE:
        return _f_advance(white, black, kings, tab)
    if f == F_BACK_RANK:
        return _f_back_rank(white, black, kings, tab)
    if f == F_CENTER_KING:
        return _f_center_king(white, black, kings, tab)
    if f == F_TRADE:
        return _f_trade(white, black, kings, tab)
    if f == F_KING_APPROACH:
        return _f_king_approach(white, black, kings, tab)
    if f == F_MOBILITY:
        return _f_mobility(white, black, kings, tab)
    if f == F_RUNAWAY:
        return _f_runaway(white, black, kings, tab)
    if f == F_BALANCE:
        return _f_balance(white, black, kings, tab)
    if f == F_MAIN_DIAGONAL_KING:
        return _f_main_diagonal_king(white, black, kings, tab)
    if f == F_TEMPO:
        return _f_tempo(white, black, kings, tab)
    return 0


@njit(cache=True)
def features_into(
    white: np.uint64, black: np.uint64, kings: np.uint64, tab: npt.NDArray[np.int64],
    out: npt.NDArray[np.float64],
) -> None:
    """Write every feature (White minus Black) into ``out``."""
    for f in range(N_FEATURES):
        out[f] = feature_value(f, white, black, kings, tab)


@njit(cache=True)
def evaluate(
    white: np.uint64, black: np.uint64, kings: np.uint64, side: int,
    tab: npt.NDArray[np.int64], weights: npt.NDArray[np.float64],
) -> int:
    """The score for the side to move: round(weights . features), sign-flipped for Black.

    Written out feature by feature (same helpers as ``feature_value``) so the
    compiler sees straight-line code; features with weight 0 are skipped.
    """
    total = weights[F_MAN] * _f_man(white, black, kings, tab)
    total += weights[F_KING] * _f_king(white, black, kings, tab)
    if weights[F_ADVANCE] != 0.0:
        total += weights[F_ADVANCE] * _f_advance(white, black, kings, tab)
    if weights[F_BACK_RANK] != 0.0:
        total += weights[F_BACK_RANK] * _f_back_rank(white, black, kings, tab)
    if weights[F_CENTER_KING] != 0.0:
        total += weights[F_CENTER_KING] * _f_center_king(white, black, kings, tab)
    if weights[F_TRADE] != 0.0:
        total += weights[F_TRADE] * _f_trade(white, black, kings, tab)
    if weights[F_KING_APPROACH] != 0.0:
        total += weights[F_KING_APPROACH] * _f_king_approach(white, black, kings, tab)
    if weights[F_MOBILITY] != 0.0:
        total += weights[F_MOBILITY] * _f_mobility(white, black, kings, tab)
    if weights[F_RUNAWAY] != 0.0:
        total += weights[F_RUNAWAY] * _f_runaway(white, black, kings, tab)
    if weights[F_BALANCE] != 0.0:
        total += weights[F_BALANCE] * _f_balance(white, black, kings, tab)
    if weights[F_MAIN_DIAGONAL_KING] != 0.0:
        total += weights[F_MAIN_DIAGONAL_KING] * _f_main_diagonal_king(white, black, kings, tab)
    if weights[F_TEMPO] != 0.0:
        total += weights[F_TEMPO] * _f_tempo(white, black, kings, tab)
    score = int(np.round(total))
    return score if side == 0 else -score
