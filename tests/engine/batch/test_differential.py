"""Batch generator == compiled kernel generator, position by position.

On random reachable positions of every variant (a fast set and a large slow-marked one):
the multiset of (from, to, captured, promotes) per position must be equal, and for the
variants where every capture order is its own move (english, suicide) the multiset of
full paths too. Perft from random positions checks successors as well.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from engine.batch.movegen import MoveBatch, count_moves, generate_moves
from engine.batch.perft import perft_batch
from engine.batch.playout import random_positions
from engine.batch.positions import PositionBatch
from engine.kernel.movegen import legal_moves
from engine.kernel.perft import perft as kernel_perft
from engine.variants import VARIANTS, Variant, get_variant

NAMES = [v.name for v in VARIANTS]
Key = tuple[object, ...]


def _batch_keys(variant: Variant, mb: MoveBatch) -> list[Key]:
    """One comparable key per move, in move order."""
    cols: list[list[object]] = [
        mb.from_bit.tolist(), mb.to_bit.tolist(), mb.captured.tolist(), mb.promotes.tolist()
    ]
    if variant.distinct_capture_orders:
        assert mb.path is not None and mb.path_len is not None
        cols.append([tuple(p[:n]) for p, n in zip(mb.path.tolist(), mb.path_len.tolist(), strict=True)])
    return list(zip(*cols, strict=True))


def _compare(variant: Variant, batch: PositionBatch) -> list[str]:
    """Descriptions of the positions where the two generators differ."""
    mb = generate_moves(variant, batch, with_paths=variant.distinct_capture_orders)
    assert np.array_equal(count_moves(variant, batch), mb.counts)
    keys = _batch_keys(variant, mb)
    offsets = mb.offsets.tolist()
    bad = []
    for i, pos in enumerate(batch.to_positions()):
        raw = legal_moves(variant, pos)
        if variant.distinct_capture_orders:
            theirs = Counter((m.from_bit, m.to_bit, m.captured, m.promotes, m.path) for m in raw)
        else:
            theirs = Counter((m.from_bit, m.to_bit, m.captured, m.promotes) for m in raw)
        mine = Counter(keys[offsets[i] : offsets[i + 1]])
        if mine != theirs:
            bad.append(f"{pos}: batch-only {mine - theirs}, kernel-only {theirs - mine}")
    return bad


def _coverage(variant: Variant, batch: PositionBatch) -> dict[str, int]:
    mb = generate_moves(variant, batch)
    ncap = np.bitwise_count(mb.captured)
    king = (batch.kings[mb.index] & mb.from_bb) != 0

    def rows(mask: np.ndarray) -> int:
        return len(np.unique(mb.index[mask]))

    return {
        "captures": rows(ncap > 0),
        "multi": rows(ncap >= 3),
        "king_captures": rows(king & (ncap > 0)),
        "capture_promotions": rows(mb.promotes & (ncap > 0)),
        "no_moves": int(np.sum(mb.counts == 0)),
    }


@pytest.mark.parametrize("name", NAMES)
def test_batch_equals_kernel_fast(name: str) -> None:
    variant = get_variant(name)
    batch = random_positions(variant, 2000, seed=2024)
    cov = _coverage(variant, batch)
    # the sample must exercise the interesting rules
    assert cov["captures"] > 300 and cov["multi"] > 5 and cov["king_captures"] > 20, cov
    assert cov["capture_promotions"] > 5, cov
    bad = _compare(variant, batch)
    assert not bad, f"{len(bad)} positions differ, e.g. {bad[:3]}"


@pytest.mark.parametrize("name", NAMES)
def test_perft_from_random_positions(name: str) -> None:
    variant = get_variant(name)
    batch = random_positions(variant, 40, seed=5)
    expected = sum(kernel_perft(variant, p, 3) for p in batch.to_positions())
    assert perft_batch(variant, batch, 3) == expected
    assert perft_batch(variant, batch, 3, bulk=False) == expected


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_batch_equals_kernel_large(name: str) -> None:
    variant = get_variant(name)
    batch = random_positions(variant, 100_000, seed=99)
    bad = _compare(variant, batch)
    assert not bad, f"{len(bad)} positions differ, e.g. {bad[:3]}"
