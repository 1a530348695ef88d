"""PDN game files: read tags/moves/results, skip comments, write, round-trip through Board."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.board import Board
from engine.errors import DraughtsError, PdnError
from engine.pdn import PdnGame, check_moves, format_game, game_from_board, parse_pdn, read_pdn, write_pdn
from engine.variants import VARIANTS, Variant, get_variant

TWO_GAMES = """
[Event "Club match"]
[White "A \\"Ace\\" Player"]
[Black "B"]
[GameType "21"]
[Result "1-0"]

1. 11-15 22-18 {the Single Corner} 2. 15x22 25x18 ; line comment
3. 8-11 (3. 12-16 (3. 9-13) 29-25) 29-25 $1 4. 4-8! 25-22?! 1-0

[Event "Second"]
[GameType "26"]
[FEN "W:Wa1,c3:Bb8,h6"]
1. c3-d4 h6-g5 2.d4-e5 *
"""


def test_parse_two_games() -> None:
    first, second = parse_pdn(TWO_GAMES)
    assert first.tags["Event"] == "Club match"
    assert first.tags["White"] == 'A "Ace" Player'
    assert first.moves == ["11-15", "22-18", "15x22", "25x18", "8-11", "29-25", "4-8", "25-22"]
    assert first.result == "1-0"
    assert first.variant() is get_variant("english")
    assert second.variant() is get_variant("brazilian")
    assert second.moves == ["c3-d4", "h6-g5", "d4-e5"]
    assert second.result == "*"


def test_replay_games() -> None:
    first, second = parse_pdn(TWO_GAMES)
    board = first.replay()
    assert board.ply == 8
    assert board.move_stack[2].pdn == "15x22"
    board = second.replay()
    assert board.fen(algebraic=True) == "B:We5,a1:Bb8,g5"
    assert first.replay("suicide").variant is get_variant("suicide")
    (tagged,) = parse_pdn('[GameType "21"]\n[Variant "suicide"]\n1. 11-15 *')
    assert tagged.variant() is get_variant("suicide")
    (foreign,) = parse_pdn('[GameType "20"]\n[Variant "Frisian-ish"]\n1. 32-28 *')
    assert foreign.variant() is get_variant("international")


def test_short_form_captures_in_pdn() -> None:
    (game,) = parse_pdn('[GameType "21"]\n[FEN "B:W6,15:B1"]\n1. 1x19 *')
    assert game.replay().move_stack[0].path == (1, 10, 19)


@pytest.mark.parametrize(
    ("text", "token"),
    [
        ("1. 11-15 22-18 foo 1-0", "'foo'"),
        ("1. 11-15 22-18 ) 1-0", "')'"),
        ("1. 11-15 (22-18", "'('"),
        ('[Event "x"] 1. 11-15 @ *', "'@'"),
        ("1. 11-15 22-18 2. 15", "'15'"),
    ],
)
def test_syntax_errors_quote_the_token(text: str, token: str) -> None:
    with pytest.raises(PdnError) as info:
        parse_pdn(text)
    assert token in str(info.value)


def test_illegal_move_in_replay_quotes_it() -> None:
    (game,) = parse_pdn("1. 11-15 23-17 *")
    with pytest.raises(PdnError, match="'23-17'"):
        game.replay()
    (game,) = parse_pdn("1. 11-15 22-99 *")
    with pytest.raises(PdnError, match="'22-99'"):
        check_moves(game)
    (game,) = parse_pdn('[GameType "30"] 1. 11-15 *')
    with pytest.raises(PdnError, match="'30'"):
        game.variant()
    (game,) = parse_pdn('[FEN "W:W1:B2"] 1. 11-15 *')
    with pytest.raises(PdnError, match="FEN"):
        game.replay()


def test_results_and_scores() -> None:
    games = parse_pdn("1. 11-15 1/2-1/2 1. 9-13 0-1 1. 10-14 2-0 1. 12-16 1-1")
    assert [g.result for g in games] == ["1/2-1/2", "0-1", "2-0", "1-1"]
    assert [g.moves for g in games] == [["11-15"], ["9-13"], ["10-14"], ["12-16"]]


def test_format_game_numbers_moves() -> None:
    game = PdnGame(tags={"Event": "t", "GameType": "21"}, moves=["11-15", "22-18", "15x22"], result="0-1")
    text = format_game(game)
    assert '[Event "t"]' in text and '[Result "0-1"]' in text
    assert text.rstrip().endswith("1. 11-15 22-18 2. 15x22 0-1")


def test_format_game_second_player_first() -> None:
    game = PdnGame(tags={"GameType": "21", "FEN": "W:W22:B15"}, moves=["22-18", "15x22"], result="0-1")
    assert "1... 22-18 2. 15x22 0-1" in format_game(game)


def test_game_from_board_and_file_round_trip(tmp_path: Path) -> None:
    board = Board("russian", "W:WK31:B7,18,9,22")
    board.push_text("31x13x2x16")
    game = game_from_board(board, tags={"Event": "turkish"}, algebraic=True)
    assert game.tags["GameType"] == "25"
    assert game.tags["FEN"] == "W:WKe1:Be7,b6,d4,c3"
    assert game.moves == ["e1xa5xd8xg5"]
    path = tmp_path / "games.pdn"
    write_pdn(path, [game, game_from_board(Board("english"))])
    first, second = read_pdn(path)
    assert first.tags == game.tags and first.moves == game.moves and first.result == game.result
    assert first.replay().position == board.position
    assert second.moves == [] and "FEN" not in second.tags


@pytest.mark.parametrize("variant", VARIANTS, ids=lambda v: v.name)
def test_random_games_round_trip(variant: Variant) -> None:
    rng = random.Random(99)
    board = Board(variant, ply_cap=200)
    while board.outcome() is None:
        board.push(rng.choice(board.legal_moves))
    game = game_from_board(board)
    outcome = board.outcome()
    assert outcome is not None and game.result == outcome.result
    (again,) = parse_pdn(format_game(game))
    assert again.variant() is variant
    replayed = again.replay()
    assert replayed.position == board.position
    assert replayed.move_stack == board.move_stack


@given(st.text(max_size=80))
@settings(max_examples=300, deadline=None)
def test_fuzzed_pdn_raises_only_draughts_errors(text: str) -> None:
    try:
        games = parse_pdn(text)
    except DraughtsError:
        return
    for game in games:
        try:
            game.replay()
        except DraughtsError:
            pass


_PDN_ALPHABET = st.sampled_from([*'0123456789x-./ *[]{}()"', "1-0", "11-15", "[GameType \"26\"]", "\n"])


@given(st.lists(_PDN_ALPHABET, max_size=40).map("".join))
@settings(max_examples=300, deadline=None)
def test_fuzzed_pdn_like_text(text: str) -> None:
    try:
        games = parse_pdn(text)
    except DraughtsError:
        return
    for game in games:
        try:
            game.replay()
        except DraughtsError:
            pass
