"""Player: deterministic for a seed, uniform random moves, exact limits, noise / top-k / softmax."""

from __future__ import annotations

import dataclasses
import pickle
from collections import Counter

import numpy as np
import pytest

from engine.board import Board
from engine.errors import DraughtsError
from engine.kernel.decide import normal, pick_weakened, stream_key, uniform
from engine.kernel.movegen import legal_moves as kernel_legal_moves
from engine.move import Move
from engine.player import ChosenMove, Player, find_move, game_history
from engine.profile import LevelProfile, load_profile, profile_dir, shipped_profile
from engine.search import Searcher
from engine.variants import VARIANTS, Variant, get_variant

ENGLISH = get_variant("english")
MIDGAMES = {
    "english": "B:W13,19,20,21,25,26,27,28,29,30,31,32:B1,2,3,5,6,7,8,9,10,11,12,18",
    "suicide": "B:W17,20,22,23,24,25,26,29,30,31,32:B1,2,3,4,5,6,7,8,11,13,16",
    "brazilian": "W:W18,21,22,25,28,29,30,31,32:B1,2,3,4,5,8,9,10,12",
    "russian": "B:W17,21,22,23,24,27,28,29,30,31,32:B1,2,3,4,5,8,10,11,12,13,14",
    "international": "W:W25,31,32,33,35,36,37,40,41,42,43,44,45,46,47,48,49,50:"
    "B1,2,3,4,5,6,7,8,9,10,12,13,14,16,17,18,21,24",
}
NO_WEAKENING = {"noise_sigma": 0.0, "random_move_prob": 0.0, "top_k": 0, "temperature": 0.0}


def level(variant: Variant = ENGLISH, **knobs: object) -> LevelProfile:
    chosen: dict[str, object] = {"max_depth": 4, "node_budget": 1_000_000, "quiescence": True, "tt_log2": 14}
    chosen.update(NO_WEAKENING)
    chosen.update(knobs)
    return LevelProfile.from_knobs(variant, "test", knobs=chosen)  # type: ignore[arg-type]


def same_choice(a: ChosenMove, b: ChosenMove) -> bool:
    fields = ("move", "score", "depth", "nodes", "random", "pv")
    return all(getattr(a, name) == getattr(b, name) for name in fields)


def assert_pv_legal(board: Board, chosen: ChosenMove) -> None:
    walker = board.copy()
    assert chosen.pv and chosen.pv[0] == chosen.move
    for move in chosen.pv:
        walker.push(move)


def play_game(white: Player, black: Player, plies: int, variant: str = "english") -> list[str]:
    board = Board(variant)
    texts = []
    for _ in range(plies):
        if board.is_game_over():
            break
        player = white if board.turn.name == "WHITE" else black
        chosen = player.choose_move(board)
        assert chosen.move in board.legal_moves
        texts.append(chosen.move.pdn)
        board.push(chosen.move)
    return texts


# -- determinism ----------------------------------------------------------------------------------
def test_replay_is_deterministic_and_players_are_reusable() -> None:
    # the product's baseline Easy: random moves and noise, so other seeds give other games
    # (the calibrated english Easy is a plain 1-ply search and plays the same game every time)
    easy = load_profile(profile_dir() / "english-baseline.json", "english").levels["easy"]
    first = play_game(Player(easy, seed=1), Player(easy, seed=2), 40)
    white, black = Player(easy, seed=1), Player(easy, seed=2)
    assert play_game(white, black, 40) == first
    assert play_game(white, black, 40) == first  # the same players, a second game
    assert play_game(Player(easy, seed=3), Player(easy, seed=4), 40) != first


def test_search_does_not_leak_between_moves() -> None:
    player = Player(level(max_depth=64, node_budget=20_000))
    board = Board("english", MIDGAMES["english"])
    before = player.choose_move(board)
    player.choose_move(Board("english"))
    assert same_choice(before, player.choose_move(board))
    assert same_choice(before, Player(level(max_depth=64, node_budget=20_000)).choose_move(board))


def test_player_and_levels_pickle() -> None:
    easy = shipped_profile("english").levels["easy"]
    player = pickle.loads(pickle.dumps(Player(easy, seed=5)))
    board = Board("english")
    assert same_choice(player.choose_move(board), Player(easy, seed=5).choose_move(board))


# -- random moves ---------------------------------------------------------------------------------
def test_random_move_prob_one_is_uniform() -> None:
    board = Board("english")  # 7 legal moves
    lv = level(random_move_prob=1.0)
    counts: Counter[Move] = Counter()
    draws = 1400
    for seed in range(draws):
        chosen = Player(lv, seed=seed).choose_move(board)
        assert chosen.random and chosen.nodes == 0 and chosen.score is None and chosen.depth == 0
        counts[chosen.move] += 1
    assert set(counts) == set(board.legal_moves)
    expected = draws / len(board.legal_moves)
    chi2 = sum((count - expected) ** 2 / expected for count in counts.values())
    assert chi2 < 22.46  # 6 degrees of freedom, p = 0.001


def test_random_move_prob_is_a_rate() -> None:
    board = Board("english")
    lv = level(max_depth=1, random_move_prob=0.25)
    fired = sum(Player(lv, seed=seed).choose_move(board).random for seed in range(800))
    assert 150 <= fired <= 250  # 200 expected, sd ~12


def test_single_legal_move_is_played_without_search() -> None:
    board = Board("english", "W:WK10,K23,27,30:BK17,K26,5,7")
    assert len(board.legal_moves) == 1
    chosen = Player(level(random_move_prob=1.0)).choose_move(board)
    assert chosen.move == board.legal_moves[0]
    assert (chosen.nodes, chosen.score, chosen.random) == (0, None, False)


def test_bad_inputs() -> None:
    with pytest.raises(DraughtsError, match="no legal move"):
        Player(level()).choose_move(Board("english", "W:W32:BK28,K27,23"))
    with pytest.raises(DraughtsError, match="english level cannot play a brazilian board"):
        Player(level()).choose_move(Board("brazilian"))
    for bad in (-1, True, 1.5):
        with pytest.raises(DraughtsError, match="seed"):
            Player(level(), seed=bad)  # type: ignore[arg-type]


# -- exact limits ---------------------------------------------------------------------------------
@pytest.mark.parametrize("variant", VARIANTS, ids=lambda v: v.name)
def test_medium_like_reaches_exactly_max_depth(variant: Variant) -> None:
    for fen in (None, MIDGAMES[variant.name]):
        board = Board(variant, fen)
        chosen = Player(level(variant, max_depth=4)).choose_move(board)
        assert chosen.depth == 4 and chosen.nodes > 0 and isinstance(chosen.score, int)
        assert not chosen.random and chosen.seconds >= 0
        assert_pv_legal(board, chosen)


def test_node_budget_binds_hard_like() -> None:
    board = Board("english", MIDGAMES["english"])
    chosen = Player(level(max_depth=64, node_budget=5000)).choose_move(board)
    assert 1 <= chosen.depth < 64
    assert chosen.nodes <= 5000 + 64
    assert_pv_legal(board, chosen)


# -- weakening ------------------------------------------------------------------------------------
def exact_scores(lv: LevelProfile, board: Board) -> dict[Move, int]:
    searcher = Searcher(lv.variant, lv.weight_array(), lv.max_depth, lv.node_budget, lv.quiescence,
                        lv.tt_log2)
    result = searcher.search(board.position, game_history(board), board.quiet_plies, exact_root=True)
    assert result.root_scores is not None
    out = {}
    for raw, score in zip(result.root_moves, result.root_scores, strict=True):
        move = find_move(board, raw, board.variant.distinct_capture_orders)
        assert move is not None
        out[move] = score
    return out


def test_tiny_noise_plays_a_best_move() -> None:
    board = Board("english", MIDGAMES["english"])
    lv = level(max_depth=3, noise_sigma=1e-6)
    scores = exact_scores(lv, board)
    for seed in range(5):
        chosen = Player(lv, seed=seed).choose_move(board)
        assert chosen.score == scores[chosen.move] == max(scores.values())


def test_large_noise_spreads_the_choice() -> None:
    board = Board("english")
    lv = level(max_depth=2, noise_sigma=2000.0)
    chosen = {Player(lv, seed=seed).choose_move(board).move for seed in range(40)}
    assert len(chosen) >= 4


def test_top_k_with_hot_softmax_stays_in_the_top_k() -> None:
    board = Board("english", MIDGAMES["english"])
    lv = level(max_depth=3, top_k=2, temperature=1000.0)
    scores = exact_scores(lv, board)
    ranked = sorted(scores, key=lambda m: -scores[m])  # stable: generator order on ties
    order = list(scores)
    top2 = set(sorted(ranked[:2], key=order.index))
    picks = Counter(Player(lv, seed=seed).choose_move(board).move for seed in range(60))
    assert set(picks) == top2
    for move in picks:
        assert scores[move] >= sorted(scores.values())[-2]


def pick(scores: list[int], sigma: float, top_k: int, temperature: float, seed: int = 0) -> int:
    return int(pick_weakened(np.array(scores, dtype=np.int64), len(scores), sigma, top_k, temperature,
                             np.uint64(stream_key(seed, 0, 0))))


def test_pick_weakened_rules() -> None:
    assert pick([1, 5, 5, 3], 0.0, 0, 0.0) == 1  # ties go to the first
    assert pick([1, 5, 5, 3], 0.0, 1, 0.0) == 1
    assert pick([9, 5, 7, 3], 0.0, 0, 0.01) == 0  # cold softmax = argmax
    hot = Counter(pick([0, 10, 9, 10], 0.0, 2, 1e9, s) for s in range(400))
    assert set(hot) == {1, 3}
    soft = Counter(pick([0, 100], 0.0, 0, 100.0, s) for s in range(4000))
    share = soft[1] / 4000
    assert abs(share - np.e / (1 + np.e)) < 0.03  # softmax: p = e / (1 + e) ~ 0.731
    noisy = Counter(pick([0, 100], 1000.0, 0, 0.0, s) for s in range(400))
    assert set(noisy) == {0, 1}
    assert all(pick([0, 100], 1e-3, 0, 0.0, s) == 1 for s in range(50))


def test_counter_streams_are_uniform_normal_and_keyed() -> None:
    key = np.uint64(stream_key(7, 3, 12345))
    u = np.array([uniform(key, k) for k in range(20_000)])
    assert u.min() >= 0.0 and u.max() < 1.0 and abs(u.mean() - 0.5) < 0.01
    assert abs(np.corrcoef(u[:-1], u[1:])[0, 1]) < 0.03
    z = np.array([normal(key, 2 * k) for k in range(10_000)])
    assert abs(z.mean()) < 0.04 and abs(z.std() - 1.0) < 0.03
    keys = {int(stream_key(s, p, h)) for s in range(4) for p in range(4) for h in (0, 1, -5)}
    assert len(keys) == 48  # seed, ply and position each change the stream
    assert uniform(key, 5) == uniform(np.uint64(stream_key(7, 3, 12345)), 5)


def test_weakened_level_reports_the_exact_score_of_its_move() -> None:
    board = Board("english")
    lv = level(max_depth=3, noise_sigma=300.0)
    scores = exact_scores(lv, board)
    for seed in range(10):
        chosen = Player(lv, seed=seed).choose_move(board)
        assert chosen.score == scores[chosen.move]
        assert chosen.pv[0] == chosen.move


# -- plumbing -------------------------------------------------------------------------------------
def test_game_history_is_the_reversible_tail() -> None:
    board = Board("english", "B:WK29,K32:BK1,K4,12")
    positions = [board.position]
    for text in ("1-6", "29-25", "6-1", "25-29"):
        board.push_text(text)
        positions.append(board.position)
    assert board.quiet_plies == 4
    assert game_history(board) == positions[:-1]
    board.push_text("12-16")  # a man move resets the run
    assert game_history(board) == []


@pytest.mark.parametrize("variant", VARIANTS, ids=lambda v: v.name)
def test_find_move_maps_every_raw_move(variant: Variant) -> None:
    rng = np.random.default_rng(7)
    board = Board(variant)
    for _ in range(60):
        if board.is_game_over():
            break
        raws = kernel_legal_moves(variant, board.position)
        mapped = [find_move(board, raw, variant.distinct_capture_orders) for raw in raws]
        assert None not in mapped
        assert sorted(mapped, key=lambda m: (m.path, m.captures)) == board.legal_moves  # type: ignore[arg-type, return-value]
        board.push(board.legal_moves[int(rng.integers(len(board.legal_moves)))])


def test_profile_hash_passthrough() -> None:
    lv = level()
    assert Player(lv).profile_hash == lv.profile_hash()
    assert Player(dataclasses.replace(lv, level="other")).profile_hash == lv.profile_hash()
