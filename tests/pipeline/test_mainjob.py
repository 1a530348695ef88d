"""The main job: config validation, fail-fast checks, the tiny run end to end, a killed driver resumed."""

from __future__ import annotations

import json
import math
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

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
        ("calibrate", "trials", 0, "calibrate.trials = 0"),
        ("calibrate", "levels", {"name": "easy"}, "calibrate.levels = {'name': 'easy'}: expected an array of "
         "tables ([[calibrate.levels]]), got table"),
        ("calibrate", "easy_target", 600.0, "unknown key calibrate.easy_target"),
        ("tune", "weights", "advance=0:10", "tune.weights = 'advance=0:10': expected a table of feature"),
        ("calibrate", "chain_from", "expert", "calibrate.chain_from = 'expert': must be '' or one of easy"),
    ],
)
def test_bad_keys_are_config_errors_naming_them(section: str, key: str, value: object, needle: str) -> None:
    import tomllib

    from pipeline.config.run_config import parse_config

    raw = tomllib.loads(TINY.read_text())
    raw[section][key] = value
    with pytest.raises(ConfigError) as caught:
        parse_config(raw, source="tiny")
    assert needle in str(caught.value)


HARD = ('[[calibrate.levels]]\nname = "hard"\ntarget = 900.0\n'
        "knobs = { max_depth = [2, 3], node_budget = 3000 }\n")
MEDIUM = 'name = "medium"'


@pytest.mark.parametrize(
    ("old", "new", "needle"),
    [
        ("depths = [1, 2]", "depths = [2, 1]", "ladder.depths = [2, 1]: depths must be strictly increasing"),
        ("depths = [1, 2]", 'depths = [1, "2"]', "ladder.depths[1] = '2': expected int, got str"),
        ("depths = [1, 2]", "depths = [1, 65]",
         "ladder.depths = [1, 65]: depths must be strictly increasing within 1..64"),
        ("bridges = [0.5]", "bridges = [1.0]", "ladder.bridges = [1.0]: bridge random-move probabilities"),
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
        # a level's knobs: unknown, outside the declared range, wrong type, a range on a fixed-only knob
        ("knobs = { max_depth = [2, 3]", "knobs = { depth = 3, max_depth = [2, 3]",
         "calibrate.levels[2].knobs.depth = 3: unknown knob; known: max_depth, node_budget"),
        ("knobs = { max_depth = 1,", "knobs = { max_depth = 0,",
         "calibrate.levels[0].knobs.max_depth = 0: leaves the declared range [1, 64]"),
        ("knobs = { max_depth = 1,", "knobs = { max_depth = 1.5,",
         "calibrate.levels[0].knobs.max_depth = 1.5: expected int, got float"),
        ("knobs = { max_depth = 1,", "knobs = { quiescence = 1, max_depth = 1,",
         "calibrate.levels[0].knobs.quiescence = 1: expected true or false, got int"),
        ("knobs = { max_depth = [2, 3]", "knobs = { tt_log2 = [10, 12], max_depth = [2, 3]",
         "calibrate.levels[2].knobs.tt_log2 = [10, 12]: tt_log2 can only be fixed (one value), not searched"),
        ("knobs = { max_depth = [2, 3]", "knobs = { max_depth = [3, 2]",
         "calibrate.levels[2].knobs.max_depth = [3, 2]: low must be below high (one value fixes it)"),
        ("knobs = { max_depth = [2, 3], node_budget = 3000 }", "knobs = {}",
         "calibrate.levels[2].knobs = {}: give at least one knob"),
        # the levels: duplicate, order, missing target, unknown key, targets in order, all three
        (MEDIUM, 'name = "easy"', "calibrate.levels[1].name = 'easy': level 'easy' is given twice"),
        (MEDIUM, 'name = "hard"',
         "calibrate.levels[1].name = 'hard': the levels are easy, medium, hard in that order: entry 1 must "
         "be 'medium'"),
        (MEDIUM, 'name = "expert"', "calibrate.levels[1].name = 'expert': must be one of easy, medium"),
        (MEDIUM + "\n", "", "calibrate.levels[1]: missing required key name"),
        ("target = 500.0\n", "",
         "calibrate.levels[1]: missing required key target (the target Elo of medium"),
        ("target = 500.0", "target = 500.0\ntagret = 1.0",
         "calibrate.levels[1].tagret = 1.0: unknown key; a level has name, target, knobs"),
        ("target = 500.0", 'target = "500"', "calibrate.levels[1].target = '500': expected float, got str"),
        ("target = 900.0", "target = 400.0",
         "calibrate.levels[2].target = 400.0: targets must increase easy < medium < hard (medium is 500)"),
        ("target = 900.0", "target = 9000.0",
         "calibrate.levels[2].target = 9000.0: must be in [-5000, 5000]"),
        (HARD, "", "calibrate.levels: missing level 'hard': give easy, medium, hard, in that order"),
        (HARD, HARD + HARD, "calibrate.levels[3].name = 'hard': level 'hard' is given twice"),
    ],
)
def test_bad_list_values_are_config_errors(tmp_path: Path, old: str, new: str, needle: str) -> None:
    text = TINY.read_text()
    assert old in text
    with pytest.raises(ConfigError) as caught:
        load_job_config(str(_config(tmp_path, text.replace(old, new, 1))), JobOptions())
    assert str(caught.value).startswith(str(tmp_path / "job.toml") + ": ")
    assert needle in str(caught.value)


def test_levels_are_required(tmp_path: Path) -> None:
    text = TINY.read_text()
    start = text.index("[[calibrate.levels]]")
    with pytest.raises(ConfigError, match=r"missing required key calibrate\.levels \(one \[\[calibrate"):
        load_job_config(str(_config(tmp_path, text[:start] + text[text.index("[ray]"):])), JobOptions())


@pytest.mark.parametrize(
    ("old", "new", "needle"),
    [
        ("step_pairs = 2", "step_pairs = 3", "tune.step_pairs = 3: must be a multiple of job.batch_size / 2"),
        ("[tune]\n", "[tune]\nsprt_elo1 = -5.0\n", "tune.sprt_elo0 = 0.0 must be below tune.sprt_elo1"),
        ('pin = "d1"', 'pin = "d7"',
         "calibrate.pin = 'd7' is not a ladder anchor; anchors: random, d1r50, d1, d2"),
        ("confirm_step_pairs = 2", "confirm_step_pairs = 3",
         "calibrate.confirm_step_pairs = 3: must be a multiple of job.batch_size / 2"),
        ("confirm_joint_pairs = 2", 'confirm_joint_pairs = 2\nchain_from = "medium"',
         "calibrate.chain_from and calibrate.confirm_joint_pairs exclude each other"),
    ],
)
def test_cross_key_checks(tmp_path: Path, old: str, new: str, needle: str) -> None:
    config = load_job_config(str(_config(tmp_path, TINY.read_text().replace(old, new, 1))), JobOptions())
    with pytest.raises(ConfigError) as caught:
        validate_job(config)
    assert needle in str(caught.value)


@pytest.mark.parametrize(
    ("setting", "needle"),
    [("confirm_validate = true", "confirm_validate needs confirmation"),
     ('chain_from = "easy"', "chain_from = 'easy' needs confirmation")],
)
def test_validation_and_a_chain_need_confirmation(tmp_path: Path, setting: str, needle: str) -> None:
    text = TINY.read_text().replace("confirm_joint_pairs = 2", setting)
    text = text.replace("confirm_step_pairs = 2 ", "confirm_step_pairs = 0 ")
    config = load_job_config(str(_config(tmp_path, text)), JobOptions())
    with pytest.raises(ConfigError, match=needle):
        validate_job(config)


def test_bad_input_exits_2_before_any_game(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    bad = _config(tmp_path, TINY.read_text().replace("target = 900.0", "target = 100.0"))
    assert main(["run", str(bad), "--output", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1 and "targets must increase" in err

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


def _check_finished_run(folder: Path, uri: str, hard_trials: int = 2) -> dict[str, Any]:
    """Everything a finished tiny run must have; returns its calibration result."""
    from engine.profile import load_profile
    from pipeline.games.storage import read_games

    run_id = folder.name
    for stage in ("ladder", "tune/trial-0000", "calibrate/easy/trial-0000", "calibrate/medium/trial-0001",
                  f"calibrate/hard/trial-{hard_trials - 1:04d}"):
        assert list((folder / stage / "games" / "variant=english").glob("batch-*.parquet")), stage
    ladder_games = read_games(folder.parent, f"{run_id}/ladder")
    assert ladder_games.num_rows == 5 * 4 * 2  # 5 pairings (reach 2 over 4 anchors) x 4 pairs x 2 games
    assert len(set(ladder_games.column("game_id").to_pylist())) == ladder_games.num_rows
    assert _study_counts(folder, f"{run_id}-tune").get("COMPLETE") == 3
    for level, trials in (("easy", 2), ("medium", 2), ("hard", hard_trials)):
        assert _study_counts(folder, f"{run_id}-calibrate-{level}").get("COMPLETE") == trials

    runs = _mlflow_runs(uri)
    parents = {r.info.run_name: r for r in runs if "mlflow.parentRunId" not in r.data.tags}
    assert {f"{run_id}-ladder", f"{run_id}-tune", f"{run_id}-calibrate-easy", run_id} <= set(parents)
    tune_parent = parents[f"{run_id}-tune"].info.run_id
    children = [r for r in runs if r.data.tags.get("mlflow.parentRunId") == tune_parent]
    assert len([c for c in children if c.info.status == "FINISHED"]) == 3
    summary = parents[run_id]
    wanted = {"elo_easy", "elo_easy_ci_low", "elo_hard_ci_high", "nodes_per_move_medium"}
    assert wanted <= set(summary.data.metrics)
    assert summary.data.tags["config_hash"] and summary.data.tags["bench_signature"].isdigit()

    profile = load_profile(folder / "profiles" / "english.json", "english")
    assert profile.provenance.tracking_run_id == summary.info.run_id
    assert all(profile.provenance.levels[n].elo is not None for n in ("easy", "medium", "hard"))
    assert (folder / "report" / "levels.md").is_file() and (folder / "report" / "ladder.png").is_file()
    result: dict[str, Any] = json.loads((folder / "calibrate" / "result.json").read_text())
    return result


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
    anchors = json.loads((folder / "ladder.json").read_text())["anchors"]
    d1 = next(a["elo"] for a in anchors if a["name"] == "d1")
    for level, rec in result["levels"].items():
        # confirmation: one round of 2 fresh pairs against the target's bracket, and against d1
        # (the pin) when it is within 600 Elo of the target
        conf = rec["confirm"]
        assert conf["pin"] == "d1" and conf["rounds"] == 1
        assert (conf["opponents"][0] == "d1") == (abs(d1 - rec["target"]) < 600)
        assert conf["games"] == 4 * len(conf["opponents"]) + 8 == rec["games"]  # + the joint games
        assert conf["joint_stages"] == ["calibrate/joint/easy-medium", "calibrate/joint/medium-hard"]
        assert "alone" in conf and "_table" not in conf
        assert rec["elo"] == conf["elo"] and "trial_elo" in rec
        # the half-width bound (1 Elo) is never met, so every level tries a second candidate when it
        # has one: easy and medium a proposal (random_move_prob is a range), hard its other trial
        # unless the two trials are clones (same Elo and nodes: the sampler may draw depth 2 twice)
        hard_trials = {(t["elo"], t["nodes_per_move"]) for t in result["trials"]["hard"]}
        second = level != "hard" or len(hard_trials) == 2
        assert len(conf["candidates"]) == (2 if second else 1) and not rec["hit"]
    assert result["levels"]["easy"]["confirm"]["candidates"][1]["knobs"]["random_move_prob"] != \
        result["levels"]["easy"]["confirm"]["candidates"][0]["knobs"]["random_move_prob"]
    # same config again: refused without --resume, a no-op with it
    again = ["run", str(TINY), "--output", str(out), "--tracking-uri", uri, "--no-progress"]
    assert main(again) == 2
    assert "--resume" in capsys.readouterr().err
    assert main([*again, "--resume"]) == 0


@pytest.mark.slow
def test_tiny_chained_run_rates_levels_head_to_head(tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    uri = f"sqlite:///{tmp_path}/mlflow.db"
    out = tmp_path / "out"
    chain = 'chain_from = "medium"\nconfirm_validate = true'
    text = TINY.read_text().replace("confirm_joint_pairs = 2", chain)
    text = text.replace("knobs = { max_depth = [2, 3],", "knobs = { max_depth = 2,")  # hard: all fixed
    config = _config(tmp_path, text)
    code = main(["run", str(config), "--output", str(out), "--tracking-uri", uri, "--no-progress"])
    assert code == 0, capsys.readouterr().out
    folder = next(out.iterdir())
    result = _check_finished_run(folder, uri, hard_trials=1)
    assert result["chain_from"] == "medium"
    assert "Chained calibration (chain_from = medium)" in (folder / "report" / "levels.md").read_text()
    levels = result["levels"]
    medium = levels["medium"]["confirm"]
    assert medium["neighbour"] is None and medium["pin"] == "d1"
    assert set(medium["opponents"]) <= {"random", "d1r50", "d1", "d2"}  # the ladder's anchors
    assert medium["chain_half_width"] == medium["half_width"]
    medium_player = f"medium-t{int(levels['medium']['slot']):04d}"
    for level in ("easy", "hard"):
        rec = levels[level]
        conf = rec["confirm"]
        # rated against the confirmed medium alone, held at its confirmed Elo
        assert conf["opponents"] == [medium_player] == [conf["pin"]]
        assert conf["neighbour"] == {"level": "medium", "name": medium_player, "elo": medium["elo"]}
        assert conf["games"] == 4 and rec["elo"] == conf["elo"]  # one round of 2 pairs
        assert conf["chain_half_width"] == pytest.approx(math.hypot(conf["half_width"], medium["half_width"]))
        assert "chained: rated head to head against medium" in rec["description"]
        # trials: 3 x pairs pairs against medium only
        assert all(t["anchors"] == [medium_player] and t["games"] == 12 for t in result["trials"][level])
    assert len(result["trials"]["easy"]) == 2 and len(result["trials"]["hard"]) == 1  # hard: all knobs fixed
    for level, rec in levels.items():
        # validation: the chosen candidate measured again on fresh games; those numbers are reported
        conf = rec["confirm"]
        assert conf["validated"]
        assert all(st.startswith(f"calibrate/{level}/validate-") for st in conf["stages"])
        assert all(st.startswith(f"calibrate/{level}/confirm-") for st in conf["selection"]["stages"])
        assert "validated by" in rec["description"]
    assert all(t["anchors"] != [medium_player] for t in result["trials"]["medium"])
    # the exported profile says which levels were rated head to head against medium
    from engine.profile import load_profile

    provenance = load_profile(folder / "profiles" / "english.json", "english").provenance
    assert {n: lp.rated_against for n, lp in provenance.levels.items()} == {
        "easy": "medium", "medium": None, "hard": "medium"}


def _batch_files(folder: Path) -> dict[Path, int]:
    return {p: p.stat().st_mtime_ns for p in folder.rglob("batch-*.parquet")}


@pytest.mark.slow
def test_killed_driver_resumes_without_loss_or_double_counting(tmp_path: Path) -> None:
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
    ladder_before = (folder / "ladder.json").read_text()

    done = subprocess.run([*cmd, "--resume"], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    after = _batch_files(folder)
    assert all(after.get(p) == mtime for p, mtime in before.items()), "a finished batch was replayed"
    assert (folder / "ladder.json").read_text() == ladder_before

    counts = _study_counts(folder, f"{folder.name}-tune")
    assert counts.get("COMPLETE") == 6 and counts.get("FAIL", 0) <= 1 and "RUNNING" not in counts
    tune = json.loads((folder / "tune" / "result.json").read_text())
    finished = [t for t in tune["trials"] if t["state"] == "COMPLETE"]
    from pipeline.games.storage import read_games

    for trial in finished:  # each counted trial's games: exactly its pairs, once each
        games = read_games(folder.parent, f"{folder.name}/tune/trial-{trial['slot']:04d}")
        ids = games.column("game_id").to_pylist()
        assert len(ids) == len(set(ids)) >= 2 * trial["pairs"]
    assert len({t["slot"] for t in finished}) == len(finished)

    runs = _mlflow_runs(uri)
    tune_parents = [r for r in runs if r.info.run_name == f"{folder.name}-tune"]
    assert len(tune_parents) == 1  # the resumed study reuses its parent run
    result = _check_finished_run_structure(folder)
    assert set(result["levels"]) == {"easy", "medium", "hard"}


def _check_finished_run_structure(folder: Path) -> dict[str, Any]:
    from engine.profile import load_profile

    load_profile(folder / "profiles" / "english.json", "english")
    result: dict[str, Any] = json.loads((folder / "calibrate" / "result.json").read_text())
    assert {"variant", "ladder_hash", "weights", "ordered", "notes", "levels", "trials"} <= set(result)
    return result


@pytest.mark.slow
def test_tiny_run_logs_to_a_real_mlflow_server(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The whole main job against `mlflow server` on localhost (http tracking URI)."""
    from tests.pipeline.mlflow_server import running_server

    with running_server(tmp_path / "mlflow-server") as server:
        out = tmp_path / "out"
        code = main(["run", str(TINY), "--output", str(out), "--tracking-uri", server.uri, "--no-progress"])
        assert code == 0, capsys.readouterr()
        _check_finished_run(next(out.iterdir()), server.uri)


@pytest.mark.slow
def test_optuna_storage_lost_mid_run_keeps_games_and_says_how_to_resume(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The study's database goes away after the first tuning trial's games were played."""
    import sqlalchemy.exc

    import pipeline.calibration.levels
    import pipeline.tuning.studies
    import pipeline.tuning.weights

    real_tell = pipeline.tuning.studies.tell_trial
    users = [m for m in (pipeline.tuning.studies, pipeline.tuning.weights, pipeline.calibration.levels)
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
    written = _calibrate_with(tmp_path, "validate_half_width = 0.0")  # the default, written out
    changed = _calibrate_with(tmp_path, "validate_half_width = 35")
    assert default.config_hash() == written.config_hash() != changed.config_hash()
    assert default.to_dict(hashed_only=True)["calibrate"]["validate_half_width"] == 0.0
    assert changed.section("calibrate").validate_half_width == 35.0
    with pytest.raises(ConfigError, match=r"validate_half_width = 0.5: must be 0 or in \[1, 1000000\]"):
        _calibrate_with(tmp_path, "validate_half_width = 0.5")


@pytest.mark.parametrize(("section", "line"), [
    ("calibrate", "confirm_futility = 0"), ("calibrate", 'confirm_bootstrap_unit = "pair"'),
    ("calibrate", "confirm_replay_stop = false"), ("calibrate", "confirm_skip_clones = false"),
    ("job", "seed_scheme = 2"),
])
def test_keys_of_fixed_behaviour_are_unknown(tmp_path: Path, section: str, line: str) -> None:
    """The futility stop, the bootstrap over openings, the replay stop, skipping clones and stage
    seeds are how every run works: no key turns them off."""
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
                .replace("{ max_depth = [1, 2], random_move_prob = [0, 0.3], node_budget = 2000 }",
                         "{ node_budget = 2000, random_move_prob = [0.0, 0.3], max_depth = [1, 2] }")
                .replace("target = 500.0", "target = 500")
                .replace("tolerance = 1000.0", "tolerance = 1000"))
    assert shuffled != text
    other = load_job_config(str(_config(tmp_path, shuffled)), JobOptions())
    assert other.config_hash() == base.config_hash() and other.to_dict() == base.to_dict()
    assert [r.name for r in other.section("calibrate").level("medium").knobs] == [
        "max_depth", "node_budget", "random_move_prob"]  # engine.params order
    assert search_space(other.section("tune")) == search_space(base.section("tune"))
    assert other.replace("run", seed=8).config_hash() != base.config_hash()


def test_structured_values_round_trip_through_the_plain_form(tmp_path: Path) -> None:
    config = load_job_config(str(TINY), JobOptions())
    plain = config.to_dict()
    assert plain["ladder"]["depths"] == [1, 2] and plain["ladder"]["bridges"] == [0.5]
    assert plain["tune"]["weights"] == {"advance": [0.0, 10.0], "back_rank": [0.0, 20.0],
                                        "center_king": [-50.0, 50.0]}
    assert plain["calibrate"]["levels"][0] == {
        "name": "easy", "target": 200.0,
        "knobs": {"max_depth": 1, "node_budget": 1000, "random_move_prob": [0.3, 0.8]}}
    again = config.replace("calibrate", trials=3)
    assert again.section("calibrate").levels == config.section("calibrate").levels
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
    with tracker.start_study(f"{config.run_id}-ladder"):
        pass
    capsys.readouterr()  # MLflow's own lines of the set-up
    err = run("--storage", f"sqlite:///{tmp_path}/fresh.db")
    assert f"MLflow run '{config.run_id}-ladder'" in err and f"belongs to output folder {first}" in err
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
