"""Config sections of the main job: ``[job]``, ``[ladder]``, ``[tune]``, ``[calibrate]``, ``[export]``.

Declared like every section (frozen dataclass, one :func:`~pipeline.config.run_config.setting` per key) and
registered on import. List-valued keys are TOML arrays and tables, read into frozen values:

- ``ladder.depths = [1, 2, 3, 4, 6]``, ``ladder.bridges = [0.75, 0.5, 0.25]``;
- ``[tune.weights]`` with ``advance = [0, 12]``: features to tune, each a ``[low, high]`` pair
  inside its declared range (``engine.features``), or one number to fix it;
- ``calibrate.hard_budgets = [25000, 200000]``, ``calibrate.medium_noise = [0, 40, 80]``: the
  points of Hard's and Medium's strength curves.

Tables are read in the order of their declaration (features in ``engine.features`` order), so the
order in the file changes neither the config hash nor the search.
Checks that span sections (steps aligned to batches, a deck large enough for the calibration) live in
:func:`pipeline.job.validate.validate_job`, which every verb calls, so they fail before any game too.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

import pipeline.config.tracking_sections  # noqa: F401 - registers [mlflow] and [optuna]
from engine.features import FEATURES
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


# ---- named ranges: [tune.weights] ---------------------------------------------------------------


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


WEIGHTS = Structured(
    kind="table: feature = [low, high] or value",
    read=read_weight_ranges,
    write=lambda ranges: write_ranges(ranges, FEATURE_BOUNDS),
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


def _budgets_problem(budgets: tuple[int, ...]) -> str | None:
    increasing = list(budgets) == sorted(set(budgets))
    if len(budgets) < 2 or not increasing or budgets[0] < 100 or budgets[-1] > 20_000_000:
        return "give at least two node budgets, strictly increasing within 100..20000000"
    return None


def _noise_problem(noise: tuple[float, ...]) -> str | None:
    if len(noise) < 2 or list(noise) != sorted(set(noise)) or noise[0] != 0 or noise[-1] > 2000:
        return "give at least two noise values, strictly increasing from 0, at most 2000"
    return None


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
    task_seconds: float = setting(
        14.0, doc="nominal CPU-seconds of games a Ray task holds at least (a batch of twice this is "
                  "split): smaller feeds more slots at more driver cost per game; never changes a game",
        check=between(1.0, 600.0), hashed=False)
    deck: str | None = setting(
        None, doc="opening deck (pipeline/data/openings/<deck>.json, of the variant; default: the variant's "
                  "own deck): a generated deck past the ballots gives runs more openings", check=non_empty)
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
    depth_nodes: int = setting(
        0, doc="when the SPRT accepts, a second SPRT of the same weights against the seed's, both on "
               "Hard's search path at this many nodes per move; the levels play the tuned weights only "
               "if it accepts too (0: no such check)",
        check=lambda v: None if v == 0 or 1_000 <= v <= 20_000_000 else "must be 0 or in [1000, 20000000]")
    depth_max_pairs: int = setting(400, doc="the depth SPRT stops here undecided (seed weights kept)",
                                   check=between(1, 1_000_000))
    texel: bool = setting(False, doc="first fit the weights to the ladder games' results (Texel) and "
                                     "enqueue that point as the study's first trial")
    texel_max_positions: int = setting(100_000, doc="quiet positions the Texel fit uses at most",
                                       check=between(100, 10_000_000))


@dataclass(frozen=True)
class CalibrateSection:
    """[calibrate]: product-true levels from strength curves against the product's own levels
    (docs/calibration.md); the judging rules are fixed in :mod:`pipeline.calibration.claims`."""

    openings: int = setting(
        40, doc="openings of the curve games: every curve pairing plays each of them twice, colours "
                "swapped (the same openings for every pairing)", check=between(2, 100_000))
    validation_openings: int = setting(
        60, doc="fresh openings (no curve game used them) on which the chosen levels are validated",
        check=between(2, 100_000))
    hard_budgets: tuple[int, ...] = setting(
        (25_000, 50_000, 100_000, 200_000),
        doc="Hard's strength curve: node budgets per move, increasing; the last is the shipped Hard's "
            "(the product's fixed compute budget)", check=_budgets_problem)
    medium_noise: tuple[float, ...] = setting(
        (0.0, 40.0, 80.0, 160.0), doc="Medium's strength curve: root-noise values at 4 plies, from 0 up",
        check=_noise_problem)
    easy_trials: int = setting(12, doc="Optuna trials choosing Easy's weakening mix at 2 plies",
                               check=between(1, 10_000))
    easy_openings: int = setting(
        20, doc="openings per Easy trial (played against the product's Easy; at most [calibrate] openings)",
        check=between(2, 100_000))
    bootstrap: int = setting(400, doc="bootstrap resamples over openings behind every CI",
                             check=between(50, 100_000))
    dial: int = setting(0, doc="also export this many levels evenly spaced in Elo from Easy to Hard "
                               "(0: none; else at least 3)",
                        check=lambda v: None if v == 0 or 3 <= v <= 50 else "must be 0 or in [3, 50]")


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
