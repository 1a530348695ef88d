"""Perft (move-path enumeration) over the compiled generator: the rules' acceptance test."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from engine.errors import DraughtsError
from engine.kernel.jit import njit
from engine.kernel.movegen import (
    MV_CAP,
    MV_FROM,
    MV_PROMO,
    MV_TO,
    count_legal,
    generate,
    make,
    new_moves,
    new_scratch,
)
from engine.kernel.tables import kernel_tables
from engine.position import Position
from engine.variants import Variant

MAX_PERFT_DEPTH = 40


@njit(cache=True)
def _perft(
    white: np.uint64,
    black: np.uint64,
    kings: np.uint64,
    side: int,
    depth: int,
    bulk: bool,
    tab: npt.NDArray[np.int64],
    frames: npt.NDArray[np.int64],
    moves: npt.NDArray[np.int64],
    pos: npt.NDArray[np.uint64],
    cursor: npt.NDArray[np.int64],
    count: npt.NDArray[np.int64],
) -> int:
    """Leaf count below a position, depth-first with an explicit stack (-1: overflow).

    ``pos[ply]`` holds (white, black, kings, side) and ``cursor``/``count`` the
    next move index and move count of each ply. Bulk counts the last ply
    without playing it, by popcount when the position has no capture.
    """
    if depth == 0:
        return 1
    if bulk and depth == 1:
        return count_legal(white, black, kings, side, tab, frames, moves, 0)
    total = 0
    pos[0, 0] = white
    pos[0, 1] = black
    pos[0, 2] = kings
    pos[0, 3] = np.uint64(side)
    count[0] = -2  # moves not generated yet
    # Plies 0..frontier-1 are expanded on the stack; the moves of ply ``frontier``
    # are played in a tight loop and their children counted (bulk) or touched (full).
    frontier = depth - 2 if bulk else depth - 1
    ply = 0
    while ply >= 0:
        w = pos[ply, 0]
        b = pos[ply, 1]
        k = pos[ply, 2]
        s = int(pos[ply, 3])
        if count[ply] == -2:
            n = generate(w, b, k, s, tab, frames, moves, ply)
            if n < 0:
                return -1
            if ply == frontier:
                for i in range(n):
                    cw, cb, ck = make(w, b, k, s, moves[ply, MV_FROM, i], moves[ply, MV_TO, i],
                                      np.uint64(moves[ply, MV_CAP, i]), moves[ply, MV_PROMO, i])
                    if bulk:
                        c = count_legal(cw, cb, ck, 1 - s, tab, frames, moves, ply + 1)
                        if c < 0:
                            return -1
                        total += c
                    else:
                        pos[ply + 1, 0] = cw  # the leaf is really made, not optimised away
                        pos[ply + 1, 1] = cb
                        pos[ply + 1, 2] = ck
                        total += 1
                ply -= 1
                continue
            count[ply] = n
            cursor[ply] = 0
        i = cursor[ply]
        if i >= count[ply]:
            ply -= 1
            continue
        cursor[ply] = i + 1
        cw, cb, ck = make(w, b, k, s, moves[ply, MV_FROM, i], moves[ply, MV_TO, i],
                          np.uint64(moves[ply, MV_CAP, i]), moves[ply, MV_PROMO, i])
        ply += 1
        pos[ply, 0] = cw
        pos[ply, 1] = cb
        pos[ply, 2] = ck
        pos[ply, 3] = np.uint64(1 - s)
        count[ply] = -2
    return total


def perft(variant: Variant, position: Position, depth: int, bulk: bool = True) -> int:
    """Number of move paths of length ``depth`` from ``position``.

    ``bulk`` counts the moves of the last ply without playing them; the full
    mode plays every leaf move (slower, exercises make-move too).
    """
    if not 0 <= depth <= MAX_PERFT_DEPTH:
        raise DraughtsError(f"perft depth must be 0..{MAX_PERFT_DEPTH}, got {depth!r}")
    t = kernel_tables(variant)
    plies = depth + 1  # ply ``depth`` holds the leaves in full mode
    nodes = _perft(np.uint64(position.white), np.uint64(position.black), np.uint64(position.kings),
                   int(position.side_to_move), depth, bulk, t.packed, new_scratch(), new_moves(plies),
                   np.zeros((plies, 4), dtype=np.uint64), np.zeros(plies, dtype=np.int64),
                   np.zeros(plies, dtype=np.int64))
    if nodes < 0:
        raise RuntimeError("move buffer overflow during perft")
    return int(nodes)
