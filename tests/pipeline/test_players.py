"""Player specs and the random player."""

from __future__ import annotations

import pytest

from pipeline.games.players import (
    ChosenMove,
    PlayerSpec,
    PlayerSpecError,
    RandomPlayer,
    make_player,
    parse_player_spec,
)


@pytest.mark.parametrize(
    ("text", "spec"),
    [
        ("random", PlayerSpec("random")),
        (" Random ", PlayerSpec("random")),
        ("hard", PlayerSpec("level", level="hard")),
        ("3", PlayerSpec("level", level="3")),
        ("profiles/en.json:medium", PlayerSpec("file", level="medium", path="profiles/en.json")),
    ],
)
def test_parse_specs(text: str, spec: PlayerSpec) -> None:
    assert parse_player_spec(text) == spec


@pytest.mark.parametrize(
    "text", ["", "  ", "a b", "x.json", "x.txt:hard", "x.json:", "x.json:bad level", ":hard"]
)
def test_bad_specs_quote_the_input(text: str) -> None:
    with pytest.raises(PlayerSpecError, match="invalid player spec"):
        parse_player_spec(text)


def test_player_ids() -> None:
    assert parse_player_spec("random").player_id == "random"
    assert parse_player_spec("p.json:hard").player_id == "p.json:hard"


def test_random_player_is_legal_and_deterministic() -> None:
    from engine.board import Board

    def game(seed: int) -> list[str]:
        board, player, moves = Board("english"), RandomPlayer("english", seed), []
        for _ in range(30):
            if board.outcome() is not None:
                break
            chosen = player.choose_move(board)
            assert isinstance(chosen, ChosenMove) and chosen.move in board.legal_moves
            moves.append(chosen.move.pdn)
            board.push(chosen.move)
        return moves

    assert game(5) == game(5)
    assert game(5) != game(6)


def test_level_player_errors_quote_the_spec() -> None:
    try:
        import engine.player  # noqa: F401
    except ImportError:
        with pytest.raises(PlayerSpecError, match="needs the engine's level players"):
            make_player("hard", "english", 1)
        return
    with pytest.raises(PlayerSpecError, match=r"player spec 'nope'.*unknown level"):
        make_player("nope", "english", 1)
    with pytest.raises(PlayerSpecError, match=r"missing\.json"):
        make_player("missing.json:hard", "english", 1)
