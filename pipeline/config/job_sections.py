"""Config sections of the main job: ``[job]``, ``[ladder]``, ``[tune]``, ``[calibrate]``, ``[export]``.

Declared like every section (frozen dataclass, one :func:`~pipeline.config.run_config.setting` per key) and
registered on import. List-valued keys are TOML arrays and tables, read into frozen values:

- ``ladder.depths = [1, 2, 3, 4, 6]``, ``ladder.bridges = [0.75, 0.5, 0.25]``;
- ``[tune.weights]`` with ``advance = [0, 12]``: features to tune, each a ``[low, high]`` pair
  inside its declared range (``engine.features``), or one number to fix it;
- ``[[calibrate.levels]]``, one per level (easy, medium, hard, in that order), with ``name``,
  ``target`` and ``knobs = { max_depth = [1, 3], node_budget = 2000 }``: a ``[low, high]`` pair is
  searched, a single value fixed, each inside ``engine.params``' range.

Tables are read in the order of their declaration (features in ``engine.features`` order, knobs in
``engine.params`` order), so the order in the file changes neither the config hash nor the search.
Checks that span sections (steps aligned to batches, the pin on the ladder) live in
:func:`pipeline.job.validate.validate_job`, which every verb calls, so they fail before any game too.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

import pipeline.config.tracking_sections  # noqa: F401 - registers [mlflow] and [optuna]
from engine.features import FEATURES
from engine.params import PARAM_INDEX, PARAMS, tunable_knobs
from pipeline.config.run_config import (
    ConfigError,
    RunConfig,
    Structured,
    ValueProblem,
    at_least,
    between,
    deck_part_problem,
    even_positive,
    input_file,
    known_variant,
    non_empty,
    read_scalar,
    register_section,
    setting,
    toml_type,
)

LEVELS: tuple[str, ...] = ("easy", "medium", "hard")
#: knobs a calibration may set, and those it may search (the others, such as tt_log2 and
#: quiescence, can only be fixed), as ``engine.params`` declares them
CALIBRATION_KNOBS: tuple[str, ...] = tuple(p.name for p in PARAMS)
SEARCHABLE_KNOBS: tuple[str, ...] = tunable_knobs()
#: the range of a level's target Elo (random = 0)
TARGET_RANGE = (-5000.0, 5000.0)


# ---- named ranges: [tune.weights] and a level's knobs -------------------------------------------


@dataclass(frozen=True)
class Range:
    """A searched interval (``low < high``) or a fixed value (``low == high``) of one name."""

    name: str
    low: float
    high: float

    @property
    def fixed(self) -> bool:
        return self.low == self.high


@dataclass(frozen=True)
class _Declared:
    """What a name may take: its kind (int, float, bool), declared range, and whether a
    ``[low, high]`` pair may search it."""

    kind: str
    low: float
    high: float
    searchable: bool


FEATURE_BOUNDS: dict[str, _Declared] = {f.name: _Declared("float", f.low, f.high, True) for f in FEATURES}
KNOB_BOUNDS: dict[str, _Declared] = {
    p.name: _Declared(p.kind, float(p.low), float(p.high), p.name in SEARCHABLE_KNOBS)
    for p in PARAM_INDEX.values() if p.name in CALIBRATION_KNOBS
}
_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")


def _key(name: str) -> str:
    """``name`` as a TOML key in a path: bare when it can be, else quoted."""
    return name if _BARE_KEY.fullmatch(name) else repr(name)


def _number(value: Any, d: _Declared, at: str) -> float:
    """One value of a name of kind ``d.kind`` inside its declared range, as a float."""
    if d.kind == "bool":
        if not isinstance(value, bool):
            raise ValueProblem(f"expected true or false, got {toml_type(value)}", at, value)
        return float(value)
    number = read_scalar(value, int if d.kind == "int" else float, at)
    if not d.low <= number <= d.high:
        raise ValueProblem(f"leaves the declared range [{d.low:g}, {d.high:g}]", at, value)
    return float(number)


def _range(name: str, value: Any, d: _Declared, at: str) -> Range:
    """``[low, high]`` (searched) or one value (fixed) of ``name``."""
    if not isinstance(value, list):
        if isinstance(value, dict):
            raise ValueProblem("expected a [low, high] pair or one value, got table", at, value)
        fixed = _number(value, d, at)
        return Range(name, fixed, fixed)
    if not d.searchable:
        raise ValueProblem(f"{name} can only be fixed (one value), not searched", at, value)
    if len(value) != 2:
        raise ValueProblem(f"a searched range is a [low, high] pair, got {len(value)} values", at, value)
    low, high = (_number(v, d, f"{at}[{i}]") for i, v in enumerate(value))
    if not low < high:
        raise ValueProblem("low must be below high (one value fixes it)", at, value)
    return Range(name, low, high)


def read_ranges(value: Any, declared: Mapping[str, _Declared], what: str, at: str = "") -> tuple[Range, ...]:
    """A TOML table ``NAME = [low, high]`` or ``NAME = value`` into ranges, in declaration order."""
    if not isinstance(value, dict):
        raise ValueProblem(f"expected a table of {what} = [low, high] or value, got {toml_type(value)}",
                           at, value)
    for name in value:
        if name not in declared:
            raise ValueProblem(f"unknown {what}; known: {', '.join(declared)}", f"{at}.{_key(name)}",
                               value[name])
    if not value:
        raise ValueProblem(f"give at least one {what}", at, value)
    return tuple(_range(name, value[name], d, f"{at}.{name}")
                 for name, d in declared.items() if name in value)


def write_ranges(ranges: tuple[Range, ...], declared: Mapping[str, _Declared]) -> dict[str, Any]:
    """The TOML table of ``ranges``: each value in its declared kind (an int knob stays an int)."""

    def plain(v: float, kind: str) -> Any:
        return bool(v) if kind == "bool" else int(v) if kind == "int" else v

    out: dict[str, Any] = {}
    for r in ranges:
        kind = declared[r.name].kind
        out[r.name] = plain(r.low, kind) if r.fixed else [plain(r.low, kind), plain(r.high, kind)]
    return out


def read_weight_ranges(value: Any, at: str = "") -> tuple[Range, ...]:
    """``[tune.weights]``: features to tune (a ``[low, high]`` pair) or fix (one number)."""
    return read_ranges(value, FEATURE_BOUNDS, "feature", at)


def read_knob_ranges(value: Any, at: str = "") -> tuple[Range, ...]:
    """A level's ``knobs``: searched (a ``[low, high]`` pair) or fixed (one value)."""
    return read_ranges(value, KNOB_BOUNDS, "knob", at)


WEIGHTS = Structured(
    kind="table: feature = [low, high] or value",
    read=read_weight_ranges,
    write=lambda ranges: write_ranges(ranges, FEATURE_BOUNDS),
)


# ---- [[calibrate.levels]] -------------------------------------------------------------------------


@dataclass(frozen=True)
class LevelSpec:
    """One ``[[calibrate.levels]]`` entry: a level, its target Elo on the ladder and its knobs."""

    name: str
    target: float
    knobs: tuple[Range, ...]


LEVEL_KEYS = ("name", "target", "knobs")


def _level(entry: Any, i: int, before: list[LevelSpec]) -> LevelSpec:
    """Entry ``i`` of ``[[calibrate.levels]]``, checked against the levels ``before`` it."""
    at = f"[{i}]"
    if not isinstance(entry, dict):
        raise ValueProblem(f"expected a table with {', '.join(LEVEL_KEYS)}, got {toml_type(entry)}",
                           at, entry)
    for key in entry:
        if key not in LEVEL_KEYS:
            raise ValueProblem(f"unknown key; a level has {', '.join(LEVEL_KEYS)}", f"{at}.{_key(key)}",
                               entry[key])
    if "name" not in entry:
        raise ValueProblem(f"missing required key name (one of {', '.join(LEVELS)})", at)
    name = entry["name"]
    if name not in LEVELS:
        raise ValueProblem(f"must be one of {', '.join(LEVELS)}", f"{at}.name", name)
    if any(level.name == name for level in before):
        raise ValueProblem(f"level {name!r} is given twice", f"{at}.name", name)
    if name != LEVELS[i]:
        raise ValueProblem(f"the levels are {', '.join(LEVELS)} in that order: entry {i} must be "
                           f"{LEVELS[i]!r}", f"{at}.name", name)
    for key, what in (("target", f"the target Elo of {name} on the ladder"),
                      ("knobs", f"the knobs of {name}")):
        if key not in entry:
            raise ValueProblem(f"missing required key {key} ({what})", at)
    target = read_scalar(entry["target"], float, f"{at}.target")
    low, high = TARGET_RANGE
    if not low <= target <= high:
        raise ValueProblem(f"must be in [{low:g}, {high:g}]", f"{at}.target", entry["target"])
    if before and target <= before[-1].target:
        raise ValueProblem(f"targets must increase easy < medium < hard ({before[-1].name} is "
                           f"{before[-1].target:g})", f"{at}.target", entry["target"])
    knobs = read_knob_ranges(entry["knobs"], f"{at}.knobs")
    return LevelSpec(name, target, knobs)


def read_levels(value: Any) -> tuple[LevelSpec, ...]:
    """``[[calibrate.levels]]``: easy, medium and hard, in that order, targets increasing."""
    if not isinstance(value, list):
        raise ValueProblem(f"expected an array of tables ([[calibrate.levels]]), got {toml_type(value)}",
                           "", value)
    levels: list[LevelSpec] = []
    for i, entry in enumerate(value):
        levels.append(_level(entry, i, levels))
    if len(levels) < len(LEVELS):
        raise ValueProblem(f"missing level {LEVELS[len(levels)]!r}: give {', '.join(LEVELS)}, in that order")
    return tuple(levels)


def write_levels(levels: tuple[LevelSpec, ...]) -> list[dict[str, Any]]:
    return [{"name": level.name, "target": level.target, "knobs": write_ranges(level.knobs, KNOB_BOUNDS)}
            for level in levels]


LEVELS_VALUE = Structured(
    kind="array of tables: name, target, knobs",
    read=read_levels,
    write=write_levels,
)


# ---- [ladder] arrays --------------------------------------------------------------------------------


def _depths_problem(depths: tuple[int, ...]) -> str | None:
    if not depths:
        return "give at least one depth"
    if list(depths) != sorted(set(depths)) or depths[0] < 1 or depths[-1] > 64:
        return "depths must be strictly increasing within 1..64"
    return None


def _bridges_problem(probs: tuple[float, ...]) -> str | None:
    if list(probs) != sorted(set(probs), reverse=True) or any(not 0.0 < p < 1.0 for p in probs):
        return "bridge random-move probabilities must be strictly decreasing within (0, 1)"
    return None


def _chain_level(value: str) -> str | None:
    return None if value in ("", *LEVELS) else f"must be '' or one of {', '.join(LEVELS)}"


# ---- sections ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class JobSection:
    """[job]: what every stage of the main job shares."""

    variant: str = setting(doc="variant tuned and calibrated", check=known_variant)
    ply_cap: int = setting(200, doc="adjudicated draw after this many plies (every stage)",
                           check=between(10, 100_000))
    batch_size: int = setting(10, doc="games per Parquet file (even); Ray tasks are sized by work",
                              check=even_positive)
    seed_profile: str | None = setting(
        None, doc="profile file whose hard-level weights seed the tuning (default: engine defaults; a "
                  "relative path is against the config's folder)",
        check=non_empty, resolve=input_file)
    max_in_flight: int = setting(0, doc="tasks submitted at once (0: twice the cluster's CPUs)",
                                 check=at_least(0), hashed=False)
    deck_part: str = setting("all", doc="openings every stage uses: 'all', or the 'even' / 'odd' positions "
                                        "of the deck (keep the other half for an independent check)",
                             check=deck_part_problem)


@dataclass(frozen=True)
class LadderSection:
    """[ladder]: the reference anchors every level is rated against."""

    depths: tuple[int, ...] = setting(
        (1, 2, 3, 4, 6), doc="depths of the noiseless fixed-depth anchors, strictly increasing within 1..64",
        check=_depths_problem)
    bridges: tuple[float, ...] = setting(
        (0.75, 0.5, 0.25, 0.1),
        doc="random-move probabilities of depth-1 anchors bridging random and d1, strictly decreasing "
            "within (0, 1) ([] none)",
        check=_bridges_problem)
    pairs: int = setting(10, doc="game pairs per ladder pairing", check=between(1, 100_000))
    reach: int = setting(2, doc="pair each anchor with the next REACH stronger ones (2: adjacent, skip-one)",
                         check=between(1, 10))
    node_budget: int = setting(200_000, doc="node budget per move of the anchors (bounded)",
                               check=between(100, 20_000_000))
    tt_log2: int = setting(16, doc="transposition table size of the anchors (2^n entries)",
                           check=between(10, 24))
    path: str | None = setting(
        None, doc="stored ladder.json to reuse (rated and written there when missing; a relative path is "
                  "against the config's folder)", check=non_empty, hashed=False, resolve=input_file)


@dataclass(frozen=True)
class TuneSection:
    """[tune]: weight tuning against the seed weights (trial count: [optuna].n_trials)."""

    weights: tuple[Range, ...] = setting(
        read_weight_ranges({f: [FEATURE_BOUNDS[f].low, FEATURE_BOUNDS[f].high] for f in (
            "advance", "back_rank", "center_king", "trade_when_ahead", "king_approach_when_ahead")}),
        doc="[tune.weights]: feature = [low, high] is tuned within that range (inside the feature's "
            "declared range), feature = value is fixed; the other weights are the seed weights",
        structured=WEIGHTS)
    pairs: int = setting(40, doc="game pairs per trial at most (fewer when pruned)",
                         check=between(1, 100_000))
    step_pairs: int = setting(10, doc="pairs per step; pruning is checked after each step",
                              check=between(1, 100_000))
    max_depth: int = setting(3, doc="search depth of the tuning games", check=between(1, 64))
    node_budget: int = setting(20_000, doc="node budget per move of the tuning games",
                               check=between(100, 20_000_000))
    quiescence: bool = setting(True, doc="capture quiescence in the tuning games")
    tt_log2: int = setting(16, doc="transposition table size in the tuning games", check=between(10, 24))
    sprt_elo0: float = setting(0.0, doc="SPRT H0: the best candidate is this many Elo stronger",
                               check=between(-500, 500))
    sprt_elo1: float = setting(20.0, doc="SPRT H1 (must exceed sprt_elo0)", check=between(-500, 500))
    sprt_alpha: float = setting(0.05, doc="SPRT false-positive rate", check=between(0.001, 0.5))
    sprt_beta: float = setting(0.05, doc="SPRT false-negative rate", check=between(0.001, 0.5))
    sprt_min_pairs: int = setting(30, doc="no SPRT decision before this many pairs", check=at_least(1))
    sprt_step_pairs: int = setting(20, doc="pairs per SPRT step", check=between(1, 100_000))
    sprt_max_pairs: int = setting(200, doc="SPRT stops here undecided ('inconclusive': seed weights kept)",
                                  check=between(1, 1_000_000))
    texel: bool = setting(False, doc="first fit the weights to the ladder games' results (Texel) and "
                                     "enqueue that point as the study's first trial")
    texel_max_positions: int = setting(100_000, doc="quiet positions the Texel fit uses at most",
                                       check=between(100, 10_000_000))


@dataclass(frozen=True)
class CalibrateSection:
    """[calibrate]: per level, knobs that hit a target Elo on the ladder at least compute."""

    levels: tuple[LevelSpec, ...] = setting(
        doc="one [[calibrate.levels]] table per level, easy, medium, hard in that order: name; target (Elo "
            "on the ladder, random = 0; increasing); knobs (knob = [low, high] searched, knob = value fixed; "
            f"any of {', '.join(CALIBRATION_KNOBS)}; "
            f"{' and '.join(k for k in CALIBRATION_KNOBS if k not in SEARCHABLE_KNOBS)} only fixed)",
        structured=LEVELS_VALUE)
    trials: int = setting(10, doc="trials per level", check=between(1, 10_000))
    pairs: int = setting(10, doc="game pairs per trial against EACH opponent: the pin and the two anchors "
                                 "bracketing the target",
                         check=between(1, 100_000))
    compute_penalty: float = setting(1.0, doc="objective cost in Elo per 1000 nodes per move",
                                     check=between(0.0, 1e6))
    tolerance: float = setting(
        100.0, doc="a trial hits its target when the target is inside its CI AND |Elo - target| <= this",
        check=between(0.0, 1e6))
    pin: str = setting(
        "random",
        doc="ladder anchor held at its ladder Elo when levels are rated: targets and CIs are relative "
            "to it (pick the anchor nearest the levels; 'random' carries the whole ladder's uncertainty)",
        check=non_empty)
    confirm_step_pairs: int = setting(
        0, doc="confirmation: after the pick, each level plays this many FRESH pairs per round against the "
               "pin and its two bracketing anchors until its CI is narrow enough (0: no confirmation)",
        check=between(0, 100_000))
    confirm_max_pairs: int = setting(400, doc="confirmation: pairs per opponent at most",
                                     check=between(1, 1_000_000))
    confirm_half_width: float = setting(50.0, doc="confirmation stops once the 95 % CI half-width is at most "
                                                  "this (Elo)", check=between(1.0, 1e6))
    confirm_candidates: int = setting(
        3, doc="confirmation: ranked candidates tried per level until one's confirmed CI contains the target",
        check=between(1, 100))
    confirm_bootstrap: int = setting(
        400, doc="confirmation CIs: bootstrap resamples, each of whole ballot openings (every game of an "
                 "opening together: right even when two noiseless levels replay each opening's games)",
        check=between(50, 100_000))
    confirm_joint_pairs: int = setting(
        0, doc="after confirmation: fresh pairs of Easy-Medium and Medium-Hard, then ONE fit rates the three "
               "levels together (0: each level rated against the ladder alone)", check=between(0, 100_000))
    chain_from: str = setting(
        "", doc="'' (each level rated on the ladder) or a level: only that level is rated on the ladder; "
                "the others are calibrated one after another outward from it, by head-to-head games against "
                "their confirmed neighbour held at its confirmed Elo, so the claimed gaps are what adjacent "
                "levels score against each other (needs confirm_step_pairs; excludes confirm_joint_pairs)",
        check=_chain_level)
    confirm_validate: bool = setting(
        False, doc="after confirmation, re-measure each level's chosen candidate on FRESH games (same "
                   "opponents and stopping rule) and report those numbers: a candidate chosen because its "
                   "confirmation landed on the target carries that luck in its estimate; confirmation "
                   "then also asks |Elo - target| <= tolerance of the candidate it chooses, and stops a "
                   "candidate as a miss once |Elo - target| exceeds the tolerance + 2 CI half-widths")
    validate_half_width: float = setting(
        0.0, doc="with confirm_validate: the validation stops once its 95 % CI half-width is at most this "
                 "(Elo; 0: confirm_half_width). A confirm_half_width below it makes the CHOICE precise (the "
                 "chosen candidate's true Elo lies closer to the target) without narrowing the reported CI",
        check=lambda v: None if v == 0 or 1.0 <= v <= 1e6 else "must be 0 or in [1, 1000000]")

    def level(self, name: str) -> LevelSpec:
        """The ``[[calibrate.levels]]`` entry of level ``name``."""
        return self.levels[LEVELS.index(name)]


@dataclass(frozen=True)
class ExportSection:
    """[export]: where the calibrated profile is written. Never affects results."""

    profiles_dir: str | None = setting(
        None, doc="folder of <variant>.json (default: <run folder>/profiles; ship with "
                  "'python -m pipeline export RUN', which writes to engine/profiles)", check=non_empty,
        hashed=False)
    description: str = setting("", doc="free text stored in the profile's provenance", hashed=False)


register_section("job", JobSection)
register_section("ladder", LadderSection)
register_section("tune", TuneSection)
register_section("calibrate", CalibrateSection)
register_section("export", ExportSection)


_S = TypeVar("_S")

# ---- typed access and cross-key checks --------------------------------------------------------


def job(config: RunConfig) -> JobSection:
    return _typed(config, "job", JobSection)


def ladder_section(config: RunConfig) -> LadderSection:
    section = config.resolved("ladder")
    return section if isinstance(section, LadderSection) else LadderSection()


def tune_section(config: RunConfig) -> TuneSection | None:
    section = config.resolved("tune")
    return section if isinstance(section, TuneSection) else None


def calibrate_section(config: RunConfig) -> CalibrateSection:
    return _typed(config, "calibrate", CalibrateSection)


def export_section(config: RunConfig) -> ExportSection:
    section = config.resolved("export")
    return section if isinstance(section, ExportSection) else ExportSection()


def _typed(config: RunConfig, name: str, cls: type[_S]) -> _S:
    section = config.section(name)
    if not isinstance(section, cls):
        raise ConfigError(f"{config.source}: section [{name}] is not a {cls.__name__}")
    return section
