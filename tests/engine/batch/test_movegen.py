"""Batch move generator: hand-built rule positions, internal consistency, API contracts.

The main rule-edge suite runs through Board (tests/engine/test_rules_edge.py); here the
batch generator must give the expected moves directly, and agree with itself across its
entry points (generate_moves, count_moves, sample_moves, expand, mixed-side batches).
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from engine.batch.movegen import (
    MAX_PATH,
    bit_index,
    count_moves,
    expand,
    generate_moves,
    sample_moves,
    successors,
)
from engine.batch.playout import random_positions
from engine.batch.positions import PositionBatch
from engine.fen import parse_fen
from engine.geometry import geometry
from engine.position import Position, apply_move, initial_position
from engine.variants import VARIANTS, Variant, get_variant

ENGLISH = get_variant("english")
BRAZILIAN = get_variant("brazilian")
RUSSIAN = get_variant("russian")
INTERNATIONAL = get_variant("international")

MoveView = tuple[tuple[int, ...], tuple[int, ...], bool]


def moves_of(variant: Variant, fen: str) -> list[MoveView]:
    """(path squares, captured squares, promotes) of every move, 1-based squares, sorted."""
    geo = geometry(variant)
    batch = PositionBatch.from_positions([parse_fen(variant, fen)])
    mb = generate_moves(variant, batch, with_paths=True)
    assert mb.path is not None and mb.path_len is not None
    out = []
    for j in range(len(mb)):
        path = tuple(int(geo.square_of_bit[b]) + 1 for b in mb.path[j, : mb.path_len[j]])
        caps = tuple(s + 1 for s in geo.squares_of(int(mb.captured[j])))
        out.append((path, caps, bool(mb.promotes[j])))
    return sorted(out)


# -- rules on hand-built positions -------------------------------------------------------------
def test_promotion_during_capture_follows_the_variant() -> None:
    # White man 11 jumps 7 and lands on the far row (2); from there 6 could be jumped to 9.
    fen = "W:W11:B6,7"
    assert moves_of(ENGLISH, fen) == [((11, 2), (7,), True)]  # STOP: crowned, move ends
    assert moves_of(BRAZILIAN, fen) == [((11, 2, 9), (6, 7), False)]  # goes on as a man
    assert moves_of(RUSSIAN, fen) == [  # crowned at once, goes on as a flying king
        ((11, 2, 9), (6, 7), True),
        ((11, 2, 13), (6, 7), True),
    ]


def test_flying_king_must_land_where_it_can_go_on() -> None:
    # King 29 takes 22; of the landings 18, 15, 11, 8, 4 only 15 lets it take 10 next.
    assert moves_of(BRAZILIAN, "W:WK29:B22,10") == [
        ((29, 15, 1), (10, 22), False),
        ((29, 15, 6), (10, 22), False),
    ]
    # With nothing to take afterwards every landing square is free.
    assert [m[0] for m in moves_of(BRAZILIAN, "W:WK29:B22")] == [
        (29, 4), (29, 8), (29, 11), (29, 15), (29, 18),
    ]


def test_capture_loop_back_to_the_start_square() -> None:
    # Short king 18 can take 15, 7, 6, 14 round the diamond either way: two english moves
    # that start and end on 18.
    loop = "W:WK18:B15,7,6,14"
    assert moves_of(ENGLISH, loop) == [
        ((18, 9, 2, 11, 18), (6, 7, 14, 15), False),
        ((18, 11, 2, 9, 18), (6, 7, 14, 15), False),
    ]
    # Flying kings: the two orders back to 18 are one move (same from, to, captured set).
    flying = moves_of(BRAZILIAN, loop)
    assert [m[0][-1] for m in flying].count(18) == 1
    assert len(flying) == 7 and all(m[1] == (6, 7, 14, 15) for m in flying)
    # Playing the loop leaves the king on 18 and removes the four pieces.
    pos = parse_fen(ENGLISH, loop)
    batch = PositionBatch.from_positions([pos])
    after = successors(batch, generate_moves(ENGLISH, batch)).to_positions()
    geo = geometry(ENGLISH)
    assert after[0] == after[1]
    assert after[0].white == after[0].kings == 1 << geo.bit(17) and after[0].black == 0


def test_majority_rule() -> None:
    # 22x13 takes one piece, 31x24x15 takes two: the majority rule leaves only the latter.
    fen = "W:W22,31:B17,19,27"
    assert moves_of(BRAZILIAN, fen) == [((31, 24, 15), (19, 27), False)]
    assert moves_of(RUSSIAN, fen) == [((22, 13), (17,), False), ((31, 24, 15), (19, 27), False)]


def test_turkish_strike_captured_pieces_block() -> None:
    # King 31 takes 22 and 9 (via 13) then 7; 18 stays jumped-over-able only if captured
    # pieces vanished at once. Under the Turkish strike they stay and block, so at most 3.
    fen = "W:WK31:B7,18,9,22"
    russian = moves_of(RUSSIAN, fen)
    assert [m[0] for m in russian] == [(31, 13, 2, 11), (31, 13, 2, 16), (31, 13, 2, 20), (31, 17, 3)]
    assert max(len(m[1]) for m in russian) == 3
    assert [m[0] for m in moves_of(BRAZILIAN, fen)] == [(31, 13, 2, 11), (31, 13, 2, 16), (31, 13, 2, 20)]
    # King 18 between 15 and 25: after taking one it may not run back over it to take the other.
    assert [m[0] for m in moves_of(BRAZILIAN, "W:WK18:B15,25")] == [(18, 4), (18, 8), (18, 11), (18, 29)]


def test_men_move_forward_and_capture_is_compulsory() -> None:
    assert moves_of(ENGLISH, "B:W18:B14,1") == [((14, 23), (18,), False)]
    assert moves_of(ENGLISH, "B:W26:B14,1") == [
        ((1, 5), (), False), ((1, 6), (), False), ((14, 17), (), False), ((14, 18), (), False),
    ]
    # English men never capture backwards; brazilian men do.
    assert moves_of(ENGLISH, "W:W18:B22") == [((18, 14), (), False), ((18, 15), (), False)]
    assert moves_of(BRAZILIAN, "W:W18:B22") == [((18, 25), (22,), False)]


def test_no_moves_and_no_pieces() -> None:
    blocked = PositionBatch.from_positions([parse_fen(ENGLISH, "B:W5,6,10:B1")])
    assert count_moves(ENGLISH, blocked).tolist() == [0]
    assert len(generate_moves(ENGLISH, blocked)) == 0
    nothing = PositionBatch.from_positions([Position(white=1, black=0, kings=0, side_to_move=1)])  # type: ignore[arg-type]
    assert count_moves(ENGLISH, nothing).tolist() == [0]


# -- consistency on random reachable positions --------------------------------------------------
@pytest.fixture(scope="module", params=[v.name for v in VARIANTS])
def sample(request: pytest.FixtureRequest) -> tuple[Variant, PositionBatch]:
    variant = get_variant(request.param)
    return variant, random_positions(variant, 1500, seed=11)


def test_counts_agree(sample: tuple[Variant, PositionBatch]) -> None:
    variant, batch = sample
    mb = generate_moves(variant, batch, with_paths=True)
    assert np.array_equal(count_moves(variant, batch), mb.counts)
    assert mb.offsets[0] == 0 and mb.offsets[-1] == len(mb)
    assert np.array_equal(mb.index, np.repeat(np.arange(len(batch)), mb.counts))
    # single-bit masks, paths that start on from and end on to
    assert np.all(np.bitwise_count(mb.from_bb) == 1) and np.all(np.bitwise_count(mb.to_bb) == 1)
    assert mb.path is not None and mb.path_len is not None and mb.path.shape == (len(mb), MAX_PATH)
    assert np.array_equal(mb.path[:, 0], bit_index(mb.from_bb))
    assert np.array_equal(mb.path[np.arange(len(mb)), mb.path_len - 1], bit_index(mb.to_bb))
    quiet = mb.captured == 0
    assert np.all(mb.path_len[quiet] == 2)
    assert np.all(mb.path_len[~quiet] == np.bitwise_count(mb.captured[~quiet]) + 1)
    # without paths: the same moves in the same order
    plain = generate_moves(variant, batch)
    assert plain.path is None
    assert np.array_equal(plain.from_bb, mb.from_bb) and np.array_equal(plain.captured, mb.captured)


def test_successors_match_apply_move(sample: tuple[Variant, PositionBatch]) -> None:
    variant, batch = sample
    batch = batch.take(slice(0, 400))
    mb = generate_moves(variant, batch)
    after = successors(batch, mb).to_positions()
    positions = batch.to_positions()
    for j, pos in enumerate(after):
        before = positions[int(mb.index[j])]
        expected = apply_move(before, int(mb.from_bit[j]), int(mb.to_bit[j]), int(mb.captured[j]),
                              bool(mb.promotes[j]))
        assert pos == expected


def test_expand_is_successors_of_all_moves(sample: tuple[Variant, PositionBatch]) -> None:
    variant, batch = sample
    # expand needs no uniform side; check both a mixed batch and a one-side batch
    for sub in (batch, batch.take(np.flatnonzero(batch.side == 0))):
        full = successors(sub, generate_moves(variant, sub)).to_positions()
        assert Counter(expand(variant, sub).to_positions()) == Counter(full)


def test_mixed_side_batch_equals_per_position(sample: tuple[Variant, PositionBatch]) -> None:
    variant, batch = sample
    batch = batch.take(slice(0, 300))
    whole = generate_moves(variant, batch, with_paths=True)
    assert whole.path is not None
    for i in range(0, 300, 7):
        one = generate_moves(variant, batch.take([i]), with_paths=True)
        a, b = whole.offsets[i], whole.offsets[i + 1]
        assert one.path is not None
        assert np.array_equal(one.from_bb, whole.from_bb[a:b])
        assert np.array_equal(one.captured, whole.captured[a:b])
        assert np.array_equal(one.path, whole.path[a:b])


def test_sample_moves_picks_the_listed_move(sample: tuple[Variant, PositionBatch]) -> None:
    variant, batch = sample
    mb = generate_moves(variant, batch)
    rng = np.random.default_rng(3)
    for _ in range(3):
        u = rng.random(len(batch))
        counts, chosen = sample_moves(variant, batch, u)
        assert np.array_equal(counts, mb.counts)
        has = np.flatnonzero(counts > 0)
        assert np.array_equal(chosen.index, has)
        pick = mb.offsets[has] + (u[has] * counts[has]).astype(np.int64)
        assert np.array_equal(chosen.from_bb, mb.from_bb[pick])
        assert np.array_equal(chosen.to_bb, mb.to_bb[pick])
        assert np.array_equal(chosen.captured, mb.captured[pick])
        assert np.array_equal(chosen.promotes, mb.promotes[pick])


def test_start_positions() -> None:
    for variant in VARIANTS:
        batch = PositionBatch.from_positions([initial_position(variant)])
        expected = 9 if variant.board_size == 10 else 7
        assert count_moves(variant, batch).tolist() == [expected]


def test_empty_batch() -> None:
    empty = PositionBatch.empty()
    for variant in VARIANTS:
        assert len(generate_moves(variant, empty)) == 0
        assert len(count_moves(variant, empty)) == 0
        assert len(expand(variant, empty)) == 0
