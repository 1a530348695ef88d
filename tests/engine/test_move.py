"""Move value type and PDN move text: format, parse, ambiguity, round trips."""

from __future__ import annotations

import dataclasses
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.board import Board
from engine.errors import DraughtsError, MoveError
from engine.geometry import geometry
from engine.move import Move, format_move, parse_move, split_move_text
from engine.variants import VARIANTS, Variant, get_variant

ENGLISH = get_variant("english")
BRAZILIAN = get_variant("brazilian")
RUSSIAN = get_variant("russian")


def _move(
    variant: Variant, path: tuple[int, ...], captures: tuple[int, ...] = (), promotes: bool = False
) -> Move:
    geo = geometry(variant)
    return Move(
        path=path,
        captures=captures,
        promotes=promotes,
        from_bit=geo.bit(path[0] - 1),
        to_bit=geo.bit(path[-1] - 1),
        captured=geo.mask_of([s - 1 for s in captures]),
    )


QUIET = _move(ENGLISH, (11, 15))
SINGLE = _move(ENGLISH, (15, 24), (19,))
DOUBLE_A = _move(ENGLISH, (15, 24, 31), (19, 28))
DOUBLE_B = _move(ENGLISH, (15, 22, 31), (18, 27))
LEGAL = [QUIET, SINGLE, DOUBLE_A, DOUBLE_B]


def test_value_type_fields() -> None:
    assert DOUBLE_A.is_capture and not QUIET.is_capture
    assert DOUBLE_A.start == 15 and DOUBLE_A.end == 31
    assert DOUBLE_A.pdn == "15x24x31" and str(QUIET) == "11-15"
    assert DOUBLE_A == _move(ENGLISH, (15, 24, 31), (19, 28))
    assert hash(DOUBLE_A) == hash(_move(ENGLISH, (15, 24, 31), (19, 28)))
    with pytest.raises(dataclasses.FrozenInstanceError):
        DOUBLE_A.path = (1, 2)  # type: ignore[misc]


def test_format_numeric_and_algebraic() -> None:
    assert format_move(ENGLISH, QUIET) == "11-15"
    assert format_move(ENGLISH, DOUBLE_A) == "15x24x31"
    move = _move(BRAZILIAN, (22, 15, 8), (11, 18))
    assert format_move(BRAZILIAN, move) == "22x15x8"
    assert format_move(BRAZILIAN, move, algebraic=True) == "c3xe5xg7"
    assert format_move(BRAZILIAN, _move(BRAZILIAN, (22, 18)), algebraic=True) == "c3-d4"
    with pytest.raises(DraughtsError):
        format_move(ENGLISH, QUIET, algebraic=True)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("11-15", QUIET),
        (" 11-15 ", QUIET),
        ("15x24", SINGLE),
        ("15X24", SINGLE),
        ("15:24", SINGLE),
        ("15x24x31", DOUBLE_A),
        ("15x22x31", DOUBLE_B),
    ],
)
def test_parse_exact(text: str, expected: Move) -> None:
    assert parse_move(ENGLISH, text, LEGAL) == expected


def test_short_form_when_unambiguous() -> None:
    assert parse_move(ENGLISH, "15x31", [QUIET, DOUBLE_A]) == DOUBLE_A


def test_short_form_ambiguous_lists_candidates() -> None:
    with pytest.raises(MoveError) as info:
        parse_move(ENGLISH, "15x31", LEGAL)
    message = str(info.value)
    assert "'15x31'" in message and "ambiguous" in message
    assert "15x24x31" in message and "15x22x31" in message


def test_algebraic_parse() -> None:
    move = _move(BRAZILIAN, (22, 15, 8), (11, 18))
    legal = [move, _move(BRAZILIAN, (22, 13), (17,))]
    assert parse_move(BRAZILIAN, "c3xe5xg7", legal) == move
    assert parse_move(BRAZILIAN, "c3xg7", legal) == move
    assert parse_move(BRAZILIAN, "C3xE5xG7", legal) == move
    assert parse_move(BRAZILIAN, "22xe5x8", legal) == move


@pytest.mark.parametrize(
    "text",
    ["11-16", "15x23", "15x24x30", "15-24", "11x15", "31x15", "24x15x31"],
)
def test_illegal_moves_quoted(text: str) -> None:
    with pytest.raises(MoveError) as info:
        parse_move(ENGLISH, text, LEGAL)
    assert repr(text) in str(info.value)


@pytest.mark.parametrize(
    "text",
    ["", "11", "11-", "-15", "11--15", "11-15-19", "11-15x19", "a-b", "11 15", "33-29", "0-4", "c3-d4",
     "11—15"],
)
def test_malformed_moves_quoted(text: str) -> None:
    with pytest.raises(MoveError) as info:
        parse_move(ENGLISH, text, LEGAL)
    assert repr(text) in str(info.value)


def test_split_move_text() -> None:
    assert split_move_text(ENGLISH, "15x24x31") == ((15, 24, 31), True)
    assert split_move_text(ENGLISH, "9-13") == ((9, 13), False)
    assert split_move_text(BRAZILIAN, "a1-b2") == ((29, 25), False)


# -- properties on reachable positions -------------------------------------------------------------
def _random_board(variant: Variant, seed: int, plies: int) -> Board:
    rng = random.Random(seed)
    board = Board(variant)
    for _ in range(plies):
        moves = board.legal_moves
        if not moves:
            break
        board.push(rng.choice(moves))
    return board


@given(st.sampled_from(VARIANTS), st.integers(0, 2**32 - 1), st.integers(0, 120))
@settings(max_examples=60, deadline=None)
def test_move_text_round_trip(variant: Variant, seed: int, plies: int) -> None:
    board = _random_board(variant, seed, plies)
    legal = board.legal_moves
    for move in legal:
        assert board.parse_move(board.move_to_text(move)) == move
        assert parse_move(variant, move.pdn, legal) == move
        if variant.algebraic_notation:
            assert board.parse_move(board.move_to_text(move, algebraic=True)) == move
        assert (move.pdn.count("x") > 0) == move.is_capture
        assert len(move.path) >= 2 and (not move.is_capture or len(move.path) == len(move.captures) + 1)


@given(st.sampled_from(VARIANTS), st.integers(0, 2**32 - 1), st.text(max_size=20))
@settings(max_examples=200, deadline=None)
def test_fuzzed_move_text_raises_only_draughts_errors(variant: Variant, seed: int, text: str) -> None:
    board = _random_board(variant, seed, seed % 40)
    try:
        move = board.parse_move(text)
    except DraughtsError:
        return
    assert move in board.legal_moves


_MOVE_ALPHABET = st.sampled_from(list("0123456789x-: abch"))


@given(st.sampled_from(VARIANTS), st.lists(_MOVE_ALPHABET, max_size=12).map("".join))
@settings(max_examples=300, deadline=None)
def test_fuzzed_move_like_text(variant: Variant, text: str) -> None:
    board = Board(variant)
    try:
        move = board.parse_move(text)
    except DraughtsError:
        return
    assert move in board.legal_moves
