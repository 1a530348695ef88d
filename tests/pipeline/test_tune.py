"""Weight tuning: the search space, a small real study, SPRT confirmation, retried trial slots."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pipeline.config.job_sections import TuneSection, read_weight_ranges
from pipeline.games.executor import InProcessExecutor
from pipeline.games.openings import load_deck
from pipeline.games.players import inline_spec
from pipeline.games.stage import StageContext, trial_slot
from pipeline.tracking.mlflow_log import NullTracker
from pipeline.tuning.results import TuneResult
from pipeline.tuning.studies import ask_trial, open_study
from pipeline.tuning.weights import confirm, run_tune, search_space, seed_weights, tuned_weights

WEIGHTS = read_weight_ranges({"advance": [0, 10], "back_rank": 4, "center_king": [-50, 50]})
SMALL = TuneSection(weights=WEIGHTS, pairs=2, step_pairs=1, max_depth=1, node_budget=500, sprt_step_pairs=1,
                    sprt_max_pairs=3, sprt_min_pairs=1)


def _ctx(tmp_path: Path) -> StageContext:
    deck = tuple(load_deck("english"))
    return StageContext(InProcessExecutor(), tmp_path, "run", "english", 11, 2, 80, deck)


def test_search_space_and_fixed_weights() -> None:
    space, fixed = search_space(SMALL)
    assert fixed == {"back_rank": 4.0}
    assert {(p.name, p.low, p.high) for p in space} == {("weight.advance", 0.0, 10.0),
                                                      ("weight.center_king", -50.0, 50.0)}
    assert seed_weights("english", None)["man"] == 100.0


def test_seed_weights_from_a_profile() -> None:
    from engine.profile import load_profile, shipped_profile_path

    path = shipped_profile_path("english")
    hard = dict(load_profile(path).level("hard").weights)
    assert seed_weights("english", str(path)) == pytest.approx(hard)


def test_confirm_runs_an_sprt_in_steps(tmp_path: Path) -> None:
    from engine.profile import LevelProfile
    from engine.variants import get_variant

    english = get_variant("english")
    strong = inline_spec("t0007", LevelProfile.from_knobs(english, "x",
                                                          knobs={"max_depth": 3, "node_budget": 3000}))
    weak = inline_spec("seed", LevelProfile.from_knobs(english, "x",
                                                       knobs={"max_depth": 1, "node_budget": 500}))
    result = confirm(_ctx(tmp_path), "t0007", strong, weak, SMALL)
    assert result.decision in ("accepted", "rejected", "inconclusive")
    assert 1 <= result.pairs <= 3 and sum(result.pentanomial) == result.pairs
    assert result.lower < 0 < result.upper
    files = list((tmp_path / "run" / "tune" / "confirm").rglob("batch-*.parquet"))
    assert len(files) == result.pairs


def test_run_tune_finishes_the_study_and_resumes_from_its_result(tmp_path: Path) -> None:
    ctx = _ctx(tmp_path)
    study = open_study("t-tune", str(tmp_path / "journal.log"), run_seed=11, direction="maximize",
                       sampler="random")
    result = run_tune(ctx, SMALL, study, 2, seed_profile=None, tracker=NullTracker())
    assert len([t for t in result.trials if t.state == "COMPLETE"]) == 2
    assert result.decision in ("accepted", "rejected", "inconclusive",
                               "skipped: no candidate scored above the seed weights")
    assert result.accepted == (result.decision == "accepted")
    assert result.best is not None and result.texel is None  # SMALL does not seed with Texel
    stored = json.loads((tmp_path / "run" / "tune" / "result.json").read_text())
    assert stored == result.to_json() and TuneResult.from_json(stored) == result
    assert tuned_weights(tmp_path / "run", "english", None) == result.weights
    again = run_tune(ctx, SMALL, study, 5, seed_profile=None, tracker=NullTracker())
    assert again == result  # a finished stage is not redone


def test_a_retried_trial_keeps_the_slot_of_the_killed_one(tmp_path: Path) -> None:
    storage = str(tmp_path / "journal.log")
    space, _ = search_space(SMALL)
    study = open_study("s", storage, run_seed=1, direction="maximize", sampler="random")
    trial, params = ask_trial(study, space)
    assert trial_slot(study, trial) == 0  # left RUNNING: the driver "dies" here
    study = open_study("s", storage, run_seed=1, direction="maximize", sampler="random")
    retry, again = ask_trial(study, space)
    assert retry.number == 1 and again == params
    assert trial_slot(study, retry) == 0


def test_texel_fit_recovers_known_weights() -> None:
    import numpy as np

    from engine.features import FEATURE_INDEX, N_FEATURES, default_weights
    from engine.variants import get_variant
    from pipeline.tuning.texel import fit_texel

    rng = np.random.default_rng(3)
    base = default_weights(get_variant("english"))
    truth = dict(base, advance=8.0, tempo=9.0)
    x = rng.integers(-6, 7, size=(60_000, N_FEATURES)).astype(float)
    x[:, :2] = rng.integers(-1, 2, size=(60_000, 2))  # material: small, so results are not foregone
    w = np.array([truth[name] for name in sorted(FEATURE_INDEX, key=FEATURE_INDEX.get)])
    y = (rng.random(len(x)) < 1 / (1 + np.exp(-0.004 * (x @ w)))).astype(float)
    fit = fit_texel(x, y, base, read_weight_ranges({"advance": [0, 12], "tempo": [0, 10], "back_rank": 8}))
    assert fit.weights["advance"] == pytest.approx(8.0, abs=1.5)
    assert fit.weights["tempo"] == pytest.approx(9.0, abs=1.5)
    assert fit.weights["man"] == base["man"] and fit.loss_fit <= fit.loss_seed


def test_texel_positions_come_from_real_games(tmp_path: Path) -> None:
    from pipeline.games.pairings import Pairing
    from pipeline.tuning.texel import positions_from_games

    table = _ctx(tmp_path).play("ladder", [Pairing("random", "random", 1)])
    x, y = positions_from_games(table, "english", 1000, 1)
    assert x.shape[0] == y.shape[0] > 0 and x.shape[1] == 12
    assert set(y.tolist()) <= {0.0, 0.5, 1.0}
    x2, _ = positions_from_games(table, "english", 5, 1)
    assert x2.shape[0] == 5


def test_texel_seeds_a_fresh_study_from_the_ladder_games(tmp_path: Path) -> None:
    import dataclasses

    from pipeline.games.pairings import Pairing
    from pipeline.tuning.texel import TexelSeed

    section = dataclasses.replace(SMALL, texel=True, texel_max_positions=200)
    ctx = _ctx(tmp_path)
    bare = open_study("bare", str(tmp_path / "bare.log"), run_seed=11, direction="maximize", sampler="random")
    skipped = run_tune(ctx, section, bare, 1, seed_profile=None, tracker=NullTracker()).texel
    assert skipped == TexelSeed(None, 0, "no ladder games in this run folder")

    ctx = _ctx(tmp_path / "with-ladder")
    ctx.play("ladder", [Pairing("random", "random", 2)])
    study = open_study("t", str(tmp_path / "t.log"), run_seed=11, direction="maximize", sampler="random")
    texel = run_tune(ctx, section, study, 1, seed_profile=None, tracker=NullTracker()).texel
    assert texel is not None and texel.fit is not None and texel.games == 4 and texel.skipped is None
    stored = json.loads((ctx.run_folder / "tune" / "texel.json").read_text())
    assert TexelSeed.from_json(stored) == texel
    first = study.get_trials(deepcopy=False)[0]
    assert first.user_attrs.get("texel") and first.params["weight.advance"] == texel.fit.weights["advance"]
