"""Perft over the batch generator: expand a whole ply at a time, count the last ply.

Levels are expanded breadth-first as long as they are small; a level larger than
``chunk`` positions is split and each chunk is expanded depth-first, so memory stays
bounded (a few chunks per remaining ply) and the arrays stay cache-sized.
"""

from __future__ import annotations

from engine.batch.movegen import count_moves, expand
from engine.batch.positions import PositionBatch
from engine.errors import DraughtsError
from engine.position import Position
from engine.variants import Variant

#: Positions expanded at once; ~16 arrays of this many uint64 fit in L2/L3 cache.
DEFAULT_CHUNK = 1 << 15
MAX_PERFT_DEPTH = 40


def perft_batch(variant: Variant, batch: PositionBatch, depth: int, bulk: bool = True,
                chunk: int = DEFAULT_CHUNK) -> int:
    """Sum of the perft counts of every position of ``batch``."""
    if depth == 0:
        return len(batch)
    if len(batch) > chunk:
        return sum(
            perft_batch(variant, batch.take(slice(i, i + chunk)), depth, bulk, chunk)
            for i in range(0, len(batch), chunk)
        )
    if depth == 1 and bulk:
        return int(count_moves(variant, batch).sum())
    return perft_batch(variant, expand(variant, batch), depth - 1, bulk, chunk)


def perft(variant: Variant, position: Position, depth: int, bulk: bool = True,
          chunk: int = DEFAULT_CHUNK) -> int:
    """Number of move paths of length ``depth`` from ``position``.

    ``bulk`` counts the last ply's moves without playing them; ``bulk=False`` also
    builds every leaf position (slower).
    """
    if not 0 <= depth <= MAX_PERFT_DEPTH:
        raise DraughtsError(f"perft depth must be 0..{MAX_PERFT_DEPTH}, got {depth!r}")
    if chunk < 1:
        raise DraughtsError(f"perft chunk must be positive, got {chunk!r}")
    return perft_batch(variant, PositionBatch.from_positions([position]), depth, bulk, chunk)
