"""The main job: config validation, fail-fast checks, the tiny run end to end, a killed driver resumed."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from pipeline.calibration.method import NOISY_REPEATS
from pipeline.cli.main import main
from pipeline.config.run_config import ConfigError
from pipeline.job.main_job import JobOptions, load_job_config
from pipeline.job.validate import validate_job

from .conftest import REPO

TINY = REPO / "configs" / "runs" / "tiny.toml"
QUICKSTART = REPO / "configs" / "runs" / "quickstart.toml"


def _config(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "job.toml"
    path.write_text(text)
    return path


def test_shipped_job_configs_are_valid() -> None:
    for path in (TINY, QUICKSTART):
        config = load_job_config(str(path), JobOptions())
        validate_job(config)
        assert config.run_id.startswith(path.stem)


@pytest.mark.parametrize(
    ("section", "key", "value", "needle"),
    [
        ("ladder", "deptsh", "1,2", "unknown key ladder.deptsh"),
        ("ladder", "pairs", "4", "ladder.pairs = '4': expected int"),
        ("ladder", "bridges", [0.2, 0.5],
         "ladder.bridges = [0.2, 0.5]: bridge random-move probabilities must be strictly decreasing"),
        ("ladder", "depths", "1,2", "ladder.depths = '1,2': expected an array of int, got str"),
        ("ladder", "depths", [1, True], "ladder.depths[1] = True: expected int, got bool"),
        ("ladder", "depths", [], "ladder.depths = []: give at least one depth"),
        ("job", "batch_size", 3, "job.batch_size = 3"),
        ("job", "variant", "chess", "job.variant = 'chess'"),
        ("tune", "sampler", "tpe", "unknown key tune.sampler"),
        ("optuna", "pruner", "median", "optuna.pruner = 'median'"),
        ("calibrate", "easy_trials", 0, "calibrate.easy_trials = 0"),
        ("calibrate", "trials", 4, "unknown key calibrate.trials"),
        ("calibrate", "hard_budgets", [4000, 1000],
         "calibrate.hard_budgets = [4000, 1000]: give at least two "
         "node budgets, strictly increasing"),
        ("calibrate", "hard_budgets", [4000], "calibrate.hard_budgets = [4000]: give at least two"),
        ("calibrate", "medium_noise", [10, 100],
         "calibrate.medium_noise = [10, 100]: give at least two noise "
         "values, strictly increasing from 0"),
        ("calibrate", "dial", 2, "calibrate.dial = 2: must be 0 or in [3, 50]"),
        ("run", "seed", 2**63, "run.seed = 9223372036854775808: must be in [0, 9223372036854775807]"),
        ("tune", "weights", "advance=0:10", "tune.weights = 'advance=0:10': expected a table of feature"),
    ],
)
def test_bad_keys_are_config_errors_naming_them(section: str, key: str, value: object, needle: str) -> None:
    import tomllib

    from pipeline.config.run_config import parse_config

    raw = tomllib.loads(TINY.read_text())
    raw.setdefault(section, {})[key] = value
    with pytest.raises(ConfigError) as caught:
        parse_config(raw, source="tiny")
    assert needle in str(caught.value)


@pytest.mark.parametrize(
    ("old", "new", "needle"),
    [
        # [tune.weights]: unknown feature, outside its declared range, wrong type, not a pair
        ("advance = [0, 10]", "bogus = [0, 10]",
         "tune.weights.bogus = [0, 10]: unknown feature; known: man, king"),
        ("advance = [0, 10]", "advance = [0, 100]",
         "tune.weights.advance[1] = 100: leaves the declared range [-30, 30]"),
        ("advance = [0, 10]", "advance = [10, 0]", "tune.weights.advance = [10, 0]: low must be below high"),
        ("advance = [0, 10]", 'advance = "0:10"', "tune.weights.advance = '0:10': expected float, got str"),
        ("advance = [0, 10]", "advance = [0, 5, 10]",
         "tune.weights.advance = [0, 5, 10]: a searched range is a [low, high] pair, got 3 values"),
        ("advance = [0, 10]", "advance = { low = 0 }",
         "tune.weights.advance = {'low': 0}: expected a [low, high] pair or one value, got table"),
        # [calibrate] arrays
        ("hard_budgets = [1000, 4000]", 'hard_budgets = [1000, "4000"]',
         "calibrate.hard_budgets[1] = '4000': expected int, got str"),
        ("hard_budgets = [1000, 4000]", "hard_budgets = [50, 4000]",
         "calibrate.hard_budgets = [50, 4000]: give at least two node budgets, strictly increasing "
         "within 100"),
        ("medium_noise = [0, 100]", "medium_noise = [0, 3000]",
         "calibrate.medium_noise = [0, 3000]: give at least two noise values"),
    ],
)
def test_bad_list_values_are_config_errors(tmp_path: Path, old: str, new: str, needle: str) -> None:
    text = TINY.read_text()
    assert old in text
    with pytest.raises(ConfigError) as caught:
        load_job_config(str(_config(tmp_path, text.replace(old, new, 1))), JobOptions())
    assert str(caught.value).startswith(str(tmp_path / "job.toml") + ": ")
    assert needle in str(caught.value)


@pytest.mark.parametrize(
    ("old", "new", "needle"),
    [
        ("step_pairs = 2", "step_pairs = 3", "tune.step_pairs = 3: must be a multiple of job.batch_size / 2"),
        ("[tune]\n", "[tune]\nsprt_elo1 = -5.0\n", "tune.sprt_elo0 = 0.0 must be below tune.sprt_elo1"),
        ("easy_openings = 4", "easy_openings = 5",
         "calibrate.easy_openings = 5 must be at most calibrate.openings = 4"),
        ("validation_openings = 4", "validation_openings = 400",
         "calibrate.openings + calibrate.validation_openings = 404, but the deck 'english'"),
        ('variant = "english"', 'variant = "english"\ndeck = "no-such-deck"',
         "job.deck = 'no-such-deck': no opening deck 'no-such-deck'"),
    ],
)
def test_cross_key_checks(tmp_path: Path, old: str, new: str, needle: str) -> None:
    config = load_job_config(str(_config(tmp_path, TINY.read_text().replace(old, new, 1))), JobOptions())
    with pytest.raises(ConfigError) as caught:
        validate_job(config)
    assert needle in str(caught.value)


def test_bad_input_exits_2_before_any_game(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    bad = _config(tmp_path, TINY.read_text().replace("medium_noise = [0, 100]", "medium_noise = [100, 0]"))
    assert main(["run", str(bad), "--output", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1 and "strictly increasing from 0" in err

    dead = f"sqlite:///{tmp_path}/no/such/folder/mlflow.db"
    assert main(["run", str(TINY), "--output", str(out), "--tracking-uri", dead, "--no-progress"]) == 2
    assert "MLflow tracking URI" in capsys.readouterr().err
    assert not list(out.rglob("*.parquet"))

    uri = f"sqlite:///{tmp_path}/mlflow.db"
    storage = f"sqlite:///{tmp_path}/no/such/optuna.db"
    assert main(["run", str(TINY), "--output", str(out), "--tracking-uri", uri, "--storage", storage,
                 "--no-progress"]) == 2
    assert "Optuna storage" in capsys.readouterr().err
    assert not list(out.rglob("*.parquet"))


# ---- end to end (real games, Optuna, MLflow) ------------------------------------------------


def _mlflow_runs(uri: str) -> list[Any]:
    import mlflow

    client = mlflow.MlflowClient(tracking_uri=uri)
    experiment = client.get_experiment_by_name("draughts-english")
    assert experiment is not None
    return list(client.search_runs([experiment.experiment_id], max_results=1000))


def _study_counts(folder: Path, name: str) -> dict[str, int]:
    import optuna

    storage = optuna.storages.JournalStorage(
        optuna.storages.journal.JournalFileBackend(str(folder / "optuna" / "journal.log")))
    study = optuna.load_study(study_name=name, storage=storage)
    counts: dict[str, int] = {}
    for t in study.get_trials(deepcopy=False):
        counts[t.state.name] = counts.get(t.state.name, 0) + 1
    return counts


def _check_finished_run(folder: Path, uri: str) -> dict[str, Any]:
    """Everything a finished tiny run must have; returns its calibration result."""
    from pipeline.games.schedule import read_schedules
    from pipeline.games.storage import read_games

    run_id = folder.name
    for stage in ("tune/trial-0000", "calibrate/curves", "calibrate/easy/trial-000", "calibrate/easy-axis",
                  "calibrate/validation"):
        assert list((folder / stage / "games" / "variant=english").glob("batch-*.parquet")), stage
    curves = read_games(folder.parent, f"{run_id}/calibrate/curves")
    # product easy-medium, medium-hard; 2 hard points (vs product hard, 1 neighbour pair);
    # 3 medium points (2 noise values + 5 plies: vs product medium, 2 neighbour pairs); the two
    # overlaps (weakest medium - product easy, weakest hard - strongest medium): 12 pairings on the 4
    # openings; the 4 of them between cheap players with a noisy one (product easy - product
    # medium; the noisy medium point against the product's Medium, its neighbour and the product's
    # Easy) play each opening NOISY_REPEATS times: 8 x 4 + 4 x 4 x NOISY_REPEATS pairs
    assert curves.num_rows == (8 * 4 + 4 * 4 * NOISY_REPEATS) * 2
    assert len(set(curves.column("game_id").to_pylist())) == curves.num_rows
    assert len(set(curves.column("opening_id").to_pylist())) == 4  # every pairing on the same openings
    validation = read_games(folder.parent, f"{run_id}/calibrate/validation")
    # Easy and Hard against the product's, the chain from Easy to Hard through one to four of the
    # curve's other 4 points (2 to 5 links), Medium against the product's Medium, Easy and Hard,
    # and against up to 2 chain points around its target: 7 to 12 pairings, each on the 4 openings
    pairings = Counter(zip(validation.column("player_a").to_pylist(),
                           validation.column("player_b").to_pylist(), strict=True))
    assert 7 <= len(pairings) <= 12 and set(pairings.values()) <= {4 * 2, 4 * NOISY_REPEATS * 2}
    easy = next(k for k in pairings if k[1] == "product-easy")
    assert pairings[easy] == 4 * NOISY_REPEATS * 2  # two noisy cheap players: each opening repeated
    assert len({frozenset(p) for p in pairings}) == len(pairings)  # no two players meet twice
    schedules = {s.stage: s for s in read_schedules(folder / "schedule.json")}
    assert {"tune/trials", "calibrate/curves", "calibrate/validation"} <= set(schedules)
    assert all(s.busy_share >= 0 and s.tasks >= 1 for s in schedules.values())  # a tiny stage can be ~0
    assert schedules["calibrate/curves"].busy_share > 0
    assert (folder / "report" / "schedule.md").is_file()
    task_rows = (folder / "schedule-tasks.csv").read_text().splitlines()
    assert len(task_rows) - 1 == sum(s.tasks for s in schedules.values() if s.stage == "all")
    assert not set(validation.column("opening_id").to_pylist()) & set(curves.column("opening_id").to_pylist())
    return _check_tracked(folder, uri)


def _check_tracked(folder: Path, uri: str) -> dict[str, Any]:
    """A finished tiny run's studies, MLflow runs, profile provenance and report; returns its
    calibration result."""
    from engine.profile import load_profile

    run_id = folder.name
    assert _study_counts(folder, f"{run_id}-tune").get("COMPLETE") == 3
    assert _study_counts(folder, f"{run_id}-calibrate-easy").get("COMPLETE") == 3
    layout = _check_layout(uri, run_id)
    job_run = layout["job"]
    assert job_run.data.tags["config_hash"] and job_run.data.tags["bench_signature"].isdigit()
    assert 0 < job_run.data.metrics["schedule_busy_share_calibrate_curves"]  # how busy the stage was
    assert job_run.data.metrics["schedule_tasks_calibrate_curves"] >= 1

    result: dict[str, Any] = json.loads((folder / "calibrate" / "result.json").read_text())
    profile = load_profile(folder / "profiles" / "english.json", "english")
    assert profile.provenance.tracking_run_id == job_run.info.run_id
    tune = json.loads((folder / "tune" / "result.json").read_text())
    assert layout["chosen"]["tune"] == tune["best"]["number"]
    for name in ("easy", "medium", "hard"):
        lp = profile.provenance.levels[name]
        rec = result["levels"][name]
        assert lp.elo == round(rec["elo"], 1) and lp.measures is not None  # what the run found
        assert lp.measures.nodes_per_move == round(rec["nodes_per_move"], 1)
        level_run = layout["levels"][name]
        assert level_run.data.metrics["elo"] == round(rec["elo"])  # whole Elo, as documented
        assert level_run.data.metrics["elo_ci_low"] == round(rec["ci"][0])
        assert level_run.data.metrics["nodes_per_move"] == round(rec["nodes_per_move"])
        assert level_run.data.tags["player"] == rec["player"]
        assert job_run.data.metrics[f"elo_{name}"] == round(rec["elo"])
    assert (folder / "report" / "levels.md").is_file() and (folder / "report" / "curves.png").is_file()
    _read_results(folder)
    return result


def _check_layout(uri: str, run_id: str) -> dict[str, Any]:
    """The job's MLflow tree, through the client: one job run with the stages as children, trials
    and level runs under their stage, the levels table and ladder PNG on the job run."""
    import mlflow

    client = mlflow.MlflowClient(tracking_uri=uri)
    experiment = client.get_experiment_by_name("draughts-english")
    assert experiment is not None
    runs = list(client.search_runs([experiment.experiment_id], max_results=1000))
    by_id = {r.info.run_id: r for r in runs}
    (job_run,) = [r for r in runs if "mlflow.parentRunId" not in r.data.tags]  # one parent run per job
    assert job_run.info.run_name == run_id and job_run.info.status == "FINISHED"
    assert job_run.data.tags["kind"] == "job"
    job_id = job_run.info.run_id
    stages = {r.info.run_name: r for r in runs if r.data.tags.get("mlflow.parentRunId") == job_id}
    assert set(stages) == {"tune", "calibrate"}  # tiny.toml: no Texel seed, so no ladder stage
    assert {s.data.tags["kind"] for s in stages.values()} == {"stage"}
    stage_of = {s.info.run_id: name for name, s in stages.items()}
    below = [r for r in runs if r.info.run_id != job_run.info.run_id and r.info.run_name not in stages]
    assert below and all(r.data.tags["mlflow.parentRunId"] in stage_of for r in below)  # under a stage
    trials = [r for r in below if r.data.tags["kind"] == "trial"]
    for trial in trials:
        state = trial.data.tags.get("state")
        assert trial.info.status == {"pruned": "KILLED", "complete": "FINISHED", None: "FAILED"}[state]
    counted = [t for t in trials if "state" in t.data.tags]
    per_stage = sorted(stage_of[t.data.tags["mlflow.parentRunId"]] for t in counted)
    assert per_stage == ["calibrate"] * 3 + ["tune"] * 3  # tiny.toml: 3 trials in each study
    for trial in (t for t in counted if stage_of[t.data.tags["mlflow.parentRunId"]] == "tune"):
        steps = client.get_metric_history(trial.info.run_id, "pair_score")  # Optuna's intermediate values
        assert len(steps) == len({m.step for m in steps})
        if trial.data.tags["state"] == "complete":
            assert len(steps) == trial.data.metrics["pairs"]
        else:  # stopped after the pair the pruner saw last; its step's other pairs were played too
            assert 1 <= len(steps) <= trial.data.metrics["pairs"]
    chosen = {}
    for name in ("tune", "calibrate"):
        picked = [t for t in counted if t.data.tags.get("chosen") == "true"
                  and stage_of[t.data.tags["mlflow.parentRunId"]] == name]
        assert len(picked) == 1
        chosen[name] = int(picked[0].data.tags["trial_number"])
        assert stages[name].data.tags["chosen_trial"] == str(chosen[name])
    levels = {}
    for name in ("easy", "medium", "hard"):
        found = client.search_runs([experiment.experiment_id], filter_string=f"tags.level = '{name}'")
        assert sorted(r.data.tags["kind"] for r in found) == ["calibrated", "product"]
        for r in found:
            assert {"elo", "elo_ci_low", "elo_ci_high", "games"} <= set(r.data.metrics)
            assert by_id[r.data.tags["mlflow.parentRunId"]].info.run_name == "calibrate"
            assert r.data.tags["variant"] == "english"
        levels[name] = next(r for r in found if r.data.tags["kind"] == "calibrated")
    artifacts = {a.path for a in client.list_artifacts(job_run.info.run_id)}
    assert {"levels_table.json", "level_ladder.png", "profile", "report"} <= artifacts
    return {"job": job_run, "stages": stages, "levels": levels, "chosen": chosen, "client": client}


def _read_results(folder: Path) -> None:
    """Every result file of a run, read strictly: each is exactly what its record writes."""
    from pipeline.calibration.outcome import CalibrationOutcome
    from pipeline.job.export import TrackingRecord
    from pipeline.tuning.results import TuneResult

    files = {"calibrate/result.json": CalibrationOutcome, "tune/result.json": TuneResult,
             "tracking.json": TrackingRecord}
    for name, record in files.items():
        data = json.loads((folder / name).read_text())
        assert record.from_json(data).to_json() == data, name  # type: ignore[attr-defined]


@pytest.mark.slow
def test_tiny_run_end_to_end(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    uri = f"sqlite:///{tmp_path}/mlflow.db"
    out = tmp_path / "out"
    code = main(["run", str(TINY), "--output", str(out), "--tracking-uri", uri, "--no-progress"])
    printed = capsys.readouterr().out
    assert code == 0, printed
    assert "| easy |" in printed and "export: " in printed
    folder = next(out.iterdir())
    result = _check_finished_run(folder, uri)
    assert set(result["levels"]) == {"easy", "medium", "hard"}
    assert result["anchor"] == "product-medium" and result["anchor_elo"] == 1500.0
    assert [c["level"] for c in result["claims"]] == ["hard", "easy", "medium"]
    assert result["levels"]["hard"]["player"] == "hard-4000"  # the strong end of Hard's curve
    assert result["levels"]["easy"]["profile"]["search"]["max_depth"] <= 2
    from pipeline.calibration.product import product_levels

    product_easy = dict(product_levels("english").level("easy").weights)
    assert result["levels"]["easy"]["profile"]["weights"] == product_easy  # Easy keeps the product's eval
    assert result["levels"]["medium"]["profile"]["search"]["max_depth"] in (4, 5)
    # same config again: refused without --resume, a no-op with it
    again = ["run", str(TINY), "--output", str(out), "--tracking-uri", uri, "--no-progress"]
    assert main(again) == 2
    assert "--resume" in capsys.readouterr().err
    assert main([*again, "--resume"]) == 0


def _batch_files(folder: Path) -> dict[Path, int]:
    return {p: p.stat().st_mtime_ns for p in folder.rglob("batch-*.parquet")}


@pytest.mark.slow
def test_killed_driver_resumes_without_loss_or_double_counting(cheap_product: Path, tmp_path: Path) -> None:
    text = TINY.read_text().replace("n_trials = 3", "n_trials = 6")
    config = _config(tmp_path, text)
    uri = f"sqlite:///{tmp_path}/mlflow.db"
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "pipeline", "run", str(config), "--output", str(out), "--tracking-uri", uri,
           "--no-progress"]
    proc = subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline and proc.poll() is None:
            if list(out.glob("*/tune/trial-0003/games/variant=english/batch-*.parquet")):
                break
            time.sleep(0.005)
        assert proc.poll() is None, "the run finished before it could be interrupted"
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(timeout=30)
    folder = next(out.iterdir())
    assert not (folder / "tune" / "result.json").exists()
    before = _batch_files(folder)

    done = subprocess.run([*cmd, "--resume"], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    after = _batch_files(folder)
    assert all(after.get(p) == mtime for p, mtime in before.items()), "a finished batch was replayed"

    counts = _study_counts(folder, f"{folder.name}-tune")
    assert counts.get("COMPLETE") == 6 and counts.get("FAIL", 0) <= 1 and "RUNNING" not in counts
    from pipeline.games.storage import read_games
    from pipeline.tuning.results import read_tune

    tune = read_tune(folder / "tune" / "result.json")
    assert tune is not None
    finished = [t for t in tune.trials if t.state == "COMPLETE"]
    for trial in finished:  # each counted trial's games: exactly its pairs, once each
        games = read_games(folder.parent, f"{folder.name}/tune/trial-{trial.slot:04d}")
        ids = games.column("game_id").to_pylist()
        assert trial.pairs is not None and len(ids) == len(set(ids)) >= 2 * trial.pairs
    assert len({t.slot for t in finished}) == len(finished)

    runs = _mlflow_runs(uri)
    assert len([r for r in runs if r.info.run_name == folder.name]) == 1  # the resumed job reuses its run
    assert len([r for r in runs if r.info.run_name == "tune"]) == 1  # and its stage run
    assert "RUNNING" not in {r.info.status for r in runs}
    from engine.profile import load_profile

    load_profile(folder / "profiles" / "english.json", "english")
    result: dict[str, Any] = json.loads((folder / "calibrate" / "result.json").read_text())
    assert {"variant", "anchor", "levels", "claims", "easy_trials", "curves", "openings"} <= set(result)


@pytest.mark.slow
def test_tiny_run_logs_to_a_real_mlflow_server(cheap_product: Path, tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    """The whole tiny job against `mlflow server` on localhost (http tracking URI), read back through
    the MLflow client: one job run with the stages as children, the three calibrated levels found by
    their tags with Elo and CI, the levels table and level-ladder PNG on the job run, and a pruned
    trial that is not FINISHED. The Wilcoxon pruner's p threshold is raised (0.9) so that the tiny
    job prunes a trial (with the shipped 0.1 it plays every trial to its end)."""
    from tests.pipeline.mlflow_server import running_server

    text = TINY.read_text().replace("wilcoxon_startup_steps = 2\n",
                                    "wilcoxon_startup_steps = 2\nwilcoxon_p_threshold = 0.9\n", 1)
    assert "wilcoxon_p_threshold = 0.9" in text
    config = _config(tmp_path, text)
    with running_server(tmp_path / "mlflow-server") as server:
        out = tmp_path / "out"
        code = main(["run", str(config), "--output", str(out), "--tracking-uri", server.uri, "--no-progress"])
        assert code == 0, capsys.readouterr()
        folder = next(out.iterdir())
        result = _check_tracked(folder, server.uri)
        layout = _check_layout(server.uri, folder.name)
        client, job_run = layout["client"], layout["job"]
        experiment = job_run.info.experiment_id
        for name in ("easy", "medium", "hard"):
            where = f"tags.level = '{name}' and tags.kind = 'calibrated'"
            (level,) = client.search_runs([experiment], filter_string=where)
            rec = result["levels"][name]
            got = [level.data.metrics[k] for k in ("elo", "elo_ci_low", "elo_ci_high")]
            assert got == [round(rec["elo"]), round(rec["ci"][0]), round(rec["ci"][1])]
        pruned = client.search_runs([experiment], filter_string="tags.state = 'pruned'")
        assert pruned and {r.info.status for r in pruned} == {"KILLED"}
        tune = json.loads((folder / "tune" / "result.json").read_text())
        assert {int(r.data.tags["trial_number"]) for r in pruned} == {
            t["number"] for t in tune["trials"] if t["pruned"]}
        with tempfile.TemporaryDirectory() as where:
            got = Path(client.download_artifacts(job_run.info.run_id, "levels_table.json", where))
            table = json.loads(got.read_text())
            png = Path(client.download_artifacts(job_run.info.run_id, "level_ladder.png", where)).read_bytes()
        assert png.startswith(b"\x89PNG")
        rows = [dict(zip(table["columns"], row, strict=True)) for row in table["data"]]
        assert [(r["kind"], r["level"]) for r in rows] == [
            (k, n) for k in ("calibrated", "product") for n in ("easy", "medium", "hard")]
        wanted = [round(result["levels"][n]["elo"]) for n in ("easy", "medium", "hard")]
        assert [r["elo"] for r in rows[:3]] == wanted


@pytest.mark.slow
def test_optuna_storage_lost_mid_run_keeps_games_and_says_how_to_resume(
    cheap_product: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The study's database goes away after the first tuning trial's games were played."""
    import sqlalchemy.exc

    import pipeline.calibration.method
    import pipeline.tuning.studies
    import pipeline.tuning.weights

    real_tell = pipeline.tuning.studies.tell_trial
    users = [m for m in (pipeline.tuning.studies, pipeline.tuning.weights, pipeline.calibration.method)
             if getattr(m, "tell_trial", None) is real_tell]
    assert len(users) >= 2  # the study module and the stage that tells the trial

    def lost_storage(*args: Any, **kwargs: Any) -> Any:
        raise sqlalchemy.exc.OperationalError("UPDATE trials", {}, Exception("server closed the connection"))

    for module in users:
        monkeypatch.setattr(module, "tell_trial", lost_storage)
    uri = f"sqlite:///{tmp_path}/mlflow.db"
    out = tmp_path / "out"
    argv = ["run", str(TINY), "--output", str(out), "--tracking-uri", uri, "--no-progress"]
    assert main(argv) == 1
    last = capsys.readouterr().err.strip().splitlines()[-1]  # (MLflow logs INFO lines before it)
    assert last.startswith("error: the run stopped: OperationalError") and last.endswith("--resume")
    folder = next(out.iterdir())
    saved = _batch_files(folder)
    assert any("tune" in str(p) for p in saved)  # the trial's games were written before the loss

    for module in users:
        monkeypatch.setattr(module, "tell_trial", real_tell)  # the database is back
    assert main([*argv, "--resume"]) == 0
    assert all(p.stat().st_mtime_ns == t for p, t in saved.items())  # nothing replayed or rewritten
    _check_finished_run(folder, uri)


def _calibrate_with(tmp_path: Path, *lines: str) -> Any:
    """The tiny config with ``lines`` added at the top of its [calibrate] section, loaded."""
    text = TINY.read_text().replace("[calibrate]", "\n".join(["[calibrate]", *lines]), 1)
    return load_job_config(str(_config(tmp_path, text)), JobOptions())


def test_every_hashed_key_is_in_the_hash(tmp_path: Path) -> None:
    default = _calibrate_with(tmp_path)
    written = _calibrate_with(tmp_path, "dial = 0")  # the default, written out
    changed = _calibrate_with(tmp_path, "dial = 5")
    assert default.config_hash() == written.config_hash() != changed.config_hash()
    assert default.to_dict(hashed_only=True)["calibrate"]["dial"] == 0
    assert changed.section("calibrate").dial == 5


@pytest.mark.parametrize(("section", "line"), [
    ("calibrate", 'chain_from = "medium"'), ("calibrate", 'pin = "d1"'), ("calibrate", "tolerance = 50"),
    ("calibrate", "confirm_step_pairs = 2"), ("job", "seed_scheme = 2"),
])
def test_keys_of_fixed_behaviour_are_unknown(tmp_path: Path, section: str, line: str) -> None:
    """The method's judging rules, the bootstrap over openings and stage seeds are how every run
    works: no key changes them."""
    text = TINY.read_text().replace(f"[{section}]", f"[{section}]\n{line}", 1)
    with pytest.raises(ConfigError, match=re.escape(f"unknown key {section}.{line.split()[0]} = ")):
        load_job_config(str(_config(tmp_path, text)), JobOptions())


def test_the_hash_ignores_key_order_and_number_spelling(tmp_path: Path) -> None:
    """Tables are read in declaration order and a float is a float however it is written, so the
    same settings give the same hash (and the same search) whatever the file's order."""
    from pipeline.tuning.weights import search_space

    text = TINY.read_text()
    base = load_job_config(str(_config(tmp_path, text)), JobOptions())
    weights = "advance = [0, 10]\nback_rank = [0, 20]\n"
    shuffled = (text.replace(weights, "back_rank = [0, 20]\nadvance = [0, 10]\n")
                .replace("medium_noise = [0, 100]", "medium_noise = [0.0, 100.0]"))
    assert shuffled != text
    other = load_job_config(str(_config(tmp_path, shuffled)), JobOptions())
    assert other.config_hash() == base.config_hash() and other.to_dict() == base.to_dict()
    assert search_space(other.section("tune")) == search_space(base.section("tune"))
    assert other.replace("run", seed=8).config_hash() != base.config_hash()


def test_structured_values_round_trip_through_the_plain_form(tmp_path: Path) -> None:
    config = load_job_config(str(TINY), JobOptions())
    plain = config.to_dict()
    assert plain["calibrate"]["hard_budgets"] == [1000, 4000]
    assert plain["calibrate"]["medium_noise"] == [0.0, 100.0]
    assert plain["tune"]["weights"] == {"advance": [0.0, 10.0], "back_rank": [0.0, 20.0],
                                        "center_king": [-50.0, 50.0]}
    again = config.replace("calibrate", easy_trials=5)
    assert again.section("calibrate").hard_budgets == config.section("calibrate").hard_budgets
    assert again.section("tune").weights == config.section("tune").weights


# ---- no silent reuse: each case is refused before any game ------------------------------------


def test_silent_reuse_cases_are_refused_before_any_game(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    from pipeline.tracking.mlflow_log import make_tracker
    from pipeline.tuning.studies import open_study

    config = load_job_config(str(TINY), JobOptions())
    first = tmp_path / "first" / config.run_id
    second_root = tmp_path / "second"
    uri = f"sqlite:///{tmp_path}/mlflow.db"

    def run(*extra: str) -> str:
        code = main(["run", str(TINY), "--output", str(second_root), "--tracking-uri", uri, "--no-progress",
                     *extra])
        err = capsys.readouterr().err
        assert code == 2 and err.startswith("error: ") and err.count("\n") == 1, err
        assert not list(second_root.rglob("*.parquet"))
        return err

    # the same config into a new folder, with the study storage the first run used
    storage = f"sqlite:///{tmp_path}/optuna.db"
    study = open_study(f"{config.run_id}-tune", storage, run_seed=7, owner=str(first))
    study.tell(study.ask(), 0.5)
    capsys.readouterr()
    err = run("--storage", storage)
    assert f"belongs to output folder {first}, not {second_root / config.run_id}" in err
    assert f"--resume --output {first.parent}" in err
    # ... or with the MLflow experiment the first run logged to
    tracker = make_tracker(enabled=True, variant="english", run_dir=first, uri=uri,
                           config_hash=config.config_hash(), bench_signature=1)
    with tracker.named_run(config.run_id):
        pass
    capsys.readouterr()  # MLflow's own lines of the set-up
    err = run("--storage", f"sqlite:///{tmp_path}/fresh.db")
    assert f"MLflow run '{config.run_id}'" in err and f"belongs to output folder {first}" in err
    # [ray] in_process = true (tiny.toml) with an address
    assert "[ray].in_process = true plays without Ray, but --address = '127.0.0.1:9'" in run(
        "--address", "127.0.0.1:9")
    monkeypatch.setenv("RAY_ADDRESS", "127.0.0.1:9")
    assert "but RAY_ADDRESS = '127.0.0.1:9' names a Ray cluster" in run()
    monkeypatch.delenv("RAY_ADDRESS")
    # a driver running as a Ray job with a relative output and local tracking files
    monkeypatch.setenv("RAY_JOB_CONFIG_JSON_ENV_VAR", "{}")
    monkeypatch.chdir(tmp_path)
    code = main(["run", str(TINY), "--output", "runs", "--no-progress"])
    err = capsys.readouterr().err
    assert code == 2 and "[run].output_root = 'runs' (or --output) is relative" in err
    assert "[mlflow].tracking_uri" in err and "[optuna].storage" in err


@pytest.mark.slow
def test_ctrl_c_during_the_calibration_ends_the_job_promptly(tmp_path: Path) -> None:
    """The curves play on their own thread beside Easy's study; Ctrl-C must stop both, not wait
    for the curves to finish, and say how to continue."""
    text = re.sub(r"(?m)^openings = 4$", "openings = 60", TINY.read_text())  # curves of a few minutes
    assert "openings = 60" in text
    config = _config(tmp_path, text)
    uri = f"sqlite:///{tmp_path}/mlflow.db"
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "pipeline", "run", str(config), "--output", str(out), "--tracking-uri", uri,
           "--no-progress"]
    proc = subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 600
        while time.monotonic() < deadline and proc.poll() is None:
            if list(out.glob("*/calibrate/curves/games/variant=english/batch-*.parquet")):
                break
            time.sleep(0.01)
        assert proc.poll() is None, "the run finished before it could be interrupted"
        assert not list(out.glob("*/calibrate/result.json"))
        os.kill(proc.pid, signal.SIGINT)
        interrupted = time.monotonic()
        _, err = proc.communicate(timeout=120)
        waited = time.monotonic() - interrupted
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=30)
    assert proc.returncode == 130, err[-2000:]
    assert "interrupted (finished batches are kept; rerun with --resume)" in err
    assert waited < 20, f"the job took {waited:.0f} s to stop after Ctrl-C"
    assert not list(out.glob("*/calibrate/result.json"))


def test_a_failed_tuning_stops_the_work_played_ahead(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """The product's curves play ahead beside the tuning; when the tuning fails the job must
    fail at once, stopping them, not after they have played to the end, and lift the stop so
    nothing later in the process is stopped by it."""
    import threading

    from pipeline.games import stopping
    from pipeline.job import main_job

    started, stopped = threading.Event(), threading.Event()

    def curves_for_a_minute(ctx: Any, section: Any) -> Any:  # a long stage played ahead
        started.set()
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                stopping.check_stop()
            except stopping.StopRequested:
                stopped.set()
                raise
            time.sleep(0.01)
        raise AssertionError("the curves played ahead were never stopped")

    def failing_tuning(*args: Any, **kwargs: Any) -> None:
        assert started.wait(30), "the curves never started ahead of the tuning"
        raise ValueError("the tuning broke")

    monkeypatch.setattr(main_job, "play_product_curves", curves_for_a_minute)
    monkeypatch.setattr(main_job, "play_easy", lambda *args, **kwargs: None)
    monkeypatch.setattr(main_job, "_run_tune_stage", failing_tuning)
    began = time.monotonic()
    code = main(["run", str(TINY), "--output", str(tmp_path / "out"), "--no-progress",
                 "--tracking-uri", f"sqlite:///{tmp_path}/mlflow.db"])
    waited = time.monotonic() - began
    assert code == 2 and "the tuning broke" in capsys.readouterr().err
    assert stopped.is_set() and waited < 45, f"the job took {waited:.0f} s to fail"
    assert not stopping.stop_requested()
