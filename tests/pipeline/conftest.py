"""Shared fixtures of the self-play plumbing tests."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pipeline.config.run_config import RunConfig, load_config

REPO = Path(__file__).resolve().parents[2]
SMOKE = REPO / "configs" / "runs" / "smoke.toml"


@pytest.fixture
def smoke_config(tmp_path: Path) -> RunConfig:
    """The smoke run config writing under a private temp folder."""
    return load_config(SMOKE).replace("run", output_root=str(tmp_path / "out"))


#: the cheap product's english Hard: node budget a move (the product's own: 200,000)
CHEAP_HARD_BUDGET = 8_000
#: decisions a blunder rate scores at most in the cheap product's tests (the method's own: 20,000)
CHEAP_BLUNDER_SAMPLE = 2_000


def cheap_profile_dir(folder: Path) -> Path:
    """A copy of the shipped profiles in ``folder`` whose english product Hard searches
    :data:`CHEAP_HARD_BUDGET` nodes a move; point ``$DRAUGHTS_PROFILE_DIR`` at it."""
    import json

    from engine.profile import PROFILE_DIR_ENV, profile_dir
    from pipeline.calibration.product import product_profile_path

    assert PROFILE_DIR_ENV not in os.environ, "the cheap product copies the shipped profiles"
    folder.mkdir(parents=True, exist_ok=True)
    for source in profile_dir().glob("*.json"):
        (folder / source.name).write_bytes(source.read_bytes())
    product = folder / product_profile_path("english").name
    doc = json.loads(product.read_text())
    doc["levels"]["hard"]["search"]["node_budget"] = CHEAP_HARD_BUDGET
    product.write_text(json.dumps(doc, indent=2))
    return folder


@pytest.fixture
def cheap_product(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """For tests of the job's plumbing (resume, storage, tracking), not of its levels: english's
    product Hard at :data:`CHEAP_HARD_BUDGET` nodes a move (its games were most of the tiny job's
    time), for this process and the subprocesses it starts, and blunder rates on at most
    :data:`CHEAP_BLUNDER_SAMPLE` decisions in this process. ``test_tiny_run_end_to_end`` plays the
    real product."""
    import pipeline.calibration.method as method
    from engine.profile import PROFILE_DIR_ENV

    folder = cheap_profile_dir(tmp_path_factory.mktemp("cheap-product"))
    monkeypatch.setenv(PROFILE_DIR_ENV, str(folder))
    monkeypatch.setattr(method, "BLUNDER_SAMPLE", CHEAP_BLUNDER_SAMPLE)
    return folder
