"""Variants as data: every rule difference is a field, never a name comparison.

Rule code reads the fields of :class:`Variant`; it must not compare ``name``.
"""

from __future__ import annotations

from dataclasses import dataclass
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
    outcome_inverted=False,
    pdn_gametype=20,
    algebraic_notation=False,
)

VARIANTS: tuple[Variant, ...] = (ENGLISH, SUICIDE, BRAZILIAN, RUSSIAN, INTERNATIONAL)

_BY_NAME: dict[str, Variant] = {}
for _variant in VARIANTS:
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
