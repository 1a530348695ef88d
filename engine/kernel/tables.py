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
from engine.variants import CapturePromotion, Variant

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
R_COUNT = 10

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
M_COUNT = 3

# Offsets into KernelTables.packed, the single int64 array kernels receive.
# Rules sit at offset 0 (so ``tab[R_*]`` reads a rule), then masks (as int64;
# every board mask fits in 54 bits), direction deltas, ray lengths and rays.
RAY_STRIDE = 10  # room for the longest ray on a 10x10 board (9 squares + sentinel)
T_MASKS = 16
T_DELTAS = T_MASKS + 8
T_RAYLEN = T_DELTAS + 8  # [4 * 64]: index d * 64 + bit
T_RAY = T_RAYLEN + 4 * 64  # [4 * 64 * RAY_STRIDE]: index (d * 64 + bit) * RAY_STRIDE + k; -1 past the end
T_SIZE = T_RAY + 4 * 64 * RAY_STRIDE


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
    masks = np.zeros(M_COUNT, dtype=np.uint64)
    masks[M_BOARD] = geo.board_mask
    masks[M_PROMO_WHITE] = geo.row_mask[0]
    masks[M_PROMO_BLACK] = geo.row_mask[geo.size - 1]
    deltas = np.array(geo.deltas, dtype=np.int64)
    packed = np.full(T_SIZE, -1, dtype=np.int64)
    packed[:R_COUNT] = rules
    packed[T_MASKS : T_MASKS + M_COUNT] = masks.astype(np.int64)
    packed[T_DELTAS : T_DELTAS + 4] = deltas
    packed[T_RAYLEN : T_RAYLEN + 4 * 64] = geo.ray_length.reshape(-1)
    rays = np.full((4, 64, RAY_STRIDE), -1, dtype=np.int64)
    rays[:, :, : geo.size] = geo.ray
    packed[T_RAY:] = rays.reshape(-1)
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
