"""Small-endgame draw counts (``Variant.endgame_draws``) for one position at a time.

The count is a pair (rule, plies left): which of the variant's counts the material fits, and
how many plies remain before the draw. It cannot be read off a position or a FEN, so a board
carries it from move to move; a game set up from a FEN starts it afresh. The batch generator
and the search kernel implement the same transition over their own data (tested equal).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from engine.geometry import geometry
from engine.position import Position
from engine.variants import Color, Variant

NO_RULE = -1


@dataclass(frozen=True)
class EndgameCount:
    """The running count: ``rule`` indexes ``variant.endgame_draws`` (NO_RULE: none runs)."""

    rule: int
    left: int  # plies left; the game is drawn when a count reaches 0

    @property
    def expired(self) -> bool:
        return self.rule != NO_RULE and self.left <= 0


NONE = EndgameCount(NO_RULE, 0)


@cache
def main_road_mask(variant: Variant) -> int:
    """Bitboard of the long diagonal from White's bottom-left corner (a1-h8 on 8x8)."""
    geo = geometry(variant)
    squares = [s for s in range(geo.squares) if geo.row_of_square[s] + geo.col_of_square[s] == geo.size - 1]
    return geo.mask_of(squares)


def _material(position: Position, color: Color) -> tuple[int, int]:
    """(kings, men) of ``color``."""
    return position.kings_of(color).bit_count(), position.men(color).bit_count()


def matching_rule(variant: Variant, position: Position) -> tuple[int, Color]:
    """The first endgame count whose material ``position`` fits (or NO_RULE) and the lone king's side."""
    if not variant.endgame_draws or position.occupied.bit_count() > max(
        rule.max_pieces for rule in variant.endgame_draws
    ):
        return NO_RULE, Color.WHITE
    for index, rule in enumerate(variant.endgame_draws):
        for weak in (Color.WHITE, Color.BLACK):
            if _material(position, weak) != (1, 0) or _material(position, weak.opponent) not in rule.strong:
                continue
            if rule.lone_king_on_main_road and not position.kings_of(weak) & main_road_mask(variant):
                continue
            return index, weak
    return NO_RULE, Color.WHITE


def start_count(variant: Variant, position: Position) -> EndgameCount:
    """The count of a game set up in ``position`` (a fresh count if its material fits one)."""
    rule, weak = matching_rule(variant, position)
    if rule == NO_RULE:
        return NONE
    return EndgameCount(rule, variant.endgame_draws[rule].plies(position.side_to_move != weak))


def next_count(
    variant: Variant, count: EndgameCount, after: Position, material_changed: bool
) -> EndgameCount:
    """The count after a move that led to ``after`` (``material_changed``: it captured or crowned).

    Entering a count starts it; staying in one counts a ply down; moving into another keeps
    the earlier deadline when it comes first, unless the new count restarts on a change of
    material and the move made one.
    """
    rule, weak = matching_rule(variant, after)
    if rule == NO_RULE:
        return NONE
    draw = variant.endgame_draws[rule]
    plies = draw.plies(after.side_to_move != weak)
    if count.rule == NO_RULE or (material_changed and draw.restart_on_material_change):
        return EndgameCount(rule, plies)
    return EndgameCount(rule, min(count.left - 1, plies))
