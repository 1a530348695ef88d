"""Small-endgame draw counts in the search kernel (the rules of :mod:`engine.endgame`).

A count is two slots of (rule, plies left), rule -1 when none runs: the material slot and the
main-road slot (``road``); the draw comes when a running slot reaches 0. Rules come from the
T_ENDGAME records of the packed table, so the kernel reads the variant's data and never its name.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
from numba import njit

from engine.kernel.bits import ZERO, popcount
from engine.kernel.tables import (
    EG_BOTH_KINGS,
    EG_MAIN_ROAD,
    EG_MOVES,
    EG_PIECES,
    EG_RESTART,
    EG_SIDE,
    EG_STRIDE,
    EG_STRONG,
    EG_STRONG_MOVES,
    M_MAIN_DIAGONAL,
    R_EG_COUNT,
    R_EG_MAX_PIECES,
    R_EG_ROAD,
    T_ENDGAME,
    T_MASKS,
)


@njit(cache=True)
def endgame_match(white: np.uint64, black: np.uint64, kings: np.uint64, road: bool,
                  tab: npt.NDArray[np.int64]) -> tuple[int, int]:
    """(first count of the slot whose material fits or -1, the lone king's side) of a position."""
    n = tab[R_EG_COUNT]
    pieces = popcount(white | black)
    if n == 0 or pieces > tab[R_EG_MAX_PIECES] or (road and tab[R_EG_ROAD] == 0):
        return -1, 0
    material = (popcount(white & kings), popcount(white & ~kings), popcount(black & kings),
                popcount(black & ~kings))
    main_road = np.uint64(tab[T_MASKS + M_MAIN_DIAGONAL])
    for r in range(n):
        base = T_ENDGAME + r * EG_STRIDE
        if (tab[base + EG_MAIN_ROAD] != 0) != road:
            continue
        if tab[base + EG_BOTH_KINGS] != 0:
            if material[0] > 0 and material[2] > 0 and (tab[base + EG_PIECES] >> pieces) & 1 != 0:
                return r, 0
            continue
        for weak in range(2):
            lone_kings = material[2 * weak]
            lone_men = material[2 * weak + 1]
            strong_kings = material[2 - 2 * weak]
            strong_men = material[3 - 2 * weak]
            if lone_kings != 1 or lone_men != 0 or strong_kings >= EG_SIDE or strong_men >= EG_SIDE:
                continue
            key = strong_kings * EG_SIDE + strong_men
            if (tab[base + EG_STRONG + key // 64] >> (key % 64)) & 1 == 0:
                continue
            lone = (white if weak == 0 else black) & kings
            if tab[base + EG_MAIN_ROAD] != 0 and (lone & main_road) == ZERO:
                continue
            return r, weak
    return -1, 0


@njit(cache=True)
def endgame_next(rule: int, left: int, white: np.uint64, black: np.uint64, kings: np.uint64, side: int,
                 changed: bool, road: bool, tab: npt.NDArray[np.int64]) -> tuple[int, int]:
    """One slot's count after a move to (white, black, kings, ``side`` to move).

    ``changed``: the move captured or crowned; ``road``: the main-road slot. Same transition as
    :func:`engine.endgame.next_count`.
    """
    new_rule, weak = endgame_match(white, black, kings, road, tab)
    if new_rule < 0:
        return -1, 0
    base = T_ENDGAME + new_rule * EG_STRIDE
    plies = 2 * tab[base + EG_MOVES]
    if tab[base + EG_STRONG_MOVES] != 0 and side != weak:
        plies -= 1
    if rule < 0 or (changed and tab[base + EG_RESTART] != 0):
        return new_rule, plies
    return new_rule, min(left - 1, plies)


@njit(cache=True)
def endgame_expired(rule: int, left: int, road_rule: int, road_left: int) -> bool:
    """Whether a count (both slots) has run out: the game is drawn."""
    return (rule >= 0 and left <= 0) or (road_rule >= 0 and road_left <= 0)
