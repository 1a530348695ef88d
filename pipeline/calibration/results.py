"""The calibrate stage's records: trials, proposals, confirmations, levels and the stage result.

Each is a frozen dataclass written as JSON by ``to_json`` and read back strictly by ``from_json``
(:mod:`pipeline.jsonrecord`): a trial's record travels through its Optuna study (user attr
``record``), everything else through ``calibrate/result.json``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from engine.profile import Knob
from pipeline.config.job_sections import LEVELS
from pipeline.games.stage import read_result
from pipeline.jsonrecord import Fields, json_table, list_of
from pipeline.ratings import Rating

RESULT_FILE = "calibrate/result.json"


def player_name(level: str, slot: int) -> str:
    """The player name of a level's candidate in the games (its trial slot)."""
    return f"{level}-t{slot:04d}"


@dataclass(frozen=True)
class WinScores:
    """Count and quantiles of the product scores (``winner_score``) of some wins."""

    wins: int
    mean: float | None
    p10: float | None
    median: float | None
    p90: float | None
    max: float | None

    @classmethod
    def of(cls, scores: Sequence[int]) -> WinScores:
        if not scores:
            return cls(0, None, None, None, None, None)
        arr = np.asarray(scores, dtype=np.float64)
        return cls(len(scores), float(arr.mean()), float(np.quantile(arr, 0.1)), float(np.median(arr)),
                   float(np.quantile(arr, 0.9)), float(arr.max()))

    def to_json(self) -> dict[str, Any]:
        return {"wins": self.wins, "mean": self.mean, "p10": self.p10, "median": self.median, "p90": self.p90,
                "max": self.max}

    @classmethod
    def from_json(cls, data: object, where: str = "opponent wins") -> WinScores:
        f = Fields(data, where, ("wins", "mean", "p10", "median", "p90", "max"))
        return cls(f.integer("wins"), f.opt_number("mean"), f.opt_number("p10"), f.opt_number("median"),
                   f.opt_number("p90"), f.opt_number("max"))


_TRIAL_KEYS = ("number", "slot", "stage", "knobs", "rating", "nodes_per_move", "target", "within_ci", "hit",
               "value", "anchors", "opponent_wins", "games_per_second")


@dataclass(frozen=True)
class LevelTrial:
    """One finished trial of a level study: the knobs it played, its rating and its objective.

    ``within_ci``: the target lies inside the rating's CI; ``hit``: that, and the Elo within the
    configured tolerance of the target. ``anchors``: the opponents it played.
    """

    number: int
    slot: int
    stage: str
    knobs: dict[str, Knob]
    rating: Rating
    nodes_per_move: float
    target: float
    within_ci: bool
    hit: bool
    value: float
    anchors: tuple[str, ...]
    opponent_wins: WinScores
    games_per_second: float

    @property
    def games(self) -> int:
        return self.rating.games

    def to_json(self) -> dict[str, Any]:
        return {"number": self.number, "slot": self.slot, "stage": self.stage, "knobs": dict(self.knobs),
                "rating": self.rating.to_json(), "nodes_per_move": self.nodes_per_move, "target": self.target,
                "within_ci": self.within_ci, "hit": self.hit, "value": self.value,
                "anchors": list(self.anchors), "opponent_wins": self.opponent_wins.to_json(),
                "games_per_second": self.games_per_second}

    @classmethod
    def from_json(cls, data: object, where: str = "trial") -> LevelTrial:
        f = Fields(data, where, _TRIAL_KEYS)
        return cls(f.integer("number"), f.integer("slot"), f.text("stage"), f.scalars("knobs"),
                   f.record("rating", Rating.from_json), f.number("nodes_per_move"), f.number("target"),
                   f.flag("within_ci"), f.flag("hit"), f.number("value"), f.texts("anchors"),
                   f.record("opponent_wins", WinScores.from_json), f.number("games_per_second"))


@dataclass(frozen=True)
class Proposal:
    """Knobs proposed after a missed confirmation: a candidate without trial games of its own.

    ``stage`` is its first confirmation round (where its games are).
    """

    slot: int
    stage: str
    knobs: dict[str, Knob]
    target: float

    def to_json(self) -> dict[str, Any]:
        return {"proposed": True, "slot": self.slot, "stage": self.stage, "knobs": dict(self.knobs),
                "target": self.target}

    @classmethod
    def from_json(cls, data: object, where: str = "proposal") -> Proposal:
        f = Fields(data, where, ("proposed", "slot", "stage", "knobs", "target"))
        f.constant("proposed", True)
        return cls(f.integer("slot"), f.text("stage"), f.scalars("knobs"), f.number("target"))


#: What a level's confirmation confirms: a study's trial or a proposal.
Candidate = LevelTrial | Proposal


def candidate_from_json(data: object, where: str = "candidate") -> Candidate:
    """A trial's or a proposal's JSON (a proposal says ``"proposed": true``)."""
    if isinstance(data, dict) and "proposed" in data:
        return Proposal.from_json(data, where)
    return LevelTrial.from_json(data, where)


@dataclass(frozen=True)
class NeighbourRef:
    """The confirmed level a chained level was rated against, held at its Elo."""

    level: str
    name: str  # its player name in the games
    elo: float

    def to_json(self) -> dict[str, Any]:
        return {"level": self.level, "name": self.name, "elo": self.elo}

    @classmethod
    def from_json(cls, data: object, where: str = "neighbour") -> NeighbourRef:
        f = Fields(data, where, ("level", "name", "elo"))
        return cls(f.text("level"), f.text("name"), f.number("elo"))


_CONFIRMATION_KEYS = ("trial", "knobs", "rating", "games", "within_ci", "narrow", "hit", "nodes_per_move",
                      "rounds", "pairs_per_opponent", "opponents", "pin", "futile", "saturated",
                      "distinct_games", "stages", "ci_method", "joint_stages", "alone", "selection",
                      "neighbour", "chain_half_width")


@dataclass(frozen=True)
class Confirmation:
    """A candidate measured on fresh games, in rounds, until its CI was narrow enough (or not).

    ``trial``: the confirmed trial's number (None: a proposal). ``games``: every game of the
    confirmation (after a joint fit, plus every joint game). ``within_ci``: the target inside the
    CI of a rating that is not prior-driven; ``narrow``: the half-width bound met; ``hit``: both
    (and, when a validation follows, the Elo within the tolerance). ``pin``: the player held at its
    Elo (the ladder pin, or a chain's neighbour). ``futile`` / ``saturated``: stopped early as
    hopeless / because its games only replayed earlier ones.

    Set by later steps: ``joint_stages`` and ``alone`` (this confirmation before the joint fit
    re-rated it), ``selection`` (the confirmation that chose a validated candidate; this one is
    the validation), ``neighbour`` and ``chain_half_width`` (a chained calibration: the level it
    was rated against, and its half-width relative to the pin).
    """

    trial: int | None
    knobs: dict[str, Knob]
    rating: Rating
    games: int
    within_ci: bool
    narrow: bool
    hit: bool
    nodes_per_move: float
    rounds: int
    pairs_per_opponent: int
    opponents: tuple[str, ...]
    pin: str
    futile: bool
    saturated: bool
    distinct_games: int | None
    stages: tuple[str, ...]
    ci_method: str
    joint_stages: tuple[str, ...] = ()
    alone: Confirmation | None = None
    selection: Confirmation | None = None
    neighbour: NeighbourRef | None = None
    chain_half_width: float | None = None

    @property
    def validated(self) -> bool:
        return self.selection is not None

    def to_json(self) -> dict[str, Any]:
        return {
            "trial": self.trial, "knobs": dict(self.knobs), "rating": self.rating.to_json(),
            "games": self.games, "within_ci": self.within_ci, "narrow": self.narrow, "hit": self.hit,
            "nodes_per_move": self.nodes_per_move, "rounds": self.rounds,
            "pairs_per_opponent": self.pairs_per_opponent, "opponents": list(self.opponents), "pin": self.pin,
            "futile": self.futile, "saturated": self.saturated, "distinct_games": self.distinct_games,
            "stages": list(self.stages), "ci_method": self.ci_method, "joint_stages": list(self.joint_stages),
            "alone": None if self.alone is None else self.alone.to_json(),
            "selection": None if self.selection is None else self.selection.to_json(),
            "neighbour": None if self.neighbour is None else self.neighbour.to_json(),
            "chain_half_width": self.chain_half_width,
        }

    @classmethod
    def from_json(cls, data: object, where: str = "confirmation") -> Confirmation:
        f = Fields(data, where, _CONFIRMATION_KEYS)
        return cls(
            trial=f.opt_integer("trial"), knobs=f.scalars("knobs"),
            rating=f.record("rating", Rating.from_json), games=f.integer("games"),
            within_ci=f.flag("within_ci"), narrow=f.flag("narrow"), hit=f.flag("hit"),
            nodes_per_move=f.number("nodes_per_move"), rounds=f.integer("rounds"),
            pairs_per_opponent=f.integer("pairs_per_opponent"), opponents=f.texts("opponents"),
            pin=f.text("pin"), futile=f.flag("futile"), saturated=f.flag("saturated"),
            distinct_games=f.opt_integer("distinct_games"), stages=f.texts("stages"),
            ci_method=f.text("ci_method"), joint_stages=f.texts("joint_stages"),
            alone=f.opt_record("alone", Confirmation.from_json),
            selection=f.opt_record("selection", Confirmation.from_json),
            neighbour=f.opt_record("neighbour", NeighbourRef.from_json),
            chain_half_width=f.opt_number("chain_half_width"),
        )


_UNMEASURED = "a level whose candidate is a proposal needs its confirmation (a proposal has no rating)"


@dataclass(frozen=True)
class LevelResult:
    """A calibrated level: the candidate chosen, its confirmation (when the run confirms), every
    confirmation made for the level, and its profile.

    The level's reported numbers (:attr:`rating`, :attr:`hit`, ...) are the confirmation's, else
    the trial's. ``profile`` is the level as the engine's profile file holds it (the engine's
    strict loader validates it on export); ``description`` goes into the profile's provenance.
    """

    candidate: Candidate
    confirmation: Confirmation | None
    candidates: tuple[Confirmation, ...]
    profile: dict[str, Any]
    description: str

    def __post_init__(self) -> None:
        if self.confirmation is None and not isinstance(self.candidate, LevelTrial):
            raise ValueError(_UNMEASURED)

    @property
    def measured(self) -> LevelTrial | Confirmation:
        """Where the reported numbers come from: the confirmation, else the trial."""
        if self.confirmation is not None:
            return self.confirmation
        if isinstance(self.candidate, LevelTrial):
            return self.candidate
        raise ValueError(_UNMEASURED)

    @property
    def rating(self) -> Rating:
        return self.measured.rating

    @property
    def target(self) -> float:
        return self.candidate.target

    @property
    def trial(self) -> LevelTrial | None:
        """The chosen trial (None: a proposal was chosen)."""
        return self.candidate if isinstance(self.candidate, LevelTrial) else None

    @property
    def opponents(self) -> tuple[str, ...]:
        m = self.measured
        return m.opponents if isinstance(m, Confirmation) else m.anchors

    def to_json(self) -> dict[str, Any]:
        return {"candidate": self.candidate.to_json(),
                "confirm": None if self.confirmation is None else self.confirmation.to_json(),
                "candidates": [c.to_json() for c in self.candidates], "profile": self.profile,
                "description": self.description}

    @classmethod
    def from_json(cls, data: object, where: str = "level") -> LevelResult:
        f = Fields(data, where, ("candidate", "confirm", "candidates", "profile", "description"))
        return cls(f.record("candidate", candidate_from_json),
                   f.opt_record("confirm", Confirmation.from_json),
                   f.records("candidates", Confirmation.from_json), f.document("profile"),
                   f.text("description"))


@dataclass(frozen=True)
class CalibrationResult:
    """The calibrate stage's result (``calibrate/result.json``): one :class:`LevelResult` per level,
    every level study's finished trials, and what they were measured against.

    ``pin`` is held at ``pin_elo`` (its ladder Elo) in every fit; ``chain_from``: the level a
    chained calibration rated on the ladder (None: every level on the ladder). ``ordered``: the
    reported levels are strictly ordered easy < medium < hard; ``notes`` say what missed.
    """

    variant: str
    ladder_hash: str
    weights: dict[str, float]
    pin: str
    pin_elo: float
    chain_from: str | None
    ordered: bool
    notes: tuple[str, ...]
    levels: dict[str, LevelResult]
    trials: dict[str, tuple[LevelTrial, ...]]

    def to_json(self) -> dict[str, Any]:
        return {"variant": self.variant, "ladder_hash": self.ladder_hash, "weights": dict(self.weights),
                "pin": {"anchor": self.pin, "elo": self.pin_elo}, "chain_from": self.chain_from,
                "ordered": self.ordered, "notes": list(self.notes), "levels": json_table(self.levels),
                "trials": {level: [t.to_json() for t in trials] for level, trials in self.trials.items()}}

    @classmethod
    def from_json(cls, data: object, where: str = "calibration result") -> CalibrationResult:
        f = Fields(data, where, ("variant", "ladder_hash", "weights", "pin", "chain_from", "ordered", "notes",
                                 "levels", "trials"))
        pin = Fields(f.data["pin"], f.path("pin"), ("anchor", "elo"))
        return cls(f.text("variant"), f.text("ladder_hash"), f.numbers("weights"), pin.text("anchor"),
                   pin.number("elo"), f.opt_text("chain_from"), f.flag("ordered"), f.texts("notes"),
                   f.table("levels", LevelResult.from_json, LEVELS),
                   f.table("trials", list_of(LevelTrial.from_json), LEVELS))


def read_calibration(path: Path) -> CalibrationResult | None:
    """The calibrate stage's result file, or None when the stage has not finished."""
    data = read_result(path)
    return None if data is None else CalibrationResult.from_json(data, str(path))

