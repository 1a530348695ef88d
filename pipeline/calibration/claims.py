"""How a calibration run is judged, fixed before it starts (the same rules for every variant).

A level's claim is measured on the run's validation games only (fresh openings, no curve game
used them), on the score-based scale with the product's Medium held at 1500:

- **Hard** beats the product's Hard: point estimate >= +50 Elo and the CI's lower end above 0;
  CI half-width <= 30.
- **Easy** is as strong as the product's Easy: |gap| <= 30 and CI half-width <= 30; its blunder
  rate at most half the product Easy's (the blunder rate is reported either way).
- **Medium** lies at the midpoint of Easy and Hard: |Medium - midpoint| <= 50, CI half-width <= 50.

A claim whose players are split by perfect scores (one side never dropped a point, so the gap
rests on the fit's prior) is not measured: it neither holds nor is precise, and its note says so.
A run that misses a claim is reported as missing it (and its profile says so); it is not re-run
with another seed.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace

from pipeline.jsonrecord import Fields

HARD_MARGIN = 50.0
HARD_HALF_WIDTH = 30.0
EASY_TOLERANCE = 30.0
EASY_HALF_WIDTH = 30.0
EASY_BLUNDER_SHARE = 0.5
MEDIUM_TOLERANCE = 50.0
MEDIUM_HALF_WIDTH = 50.0


@dataclass(frozen=True)
class Claim:
    """One pre-registered check: what was measured against what, and whether it holds."""

    level: str
    what: str  # e.g. "hard - product-hard >= +50"
    estimate: float
    ci_low: float
    ci_high: float
    holds: bool
    precise: bool  # the CI is as narrow as the rule asks
    note: str = ""  # why a claim could not be measured (it then neither holds nor is precise)

    @property
    def half_width(self) -> float:
        return (self.ci_high - self.ci_low) / 2.0

    def to_json(self) -> dict[str, object]:
        return {
            "level": self.level,
            "what": self.what,
            "estimate": self.estimate,
            "ci": [self.ci_low, self.ci_high],
            "holds": self.holds,
            "precise": self.precise,
            "note": self.note,
        }

    @classmethod
    def from_json(cls, data: object, where: str = "claim") -> Claim:
        f = Fields(data, where, ("level", "what", "estimate", "ci", "holds", "precise", "note"))
        low, high = f.interval("ci")
        return cls(
            f.text("level"),
            f.text("what"),
            f.number("estimate"),
            low,
            high,
            f.flag("holds"),
            f.flag("precise"),
            f.text("note"),
        )


def hard_claim(gap: float, low: float, high: float) -> Claim:
    """Hard minus the product's Hard."""
    return Claim(
        "hard",
        f"hard - product-hard >= +{HARD_MARGIN:g}, CI above 0",
        gap,
        low,
        high,
        gap >= HARD_MARGIN and low > 0,
        (high - low) / 2 <= HARD_HALF_WIDTH,
    )


def easy_claim(gap: float, low: float, high: float) -> Claim:
    """Easy minus the product's Easy."""
    return Claim(
        "easy",
        f"|easy - product-easy| <= {EASY_TOLERANCE:g}",
        gap,
        low,
        high,
        abs(gap) <= EASY_TOLERANCE,
        (high - low) / 2 <= EASY_HALF_WIDTH,
    )


def medium_claim(offset: float, low: float, high: float) -> Claim:
    """Medium minus the midpoint of Easy and Hard."""
    return Claim(
        "medium",
        f"|medium - (easy + hard) / 2| <= {MEDIUM_TOLERANCE:g}",
        offset,
        low,
        high,
        abs(offset) <= MEDIUM_TOLERANCE,
        (high - low) / 2 <= MEDIUM_HALF_WIDTH,
    )


def blunder_claim(rate: float | None, product_rate: float | None) -> bool | None:
    """Easy's blunder rate at most half the product Easy's (None: not measurable)."""
    if rate is None or product_rate is None:
        return None
    return rate <= EASY_BLUNDER_SHARE * product_rate


def unmeasured(claim: Claim, players: Iterable[str], groups: Iterable[frozenset[str]]) -> Claim:
    """``claim`` as measured, or refused when perfect scores split its players: the gap between
    them then rests on the fit's prior, not on the games."""
    wanted = set(players)
    if any(wanted <= g for g in groups):
        return claim
    split = [sorted(g & wanted) for g in groups if g & wanted]
    note = (f"not measured: perfect scores split {' | '.join(', '.join(s) for s in split)}; the gap rests on "
            "the fit's prior (curve points between these levels would measure it)")
    return replace(claim, holds=False, precise=False, note=note)
