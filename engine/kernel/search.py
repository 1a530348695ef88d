"""Alpha-beta search kernel (numba): PVS, iterative deepening, capture quiescence,
transposition table, killer and history ordering, optional late-move reductions, node
budget, in-search draws (repetition, the quiet-ply limit and the small-endgame counts).

Deterministic: no clocks, no randomness; the node budget is the only limit
besides depth. The transposition table carries a generation number, so stale
entries from earlier searches are ignored without clearing the table; with ``tt_keep`` on
(``ctx[C_TT_KEEP]``), the entries of the game's earlier searches count too (generations from
``ctx[C_GAME_GEN]`` on), so a move's search starts from what the last ones learnt. Every store
replaces the slot's entry, so entries outside the scope never change a search.

``_negamax`` recurses; numba can only cache a recursive function safely when
it has an explicit signature and every recursive call matches it exactly, so
the signature is spelled out below.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
from numba import types

from engine.kernel.bits import ONE, ZERO, lowest_bit, popcount
from engine.kernel.endgame import endgame_expired, endgame_next
from engine.kernel.evaluate import evaluate
from engine.kernel.jit import njit
from engine.kernel.movegen import (
    MV_CAP,
    MV_FROM,
    MV_ORDER,
    MV_PROMO,
    MV_SCORE,
    MV_TO,
    generate,
    has_capture,
    make,
)
from engine.kernel.tables import R_EG_COUNT, R_INVERTED, R_QUIET_LIMIT, T_ZOBRIST

MAX_PLY = 128  # search depth plus capture extensions
INF = 1_000_000
MATE = 100_000
MATE_BOUND = MATE - MAX_PLY  # |score| >= this means a forced win or loss

# ctx (int64) slots
C_NODES = 0
C_BUDGET = 1
C_ABORT = 2
C_QUIESCENCE = 3
C_TT_MASK = 4
C_GEN = 5  # transposition-table generation of the current search
C_HIST_BASE = 6  # game-history hashes stored before the search path
C_ERROR = 7  # 1: move buffer overflow
C_ITER_DEPTH = 8
C_SELDEPTH = 9
C_REDUCTIONS = 10  # 1: late-move reductions on
C_PARTIAL_ROOT = 11  # 1: an aborted iteration's better root move is played
C_TT_KEEP = 12  # 1: the table entries of this game's earlier searches count too (``tt_keep``)
C_GAME_GEN = 13  # the generation of the game's first search (the scope ``tt_keep`` keeps from)
C_KILLERS = 16  # [MAX_PLY * 2] move keys
C_HISTORY = C_KILLERS + 2 * MAX_PLY  # [2 * 64 * 64] history scores by side, from, to
C_PVLEN = C_HISTORY + 2 * 64 * 64  # [MAX_PLY]
C_HASHES = C_PVLEN + MAX_PLY  # [MAX_GAME_HISTORY + MAX_PLY] hash stack
MAX_GAME_HISTORY = 512
C_PV = C_HASHES + MAX_GAME_HISTORY + MAX_PLY  # [MAX_PLY * MAX_PLY] triangular PV: ply * MAX_PLY + i
C_SIZE = C_PV + MAX_PLY * MAX_PLY

TT_MIN_DEPTH = 2
# Late-move reductions: a quiet move from the LMR_MIN_INDEX-th on (after the table move and the
# killers), at depth LMR_MIN_DEPTH or more, that leaves the opponent no capture, is first searched
# one ply shallower (two from LMR_DEEP_INDEX at LMR_DEEP_DEPTH); if it then beats alpha it is
# searched again at full depth, so only moves that look bad are ever cut short.
LMR_MIN_DEPTH = 3
LMR_MIN_INDEX = 3
LMR_DEEP_DEPTH = 6
LMR_DEEP_INDEX = 6
TT_EXACT = 1
TT_LOWER = 2
TT_UPPER = 3

_I64 = types.int64
_U64 = types.uint64
_A1 = types.Array(types.int64, 1, "C")
_A2 = types.Array(types.int64, 2, "C")
_A3 = types.Array(types.int64, 3, "C")
_F1 = types.Array(types.float64, 1, "C")
_NEGAMAX_SIG = _I64(_U64, _U64, _U64, _I64, _I64, _I64, _I64, _I64, _I64, _I64, _I64, _I64, _I64, _I64,
                    _I64, _A1, _F1, _A3, _A2, _A2, _A1)


@njit(cache=True)
def position_hash(white: np.uint64, black: np.uint64, kings: np.uint64, side: int,
                  tab: npt.NDArray[np.int64]) -> int:
    """Zobrist hash of a position (identical in every process: fixed keys)."""
    h = 0
    for kind in range(4):
        if kind == 0:
            rest = white & ~kings
        elif kind == 1:
            rest = white & kings
        elif kind == 2:
            rest = black & ~kings
        else:
            rest = black & kings
        while rest != ZERO:
            b = lowest_bit(rest)
            rest &= rest - ONE
            h ^= tab[T_ZOBRIST + kind * 64 + b]
    if side == 1:
        h ^= tab[T_ZOBRIST + 4 * 64]
    return h


@njit(inline="always", cache=True)
def child_hash(h: int, white: np.uint64, black: np.uint64, kings: np.uint64, side: int, frm: int,
               to: int, cap: np.uint64, promo: int, tab: npt.NDArray[np.int64]) -> int:
    """The Zobrist hash after a move, updated from the parent's ``h``."""
    fb = ONE << np.uint64(frm)
    was_king = 1 if (kings & fb) != ZERO else 0
    is_king = 1 if (was_king == 1 or promo != 0) else 0
    base = 2 * side  # own kinds: side*2 (man), side*2+1 (king)
    h ^= tab[T_ZOBRIST + (base + was_king) * 64 + frm]
    h ^= tab[T_ZOBRIST + (base + is_king) * 64 + to]
    rest = cap
    other = 2 * (1 - side)
    while rest != ZERO:
        b = lowest_bit(rest)
        rest &= rest - ONE
        kind = other + (1 if (kings & (ONE << np.uint64(b))) != ZERO else 0)
        h ^= tab[T_ZOBRIST + kind * 64 + b]
    return int(h ^ tab[T_ZOBRIST + 4 * 64])


@njit(inline="always", cache=True)
def move_key(frm: int, to: int, cap: int) -> int:
    """A compact identity for a move (captured set folded into 44 bits)."""
    folded = (np.uint64(cap) * np.uint64(0x9E3779B97F4A7C15)) >> np.uint64(20)
    return int(frm) | (int(to) << 6) | (int(folded) << 12)


@njit(inline="always", cache=True)
def _mate_to_tt(score: int, ply: int) -> int:
    if score >= MATE_BOUND:
        return score + ply
    if score <= -MATE_BOUND:
        return score - ply
    return score


@njit(inline="always", cache=True)
def _live_entry(entry_gen: int, ctx: npt.NDArray[np.int64]) -> bool:
    """Whether an entry of generation ``entry_gen`` counts: this search's, or with ``tt_keep`` one
    of the game's earlier searches."""
    if entry_gen == ctx[C_GEN]:
        return True
    return bool(ctx[C_TT_KEEP] != 0 and ctx[C_GAME_GEN] <= entry_gen <= ctx[C_GEN])


@njit(inline="always", cache=True)
def _mate_from_tt(score: int, ply: int) -> int:
    if score >= MATE_BOUND:
        return score - ply
    if score <= -MATE_BOUND:
        return score + ply
    return score


@njit(inline="always", cache=True)
def _order_moves(n: int, ply: int, side: int, tt_move: int, moves: npt.NDArray[np.int64],
                 ctx: npt.NDArray[np.int64]) -> None:
    """Give each move an ordering score: TT move, bigger captures, killers, history."""
    k0 = ctx[C_KILLERS + 2 * ply]
    k1 = ctx[C_KILLERS + 2 * ply + 1]
    for i in range(n):
        key = move_key(moves[ply, MV_FROM, i], moves[ply, MV_TO, i], moves[ply, MV_CAP, i])
        if key == tt_move:
            s = 1 << 60
        elif key == k0:
            s = 1 << 50
        elif key == k1:
            s = 1 << 49
        else:
            s = ctx[C_HISTORY + (side * 64 + moves[ply, MV_FROM, i]) * 64 + moves[ply, MV_TO, i]]
        s += popcount(np.uint64(moves[ply, MV_CAP, i])) << 52
        moves[ply, MV_ORDER, i] = i
        moves[ply, MV_SCORE, i] = s


@njit(inline="always", cache=True)
def _pick(i: int, n: int, ply: int, moves: npt.NDArray[np.int64]) -> int:
    """Selection step: bring the best-scored remaining move to slot ``i``."""
    best = i
    for j in range(i + 1, n):
        if moves[ply, MV_SCORE, j] > moves[ply, MV_SCORE, best]:
            best = j
    if best != i:
        for row in (MV_ORDER, MV_SCORE):
            tmp = moves[ply, row, i]
            moves[ply, row, i] = moves[ply, row, best]
            moves[ply, row, best] = tmp
    return int(moves[ply, MV_ORDER, i])


@njit(_NEGAMAX_SIG, cache=True)
def _negamax(
    white: np.uint64, black: np.uint64, kings: np.uint64, side: int, h: int, depth: int, ply: int,
    alpha: int, beta: int, quiet: int, irrev: int, eg_rule: int, eg_left: int, road_rule: int, road_left: int,
    tab: npt.NDArray[np.int64], weights: npt.NDArray[np.float64], moves: npt.NDArray[np.int64],
    frames: npt.NDArray[np.int64], tt: npt.NDArray[np.int64], ctx: npt.NDArray[np.int64],
) -> int:
    """Score of a position for the side to move within (alpha, beta).

    ``quiet`` counts plies since the last capture or man move; ``irrev`` is the
    hash-stack index of the earliest position a repetition can reach; (``eg_rule``,
    ``eg_left``) and (``road_rule``, ``road_left``) are the small-endgame draw count's material
    and main-road slots (rule -1: none runs).
    """
    ctx[C_PVLEN + ply] = ply
    ctx[C_NODES] += 1
    if ctx[C_NODES] >= ctx[C_BUDGET] and ctx[C_ITER_DEPTH] > 1:
        ctx[C_ABORT] = 1
        return 0
    if ply > ctx[C_SELDEPTH]:
        ctx[C_SELDEPTH] = ply
    idx = ctx[C_HIST_BASE] + ply
    ctx[C_HASHES + idx] = h
    if quiet >= tab[R_QUIET_LIMIT] or endgame_expired(eg_rule, eg_left, road_rule, road_left):
        return 0
    j = idx - 2
    while j >= irrev:
        if ctx[C_HASHES + j] == h:
            return 0  # a repetition inside the search or with the game: a draw
        j -= 2
    if ply >= MAX_PLY - 2:
        return evaluate(white, black, kings, side, tab, weights)
    in_quiescence = depth <= 0
    if in_quiescence and (ctx[C_QUIESCENCE] == 0
                          or not has_capture(white, black, kings, side, tab)):
        return evaluate(white, black, kings, side, tab, weights)
    tt_move = -1
    slot = h & ctx[C_TT_MASK]
    # Nodes one ply above the leaves gain little from the table but pay a cache
    # miss for it, so the table is used from depth 2 up.
    use_tt = depth >= TT_MIN_DEPTH
    if use_tt and tt[slot, 0] == h and _live_entry(tt[slot, 3] >> 20, ctx):
        tt_move = tt[slot, 1]
        tt_depth = (tt[slot, 3] >> 2) & 0x3FFFF
        if tt_depth >= depth:
            flag = tt[slot, 3] & 3
            s = _mate_from_tt(tt[slot, 2], ply)
            if flag == TT_EXACT or (flag == TT_LOWER and s >= beta) or (flag == TT_UPPER and s <= alpha):
                return s
    n = generate(white, black, kings, side, tab, frames, moves, ply)
    if n < 0:
        ctx[C_ERROR] = 1
        ctx[C_ABORT] = 1
        return 0
    if n == 0:
        return (MATE - ply) if tab[R_INVERTED] != 0 else -(MATE - ply)
    _order_moves(n, ply, side, tt_move, moves, ctx)
    own = white if side == 0 else black
    best = -INF
    best_key = -1
    alpha0 = alpha
    for i in range(n):
        m = _pick(i, n, ply, moves)
        frm = moves[ply, MV_FROM, m]
        to = moves[ply, MV_TO, m]
        cap = moves[ply, MV_CAP, m]
        promo = moves[ply, MV_PROMO, m]
        w, b, k = make(white, black, kings, side, frm, to, np.uint64(cap), promo)
        hc = child_hash(h, white, black, kings, side, frm, to, np.uint64(cap), promo, tab)
        resets = cap != 0 or (own & ~kings & (ONE << np.uint64(frm))) != ZERO
        child_quiet = 0 if resets else quiet + 1
        child_irrev = idx + 1 if resets else irrev
        child_rule, child_left, child_road, child_road_left = -1, 0, -1, 0
        if tab[R_EG_COUNT] != 0:
            changed = cap != 0 or promo != 0
            child_rule, child_left = endgame_next(eg_rule, eg_left, w, b, k, 1 - side, changed, False, tab)
            child_road, child_road_left = endgame_next(road_rule, road_left, w, b, k, 1 - side, changed, True,
                                                       tab)
        if i == 0 or in_quiescence:
            score = -_negamax(w, b, k, 1 - side, hc, depth - 1, ply + 1, -beta, -alpha, child_quiet,
                              child_irrev, child_rule, child_left, child_road, child_road_left, tab, weights,
                              moves, frames, tt, ctx)
        else:
            reduction = 0
            if (ctx[C_REDUCTIONS] != 0 and depth >= LMR_MIN_DEPTH and i >= LMR_MIN_INDEX and cap == 0
                    and promo == 0 and not has_capture(w, b, k, 1 - side, tab)):
                reduction = 2 if (i >= LMR_DEEP_INDEX and depth >= LMR_DEEP_DEPTH) else 1
            score = -_negamax(w, b, k, 1 - side, hc, depth - 1 - reduction, ply + 1, -alpha - 1, -alpha,
                              child_quiet, child_irrev, child_rule, child_left, child_road, child_road_left,
                              tab, weights, moves, frames, tt, ctx)
            if reduction > 0 and score > alpha and ctx[C_ABORT] == 0:
                score = -_negamax(w, b, k, 1 - side, hc, depth - 1, ply + 1, -alpha - 1, -alpha, child_quiet,
                                  child_irrev, child_rule, child_left, child_road, child_road_left, tab,
                                  weights, moves, frames, tt, ctx)
            if alpha < score < beta and ctx[C_ABORT] == 0:
                score = -_negamax(w, b, k, 1 - side, hc, depth - 1, ply + 1, -beta, -alpha, child_quiet,
                                  child_irrev, child_rule, child_left, child_road, child_road_left, tab,
                                  weights, moves, frames, tt, ctx)
        if ctx[C_ABORT] != 0:
            return 0
        if score > best:
            best = score
            best_key = move_key(frm, to, cap)
            if score > alpha:
                alpha = score
                ctx[C_PV + ply * MAX_PLY + ply] = best_key
                child_len = ctx[C_PVLEN + ply + 1]
                for q in range(ply + 1, child_len):
                    ctx[C_PV + ply * MAX_PLY + q] = ctx[C_PV + (ply + 1) * MAX_PLY + q]
                ctx[C_PVLEN + ply] = max(child_len, ply + 1)
                if alpha >= beta:
                    if cap == 0:
                        if ctx[C_KILLERS + 2 * ply] != best_key:
                            ctx[C_KILLERS + 2 * ply + 1] = ctx[C_KILLERS + 2 * ply]
                            ctx[C_KILLERS + 2 * ply] = best_key
                        ctx[C_HISTORY + (side * 64 + frm) * 64 + to] += depth * depth
                    break
    if use_tt:
        if best >= beta:
            flag = TT_LOWER
        elif best > alpha0:
            flag = TT_EXACT
        else:
            flag = TT_UPPER
        tt[slot, 0] = h
        tt[slot, 1] = best_key
        tt[slot, 2] = _mate_to_tt(best, ply)
        tt[slot, 3] = (ctx[C_GEN] << 20) | (depth << 2) | flag
    return best


@njit(cache=True)
def search_root(
    white: np.uint64, black: np.uint64, kings: np.uint64, side: int, quiet: int, irrev: int,
    eg_rule: int, eg_left: int, road_rule: int, road_left: int, max_depth: int, exact_root: bool,
    tab: npt.NDArray[np.int64], weights: npt.NDArray[np.float64], moves: npt.NDArray[np.int64],
    frames: npt.NDArray[np.int64], tt: npt.NDArray[np.int64], ctx: npt.NDArray[np.int64],
    root_scores: npt.NDArray[np.int64], result: npt.NDArray[np.int64],
) -> int:
    """Iterative deepening from the root; returns the number of root moves (-1: overflow).

    ``result`` gets (best root index, score, completed depth, nodes, pv length);
    ``root_scores[i]`` the score of root move ``i`` in the last completed
    iteration (exact when ``exact_root``, otherwise bounds except for the best);
    the principal variation's move keys are ``ctx[C_PV : C_PV + pv length]``.
    """
    ctx[C_NODES] = 0
    ctx[C_ABORT] = 0
    ctx[C_ERROR] = 0
    ctx[C_SELDEPTH] = 0
    ctx[C_PVLEN] = 0
    for i in range(2 * MAX_PLY):
        ctx[C_KILLERS + i] = -1
    for i in range(2 * 64 * 64):
        ctx[C_HISTORY + i] = 0
    h = position_hash(white, black, kings, side, tab)
    idx = ctx[C_HIST_BASE]
    ctx[C_HASHES + idx] = h
    n = generate(white, black, kings, side, tab, frames, moves, 0)
    result[0] = -1
    result[1] = 0
    result[2] = 0
    result[3] = 0
    result[4] = 0
    if n < 0:
        return -1
    if n == 0:
        result[1] = (MATE if tab[R_INVERTED] != 0 else -MATE)
        return 0
    own = white if side == 0 else black
    # root move order: by the previous iteration's scores (generation order first)
    root_order = np.arange(n)
    iter_scores = np.zeros(n, dtype=np.int64)
    best_pv = np.zeros(MAX_PLY, dtype=np.int64)
    for depth in range(1, max_depth + 1):
        ctx[C_ITER_DEPTH] = depth
        alpha = -INF
        best_idx = -1
        best_score = -INF
        pv_len = 0
        prev_done = False  # the last finished iteration's best move was searched to this depth
        for r in range(n):
            m = root_order[r]
            frm = moves[0, MV_FROM, m]
            to = moves[0, MV_TO, m]
            cap = moves[0, MV_CAP, m]
            promo = moves[0, MV_PROMO, m]
            w, b, k = make(white, black, kings, side, frm, to, np.uint64(cap), promo)
            hc = child_hash(h, white, black, kings, side, frm, to, np.uint64(cap), promo, tab)
            ctx[C_NODES] += 1
            resets = cap != 0 or (own & ~kings & (ONE << np.uint64(frm))) != ZERO
            child_quiet = 0 if resets else quiet + 1
            child_irrev = idx + 1 if resets else irrev
            child_rule, child_left, child_road, child_road_left = -1, 0, -1, 0
            if tab[R_EG_COUNT] != 0:
                changed = cap != 0 or promo != 0
                child_rule, child_left = endgame_next(eg_rule, eg_left, w, b, k, 1 - side, changed, False,
                                                      tab)
                child_road, child_road_left = endgame_next(road_rule, road_left, w, b, k, 1 - side, changed,
                                                           True, tab)
            if exact_root or r == 0:
                score = -_negamax(w, b, k, 1 - side, hc, depth - 1, 1, -INF, INF if exact_root else -alpha,
                                  child_quiet, child_irrev, child_rule, child_left, child_road,
                                  child_road_left, tab, weights, moves, frames, tt, ctx)
            else:
                score = -_negamax(w, b, k, 1 - side, hc, depth - 1, 1, -alpha - 1, -alpha, child_quiet,
                                  child_irrev, child_rule, child_left, child_road, child_road_left, tab,
                                  weights, moves, frames, tt, ctx)
                if score > alpha and ctx[C_ABORT] == 0:
                    score = -_negamax(w, b, k, 1 - side, hc, depth - 1, 1, -INF, -alpha, child_quiet,
                                      child_irrev, child_rule, child_left, child_road, child_road_left, tab,
                                      weights, moves, frames, tt, ctx)
            if ctx[C_ABORT] != 0:
                break
            iter_scores[m] = score
            if m == result[0]:
                prev_done = True
            if score > best_score:
                best_score = score
                best_idx = m
                if score > alpha:
                    alpha = score
                best_pv[0] = move_key(frm, to, cap)
                child_len = ctx[C_PVLEN + 1]
                for q in range(1, child_len):
                    best_pv[q] = ctx[C_PV + MAX_PLY + q]
                pv_len = max(child_len, 1)
        if ctx[C_ABORT] != 0:
            # The budget ran out inside this iteration. If it finished the last iteration's best
            # move and found another at least as good at the new depth (every move that beat
            # alpha was searched again with a full window), that move is played, with its score
            # and line; the depth, the root scores and the nodes stay the last finished
            # iteration's.
            if ctx[C_PARTIAL_ROOT] != 0 and prev_done and best_idx != result[0]:
                result[0] = best_idx
                result[1] = best_score
                result[4] = pv_len
                for q in range(pv_len):
                    ctx[C_PV + q] = best_pv[q]
            break
        result[0] = best_idx
        result[1] = best_score
        result[2] = depth
        result[4] = pv_len
        for q in range(pv_len):
            ctx[C_PV + q] = best_pv[q]
        for i in range(n):
            root_scores[i] = iter_scores[i]
        # next iteration tries the best moves first (stable for equal scores)
        keys = np.empty(n, dtype=np.int64)
        for r in range(n):
            keys[r] = -iter_scores[root_order[r]] * 4096 + r
        root_order = root_order[np.argsort(keys)]
        if best_score >= MATE_BOUND or best_score <= -MATE_BOUND:
            break
        if ctx[C_NODES] >= ctx[C_BUDGET]:
            break
    result[3] = ctx[C_NODES]
    if ctx[C_ERROR] != 0:
        return -1
    return n
