"""Position: an immutable snapshot of the pieces and the side to move.

Bitboards use the bit layout of :mod:`engine.geometry` and are plain Python ints
here (the generators convert to ``np.uint64``).
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.geometry import geometry
from engine.variants import Color, Variant


@dataclass(frozen=True)
class Position:
    """Pieces of both colours, which of them are kings, and whose turn it is."""

    white: int
    black: int
    kings: int
    side_to_move: Color

    @property
    def occupied(self) -> int:
        return self.white | self.black

    def pieces(self, color: Color) -> int:
        return self.white if color == Color.WHITE else self.black

    def men(self, color: Color) -> int:
        return self.pieces(color) & ~self.kings

    def kings_of(self, color: Color) -> int:
        return self.pieces(color) & self.kings

    def key(self) -> tuple[int, int, int, int]:
        """Hashable identity used for repetition detection."""
        return (self.white, self.black, self.kings, int(self.side_to_move))


def initial_position(variant: Variant) -> Position:
    """The standard starting position of ``variant``."""
    geo = geometry(variant)
    return Position(
        white=geo.start_mask(Color.WHITE, variant.men_rows),
        black=geo.start_mask(Color.BLACK, variant.men_rows),
        kings=0,
        side_to_move=variant.first_player,
    )


def apply_move(position: Position, from_bit: int, to_bit: int, captured: int, promotes: bool) -> Position:
    """The position after moving the piece on ``from_bit`` to ``to_bit``.

    ``captured`` is the bitboard of the opponent's pieces taken; ``promotes``
    crowns the moving man. The side to move flips. No legality check here.
    """
    mover = position.side_to_move
    frm, to = 1 << from_bit, 1 << to_bit
    own = (position.pieces(mover) & ~frm) | to
    opp = position.pieces(mover.opponent) & ~captured
    kings = position.kings & ~captured
    if kings & frm:
        kings = (kings & ~frm) | to
    if promotes:
        kings |= to
    white, black = (own, opp) if mover == Color.WHITE else (opp, own)
    return Position(white=white, black=black, kings=kings, side_to_move=mover.opponent)
