"""Config sections of the main job: ``[job]``, ``[ladder]``, ``[tune]``, ``[calibrate]``, ``[export]``.

Declared like every section (frozen dataclass, one :func:`~pipeline.config.run_config.setting` per key) and
registered on import. The config layer reads scalars only, so list-valued keys are short
strings with their own checked syntax (a bad one is a ConfigError naming key and value):

- ``ladder.depths = "1,2,3,4,6"``, ``ladder.bridges = "0.75,0.5,0.25"``;
- ``tune.weights = "king=120:260, advance, back_rank=0:20"``: features to tune, each within
  its declared range (``engine.features``) or the narrower ``low:high`` given;
- ``calibrate.<level>_knobs = "max_depth=1:3, random_move_prob=0:0.5, node_budget=2000"``:
  knobs searched within ``low:high`` (inside ``engine.params``' range) or fixed to one value.

Checks that span sections (steps aligned to batches, targets in order) live in
:func:`pipeline.job.validate.validate_job`,
which every verb calls, so they fail before any game too.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import pipeline.config.tracking_sections  # noqa: F401 - registers [mlflow] and [optuna]
from engine.features import FEATURES
from engine.params import PARAM_INDEX
from pipeline.config.run_config import (
    ConfigError,
    RunConfig,
    at_least,
    between,
    deck_part_problem,
    even_positive,
    known_variant,
    non_empty,
    one_of,
    register_section,
    setting,
)

LEVELS: tuple[str, ...] = ("easy", "medium", "hard")
#: knobs a calibration may search (tt_log2 is memory, not strength; it can only be fixed)
CALIBRATION_KNOBS: tuple[str, ...] = (
    "max_depth", "node_budget", "quiescence", "tt_log2", "noise_sigma", "random_move_prob", "top_k",
    "temperature",
)
SEARCHABLE_KNOBS: tuple[str, ...] = (
    "max_depth", "node_budget", "noise_sigma", "random_move_prob", "top_k", "temperature",
)


# ---- list syntax ------------------------------------------------------------------------------


# Plain ASCII decimal numbers only: Python's int()/float() would also take '1_0',
# non-ASCII digits, control characters and a leading '+'.
_INT_RE = re.compile(r"-?[0-9]{1,12}")
_FLOAT_RE = re.compile(r"-?(?:[0-9]{1,15}(?:\.[0-9]{0,15})?|\.[0-9]{1,15})(?:[eE]-?[0-9]{1,3})?")


def _items(text: str) -> list[str]:
    """Comma-separated items, stripped of spaces; an empty item (``'1,,2'``) is an error."""
    if not text.strip():
        return []
    parts = [part.strip(" ") for part in text.split(",")]
    if any(not part for part in parts):
        raise ValueError(f"empty item in {text!r}")
    return parts


def parse_int_list(text: str) -> tuple[int, ...]:
    """``"1,2,3"`` -> (1, 2, 3); ValueError on anything else."""
    try:
        parts = _items(text)
    except ValueError:
        parts = ["?"]
    if not all(_INT_RE.fullmatch(part) for part in parts):
        raise ValueError(f"expected comma-separated integers like '1,2,4', got {text!r}")
    return tuple(int(part) for part in parts)


def parse_float_list(text: str) -> tuple[float, ...]:
    """``"0.5, 0.25"`` -> (0.5, 0.25); ValueError on anything else."""
    try:
        parts = _items(text)
    except ValueError:
        parts = ["?"]
    if not all(_FLOAT_RE.fullmatch(part) for part in parts):
        raise ValueError(f"expected comma-separated numbers like '0.5,0.25', got {text!r}")
    values = tuple(float(part) for part in parts)
    if not all(math.isfinite(v) for v in values):
        raise ValueError(f"expected finite numbers, got {text!r}")
    return values


@dataclass(frozen=True)
class Range:
    """A searched interval (``low < high``) or a fixed value (``low == high``) of one name."""

    name: str
    low: float
    high: float

    @property
    def fixed(self) -> bool:
        return self.low == self.high


def _number(text: str, kind: str, where: str) -> float:
    pattern = _INT_RE if kind == "int" else _FLOAT_RE
    if not pattern.fullmatch(text):
        what = "an integer" if kind == "int" else "a number"
        raise ValueError(f"{where}: {text!r} is not {what}")
    value = int(text) if kind == "int" else float(text)
    if not math.isfinite(value):
        raise ValueError(f"{where}: {text!r} is not finite")
    return value


def _parse_ranges(text: str, declared: Callable[[str], tuple[str, float, float] | None],
                  what: str, allow_bare: bool) -> tuple[Range, ...]:
    """``name[=low:high|=value]`` items; ``declared(name)`` gives (kind, low, high) or None."""
    out: list[Range] = []
    for item in _items(text):
        name, sep, spec = (part.strip() for part in item.partition("="))
        found = declared(name)
        if found is None:
            raise ValueError(f"unknown {what} {name!r} in {item!r}")
        kind, d_low, d_high = found
        if any(r.name == name for r in out):
            raise ValueError(f"{what} {name!r} is given twice")
        if not sep:
            if not allow_bare:
                raise ValueError(f"{name!r} needs a range or a value (name=low:high or name=value)")
            out.append(Range(name, d_low, d_high))
            continue
        if kind == "bool":
            if spec not in ("true", "false"):
                raise ValueError(f"{name!r} is true or false, got {spec!r}")
            flag = 1.0 if spec == "true" else 0.0
            out.append(Range(name, flag, flag))
            continue
        low_text, colon, high_text = spec.partition(":")
        low = _number(low_text.strip(), kind, name)
        high = _number(high_text.strip(), kind, name) if colon else low
        if low > high:
            raise ValueError(f"{name!r}: low {low_text.strip()} is above high {high_text.strip()}")
        if low < d_low or high > d_high:
            raise ValueError(f"{name!r}: {spec!r} leaves the declared range [{d_low:g}, {d_high:g}]")
        out.append(Range(name, low, high))
    if not out:
        raise ValueError(f"no {what} given")
    return tuple(out)


def _feature(name: str) -> tuple[str, float, float] | None:

    for f in FEATURES:
        if f.name == name:
            return ("float", f.low, f.high)
    return None


def _knob(name: str) -> tuple[str, float, float] | None:

    if name not in CALIBRATION_KNOBS:
        return None
    p = PARAM_INDEX[name]
    return (p.kind, float(p.low), float(p.high))


def parse_weight_ranges(text: str) -> tuple[Range, ...]:
    """Features to tune with their ranges (declared range when only the name is given)."""
    ranges = _parse_ranges(text, _feature, "feature", allow_bare=True)
    return ranges


def parse_knob_ranges(text: str) -> tuple[Range, ...]:
    """Knobs of one level: searched ranges and fixed values."""
    ranges = _parse_ranges(text, _knob, "knob", allow_bare=False)
    for r in ranges:
        if r.name not in SEARCHABLE_KNOBS and not r.fixed:
            raise ValueError(f"knob {r.name!r} can only be fixed (name=value), not searched")
    return ranges


def _checker(parse: Callable[[str], Any]) -> Callable[[str], str | None]:
    def check(value: str) -> str | None:
        try:
            parse(value)
        except ValueError as err:
            return str(err)
        return None

    return check


def _depths(text: str) -> tuple[int, ...]:
    depths = parse_int_list(text)
    if not depths:
        raise ValueError("give at least one depth")
    if list(depths) != sorted(set(depths)) or depths[0] < 1 or depths[-1] > 64:
        raise ValueError(f"depths must be strictly increasing within 1..64, got {text!r}")
    return depths


def _bridges(text: str) -> tuple[float, ...]:
    probs = parse_float_list(text)
    if list(probs) != sorted(set(probs), reverse=True) or any(not 0.0 < p < 1.0 for p in probs):
        raise ValueError(f"bridge random-move probabilities must fall strictly within (0, 1), got {text!r}")
    return probs


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
        None, doc="profile file whose hard-level weights seed the tuning (default: engine defaults)",
        check=non_empty)
    max_in_flight: int = setting(0, doc="tasks submitted at once (0: twice the cluster's CPUs)",
                                 check=at_least(0), hashed=False)
    deck_part: str = setting("all", doc="openings every stage uses: 'all', or the 'even' / 'odd' positions "
                                        "of the deck (keep the other half for an independent check)",
                             check=deck_part_problem)
    seed_scheme: int = setting(
        2, doc="how stage games' seeds derive from [run] seed: 2 = also from the stage name, so no two "
        "stages share player seeds; 1 = (seed, batch, game) only, the scheme of runs recorded before "
        "this key existed (pipeline.games.pairings)",
        check=one_of(1, 2), legacy=1,
    )


@dataclass(frozen=True)
class LadderSection:
    """[ladder]: the reference anchors every level is rated against."""

    depths: str = setting("1,2,3,4,6", doc="depths of the noiseless fixed-depth anchors ('1,2,3')",
                          check=_checker(_depths))
    bridges: str = setting(
        "0.75,0.5,0.25,0.1",
        doc="random-move probabilities of depth-1 anchors bridging random and d1 ('' none)",
        check=_checker(_bridges))
    pairs: int = setting(10, doc="game pairs per ladder pairing", check=between(1, 100_000))
    reach: int = setting(2, doc="pair each anchor with the next REACH stronger ones (2: adjacent, skip-one)",
                         check=between(1, 10))
    node_budget: int = setting(200_000, doc="node budget per move of the anchors (bounded)",
                               check=between(100, 20_000_000))
    tt_log2: int = setting(16, doc="transposition table size of the anchors (2^n entries)",
                           check=between(10, 24))
    path: str | None = setting(
        None, doc="stored ladder.json to reuse (rated and written there when missing)", check=non_empty,
        hashed=False)


@dataclass(frozen=True)
class TuneSection:
    """[tune]: weight tuning against the seed weights (trial count: [optuna].n_trials)."""

    weights: str = setting(
        "advance,back_rank,center_king,trade_when_ahead,king_approach_when_ahead",
        doc="features to tune: 'name' (declared range) or 'name=low:high', comma-separated",
        check=_checker(parse_weight_ranges))
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


def _chain_level(value: str) -> str:
    if value not in ("", *LEVELS):
        raise ValueError(f"must be '' or one of {', '.join(LEVELS)}")
    return value


@dataclass(frozen=True)
class CalibrateSection:
    """[calibrate]: per level, knobs that hit a target Elo on the ladder at least compute."""

    easy_target: float = setting(doc="target Elo of easy on the ladder (random = 0)",
                                 check=between(-5000, 5000))
    medium_target: float = setting(doc="target Elo of medium", check=between(-5000, 5000))
    hard_target: float = setting(doc="target Elo of hard", check=between(-5000, 5000))
    trials: int = setting(10, doc="trials per level", check=between(1, 10_000))
    pairs: int = setting(10, doc="game pairs per trial against EACH opponent: the pin and the two anchors "
                                 "bracketing the target",
                         check=between(1, 100_000))
    compute_penalty: float = setting(1.0, doc="objective cost in Elo per 1000 nodes per move",
                                     check=between(0.0, 1e6))
    tolerance: float = setting(
        100.0, doc="a trial hits its target when the target is inside its CI AND |Elo - target| <= this",
        check=between(0.0, 1e6))
    easy_knobs: str = setting(
        "max_depth=1:3, random_move_prob=0:0.6, noise_sigma=0:300, node_budget=5000",
        doc="knobs of easy: 'name=low:high' searched, 'name=value' fixed", check=_checker(parse_knob_ranges))
    medium_knobs: str = setting(
        "max_depth=2:5, random_move_prob=0:0.3, noise_sigma=0:200, node_budget=20000",
        doc="knobs of medium", check=_checker(parse_knob_ranges))
    hard_knobs: str = setting("max_depth=4:10, node_budget=20000:200000", doc="knobs of hard",
                              check=_checker(parse_knob_ranges))
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
        400, doc="confirmation CIs: bootstrap resamples (of confirm_bootstrap_unit)",
        check=between(50, 100_000))
    confirm_bootstrap_unit: str = setting(
        "opening", doc="what a confirmation/validation bootstrap resamples: 'opening' (every game of one "
                       "ballot opening together; right even when two noiseless levels replay each "
                       "opening's games) or 'pair' (the two colour-swapped games; the unit before "
                       "session 6, too narrow then)",
        check=one_of("opening", "pair"), legacy="pair")  # pipeline.ratings.BOOTSTRAP_UNITS
    confirm_joint_pairs: int = setting(
        0, doc="after confirmation: fresh pairs of Easy-Medium and Medium-Hard, then ONE fit rates the three "
               "levels together (0: each level rated against the ladder alone)", check=between(0, 100_000),
        added_later=True)
    chain_from: str = setting(
        "", doc="'' (each level rated on the ladder) or a level: only that level is rated on the ladder; "
                "the others are calibrated one after another outward from it, by head-to-head games against "
                "their confirmed neighbour held at its confirmed Elo, so the claimed gaps are what adjacent "
                "levels score against each other (needs confirm_step_pairs; excludes confirm_joint_pairs)",
        check=_checker(_chain_level), added_later=True)
    confirm_validate: bool = setting(
        False, doc="after confirmation, re-measure each level's chosen candidate on FRESH games (same "
                   "opponents and stopping rule) and report those numbers: a candidate chosen because its "
                   "confirmation landed on the target carries that luck in its estimate; confirmation "
                   "then also asks |Elo - target| <= tolerance of the candidate it chooses",
        added_later=True)
    validate_half_width: float = setting(
        0.0, doc="with confirm_validate: the validation stops once its 95 % CI half-width is at most this "
                 "(Elo; 0: confirm_half_width). A confirm_half_width below it makes the CHOICE precise (the "
                 "chosen candidate's true Elo lies closer to the target) without narrowing the reported CI",
        check=lambda v: None if v == 0 or 1.0 <= v <= 1e6 else "must be 0 or in [1, 1000000]",
        added_later=True)
    confirm_replay_stop: bool = setting(
        True, doc="confirmation and validation stop once a round's games all replay earlier ones (no noise "
                  "on either side and the deck gone round): with the bootstrap over openings more rounds "
                  "cannot narrow the CI", legacy=False)
    confirm_skip_clones: bool = setting(
        True, doc="confirmation never confirms the same knobs twice: a proposal or trial whose knobs equal "
                  "those of a candidate already confirmed is skipped (the same player)", legacy=False)
    confirm_futility: float = setting(
        2.0, doc="with confirm_validate: a confirmation stops as a miss once |Elo - target| exceeds "
                 "tolerance + this many CI half-widths (0: never; then a hopeless candidate plays until "
                 "narrow or confirm_max_pairs)",
        check=between(0.0, 100.0), legacy=0.0)


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
    section = config.sections.get("ladder")
    return section if isinstance(section, LadderSection) else LadderSection()


def tune_section(config: RunConfig) -> TuneSection | None:
    section = config.sections.get("tune")
    return section if isinstance(section, TuneSection) else None


def calibrate_section(config: RunConfig) -> CalibrateSection:
    return _typed(config, "calibrate", CalibrateSection)


def export_section(config: RunConfig) -> ExportSection:
    section = config.sections.get("export")
    return section if isinstance(section, ExportSection) else ExportSection()


def _typed(config: RunConfig, name: str, cls: type[_S]) -> _S:
    section = config.section(name)
    if not isinstance(section, cls):
        raise ConfigError(f"{config.source}: section [{name}] is not a {cls.__name__}")
    return section


def level_target(section: CalibrateSection, level: str) -> float:
    return float(getattr(section, f"{level}_target"))


def level_knobs(section: CalibrateSection, level: str) -> tuple[Range, ...]:
    return parse_knob_ranges(getattr(section, f"{level}_knobs"))
