"""The level check's settings and records: each match, each level and the whole check.

``DIR/levelcheck.json`` holds one :class:`LevelCheckResult`; every record writes itself with
``to_json`` and reads itself back strictly with ``from_json`` (:mod:`pipeline.jsonrecord`).
JSON has no infinity: an infinite Elo (a match won or lost in every pair) is null.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from engine.profile import LEVEL_NAMES
from pipeline.games.openings import DECK_PARTS
from pipeline.jsonrecord import Fields, json_table
from pipeline.ratings import BOOTSTRAP_UNITS, Rating
from pipeline.ratings.blunders import BlunderStats

RESULT_SCHEMA = "draughts.levelcheck"
RESULT_VERSION = 2
#: Pentanomial counts by pair score, as levelcheck.json labels them.
PENTANOMIAL_LABELS = ("0", "0.5", "1", "1.5", "2")


class LevelCheckError(ValueError):
    """Bad input to a level check (the CLI exits with status 2)."""


_SETTINGS_KEYS = ("profile", "output", "baseline", "pairs", "baseline_pairs", "seed", "deck_part", "ply_cap",
                  "batch_size", "blunder_depth", "blunder_positions", "bootstrap_unit", "in_process",
                  "address", "claimed_from")


@dataclass(frozen=True)
class LevelCheckSettings:
    """Everything the command line sets (recorded in levelcheck.json)."""

    profile: str
    output: str
    baseline: str | None = None
    pairs: int = 20
    baseline_pairs: int = 10
    seed: int = 0
    deck_part: str = "all"
    ply_cap: int = 200
    batch_size: int = 10
    blunder_depth: int = 4
    blunder_positions: int = 2000
    bootstrap_unit: str = "opening"
    in_process: bool = False
    address: str | None = None
    claimed_from: str | None = None

    def check(self) -> None:
        """Raise LevelCheckError on a value no check can run with."""
        for name, low in (("pairs", 1), ("baseline_pairs", 1), ("ply_cap", 1), ("batch_size", 2),
                          ("blunder_depth", 1), ("blunder_positions", 1), ("seed", 0)):
            value = getattr(self, name)
            if value < low:
                raise LevelCheckError(f"--{name.replace('_', '-')} must be >= {low}, got {value}")
        if self.batch_size % 2:
            raise LevelCheckError(f"--batch-size must be even (whole pairs), got {self.batch_size}")
        if self.blunder_depth > 32:
            raise LevelCheckError(f"--blunder-depth must be <= 32, got {self.blunder_depth}")
        if self.bootstrap_unit not in BOOTSTRAP_UNITS:
            raise LevelCheckError(f"--bootstrap-unit must be one of {', '.join(BOOTSTRAP_UNITS)}, "
                                  f"got {self.bootstrap_unit!r}")
        if self.deck_part not in DECK_PARTS:
            raise LevelCheckError(f"--deck-part must be one of {', '.join(DECK_PARTS)}, "
                                  f"got {self.deck_part!r}")

    def to_json(self) -> dict[str, Any]:
        return {"profile": self.profile, "output": self.output, "baseline": self.baseline,
                "pairs": self.pairs, "baseline_pairs": self.baseline_pairs, "seed": self.seed,
                "deck_part": self.deck_part,
                "ply_cap": self.ply_cap, "batch_size": self.batch_size, "blunder_depth": self.blunder_depth,
                "blunder_positions": self.blunder_positions, "bootstrap_unit": self.bootstrap_unit,
                "in_process": self.in_process, "address": self.address, "claimed_from": self.claimed_from}

    @classmethod
    def from_json(cls, data: object, where: str = "settings") -> LevelCheckSettings:
        f = Fields(data, where, _SETTINGS_KEYS)
        return cls(f.text("profile"), f.text("output"), f.opt_text("baseline"), f.integer("pairs"),
                   f.integer("baseline_pairs"), f.integer("seed"), f.text("deck_part"), f.integer("ply_cap"),
                   f.integer("batch_size"), f.integer("blunder_depth"), f.integer("blunder_positions"),
                   f.text("bootstrap_unit"), f.flag("in_process"), f.opt_text("address"),
                   f.opt_text("claimed_from"))


@dataclass(frozen=True)
class DavidsonGap:
    """A's Elo over B (held at 0) on the calibration's Davidson scale, with a bootstrap CI;
    ``rating`` is player A's."""

    rating: Rating
    draw_nu: float
    ci_method: str

    def to_json(self) -> dict[str, Any]:
        return {"rating": self.rating.to_json(), "draw_nu": self.draw_nu, "ci_method": self.ci_method}

    @classmethod
    def from_json(cls, data: object, where: str = "davidson") -> DavidsonGap:
        f = Fields(data, where, ("rating", "draw_nu", "ci_method"))
        return cls(f.record("rating", Rating.from_json), f.number("draw_nu"), f.text("ci_method"))


_MATCH_RATING_KEYS = ("games", "distinct_games", "pairs", "wins", "draws", "losses", "score", "score_ci",
                      "elo", "elo_ci", "ci_method", "los", "pentanomial", "davidson")


@dataclass(frozen=True)
class MatchRating:
    """One match's games from A's side: W/D/L, the pentanomial score and score-based (logistic)
    Elo with its 95 % CI (``ci_method``), and the Davidson-scale gap.

    An infinite Elo or CI end is None; ``score_ci`` (always finite) tells its sign.
    ``distinct_games``: how many games differ (None: the games carry no moves).
    """

    games: int
    distinct_games: int | None
    pairs: int
    wins: int
    draws: int
    losses: int
    score: float
    score_ci: tuple[float, float]
    elo: float | None
    elo_ci: tuple[float | None, float | None]
    ci_method: str
    los: float
    pentanomial: tuple[int, ...]
    davidson: DavidsonGap

    def to_json(self) -> dict[str, Any]:
        return {"games": self.games, "distinct_games": self.distinct_games, "pairs": self.pairs,
                "wins": self.wins, "draws": self.draws, "losses": self.losses, "score": self.score,
                "score_ci": list(self.score_ci), "elo": self.elo, "elo_ci": list(self.elo_ci),
                "ci_method": self.ci_method, "los": self.los,
                "pentanomial": dict(zip(PENTANOMIAL_LABELS, self.pentanomial, strict=True)),
                "davidson": self.davidson.to_json()}

    @classmethod
    def from_json(cls, data: object, where: str = "measured") -> MatchRating:
        f = Fields(data, where, _MATCH_RATING_KEYS)
        counts = Fields(f.data["pentanomial"], f.path("pentanomial"), PENTANOMIAL_LABELS)
        return cls(f.integer("games"), f.opt_integer("distinct_games"), f.integer("pairs"), f.integer("wins"),
                   f.integer("draws"), f.integer("losses"), f.number("score"), f.interval("score_ci"),
                   f.opt_number("elo"), f.open_interval("elo_ci"), f.text("ci_method"), f.number("los"),
                   tuple(counts.integer(k) for k in PENTANOMIAL_LABELS),
                   f.record("davidson", DavidsonGap.from_json))


@dataclass(frozen=True)
class Claim:
    """A level's Elo and CI as a profile's provenance claims them (None: no claim)."""

    elo: float | None
    elo_ci: tuple[float, float] | None

    def to_json(self) -> dict[str, Any]:
        return {"elo": self.elo, "elo_ci": None if self.elo_ci is None else list(self.elo_ci)}

    @classmethod
    def from_json(cls, data: object, where: str = "claim") -> Claim:
        f = Fields(data, where, ("elo", "elo_ci"))
        return cls(f.opt_number("elo"), f.opt_interval("elo_ci"))


@dataclass(frozen=True)
class ClaimedGap:
    """The gap A - B that the claims make, its 95 % interval and how it was made (all None when
    either claim is missing), and the two claims."""

    gap: float | None
    ci: tuple[float, float] | None
    ci_method: str | None
    a: Claim
    b: Claim

    def to_json(self) -> dict[str, Any]:
        return {"gap": self.gap, "ci": None if self.ci is None else list(self.ci),
                "ci_method": self.ci_method, "a": self.a.to_json(), "b": self.b.to_json()}

    @classmethod
    def from_json(cls, data: object, where: str = "claimed") -> ClaimedGap:
        f = Fields(data, where, ("gap", "ci", "ci_method", "a", "b"))
        return cls(f.opt_number("gap"), f.opt_interval("ci"), f.opt_text("ci_method"),
                   f.record("a", Claim.from_json), f.record("b", Claim.from_json))


@dataclass(frozen=True)
class DifferenceTest:
    """Measured - claimed gap with a 95 % interval from both uncertainties; ``agrees``: |z| <= 1.96
    (``z`` None when infinite)."""

    difference: float
    difference_ci: tuple[float, float]
    z: float | None
    agrees: bool

    def to_json(self) -> dict[str, Any]:
        return {"difference": self.difference, "difference_ci": list(self.difference_ci), "z": self.z,
                "agrees": self.agrees}

    @classmethod
    def from_json(cls, data: object, where: str = "difference test") -> DifferenceTest:
        f = Fields(data, where, ("difference", "difference_ci", "z", "agrees"))
        return cls(f.number("difference"), f.interval("difference_ci"), f.opt_number("z"), f.flag("agrees"))


@dataclass(frozen=True)
class MatchResult:
    """One match of the check (A - B): what its games measured, what the claims say, and the
    verdicts. ``reproduced``: the claimed gap inside the measured Davidson CI; ``consistent``:
    the two intervals overlap; both None without a claim, as is ``difference_test`` (also when
    the measured CI is infinite)."""

    match: str
    a: str
    b: str
    measured: MatchRating
    claimed: ClaimedGap
    reproduced: bool | None
    consistent: bool | None
    difference_test: DifferenceTest | None

    @property
    def agrees(self) -> bool | None:
        return None if self.difference_test is None else self.difference_test.agrees

    def to_json(self) -> dict[str, Any]:
        return {"match": self.match, "a": self.a, "b": self.b, "measured": self.measured.to_json(),
                "claimed": self.claimed.to_json(), "reproduced": self.reproduced,
                "consistent": self.consistent,
                "difference_test": None if self.difference_test is None else self.difference_test.to_json()}

    @classmethod
    def from_json(cls, data: object, where: str = "match") -> MatchResult:
        f = Fields(data, where, ("match", "a", "b", "measured", "claimed", "reproduced", "consistent",
                                 "difference_test"))
        return cls(f.text("match"), f.text("a"), f.text("b"), f.record("measured", MatchRating.from_json),
                   f.record("claimed", ClaimedGap.from_json), f.opt_flag("reproduced"),
                   f.opt_flag("consistent"),
                   f.opt_record("difference_test", DifferenceTest.from_json))


@dataclass(frozen=True)
class LevelStats:
    """One level in the check's games: its games, nodes per move, blunder rate and claim."""

    spec: str
    games: int
    nodes_per_move: float
    blunders: BlunderStats
    claimed: Claim

    def to_json(self) -> dict[str, Any]:
        return {"spec": self.spec, "games": self.games, "nodes_per_move": self.nodes_per_move,
                "blunders": self.blunders.to_json(), "claimed": self.claimed.to_json()}

    @classmethod
    def from_json(cls, data: object, where: str = "level") -> LevelStats:
        f = Fields(data, where, ("spec", "games", "nodes_per_move", "blunders", "claimed"))
        return cls(f.text("spec"), f.integer("games"), f.number("nodes_per_move"),
                   f.record("blunders", BlunderStats.from_json), f.record("claimed", Claim.from_json))


_RESULT_KEYS = ("schema", "version", "variant", "profile", "profile_hash", "baseline", "claimed_from",
                "settings", "deck_openings", "adjacent", "baseline_matches", "levels", "baseline_levels",
                "engine_version", "games_total", "games_played_now", "batches_played_now", "executor",
                "cpu_count", "wall_seconds", "files")


@dataclass(frozen=True)
class LevelCheckResult:
    """A whole level check (``DIR/levelcheck.json``): the adjacent and baseline matches, every
    level's figures, the settings, and what this invocation played (``*_now``) and where."""

    variant: str
    profile: str
    profile_hash: str
    baseline: str | None
    claimed_from: str
    settings: LevelCheckSettings
    deck_openings: int
    adjacent: tuple[MatchResult, ...]
    baseline_matches: tuple[MatchResult, ...]
    levels: dict[str, LevelStats]
    baseline_levels: dict[str, LevelStats] | None
    engine_version: str
    games_total: int
    games_played_now: int
    batches_played_now: int
    executor: str
    cpu_count: int | None
    wall_seconds: float
    files: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "schema": RESULT_SCHEMA, "version": RESULT_VERSION, "variant": self.variant,
            "profile": self.profile,
            "profile_hash": self.profile_hash, "baseline": self.baseline, "claimed_from": self.claimed_from,
            "settings": self.settings.to_json(), "deck_openings": self.deck_openings,
            "adjacent": [m.to_json() for m in self.adjacent],
            "baseline_matches": [m.to_json() for m in self.baseline_matches],
            "levels": json_table(self.levels),
            "baseline_levels": None if self.baseline_levels is None else json_table(self.baseline_levels),
            "engine_version": self.engine_version, "games_total": self.games_total,
            "games_played_now": self.games_played_now, "batches_played_now": self.batches_played_now,
            "executor": self.executor, "cpu_count": self.cpu_count, "wall_seconds": self.wall_seconds,
            "files": list(self.files),
        }

    @classmethod
    def from_json(cls, data: object, where: str = "levelcheck.json") -> LevelCheckResult:
        f = Fields(data, where, _RESULT_KEYS)
        f.constant("schema", RESULT_SCHEMA)
        f.constant("version", RESULT_VERSION)
        return cls(
            variant=f.text("variant"), profile=f.text("profile"), profile_hash=f.text("profile_hash"),
            baseline=f.opt_text("baseline"), claimed_from=f.text("claimed_from"),
            settings=f.record("settings", LevelCheckSettings.from_json),
            deck_openings=f.integer("deck_openings"),
            adjacent=f.records("adjacent", MatchResult.from_json),
            baseline_matches=f.records("baseline_matches", MatchResult.from_json),
            levels=f.table("levels", LevelStats.from_json, LEVEL_NAMES),
            baseline_levels=f.opt_table("baseline_levels", LevelStats.from_json, LEVEL_NAMES),
            engine_version=f.text("engine_version"), games_total=f.integer("games_total"),
            games_played_now=f.integer("games_played_now"),
            batches_played_now=f.integer("batches_played_now"),
            executor=f.text("executor"), cpu_count=f.opt_integer("cpu_count"),
            wall_seconds=f.number("wall_seconds"), files=f.texts("files"),
        )
