"""A difficulty dial: N levels evenly spaced in Elo from Easy to Hard, read off the strength curves.

The dial's ends are the calibrated Easy and Hard. An interior target lies on Medium's noise curve
(4 plies plus captures) when it is no stronger than 4 plies without noise, else on Hard's
node-budget curve; a target between the two curves, or outside a curve's measured range, takes
the nearest measured end and says so (``note``). Each dial level carries its predicted Elo with
the curve's bootstrap CI; the run plays two interior ones against the product's Medium to check
them (``DialCheck``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any

from pipeline.calibration.paths import PathPlayer, hard_player, medium_player
from pipeline.jsonrecord import Fields
from pipeline.ratings.curve import StrengthCurve
from pipeline.ratings.logistic import elo_to_score


@dataclass(frozen=True)
class DialLevel:
    """One dial position: its player, the curve it lies on, the knob value, predicted Elo and CI."""

    index: int
    player: str
    curve: str  # "easy", "medium", "hard": the calibrated end, or the curve the level lies on
    knob: float | None  # noise (medium) or node budget (hard); None for the calibrated ends
    elo: float
    ci: tuple[float, float]
    note: str
    profile: Mapping[str, Any]  # the level as a profile file holds it

    def to_json(self) -> dict[str, Any]:
        return {"index": self.index, "player": self.player, "curve": self.curve, "knob": self.knob,
                "elo": self.elo, "ci": list(self.ci), "note": self.note, "profile": dict(self.profile)}

    @classmethod
    def from_json(cls, data: object, where: str = "dial level") -> DialLevel:
        f = Fields(data, where, [x.name for x in fields(cls)])
        return cls(f.integer("index"), f.text("player"), f.text("curve"), f.opt_number("knob"),
                   f.number("elo"), f.interval("ci"), f.text("note"), f.document("profile"))


@dataclass(frozen=True)
class DialCheck:
    """A dial level played against the product's Medium: predicted and measured score."""

    index: int
    player: str
    predicted_score: float
    score: float
    score_ci: tuple[float, float]
    games: int

    @property
    def reproduced(self) -> bool:
        return self.score_ci[0] <= self.predicted_score <= self.score_ci[1]

    def to_json(self) -> dict[str, Any]:
        return {"index": self.index, "player": self.player, "predicted_score": self.predicted_score,
                "score": self.score, "score_ci": list(self.score_ci), "games": self.games}

    @classmethod
    def from_json(cls, data: object, where: str = "dial check") -> DialCheck:
        f = Fields(data, where, [x.name for x in fields(cls)])
        return cls(f.integer("index"), f.text("player"), f.number("predicted_score"), f.number("score"),
                   f.interval("score_ci"), f.integer("games"))


End = tuple[PathPlayer, float, tuple[float, float]]  # a calibrated level: player, Elo, CI


def plan_dial(n: int, variant: str, weights: Mapping[str, float], ends: Mapping[str, End],
              medium: StrengthCurve, hard: StrengthCurve) -> tuple[tuple[DialLevel, PathPlayer], ...]:
    """``n`` levels from Easy to Hard (``ends``: the calibrated easy and hard), each with the
    player that plays it (named ``dial-<index>`` in game records)."""
    if n == 0:
        return ()
    easy_player, easy_elo, easy_ci = ends["easy"]
    top_player, hard_elo, hard_ci = ends["hard"]
    out = [(DialLevel(0, easy_player.name, "easy", None, easy_elo, easy_ci, "the calibrated Easy",
                      easy_player.level.to_json()), easy_player)]
    medium_top = medium.elo_range[1]
    for i in range(1, n - 1):
        target = easy_elo + i * (hard_elo - easy_elo) / (n - 1)
        if target <= medium_top or target < hard.elo_range[0]:
            curve, name = medium, "medium"
        else:
            curve, name = hard, "hard"
        knob = curve.invert(target)
        x = min(max(knob.value, float(curve.xs[0])), float(curve.xs[-1]))
        at = curve.at(x)
        notes = []
        if knob.clamped or x != knob.value:
            notes.append("target outside the curve's measured range: its nearest end")
        if name == "medium" and target > medium_top:
            notes.append("target between the Medium and Hard curves: 4 plies without noise")
        if name == "medium":
            player = medium_player(variant, weights, -x)
            value = player.level.noise_sigma
        else:
            budget = round(2.0 ** x)
            player = hard_player(variant, weights, budget)
            value = float(budget)
        dial = PathPlayer(f"dial-{i}", player.level)
        out.append((DialLevel(i, dial.name, name, float(value), at.value, (at.ci_low, at.ci_high),
                              "; ".join(notes) or f"on the {name} curve", player.level.to_json()), dial))
    out.append((DialLevel(n - 1, top_player.name, "hard", None, hard_elo, hard_ci, "the calibrated Hard",
                          top_player.level.to_json()), top_player))
    return tuple(out)


def spot_checked(levels: Sequence[DialLevel]) -> tuple[int, ...]:
    """Indexes of the two interior levels the run plays (a third and two thirds of the way)."""
    interior = [lv.index for lv in levels if lv.knob is not None]
    if len(interior) <= 2:
        return tuple(interior)
    return tuple(sorted({interior[len(interior) // 3], interior[(2 * len(interior)) // 3]}))


def predicted_score(level: DialLevel, reference_elo: float) -> float:
    """The score the dial level should make against a player rated ``reference_elo``."""
    return float(elo_to_score(level.elo - reference_elo))
