"""Export the calibrated levels as the engine's profile file, then prove the engine can load it.

``<profiles-dir>/<variant>.json`` gets the three calibrated levels, the measured Elo ± CI of
each, and provenance: engine version, the bench signature of its variant
(``engine.bench.bench_signature``), config hash, MLflow run id and experiment. The file is
written atomically, then RELOADED through the
engine's strict loader (``engine.profile.load_profile``) and its bench signature compared with
the running engine's: a profile measured with a different search is refused, not shipped.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import engine
from engine import bench
from engine.profile import (
    LEVEL_NAMES,
    SCHEMA_VERSION,
    LevelProvenance,
    Profile,
    Provenance,
    dump_profile,
    load_profile,
    parse_profile,
)
from pipeline.games.storage import atomic_write_bytes
from pipeline.games.storage_fs import StorePath, store_path

CALIBRATION_FILE = "calibrate/result.json"
TRACKING_FILE = "tracking.json"


class ExportError(ValueError):
    """Nothing to export, or an exported profile that does not match the running engine."""


@dataclass(frozen=True)
class ExportResult:
    """Where the profile went and what it says."""

    path: StorePath
    variant: str
    bench_signature: int
    levels: dict[str, tuple[float, float, float]]  # level -> (elo, ci low, ci high)


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
    variant: str,
    levels: Mapping[str, Mapping[str, Any]],
    *,
    bench_signature: int,
    config_hash: str | None,
    tracking_run_id: str | None,
    experiment: str | None,
    description: str = "",
) -> Any:
    """An ``engine.profile.Profile`` from calibrated levels ``{name: {level, elo, ci, description}}``."""

    missing = [name for name in LEVEL_NAMES if name not in levels]
    if missing:
        raise ExportError(f"calibration result lacks level(s) {missing}")
    body = {
        "schema_version": SCHEMA_VERSION, "variant": variant,
        "levels": {name: levels[name]["level"] for name in LEVEL_NAMES},
        "provenance": {
            "engine_version": _engine_version(), "bench_signature": None, "source_config_hash": None,
            "tracking_run_id": None, "experiment": None, "description": "",
            "levels": {name: {"elo": None, "elo_ci": None, "description": ""} for name in LEVEL_NAMES},
        },
    }
    parsed = parse_profile(body, source="calibration result", variant=variant)  # strict on the levels
    provenance = Provenance(
        engine_version=_engine_version(), bench_signature=bench_signature, source_config_hash=config_hash,
        tracking_run_id=tracking_run_id, experiment=experiment, description=description,
        levels={name: LevelProvenance(float(levels[name]["elo"]),
                                      (float(levels[name]["ci"][0]), float(levels[name]["ci"][1])),
                                      str(levels[name].get("description", "")),
                                      rated_against(levels[name]))
                for name in LEVEL_NAMES},
    )
    return Profile(SCHEMA_VERSION, parsed.variant, parsed.levels, provenance)


def rated_against(level: Mapping[str, Any]) -> str | None:
    """The level a chained calibration rated ``level`` against (its confirmation's neighbour)."""
    confirm = level.get("confirm")
    neighbour = confirm.get("neighbour") if isinstance(confirm, Mapping) else None
    return str(neighbour["level"]) if isinstance(neighbour, Mapping) else None


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
    tracking_path = folder / TRACKING_FILE
    tracking = read_json(tracking_path, "tracking record") if tracking_path.is_file() else {}
    variant = str(calibration["variant"])
    signature = current_bench_signature(variant) if bench_signature is None else bench_signature
    profile = build_profile(
        variant, calibration["levels"], bench_signature=signature,
        config_hash=manifest.get("config_hash"), tracking_run_id=tracking.get("run_id"),
        experiment=tracking.get("experiment"), description=description,
    )
    path = write_profile(profile, folder / "profiles" if profiles_dir is None else profiles_dir)
    loaded = verify_profile(path, variant, signature)
    levels = {name: (lp.elo, lp.elo_ci[0], lp.elo_ci[1]) for name, lp in loaded.provenance.levels.items()}
    return ExportResult(path, variant, signature, levels)
