"""The tuned weights' second SPRT, at Hard's depth: which weights the levels play after it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from engine.features import default_weights
from engine.variants import get_variant
from pipeline.calibration.depth_check import (
    DEPTH_FILE,
    DEPTH_STAGE,
    DepthCheck,
    depth_specs,
    level_weights,
    read_depth_check,
    run_depth_check,
)
from pipeline.config.job_sections import TuneSection, read_weight_ranges
from pipeline.config.run_config import ConfigError, load_config
from pipeline.games.executor import InProcessExecutor
from pipeline.games.openings import load_deck
from pipeline.games.players import resolve_player
from pipeline.games.stage import StageContext, write_result
from pipeline.tuning.results import RESULT_FILE, TuneResult

GOOD = default_weights(get_variant("english"))
BAD = {**GOOD, "man": -100.0}  # a side that wants to lose its men
CHECK = TuneSection(weights=read_weight_ranges({"advance": [0, 10]}), sprt_step_pairs=4, sprt_min_pairs=4,
                    sprt_elo0=0.0, sprt_elo1=50.0, depth_nodes=1_000, depth_max_pairs=24)


def _ctx(tmp_path: Path) -> StageContext:
    deck = tuple(load_deck("english"))
    return StageContext(InProcessExecutor(), tmp_path, "run", "english", 5, 4, 80, deck)


def _tuned(run: Any, tuned: dict[str, float], seed: dict[str, float],
           accepted: bool = True) -> TuneResult:
    """A tuning result as the tuning stage writes it (its SPRT accepted ``tuned``, or kept ``seed``)."""
    result = TuneResult(variant="english", study="s", seed_weights=seed,
                        weights=tuned if accepted else seed, accepted=accepted,
                        decision="accepted" if accepted else "rejected", trials=(), best=None, sprt=None,
                        texel=None)
    write_result(run / RESULT_FILE, result.to_json())
    return result


def test_the_depth_players_are_hards_path_with_each_set_of_weights() -> None:
    specs = depth_specs("english", BAD, GOOD, 7_000)
    names = [spec.split(":")[1] for spec in specs]
    assert len(set(names)) == 2
    for spec, weights in zip(specs, (BAD, GOOD), strict=True):
        body = json.loads(spec.split(":", 2)[2])
        search = body["search"]
        assert search["node_budget"] == 7_000 and search["quiescence"] and search["max_depth"] == 64
        assert search["tt_keep"]  # english's proven search: Hard's path, not the tuning's search
        assert not any(body["weakening"].values())
        assert body["weights"] == pytest.approx(weights)
        assert resolve_player(spec, "english").game_player is not None  # a player the workers can build


def test_weights_that_lose_at_depth_are_not_played(tmp_path: Path) -> None:
    tune = _tuned(tmp_path / "run", BAD, GOOD)
    check = run_depth_check(_ctx(tmp_path), CHECK, tune)
    assert check is not None and check.nodes == 1_000
    assert check.sprt.decision == "rejected" and not check.accepted
    assert check.sprt.elo < 0 and check.sprt.pairs <= CHECK.depth_max_pairs
    batches = (tmp_path / "run" / DEPTH_STAGE).rglob("batch-*.parquet")
    assert sum(pq.read_metadata(p).num_rows for p in batches) == 2 * check.sprt.pairs
    assert level_weights(tmp_path / "run", "english", None) == GOOD  # the seed's, not the tuning's
    assert read_depth_check(tmp_path / "run") == check == DepthCheck.from_json(check.to_json())


def test_weights_that_win_at_depth_are_played(tmp_path: Path) -> None:
    tune = _tuned(tmp_path / "run", GOOD, BAD)
    check = run_depth_check(_ctx(tmp_path), CHECK, tune)
    assert check is not None and check.accepted and check.sprt.elo > 0
    assert level_weights(tmp_path / "run", "english", None) == GOOD


def test_a_finished_check_is_read_back_not_replayed(tmp_path: Path) -> None:
    tune = _tuned(tmp_path / "run", BAD, GOOD)
    first = run_depth_check(_ctx(tmp_path), CHECK, tune)
    batches = sorted((tmp_path / "run" / DEPTH_STAGE).rglob("batch-*.parquet"))
    stamps = [p.stat().st_mtime_ns for p in batches]
    assert run_depth_check(_ctx(tmp_path), CHECK, tune) == first
    assert [p.stat().st_mtime_ns for p in batches] == stamps


def test_no_check_without_a_budget_or_without_tuned_weights(tmp_path: Path) -> None:
    from dataclasses import replace

    tune = _tuned(tmp_path / "run", BAD, GOOD)
    assert run_depth_check(_ctx(tmp_path), replace(CHECK, depth_nodes=0), tune) is None
    assert level_weights(tmp_path / "run", "english", None) == BAD  # no check: the tuning's weights
    kept = _tuned(tmp_path / "run", BAD, GOOD, accepted=False)
    assert run_depth_check(_ctx(tmp_path), CHECK, kept) is None
    assert not (tmp_path / "run" / DEPTH_FILE).exists()
    assert level_weights(tmp_path / "run", "english", None) == GOOD


def test_a_damaged_check_file_is_named(tmp_path: Path) -> None:
    _tuned(tmp_path / "run", BAD, GOOD)
    write_result(tmp_path / "run" / DEPTH_FILE, {"nodes": 1000})
    with pytest.raises(ValueError, match=r"depth-check\.json: missing key 'sprt'"):
        level_weights(tmp_path / "run", "english", None)


def test_a_depth_budget_outside_its_range_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "run.toml"
    path.write_text('[run]\nname = "x"\n[job]\nvariant = "english"\n[tune]\ndepth_nodes = 500\n',
                    encoding="utf-8")
    with pytest.raises(ConfigError, match=r"depth_nodes.*must be 0 or in \[1000, 20000000\]"):
        load_config(path)


def test_the_job_plays_the_check_after_an_accepted_tuning(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    """Through `pipeline tune`: the tuning (stood in for: it accepted weights that lose) is followed
    by the depth SPRT, which the summary reports, and the levels would play the seed weights."""
    from pipeline.cli.main import main
    from pipeline.job import main_job

    from .conftest import REPO

    def accepted_tuning(ctx: StageContext, *args: object, **kwargs: object) -> TuneResult:
        return _tuned(ctx.run_folder, BAD, GOOD)

    text = (REPO / "configs" / "runs" / "tiny.toml").read_text(encoding="utf-8")
    text = text.replace("[tune]\n", "[tune]\ndepth_nodes = 1000\ndepth_max_pairs = 8\n")
    config = tmp_path / "job.toml"
    config.write_text(text, encoding="utf-8")
    monkeypatch.setattr(main_job, "run_tune", accepted_tuning)
    code = main(["tune", str(config), "--output", str(tmp_path / "out"), "--no-progress",
                 "--tracking-uri", f"sqlite:///{tmp_path}/mlflow.db"])
    out = capsys.readouterr().out
    assert code == 0
    assert "tune at depth: rejected at 1000 nodes a move" in out and "the levels play the seed weights" in out
    (found,) = (tmp_path / "out").glob(f"*/{DEPTH_FILE}")
    folder = found.parent.parent
    check = read_depth_check(folder)
    assert check is not None and check.sprt.pairs <= 8
    assert level_weights(folder, "english", None) == GOOD
