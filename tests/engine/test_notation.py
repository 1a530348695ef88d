"""Square names: numeric everywhere, algebraic a1..h8 only where the variant has it."""

from __future__ import annotations

import pytest

from engine.errors import DraughtsError, SquareError
from engine.notation import parse_square, square_name
from engine.variants import VARIANTS, get_variant

BRAZILIAN = get_variant("brazilian")
ENGLISH = get_variant("english")
INTERNATIONAL = get_variant("international")


@pytest.mark.parametrize(
    ("square", "name"),
    [(29, "a1"), (30, "c1"), (32, "g1"), (1, "b8"), (4, "h8"), (5, "a7"), (22, "c3"), (18, "d4"), (15, "e5")],
)
def test_algebraic_names_follow_conventions(square: int, name: str) -> None:
    assert square_name(BRAZILIAN, square, algebraic=True) == name
    assert parse_square(BRAZILIAN, name) == square
    assert parse_square(BRAZILIAN, name.upper()) == square


@pytest.mark.parametrize("variant", VARIANTS, ids=lambda v: v.name)
def test_numeric_round_trip_every_square(variant: object) -> None:
    v = get_variant(variant)  # type: ignore[arg-type]
    for square in range(1, v.squares + 1):
        assert parse_square(v, square_name(v, square)) == square
        if v.algebraic_notation:
            assert parse_square(v, square_name(v, square, algebraic=True)) == square


def test_algebraic_names_are_all_distinct_dark_squares() -> None:
    names = {square_name(BRAZILIAN, s, algebraic=True) for s in range(1, 33)}
    assert len(names) == 32
    for name in names:
        file, rank = "abcdefgh".index(name[0]), int(name[1])
        assert (file + rank) % 2 == 1, f"{name} is a light square"  # a1 is dark: 0 + 1 odd


@pytest.mark.parametrize("text", ["0", "33", "-1", "a2", "b1", "i1", "a9", "", "x", "1.5", "٣"])
def test_bad_squares_rejected_with_quote(text: str) -> None:
    with pytest.raises(SquareError) as info:
        parse_square(BRAZILIAN, text)
    assert repr(text) in str(info.value)


def test_algebraic_not_accepted_where_variant_has_none() -> None:
    for variant in (ENGLISH, INTERNATIONAL):
        with pytest.raises(DraughtsError, match="'c3'"):
            parse_square(variant, "c3")
        with pytest.raises(SquareError):
            square_name(variant, 1, algebraic=True)


def test_square_name_range_checked() -> None:
    assert square_name(INTERNATIONAL, 50) == "50"
    with pytest.raises(SquareError):
        square_name(INTERNATIONAL, 51)
    with pytest.raises(SquareError):
        square_name(ENGLISH, 0)
