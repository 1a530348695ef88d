"""PDN FEN parsing and formatting: lenient syntax, strict about impossible positions."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.errors import DraughtsError, FenError
from engine.fen import format_fen, parse_fen, read_fen
from engine.geometry import geometry
from engine.position import Position, initial_position
from engine.variants import VARIANTS, Color, Variant, get_variant

ENGLISH = get_variant("english")
BRAZILIAN = get_variant("brazilian")
INTERNATIONAL = get_variant("international")


def _mask(variant: Variant, squares: list[int]) -> int:
    return geometry(variant).mask_of([s - 1 for s in squares])


def test_parse_simple_with_kings() -> None:
    pos = parse_fen(ENGLISH, "B:W21,22,K30:B1,2")
    assert pos == Position(
        white=_mask(ENGLISH, [21, 22, 30]),
        black=_mask(ENGLISH, [1, 2]),
        kings=_mask(ENGLISH, [30]),
        side_to_move=Color.BLACK,
    )
    assert format_fen(ENGLISH, pos) == "B:W21,22,K30:B1,2"


@pytest.mark.parametrize("variant", VARIANTS, ids=lambda v: v.name)
def test_start_position_round_trip_and_ranges(variant: Variant) -> None:
    start = initial_position(variant)
    text = format_fen(variant, start)
    assert parse_fen(variant, text) == start
    per_side = variant.men_rows * variant.squares_per_row
    side = "W" if variant.first_player == Color.WHITE else "B"
    ranged = f"{side}:W{variant.squares - per_side + 1}-{variant.squares}:B1-{per_side}"
    assert parse_fen(variant, ranged) == start


@pytest.mark.parametrize(
    "text",
    [
        "B:B1,2:W21,22,K30",  # colour fields in either order
        "  B:W21,22,K30:B1,2  ",  # surrounding whitespace
        "B:W21,22,K30:B1,2.",  # trailing full stop
        "B : W 21 , 22 , K30 : B1,2 .",  # spaces inside
        "B:W21-22,K30:B1-2",  # ranges
        "B:W21,22,k30:B1,2",  # lower-case king marker
    ],
)
def test_lenient_syntax(text: str) -> None:
    assert parse_fen(ENGLISH, text) == parse_fen(ENGLISH, "B:W21,22,K30:B1,2")


def test_king_range() -> None:
    pos = parse_fen(ENGLISH, "W:WK1-3:B10")
    assert pos.kings == _mask(ENGLISH, [1, 2, 3]) == pos.white


def test_empty_fields() -> None:
    pos = parse_fen(ENGLISH, "W:W:B1,2")
    assert pos.white == 0 and pos.black == _mask(ENGLISH, [1, 2])
    pos = parse_fen(ENGLISH, "W:WK5:B")
    assert pos.black == 0 and pos.kings == pos.white == _mask(ENGLISH, [5])
    assert format_fen(ENGLISH, pos) == "W:WK5:B"


def test_algebraic_input_and_output() -> None:
    numeric = parse_fen(BRAZILIAN, "W:W29,22,K18:B1,15")
    assert parse_fen(BRAZILIAN, "W:Wa1,c3,Kd4:Bb8,e5") == numeric
    assert parse_fen(BRAZILIAN, "W:Wa1,22,Kd4:B1,E5") == numeric  # mixed and upper case
    assert format_fen(BRAZILIAN, numeric) == "W:WK18,22,29:B1,15"
    assert format_fen(BRAZILIAN, numeric, algebraic=True) == "W:WKd4,c3,a1:Bb8,e5"


def test_many_pieces_on_distinct_squares_allowed() -> None:
    # More men than the start count is not impossible to *write* and test positions use it.
    text = "W:W13-32:B1-12"
    pos = parse_fen(ENGLISH, text)
    assert bin(pos.white).count("1") == 20


@pytest.mark.parametrize(
    ("variant", "text", "problem"),
    [
        (ENGLISH, "B:W33:B1", "33"),
        (ENGLISH, "B:W0:B1", "'0'"),
        (INTERNATIONAL, "W:W51:B1", "51"),
        (ENGLISH, "B:WK5,K5:B1", "twice"),
        (ENGLISH, "B:W21,22,21:B1", "twice"),
        (ENGLISH, "B:W21:B21", "both colours"),
        (ENGLISH, "B:W21-25:B25", "both colours"),
        (ENGLISH, "B:W1:B5", "promotion row"),
        (ENGLISH, "W:W21:B29", "promotion row"),
        (INTERNATIONAL, "W:W3:B20", "promotion row"),
        (INTERNATIONAL, "W:W30:B46", "promotion row"),
        (ENGLISH, "X:W21:B1", "side to move"),
        (ENGLISH, "w:W21:B1", "side to move"),
        (ENGLISH, ":W21:B1", "side to move"),
        (ENGLISH, "hello", "3"),
        (ENGLISH, "", "empty"),
        (ENGLISH, "   ", "empty"),
        (ENGLISH, "W:W21", "3"),
        (ENGLISH, "W:W21:B1:B2", "3"),
        (ENGLISH, "W:W21:W22", "twice"),
        (ENGLISH, "W:X21:B1", "'X21'"),
        (ENGLISH, "W:Wa1:B1", "'a1'"),
        (BRAZILIAN, "W:Wa2:B1", "'a2'"),
        (ENGLISH, "W:W25-21:B1", "range"),
        (ENGLISH, "W:Wa1-c3:B5", "range"),
        (ENGLISH, "W:WK:B1", "'K'"),
        (ENGLISH, "W:W21,,22:B1", "empty square entry"),
        (ENGLISH, "W:W21,:B1", "empty square entry"),
        (ENGLISH, "W:W21-:B1", "range"),
        (ENGLISH, "W:W2.1:B1", "2.1"),
        (ENGLISH, "W:W21:B1..", "'1.'"),
    ],
)
def test_rejects_with_message_quoting_input(variant: Variant, text: str, problem: str) -> None:
    with pytest.raises(FenError) as info:
        parse_fen(variant, text)
    message = str(info.value)
    assert repr(text) in message
    assert problem in message


# -- property tests ----------------------------------------------------------------------------
@st.composite
def positions(draw: st.DrawFn) -> tuple[Variant, Position]:
    """Any variant and any arrangement of pieces on distinct squares (men never on their crown row)."""
    variant = draw(st.sampled_from(VARIANTS))
    geo = geometry(variant)
    squares = draw(st.lists(st.integers(0, variant.squares - 1), unique=True, max_size=variant.squares))
    white = black = kings = 0
    for index in squares:
        color = draw(st.sampled_from(Color))
        bit = 1 << geo.bit(index)
        if draw(st.booleans()) or bit & geo.promotion_mask(color):
            kings |= bit
        if color == Color.WHITE:
            white |= bit
        else:
            black |= bit
    side = draw(st.sampled_from(Color))
    return variant, Position(white=white, black=black, kings=kings, side_to_move=side)


@given(positions(), st.booleans())
@settings(max_examples=300, deadline=None)
def test_round_trip_property(case: tuple[Variant, Position], algebraic: bool) -> None:
    variant, pos = case
    algebraic = algebraic and variant.algebraic_notation
    text = format_fen(variant, pos, algebraic)
    assert parse_fen(variant, text) == pos
    assert format_fen(variant, parse_fen(variant, text)) == format_fen(variant, pos)


@given(st.sampled_from(VARIANTS), st.text(max_size=40))
@settings(max_examples=300, deadline=None)
def test_fuzzed_text_raises_only_draughts_errors(variant: Variant, text: str) -> None:
    try:
        parse_fen(variant, text)
    except DraughtsError:
        pass


_FEN_ALPHABET = st.sampled_from(list("WBK:,-. 0123456789abcdefghx"))


@given(st.sampled_from(VARIANTS), st.lists(_FEN_ALPHABET, max_size=30).map("".join))
@settings(max_examples=500, deadline=None)
def test_fuzzed_fen_like_text_raises_only_draughts_errors(variant: Variant, text: str) -> None:
    try:
        pos = parse_fen(variant, text)
    except DraughtsError:
        return
    assert parse_fen(variant, format_fen(variant, pos)) == pos


# -- the servers' optional fields: H (half-move clock) and F (move number) ----------------------
def test_counter_fields_read_and_dropped_by_parse_fen() -> None:
    record = read_fen(INTERNATIONAL, "W:W31-50:B1-20:H0:F1")
    assert (record.halfmove_clock, record.move_number) == (0, 1)
    assert record.position == parse_fen(INTERNATIONAL, "W:W31-50:B1-20")
    assert read_fen(ENGLISH, "B:WK21:BK1:F7:H12") == read_fen(ENGLISH, "B:WK21:BK1:H12:F7")
    plain = read_fen(ENGLISH, "B:WK21:BK1")
    assert (plain.halfmove_clock, plain.move_number) == (None, None)


def test_counter_fields_written_only_when_asked() -> None:
    pos = parse_fen(ENGLISH, "B:WK21:BK1")
    assert format_fen(ENGLISH, pos) == "B:WK21:BK1"
    assert format_fen(ENGLISH, pos, halfmove_clock=3, move_number=40) == "B:WK21:BK1:H3:F40"
    text = "B:WK21:BK1:H3:F40"
    record = read_fen(ENGLISH, text)
    assert format_fen(ENGLISH, record.position, False, record.halfmove_clock, record.move_number) == text


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("W:W21:B1:H", "half-move clock"),
        ("W:W21:B1:Hx", "half-move clock"),
        ("W:W21:B1:H-1", "half-move clock"),
        ("W:W21:B1:F0", "at least 1"),
        ("W:W21:B1:H1:H2", "twice"),
        ("W:W21:B1:H1234567", "half-move clock"),
        ("W:W21:B1:H1:X2", "3"),
        ("W:W21:H1:F1", "'H1'"),
    ],
)
def test_counter_fields_rejected_with_quote(text: str, problem: str) -> None:
    with pytest.raises(FenError) as info:
        read_fen(ENGLISH, text)
    assert repr(text) in str(info.value) and problem in str(info.value)


def test_long_input_is_quoted_cut_with_its_length() -> None:
    text = "W:W21:B" + ",".join(["1"] * 5000)
    with pytest.raises(FenError) as info:
        parse_fen(ENGLISH, text)
    message = str(info.value)
    assert repr(text[:120]) in message and f"({len(text)} characters)" in message
    assert len(message) < 400
