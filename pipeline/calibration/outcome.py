"""What a calibration run found, as frozen records written to ``calibrate/result.json``.

``to_json`` writes plain JSON (no NaN); ``from_json`` reads it back strictly through
:class:`pipeline.jsonrecord.Fields`: a missing, unknown or mistyped key is a one-line
``RecordError`` naming its path.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any

from engine.profile import LEVEL_NAMES
from pipeline.calibration.claims import HARD_MARGIN, Claim
from pipeline.calibration.dial import DialCheck, DialLevel
from pipeline.jsonrecord import Fields, RecordError

Interval = tuple[float, float]


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
    def from_json(cls, data: object, where: str = "easy trial") -> EasyTrial:
        f = Fields(data, where, [x.name for x in fields(cls)])
        return cls(
            f.integer("slot"),
            f.text("player"),
            f.scalars("params"),
            f.number("gap"),
            f.number("score"),
            f.number("blunder_rate"),
            f.integer("games"),
            f.flag("feasible"),
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
    tactics: tuple[int, int]  # positions of the variant's tactical test set solved, out of how many
    #: measured score [point, CI low, CI high] against each opponent it met in the validation games
    measured_scores: Mapping[str, tuple[float, float, float]] = field(default_factory=dict)

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
                value = {k: list(v) if isinstance(v, tuple) else v for k, v in value.items()}
            out[f.name] = value
        return out

    @classmethod
    def from_json(cls, data: object, where: str = "level") -> LevelOutcome:
        f = Fields(data, where, [x.name for x in fields(cls)])
        scores = Fields(f.data["expected_score_product"], f.path("expected_score_product"), LEVEL_NAMES)
        return cls(
            f.text("level"),
            f.text("player"),
            f.document("profile"),
            f.number("elo"),
            f.interval("ci"),
            f.number("validation_elo"),
            f.interval("validation_ci"),
            f.opt_number("expected_score_next"),
            {n: scores.number(n) for n in LEVEL_NAMES},
            f.number("nodes_per_move"),
            f.opt_number("median_depth"),
            f.opt_number("blunder_rate"),
            f.interval("blunder_ci"),
            f.integer("games"),
            _two_ints(f.integers("tactics"), f.path("tactics")),
            {k: _triple(v, f"{f.path('measured_scores')}.{k}")
             for k, v in f.document("measured_scores").items()},
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
    dial: tuple[DialLevel, ...] = ()  # [calibrate] dial levels from Easy to Hard (none when dial = 0)
    dial_checks: tuple[DialCheck, ...] = ()  # two interior dial levels against the product's Medium

    @property
    def all_claims_hold(self) -> bool:
        return all(c.holds and c.precise for c in self.claims)

    def targets(self) -> dict[str, float]:
        """Each level's target Elo on the pooled fit's scale (the one ``elo`` is on): Easy the
        product's Easy, Medium the midpoint of Easy and Hard, Hard the product's Hard plus the
        Hard claim's margin."""
        return {"easy": self.product_elo["easy"][0],
                "medium": (self.levels["easy"].elo + self.levels["hard"].elo) / 2.0,
                "hard": self.product_elo["hard"][0] + HARD_MARGIN}

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
            "dial": [d.to_json() for d in self.dial],
            "dial_checks": [c.to_json() for c in self.dial_checks],
        }

    @classmethod
    def from_json(cls, data: object, where: str = "calibration result") -> CalibrationOutcome:
        f = Fields(data, where, [x.name for x in fields(cls)])
        product = Fields(f.data["product_elo"], f.path("product_elo"), LEVEL_NAMES)
        triples = {n: _triple(product.data[n], product.path(n)) for n in LEVEL_NAMES}
        openings = f.scalars("openings")
        return cls(
            f.text("variant"),
            f.text("product_file"),
            f.text("anchor"),
            f.number("anchor_elo"),
            f.table("levels", LevelOutcome.from_json, LEVEL_NAMES),
            f.records("claims", Claim.from_json),
            f.records("easy_trials", EasyTrial.from_json),
            f.integer("easy_choice"),
            triples,
            f.opt_number("product_easy_blunder_rate"),
            f.opt_flag("easy_blunder_halved"),
            f.number("medium_target"),
            f.text("medium_note"),
            f.document("curves"),
            {k: int(v) for k, v in openings.items()},
            f.texts("curve_openings"),
            f.texts("validation_openings"),
            f.integer("games"),
            f.document("scale"),
            f.records("dial", DialLevel.from_json),
            f.records("dial_checks", DialCheck.from_json),
        )


def _two_ints(values: tuple[int, ...], where: str) -> tuple[int, int]:
    if len(values) != 2:
        raise RecordError(f"{where}: expected [solved, total], got {list(values)}")
    return values[0], values[1]


def _triple(value: object, where: str) -> tuple[float, float, float]:
    """An ``[elo, low, high]`` list of finite numbers."""
    if (
        not isinstance(value, list)
        or len(value) != 3
        or not all(isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v) for v in value)
    ):
        raise RecordError(f"{where}: expected [elo, low, high] (finite numbers), got {value!r}")
    return float(value[0]), float(value[1]), float(value[2])
