"""Shared fixtures of the self-play plumbing tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.config.run_config import RunConfig, load_config

REPO = Path(__file__).resolve().parents[2]
SMOKE = REPO / "configs" / "runs" / "smoke.toml"


@pytest.fixture
def smoke_config(tmp_path: Path) -> RunConfig:
    """The smoke run config writing under a private temp folder."""
    return load_config(SMOKE).replace("run", output_root=str(tmp_path / "out"))
