"""``tt_keep``: a player's search uses what its earlier searches in the same game stored. The game
runner and the per-move Player play the same games with it; a game never depends on the games
played before it; a move depends only on the game so far and the seed (the Player's scope)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from engine.board import Board
from engine.features import default_weights, weight_vector
from engine.fen import format_fen
from engine.games import GamePlayer, GameRunner
from engine.player import Player, find_move
from engine.position import Position
from engine.profile import LevelProfile, shipped_profile
from engine.search import Searcher
from engine.variants import Variant, get_variant
from tests.engine.test_games import opening, per_move, same_game

BUDGET = 3_000  # budget-bound searches, so what the table kept changes how deep they get


def hard(variant: Variant, *, keep: bool = True, **knobs: object) -> LevelProfile:
    """The shipped Hard at a small budget, with the table kept (or not)."""
    base = shipped_profile(variant).levels["hard"]
    chosen: dict[str, object] = {"node_budget": BUDGET, "max_depth": 64, "tt_keep": keep}
    chosen.update(knobs)
    return dataclasses.replace(base, **chosen)  # type: ignore[arg-type]


def starts(variant: Variant, count: int, seed: int) -> list[Position]:
    rng = np.random.default_rng(seed)
    return [opening(variant, rng, 4) for _ in range(count)]


@pytest.mark.parametrize("name", ["english", "international"])
def test_runner_plays_the_per_move_game_with_the_table_kept(name: str) -> None:
    variant = get_variant(name)
    a, b = hard(variant), hard(variant, noise_sigma=20.0)
    runner = GameRunner(variant, [GamePlayer.from_level(a), GamePlayer.from_level(b)])
    for g, start in enumerate(starts(variant, 3, seed=21)):
        result = runner.play(start, g % 2, 1 - g % 2, 7 + g, 9 + g, ply_cap=80)
        white, black = (a, b) if g % 2 == 0 else (b, a)
        # a Player per side, as each side has its own table in the runner
        same_game(result, per_move(variant, start, Player(white, 7 + g), Player(black, 9 + g), 80))


def test_one_player_on_both_sides_keeps_a_table_per_side() -> None:
    variant = get_variant("english")
    level = hard(variant)
    runner = GameRunner(variant, [GamePlayer.from_level(level)])
    start = starts(variant, 1, seed=22)[0]
    result = runner.play(start, 0, 0, 3, 3, ply_cap=80)
    same_game(result, per_move(variant, start, Player(level, 3), Player(level, 3), 80))
    both = Player(level, 3)  # one Player for both sides: a table per side too
    same_game(result, per_move(variant, start, both, both, 80))


def test_a_game_after_other_games_is_the_game_alone() -> None:
    variant = get_variant("brazilian")
    players = [GamePlayer.from_level(hard(variant)), GamePlayer.from_level(hard(variant, node_budget=5_000))]
    first, second = starts(variant, 2, seed=23)
    games = [first, first, second, second]  # each opening twice: a leak would meet its own positions
    together = GameRunner(variant, players).play_all(games, [0, 1, 0, 1], [1, 0, 1, 0], [1, 2, 3, 4],
                                                     [5, 6, 7, 8], ply_cap=100)
    for g, start in enumerate(games):
        alone = GameRunner(variant, players).play(start, g % 2, 1 - g % 2, g + 1, g + 5, ply_cap=100)
        assert alone.move_texts() == together[g].move_texts()
        assert alone.nodes == together[g].nodes


def test_the_knob_is_live_and_off_is_todays_search() -> None:
    variant = get_variant("english")
    games = starts(variant, 3, seed=24)
    played = {}
    for keep in (False, True):
        runner = GameRunner(variant, [GamePlayer.from_level(hard(variant, keep=keep))] * 2)
        played[keep] = runner.play_all(games, [0] * 3, [1] * 3, [1, 2, 3], [4, 5, 6], ply_cap=60)
    # off: the per-move Player with a fresh table every search (the engine before the knob)
    for g, start in enumerate(games):
        plain = hard(variant, keep=False)
        same_game(played[False][g], per_move(variant, start, Player(plain, g + 1), Player(plain, g + 4), 60))
    kept_depth = sum(sum(r.max_depth) for r in played[True])
    assert [r.move_texts() for r in played[True]] != [r.move_texts() for r in played[False]] or \
        kept_depth > sum(sum(r.max_depth) for r in played[False])


def _walk(variant: Variant, start: Position, plies: int, seed: int) -> Board:
    """A game of ``plies`` random moves from ``start``."""
    rng = np.random.default_rng(seed)
    board = Board(variant, format_fen(variant, start))
    for _ in range(plies):
        board.push(board.legal_moves[int(rng.integers(len(board.legal_moves)))])
    return board


def _key(chosen: object) -> tuple[object, ...]:
    return tuple(getattr(chosen, f) for f in ("move", "score", "depth", "nodes", "random", "pv"))


def _back(game: Board, ply: int) -> Board:
    """``game`` taken back to ``ply``."""
    board = game.copy()
    while board.ply > ply:
        board.pop()
    return board


def test_a_move_depends_only_on_the_game_so_far() -> None:
    """Asked at every turn of its side, late, again, after another game or after a take-back, the
    Player gives the same move with the same search (score, depth, nodes, line)."""
    variant = get_variant("russian")
    level = hard(variant, max_depth=6, node_budget=10**7)  # depth-bound: kept entries save nodes
    start = starts(variant, 1, seed=25)[0]
    steady, other = Player(level, 5), Player(hard(variant, keep=False, max_depth=4), 6)
    game = Board(variant, format_fen(variant, start))
    answers = {}
    while game.ply < 16 and not game.is_game_over():
        if game.ply % 2 == 0:
            answers[game.ply] = chosen = steady.choose_move(game)
        else:
            chosen = other.choose_move(game)
        game.push(chosen.move)
    last = max(answers)
    game = _back(game, last)
    assert _key(steady.choose_move(game)) == _key(answers[last])  # the same position again
    late = Player(level, 5)  # joins at the last position only
    assert _key(late.choose_move(game.copy())) == _key(answers[last])
    late.choose_move(_walk(variant, start, 6, seed=2))  # another game in between
    assert _key(late.choose_move(_back(game, last - 4))) == _key(answers[last - 4])  # a take-back
    assert _key(late.choose_move(game.copy())) == _key(answers[last])
    # the knob is live: searched without the earlier searches' entries, answers differ
    plain = Player(dataclasses.replace(level, tt_keep=False), 5)
    cold = {ply: plain.choose_move(_back(game, ply)) for ply in answers}
    assert _key(cold[0]) == _key(answers[0])  # nothing earlier to keep
    assert any(_key(cold[p])[1:4] != _key(answers[p])[1:4] for p in answers)


def test_a_new_game_scope_forgets_the_searches_before_it() -> None:
    variant = get_variant("english")
    weights = weight_vector(default_weights(variant))

    def searcher(keep: bool = True) -> Searcher:
        return Searcher(variant, weights, 8, 10**8, True, 18, tt_keep=keep)

    used = searcher()
    first = used.search(Board(variant).position)
    later = Board(variant)
    for move in first.pv[:2]:
        later.push(find_move(later, move, False) or later.legal_moves[0])
    kept = used.search(later.position)  # with the first search's entries
    used.new_game()
    fresh = used.search(later.position)
    for other in (searcher(), searcher(keep=False)):
        alone = other.search(later.position)
        assert (fresh.best, fresh.score, fresh.depth, fresh.nodes) == (alone.best, alone.score,
                                                                        alone.depth, alone.nodes)
    assert kept.nodes != fresh.nodes  # the kept entries were used
