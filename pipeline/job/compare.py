"""Levels of several runs or profiles side by side: Elo with CI, expected scores, measures, scale.

An input is a run folder (its ``calibrate/result.json``; a run id is looked up under the output
root first, as ``export`` and ``report`` do) or a profile file (``provenance.levels``). Only what
the input records is shown: a profile without Elo or measures gives ``None`` (``-`` in the text),
nothing is filled in. Elo figures from different fixed points are not comparable, so inputs
whose scales differ, or whose scale is not recorded, are named in the warnings.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from engine.errors import quote
from engine.profile import LEVEL_NAMES, LevelProvenance, Profile, load_profile
from pipeline.calibration.outcome import CalibrationOutcome, LevelOutcome
from pipeline.calibration.product import PRODUCT_PREFIX
from pipeline.games.stage import read_result
from pipeline.games.storage_fs import StorePath, joined, store_path
from pipeline.job.cells import optional
from pipeline.job.scale_note import Scale, read_scale
from pipeline.tracking.plots import LadderRow, elo_ladder_plot

CALIBRATION_DIR, RESULT_FILE = "calibrate", "result.json"
SCHEMA = "draughts.compare"
VERSION = 1


class CompareError(ValueError):
    """An argument that is neither a calibrated run folder nor a profile file."""


@dataclass(frozen=True)
class ComparedLevel:
    """One level of one input as recorded there (None: the input does not record it)."""

    level: str  # easy, medium or hard
    product: bool  # one of the product's levels, rated in the same run
    player: str | None
    elo: float | None
    ci: tuple[float, float] | None  # 95 %
    rated_against: str | None  # the CI is relative to this level, held at its own Elo
    expected_score_next: float | None
    expected_score_product: Mapping[str, float] | None
    nodes_per_move: float | None
    median_depth: float | None
    blunder_rate: float | None
    games: int | None
    target: float | None

    @property
    def name(self) -> str:
        return f"product {self.level}" if self.product else self.level

    def to_json(self) -> dict[str, Any]:
        return {
            "level": self.level, "product": self.product, "player": self.player, "elo": self.elo,
            "ci": None if self.ci is None else list(self.ci), "rated_against": self.rated_against,
            "expected_score_next": self.expected_score_next,
            "expected_score_product": None if self.expected_score_product is None
            else {n: self.expected_score_product[n] for n in LEVEL_NAMES},
            "nodes_per_move": self.nodes_per_move, "median_depth": self.median_depth,
            "blunder_rate": self.blunder_rate, "games": self.games, "target": self.target,
        }


@dataclass(frozen=True)
class ComparedInput:
    """One argument: a run or a profile, its variant, its scale (None: not recorded) and levels."""

    label: str
    kind: Literal["run", "profile"]
    source: str  # the folder or file read
    variant: str
    scale: Scale | None
    levels: tuple[ComparedLevel, ...]

    @property
    def rated(self) -> bool:
        """Whether any level has an Elo."""
        return any(lv.elo is not None for lv in self.levels)

    def to_json(self) -> dict[str, Any]:
        scale = None if self.scale is None else {
            "anchor": self.scale.anchor, "product_file": self.scale.product_file,
            "anchor_elo": self.scale.anchor_elo}
        return {"label": self.label, "kind": self.kind, "source": self.source, "variant": self.variant,
                "scale": scale, "levels": [lv.to_json() for lv in self.levels]}


@dataclass(frozen=True)
class Comparison:
    """Every input in the order given and the warnings about comparing them."""

    inputs: tuple[ComparedInput, ...]
    warnings: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {"schema": SCHEMA, "version": VERSION, "inputs": [i.to_json() for i in self.inputs],
                "warnings": list(self.warnings)}


# -- reading inputs ------------------------------------------------------------------------------


def run_levels(outcome: CalibrationOutcome) -> tuple[ComparedLevel, ...]:
    """The calibrated levels, then the product's levels (their Elo and CI only: nothing else is recorded)."""
    rows = [_from_outcome(outcome.levels[n], outcome.medium_target if n == "medium" else None)
            for n in LEVEL_NAMES]
    for n in LEVEL_NAMES:
        elo, low, high = outcome.product_elo[n]
        rows.append(ComparedLevel(n, True, None, elo, (low, high), None, None, None, None, None, None, None,
                                  None))
    return tuple(rows)


def _from_outcome(lv: LevelOutcome, target: float | None) -> ComparedLevel:
    return ComparedLevel(lv.level, False, lv.player, lv.elo, lv.ci, None, lv.expected_score_next,
                         dict(lv.expected_score_product), lv.nodes_per_move, lv.median_depth, lv.blunder_rate,
                         lv.games, target)


def profile_levels(profile: Profile) -> tuple[ComparedLevel, ...]:
    """A profile's three levels from its provenance (measures only where the file has them)."""
    return tuple(_from_provenance(n, profile.provenance.levels[n]) for n in LEVEL_NAMES)


def _from_provenance(name: str, lp: LevelProvenance) -> ComparedLevel:
    m = lp.measures
    return ComparedLevel(
        name, False, None, lp.elo, lp.elo_ci, lp.rated_against,
        None if m is None else m.expected_score_next,
        None if m is None else dict(m.expected_score_product),
        None if m is None else m.nodes_per_move,
        None if m is None else m.median_depth,
        None if m is None else m.blunder_rate,
        None, None)


def read_input(arg: str, output: str | None = None) -> ComparedInput:
    """``arg`` as a run id under ``output`` (default ``runs``), a run folder or a profile file."""
    root = output or "runs"
    try:
        candidate = _under(root, arg)
        if candidate is not None and _calibrated(candidate):
            return _read_run(arg, candidate)
        path = store_path(arg)
        if path.is_file():
            return _read_profile(arg, path)
        if path.is_dir():
            if _calibrated(path):
                return _read_run(arg, path)
            raise CompareError(f"{quote(arg)}: a folder without calibrate/result.json (not a calibrated "
                               "run folder)")
        if candidate is not None and candidate.is_dir():
            raise CompareError(f"{quote(arg)}: run {quote(arg)} under {quote(str(root))} has no "
                               "calibrate/result.json (its calibration has not finished)")
    except OSError as err:  # unreadable folder or store
        raise CompareError(f"{quote(arg)}: {' '.join(str(err).split())}") from None
    raise CompareError(f"{quote(arg)}: no such run folder or profile file (and no run of that id under "
                       f"{quote(str(root))})")


def _under(root: str, arg: str) -> StorePath | None:
    """``arg`` as a run id below the output root (None: an absolute path, a URI or ``..`` is no run id)."""
    try:
        return joined(root, arg)
    except ValueError:
        return None


def _calibrated(folder: StorePath) -> bool:
    return (folder / CALIBRATION_DIR / RESULT_FILE).is_file()


def _read_run(arg: str, folder: StorePath) -> ComparedInput:
    try:
        outcome = CalibrationOutcome.from_json(read_result(folder / CALIBRATION_DIR / RESULT_FILE))
    except (KeyError, TypeError, ValueError) as err:  # invalid JSON, or a RecordError naming the key
        raise CompareError(f"{quote(arg)}: calibrate/result.json is not a calibration result: "
                           f"{' '.join(str(err).split())}") from None
    scale = Scale(outcome.anchor, outcome.product_file.rsplit("/", 1)[-1], outcome.anchor_elo)
    return ComparedInput(f"{folder.name} ({outcome.variant})", "run", str(folder), outcome.variant, scale,
                         run_levels(outcome))


def _read_profile(arg: str, path: StorePath) -> ComparedInput:
    try:
        with path.local_copy() as local:
            profile = load_profile(local)
    except ValueError as err:  # ProfileError: the file, the JSON path and the value
        raise CompareError(f"{quote(arg)} is not a profile file: {' '.join(str(err).split())}") from None
    variant = profile.variant.name
    return ComparedInput(f"{path.name} ({variant})", "profile", str(path), variant,
                         read_scale(profile.provenance.description), profile_levels(profile))


# -- comparing ---------------------------------------------------------------------------------


def compare(args: Sequence[str], output: str | None = None) -> Comparison:
    """Read every argument (the first bad one raises :class:`CompareError`) and collect the warnings."""
    if not args:
        raise CompareError("nothing to compare: give at least one run or profile")
    inputs = _unique_labels([read_input(a, output) for a in args])
    return Comparison(inputs, warnings(inputs))


def _unique_labels(inputs: list[ComparedInput]) -> tuple[ComparedInput, ...]:
    """Labels as given; a repeated label gets `` #2``, `` #3`` ... so rows and plot names stay apart."""
    seen: dict[str, int] = {}
    out = []
    for item in inputs:
        seen[item.label] = seen.get(item.label, 0) + 1
        if seen[item.label] > 1:
            item = ComparedInput(f"{item.label} #{seen[item.label]}", item.kind, item.source, item.variant,
                                 item.scale, item.levels)
        out.append(item)
    return tuple(out)


def warnings(inputs: Sequence[ComparedInput]) -> tuple[str, ...]:
    """Why some Elo figures side by side are not comparable: variants, fixed points, unknown scales."""
    out: list[str] = []
    variants = sorted({i.variant for i in inputs})
    if len(variants) > 1:
        out.append(f"the inputs are of different variants ({', '.join(variants)}): their levels play "
                   "different games")
    rated = [i for i in inputs if i.rated]
    unknown = [i.label for i in rated if i.scale is None]
    if unknown and len(rated) > 1:
        out.append(f"{', '.join(unknown)}: the file does not record its scale's fixed point, so its Elo "
                   "cannot be matched to another input's")
    scales = {i.scale for i in rated if i.scale is not None}
    if len(scales) > 1:
        by = "; ".join(f"{', '.join(i.label for i in rated if i.scale == s)}: {s.describe()}"
                       for s in sorted(scales, key=lambda s: (s.product_file, s.anchor, s.anchor_elo)))
        out.append(f"the inputs' Elo come from different fixed points and are not comparable ({by})")
    return tuple(out)


def comparable(inputs: Sequence[ComparedInput]) -> bool:
    """Whether every input with an Elo records the same scale (trivially so for one such input)."""
    rated = [i for i in inputs if i.rated]
    return len(rated) <= 1 or (all(i.scale is not None for i in rated) and len({i.scale for i in rated}) == 1)


# -- output ------------------------------------------------------------------------------------

COLUMNS = ("input", "level", "Elo", "95 % CI", "vs next", "vs product e/m/h", "nodes/move", "median depth",
           "blunder rate", "games", "note")
_RIGHT = {"Elo", "vs next", "nodes/move", "median depth", "blunder rate", "games"}


def _cells(item: ComparedInput, lv: ComparedLevel, first: bool) -> list[str]:
    vs = "-" if lv.expected_score_product is None else "/".join(
        f"{lv.expected_score_product[n]:.2f}" for n in LEVEL_NAMES)
    notes = []
    if lv.rated_against is not None:
        notes.append(f"CI relative to {lv.rated_against}")
    if lv.product and item.scale is not None and f"{PRODUCT_PREFIX}{lv.level}" == item.scale.anchor:
        notes.append("fixed point")
    if lv.target is not None:
        notes.append(f"target {lv.target:.0f}")
    ci = "-" if lv.ci is None else f"[{lv.ci[0]:.0f}, {lv.ci[1]:.0f}]"
    games = "-" if lv.games is None else str(lv.games)
    return [
        item.label if first else "", lv.name, optional(lv.elo, ".0f"), ci,
        optional(lv.expected_score_next, ".3f"), vs, optional(lv.nodes_per_move, ".0f"),
        optional(lv.median_depth, "g"), optional(lv.blunder_rate, ".4f"), games,
        ", ".join(notes),
    ]


def text_table(comparison: Comparison) -> str:
    """Aligned plain-text table, one block of rows per input, then each input's scale and the warnings."""
    blocks = [[_cells(item, lv, i == 0) for i, lv in enumerate(item.levels)] for item in comparison.inputs]
    rows = [list(COLUMNS)] + [r for block in blocks for r in block]
    widths = [max(len(r[c]) for r in rows) for c in range(len(COLUMNS))]

    def line(cells: list[str]) -> str:
        return "  ".join(c.rjust(w) if COLUMNS[i] in _RIGHT else c.ljust(w)
                         for i, (c, w) in enumerate(zip(cells, widths, strict=True))).rstrip()

    out = [line(list(COLUMNS))]
    for block in blocks:
        out += [""] + [line(r) for r in block]
    out += ["", "Scales (CIs 95 %; vs next: expected score against the input's next stronger level):"]
    for item in comparison.inputs:
        scale = item.scale.describe() if item.scale is not None else (
            "no Elo recorded" if not item.rated else "fixed point not recorded in the file")
        out.append(f"- {item.label}: {scale}")
    out += [f"warning: {w}" for w in comparison.warnings]
    return "\n".join(out) + "\n"


def json_text(comparison: Comparison) -> str:
    """The comparison as a JSON document (stable keys, no NaN)."""
    return json.dumps(comparison.to_json(), indent=2, allow_nan=False) + "\n"


def write_ladder(comparison: Comparison, path: str) -> StorePath:
    """One ladder PNG of every level with an Elo (rows ``<label>: <level>``), targets where recorded."""
    rows = [LadderRow(f"{item.label}: {lv.name}", lv.elo, *(lv.ci or (lv.elo, lv.elo)), target=lv.target)
            for item in comparison.inputs for lv in item.levels if lv.elo is not None]
    if not rows:
        raise CompareError(f"--png {quote(path)}: no input has an Elo to plot")
    title = "Levels side by side (Elo, 95 % CI)"
    if not comparable(comparison.inputs):
        title += "\nscales differ or are not recorded: Elo not comparable across inputs"
    return elo_ladder_plot(rows, path, title=title)
