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


@dataclass(frozen=True)
class EndgameDraw:
    """A small-endgame draw count: one side has ``strong`` material against a lone king.

    While the material fits, the game is drawn once ``moves`` more moves each have been played
    since it arose. Moving from one such count into another (a capture 3 kings v 1 -> 2 v 1)
    keeps the earlier deadline if it comes first, unless ``restart_on_material_change`` and
    the move changed the material (a capture or a crowning): then the new count starts afresh.
    """

    moves: int  # moves each; the draw comes 2 * moves plies after the material arose
    strong: frozenset[tuple[int, int]]  # (kings, men) of the stronger side
    lone_king_on_main_road: bool  # only while the lone king stands on the long diagonal a1-h8
    restart_on_material_change: bool
    strong_side_moves: bool  # True: drawn after the stronger side's last move; False: after both sides'
    source: str  # the rule text this count implements

    def plies(self, strong_to_move: bool) -> int:
        """Plies from the position where the material arose to the draw."""
        return 2 * self.moves - (1 if self.strong_side_moves and strong_to_move else 0)

    @property
    def max_pieces(self) -> int:
        """Most pieces on the board (both sides) this count can apply to."""
        return 1 + max(kings + men for kings, men in self.strong)


#: FMJD, Official rules for international draughts (Annex 1), article 6: 16 moves each for 3
#: kings, 2 kings and a man, or a king and 2 men against a lone king (a capture within the
#: 16 moves does not restart the count), then 5 moves each for 2 kings, a king and a man, or a
#: king against a lone king. Listed most specific first: the first count that fits applies.
FMJD_ENDGAME_DRAWS: tuple[EndgameDraw, ...] = (
    EndgameDraw(5, frozenset({(2, 0), (1, 1), (1, 0)}), False, False, False,
                "FMJD rules art. 6: two kings, a king and a man, or a king against a king: 5 moves each"),
    EndgameDraw(16, frozenset({(3, 0), (2, 1), (1, 2)}), False, False, False,
                "FMJD rules art. 6: three kings, two kings and a man, or a king and two men against a "
                "king: 16 moves each, a capture within them does not restart the count"),
)

#: Russian draughts (Russian Draughts Federation rules; Minsport "rules of the sport 'draughts'"):
#: three kings or more against a lone king is drawn if the 15th move, counted from when that
#: material arose, does not take the lone king; 5 moves when the lone king holds the main road.
RUSSIAN_ENDGAME_DRAWS: tuple[EndgameDraw, ...] = (
    EndgameDraw(5, frozenset((kings, 0) for kings in range(3, 13)), True, True, True,
                "Russian rules: three (or more) kings against a lone king on the main road: 5 moves"),
    EndgameDraw(15, frozenset((kings, 0) for kings in range(3, 13)), False, True, True,
                "Russian rules: three (or more) kings against a lone king: 15 moves from when the "
                "material arose"),
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
    endgame_draws: tuple[EndgameDraw, ...]  # small-endgame draw counts, first match applies
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
