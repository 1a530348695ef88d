"""Bench: fixed positions, a node-count signature that repeats exactly, depth checks."""

from __future__ import annotations

import pytest

from engine.bench import BENCH_POSITIONS, run_bench
from engine.board import Board
from engine.errors import DraughtsError
from engine.variants import variant_names


def test_positions_are_valid_and_cover_every_variant() -> None:
    assert {entry.variant for entry in BENCH_POSITIONS} == set(variant_names())
    assert sum(entry.variant == "english" for entry in BENCH_POSITIONS) >= 4
    for entry in BENCH_POSITIONS:
        board = Board(entry.variant, entry.fen)
        assert board.fen() == entry.fen  # written canonically
        assert len(board.legal_moves) >= 2 and board.outcome() is None
        assert 1 <= entry.depth <= 64


def test_signature_repeats_and_depth_override() -> None:
    first = run_bench(depth=4)
    second = run_bench(depth=4)
    assert first.nodes == second.nodes == first.signature == sum(row.nodes for row in first.rows)
    assert [row.best for row in first.rows] == [row.best for row in second.rows]
    assert all(row.depth == 4 and row.best is not None for row in first.rows)
    assert len(first.rows) == len(BENCH_POSITIONS)
    assert first.seconds > 0 and first.nps > 0
    assert run_bench(depth=5).nodes > first.nodes


@pytest.mark.parametrize("depth", [0, -1, 65, True])
def test_bad_depth(depth: int) -> None:
    with pytest.raises(DraughtsError, match="bench depth"):
        run_bench(depth=depth)


def test_default_bench_repeats() -> None:
    first, second = run_bench(), run_bench()
    assert first.signature == second.signature
    assert [row.depth for row in first.rows] == [entry.depth for entry in BENCH_POSITIONS]
