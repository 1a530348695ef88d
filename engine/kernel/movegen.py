"""Scalar copy-make move generation compiled with numba.

One position at a time, written for the search: no allocation per call, moves
written into caller-owned buffers. Every rule difference comes from the
packed table of :mod:`engine.kernel.tables` (one array, so calls stay cheap).

Moves go into one int64 array ``moves[ply, field, i]`` (fields ``MV_*``, field
-major so a position's moves share cache lines): from and to bit, captured
bitboard, promotion flag, path length and the path (start bit, then every
landing bit; a path of length 2 is just (from, to) and is not stored). Whole
arrays plus a ply index are passed instead of slices: numba reference-counts
every array view it creates, and that overhead dominated the cost of a node when buffers were sliced per call.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from engine.kernel.bits import ONE, ZERO, bit, lowest_bit, popcount, step
from engine.kernel.jit import njit
from engine.kernel.tables import (
    M_BOARD,
    M_PROMO_BLACK,
    M_PROMO_WHITE,
    PROMO_CONTINUE_AS_KING,
    PROMO_STOP,
    R_DISTINCT_ORDERS,
    R_FLYING,
    R_MAJORITY,
    R_MEN_BACKWARD,
    R_PROMO_MODE,
    RAY_STRIDE,
    T_DELTAS,
    T_MASKS,
    T_RAY,
    T_RAYLEN,
    kernel_tables,
)
from engine.position import Position
from engine.variants import Variant

MAX_MOVES = 1024  # per position; overflow is reported, never silent
MAX_PATH = 24  # start square + up to 23 landings (10x10 allows at most 20 captures)
OVERFLOW = -1

# Scratch: one int64 array [MAX_PATH + 1, _F_SIZE]. Rows 0..MAX_PATH-1 are the
# frames of the capture search; the last row holds the counters below.
_S_ROW = MAX_PATH
_S_COUNT = 0  # moves recorded so far
_S_BEST = 1  # most pieces captured by a recorded move (majority rule)


# Frame fields of the iterative capture search (one row per capture depth)
_F_SQ = 0  # square the moving piece stands on
_F_KING = 1  # 1 if it moves as a king now
_F_CROWNED = 2  # 1 if it was crowned during this move
_F_DIR = 3  # direction being explored
_F_NEXT = 4  # next landing index along ray[dir, sq]
_F_END = 5  # one past the last landing index
_F_MUST = 6  # 1 if only landings that can continue are allowed
_F_VICTIM = 7  # bit of the piece jumped in this direction
_F_JUMPS = 8  # jumps taken from this frame so far
_F_PATH = 9  # square reached at this depth (the path so far, read down the column)
_F_CAP = 10  # pieces captured on reaching this depth (a bitboard stored as int64)
_F_SIZE = 11


# Fields of a move in ``moves[ply, :, i]``
MV_FROM = 0
MV_TO = 1
MV_CAP = 2  # captured bitboard (bits < 64 of a non-negative int64)
MV_PROMO = 3
MV_PLEN = 4
MV_ORDER = 5  # the search's move-ordering permutation (not written by the generator)
MV_SCORE = 6  # the search's ordering score of the move in slot MV_ORDER
MV_PATH = 7  # MV_PATH .. MV_PATH + MAX_PATH - 1
MV_SIZE = MV_PATH + MAX_PATH


def new_moves(plies: int = 1) -> npt.NDArray[np.int64]:
    """A move buffer for ``plies`` positions: ``[plies, MV_SIZE, MAX_MOVES]``."""
    return np.zeros((plies, MV_SIZE, MAX_MOVES), dtype=np.int64)


@njit(inline="always", cache=True)
def promotion_mask(
    side: int,
    tab: npt.NDArray[np.int64],
) -> np.uint64:
    """Squares where a man of ``side`` (0 white, 1 black) is crowned."""
    return np.uint64(tab[T_MASKS + M_PROMO_WHITE]) if side == 0 else np.uint64(tab[T_MASKS + M_PROMO_BLACK])


@njit(inline="always", cache=True)
def man_moves_in(direction: int, side: int) -> bool:
    """Whether a man of ``side`` moves forward in ``direction`` (0,1 up; 2,3 down)."""
    return (direction < 2) == (side == 0)


@njit(cache=True)
def _record(
    frm: int,
    to: int,
    cap: np.uint64,
    promo: int,
    depth: int,
    tab: npt.NDArray[np.int64],
    frames: npt.NDArray[np.int64],
    moves: npt.NDArray[np.int64],
    ply: int,
) -> None:
    """Store a finished capture, applying the majority and merge rules."""
    n = frames[_S_ROW, _S_COUNT]
    if n < 0:
        return
    if tab[R_MAJORITY] != 0:
        count = popcount(cap)
        if count < frames[_S_ROW, _S_BEST]:
            return
        if count > frames[_S_ROW, _S_BEST]:
            frames[_S_ROW, _S_BEST] = count
            n = 0
    if tab[R_DISTINCT_ORDERS] == 0:
        for i in range(n):
            # equal start, end and captured set merge (FMJD), unless one order crowns
            # the man and the other does not: those leave different positions
            if (moves[ply, MV_CAP, i] == np.int64(cap) and moves[ply, MV_FROM, i] == frm
                    and moves[ply, MV_TO, i] == to and moves[ply, MV_PROMO, i] == promo):
                frames[_S_ROW, _S_COUNT] = n
                return
    if n >= moves.shape[2]:
        frames[_S_ROW, _S_COUNT] = OVERFLOW
        return
    moves[ply, MV_FROM, n] = frm
    moves[ply, MV_TO, n] = to
    moves[ply, MV_CAP, n] = np.int64(cap)
    moves[ply, MV_PROMO, n] = promo
    if depth >= 2:  # a two-square path is (from, to) and is not stored
        for i in range(depth + 1):
            moves[ply, MV_PATH + i, n] = frames[i, _F_PATH]
    moves[ply, MV_PLEN, n] = depth + 1
    frames[_S_ROW, _S_COUNT] = n + 1


@njit(cache=True)
def _can_capture_from(
    sq: int,
    side: int,
    is_king: bool,
    captured: np.uint64,
    occupied: np.uint64,
    opp: np.uint64,
    tab: npt.NDArray[np.int64],
) -> bool:
    """Whether a piece standing on ``sq`` has at least one jump available."""
    flying = is_king and tab[R_FLYING] != 0
    for d in range(4):
        if not is_king and tab[R_MEN_BACKWARD] == 0 and not man_moves_in(d, side):
            continue
        if flying:
            length = tab[T_RAYLEN + d * 64 + sq]
            k = 0
            while k < length and (occupied & bit(tab[T_RAY + (d * 64 + sq) * RAY_STRIDE + k])) == ZERO:
                k += 1
            if k + 1 >= length:
                continue
            target = bit(tab[T_RAY + (d * 64 + sq) * RAY_STRIDE + k])
            if (opp & target) != ZERO and (captured & target) == ZERO and (
                occupied & bit(tab[T_RAY + (d * 64 + sq) * RAY_STRIDE + k + 1])
            ) == ZERO:
                return True
        else:
            mid = tab[T_RAY + (d * 64 + sq) * RAY_STRIDE]
            if mid < 0:
                continue
            land = tab[T_RAY + (d * 64 + mid) * RAY_STRIDE]
            if land < 0:
                continue
            mb = bit(mid)
            if (opp & mb) != ZERO and (captured & mb) == ZERO and (occupied & bit(land)) == ZERO:
                return True
    return False


@njit(cache=True)
def _capture_search(
    origin: int,
    side: int,
    is_king: bool,
    occupied: np.uint64,
    opp: np.uint64,
    tab: npt.NDArray[np.int64],
    frames: npt.NDArray[np.int64],
    moves: npt.NDArray[np.int64],
    ply: int,
) -> None:
    """Depth-first search of every capture sequence of the piece on ``origin``.

    Iterative (an explicit frame stack) because numba cannot cache recursive
    functions reliably. ``occupied`` excludes the moving piece; captured pieces
    stay in it until the move ends (Turkish strike). Finished sequences are
    passed to ``_record``, which applies the majority and merge rules.
    """
    promo_row = promotion_mask(side, tab)
    men_backward = tab[R_MEN_BACKWARD] != 0
    flying_rule = tab[R_FLYING] != 0
    promo_mode = tab[R_PROMO_MODE]
    started_as_man = not is_king
    frames[0, _F_PATH] = origin
    frames[0, _F_CAP] = 0
    frames[0, _F_SQ] = origin
    frames[0, _F_KING] = 1 if is_king else 0
    frames[0, _F_CROWNED] = 0
    frames[0, _F_DIR] = -1
    frames[0, _F_NEXT] = 0
    frames[0, _F_END] = 0
    frames[0, _F_JUMPS] = 0
    t = 0
    while t >= 0:
        sq = frames[t, _F_SQ]
        king = frames[t, _F_KING] != 0
        flying = king and flying_rule
        captured = np.uint64(frames[t, _F_CAP])
        land = -1
        while True:
            j = frames[t, _F_NEXT]
            if j < frames[t, _F_END]:
                frames[t, _F_NEXT] = j + 1
                land = tab[T_RAY + (frames[t, _F_DIR] * 64 + sq) * RAY_STRIDE + j]
                if frames[t, _F_MUST] != 0 and not _can_capture_from(
                    land, side, True, captured | np.uint64(frames[t, _F_VICTIM]), occupied, opp,
                    tab,
                ):
                    land = -1
                    continue
                break
            d = frames[t, _F_DIR] + 1
            frames[t, _F_DIR] = d
            if d >= 4:
                break
            frames[t, _F_NEXT] = 0
            frames[t, _F_END] = 0
            if not king and not men_backward and not man_moves_in(d, side):
                continue
            length = tab[T_RAYLEN + d * 64 + sq]
            k = 0
            if flying:
                while k < length and (occupied & bit(tab[T_RAY + (d * 64 + sq) * RAY_STRIDE + k])) == ZERO:
                    k += 1
            if k + 1 >= length:
                continue
            vb = bit(tab[T_RAY + (d * 64 + sq) * RAY_STRIDE + k])
            if (opp & vb) == ZERO or (captured & vb) != ZERO:
                continue
            last = k + 1
            limit = length if flying else k + 2
            while last < limit and (occupied & bit(tab[T_RAY + (d * 64 + sq) * RAY_STRIDE + last])) == ZERO:
                last += 1
            if last == k + 1:
                continue
            must = 0
            if flying and last > k + 2:
                for jj in range(k + 1, last):
                    landing = tab[T_RAY + (d * 64 + sq) * RAY_STRIDE + jj]
                    if _can_capture_from(landing, side, True, captured | vb, occupied, opp, tab):
                        must = 1
                        break
            frames[t, _F_NEXT] = k + 1
            frames[t, _F_END] = last
            frames[t, _F_MUST] = must
            frames[t, _F_VICTIM] = np.int64(vb)
        if land < 0:
            # every jump from this square tried: a sequence with no jump left ends here
            if t > 0 and frames[t, _F_JUMPS] == 0:
                ends_crowned = frames[t, _F_CROWNED] != 0 or (
                    started_as_man and (promo_row & bit(sq)) != ZERO
                )
                _record(origin, sq, captured, 1 if ends_crowned else 0, t, tab, frames,
                        moves, ply)
            t -= 1
            continue
        frames[t, _F_JUMPS] += 1
        if t + 2 >= MAX_PATH:
            frames[_S_ROW, _S_COUNT] = OVERFLOW
            return
        now_captured = captured | np.uint64(frames[t, _F_VICTIM])
        frames[t + 1, _F_PATH] = land
        next_king = king
        next_crowned = frames[t, _F_CROWNED]
        if not king and (promo_row & bit(land)) != ZERO:
            if promo_mode == PROMO_STOP:
                _record(origin, land, now_captured, 1, t + 1, tab, frames,
                        moves, ply)
                continue
            if promo_mode == PROMO_CONTINUE_AS_KING:
                next_king = True
                next_crowned = 1
        t += 1
        frames[t, _F_CAP] = np.int64(now_captured)
        frames[t, _F_SQ] = land
        frames[t, _F_KING] = 1 if next_king else 0
        frames[t, _F_CROWNED] = next_crowned
        frames[t, _F_DIR] = -1
        frames[t, _F_NEXT] = 0
        frames[t, _F_END] = 0
        frames[t, _F_JUMPS] = 0
        if frames[_S_ROW, _S_COUNT] < 0:
            return


@njit(inline="always", cache=True)
def _write_quiet(moves: npt.NDArray[np.int64], ply: int, n: int, frm: int, to: int, promo: int) -> None:
    moves[ply, MV_FROM, n] = frm
    moves[ply, MV_TO, n] = to
    moves[ply, MV_CAP, n] = 0
    moves[ply, MV_PROMO, n] = promo
    moves[ply, MV_PLEN, n] = 2


@njit(cache=True)
def _quiet_moves(
    own: np.uint64,
    kings: np.uint64,
    empty: np.uint64,
    side: int,
    tab: npt.NDArray[np.int64],
    moves: npt.NDArray[np.int64],
    ply: int,
) -> int:
    """Write every non-capturing move; returns the count (or OVERFLOW)."""
    board = np.uint64(tab[T_MASKS + M_BOARD])
    promo_row = promotion_mask(side, tab)
    men = own & ~kings
    own_kings = own & kings
    limit = moves.shape[2]
    n = 0
    for d in range(4):
        delta = tab[T_DELTAS + d]
        movers = own_kings
        if man_moves_in(d, side):
            movers = movers | men
        if tab[R_FLYING] != 0:
            movers = men if man_moves_in(d, side) else ZERO
        targets = step(movers, d, abs(delta), board) & empty
        while targets != ZERO:
            to = lowest_bit(targets)
            targets &= targets - ONE
            if n >= limit:
                return OVERFLOW
            frm = to - delta
            promo = 1 if ((men & bit(frm)) != ZERO and (promo_row & bit(to)) != ZERO) else 0
            _write_quiet(moves, ply, n, frm, to, promo)
            n += 1
    if tab[R_FLYING] != 0:
        rest = own_kings
        while rest != ZERO:
            sq = lowest_bit(rest)
            rest &= rest - ONE
            for d in range(4):
                length = tab[T_RAYLEN + d * 64 + sq]
                k = 0
                while k < length and (empty & bit(tab[T_RAY + (d * 64 + sq) * RAY_STRIDE + k])) != ZERO:
                    if n >= limit:
                        return OVERFLOW
                    _write_quiet(moves, ply, n, sq, tab[T_RAY + (d * 64 + sq) * RAY_STRIDE + k], 0)
                    n += 1
                    k += 1
    return n


@njit(inline="always", cache=True)
def _short_jumpers(
    own: np.uint64,
    kings: np.uint64,
    opp: np.uint64,
    empty: np.uint64,
    side: int,
    tab: npt.NDArray[np.int64],
) -> np.uint64:
    """Pieces that can make a one-square jump (men, and kings when kings are short)."""
    board = np.uint64(tab[T_MASKS + M_BOARD])
    men = own & ~kings
    short_kings = ZERO if tab[R_FLYING] != 0 else own & kings
    result = ZERO
    for d in range(4):
        pieces = short_kings
        if man_moves_in(d, side) or tab[R_MEN_BACKWARD] != 0:
            pieces = pieces | men
        if pieces == ZERO:
            continue
        delta = tab[T_DELTAS + d]
        # landing squares stepped back twice onto the jumpers
        back = 3 - d  # the opposite direction
        over = step(empty, back, abs(delta), board) & opp
        result |= step(over, back, abs(delta), board) & pieces
    return result


@njit(cache=True)
def _single_jumps(
    own: np.uint64, kings: np.uint64, opp: np.uint64, empty: np.uint64, side: int,
    tab: npt.NDArray[np.int64], frames: npt.NDArray[np.int64], moves: npt.NDArray[np.int64], ply: int,
) -> np.uint64:
    """Record the one-jump captures of short-moving pieces that cannot go on.

    The common case (a single jump) is found with whole-board shifts instead of
    the general search. Returns the pieces that have at least one jump which can
    continue: those need the full search, which then also covers their other
    jumps, so none of their single jumps is recorded here.
    """
    board = np.uint64(tab[T_MASKS + M_BOARD])
    promo_row = promotion_mask(side, tab)
    promo_mode = tab[R_PROMO_MODE]
    men = own & ~kings
    short_kings = ZERO if tab[R_FLYING] != 0 else own & kings
    occupied_all = own | opp
    needs_search = ZERO
    for d in range(4):
        pieces = short_kings
        if man_moves_in(d, side) or tab[R_MEN_BACKWARD] != 0:
            pieces = pieces | men
        if pieces == ZERO:
            continue
        delta = tab[T_DELTAS + d]
        landings = step(step(pieces, d, abs(delta), board) & opp, d, abs(delta), board) & empty
        while landings != ZERO:
            land = lowest_bit(landings)
            landings &= landings - ONE
            frm = land - 2 * delta
            fb = bit(frm)
            if (needs_search & fb) != ZERO:
                continue
            mid_bit = bit(land - delta)
            is_man = (men & fb) != ZERO
            crowns = is_man and (promo_row & bit(land)) != ZERO
            if not (crowns and promo_mode == PROMO_STOP):
                as_king = (not is_man) or (crowns and promo_mode == PROMO_CONTINUE_AS_KING)
                if _can_capture_from(land, side, as_king, mid_bit, occupied_all & ~fb, opp, tab):
                    needs_search |= fb
                    continue
            frames[0, _F_PATH] = frm
            frames[1, _F_PATH] = land
            _record(frm, land, mid_bit, 1 if crowns else 0, 1, tab, frames, moves, ply)
            if frames[_S_ROW, _S_COUNT] < 0:
                return needs_search
    if needs_search != ZERO:
        # drop single jumps noted before their piece turned out to need the search
        n = frames[_S_ROW, _S_COUNT]
        kept = 0
        for i in range(n):
            if (needs_search & bit(moves[ply, MV_FROM, i])) == ZERO:
                if kept != i:
                    moves[ply, :, kept] = moves[ply, :, i]
                kept += 1
        frames[_S_ROW, _S_COUNT] = kept
    return needs_search


@njit(cache=True)
def generate(
    white: np.uint64,
    black: np.uint64,
    kings: np.uint64,
    side: int,
    tab: npt.NDArray[np.int64],
    frames: npt.NDArray[np.int64],
    moves: npt.NDArray[np.int64],
    ply: int,
) -> int:
    """Write all legal moves of the position; returns their count or OVERFLOW."""
    own = white if side == 0 else black
    opp = black if side == 0 else white
    board = np.uint64(tab[T_MASKS + M_BOARD])
    empty = board & ~(own | opp)
    frames[_S_ROW, _S_COUNT] = 0
    frames[_S_ROW, _S_BEST] = 0
    candidates = ZERO
    if _short_jumpers(own, kings, opp, empty, side, tab) != ZERO:
        candidates = _single_jumps(own, kings, opp, empty, side, tab, frames, moves, ply)
        if frames[_S_ROW, _S_COUNT] < 0:
            return OVERFLOW
    if tab[R_FLYING] != 0:
        candidates |= own & kings
    while candidates != ZERO:
        sq = lowest_bit(candidates)
        candidates &= candidates - ONE
        sb = bit(sq)
        _capture_search(sq, side, (kings & sb) != ZERO, (own | opp) & ~sb, opp, tab, frames,
                        moves, ply)
        if frames[_S_ROW, _S_COUNT] < 0:
            return OVERFLOW
    if frames[_S_ROW, _S_COUNT] > 0:
        return int(frames[_S_ROW, _S_COUNT])
    return _quiet_moves(own, kings, empty, side, tab,
                        moves, ply)


@njit(inline="always", cache=True)
def count_quiet(
    own: np.uint64,
    kings: np.uint64,
    empty: np.uint64,
    side: int,
    tab: npt.NDArray[np.int64],
) -> int:
    """Number of non-capturing moves, by popcount (no enumeration)."""
    board = np.uint64(tab[T_MASKS + M_BOARD])
    men = own & ~kings
    own_kings = own & kings
    flying = tab[R_FLYING] != 0
    n = 0
    for d in range(4):
        movers = ZERO if flying else own_kings
        if man_moves_in(d, side):
            movers = movers | men
        n += popcount(step(movers, d, abs(tab[T_DELTAS + d]), board) & empty)
    if flying:
        rest = own_kings
        while rest != ZERO:
            sq = lowest_bit(rest)
            rest &= rest - ONE
            for d in range(4):
                length = tab[T_RAYLEN + d * 64 + sq]
                k = 0
                while k < length and (empty & bit(tab[T_RAY + (d * 64 + sq) * RAY_STRIDE + k])) != ZERO:
                    k += 1
                n += k
    return n


@njit(inline="always", cache=True)
def has_capture(
    white: np.uint64,
    black: np.uint64,
    kings: np.uint64,
    side: int,
    tab: npt.NDArray[np.int64],
) -> bool:
    """Whether the side to move has a capture (and so must capture)."""
    own = white if side == 0 else black
    opp = black if side == 0 else white
    occupied = own | opp
    empty = np.uint64(tab[T_MASKS + M_BOARD]) & ~occupied
    if _short_jumpers(own, kings, opp, empty, side, tab) != ZERO:
        return True
    if tab[R_FLYING] != 0:
        rest = own & kings
        while rest != ZERO:
            sq = lowest_bit(rest)
            rest &= rest - ONE
            if _can_capture_from(sq, side, True, ZERO, occupied & ~bit(sq), opp, tab):
                return True
    return False


@njit(inline="always", cache=True)
def count_legal(
    white: np.uint64, black: np.uint64, kings: np.uint64, side: int,
    tab: npt.NDArray[np.int64], frames: npt.NDArray[np.int64], moves: npt.NDArray[np.int64], ply: int,
) -> int:
    """Number of legal moves, enumerating only when it must (perft's bulk count).

    Quiet positions are counted by popcount; when every capture is a single
    jump that cannot go on, the jumps are counted directly; anything else
    (multi-jumps, flying-king captures) falls back to ``generate``.
    """
    own = white if side == 0 else black
    opp = black if side == 0 else white
    board = np.uint64(tab[T_MASKS + M_BOARD])
    occupied = own | opp
    empty = board & ~occupied
    flying = tab[R_FLYING] != 0
    own_kings = own & kings
    if flying:
        rest = own_kings
        while rest != ZERO:
            sq = lowest_bit(rest)
            rest &= rest - ONE
            if _can_capture_from(sq, side, True, ZERO, occupied & ~bit(sq), opp, tab):
                return generate(white, black, kings, side, tab, frames, moves, ply)
    men = own & ~kings
    short_kings = ZERO if flying else own_kings
    men_backward = tab[R_MEN_BACKWARD] != 0
    # Directions as constants (forward pair first) so every shift's sign is known.
    f0 = 0 if side == 0 else 2
    f1 = f0 + 1
    b0 = 2 - f0
    b1 = b0 + 1
    a0 = abs(tab[T_DELTAS + 0])
    a1 = abs(tab[T_DELTAS + 1])
    af0 = a0 if f0 == 0 else a1  # |delta| of directions 0 and 3 is a0; of 1 and 2 it is a1
    af1 = a1 if f0 == 0 else a0
    men_f0 = step(step(men, f0, af0, board) & opp, f0, af0, board) & empty
    men_f1 = step(step(men, f1, af1, board) & opp, f1, af1, board) & empty
    men_b0 = ZERO
    men_b1 = ZERO
    if men_backward:
        men_b0 = step(step(men, b0, af1, board) & opp, b0, af1, board) & empty
        men_b1 = step(step(men, b1, af0, board) & opp, b1, af0, board) & empty
    k0 = ZERO
    k1 = ZERO
    k2 = ZERO
    k3 = ZERO
    if short_kings != ZERO:
        k0 = step(step(short_kings, 0, a0, board) & opp, 0, a0, board) & empty
        k1 = step(step(short_kings, 1, a1, board) & opp, 1, a1, board) & empty
        k2 = step(step(short_kings, 2, a1, board) & opp, 2, a1, board) & empty
        k3 = step(step(short_kings, 3, a0, board) & opp, 3, a0, board) & empty
    any_men = men_f0 | men_f1 | men_b0 | men_b1
    any_kings = k0 | k1 | k2 | k3
    if (any_men | any_kings) == ZERO:
        # quiet: men step forward only (known directions); kings via the general count
        n = popcount(step(men, f0, af0, board) & empty) + popcount(step(men, f1, af1, board) & empty)
        if own_kings != ZERO:
            n += count_quiet(own_kings, kings, empty, side, tab)
        return n
    # Squares from which a short piece could jump again, per kind of piece. A
    # jump's own origin is empty after it leaves, but the only jump that could
    # land there goes back over the piece just taken, which is not allowed, so
    # the static ``empty`` gives the exact answer.
    from0 = step(step(empty, 3, a0, board) & opp, 3, a0, board)  # can jump in direction 0
    from1 = step(step(empty, 2, a1, board) & opp, 2, a1, board)
    from2 = step(step(empty, 1, a1, board) & opp, 1, a1, board)
    from3 = step(step(empty, 0, a0, board) & opp, 0, a0, board)
    king_again = from0 | from1 | from2 | from3
    if men_backward:
        man_again = king_again
    elif side == 0:
        man_again = from0 | from1
    else:
        man_again = from2 | from3
    if (any_kings & king_again) != ZERO:
        return generate(white, black, kings, side, tab, frames, moves, ply)
    promo_row = promotion_mask(side, tab)
    promo_mode = tab[R_PROMO_MODE]
    crowning = any_men & promo_row
    if promo_mode == PROMO_STOP:
        goes_on = (any_men & ~promo_row) & man_again
    elif promo_mode == PROMO_CONTINUE_AS_KING:
        goes_on = ((any_men & ~promo_row) & man_again) | crowning  # crowned: search as king
    else:
        goes_on = any_men & man_again
    if goes_on != ZERO:
        return generate(white, black, kings, side, tab, frames, moves, ply)
    return (popcount(men_f0) + popcount(men_f1) + popcount(men_b0) + popcount(men_b1)
            + popcount(k0) + popcount(k1) + popcount(k2) + popcount(k3))


@njit(inline="always", cache=True)
def make(
    white: np.uint64, black: np.uint64, kings: np.uint64, side: int,
    frm: int, to: int, cap: np.uint64, promo: int,
) -> tuple[np.uint64, np.uint64, np.uint64]:
    """Copy-make: the (white, black, kings) bitboards after a move (side flips implicitly)."""
    fb = bit(frm)
    tb = bit(to)
    if side == 0:
        white = (white & ~fb) | tb
        black = black & ~cap
    else:
        black = (black & ~fb) | tb
        white = white & ~cap
    k = kings & ~cap
    if (k & fb) != ZERO:
        k = (k & ~fb) | tb
    if promo != 0:
        k |= tb
    return white, black, k


class RawMove(NamedTuple):
    """A legal move in bit indices (see engine.geometry for the layout)."""

    from_bit: int
    to_bit: int
    captured: int
    promotes: bool
    path: tuple[int, ...]


def legal_moves(variant: Variant, position: Position) -> list[RawMove]:
    """All legal moves of ``position``, in the generator's deterministic order."""
    t = kernel_tables(variant)
    moves = new_moves(1)
    n = generate(np.uint64(position.white), np.uint64(position.black), np.uint64(position.kings),
                 int(position.side_to_move), t.packed, new_scratch(), moves, 0)
    if n == OVERFLOW:
        raise RuntimeError(f"move buffer overflow (>{MAX_MOVES} moves or path > {MAX_PATH})")
    return [_raw_move(moves[0, :, i]) for i in range(n)]


def _raw_move(fields: npt.NDArray[np.int64]) -> RawMove:
    length = int(fields[MV_PLEN])
    frm, to = int(fields[MV_FROM]), int(fields[MV_TO])
    path = (frm, to) if length == 2 else tuple(int(b) for b in fields[MV_PATH : MV_PATH + length])
    return RawMove(from_bit=frm, to_bit=to, captured=int(fields[MV_CAP]),
                   promotes=bool(fields[MV_PROMO]), path=path)


def new_scratch() -> npt.NDArray[np.int64]:
    """The scratch array ``generate`` needs (capture-search frames and counters)."""
    return np.zeros((MAX_PATH + 1, _F_SIZE), dtype=np.int64)


__all__ = [
    "MAX_MOVES",
    "MAX_PATH",
    "MV_CAP",
    "MV_FROM",
    "MV_ORDER",
    "MV_PATH",
    "MV_PLEN",
    "MV_PROMO",
    "MV_SCORE",
    "MV_SIZE",
    "MV_TO",
    "OVERFLOW",
    "PROMO_CONTINUE_AS_KING",
    "RawMove",
    "count_legal",
    "count_quiet",
    "generate",
    "legal_moves",
    "make",
    "new_moves",
    "new_scratch",
]
