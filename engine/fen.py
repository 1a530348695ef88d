"""PDN-style FEN: ``B:W21,22,K30:B1,2`` (side to move, then each colour's squares).

Input is lenient where PDN files differ (colour fields in either order, numeric ranges
such as ``21-32`` or ``K1-3``, algebraic squares for variants that use them, spaces,
a trailing ``.``) and strict about anything impossible (unknown or repeated squares,
a man standing on its own promotion row, bad side letters): those raise
:class:`~engine.errors.FenError` quoting the input, never a silent fix.
Output lists White then Black, squares ascending, kings prefixed ``K``.

Servers (lidraughts) append two optional fields, ``:H<n>`` (half-move clock: plies since the
last capture or man move, our quiet-ply count) and ``:F<n>`` (the move number). They are read
by :func:`read_fen` and written by :func:`format_fen` only when asked. A FEN holds no other
counter: the endgame draw counts of docs/rules.md start afresh in a game resumed from one.
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.errors import FenError, SquareError, quote
from engine.geometry import geometry
from engine.notation import parse_square, square_name
from engine.position import Position
from engine.variants import Color, Variant

_COLOR_LETTERS = {"W": Color.WHITE, "B": Color.BLACK}
_COUNTER_LETTERS = {"H": "half-move clock", "F": "move number"}
_COUNTER_DIGITS = 6  # no real game comes near a million moves; never int() unbounded text


@dataclass(frozen=True)
class FenRecord:
    """A parsed FEN: the position plus the optional server fields (None when absent)."""

    position: Position
    halfmove_clock: int | None  # ``H``: plies since the last capture or man move
    move_number: int | None  # ``F``: the number of the move about to be played


def _parse_field(variant: Variant, text: str, body: str) -> list[tuple[int, bool]]:
    """The (square number, is_king) entries of one colour field's body (after the letter)."""
    entries: list[tuple[int, bool]] = []
    if not body.strip():
        return entries
    for raw in body.split(","):
        item = raw.strip()
        if not item:
            raise FenError(f"invalid FEN {quote(text)}: empty square entry in {quote(body.strip())}")
        king = item[0] in "Kk"
        if king:
            item = item[1:].strip()
        if not item:
            raise FenError(f"invalid FEN {quote(text)}: 'K' without a square in {quote(raw.strip())}")
        try:
            if "-" in item:
                first, _, last = item.partition("-")
                if not (first.strip().isdigit() and last.strip().isdigit()):
                    raise FenError(
                        f"invalid FEN {quote(text)}: range {quote(raw.strip())} must use square numbers"
                    )
                start, end = parse_square(variant, first), parse_square(variant, last)
                if start > end:
                    raise FenError(f"invalid FEN {quote(text)}: empty range {quote(raw.strip())}")
                entries.extend((square, king) for square in range(start, end + 1))
            else:
                entries.append((parse_square(variant, item), king))
        except SquareError as err:
            raise FenError(f"invalid FEN {quote(text)}: {err}") from None
    return entries


def parse_fen(variant: Variant, text: str) -> Position:
    """Parse a PDN FEN for ``variant`` into a :class:`Position` (H and F fields checked, dropped)."""
    return read_fen(variant, text).position


def read_fen(variant: Variant, text: str) -> FenRecord:
    """Parse a PDN FEN for ``variant``, keeping the optional ``H`` and ``F`` fields."""
    if not isinstance(text, str):
        raise FenError(f"invalid FEN {quote(text)}: not a string")
    body = text.strip()
    if body.endswith("."):
        body = body[:-1].rstrip()
    if not body:
        raise FenError(f"invalid FEN {quote(text)}: empty")
    fields = [field.strip() for field in body.split(":")]
    counters: dict[str, int] = {}
    while len(fields) > 3 and fields[-1][:1] in _COUNTER_LETTERS:
        letter, value = _parse_counter(text, fields.pop())
        if letter in counters:
            raise FenError(f"invalid FEN {quote(text)}: field {letter!r} given twice")
        counters[letter] = value
    if len(fields) != 3:
        raise FenError(
            f"invalid FEN {quote(text)}: expected 3 ':'-separated fields (side, white, black) and "
            f"optionally H<n>, F<n>, got {len(fields) + len(counters)}"
        )
    side_text, *colour_fields = fields
    if side_text not in _COLOR_LETTERS:
        raise FenError(f"invalid FEN {quote(text)}: side to move must be 'W' or 'B', got {quote(side_text)}")
    pieces: dict[Color, list[tuple[int, bool]]] = {}
    for field in colour_fields:
        letter = field[:1]
        if letter not in _COLOR_LETTERS:
            raise FenError(
                f"invalid FEN {quote(text)}: colour field {quote(field)} must start with 'W' or 'B'"
            )
        color = _COLOR_LETTERS[letter]
        if color in pieces:
            raise FenError(f"invalid FEN {quote(text)}: colour {letter!r} listed twice")
        pieces[color] = _parse_field(variant, text, field[1:])
    position = _build(variant, text, _COLOR_LETTERS[side_text], pieces)
    return FenRecord(position, counters.get("H"), counters.get("F"))


def _parse_counter(text: str, field: str) -> tuple[str, int]:
    """The letter and value of an ``H<n>`` or ``F<n>`` field (F counts from 1)."""
    letter, digits = field[:1], field[1:].strip()
    name = _COUNTER_LETTERS[letter]
    if not (digits.isdigit() and digits.isascii()) or len(digits) > _COUNTER_DIGITS:
        raise FenError(
            f"invalid FEN {quote(text)}: {name} field {quote(field)} must be {letter} and a number"
        )
    value = int(digits)
    if letter == "F" and value < 1:
        raise FenError(f"invalid FEN {quote(text)}: {name} field {quote(field)} must be at least 1")
    return letter, value


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
                raise FenError(f"invalid FEN {quote(text)}: square {square} is listed {where}")
            owner[square] = color
            bit = 1 << geo.bit(square - 1)
            if not king and bit & promotion:
                raise FenError(
                    f"invalid FEN {quote(text)}: a {color.name.lower()} man on square {square}, "
                    "its own promotion row (it would be a king)"
                )
            boards[color] |= bit
            if king:
                kings |= bit
    return Position(white=boards[Color.WHITE], black=boards[Color.BLACK], kings=kings, side_to_move=side)


def format_fen(
    variant: Variant,
    position: Position,
    algebraic: bool = False,
    halfmove_clock: int | None = None,
    move_number: int | None = None,
) -> str:
    """The FEN of ``position``: numeric squares unless ``algebraic`` (where the variant has it).

    ``halfmove_clock`` and ``move_number``, when given, are appended as ``:H<n>`` and ``:F<n>``.
    """
    geo = geometry(variant)
    parts = ["W" if position.side_to_move == Color.WHITE else "B"]
    for letter, board in (("W", position.white), ("B", position.black)):
        names = []
        for index in geo.squares_of(board):
            prefix = "K" if position.kings >> geo.bit(index) & 1 else ""
            names.append(prefix + square_name(variant, index + 1, algebraic))
        parts.append(letter + ",".join(names))
    if halfmove_clock is not None:
        if halfmove_clock < 0:
            raise FenError(f"half-move clock must be >= 0, got {halfmove_clock!r}")
        parts.append(f"H{halfmove_clock}")
    if move_number is not None:
        if move_number < 1:
            raise FenError(f"move number must be >= 1, got {move_number!r}")
        parts.append(f"F{move_number}")
    return ":".join(parts)
