"""Blunder rate: a material-only search flags moves that lose material (or keep it, in suicide)."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pytest

from engine.board import Board
from engine.profile import LevelProfile
from engine.variants import get_variant
from pipeline.games.match import make_batch_spec, play_batch
from pipeline.games.openings import load_deck
from pipeline.games.players import inline_spec
from pipeline.games.records import GAMES_SCHEMA, GAMES_SCHEMA_VERSION, games_table
from pipeline.ratings.blunders import (
    MaterialScorer,
    blunder_rate,
    default_threshold,
    move_texts,
    wilson_interval,
)

# White to move: 23-18 walks into 14x23 (a man lost for nothing); 23-19 and the back-man moves are safe.
HANG_FEN = "W:W23,30:B14,2"
HANGING, SAFE = "23-18", "23-19"


def _row(fen: str, moves: str, white: str = "w", black: str = "b", variant: str = "english",
         game_id: int = 0) -> dict[str, Any]:
    """A games-table row with only what blunder_rate reads made meaningful."""
    row: dict[str, Any] = {name: 0 for name in GAMES_SCHEMA.names}
    row.update({
        "schema_version": GAMES_SCHEMA_VERSION, "run_id": "t", "variant": variant, "opening_id": "x",
        "opening_fen": fen, "player_a": white, "player_b": black, "a_color": "white",
        "white_player": white, "black_player": black, "white_profile_hash": "", "black_profile_hash": "",
        "result_pdn": "1/2-1/2", "winner": None, "termination": "ply_cap", "moves": moves, "final_fen": fen,
        "engine_version": "t", "game_id": game_id, "pair_id": game_id // 2,
    })
    return row


def _losses(variant: str, fen: str) -> dict[str, int]:
    board = Board(variant, fen)
    scorer = MaterialScorer(get_variant(variant), 4)
    return {m.pdn: scorer.loss(board.position, m) for m in board.legal_moves}


def test_hanging_a_man_is_a_blunder_and_a_safe_move_is_not() -> None:
    losses = _losses("english", HANG_FEN)
    assert losses[HANGING] >= 100 and losses[SAFE] == 0
    hung = blunder_rate("english", games_table([_row(HANG_FEN, f"1. {HANGING}")]), "w")
    safe = blunder_rate("english", games_table([_row(HANG_FEN, f"1. {SAFE}")]), "w")
    assert (hung.moves, hung.blunders, hung.rate) == (1, 1, 1.0)
    assert (safe.moves, safe.blunders, safe.rate) == (1, 0, 0.0)
    assert hung.threshold == 100.0 and hung.depth == 4
    # Black's moves are not White's: the other player has no decision in this one-ply game.
    assert blunder_rate("english", games_table([_row(HANG_FEN, f"1. {HANGING}")]), "b").moves == 0


def test_suicide_flips_the_sign_of_material() -> None:
    assert default_threshold(get_variant("suicide")) == 100.0
    losses = _losses("suicide", HANG_FEN)
    assert losses[HANGING] == 0  # giving a man away is what suicide wants
    assert losses[SAFE] >= 100  # keeping it is the mistake
    table = games_table([_row(HANG_FEN, f"1. {HANGING}", variant="suicide", game_id=0),
                         _row(HANG_FEN, f"1. {SAFE}", variant="suicide", game_id=2)])
    stats = blunder_rate("suicide", table, "w")
    assert (stats.moves, stats.blunders) == (2, 1)


def test_unreplayable_rows_name_the_player_and_game() -> None:
    with pytest.raises(ValueError, match=r"player 'w', game 7: move 1 '23-17'"):
        blunder_rate("english", games_table([_row(HANG_FEN, "1. 23-17", game_id=7)]), "w")
    with pytest.raises(ValueError, match=r"player 'w', game 5: the game is 'suicide'"):
        blunder_rate("english", games_table([_row(HANG_FEN, "1. 23-18", variant="suicide", game_id=5)]), "w")
    with pytest.raises(ValueError, match="player 'w', game 3: bad opening FEN"):
        blunder_rate("english", games_table([_row("W:W99:B1", "", game_id=3)]), "w")


def test_wilson_interval_and_move_texts() -> None:
    assert wilson_interval(0, 0) == (0.0, 1.0)
    low, high = wilson_interval(5, 10)
    assert low == pytest.approx(0.2366, abs=1e-3) and high == pytest.approx(0.7634, abs=1e-3)
    assert wilson_interval(0, 20)[0] == 0.0 and wilson_interval(20, 20)[1] == 1.0
    assert move_texts("1. 11-15 23-19 2. 8-11 1... 9x18x27 1-0") == ["11-15", "23-19", "8-11", "9x18x27"]


def _match_table() -> pa.Table:
    """Random against a noiseless depth-4 engine, 3 colour-swapped pairs, short games."""
    english = get_variant("english")
    engine = inline_spec("d4", LevelProfile.from_knobs(english, "d4", knobs={
        "max_depth": 4, "node_budget": 20_000, "tt_log2": 12}))
    deck = load_deck("english")
    spec = make_batch_spec(run_id="t", batch_id=0, variant="english", player_a="random", player_b=engine,
                           run_seed=3, first_game_id=0, openings=[(o.id, o.fen) for o in deck[:3]],
                           ply_cap=50)
    return play_batch(spec)


def test_random_blunders_far_more_than_a_depth_4_engine() -> None:
    table = _match_table()
    rnd = blunder_rate("english", table, "random")
    eng = blunder_rate("english", table, "d4")
    assert rnd.moves >= 20 and eng.moves >= 20
    assert rnd.rate is not None and eng.rate is not None
    assert rnd.rate > eng.rate + 0.15
    assert rnd.ci_low > eng.ci_high  # separated beyond their 95 % intervals
    sampled = blunder_rate("english", table, "random", max_positions=10)
    assert sampled.moves == 10 and sampled.positions_seen == rnd.positions_seen
    assert sampled == blunder_rate("english", table, "random", max_positions=10)  # deterministic
