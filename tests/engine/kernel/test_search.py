"""The search kernel: equals plain minimax at low depth, obeys its limits, is deterministic."""

from __future__ import annotations

import random

import numpy as np
import pytest

from engine.features import default_weights, weight_vector
from engine.kernel.movegen import legal_moves
from engine.kernel.search import child_hash, position_hash
from engine.kernel.tables import kernel_tables
from engine.position import Position, apply_move, initial_position
from engine.search import Searcher
from engine.variants import VARIANTS, Variant, get_variant
from tests.engine.search_reference import minimax


def _random_positions(variant: Variant, count: int, seed: int) -> list[Position]:
    rng = random.Random(seed)
    out: list[Position] = []
    while len(out) < count:
        position = initial_position(variant)
        for _ in range(rng.randrange(0, 60)):
            moves = legal_moves(variant, position)
            if not moves:
                break
            m = rng.choice(moves)
            position = apply_move(position, m.from_bit, m.to_bit, m.captured, m.promotes)
        if legal_moves(variant, position):
            out.append(position)
    return out


@pytest.mark.parametrize("variant", VARIANTS, ids=lambda v: v.name)
def test_search_equals_minimax(variant: Variant) -> None:
    weights = weight_vector(default_weights(variant))
    for position in _random_positions(variant, 8, seed=11):
        for depth in (1, 2, 3):
            searcher = Searcher(variant, weights, depth, 10**8, True, 14)
            expected = minimax(variant, position, depth, weights)
            assert searcher.search(position).score == expected
            exact = searcher.search(position, exact_root=True)
            assert exact.root_scores is not None
            assert max(exact.root_scores) == expected
            assert exact.best is not None
            assert exact.root_scores[exact.root_moves.index(exact.best)] == expected


@pytest.mark.parametrize("variant", VARIANTS, ids=lambda v: v.name)
def test_incremental_hash_matches_full_hash(variant: Variant) -> None:
    tab = kernel_tables(variant).packed
    for position in _random_positions(variant, 30, seed=5):
        args = (np.uint64(position.white), np.uint64(position.black), np.uint64(position.kings),
                int(position.side_to_move))
        h = position_hash(*args, tab)
        for m in legal_moves(variant, position):
            child = apply_move(position, m.from_bit, m.to_bit, m.captured, m.promotes)
            full = position_hash(np.uint64(child.white), np.uint64(child.black),
                                 np.uint64(child.kings), int(child.side_to_move), tab)
            assert child_hash(h, *args, m.from_bit, m.to_bit, np.uint64(m.captured),
                              int(m.promotes), tab) == full


def test_depth_limit_is_exact() -> None:
    variant = get_variant("english")
    searcher = Searcher(variant, weight_vector(default_weights(variant)), 4, 10**7, True, 16)
    assert searcher.search(initial_position(variant)).depth == 4


def test_node_budget_bounds_the_search() -> None:
    variant = get_variant("english")
    weights = weight_vector(default_weights(variant))
    searcher = Searcher(variant, weights, 64, 5000, True, 16)
    result = searcher.search(initial_position(variant))
    # the budget is checked at every node; the root's own move loop adds at most its moves
    assert result.nodes <= 5000 + 10
    assert result.depth >= 3
    assert result.best in result.root_moves


def test_search_is_deterministic_across_reuse() -> None:
    variant = get_variant("brazilian")
    weights = weight_vector(default_weights(variant))
    positions = _random_positions(variant, 5, seed=2)
    fresh = [Searcher(variant, weights, 64, 20_000, True, 16).search(p) for p in positions]
    reused_searcher = Searcher(variant, weights, 64, 20_000, True, 16)
    reused = [reused_searcher.search(p) for p in positions]
    assert [(r.best, r.score, r.nodes, r.depth) for r in fresh] == [
        (r.best, r.score, r.nodes, r.depth) for r in reused
    ]


def test_no_legal_move_is_a_loss_or_a_suicide_win() -> None:
    for name, sign in (("english", -1), ("suicide", 1)):
        variant = get_variant(name)
        from engine.variants import Color

        position = Position(white=0, black=1, kings=0, side_to_move=Color.WHITE)  # White has no piece
        searcher = Searcher(variant, weight_vector(default_weights(variant)), 3, 1000, True, 10)
        result = searcher.search(position)
        assert result.best is None
        assert np.sign(result.score) == sign


def test_repetition_with_game_history_is_a_draw() -> None:
    variant = get_variant("english")
    # kings shuffling: white king on 1, black king on 32; white to move
    from engine.geometry import geometry

    geo = geometry(variant)
    start = Position(white=geo.mask_of([0]), black=geo.mask_of([31]), kings=geo.mask_of([0, 31]),
                     side_to_move=initial_position(variant).side_to_move.opponent)
    searcher = Searcher(variant, weight_vector(default_weights(variant)), 2, 10**6, False, 12)
    assert searcher.search(start).score == 0  # equal material, and no repetition needed
    moves = legal_moves(variant, start)
    after = apply_move(start, moves[0].from_bit, moves[0].to_bit, 0, False)
    # with the child already seen twice before, every continuation draws at once
    result = searcher.search(start, history=[after, start, after], quiet_plies=3, exact_root=True)
    assert result.root_scores is not None
    assert result.root_scores[0] == 0
