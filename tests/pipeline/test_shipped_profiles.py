"""The shipped calibrated profiles: they load, are ordered and point at their experiment and run config."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from engine.profile import Profile, load_profile

REPO = Path(__file__).resolve().parents[2]
VARIANTS = ("english", "suicide", "brazilian", "russian", "international")


@pytest.mark.parametrize("variant", VARIANTS)
def test_a_calibrated_profile_loads_and_names_its_experiment(variant: str) -> None:
    path = REPO / "engine" / "profiles" / f"{variant}.json"
    profile = load_profile(path, variant)
    prov = profile.provenance
    match = re.search(r"experiments/(\S+?)/", prov.description)
    assert match, f"{path}: the provenance names no experiment folder: {prov.description!r}"
    folder = REPO / "experiments" / match.group(1)
    assert (folder / "README.md").is_file() and (folder / "results.json").is_file()
    assert prov.tracking_run_id and prov.source_config_hash and prov.bench_signature is not None
    elos = [prov.levels[name].elo for name in ("easy", "medium", "hard")]
    assert all(e is not None for e in elos) and elos[0] < elos[1] < elos[2]  # type: ignore[operator]
    # the write-up's numbers are the profile's numbers
    results = json.loads((folder / "results.json").read_text(encoding="utf-8"))
    for name in ("easy", "medium", "hard"):
        assert results["levels"][name]["elo"] == pytest.approx(prov.levels[name].elo)


def _experiment(variant: str) -> tuple[Path, Profile]:
    profile = load_profile(REPO / "engine" / "profiles" / f"{variant}.json", variant)
    match = re.search(r"experiments/(\S+?)/", profile.provenance.description)
    assert match
    return REPO / "experiments" / match.group(1), profile


@pytest.mark.parametrize("variant", VARIANTS)
def test_the_experiment_records_the_run_the_profile_came_from(variant: str) -> None:
    """The write-up's results name the run whose config hash the profile records."""
    folder, profile = _experiment(variant)
    results = json.loads((folder / "results.json").read_text(encoding="utf-8"))
    run_id = Path(results["run"]).name
    assert profile.provenance.source_config_hash
    assert run_id.endswith("-" + profile.provenance.source_config_hash[:12])
    assert (folder / "config.toml").is_file()


@pytest.mark.parametrize("config", sorted((REPO / "configs" / "runs").glob("*.toml")), ids=lambda p: p.stem)
def test_every_run_config_validates(config: Path) -> None:
    """Each config a user runs passes every check a run makes before its first game."""
    from pipeline.config.run_config import load_config
    from pipeline.job.validate import validate_job

    loaded = load_config(config)
    if "job" in loaded.sections:
        validate_job(loaded)


#: Words that tell how a level was found rather than what it is (a trial number, a proposal).
_HISTORY = re.compile(r"\btrial \d+|\bpropos|\bsession|previously|no longer|legacy|issue #|ticket", re.I)


@pytest.mark.parametrize("path", sorted((REPO / "engine" / "profiles").glob("*.json")), ids=lambda p: p.name)
def test_level_descriptions_describe_the_level(path: Path) -> None:
    for name, level in load_profile(path).provenance.levels.items():
        assert not _HISTORY.search(level.description), (path.name, name, level.description)
