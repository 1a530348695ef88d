"""Variant rules and geometry packed into plain arrays for numba kernels.

Kernels receive these arrays as arguments (numba cannot take dataclasses), so a
variant's behaviour is entirely data: rule code branches on ``rules[R_*]``.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import numpy as np
import numpy.typing as npt

from engine.geometry import geometry
from engine.variants import CapturePromotion, EndgameMaterial, Variant

# Indices into KernelTables.rules
R_SIZE = 0
R_PER_ROW = 1
R_MEN_BACKWARD = 2
R_FLYING = 3
R_MAJORITY = 4
R_PROMO_MODE = 5  # PROMO_* below
R_DISTINCT_ORDERS = 6
R_QUIET_LIMIT = 7
R_INVERTED = 8
R_FIRST_PLAYER = 9
R_START_PIECES = 10  # pieces on the board at the start (both sides)
R_EG_COUNT = 11  # number of small-endgame draw counts (Variant.endgame_draws)
R_EG_MAX_PIECES = 12  # most pieces on the board any of them applies to
R_EG_ROAD = 13  # 1: some count runs only while the lone king stands on the main road
R_COUNT = 14

PROMO_STOP = 0
PROMO_CONTINUE_AS_MAN = 1
PROMO_CONTINUE_AS_KING = 2

_PROMO_CODE = {
    CapturePromotion.STOP: PROMO_STOP,
    CapturePromotion.CONTINUE_AS_MAN: PROMO_CONTINUE_AS_MAN,
    CapturePromotion.CONTINUE_AS_KING: PROMO_CONTINUE_AS_KING,
}

# Indices into KernelTables.masks
M_BOARD = 0
M_PROMO_WHITE = 1  # white men crown here (top row)
M_PROMO_BLACK = 2  # black men crown here (bottom row)
M_CENTER = 3  # the 8 central squares (the middle 4x4 block's dark squares)
M_MAIN_DIAGONAL = 4  # the long diagonal from White's bottom-left corner
M_LEFT_HALF = 5  # squares in the left half of the board (columns < size/2)
M_COUNT = 6

# Offsets into KernelTables.packed, the single int64 array kernels receive.
# Rules sit at offset 0 (so ``tab[R_*]`` reads a rule), then masks (as int64;
# every board mask fits in 54 bits), direction deltas, ray lengths and rays.
RAY_STRIDE = 10  # room for the longest ray on a 10x10 board (9 squares + sentinel)
T_MASKS = 16
T_DELTAS = T_MASKS + 8
T_RAYLEN = T_DELTAS + 8  # [4 * 64]: index d * 64 + bit
T_RAY = T_RAYLEN + 4 * 64  # [4 * 64 * RAY_STRIDE]: index (d * 64 + bit) * RAY_STRIDE + k; -1 past the end
T_ROW = T_RAY + 4 * 64 * RAY_STRIDE  # [64] row of a bit (0 = top), -1 off the board
T_COL = T_ROW + 64  # [64] column of a bit
T_ROWMASK = T_COL + 64  # [10] bitboard of each row
T_CONE = T_ROWMASK + 10  # [2 * 64] squares ahead of a man: index color * 64 + bit
# [4 * 64 + 1] Zobrist keys: (white man, white king, black man, black king) * 64 + bit; last: side
T_ZOBRIST = T_CONE + 2 * 64
# [2 * 4] bit planes of "rows advanced": plane k of colour c holds the squares
# where a man of c has advanced r rows with bit k of r set, so the total advance
# of a set of men is sum(2**k * popcount(men & plane_k)).
T_ADVANCE_PLANES = T_ZOBRIST + 4 * 64 + 1
# [EG_MAX * EG_STRIDE] the endgame draw counts, one record each: EG_* offsets below
T_ENDGAME = T_ADVANCE_PLANES + 8
EG_MAX = 6
EG_STRIDE = 10
T_SIZE = T_ENDGAME + EG_MAX * EG_STRIDE

EG_MOVES = 0  # moves each
EG_MAIN_ROAD = 1  # 1: the main-road slot (runs only while the lone king stands on the main diagonal)
EG_RESTART = 2  # 1: a capture or crowning starts the count afresh
EG_STRONG_MOVES = 3  # 1: drawn after the stronger side's last move
EG_STRONG = 4  # [3] lone-king counts: bit set of the stronger side's (kings, men), bit kings * EG_SIDE + men
EG_BOTH_KINGS = 7  # 1: the count applies while both sides have a king (EndgameMaterial.BOTH_KINGS)
EG_PIECES = 8  # both-kings counts: bit set of the numbers of pieces on the board
EG_SIDE = 13  # kings and men of one side are each at most 12 here

ZOBRIST_SEED = 20261129  # fixed: hashes must be identical in every process


@dataclass(frozen=True)
class KernelTables:
    """Everything a kernel needs to know about a variant, as numpy arrays."""

    rules: npt.NDArray[np.int64]  # [R_COUNT]
    masks: npt.NDArray[np.uint64]  # [M_COUNT]
    deltas: npt.NDArray[np.int64]  # [4] bit offset per direction
    neighbour: npt.NDArray[np.int64]  # [4, 64] neighbouring bit or -1
    ray: npt.NDArray[np.int64]  # [4, 64, size] k-th bit along a direction or -1
    ray_length: npt.NDArray[np.int64]  # [4, 64]
    packed: npt.NDArray[np.int64]  # [T_SIZE], everything above in one array (see T_*)


@cache
def kernel_tables(variant: Variant) -> KernelTables:
    """The packed tables of ``variant`` (cached; arrays are read-only)."""
    geo = geometry(variant)
    rules = np.zeros(R_COUNT, dtype=np.int64)
    rules[R_SIZE] = variant.board_size
    rules[R_PER_ROW] = variant.squares_per_row
    rules[R_MEN_BACKWARD] = int(variant.men_capture_backward)
    rules[R_FLYING] = int(variant.flying_kings)
    rules[R_MAJORITY] = int(variant.majority_capture)
    rules[R_PROMO_MODE] = _PROMO_CODE[variant.promotion_during_capture]
    rules[R_DISTINCT_ORDERS] = int(variant.distinct_capture_orders)
    rules[R_QUIET_LIMIT] = variant.quiet_ply_limit
    rules[R_INVERTED] = int(variant.outcome_inverted)
    rules[R_FIRST_PLAYER] = int(variant.first_player)
    rules[R_START_PIECES] = 2 * variant.men_rows * variant.squares_per_row
    rules[R_EG_COUNT] = len(variant.endgame_draws)
    rules[R_EG_MAX_PIECES] = max((draw.max_pieces for draw in variant.endgame_draws), default=0)
    rules[R_EG_ROAD] = int(any(draw.lone_king_on_main_road for draw in variant.endgame_draws))
    masks = np.zeros(M_COUNT, dtype=np.uint64)
    masks[M_BOARD] = geo.board_mask
    masks[M_PROMO_WHITE] = geo.row_mask[0]
    masks[M_PROMO_BLACK] = geo.row_mask[geo.size - 1]
    half = geo.size // 2
    rows, cols = geo.row_of_square, geo.col_of_square
    middle = range(half - 2, half + 2)
    centre = [s for s in range(geo.squares) if rows[s] in middle and cols[s] in middle]
    masks[M_CENTER] = geo.mask_of(centre)
    masks[M_MAIN_DIAGONAL] = geo.mask_of(
        [s for s in range(geo.squares) if rows[s] + cols[s] == geo.size - 1]
    )
    masks[M_LEFT_HALF] = geo.mask_of([s for s in range(geo.squares) if cols[s] < half])
    deltas = np.array(geo.deltas, dtype=np.int64)
    packed = np.full(T_SIZE, -1, dtype=np.int64)
    packed[:R_COUNT] = rules
    packed[T_MASKS : T_MASKS + M_COUNT] = masks.astype(np.int64)
    packed[T_DELTAS : T_DELTAS + 4] = deltas
    packed[T_RAYLEN : T_RAYLEN + 4 * 64] = geo.ray_length.reshape(-1)
    rays = np.full((4, 64, RAY_STRIDE), -1, dtype=np.int64)
    rays[:, :, : geo.size] = geo.ray
    packed[T_RAY:T_ROW] = rays.reshape(-1)
    packed[T_ROW : T_ROW + 64] = -1
    packed[T_COL : T_COL + 64] = -1
    for sq in range(geo.squares):
        b = int(geo.bit_of_square[sq])
        packed[T_ROW + b] = rows[sq]
        packed[T_COL + b] = cols[sq]
    packed[T_ROWMASK : T_ROWMASK + 10] = 0
    for r in range(geo.size):
        packed[T_ROWMASK + r] = geo.row_mask[r]
    packed[T_CONE : T_CONE + 128] = 0
    for sq in range(geo.squares):
        b = int(geo.bit_of_square[sq])
        for color, ahead in ((0, -1), (1, 1)):  # white men move up (rows decrease)
            cone = [
                t for t in range(geo.squares)
                if (rows[t] - rows[sq]) * ahead > 0 and abs(cols[t] - cols[sq]) <= abs(rows[t] - rows[sq])
            ]
            packed[T_CONE + color * 64 + b] = geo.mask_of(cone)
    for color in (0, 1):
        for k in range(4):
            plane = [
                sq for sq in range(geo.squares)
                if ((geo.size - 1 - rows[sq]) if color == 0 else rows[sq]) >> k & 1
            ]
            packed[T_ADVANCE_PLANES + color * 4 + k] = geo.mask_of(plane)
    _pack_endgame_draws(variant, packed)
    rng = np.random.default_rng(ZOBRIST_SEED)
    packed[T_ZOBRIST : T_ZOBRIST + 4 * 64 + 1] = rng.integers(1, 2**62, size=4 * 64 + 1, dtype=np.int64)
    for a in (rules, masks, deltas, packed):
        a.setflags(write=False)
    return KernelTables(
        rules=rules,
        masks=masks,
        deltas=deltas,
        neighbour=np.ascontiguousarray(geo.neighbour),
        ray=np.ascontiguousarray(geo.ray),
        ray_length=np.ascontiguousarray(geo.ray_length),
        packed=packed,
    )


def _pack_endgame_draws(variant: Variant, packed: npt.NDArray[np.int64]) -> None:
    """Write ``variant.endgame_draws`` into the T_ENDGAME records of ``packed``."""
    if len(variant.endgame_draws) > EG_MAX:
        raise ValueError(f"{variant.name}: at most {EG_MAX} endgame draw counts, "
                         f"got {len(variant.endgame_draws)}")
    packed[T_ENDGAME : T_ENDGAME + EG_MAX * EG_STRIDE] = 0
    for index, draw in enumerate(variant.endgame_draws):
        base = T_ENDGAME + index * EG_STRIDE
        packed[base + EG_MOVES] = draw.moves
        packed[base + EG_MAIN_ROAD] = int(draw.lone_king_on_main_road)
        packed[base + EG_RESTART] = int(draw.restart_on_material_change)
        packed[base + EG_STRONG_MOVES] = int(draw.strong_side_moves)
        packed[base + EG_BOTH_KINGS] = int(draw.material is EndgameMaterial.BOTH_KINGS)
        packed[base + EG_PIECES] = sum(1 << pieces for pieces in draw.pieces)
        words = [0, 0, 0]
        for kings, men in draw.strong:
            key = kings * EG_SIDE + men
            words[key // 64] |= 1 << (key % 64)
        for word_index, word in enumerate(words):
            packed[base + EG_STRONG + word_index] = word - (1 << 64) if word >= 1 << 63 else word
