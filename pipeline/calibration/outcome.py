"""What a calibration run found, as frozen records written to ``calibrate/result.json``.

``to_json`` writes plain JSON (no NaN); ``from_json`` reads it back strictly: a missing or unknown
key is a one-line ``ValueError`` naming it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

from pipeline.calibration.claims import Claim

Interval = tuple[float, float]


def _strict(data: Mapping[str, Any], cls: type, where: str) -> None:
    names = {f.name for f in fields(cls)}
    unknown = sorted(set(data) - names)
    missing = sorted(names - set(data))
    if unknown:
        raise ValueError(f"{where}: unknown key {unknown[0]!r}")
    if missing:
        raise ValueError(f"{where}: missing key {missing[0]!r}")


def pair(value: Any) -> Interval:
    """A JSON ``[low, high]`` pair."""
    return float(value[0]), float(value[1])


@dataclass(frozen=True)
class EasyTrial:
    """One Optuna trial of Easy's weakening mix, measured against the product's Easy."""

    slot: int
    player: str
    params: Mapping[str, Any]
    gap: float  # score-based Elo against the product's Easy, head to head
    score: float
    blunder_rate: float
    games: int
    feasible: bool

    def to_json(self) -> dict[str, Any]:
        return {
            f.name: (dict(self.params) if f.name == "params" else getattr(self, f.name)) for f in fields(self)
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> EasyTrial:
        _strict(data, cls, "easy trial")
        return cls(
            int(data["slot"]),
            str(data["player"]),
            dict(data["params"]),
            float(data["gap"]),
            float(data["score"]),
            float(data["blunder_rate"]),
            int(data["games"]),
            bool(data["feasible"]),
        )


@dataclass(frozen=True)
class LevelOutcome:
    """A chosen level: its knobs, Elo (pooled fit of every game), validation Elo and measures."""

    level: str
    player: str
    profile: Mapping[str, Any]  # the level as a profile file holds it: weights, search, weakening
    elo: float
    ci: Interval
    validation_elo: float
    validation_ci: Interval
    expected_score_next: float | None  # against the next stronger level (None for Hard)
    expected_score_product: Mapping[str, float]  # against each of the product's levels
    nodes_per_move: float
    median_depth: float | None  # in middlegame positions of the validation games
    blunder_rate: float | None
    blunder_ci: Interval
    games: int

    def describe(self) -> str:
        """The level's knobs in a few words (for the profile's description)."""
        search, weak = self.profile["search"], self.profile["weakening"]
        parts = [
            f"{search['max_depth']} plies at most" if search["max_depth"] < 64 else "depth unbounded",
            f"{search['node_budget']} nodes per move at most",
            "every capture" if search["quiescence"] else "no capture extension",
        ]
        parts += [f"{k} {v:g}" for k, v in weak.items() if v]
        if not any(weak.values()):
            parts.append("no weakening")
        return ", ".join(parts)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, tuple):
                value = list(value)
            elif isinstance(value, Mapping):
                value = dict(value)
            out[f.name] = value
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> LevelOutcome:
        _strict(data, cls, f"level {data.get('level')!r}")
        return cls(
            str(data["level"]),
            str(data["player"]),
            dict(data["profile"]),
            float(data["elo"]),
            pair(data["ci"]),
            float(data["validation_elo"]),
            pair(data["validation_ci"]),
            None if data["expected_score_next"] is None else float(data["expected_score_next"]),
            {k: float(v) for k, v in data["expected_score_product"].items()},
            float(data["nodes_per_move"]),
            None if data["median_depth"] is None else float(data["median_depth"]),
            None if data["blunder_rate"] is None else float(data["blunder_rate"]),
            pair(data["blunder_ci"]),
            int(data["games"]),
        )


@dataclass(frozen=True)
class CalibrationOutcome:
    """The whole run: chosen levels, the pre-registered claims, Easy's trials, the curves."""

    variant: str
    product_file: str
    anchor: str
    anchor_elo: float
    levels: Mapping[str, LevelOutcome]
    claims: tuple[Claim, ...]
    easy_trials: tuple[EasyTrial, ...]
    easy_choice: int
    product_elo: Mapping[str, tuple[float, float, float]]  # (elo, low, high) of each product level
    product_easy_blunder_rate: float | None
    easy_blunder_halved: bool | None
    medium_target: float
    medium_note: str
    curves: Mapping[str, Any]
    openings: Mapping[str, int]
    curve_openings: tuple[str, ...]
    validation_openings: tuple[str, ...]
    games: int
    scale: Mapping[str, Any]

    @property
    def all_claims_hold(self) -> bool:
        return all(c.holds and c.precise for c in self.claims)

    def to_json(self) -> dict[str, Any]:
        return {
            "variant": self.variant,
            "product_file": self.product_file,
            "anchor": self.anchor,
            "anchor_elo": self.anchor_elo,
            "levels": {k: v.to_json() for k, v in self.levels.items()},
            "claims": [c.to_json() for c in self.claims],
            "easy_trials": [t.to_json() for t in self.easy_trials],
            "easy_choice": self.easy_choice,
            "product_elo": {k: list(v) for k, v in self.product_elo.items()},
            "product_easy_blunder_rate": self.product_easy_blunder_rate,
            "easy_blunder_halved": self.easy_blunder_halved,
            "medium_target": self.medium_target,
            "medium_note": self.medium_note,
            "curves": dict(self.curves),
            "openings": dict(self.openings),
            "curve_openings": list(self.curve_openings),
            "validation_openings": list(self.validation_openings),
            "games": self.games,
            "scale": dict(self.scale),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> CalibrationOutcome:
        _strict(data, cls, "calibration result")
        return cls(
            str(data["variant"]),
            str(data["product_file"]),
            str(data["anchor"]),
            float(data["anchor_elo"]),
            {k: LevelOutcome.from_json(v) for k, v in data["levels"].items()},
            tuple(
                Claim(
                    str(c["level"]),
                    str(c["what"]),
                    float(c["estimate"]),
                    float(c["ci"][0]),
                    float(c["ci"][1]),
                    bool(c["holds"]),
                    bool(c["precise"]),
                )
                for c in data["claims"]
            ),
            tuple(EasyTrial.from_json(t) for t in data["easy_trials"]),
            int(data["easy_choice"]),
            {k: (float(v[0]), float(v[1]), float(v[2])) for k, v in data["product_elo"].items()},
            None if data["product_easy_blunder_rate"] is None else float(data["product_easy_blunder_rate"]),
            None if data["easy_blunder_halved"] is None else bool(data["easy_blunder_halved"]),
            float(data["medium_target"]),
            str(data["medium_note"]),
            dict(data["curves"]),
            dict(data["openings"]),
            tuple(data["curve_openings"]),
            tuple(data["validation_openings"]),
            int(data["games"]),
            dict(data["scale"]),
        )
