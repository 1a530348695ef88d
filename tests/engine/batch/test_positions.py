"""PositionBatch: packing, unpacking and row selection."""

from __future__ import annotations

import numpy as np
import pytest

from engine.batch.positions import PositionBatch
from engine.position import Position, initial_position
from engine.variants import VARIANTS, Color


def _positions() -> list[Position]:
    out = [initial_position(v) for v in VARIANTS]
    out.append(Position(white=1 << 34, black=1, kings=1 | 1 << 34, side_to_move=Color.BLACK))
    return out


def test_round_trip() -> None:
    ps = _positions()
    batch = PositionBatch.from_positions(ps)
    assert len(batch) == len(ps)
    assert batch.white.dtype == np.uint64 and batch.side.dtype == np.int8
    assert batch.to_positions() == ps
    assert [batch.position(i) for i in range(len(ps))] == ps


def test_take_and_concat() -> None:
    ps = _positions()
    batch = PositionBatch.from_positions(ps)
    assert batch.take([2, 0]).to_positions() == [ps[2], ps[0]]
    assert batch.take(slice(1, 3)).to_positions() == ps[1:3]
    assert batch.take(np.array([True, False, False, False, False, True])).to_positions() == [ps[0], ps[5]]
    both = PositionBatch.concat([batch, batch.take([1])])
    assert both.to_positions() == [*ps, ps[1]]
    assert len(PositionBatch.concat([])) == 0


def test_repeat_and_empty() -> None:
    p = initial_position(VARIANTS[0])
    assert PositionBatch.repeat(p, 3).to_positions() == [p, p, p]
    assert PositionBatch.empty().to_positions() == []


def test_length_mismatch_is_rejected() -> None:
    z = np.zeros(2, dtype=np.uint64)
    with pytest.raises(ValueError, match="differ in length"):
        PositionBatch(z, z, z, np.zeros(3, dtype=np.int8))
