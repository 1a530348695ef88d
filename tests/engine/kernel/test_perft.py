"""The compiled generator reproduces published perft counts (bulk and full)."""

from __future__ import annotations

import pytest

from engine.kernel.perft import perft
from engine.position import initial_position
from engine.variants import get_variant
from tests.engine.perft_data import PERFT_START

# Depths whose counts stay under ~1M nodes run in the fast suite.
FAST_DEPTH = {"english": 8, "suicide": 7, "brazilian": 8, "russian": 8, "international": 6}


def _cases(fast: bool) -> list[tuple[str, int]]:
    cases = []
    for name, counts in PERFT_START.items():
        for depth in range(1, len(counts) + 1):
            if (depth <= FAST_DEPTH[name]) == fast:
                cases.append((name, depth))
    return cases


@pytest.mark.parametrize(("name", "depth"), _cases(fast=True))
def test_perft_start_fast(name: str, depth: int) -> None:
    variant = get_variant(name)
    expected = PERFT_START[name][depth - 1]
    assert perft(variant, initial_position(variant), depth, bulk=True) == expected
    if depth <= 6:
        assert perft(variant, initial_position(variant), depth, bulk=False) == expected


@pytest.mark.slow
@pytest.mark.parametrize(("name", "depth"), [c for c in _cases(fast=False) if c[0] != "suicide"])
def test_perft_start_deep(name: str, depth: int) -> None:
    variant = get_variant(name)
    assert perft(variant, initial_position(variant), depth) == PERFT_START[name][depth - 1]


def test_perft_depth_zero_is_one() -> None:
    variant = get_variant("english")
    assert perft(variant, initial_position(variant), 0) == 1


def test_perft_rejects_bad_depth() -> None:
    variant = get_variant("english")
    with pytest.raises(ValueError, match="depth"):
        perft(variant, initial_position(variant), -1)
