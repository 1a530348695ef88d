"""Move value type and PDN move text (``11-15``, ``15x24x31``, ``c3xe5xg7``).

A :class:`Move` names squares by 1-based number and keeps the generator's raw bits,
so it can be both printed and applied without another lookup. Text is always written
with the FULL path of a capture; on input the short form ``start x end`` is accepted when
it names exactly one legal move.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Protocol

from engine.errors import AmbiguousMoveError, MoveError, SquareError, quote
from engine.geometry import geometry
from engine.notation import parse_square, square_name
from engine.position import Position
from engine.variants import Variant


class RawMoveLike(Protocol):
    """What the generators return: bit indices plus the captured bitboard."""

    @property
    def from_bit(self) -> int: ...
    @property
    def to_bit(self) -> int: ...
    @property
    def captured(self) -> int: ...
    @property
    def promotes(self) -> bool: ...
    @property
    def path(self) -> tuple[int, ...]: ...


@dataclass(frozen=True)
class Move:
    """One legal move: the path walked, the pieces taken, and the raw bits behind them.

    ``path`` holds 1-based square numbers (start first, then each landing square);
    ``captures`` the 1-based squares of the pieces taken, ascending.
    """

    path: tuple[int, ...]
    captures: tuple[int, ...]
    promotes: bool
    from_bit: int
    to_bit: int
    captured: int  # bitboard of the pieces taken

    @property
    def is_capture(self) -> bool:
        return bool(self.captures)

    @property
    def start(self) -> int:
        return self.path[0]

    @property
    def end(self) -> int:
        return self.path[-1]

    @property
    def pdn(self) -> str:
        """Numeric PDN text with the full path (``11-15``, ``15x24x31``)."""
        return ("x" if self.captures else "-").join(str(square) for square in self.path)

    def __str__(self) -> str:
        return self.pdn


def move_from_raw(variant: Variant, raw: RawMoveLike) -> Move:
    """Wrap a generator's raw move (bit indices) into a :class:`Move` (square numbers)."""
    geo = geometry(variant)
    path = tuple(int(geo.square_of_bit[bit]) + 1 for bit in raw.path)
    captured = int(raw.captured)
    captures = tuple(index + 1 for index in geo.squares_of(captured))
    return Move(
        path=path,
        captures=captures,
        promotes=bool(raw.promotes),
        from_bit=int(raw.from_bit),
        to_bit=int(raw.to_bit),
        captured=captured,
    )


def format_move(variant: Variant, move: Move, algebraic: bool = False) -> str:
    """PDN text of ``move`` with its full path, numeric or (where the variant has it) algebraic."""
    separator = "x" if move.is_capture else "-"
    return separator.join(square_name(variant, square, algebraic) for square in move.path)


_SPLIT = re.compile(r"[-xX:]")
_TOKEN = re.compile(r"^[0-9A-Za-z]+$")


def split_move_text(variant: Variant, text: str) -> tuple[tuple[int, ...], bool]:
    """The squares named by move ``text`` and whether it is written as a capture.

    Only the syntax is checked here; legality needs a position (see :func:`parse_move`).
    """
    if not isinstance(text, str):
        raise MoveError(f"move {quote(text)} is not text")
    body = text.strip()
    separators = set(re.findall(r"[-xX:]", body))
    if not body or not separators:
        raise MoveError(f"malformed move {quote(text)}: expected squares joined by '-' or 'x'")
    if "-" in separators and len(separators) > 1:
        raise MoveError(f"malformed move {quote(text)}: mixes '-' and 'x'")
    tokens = _SPLIT.split(body)
    if any(not _TOKEN.fullmatch(token) for token in tokens):
        raise MoveError(f"malformed move {quote(text)}: expected squares joined by '-' or 'x'")
    is_capture = "-" not in separators
    if not is_capture and len(tokens) != 2:
        raise MoveError(f"malformed move {quote(text)}: a quiet move names exactly two squares")
    try:
        squares = tuple(parse_square(variant, token) for token in tokens)
    except SquareError as err:
        raise MoveError(f"malformed move {quote(text)}: {err}") from None
    return squares, is_capture


def _captures_along(variant: Variant, position: Position, squares: Sequence[int]) -> tuple[int, ...] | None:
    """The pieces a capture walking exactly through ``squares`` would take, or None if it cannot.

    Every leg must run along a diagonal and pass exactly one opposing piece (and nothing else;
    the mover's own start square counts as empty). Lets a written route that differs from the
    generator's representative path still name a merged (FMJD) move.
    """
    geo = geometry(variant)
    mover = position.side_to_move
    own, opp = position.pieces(mover), position.pieces(mover.opponent)
    start_bit = 1 << geo.bit(squares[0] - 1)
    taken: list[int] = []
    for a, b in pairwise(squares):
        ra, ca = int(geo.row_of_square[a - 1]), int(geo.col_of_square[a - 1])
        rb, cb = int(geo.row_of_square[b - 1]), int(geo.col_of_square[b - 1])
        if abs(rb - ra) != abs(cb - ca) or ra == rb:
            return None
        dr, dc = (1 if rb > ra else -1), (1 if cb > ca else -1)
        jumped = []
        for k in range(1, abs(rb - ra)):
            index = (ra + k * dr) * geo.per_row + (ca + k * dc) // 2
            bit = 1 << geo.bit(index)
            if own & bit & ~start_bit:
                return None
            if opp & bit:
                jumped.append(index + 1)
        if len(jumped) != 1:
            return None
        taken.extend(jumped)
    return tuple(sorted(taken))


def parse_move(
    variant: Variant, text: str, legal_moves: Iterable[Move], position: Position | None = None
) -> Move:
    """The legal move that ``text`` names.

    An exact full path wins; otherwise two squares name the start and end (``15x31``). With
    ``position`` given, a complete route that differs from the stored path but takes the
    same pieces also matches (a merged FMJD move written along another route).
    Several matches -> :class:`MoveError` listing them; none -> :class:`MoveError`.
    """
    squares, is_capture = split_move_text(variant, text)
    moves = [m for m in legal_moves if m.is_capture == is_capture]
    candidates = [m for m in moves if m.path == squares]
    if not candidates and len(squares) == 2:
        candidates = [m for m in moves if (m.start, m.end) == squares]
    if not candidates and is_capture and position is not None:
        taken = _captures_along(variant, position, squares)
        wanted = (squares[0], squares[-1], taken)
        candidates = [m for m in moves if (m.start, m.end, m.captures) == wanted]
    if len(candidates) == 1:
        return candidates[0]
    if not candidates:
        raise MoveError(f"illegal move {quote(text)} in this position")
    listed = ", ".join(format_move(variant, m) for m in candidates)
    raise AmbiguousMoveError(
        f"ambiguous move {quote(text)}: it matches {len(candidates)} legal moves ({listed}); "
        "give the full path"
    )
