"""The shipped calibrated profiles: they load, are ordered and point at their experiment."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from engine.profile import load_profile

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


@pytest.mark.parametrize("variant", VARIANTS)
def test_the_experiment_config_is_the_one_the_profile_came_from(variant: str) -> None:
    """The write-up's config.toml hashes to the profile's recorded config hash, so the command in the
    write-up reproduces the shipped run (keys added later, such as seed_scheme = 1, keep the hash)."""
    import pipeline.config.job_sections  # noqa: F401 - registers the main job's sections
    from pipeline.config.run_config import load_config

    profile = load_profile(REPO / "engine" / "profiles" / f"{variant}.json", variant)
    match = re.search(r"experiments/(\S+?)/", profile.provenance.description)
    assert match
    config = load_config(REPO / "experiments" / match.group(1) / "config.toml")
    assert config.config_hash() == profile.provenance.source_config_hash
