"""PDN-style FEN: ``B:W21,22,K30:B1,2`` (side to move, then each colour's squares).

Input is lenient where PDN files differ (colour fields in either order, numeric ranges
such as ``21-32`` or ``K1-3``, algebraic squares for variants that use them, spaces,
a trailing ``.``) and strict about anything impossible (unknown or repeated squares,
a man standing on its own promotion row, bad side letters): those raise
:class:`~engine.errors.FenError` quoting the input, never a silent fix.
Output lists White then Black, squares ascending, kings prefixed ``K``.
"""

from __future__ import annotations

from engine.errors import FenError, SquareError
from engine.geometry import geometry
from engine.notation import parse_square, square_name
from engine.position import Position
from engine.variants import Color, Variant

_COLOR_LETTERS = {"W": Color.WHITE, "B": Color.BLACK}


def _parse_field(variant: Variant, text: str, body: str) -> list[tuple[int, bool]]:
    """The (square number, is_king) entries of one colour field's body (after the letter)."""
    entries: list[tuple[int, bool]] = []
    if not body.strip():
        return entries
    for raw in body.split(","):
        item = raw.strip()
        if not item:
            raise FenError(f"invalid FEN {text!r}: empty square entry in {body.strip()!r}")
        king = item[0] in "Kk"
        if king:
            item = item[1:].strip()
        if not item:
            raise FenError(f"invalid FEN {text!r}: 'K' without a square in {raw.strip()!r}")
        try:
            if "-" in item:
                first, _, last = item.partition("-")
                if not (first.strip().isdigit() and last.strip().isdigit()):
                    raise FenError(f"invalid FEN {text!r}: range {raw.strip()!r} must use square numbers")
                start, end = parse_square(variant, first), parse_square(variant, last)
                if start > end:
                    raise FenError(f"invalid FEN {text!r}: empty range {raw.strip()!r}")
                entries.extend((square, king) for square in range(start, end + 1))
            else:
                entries.append((parse_square(variant, item), king))
        except SquareError as err:
            raise FenError(f"invalid FEN {text!r}: {err}") from None
    return entries


def parse_fen(variant: Variant, text: str) -> Position:
    """Parse a PDN FEN for ``variant`` into a :class:`Position`."""
    if not isinstance(text, str):
        raise FenError(f"invalid FEN {text!r}: not a string")
    body = text.strip()
    if body.endswith("."):
        body = body[:-1].rstrip()
    if not body:
        raise FenError(f"invalid FEN {text!r}: empty")
    fields = [field.strip() for field in body.split(":")]
    if len(fields) != 3:
        raise FenError(
            f"invalid FEN {text!r}: expected 3 ':'-separated fields (side, white, black), got {len(fields)}"
        )
    side_text, *colour_fields = fields
    if side_text not in _COLOR_LETTERS:
        raise FenError(f"invalid FEN {text!r}: side to move must be 'W' or 'B', got {side_text!r}")
    pieces: dict[Color, list[tuple[int, bool]]] = {}
    for field in colour_fields:
        letter = field[:1]
        if letter not in _COLOR_LETTERS:
            raise FenError(f"invalid FEN {text!r}: colour field {field!r} must start with 'W' or 'B'")
        color = _COLOR_LETTERS[letter]
        if color in pieces:
            raise FenError(f"invalid FEN {text!r}: colour {letter!r} listed twice")
        pieces[color] = _parse_field(variant, text, field[1:])
    return _build(variant, text, _COLOR_LETTERS[side_text], pieces)


def _build(variant: Variant, text: str, side: Color, pieces: dict[Color, list[tuple[int, bool]]]) -> Position:
    """Check the parsed entries for impossibilities and pack them into bitboards."""
    geo = geometry(variant)
    boards = {Color.WHITE: 0, Color.BLACK: 0}
    kings = 0
    owner: dict[int, Color] = {}
    for color in (Color.WHITE, Color.BLACK):
        promotion = geo.promotion_mask(color)
        for square, king in pieces[color]:
            if square in owner:
                where = "twice" if owner[square] == color else "for both colours"
                raise FenError(f"invalid FEN {text!r}: square {square} is listed {where}")
            owner[square] = color
            bit = 1 << geo.bit(square - 1)
            if not king and bit & promotion:
                raise FenError(
                    f"invalid FEN {text!r}: a {color.name.lower()} man on square {square}, "
                    "its own promotion row (it would be a king)"
                )
            boards[color] |= bit
            if king:
                kings |= bit
    return Position(white=boards[Color.WHITE], black=boards[Color.BLACK], kings=kings, side_to_move=side)


def format_fen(variant: Variant, position: Position, algebraic: bool = False) -> str:
    """The FEN of ``position``: numeric squares unless ``algebraic`` (where the variant has it)."""
    geo = geometry(variant)
    parts = ["W" if position.side_to_move == Color.WHITE else "B"]
    for letter, board in (("W", position.white), ("B", position.black)):
        names = []
        for index in geo.squares_of(board):
            prefix = "K" if position.kings >> geo.bit(index) & 1 else ""
            names.append(prefix + square_name(variant, index + 1, algebraic))
        parts.append(letter + ",".join(names))
    return ":".join(parts)
