"""Fuzzing move text (``engine.move.parse_move`` / ``split_move_text``) against reachable positions.

Positions come from seeded random games of every variant (conftest.reachable_boards), so the
legal moves include multi-captures, promotions and merged (FMJD) captures. Properties:

- only :class:`~engine.errors.MoveError` escapes, quoting the text;
- no silent repair: an accepted text names the move it returns: same first and last square,
  capture written iff the move captures, and either the exact path, a start/end pair that no
  other legal move shares, or a route through exactly the pieces the move takes;
- every legal move round-trips through its numeric (and algebraic) text, in every separator
  spelling, and its short form ``start x end`` is accepted exactly when it is unambiguous.
"""

from __future__ import annotations

import re
from itertools import pairwise

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine.board import Board
from engine.errors import MoveError, quote
from engine.move import Move, format_move, parse_move, split_move_text
from engine.variants import VARIANTS, Variant
from tests.fuzz.conftest import (
    fuzz_case,
    fuzz_settings,
    known,
    mutate_tokens,
    outcome,
    reachable_boards,
    tolerate,
    undocumented,
    weird_token,
)
from tests.fuzz.test_fuzz_fen import algebraic_names

PARSER = "move"
BY_VARIANT = pytest.mark.parametrize("variant", VARIANTS, ids=lambda v: v.name)


def named_squares(variant: Variant, text: str) -> tuple[list[int], bool] | None:
    """Squares and capture flag of move ``text`` by the documented syntax (independent reading)."""
    body = text.strip()
    separators = set(re.findall(r"[-xX:]", body))
    if not separators or ("-" in separators and len(separators) > 1):
        return None
    names = algebraic_names(variant) if variant.algebraic_notation else {}
    squares = []
    for token in re.split(r"[-xX:]", body):
        if re.fullmatch(r"[0-9]+", token) and 1 <= int(token) <= variant.squares:
            squares.append(int(token))
        elif token.lower() in names:
            squares.append(names[token.lower()])
        else:
            return None
    capture = "-" not in separators
    if not capture and len(squares) != 2:
        return None
    return squares, capture


def between(variant: Variant, a: int, b: int) -> list[int]:
    """Squares strictly between ``a`` and ``b`` on one diagonal (empty if they share none)."""
    per_row = variant.squares_per_row

    def cell(square: int) -> tuple[int, int]:
        row = (square - 1) // per_row
        return row, 2 * ((square - 1) % per_row) + (1 if row % 2 == 0 else 0)

    (ra, ca), (rb, cb) = cell(a), cell(b)
    if abs(ra - rb) != abs(ca - cb) or ra == rb:
        return []
    dr, dc = (1 if rb > ra else -1), (1 if cb > ca else -1)
    return [(ra + k * dr) * per_row + (ca + k * dc) // 2 + 1 for k in range(1, abs(ra - rb))]


def check_move(board: Board, text: str) -> Move | None:
    """One input against one position: documented error only, or the move the text names."""
    variant, legal = board.variant, board.legal_moves
    show = (variant.name, board.fen(), text)
    with fuzz_case(PARSER, show=show):
        try:
            split = split_move_text(variant, text)
        except MoveError as err:
            assert quote(text) in str(err), f"MoveError does not quote the text: {err}"
            split = None
        except Exception as err:
            if tolerate(err, "int-digits"):
                return None
            undocumented(PARSER, err, show)
        try:
            move = parse_move(variant, text, legal, board.position)
        except MoveError as err:
            assert quote(text) in str(err), f"MoveError does not quote the text: {err}"
            outcome("rejected", str(err).split(" ", 1)[0])
            return None
        except Exception as err:
            if tolerate(err, "int-digits"):
                return None
            undocumented(PARSER, err, show)
    outcome("accepted", "capture" if move.is_capture else "quiet")
    assert split is not None, f"parse_move accepted {text!r} that split_move_text rejects"
    assert move in legal
    reading = named_squares(variant, text)
    if reading is None and named_squares(variant, re.sub(r"\n(?=[-xX:])", "", text)) is not None:
        known("dollar-newline")  # '11\n-15' is read as 11-15
        return move
    assert reading is not None, f"accepted {text!r}, which the move syntax does not allow"
    squares, capture = reading
    assert tuple(squares) == split[0] and capture == split[1]
    assert (move.start, move.end) == (squares[0], squares[-1]), f"{text!r} -> {move.pdn}"
    assert move.is_capture == capture, f"{text!r} -> {move.pdn}"
    if list(move.path) != squares:
        same_ends = [m for m in legal if (m.start, m.end, m.is_capture) == (move.start, move.end, capture)]
        if len(squares) == 2:
            assert same_ends == [move], f"{text!r} is ambiguous but was read as {move.pdn}"
        else:  # another route through exactly the pieces the move takes
            passed = [s for a, b in pairwise(squares) for s in between(variant, a, b)]
            assert set(move.captures) <= set(passed), f"{text!r} does not pass the pieces of {move.pdn}"
            assert len(squares) == len(move.captures) + 1
    return move


# ---- strategies --------------------------------------------------------------------------------


def boards(variant: Variant, movable: bool = False) -> st.SearchStrategy[Board]:
    """Reachable boards of ``variant`` (only those with a legal move when ``movable``)."""
    pool = reachable_boards(variant.name)
    return st.sampled_from([b for b in pool if b.legal_moves] if movable else pool)


_NAMES = sorted(algebraic_names(VARIANTS[2]))
move_vocabulary = st.one_of(
    st.integers(0, 55).map(str),
    st.sampled_from(_NAMES),
    st.sampled_from(["-", "x", "X", ":", "-", "x", " ", "!", "?", "--", "xx", "x-"]),
    weird_token,
)
move_soup = st.lists(move_vocabulary, max_size=12).map("".join)


@st.composite
def written_moves(draw: st.DrawFn, board: Board) -> tuple[Move, str]:
    """A legal move and one documented way to write it: full path or short form, any separator,
    numeric or algebraic squares, surrounding whitespace."""
    variant = board.variant
    move = draw(st.sampled_from(board.legal_moves))
    algebraic = variant.algebraic_notation and draw(st.booleans())
    names = format_move(variant, move, algebraic).replace("x", "-").split("-")
    if move.is_capture and len(names) > 2 and draw(st.booleans()):
        names = [names[0], names[-1]]
    if algebraic and draw(st.booleans()):
        names = [n.upper() for n in names]
    separator = draw(st.sampled_from(["x", "X", ":"])) if move.is_capture else "-"
    pad = st.sampled_from(["", "", " ", "\t", "\n"])
    return move, draw(pad) + separator.join(names) + draw(pad)


_MOVE_SPLIT = re.compile(r"([-xX:\s])")


@st.composite
def mutated_moves(draw: st.DrawFn, board: Board) -> str:
    _, text = draw(written_moves(board))
    tokens = [t for t in _MOVE_SPLIT.split(text) if t]
    squares = [str(draw(st.integers(1, board.variant.squares))) for _ in range(2)]
    return draw(mutate_tokens(tokens, st.one_of(weird_token, st.sampled_from([*squares, "x", "-"]))))


# ---- properties --------------------------------------------------------------------------------


@BY_VARIANT
@fuzz_settings(70)
@given(data=st.data())
def test_random_move_text(variant: Variant, data: st.DataObject) -> None:
    board = data.draw(boards(variant), label="board")
    check_move(board, data.draw(move_soup, label="text"))


@BY_VARIANT
@fuzz_settings(70)
@given(data=st.data())
def test_mutated_legal_move_text(variant: Variant, data: st.DataObject) -> None:
    board = data.draw(boards(variant, movable=True), label="board")
    check_move(board, data.draw(mutated_moves(board), label="text"))


@BY_VARIANT
@fuzz_settings(70)
@given(data=st.data())
def test_legal_moves_round_trip(variant: Variant, data: st.DataObject) -> None:
    board = data.draw(boards(variant, movable=True), label="board")
    move, text = data.draw(written_moves(board), label="move, text")
    reading = named_squares(variant, text)
    assert reading is not None
    legal = board.legal_moves
    exact = [m for m in legal if list(m.path) == reading[0] and m.is_capture == reading[1]]
    same_ends = [
        m for m in legal if (m.start, m.end, m.is_capture) == (move.start, move.end, move.is_capture)
    ]
    if not exact and len(same_ends) > 1:  # a short form shared by several moves
        with fuzz_case(PARSER, show=(board.fen(), text)), pytest.raises(MoveError, match="ambiguous"):
            parse_move(variant, text, legal, board.position)
        return
    expected = exact[0] if exact else move  # an exact path always wins over a short form
    assert check_move(board, text) == expected, (board.fen(), text)
    assert parse_move(variant, move.pdn, board.legal_moves) == move  # numeric full path, no position


# ---- known bugs ---------------------------------------------------------------------------------


def test_regression_move_square_beyond_int_digit_limit() -> None:
    board = Board("english")
    with pytest.raises(MoveError):
        board.parse_move("11-" + "1" * 4301)


def test_regression_newline_inside_move_text_is_accepted() -> None:
    board = Board("english")
    with pytest.raises(MoveError):
        board.parse_move("11\n-15")
