"""PositionBatch: N positions as struct-of-arrays bitboards (one numpy array per field).

Same bit layout as :mod:`engine.geometry`; ``side`` holds ``Color`` values (0 white,
1 black). Rows are independent, so a batch can mix sides to move and variants' boards
are told apart only by the caller's ``Variant``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from engine.position import Position
from engine.variants import Color

U64Array = npt.NDArray[np.uint64]
I8Array = npt.NDArray[np.int8]
Index = npt.NDArray[np.integer] | slice | Sequence[int]


@dataclass
class PositionBatch:
    """White, black and king bitboards plus the side to move, one row per position."""

    white: U64Array
    black: U64Array
    kings: U64Array
    side: I8Array

    def __post_init__(self) -> None:
        n = len(self.white)
        if not len(self.black) == len(self.kings) == len(self.side) == n:
            raise ValueError(
                "PositionBatch arrays differ in length: "
                f"{len(self.white)}, {len(self.black)}, {len(self.kings)}, {len(self.side)}"
            )

    def __len__(self) -> int:
        return len(self.white)

    @classmethod
    def from_positions(cls, positions: Sequence[Position]) -> PositionBatch:
        """Pack a list of :class:`Position` into arrays."""
        return cls(
            white=np.array([p.white for p in positions], dtype=np.uint64),
            black=np.array([p.black for p in positions], dtype=np.uint64),
            kings=np.array([p.kings for p in positions], dtype=np.uint64),
            side=np.array([int(p.side_to_move) for p in positions], dtype=np.int8),
        )

    @classmethod
    def repeat(cls, position: Position, n: int) -> PositionBatch:
        """``n`` copies of one position (e.g. the start of many games)."""
        return cls(
            white=np.full(n, position.white, dtype=np.uint64),
            black=np.full(n, position.black, dtype=np.uint64),
            kings=np.full(n, position.kings, dtype=np.uint64),
            side=np.full(n, int(position.side_to_move), dtype=np.int8),
        )

    @classmethod
    def empty(cls) -> PositionBatch:
        """A batch with no rows."""
        return cls(
            white=np.zeros(0, dtype=np.uint64),
            black=np.zeros(0, dtype=np.uint64),
            kings=np.zeros(0, dtype=np.uint64),
            side=np.zeros(0, dtype=np.int8),
        )

    @classmethod
    def concat(cls, batches: Sequence[PositionBatch]) -> PositionBatch:
        """Rows of several batches, in order."""
        if not batches:
            return cls.empty()
        return cls(
            white=np.concatenate([b.white for b in batches]),
            black=np.concatenate([b.black for b in batches]),
            kings=np.concatenate([b.kings for b in batches]),
            side=np.concatenate([b.side for b in batches]),
        )

    def position(self, i: int) -> Position:
        """Row ``i`` as a :class:`Position`."""
        return Position(
            white=int(self.white[i]),
            black=int(self.black[i]),
            kings=int(self.kings[i]),
            side_to_move=Color(int(self.side[i])),
        )

    def to_positions(self) -> list[Position]:
        """Unpack every row into a :class:`Position`."""
        return [
            Position(white=int(w), black=int(b), kings=int(k), side_to_move=Color(int(s)))
            for w, b, k, s in zip(
                self.white.tolist(), self.black.tolist(), self.kings.tolist(), self.side.tolist(),
                strict=True,
            )
        ]

    def take(self, indices: Index) -> PositionBatch:
        """The rows at ``indices`` (an index array, boolean mask or slice)."""
        idx = indices if isinstance(indices, slice) else np.asarray(indices)
        return PositionBatch(
            white=self.white[idx], black=self.black[idx], kings=self.kings[idx], side=self.side[idx]
        )
