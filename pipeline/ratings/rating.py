"""One player's rating: the value every stage passes around (ladder anchors, trials,
confirmations, level checks), as :func:`pipeline.ratings.fit_elo` measured it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pipeline.jsonrecord import Fields

_KEYS = ("player", "elo", "ci_low", "ci_high", "games", "score", "prior_driven")


@dataclass(frozen=True)
class Rating:
    """A player's Elo with its confidence interval (relative to the fit's anchor) and record.

    ``score`` is the player's points per game; ``prior_driven``: perfect scores separate the
    player from the anchor, or the fit's prior supplies much of the information on its rating
    (almost no games), so the Elo is a rough bound rather than a measurement.
    """

    player: str
    elo: float
    ci_low: float
    ci_high: float
    games: int
    score: float
    prior_driven: bool

    @property
    def half_width(self) -> float:
        """Half the CI's width: how precisely the Elo is known."""
        return (self.ci_high - self.ci_low) / 2.0

    @property
    def points(self) -> float:
        """Wins plus half the draws (always a multiple of 1/2)."""
        return round(2.0 * self.score * self.games) / 2.0

    def holds(self, elo: float) -> bool:
        """Whether ``elo`` lies inside the CI."""
        return self.ci_low <= elo <= self.ci_high

    def to_json(self) -> dict[str, Any]:
        return {"player": self.player, "elo": self.elo, "ci_low": self.ci_low, "ci_high": self.ci_high,
                "games": self.games, "score": self.score, "prior_driven": self.prior_driven}

    @classmethod
    def from_json(cls, data: object, where: str = "rating") -> Rating:
        f = Fields(data, where, _KEYS)
        return cls(f.text("player"), f.number("elo"), f.number("ci_low"), f.number("ci_high"),
                   f.integer("games"), f.number("score"), f.flag("prior_driven"))
