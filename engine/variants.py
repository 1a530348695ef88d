"""Variants as data: every rule difference is a field, never a name comparison.

Rule code reads the fields of :class:`Variant`; it must not compare ``name``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import Enum, IntEnum

from engine.errors import UnknownVariantError, quote


class Color(IntEnum):
    """Side colour. White always starts at the bottom of the diagram."""

    WHITE = 0
    BLACK = 1

    @property
    def opponent(self) -> Color:
        return Color(1 - self.value)


class CapturePromotion(Enum):
    """What a man does when it reaches the far row in the middle of a capture."""

    STOP = "stop"  # crowned and the move ends there (english)
    CONTINUE_AS_MAN = "continue_as_man"  # goes on capturing as a man; crowned only if it ends there
    CONTINUE_AS_KING = "continue_as_king"  # crowned at once and goes on as a king (russian)


class EndgameMaterial(Enum):
    """Which positions a small-endgame draw count applies to."""

    LONE_KING = "lone_king"  # one side has a lone king, the other one of ``EndgameDraw.strong``
    BOTH_KINGS = "both_kings"  # both sides have a king; ``EndgameDraw.pieces`` pieces on the board


@dataclass(frozen=True, kw_only=True)
class EndgameDraw:
    """A small-endgame draw count: the game is drawn once ``moves`` more moves have been played.

    The count starts where its material arises. Moving from one count into another (a capture
    3 kings v 1 -> 2 v 1) keeps the earlier deadline if it comes first, unless
    ``restart_on_material_change`` and the move changed the material (a capture or a crowning):
    then the new count starts afresh. A ``lone_king_on_main_road`` count runs beside the others,
    only while the lone king stands on the long diagonal a1-h8: it starts when the king steps on
    (or the material arises with it there) and ends when the king steps off.
    """

    moves: int  # moves each; the draw comes 2 * moves plies after the count started
    material: EndgameMaterial = EndgameMaterial.LONE_KING
    strong: frozenset[tuple[int, int]] = frozenset()  # LONE_KING: (kings, men) of the stronger side
    pieces: frozenset[int] = frozenset()  # BOTH_KINGS: pieces on the board, both sides together
    lone_king_on_main_road: bool = False
    restart_on_material_change: bool = False
    strong_side_moves: bool = False  # True: drawn after the stronger side's last move, False: both sides'
    source: str  # the rule text this count implements

    def __post_init__(self) -> None:
        lone = self.material is EndgameMaterial.LONE_KING
        if self.moves < 1 or lone != bool(self.strong) or lone == bool(self.pieces):
            raise ValueError(f"endgame draw {self.source!r}: a lone-king count lists the stronger "
                             "side's material, a both-kings count the pieces on the board, moves >= 1")
        if not lone and (self.strong_side_moves or self.lone_king_on_main_road):
            raise ValueError(f"endgame draw {self.source!r}: a both-kings count has no stronger side")

    def plies(self, strong_to_move: bool) -> int:
        """Plies from the position where the count starts to the draw."""
        return 2 * self.moves - (1 if self.strong_side_moves and strong_to_move else 0)

    @property
    def max_pieces(self) -> int:
        """Most pieces on the board (both sides) this count can apply to."""
        if self.material is EndgameMaterial.BOTH_KINGS:
            return max(self.pieces)
        return 1 + max(kings + men for kings, men in self.strong)


#: FMJD, Official rules for international draughts (Annex 1, version of November 2015), article 6
#: (the draw): 6.3, three kings, two kings and a man, or a king and two men against one king: drawn
#: when each player has played another sixteen moves at most; 6.4, two kings, a king and a man,
#: or a king against one king: another five moves each at most. "At most" in both: a capture that
#: moves a 16-move count into a 5-move one keeps the earlier deadline. Most specific first.
FMJD_ENDGAME_DRAWS: tuple[EndgameDraw, ...] = (
    EndgameDraw(moves=5, strong=frozenset({(2, 0), (1, 1), (1, 0)}),
                source="FMJD rules art. 6.4: two kings, a king and a man, or a king against one king: "
                       "five more moves each at most"),
    EndgameDraw(moves=16, strong=frozenset({(3, 0), (2, 1), (1, 2)}),
                source="FMJD rules art. 6.3: three kings, two kings and a man, or a king and two men "
                       "against one king: sixteen more moves each at most"),
)

#: Russian draughts, the FMJD-64 rules of the game, article 7.2 (the draw), counted from when the
#: balance of forces arose, so a capture or a crowning starts a count afresh. 7.2.8: two kings, a
#: king and a man, or a king against a lone king: drawn if the stronger side's 5th move does not
#: win; 7.2.4: three kings or more against a lone king: its 15th move; 7.2.6: both sides have
#: kings and the balance does not change (no capture, no crowning): 30 moves in 4- and 5-piece
#: endings, 60 in 6- and 7-piece ones; 7.2.7: three kings, two kings and a man, or a king and two
#: men against a lone king on the main road: the stronger side's 5th move.
RUSSIAN_ENDGAME_DRAWS: tuple[EndgameDraw, ...] = (
    EndgameDraw(moves=5, strong=frozenset({(2, 0), (1, 1), (1, 0)}), restart_on_material_change=True,
                strong_side_moves=True,
                source="FMJD-64 rules art. 7.2.8: two kings, a king and a man, or a king against a "
                       "lone king: the stronger side's 5th move"),
    EndgameDraw(moves=15, strong=frozenset((kings, 0) for kings in range(3, 13)),
                restart_on_material_change=True, strong_side_moves=True,
                source="FMJD-64 rules art. 7.2.4: three kings or more against a lone king: the "
                       "stronger side's 15th move from when the material arose"),
    EndgameDraw(moves=30, material=EndgameMaterial.BOTH_KINGS, pieces=frozenset({4, 5}),
                restart_on_material_change=True,
                source="FMJD-64 rules art. 7.2.6: both sides have kings, 4 or 5 pieces, no capture "
                       "or crowning: 30 moves"),
    EndgameDraw(moves=60, material=EndgameMaterial.BOTH_KINGS, pieces=frozenset({6, 7}),
                restart_on_material_change=True,
                source="FMJD-64 rules art. 7.2.6: both sides have kings, 6 or 7 pieces, no capture "
                       "or crowning: 60 moves"),
    EndgameDraw(moves=5, strong=frozenset({(3, 0), (2, 1), (1, 2)}), lone_king_on_main_road=True,
                restart_on_material_change=True, strong_side_moves=True,
                source="FMJD-64 rules art. 7.2.7: three kings, two kings and a man, or a king and "
                       "two men against a lone king on the main road: the stronger side's 5th move"),
)


@dataclass(frozen=True)
class Variant:
    """The complete rule set of one draughts variant."""

    name: str
    aliases: tuple[str, ...]
    board_size: int  # 8 or 10: squares per side of the board
    men_rows: int  # rows of men each side starts with
    first_player: Color
    men_capture_backward: bool
    flying_kings: bool
    majority_capture: bool  # must take the greatest number of pieces
    promotion_during_capture: CapturePromotion
    distinct_capture_orders: bool  # True: every capture order is its own move (english)
    quiet_ply_limit: int  # plies without capture or man move that draw the game
    endgame_draws: tuple[EndgameDraw, ...]  # small-endgame draw counts (docs/rules.md), first match applies
    outcome_inverted: bool  # True: the side without a move WINS (suicide)
    pdn_gametype: int
    algebraic_notation: bool  # algebraic squares (a1..h8) are accepted and may be written

    @property
    def squares(self) -> int:
        """Number of playable (dark) squares."""
        return self.board_size * self.board_size // 2

    @property
    def squares_per_row(self) -> int:
        return self.board_size // 2


ENGLISH = Variant(
    name="english",
    aliases=("checkers", "american", "english-draughts", "american-checkers"),
    board_size=8,
    men_rows=3,
    first_player=Color.BLACK,
    men_capture_backward=False,
    flying_kings=False,
    majority_capture=False,
    promotion_during_capture=CapturePromotion.STOP,
    distinct_capture_orders=True,
    quiet_ply_limit=80,
    endgame_draws=(),
    outcome_inverted=False,
    pdn_gametype=21,
    algebraic_notation=False,
)

SUICIDE = Variant(
    name="suicide",
    aliases=("giveaway", "give-away", "antidraughts-english", "anti-checkers", "anticheckers", "losing"),
    board_size=8,
    men_rows=3,
    first_player=Color.BLACK,
    men_capture_backward=False,
    flying_kings=False,
    majority_capture=False,
    promotion_during_capture=CapturePromotion.STOP,
    distinct_capture_orders=True,
    quiet_ply_limit=80,
    endgame_draws=(),
    outcome_inverted=True,
    pdn_gametype=21,
    algebraic_notation=False,
)

BRAZILIAN = Variant(
    name="brazilian",
    aliases=("brazil",),
    board_size=8,
    men_rows=3,
    first_player=Color.WHITE,
    men_capture_backward=True,
    flying_kings=True,
    majority_capture=True,
    promotion_during_capture=CapturePromotion.CONTINUE_AS_MAN,
    distinct_capture_orders=False,
    quiet_ply_limit=50,
    endgame_draws=(),
    outcome_inverted=False,
    pdn_gametype=26,
    algebraic_notation=True,
)

RUSSIAN = Variant(
    name="russian",
    aliases=("shashki",),
    board_size=8,
    men_rows=3,
    first_player=Color.WHITE,
    men_capture_backward=True,
    flying_kings=True,
    majority_capture=False,
    promotion_during_capture=CapturePromotion.CONTINUE_AS_KING,
    distinct_capture_orders=False,
    quiet_ply_limit=30,
    endgame_draws=RUSSIAN_ENDGAME_DRAWS,
    outcome_inverted=False,
    pdn_gametype=25,
    algebraic_notation=True,
)

INTERNATIONAL = Variant(
    name="international",
    aliases=("10x10", "polish", "fmjd"),
    board_size=10,
    men_rows=4,
    first_player=Color.WHITE,
    men_capture_backward=True,
    flying_kings=True,
    majority_capture=True,
    promotion_during_capture=CapturePromotion.CONTINUE_AS_MAN,
    distinct_capture_orders=False,
    quiet_ply_limit=50,
    endgame_draws=FMJD_ENDGAME_DRAWS,
    outcome_inverted=False,
    pdn_gametype=20,
    algebraic_notation=False,
)

VARIANTS: tuple[Variant, ...] = (ENGLISH, SUICIDE, BRAZILIAN, RUSSIAN, INTERNATIONAL)

#: Brazilian with the FMJD endgame counts on top of the product's rules (threefold, 50 plies):
#: an option, looked up by name, not one of the product's VARIANTS.
BRAZILIAN_FMJD_ENDGAME = replace(BRAZILIAN, name="brazilian-fmjd-endgame", aliases=(),
                                 endgame_draws=FMJD_ENDGAME_DRAWS)

_BY_NAME: dict[str, Variant] = {}
for _variant in (*VARIANTS, BRAZILIAN_FMJD_ENDGAME):
    for _key in (_variant.name, *_variant.aliases):
        _BY_NAME[_key] = _variant


def get_variant(name: str | Variant) -> Variant:
    """Look a variant up by name or alias.

    Case, spaces, underscores and a trailing "draughts"/"checkers" do not matter, so the
    spellings of PDN ``Variant`` tags (``Russian draughts``, ``Suicide checkers``) resolve.
    """
    if isinstance(name, Variant):
        return name
    key = "-".join(str(name).lower().replace("_", " ").split())
    found = _BY_NAME.get(key)
    for suffix in ("-draughts", "-checkers"):
        if found is None and key.endswith(suffix):
            found = _BY_NAME.get(key[: -len(suffix)])
    if found is None:
        known = ", ".join(v.name for v in VARIANTS)
        raise UnknownVariantError(f"unknown variant {quote(name)}; known variants: {known}")
    return found


def variant_names() -> list[str]:
    """Canonical names of every registered variant."""
    return [v.name for v in VARIANTS]
