"""Bit primitives for numba kernels: popcount, lowest-bit index, diagonal shift.

numba has no public popcount for uint64, so ``popcount`` lowers straight to
LLVM's ``ctpop``; ``lowest_bit`` uses numba's own ``cttz`` intrinsic.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import types
from numba.core.extending import intrinsic
from numba.cpython.unsafe.numbers import trailing_zeros

from engine.kernel.jit import njit

ONE = np.uint64(1)
ZERO = np.uint64(0)


@intrinsic
def _ctpop(typingctx: Any, x: Any) -> Any:
    """LLVM population count of a uint64."""
    sig = types.uint64(types.uint64)

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        return builder.ctpop(args[0])

    return sig, codegen


@njit(inline="always", cache=True)
def popcount(x: np.uint64) -> int:
    """Number of set bits (as int64: a uint64 result would wrap on subtraction)."""
    return np.int64(_ctpop(np.uint64(x)))  # type: ignore[call-arg, return-value]


@njit(inline="always", cache=True)
def lowest_bit(x: np.uint64) -> int:
    """Index of the lowest set bit (undefined for 0), as int64."""
    return np.int64(trailing_zeros(np.uint64(x)))  # type: ignore[call-arg, return-value]


@njit(inline="always", cache=True)
def bit(k: int) -> np.uint64:
    """The bitboard with only bit ``k`` set."""
    return ONE << np.uint64(k)


@njit(inline="always", cache=True)
def step(x: np.uint64, direction: int, amount: int, board: np.uint64) -> np.uint64:
    """Move every set bit one square in ``direction`` (0, 1 up; 2, 3 down).

    ``amount`` is the direction's absolute bit offset. Taking the sign from the
    direction index, not from the offset, lets LLVM resolve it when it unrolls
    a loop over the four directions.
    """
    if direction < 2:
        return (x >> np.uint64(amount)) & board
    return (x << np.uint64(amount)) & board


@njit(inline="always", cache=True)
def shift(x: np.uint64, delta: int, board: np.uint64) -> np.uint64:
    """Move every set bit ``delta`` places (one diagonal step), staying on the board."""
    if delta > 0:
        return (x << np.uint64(delta)) & board
    return (x >> np.uint64(-delta)) & board
