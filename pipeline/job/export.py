"""Export the calibrated levels as the engine's profile file, then prove the engine can load it.

``<profiles-dir>/<variant>.json`` gets the three calibrated levels, the measured Elo ± CI of
each (score-based, the product's Medium at 1500), its measures (nodes per move, median depth,
blunder rate, expected scores) and provenance: engine version, the bench signature of its variant
(``engine.bench.bench_signature``), config hash, MLflow run id and experiment. The file is
written atomically, then RELOADED through the
engine's strict loader (``engine.profile.load_profile``) and its bench signature compared with
the running engine's: a profile measured with a different search is refused, not shipped.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import engine
from engine import bench
from engine.profile import (
    LEVEL_NAMES,
    SCHEMA_VERSION,
    LevelMeasures,
    LevelProvenance,
    Profile,
    Provenance,
    dump_profile,
    load_profile,
    parse_profile,
)
from pipeline.calibration.outcome import CalibrationOutcome
from pipeline.games.storage import atomic_write_bytes
from pipeline.games.storage_fs import StorePath, store_path
from pipeline.job.scale_note import scale_sentence
from pipeline.jsonrecord import Fields, RecordError

CALIBRATION_FILE = "calibrate/result.json"
TRACKING_FILE = "tracking.json"


class ExportError(ValueError):
    """Nothing to export, or an exported profile that does not match the running engine."""


@dataclass(frozen=True)
class TrackingRecord:
    """``<run folder>/tracking.json``: the MLflow job run and experiment of a run (None: not
    tracked), which go into the exported profile's provenance."""

    run_id: str | None
    experiment: str | None

    def to_json(self) -> dict[str, Any]:
        return {"run_id": self.run_id, "experiment": self.experiment}

    @classmethod
    def from_json(cls, data: object, where: str = TRACKING_FILE) -> TrackingRecord:
        f = Fields(data, where, ("run_id", "experiment"))
        return cls(f.opt_text("run_id"), f.opt_text("experiment"))


@dataclass(frozen=True)
class ExportResult:
    """Where the profile went and what it says."""

    path: StorePath
    variant: str
    bench_signature: int
    levels: dict[str, tuple[float, float, float]]  # level -> (elo, ci low, ci high)
    dial_path: StorePath | None = None  # <variant>-dial.json beside the profile, when the run made a dial


def current_bench_signature(variant: str) -> int:
    """The running engine's bench signature of ``variant`` (searches its bench positions: seconds)."""
    return bench.bench_signature(variant)


def read_json(path: str | Path | StorePath, what: str) -> Any:
    try:
        return json.loads(store_path(path).read_text())
    except FileNotFoundError:
        raise ExportError(f"no {what} at {str(path)!r}") from None
    except (OSError, json.JSONDecodeError, UnicodeDecodeError) as err:
        raise ExportError(f"cannot read {what} {str(path)!r}: {err}") from None


def build_profile(
    outcome: CalibrationOutcome,
    *,
    bench_signature: int,
    config_hash: str | None,
    tracking_run_id: str | None,
    experiment: str | None,
    description: str = "",
) -> Any:
    """An ``engine.profile.Profile`` from a calibration outcome: each level's knobs, the weights
    of its inline spec, its pooled Elo with CI and its measures (docs/calibration.md)."""
    missing = [name for name in LEVEL_NAMES if name not in outcome.levels]
    if missing:
        raise ExportError(f"calibration result lacks level(s) {missing}")
    body = {
        "schema_version": SCHEMA_VERSION, "variant": outcome.variant,
        "levels": {name: level_json(outcome, name) for name in LEVEL_NAMES},
        "provenance": {
            "engine_version": _engine_version(), "bench_signature": None, "source_config_hash": None,
            "tracking_run_id": None, "experiment": None, "description": "",
            "levels": {name: {"elo": None, "elo_ci": None, "description": ""} for name in LEVEL_NAMES},
        },
    }
    parsed = parse_profile(body, source="calibration result", variant=outcome.variant)  # strict on the levels
    scale = scale_sentence(outcome.product_file, outcome.anchor_elo)
    provenance = Provenance(
        engine_version=_engine_version(), bench_signature=bench_signature, source_config_hash=config_hash,
        tracking_run_id=tracking_run_id, experiment=experiment,
        description=" ".join(t for t in (scale, description) if t),
        levels={name: _provenance(outcome, name) for name in LEVEL_NAMES},
    )
    return Profile(SCHEMA_VERSION, parsed.variant, parsed.levels, provenance)


def level_json(outcome: CalibrationOutcome, name: str) -> dict[str, Any]:
    """The profile-file form of a chosen level (its inline spec carries the weights)."""
    return dict(outcome.levels[name].profile)


def _provenance(outcome: CalibrationOutcome, name: str) -> LevelProvenance:
    level = outcome.levels[name]
    claim = next((c for c in outcome.claims if c.level == name), None)
    verdict = "" if claim is None else (
        f" Validation: {claim.what}: {claim.estimate:+.0f} [{claim.ci_low:+.0f}, {claim.ci_high:+.0f}] "
        f"({'holds' if claim.holds else 'MISSED'}{'' if claim.precise else ', CI wider than asked'})"
        + (f"; {claim.note}" if claim.note else "") + ".")
    flagged = {f.get("player") for f in outcome.scale.get("flags", []) if isinstance(f, dict)}
    if level.player in flagged:
        verdict += " Its Elo rests partly on the fit's prior: perfect scores separate it from the anchor."
    measures = LevelMeasures(round(level.nodes_per_move, 1), level.median_depth,
                             _round(level.blunder_rate, 4),
                             _round(level.expected_score_next, 4),
                             {k: round(v, 4) for k, v in level.expected_score_product.items()})
    text = f"{name}: {level.describe()}.{verdict}"
    ci = (round(level.ci[0], 1), round(level.ci[1], 1))
    return LevelProvenance(round(level.elo, 1), ci, text, None, measures)


def _round(value: float | None, digits: int) -> float | None:
    """Profiles keep the precision the measurement has (Elo to 0.1, shares to 4 decimals)."""
    return None if value is None else round(value, digits)


def _engine_version() -> str:

    return str(engine.__version__)


def write_profile(profile: Any, profiles_dir: str | Path | StorePath) -> StorePath:
    """Atomically write ``<profiles_dir>/<variant>.json``."""

    path = store_path(profiles_dir) / f"{profile.variant.name}.json"
    atomic_write_bytes(path, dump_profile(profile).encode("utf-8"))
    return path


def verify_profile(path: str | Path | StorePath, variant: str, bench_signature: int) -> Any:
    """Reload ``path`` strictly and require its bench signature to be ``bench_signature``."""

    with store_path(path).local_copy() as local:
        profile = load_profile(local, variant)
    found = profile.provenance.bench_signature
    if found != bench_signature:
        raise ExportError(
            f"profile {str(path)!r} was measured with bench signature {found}, but this engine's is "
            f"{bench_signature}: the search changed since calibration; recalibrate before shipping"
        )
    return profile


def export_run(
    run_folder: str | Path | StorePath,
    profiles_dir: str | Path | StorePath | None = None,
    *,
    bench_signature: int | None = None,
    description: str = "",
) -> ExportResult:
    """Export a run's calibration to ``profiles_dir`` (default: ``<run folder>/profiles``)."""
    folder = store_path(run_folder)
    calibration = read_json(folder / CALIBRATION_FILE, "calibration result (run the calibrate stage first)")
    manifest = read_json(folder / "run.json", "run manifest")
    tracking = TrackingRecord(None, None)
    tracking_path = folder / TRACKING_FILE
    if tracking_path.is_file():
        try:
            stored = read_json(tracking_path, "tracking record")
            tracking = TrackingRecord.from_json(stored, str(tracking_path))
        except RecordError as err:
            raise ExportError(f"cannot read tracking record: {err}") from None
    try:
        outcome = CalibrationOutcome.from_json(calibration)
    except (KeyError, TypeError, ValueError) as err:
        raise ExportError(f"calibration result {str(folder / CALIBRATION_FILE)!r}: {err}") from None
    variant = outcome.variant
    signature = current_bench_signature(variant) if bench_signature is None else bench_signature
    profile = build_profile(
        outcome, bench_signature=signature,
        config_hash=manifest.get("config_hash"), tracking_run_id=tracking.run_id,
        experiment=tracking.experiment, description=description,
    )
    path = write_profile(profile, folder / "profiles" if profiles_dir is None else profiles_dir)
    loaded = verify_profile(path, variant, signature)
    levels = {name: (lp.elo, lp.elo_ci[0], lp.elo_ci[1]) for name, lp in loaded.provenance.levels.items()}
    dial_path = write_dial(outcome, path.parent, loaded.profile_hash()) if outcome.dial else None
    return ExportResult(path, variant, signature, levels, dial_path)


DIAL_SCHEMA = "draughts.dial"
DIAL_VERSION = 1


def write_dial(outcome: CalibrationOutcome, folder: str | Path | StorePath, profile_hash: str) -> StorePath:
    """``<folder>/<variant>-dial.json``: the dial's levels (each a profile level with its predicted
    Elo and CI on the profile's scale) and the run's spot checks of two of them."""
    path = store_path(folder) / f"{outcome.variant}-dial.json"
    doc = {"schema": DIAL_SCHEMA, "version": DIAL_VERSION, "variant": outcome.variant,
           "profile_hash": profile_hash, "anchor": outcome.anchor, "anchor_elo": outcome.anchor_elo,
           "levels": [{**lv.to_json(), "elo": round(lv.elo, 1),
                       "ci": [round(lv.ci[0], 1), round(lv.ci[1], 1)]} for lv in outcome.dial],
           "checks": [c.to_json() for c in outcome.dial_checks]}
    text = json.dumps(doc, indent=2, sort_keys=True, allow_nan=False) + "\n"
    atomic_write_bytes(path, text.encode("utf-8"))
    return path
