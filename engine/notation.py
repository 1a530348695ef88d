"""Square names: numeric 1..S for every variant, algebraic a1..h8 where the variant uses it.

Numeric squares follow docs/CONVENTIONS.md (1 = first dark square of the top row).
Algebraic names exist only for variants with ``algebraic_notation`` (the 8x8
international-rule games): file = column letter a.., rank = board size - row, so
a1 is White's bottom-left dark square (square 29 on 8x8).
"""

from __future__ import annotations

from functools import cache

from engine.errors import SquareError, quote
from engine.geometry import geometry
from engine.variants import Variant

FILES = "abcdefghij"


@cache
def _algebraic_tables(variant: Variant) -> tuple[tuple[str, ...], dict[str, int]]:
    """Algebraic name of every square number (index 0 unused) and the reverse map."""
    geo = geometry(variant)
    names = [""]
    for index in range(geo.squares):
        row, col = int(geo.row_of_square[index]), int(geo.col_of_square[index])
        names.append(f"{FILES[col]}{geo.size - row}")
    return tuple(names), {name: number for number, name in enumerate(names) if name}


def square_name(variant: Variant, square: int, algebraic: bool = False) -> str:
    """The name of 1-based ``square``: its number, or its algebraic name when asked.

    Asking for algebraic names on a variant without them is an error, not a silent fallback.
    """
    if not 1 <= square <= variant.squares:
        raise SquareError(
            f"square {quote(square)} does not exist on the {variant.name} board (1-{variant.squares})"
        )
    if not algebraic:
        return str(square)
    if not variant.algebraic_notation:
        raise SquareError(f"variant {variant.name!r} has no algebraic notation (square {square})")
    return _algebraic_tables(variant)[0][square]


def parse_square(variant: Variant, text: str) -> int:
    """The 1-based square number named by ``text`` (numeric, or algebraic where allowed)."""
    name = text.strip()
    if name.isdigit() and name.isascii():
        if len(name) > 6:  # no board has a square beyond 50; never int() unbounded text
            raise SquareError(
                f"square {quote(text)} does not exist on the {variant.name} board (1-{variant.squares})"
            )
        number = int(name)
        if 1 <= number <= variant.squares:
            return number
        raise SquareError(
            f"square {quote(text)} does not exist on the {variant.name} board (1-{variant.squares})"
        )
    if variant.algebraic_notation:
        found = _algebraic_tables(variant)[1].get(name.lower())
        if found is not None:
            return found
        raise SquareError(
            f"square {quote(text)} is not a dark square of the {variant.name} board "
            f"(1-{variant.squares} or a1..h8 dark squares)"
        )
    raise SquareError(
        f"square {quote(text)} is not a square number of the {variant.name} board (1-{variant.squares})"
    )


def is_algebraic(text: str) -> bool:
    """Whether ``text`` looks like an algebraic square name (starts with a letter)."""
    stripped = text.strip()
    return bool(stripped) and stripped[0].isalpha()
