"""The game runner kernel (numba): plays whole games in compiled code, adjudication included.

A game's state (position, side to move, the positions since the last irreversible move, the
quiet-ply counter, the ply count, both sides' seeds) lives in arrays; every ply is one call of
the shared decision (:func:`engine.kernel.decide.decide`), so a game played here and one played
move by move through ``engine.player.Player`` are the same game. Adjudication follows
``engine.board.Board.outcome``: no pieces, no legal move (the side to move loses, or wins when
the variant's outcome is inverted), threefold repetition (exact positions, not hashes), an
expired small-endgame draw count (:mod:`engine.kernel.endgame`), the quiet-ply limit, then the
ply cap.

Each search opens a new transposition-table generation and resets its killer and history
tables, so nothing carries over between moves or games, except that a player with ``tt_keep``
uses the table entries of its own earlier searches in the same game (every game opens a new
scope, so games never leak into each other).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
from numba import njit

from engine.kernel.bits import ONE, ZERO
from engine.kernel.decide import O_DEPTH, O_INDEX, O_NODES, decide
from engine.kernel.endgame import endgame_expired, endgame_next
from engine.kernel.movegen import MV_CAP, MV_FROM, MV_PROMO, MV_SIZE, MV_TO, generate, make
from engine.kernel.search import (
    C_BUDGET,
    C_GAME_GEN,
    C_GEN,
    C_HASHES,
    C_HIST_BASE,
    C_PARTIAL_ROOT,
    C_QUIESCENCE,
    C_REDUCTIONS,
    C_TT_KEEP,
    C_TT_MASK,
    MAX_GAME_HISTORY,
    position_hash,
)
from engine.kernel.tables import R_INVERTED, R_QUIET_LIMIT

# termination codes (the order of engine.board.Termination)
END_NO_PIECES = 0
END_NO_MOVES = 1
END_THREEFOLD = 2
END_QUIET_LIMIT = 3
END_PLY_CAP = 4
END_ERROR = 5  # a move buffer overflowed
END_ENDGAME_LIMIT = 6  # a small-endgame draw count ran out

# per-player integer settings
P_BUDGET = 0
P_QUIESCENCE = 1
P_TT_MASK = 2
P_REDUCTIONS = 3
P_PARTIAL = 4
P_TT_KEEP = 5
P_SIZE = 6

# slots of a game's summary
G_PLIES = 0
G_END = 1
G_WINNER = 2  # 0 White, 1 Black, -1 draw
G_WHITE = 3  # final position: white, black, kings bitboards, side to move
G_BLACK = 4
G_KINGS = 5
G_SIDE = 6
G_NODES = 7  # [2] search nodes by colour (White, Black)
G_DEPTH = 9  # [2] deepest completed iteration by colour
G_MOVES_BY = 11  # [2] plies played by colour
G_DECISIONS = 13  # [2] plies by colour with two or more legal moves (a real choice)
G_SIZE = 15


@njit(cache=True)
def play_game(
    white: np.uint64, black: np.uint64, kings: np.uint64, side: int, ply_cap: int,
    seeds: npt.NDArray[np.int64], players: npt.NDArray[np.int64],
    knobs: npt.NDArray[np.float64], settings: npt.NDArray[np.int64], weights: npt.NDArray[np.float64],
    tts: npt.NDArray[np.int64],
    tab: npt.NDArray[np.int64], moves: npt.NDArray[np.int64], frames: npt.NDArray[np.int64],
    ctx: npt.NDArray[np.int64], root_scores: npt.NDArray[np.int64], result: npt.NDArray[np.int64],
    out: npt.NDArray[np.int64], log: npt.NDArray[np.int64], summary: npt.NDArray[np.int64],
) -> int:
    """Play one game to its end from the given position; returns its number of plies.

    ``seeds[c]`` and ``players[c]`` are the seed and player index of colour ``c`` (0 White,
    1 Black); player ``p`` has ``knobs[p]``, ``settings[p]`` (``P_*``) and ``weights[p]``; colour
    ``c`` searches with the table ``tts[c]`` (so with ``tt_keep`` a side keeps only its own earlier
    searches of this game, as a player of one side does, even when one player plays both). Move
    ``i`` goes to ``log[i]`` (the generator's move fields), the outcome to ``summary`` (``G_*``).
    ``ply_cap`` must not exceed ``log``'s rows.
    """
    for i in range(G_SIZE):
        summary[i] = 0
    ctx[C_GAME_GEN] = ctx[C_GEN] + 1  # the game's first search takes the next generation
    limit = tab[R_QUIET_LIMIT]
    hist = np.zeros((limit + 1, 3), dtype=np.uint64)  # positions since the last irreversible move
    hashes = np.zeros(limit + 1, dtype=np.int64)
    hist_len = 0
    quiet = 0
    eg_rule, eg_left = endgame_next(-1, 0, white, black, kings, side, False, False, tab)  # a fresh count
    road_rule, road_left = endgame_next(-1, 0, white, black, kings, side, False, True, tab)
    ply = 0
    end = -1
    winner = -1
    while True:
        own = white if side == 0 else black
        if own == ZERO:
            end = END_NO_PIECES
        else:
            n = generate(white, black, kings, side, tab, frames, moves, 0)
            if n < 0:
                end = END_ERROR
            elif n == 0:
                end = END_NO_MOVES
        if end == END_NO_PIECES or end == END_NO_MOVES:
            winner = side if tab[R_INVERTED] != 0 else 1 - side
            break
        if end == END_ERROR:
            break
        seen = 1
        for j in range(hist_len - 2, -1, -2):  # same side to move: every second entry back
            if hist[j, 0] == white and hist[j, 1] == black and hist[j, 2] == kings:
                seen += 1
        if seen >= 3:
            end = END_THREEFOLD
            break
        if endgame_expired(eg_rule, eg_left, road_rule, road_left):
            end = END_ENDGAME_LIMIT
            break
        if quiet >= limit:
            end = END_QUIET_LIMIT
            break
        if ply >= ply_cap:
            end = END_PLY_CAP
            break
        p = players[side]
        first = max(0, hist_len - MAX_GAME_HISTORY)
        for j in range(first, hist_len):
            ctx[C_HASHES + j - first] = hashes[j]
        ctx[C_HIST_BASE] = hist_len - first
        ctx[C_BUDGET] = settings[p, P_BUDGET]
        ctx[C_QUIESCENCE] = settings[p, P_QUIESCENCE]
        ctx[C_TT_MASK] = settings[p, P_TT_MASK]
        ctx[C_REDUCTIONS] = settings[p, P_REDUCTIONS]
        ctx[C_PARTIAL_ROOT] = settings[p, P_PARTIAL]
        ctx[C_TT_KEEP] = settings[p, P_TT_KEEP]
        n = decide(white, black, kings, side, quiet, eg_rule, eg_left, road_rule, road_left, ply, seeds[side],
                   knobs[p], tab, weights[p], moves, frames, tts[side], ctx, root_scores, result, out)
        if n <= 0:
            end = END_ERROR
            break
        if n >= 2:
            summary[G_DECISIONS + side] += 1
        m = out[O_INDEX]
        for f in range(MV_SIZE):
            log[ply, f] = moves[0, f, m]
        summary[G_NODES + side] += out[O_NODES]
        summary[G_DEPTH + side] = max(summary[G_DEPTH + side], out[O_DEPTH])
        summary[G_MOVES_BY + side] += 1
        frm = moves[0, MV_FROM, m]
        cap = np.uint64(moves[0, MV_CAP, m])
        resets = cap != ZERO or (own & ~kings & (ONE << np.uint64(frm))) != ZERO
        if resets:
            hist_len = 0
            quiet = 0
        else:
            hist[hist_len, 0] = white
            hist[hist_len, 1] = black
            hist[hist_len, 2] = kings
            hashes[hist_len] = position_hash(white, black, kings, side, tab)
            hist_len += 1
            quiet += 1
        promo = moves[0, MV_PROMO, m]
        white, black, kings = make(white, black, kings, side, frm, moves[0, MV_TO, m], cap, promo)
        side = 1 - side
        changed = cap != ZERO or promo != 0  # a capture or a crowning
        eg_rule, eg_left = endgame_next(eg_rule, eg_left, white, black, kings, side, changed, False, tab)
        road_rule, road_left = endgame_next(road_rule, road_left, white, black, kings, side, changed, True,
                                            tab)
        ply += 1
    summary[G_PLIES] = ply
    summary[G_END] = end
    summary[G_WINNER] = winner
    summary[G_WHITE] = np.int64(white)
    summary[G_BLACK] = np.int64(black)
    summary[G_KINGS] = np.int64(kings)
    summary[G_SIDE] = side
    return ply


@njit(cache=True)
def play_games(
    starts: npt.NDArray[np.int64], ply_cap: int, seeds: npt.NDArray[np.int64], players: npt.NDArray[np.int64],
    knobs: npt.NDArray[np.float64], settings: npt.NDArray[np.int64], weights: npt.NDArray[np.float64],
    tts: npt.NDArray[np.int64],
    tab: npt.NDArray[np.int64], moves: npt.NDArray[np.int64], frames: npt.NDArray[np.int64],
    ctx: npt.NDArray[np.int64], root_scores: npt.NDArray[np.int64], result: npt.NDArray[np.int64],
    out: npt.NDArray[np.int64], logs: npt.NDArray[np.int64], summaries: npt.NDArray[np.int64],
) -> int:
    """Play every game ``g`` of a set to its end (as :func:`play_game`); returns the number played.

    Game ``g`` starts from ``starts[g]`` (white, black, kings, side to move) with ``seeds[g]`` and
    ``players[g]``; its moves go to ``logs[g]``, its outcome to ``summaries[g]``.
    """
    for g in range(starts.shape[0]):
        play_game(np.uint64(starts[g, 0]), np.uint64(starts[g, 1]), np.uint64(starts[g, 2]),
                  int(starts[g, 3]), ply_cap, seeds[g], players[g], knobs, settings, weights, tts, tab,
                  moves, frames, ctx, root_scores, result, out, logs[g], summaries[g])
    return int(starts.shape[0])
