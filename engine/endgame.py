"""Small-endgame draw counts (``Variant.endgame_draws``) for one position at a time.

The count has two slots, each a pair (rule, plies left): the material slot (the first count
whose material the position fits) and the main-road slot (the first ``lone_king_on_main_road``
count that fits, running only while the lone king stands on the long diagonal). The game is
drawn when either slot reaches 0. The count cannot be read off a position or a FEN, so a board
carries it from move to move; a game set up from a FEN starts it afresh. The batch generator
and the search kernel implement the same transition over their own data (tested equal).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from engine.geometry import geometry
from engine.position import Position
from engine.variants import Color, EndgameDraw, EndgameMaterial, Variant

NO_RULE = -1


@dataclass(frozen=True)
class EndgameCount:
    """The running count: ``rule``/``road_rule`` index ``variant.endgame_draws`` (NO_RULE: none runs)."""

    rule: int  # the material slot
    left: int  # its plies left; the game is drawn when a running count reaches 0
    road_rule: int = NO_RULE  # the main-road slot
    road_left: int = 0

    @property
    def expired(self) -> bool:
        running_out = self.rule != NO_RULE and self.left <= 0
        return running_out or (self.road_rule != NO_RULE and self.road_left <= 0)


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


def _fits(variant: Variant, draw: EndgameDraw, position: Position) -> Color | None:
    """The lone king's side if ``position`` fits ``draw`` (White for a both-kings count), else None."""
    if draw.material is EndgameMaterial.BOTH_KINGS:
        both = position.kings_of(Color.WHITE) and position.kings_of(Color.BLACK)
        return Color.WHITE if both and position.occupied.bit_count() in draw.pieces else None
    for weak in (Color.WHITE, Color.BLACK):
        if _material(position, weak) != (1, 0) or _material(position, weak.opponent) not in draw.strong:
            continue
        if draw.lone_king_on_main_road and not position.kings_of(weak) & main_road_mask(variant):
            continue
        return weak
    return None


def matching_rule(variant: Variant, position: Position, road: bool = False) -> tuple[int, Color]:
    """The first count of a slot (``road``: the main-road slot) that ``position`` fits, or NO_RULE,
    and the lone king's side."""
    if not variant.endgame_draws or position.occupied.bit_count() > max(
        rule.max_pieces for rule in variant.endgame_draws
    ):
        return NO_RULE, Color.WHITE
    for index, draw in enumerate(variant.endgame_draws):
        if draw.lone_king_on_main_road == road:
            weak = _fits(variant, draw, position)
            if weak is not None:
                return index, weak
    return NO_RULE, Color.WHITE


def _next_slot(variant: Variant, rule: int, left: int, after: Position, changed: bool,
               road: bool) -> tuple[int, int]:
    new_rule, weak = matching_rule(variant, after, road)
    if new_rule == NO_RULE:
        return NO_RULE, 0
    draw = variant.endgame_draws[new_rule]
    plies = draw.plies(after.side_to_move != weak)
    if rule == NO_RULE or (changed and draw.restart_on_material_change):
        return new_rule, plies
    return new_rule, min(left - 1, plies)


def start_count(variant: Variant, position: Position) -> EndgameCount:
    """The count of a game set up in ``position`` (fresh counts where its material fits them)."""
    return next_count(variant, NONE, position, False)


def next_count(
    variant: Variant, count: EndgameCount, after: Position, material_changed: bool
) -> EndgameCount:
    """The count after a move that led to ``after`` (``material_changed``: it captured or crowned).

    In each slot: entering a count starts it; staying in one counts a ply down; moving into
    another keeps the earlier deadline when it comes first, unless the new count restarts on a
    change of material and the move made one.
    """
    rule, left = _next_slot(variant, count.rule, count.left, after, material_changed, False)
    road_rule, road_left = _next_slot(variant, count.road_rule, count.road_left, after, material_changed,
                                      True)
    return EndgameCount(rule, left, road_rule, road_left)
