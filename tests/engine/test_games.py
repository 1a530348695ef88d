"""Game runner: the same games as Player move by move, adjudication as Board, no leaks between games."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from engine.board import Board, Outcome, Termination
from engine.games import GamePlayer, GameResult, GameRunner
from engine.player import Player, RandomMover
from engine.position import Position
from engine.profile import LevelProfile, shipped_profile
from engine.variants import VARIANTS, Color, Variant, get_variant

PerMove = Player | RandomMover


def weakened(variant: Variant, name: str, **knobs: object) -> LevelProfile:
    """A shipped level made cheap and noisy: every weakening knob on."""
    base = shipped_profile(variant).levels[name]
    chosen: dict[str, object] = {"max_depth": min(base.max_depth, 4),
                                 "node_budget": min(base.node_budget, 600),
                                 "noise_sigma": 30.0, "random_move_prob": 0.1, "top_k": 3,
                                 "temperature": 15.0}
    chosen.update(knobs)
    return dataclasses.replace(base, **chosen)  # type: ignore[arg-type]


def opening(variant: Variant, rng: np.random.Generator, plies: int) -> Position:
    """A start position a few random plies into the game (still going)."""
    while True:
        board = Board(variant)
        for _ in range(plies):
            if board.is_game_over():
                break
            board.push(board.legal_moves[int(rng.integers(len(board.legal_moves)))])
        if not board.is_game_over():
            return board.position


def per_move(variant: Variant, start: Position, white: PerMove, black: PerMove,
             ply_cap: int) -> tuple[list[str], Outcome, tuple[int, int], str]:
    """The game Board and the per-move players play: texts, outcome, nodes by colour, final FEN."""
    from engine.fen import format_fen

    board = Board(variant, format_fen(variant, start), ply_cap=ply_cap)
    nodes = [0, 0]
    texts = []
    outcome = board.outcome()
    while outcome is None:
        side = board.turn
        chosen = (white if side == Color.WHITE else black).choose_move(board)
        nodes[side] += chosen.nodes
        texts.append(board.move_to_text(chosen.move))
        board.push(chosen.move)
        outcome = board.outcome()
    return texts, outcome, (nodes[0], nodes[1]), board.fen()


def same_game(result: GameResult, reference: tuple[list[str], Outcome, tuple[int, int], str]) -> None:
    texts, outcome, nodes, fen = reference
    assert result.move_texts() == texts
    assert (result.termination, result.winner) == (outcome.termination, outcome.winner)
    assert result.nodes == nodes
    assert result.final_fen() == fen
    assert sum(result.moves_by) == result.plies == len(texts)


@pytest.mark.parametrize("variant", VARIANTS, ids=lambda v: v.name)
def test_runner_plays_the_per_move_game(variant: Variant) -> None:
    """Thousands of positions per variant: the runner's moves are the Player's, noise and random on."""
    a, b = weakened(variant, "easy"), weakened(variant, "medium", random_move_prob=0.05)
    runner = GameRunner(variant, [GamePlayer.from_level(a), GamePlayer.from_level(b),
                                  GamePlayer.uniform_random()])
    rng = np.random.default_rng(11)
    positions = 0
    game = 0
    while positions < 2000:
        start = opening(variant, rng, int(rng.integers(0, 8)))
        sa, sb = int(rng.integers(1 << 62)), int(rng.integers(1 << 62))
        ai, bi = (0, 1) if game % 3 else (0, 2)  # every third game against the random player
        pa: PerMove = Player(a, seed=sa)
        pb: PerMove = Player(b, seed=sb) if bi == 1 else RandomMover(variant, seed=sb)
        white, black = (ai, bi) if game % 2 == 0 else (bi, ai)
        pw, pbk = (pa, pb) if game % 2 == 0 else (pb, pa)
        ws, bs = (sa, sb) if game % 2 == 0 else (sb, sa)
        result = runner.play(start, white, black, ws, bs, ply_cap=150)
        same_game(result, per_move(variant, start, pw, pbk, ply_cap=150))
        positions += result.plies
        game += 1


def test_a_game_does_not_depend_on_the_games_before_it() -> None:
    english = get_variant("english")
    players = [GamePlayer.from_level(weakened(english, "easy")),
               GamePlayer.from_level(weakened(english, "hard"))]
    rng = np.random.default_rng(3)
    starts = [opening(english, rng, 4) for _ in range(64)]
    target = starts[-1]

    def last_of(count: int) -> str:
        """The target game played last of ``count`` games in one call of a fresh runner."""
        chosen = starts[-count:]
        whites = [i % 2 for i in range(count - 1)] + [1]
        results = GameRunner(english, players).play_all(
            chosen, whites, [1 - w for w in whites], [100 + i for i in range(count - 1)] + [5],
            [200 + i for i in range(count - 1)] + [6], 200)
        assert len(results) == count and results[-1].start == target
        return " ".join(results[-1].move_texts()) + results[-1].termination.value

    single = GameRunner(english, players).play(target, 1, 0, 5, 6, 200)
    assert last_of(1) == " ".join(single.move_texts()) + single.termination.value
    assert last_of(1) == last_of(7) == last_of(64)


def test_adjudication_matches_board() -> None:
    english = get_variant("english")
    runner = GameRunner(english, [GamePlayer.uniform_random()])
    kings = Board("english", "W:WK29,K32:BK1,K4")  # only kings: repetition or the quiet limit
    seen = set()
    for seed in range(30):
        result = runner.play(kings.position, 0, 0, seed, seed + 1, 400)
        reference = per_move(english, kings.position, RandomMover(english, seed),
                             RandomMover(english, seed + 1), 400)
        same_game(result, reference)
        seen.add(result.termination)
    assert Termination.THREEFOLD_REPETITION in seen
    capped = runner.play(kings.position, 0, 0, 1, 2, 3)
    assert (capped.termination, capped.plies, capped.winner) == (Termination.PLY_CAP, 3, None)
    stuck = runner.play(Board("english", "W:W32:BK28,K27,23").position, 0, 0, 1, 2, 10)
    assert (stuck.termination, stuck.winner, stuck.plies) == (Termination.NO_MOVES, Color.BLACK, 0)
    gone = runner.play(Board("english", "W:W:BK28").position, 0, 0, 1, 2, 10)
    assert (gone.termination, gone.winner) == (Termination.NO_PIECES, Color.BLACK)
    suicide = get_variant("suicide")
    inverted = GameRunner(suicide, [GamePlayer.uniform_random()]).play(
        Board("suicide", "W:W32:BK28,K27,23").position, 0, 0, 1, 2, 10)
    assert (inverted.termination, inverted.winner) == (Termination.NO_MOVES, Color.WHITE)


def test_bad_runner_inputs() -> None:
    english = get_variant("english")
    with pytest.raises(ValueError, match="at least one player"):
        GameRunner(english, [])
    runner = GameRunner(english, [GamePlayer.uniform_random()])
    with pytest.raises(ValueError, match="no player 1"):
        runner.play(Board("english").position, 0, 1, 0, 0, 10)
    with pytest.raises(ValueError, match="ply_cap"):
        runner.play(Board("english").position, 0, 0, 0, 0, -1)
    with pytest.raises(ValueError, match="one start, two players and two seeds per game"):
        runner.play_all([Board("english").position], [0, 0], [0], [0], [0], 10)


@pytest.mark.parametrize(("variant_name", "fen"), [
    ("international", "W:WK46,K47:BK3"),         # two kings against one: the 5-moves-each count
    ("international", "W:WK46,K47,K48:BK3"),     # three kings against one: the 16-moves-each count
    ("russian", "W:WK30,K31,K32:BK4"),           # three kings against one king on the main road
    ("russian", "W:WK30,K31:BK1"),               # two kings against one (FMJD-64 art. 7.2.8)
    ("russian", "W:WK30,K31,21:BK4"),            # two kings and a man, main road (art. 7.2.7)
])
def test_small_endgame_counts_end_runner_games_as_board_games(variant_name: str, fen: str) -> None:
    """The runner keeps the small-endgame draw count of the game, and its searches see it."""
    variant = get_variant(variant_name)
    level = dataclasses.replace(shipped_profile(variant).levels["medium"], max_depth=4, node_budget=3000)
    runner = GameRunner(variant, [GamePlayer.from_level(level), GamePlayer.uniform_random()])
    start = Board(variant, fen).position
    ends = set()
    for seed in range(4):
        for white, black in ((0, 0), (1, 1)):
            result = runner.play(start, white, black, seed, seed + 7, 300)
            per = [Player(level, seed=s) if p == 0 else RandomMover(variant, seed=s)
                   for p, s in ((white, seed), (black, seed + 7))]
            same_game(result, per_move(variant, start, per[0], per[1], ply_cap=300))
            ends.add(result.termination)
    assert Termination.ENDGAME_MOVE_LIMIT in ends
