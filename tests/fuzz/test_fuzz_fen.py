"""Fuzzing ``engine.fen.parse_fen`` for every variant.

Properties, on random token soup, on structured near-FENs and on mutations of valid FENs:

- only :class:`~engine.errors.FenError` escapes, and its message quotes the input;
- no hang (per-case alarm, see conftest);
- no silent repair: an accepted FEN is exactly what an independent reading of the documented
  grammar says it is (every named square, colour and king, nothing dropped or merged), and it
  survives format -> parse unchanged;
- valid positions, written in every lenient form the module documents (field order, spaces,
  trailing '.', lower-case 'k', ranges, algebraic squares), parse back to the same position.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine.errors import FenError, quote
from engine.fen import format_fen, parse_fen
from engine.geometry import geometry
from engine.position import Position
from engine.variants import VARIANTS, Color, Variant
from tests.fuzz.conftest import (
    fuzz_case,
    fuzz_settings,
    mutate_tokens,
    outcome,
    reachable_boards,
    tolerate,
    undocumented,
    weird_token,
)

PARSER = "fen"
BY_VARIANT = pytest.mark.parametrize("variant", VARIANTS, ids=lambda v: v.name)
FILES = "abcdefghij"

Pieces = dict[int, tuple[Color, bool]]  # square number -> (colour, king)


# ---- an independent reading of the documented grammar -------------------------------------------


def algebraic_names(variant: Variant) -> dict[str, int]:
    """Algebraic name -> square number, computed from docs/CONVENTIONS.md (not engine.notation)."""
    size, per_row = variant.board_size, variant.squares_per_row
    names = {}
    for index in range(variant.squares):
        row = index // per_row
        col = 2 * (index % per_row) + (1 if row % 2 == 0 else 0)
        names[f"{FILES[col]}{size - row}"] = index + 1
    return names


_RANGE = re.compile(r"([0-9]+)\s*-\s*([0-9]+)")


def reference_fen(variant: Variant, text: str) -> tuple[Color, Pieces] | None:
    """What the FEN ``text`` means under the documented grammar, or None if it is not one."""
    body = text.strip()
    if body.endswith("."):
        body = body[:-1].rstrip()
    fields = [f.strip() for f in body.split(":")]
    if len(fields) != 3 or fields[0] not in ("W", "B"):
        return None
    side = Color.WHITE if fields[0] == "W" else Color.BLACK
    letters = [f[:1] for f in fields[1:]]
    if sorted(letters) != ["B", "W"]:
        return None
    algebraic = algebraic_names(variant) if variant.algebraic_notation else {}
    pieces: Pieces = {}
    for field in fields[1:]:
        color = Color.WHITE if field[0] == "W" else Color.BLACK
        body_text = field[1:]
        if not body_text.strip():
            continue
        for raw in body_text.split(","):
            entry = raw.strip()
            king = entry[:1] in ("K", "k")
            if king:
                entry = entry[1:].strip()
            squares: list[int]
            ranged = _RANGE.fullmatch(entry)
            if ranged:
                first, last = int(ranged.group(1)), int(ranged.group(2))
                if not (1 <= first <= last <= variant.squares):
                    return None
                squares = list(range(first, last + 1))
            elif re.fullmatch(r"[0-9]+", entry) and 1 <= int(entry) <= variant.squares:
                squares = [int(entry)]
            elif entry.lower() in algebraic:
                squares = [algebraic[entry.lower()]]
            else:
                return None
            for square in squares:
                if square in pieces:
                    return None
                row = (square - 1) // variant.squares_per_row
                far_row = 0 if color == Color.WHITE else variant.board_size - 1
                if row == far_row and not king:
                    return None
                pieces[square] = (color, king)
    return side, pieces


def pieces_of(variant: Variant, position: Position) -> tuple[Color, Pieces]:
    geo = geometry(variant)
    out: Pieces = {}
    for color, board in ((Color.WHITE, position.white), (Color.BLACK, position.black)):
        for index in geo.squares_of(board):
            out[index + 1] = (color, bool(position.kings >> geo.bit(index) & 1))
    return position.side_to_move, out


def check_fen(variant: Variant, text: str) -> Position | None:
    """The whole property of one input: documented error only, or an exact, stable value."""
    with fuzz_case(PARSER, show=(variant.name, text)):
        try:
            position = parse_fen(variant, text)
        except FenError as err:
            assert quote(text) in str(err), f"FenError does not quote the input: {err}"
            outcome("rejected", type(err).__name__)
            return None
        except Exception as err:
            if tolerate(err, "int-digits"):
                return None
            undocumented(PARSER, err, (variant.name, text))
        outcome("accepted")
        expected = reference_fen(variant, text)
        assert expected is not None, f"parse_fen accepted {text!r}, which the grammar does not allow"
        assert pieces_of(variant, position) == expected, f"{text!r} was read as something else"
        again = format_fen(variant, position)
        assert parse_fen(variant, again) == position
        assert format_fen(variant, parse_fen(variant, again)) == again
    return position


# ---- strategies --------------------------------------------------------------------------------

_ALGEBRAIC = sorted(set(algebraic_names(VARIANTS[0])) | set(algebraic_names(VARIANTS[-1])))
fen_vocabulary = st.one_of(
    st.sampled_from(["W", "B", "K", "k", "w", "b", ":", ":", ",", ",", ",", "-", ".", " ", "  ", "\t"]),
    st.integers(0, 55).map(str),
    st.sampled_from(_ALGEBRAIC),
    weird_token,
)
fen_soup = st.lists(fen_vocabulary, max_size=40).map("".join)


@st.composite
def near_fen(draw: st.DrawFn) -> str:
    """Side + two colour fields of plausible entries (some out of range, repeated or mis-kinged)."""

    def entry() -> str:
        king = draw(st.sampled_from(["", "", "K", "k", "K "]))
        kind = draw(st.integers(0, 9))
        if kind < 6:
            square = str(draw(st.integers(-2, 52)))
        elif kind < 8:
            square = f"{draw(st.integers(0, 52))}-{draw(st.integers(0, 52))}"
        else:
            square = draw(st.sampled_from(_ALGEBRAIC))
        return king + square

    fields = [
        f"{letter}{','.join(entry() for _ in range(draw(st.integers(0, 12))))}"
        for letter in draw(st.permutations(["W", "B"]))
    ]
    side = draw(st.sampled_from(["W", "B", "W", "B", "w", "", "WB"]))
    dot = draw(st.sampled_from(["", "", ".", " .", ".."]))
    return f"{side}:{fields[0]}:{fields[1]}{dot}"


@st.composite
def positions(draw: st.DrawFn, variant: Variant) -> Position:
    """Any legal-looking placement: distinct squares, men never on their own crowning row."""
    geo = geometry(variant)
    if draw(st.integers(0, 3)) == 0:
        return draw(st.sampled_from(reachable_boards(variant.name))).position
    white = black = kings = 0
    for index in draw(st.sets(st.integers(0, variant.squares - 1), max_size=variant.squares)):
        color = draw(st.sampled_from(Color))
        bit = 1 << geo.bit(index)
        if draw(st.booleans()) or bit & geo.promotion_mask(color):
            kings |= bit
        if color == Color.WHITE:
            white |= bit
        else:
            black |= bit
    return Position(white=white, black=black, kings=kings, side_to_move=draw(st.sampled_from(Color)))


_FEN_SPLIT = re.compile(r"([:,\-.\s])")


@st.composite
def mutated_fen(draw: st.DrawFn, variant: Variant) -> str:
    position = draw(positions(variant))
    algebraic = variant.algebraic_notation and draw(st.booleans())
    tokens = [t for t in _FEN_SPLIT.split(format_fen(variant, position, algebraic)) if t]
    return draw(mutate_tokens(tokens))


@st.composite
def lenient_forms(draw: st.DrawFn, variant: Variant) -> tuple[Position, str]:
    """A position and one of its documented equivalent spellings."""
    position = draw(positions(variant))
    side, pieces = pieces_of(variant, position)
    names = {number: name for name, number in algebraic_names(variant).items()}

    def gap() -> str:
        return draw(st.sampled_from(["", "", " ", "  ", "\t"]))

    fields = []
    for color, letter in ((Color.WHITE, "W"), (Color.BLACK, "B")):
        squares = sorted(s for s, (c, _) in pieces.items() if c == color)
        entries: list[str] = []
        i = 0
        while i < len(squares):  # runs of consecutive squares of one kind may become a range
            j = i
            king = pieces[squares[i]][1]
            while (
                j + 1 < len(squares)
                and squares[j + 1] == squares[j] + 1
                and pieces[squares[j + 1]][1] == king
            ):
                j += 1
            prefix = draw(st.sampled_from(["K", "k"])) if king else ""
            if j > i and draw(st.booleans()):
                entries.append(f"{prefix}{gap()}{squares[i]}{gap()}-{gap()}{squares[j]}")
            else:
                for square in squares[i : j + 1]:
                    name = str(square)
                    if variant.algebraic_notation and draw(st.booleans()):
                        name = names[square] if draw(st.booleans()) else names[square].upper()
                    entries.append(f"{prefix}{gap()}{name}")
            i = j + 1
        entries = draw(st.permutations(entries))
        fields.append(f"{letter}{gap()}" + f"{gap()},{gap()}".join(entries))
    if draw(st.booleans()):
        fields.reverse()
    side_letter = "W" if side == Color.WHITE else "B"
    dot = draw(st.sampled_from(["", ".", " . "]))
    text = f"{gap()}{side_letter}{gap()}:{gap()}{fields[0]}{gap()}:{gap()}{fields[1]}{gap()}{dot}"
    return position, text


# ---- properties --------------------------------------------------------------------------------


@BY_VARIANT
@fuzz_settings(60)
@given(text=fen_soup)
def test_random_token_soup(variant: Variant, text: str) -> None:
    check_fen(variant, text)


@BY_VARIANT
@fuzz_settings(60)
@given(text=near_fen())
def test_structured_near_fens(variant: Variant, text: str) -> None:
    check_fen(variant, text)


@BY_VARIANT
@fuzz_settings(60)
@given(data=st.data())
def test_mutated_valid_fens(variant: Variant, data: st.DataObject) -> None:
    check_fen(variant, data.draw(mutated_fen(variant), label="text"))


@BY_VARIANT
@fuzz_settings(60)
@given(data=st.data())
def test_lenient_spellings_round_trip(variant: Variant, data: st.DataObject) -> None:
    position, text = data.draw(lenient_forms(variant), label="position, text")
    assert check_fen(variant, text) == position, text
    assert format_fen(variant, parse_fen(variant, text)) == format_fen(variant, position)
    if variant.algebraic_notation:
        assert parse_fen(variant, format_fen(variant, position, algebraic=True)) == position


# ---- known bugs ---------------------------------------------------------------------------------


def test_regression_square_number_beyond_int_digit_limit() -> None:
    text = "W:W" + "1" * 4301 + ":B1"
    with pytest.raises(FenError):
        parse_fen(VARIANTS[0], text)
