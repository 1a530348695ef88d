"""The batch generator reproduces published perft counts (bulk and full, chunked or not)."""

from __future__ import annotations

import pytest

from engine.batch.perft import perft
from engine.errors import DraughtsError
from engine.position import initial_position
from engine.variants import get_variant
from tests.engine.perft_data import PERFT_START

# Deepest depth whose count stays around 1M nodes (fast suite); deeper ones are slow-marked.
FAST_DEPTH = {"english": 8, "suicide": 8, "brazilian": 8, "russian": 8, "international": 7}


def _cases(fast: bool) -> list[tuple[str, int]]:
    return [
        (name, depth)
        for name, counts in PERFT_START.items()
        for depth in range(1, len(counts) + 1)
        if (depth <= FAST_DEPTH[name]) == fast
    ]


@pytest.mark.parametrize(("name", "depth"), _cases(fast=True))
def test_perft_start_fast(name: str, depth: int) -> None:
    variant = get_variant(name)
    expected = PERFT_START[name][depth - 1]
    assert perft(variant, initial_position(variant), depth) == expected
    if depth <= FAST_DEPTH[name] - 1:
        assert perft(variant, initial_position(variant), depth, bulk=False) == expected


@pytest.mark.parametrize("name", ["english", "brazilian", "international"])
def test_small_chunks_give_the_same_count(name: str) -> None:
    # chunk=7 forces the depth-first split at every level
    variant = get_variant(name)
    start = initial_position(variant)
    for bulk in (True, False):
        assert perft(variant, start, 5, bulk=bulk, chunk=7) == PERFT_START[name][4]


@pytest.mark.slow
@pytest.mark.parametrize(("name", "depth"), [c for c in _cases(fast=False) if c[0] != "suicide"])
def test_perft_start_deep(name: str, depth: int) -> None:
    variant = get_variant(name)
    assert perft(variant, initial_position(variant), depth) == PERFT_START[name][depth - 1]


@pytest.mark.slow
@pytest.mark.parametrize(("name", "depth"), [("english", 10), ("brazilian", 9), ("international", 8)])
def test_perft_start_deep_full(name: str, depth: int) -> None:
    variant = get_variant(name)
    assert perft(variant, initial_position(variant), depth, bulk=False) == PERFT_START[name][depth - 1]


def test_depth_zero_and_bad_arguments() -> None:
    variant = get_variant("english")
    start = initial_position(variant)
    assert perft(variant, start, 0) == 1
    with pytest.raises(DraughtsError, match="depth"):
        perft(variant, start, -1)
    with pytest.raises(DraughtsError, match="chunk"):
        perft(variant, start, 3, chunk=0)
