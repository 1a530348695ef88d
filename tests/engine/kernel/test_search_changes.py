"""The optional search changes (late-move reductions, partial iterations): off they change
nothing, on they do what they claim."""

from __future__ import annotations

import pytest

from engine.features import default_weights, weight_vector
from engine.search import Searcher
from engine.variants import Variant, get_variant
from tests.engine.kernel.test_search import _random_positions

UNBOUNDED = 10**8


def _searcher(variant: Variant, depth: int, budget: int, *, reductions: bool = False,
              partial: bool = False) -> Searcher:
    weights = weight_vector(default_weights(variant))
    return Searcher(variant, weights, depth, budget, True, 16, reductions, partial)


def _key(result: object) -> tuple[object, ...]:
    return tuple(getattr(result, f) for f in ("best", "score", "depth", "nodes", "pv"))


@pytest.mark.parametrize("name", ["english", "brazilian", "suicide"])
def test_reductions_leave_shallow_searches_alone_and_save_nodes_deeper(name: str) -> None:
    variant = get_variant(name)
    positions = _random_positions(variant, 12, seed=5)
    for position in positions:  # reductions start at depth 3, so 2-ply searches are untouched
        plain = _searcher(variant, 2, UNBOUNDED).search(position)
        assert _key(_searcher(variant, 2, UNBOUNDED, reductions=True).search(position)) == _key(plain)
    deep = 8
    plain_nodes = sum(_searcher(variant, deep, UNBOUNDED).search(p).nodes for p in positions)
    reduced = [_searcher(variant, deep, UNBOUNDED, reductions=True).search(p) for p in positions]
    assert all(r.best is not None for r in reduced)
    assert sum(r.nodes for r in reduced) < plain_nodes  # fewer nodes to the same depth


def test_partial_iterations_change_nothing_when_the_budget_never_binds() -> None:
    variant = get_variant("brazilian")
    for position in _random_positions(variant, 8, seed=6):
        plain = _searcher(variant, 6, UNBOUNDED).search(position)
        assert _key(_searcher(variant, 6, UNBOUNDED, partial=True).search(position)) == _key(plain)


@pytest.mark.parametrize("name", ["english", "brazilian"])
def test_a_partial_iterations_move_is_at_least_as_good_one_ply_deeper(name: str) -> None:
    """Where the budget cuts an iteration short and the knob changes the move, the move played
    scores at least as well as the last finished iteration's best in an exact search one ply
    deeper than that iteration (the depth the cut iteration was reaching)."""
    variant = get_variant(name)
    changed = 0
    for position in _random_positions(variant, 40, seed=7):
        for budget in (3_000, 12_000):
            plain = _searcher(variant, 64, budget).search(position)
            partial = _searcher(variant, 64, budget, partial=True).search(position)
            assert (partial.depth, partial.nodes) == (plain.depth, plain.nodes)  # the same work
            if partial.best == plain.best:
                continue
            changed += 1
            exact = _searcher(variant, plain.depth + 1, UNBOUNDED).search(position, exact_root=True)
            assert exact.root_scores is not None
            scores = dict(zip(exact.root_moves, exact.root_scores, strict=True))
            assert scores[partial.best] >= scores[plain.best]
    assert changed > 0  # the knob is live: some cut iteration found a better move
