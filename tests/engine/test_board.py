"""Board: set-up, legal moves, push/pop restoring everything, copies, FEN output."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.board import Board, Outcome, Termination
from engine.errors import DraughtsError, FenError, MoveError, UnknownVariantError
from engine.fen import parse_fen
from engine.move import Move
from engine.position import initial_position
from engine.variants import VARIANTS, Color, Variant, get_variant

ENGLISH = get_variant("english")


@pytest.mark.parametrize("variant", VARIANTS, ids=lambda v: v.name)
def test_start_position(variant: Variant) -> None:
    board = Board(variant)
    assert board.position == initial_position(variant)
    assert board.turn == variant.first_player
    expected = {"english": 7, "suicide": 7, "brazilian": 7, "russian": 7, "international": 9}[variant.name]
    assert len(board.legal_moves) == expected
    assert board.outcome() is None
    assert board.ply == 0 and board.quiet_plies == 0 and board.repetitions() == 1


def test_variant_by_name_or_alias_and_errors() -> None:
    assert Board("checkers").variant is ENGLISH
    with pytest.raises(UnknownVariantError, match="'nope'"):
        Board("nope")
    with pytest.raises(FenError, match="'B:W33:B1'"):
        Board(ENGLISH, "B:W33:B1")
    with pytest.raises(DraughtsError):
        Board(ENGLISH, ply_cap=-1)


def test_english_opening_moves_and_fen() -> None:
    board = Board(ENGLISH)
    assert [m.pdn for m in board.legal_moves] == ["9-13", "9-14", "10-14", "10-15", "11-15", "11-16", "12-16"]
    board.push_text("11-15")
    assert board.turn == Color.WHITE
    assert board.fen() == "W:W21,22,23,24,25,26,27,28,29,30,31,32:B1,2,3,4,5,6,7,8,9,10,12,15"
    board.push_text("22-18")
    assert [m.pdn for m in board.legal_moves] == ["15x22"]
    assert board.move_stack[0].pdn == "11-15"


def test_legal_moves_is_a_fresh_deterministic_list() -> None:
    board = Board("international")
    first = board.legal_moves
    first.clear()
    assert board.legal_moves == Board("international").legal_moves
    assert len(board.legal_moves) == 9


def test_push_rejects_illegal_moves() -> None:
    board = Board(ENGLISH)
    board.push_text("11-15")
    board.push_text("22-18")
    quiet = Board(ENGLISH).legal_moves[0]  # 9-13 is not legal now (capture pending), nor Black's turn
    with pytest.raises(MoveError):
        board.push(quiet)
    with pytest.raises(MoveError, match="'11-16'"):
        board.push_text("11-16")
    assert board.ply == 2


def test_pop_on_fresh_board() -> None:
    with pytest.raises(IndexError):
        Board(ENGLISH).pop()


def test_algebraic_fen_and_moves() -> None:
    board = Board("brazilian")
    assert board.fen(algebraic=True).startswith("W:Wa3,c3,e3,g3,b2,d2,f2,h2,a1,c1,e1,g1:B")
    move = board.parse_move("c3-d4")
    assert board.move_to_text(move) == "22-18"
    assert board.move_to_text(move, algebraic=True) == "c3-d4"
    board.push(move)
    assert board.start_fen() == Board("brazilian").fen()


def _snapshot(board: Board) -> tuple[object, ...]:
    return (board.position, board.quiet_plies, board.repetitions(), board.ply, board.fen(), board.outcome(),
            [m.pdn for m in board.legal_moves], [m.pdn for m in board.move_stack])


@given(st.sampled_from(VARIANTS), st.integers(0, 2**32 - 1))
@settings(max_examples=40, deadline=None)
def test_push_pop_restores_everything(variant: Variant, seed: int) -> None:
    rng = random.Random(seed)
    board = Board(variant, ply_cap=60)
    snapshots = []
    while board.outcome() is None:
        snapshots.append(_snapshot(board))
        board.push(rng.choice(board.legal_moves))
    final = _snapshot(board)
    copy = board.copy()
    while snapshots:
        board.pop()
        assert _snapshot(board) == snapshots.pop()
    assert board.position == initial_position(variant)
    assert _snapshot(copy) == final  # the copy is independent


def test_copy_is_independent() -> None:
    board = Board(ENGLISH)
    board.push_text("11-15")
    other = board.copy()
    other.push_text("22-18")
    assert board.ply == 1 and other.ply == 2
    assert board.fen() != other.fen()


def test_outcome_result_text() -> None:
    assert Outcome(Color.WHITE, Termination.NO_MOVES).result == "1-0"
    assert Outcome(Color.BLACK, Termination.NO_PIECES).result == "0-1"
    assert Outcome(None, Termination.PLY_CAP).result == "1/2-1/2"


@pytest.mark.parametrize("variant", VARIANTS, ids=lambda v: v.name)
def test_random_games_terminate_with_a_reason(variant: Variant) -> None:
    rng = random.Random(7)
    for _ in range(3):
        board = Board(variant, ply_cap=400)
        while (outcome := board.outcome()) is None:
            board.push(rng.choice(board.legal_moves))
        assert isinstance(outcome.termination, Termination)
        if outcome.termination in (Termination.NO_MOVES, Termination.NO_PIECES):
            loser = board.turn
            assert outcome.winner == (loser if variant.outcome_inverted else loser.opponent)
        else:
            assert outcome.winner is None
        assert parse_fen(variant, board.fen()) == board.position


# -- FEN counters: H is the quiet-ply count, F the move number ------------------------------------
def test_fen_counters_set_up_and_follow_the_game() -> None:
    board = Board("international", "B:WK46:BK5:H7:F30")
    assert (board.quiet_plies, board.move_number) == (7, 30)
    board.push_text("5-14")
    assert board.fen(counters=True) == "W:WK46:BK14:H8:F31"
    assert board.start_fen(counters=True) == "B:WK46:BK5:H7:F30"
    assert board.fen() == "W:WK46:BK14"
    copy = board.copy()
    copy.pop()
    assert copy.fen(counters=True) == "B:WK46:BK5:H7:F30"
    assert Board("english").fen(counters=True).endswith(":H0:F1")


def _quiet_limit_game(seed: int) -> list[Move] | None:
    """A random english kings game that ends by the quiet-ply rule, or None."""
    rng = random.Random(seed)
    board = Board("english", "W:WK29,K30,K31:BK1,K2,K3")
    while board.outcome() is None:
        board.push(rng.choice(board.legal_moves))
    outcome = board.outcome()
    assert outcome is not None
    return board.move_stack if outcome.termination == Termination.QUIET_PLY_LIMIT else None


def test_game_resumed_from_fen_ends_on_the_same_move_by_the_quiet_ply_rule() -> None:
    moves = next(found for found in map(_quiet_limit_game, range(200)) if found is not None)
    original = Board("english", "W:WK29,K30,K31:BK1,K2,K3")
    for move in moves:
        original.push(move)
    for cut in (len(moves) - 79, len(moves) - 40, len(moves) - 1):  # inside the final quiet run
        board = Board("english", "W:WK29,K30,K31:BK1,K2,K3")
        for move in moves[:cut]:
            board.push(move)
        text = board.fen(counters=True)
        assert f":H{board.quiet_plies}:" in text
        resumed = Board("english", text)
        assert resumed.quiet_plies == board.quiet_plies > 0
        for move in moves[cut:]:
            assert resumed.outcome() is None
            resumed.push(move)
        assert resumed.outcome() == Outcome(None, Termination.QUIET_PLY_LIMIT)
        assert resumed.quiet_plies == original.quiet_plies
        assert resumed.move_number == original.move_number
