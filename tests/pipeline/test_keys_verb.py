"""``python -m pipeline keys``: the tables come from the declarations, and the docs carry them as printed."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.features import FEATURES
from engine.params import PARAMS
from pipeline.cli.keys_verb import config_table, feature_table, knob_table
from pipeline.cli.main import main

DOCS = Path(__file__).resolve().parents[2] / "docs"


def test_every_knob_and_feature_has_a_row() -> None:
    knobs, features = knob_table(), feature_table()
    assert all(f"| `{p.name}` |" in knobs for p in PARAMS)
    assert all(f"| `{f.name}` |" in features for f in FEATURES)
    assert len(knobs.splitlines()) == len(PARAMS) + 2 and len(features.splitlines()) == len(FEATURES) + 2


def test_docs_show_the_declared_tables() -> None:
    """docs/profiles.md holds the knob and feature tables exactly as ``keys`` prints them."""
    text = (DOCS / "profiles.md").read_text()
    assert knob_table() in text and feature_table() in text


def test_docs_show_every_config_key() -> None:
    assert config_table() in (DOCS / "mainjob.md").read_text()


def test_keys_verb_prints_one_part(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["keys", "knobs"]) == 0
    out = capsys.readouterr().out
    assert "| `node_budget` |" in out and "| `man` |" not in out
    assert main(["keys"]) == 0
    assert "Run-config keys" in capsys.readouterr().out
