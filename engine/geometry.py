"""Board geometry shared by every generator: square numbering, bit layout, tables.

Bit layout ("ghost column"): the dark squares are numbered 0..S-1 row by row from
the top of the diagram (square number = index + 1, so index 0 is square 1), with
``h = n/2`` squares per row. Square index ``s`` lives at bit ``s + s // n``: one
unused ghost bit follows every pair of rows. With that padding, the four
diagonal neighbours of every square are at fixed bit offsets

    up-left  -(h+1)   up-right  -h   down-left  +h   down-right  +(h+1)

and a step off the board always lands on a ghost bit or outside ``board_mask``,
so a single shift plus a mask moves a whole bitboard one square diagonally.
White sits at the bottom and moves up; Black sits at the top and moves down.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache

import numpy as np
import numpy.typing as npt

from engine.variants import Color, Variant

UP_LEFT, UP_RIGHT, DOWN_LEFT, DOWN_RIGHT = 0, 1, 2, 3
DIRECTIONS = (UP_LEFT, UP_RIGHT, DOWN_LEFT, DOWN_RIGHT)
#: Directions a man of each colour moves in (index by Color value).
FORWARD_DIRECTIONS: dict[Color, tuple[int, int]] = {
    Color.WHITE: (UP_LEFT, UP_RIGHT),
    Color.BLACK: (DOWN_LEFT, DOWN_RIGHT),
}

IntArray = npt.NDArray[np.int64]


@dataclass(frozen=True)
class Geometry:
    """Precomputed tables for one board size (built once, then read-only)."""

    size: int
    per_row: int
    squares: int
    bits: int  # highest used bit + 1
    board_mask: int
    deltas: tuple[int, int, int, int]  # bit offset per direction
    bit_of_square: IntArray  # [squares] -> bit
    square_of_bit: IntArray  # [64] -> square index or -1
    row_of_square: IntArray  # [squares] -> row 0 (top) .. size-1 (bottom)
    col_of_square: IntArray  # [squares] -> column 0 (left) .. size-1
    neighbour: IntArray  # [4, 64] -> neighbouring bit or -1
    ray: IntArray  # [4, 64, size] -> k-th bit along a direction or -1
    ray_length: IntArray  # [4, 64]
    row_mask: tuple[int, ...] = field(repr=False)  # bitboard of each row

    def promotion_mask(self, color: Color) -> int:
        """Squares on which a man of ``color`` is crowned."""
        return self.row_mask[0] if color == Color.WHITE else self.row_mask[self.size - 1]

    def start_mask(self, color: Color, men_rows: int) -> int:
        """Squares holding ``color``'s men in the initial position."""
        rows = range(men_rows) if color == Color.BLACK else range(self.size - men_rows, self.size)
        mask = 0
        for r in rows:
            mask |= self.row_mask[r]
        return mask

    def bit(self, square_index: int) -> int:
        return int(self.bit_of_square[square_index])

    def shift(self, bitboard: int, direction: int) -> int:
        """Move every bit one square in ``direction`` (Python ints)."""
        d = self.deltas[direction]
        moved = bitboard << d if d > 0 else bitboard >> -d
        return moved & self.board_mask

    def squares_of(self, bitboard: int) -> list[int]:
        """Square indices (0-based) of the set bits, ascending."""
        out = []
        while bitboard:
            low = bitboard & -bitboard
            out.append(int(self.square_of_bit[low.bit_length() - 1]))
            bitboard ^= low
        return out

    def mask_of(self, square_indices: list[int] | tuple[int, ...]) -> int:
        mask = 0
        for s in square_indices:
            mask |= 1 << int(self.bit_of_square[s])
        return mask


def _build(size: int) -> Geometry:
    per_row = size // 2
    squares = size * per_row
    bit_of_square = np.array([s + s // size for s in range(squares)], dtype=np.int64)
    square_of_bit = np.full(64, -1, dtype=np.int64)
    square_of_bit[bit_of_square] = np.arange(squares)
    rows = np.arange(squares) // per_row
    # Even rows (from the top) have their dark squares on odd columns.
    cols = 2 * (np.arange(squares) % per_row) + (rows % 2 == 0)
    board_mask = 0
    for b in bit_of_square:
        board_mask |= 1 << int(b)
    deltas = (-(per_row + 1), -per_row, per_row, per_row + 1)
    step_rc = ((-1, -1), (-1, 1), (1, -1), (1, 1))
    coord_to_bit = {
        (int(r), int(c)): int(bit_of_square[s]) for s, (r, c) in enumerate(zip(rows, cols, strict=True))
    }
    neighbour = np.full((4, 64), -1, dtype=np.int64)
    ray = np.full((4, 64, size), -1, dtype=np.int64)
    ray_length = np.zeros((4, 64), dtype=np.int64)
    for s in range(squares):
        b = int(bit_of_square[s])
        for d, (dr, dc) in enumerate(step_rc):
            r, c, k = int(rows[s]) + dr, int(cols[s]) + dc, 0
            while (r, c) in coord_to_bit:
                ray[d, b, k] = coord_to_bit[(r, c)]
                k += 1
                r, c = r + dr, c + dc
            ray_length[d, b] = k
            if k:
                neighbour[d, b] = ray[d, b, 0]
                assert neighbour[d, b] == b + deltas[d]  # the layout invariant
    row_mask = tuple(
        sum(1 << int(bit_of_square[s]) for s in range(r * per_row, (r + 1) * per_row))
        for r in range(size)
    )
    for table in (bit_of_square, square_of_bit, rows, cols, neighbour, ray, ray_length):
        table.setflags(write=False)
    return Geometry(
        size=size,
        per_row=per_row,
        squares=squares,
        bits=int(bit_of_square[-1]) + 1,
        board_mask=board_mask,
        deltas=deltas,
        bit_of_square=bit_of_square,
        square_of_bit=square_of_bit,
        row_of_square=rows.astype(np.int64),
        col_of_square=cols.astype(np.int64),
        neighbour=neighbour,
        ray=ray,
        ray_length=ray_length,
        row_mask=row_mask,
    )


@cache
def geometry_for_size(size: int) -> Geometry:
    if size not in (8, 10):
        raise ValueError(f"unsupported board size {size!r}; supported: 8, 10")
    return _build(size)


def geometry(variant: Variant) -> Geometry:
    """The geometry tables of ``variant``'s board."""
    return geometry_for_size(variant.board_size)
