"""The main job: config validation, fail-fast checks, the tiny run end to end, a killed driver resumed."""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from pipeline.calibration.results import CalibrationResult, NeighbourRef
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
        ("ladder", "bridges", "0.2,0.5", "ladder.bridges = '0.2,0.5'"),
        ("job", "batch_size", 3, "job.batch_size = 3"),
        ("job", "variant", "chess", "job.variant = 'chess'"),
        ("tune", "sampler", "tpe", "unknown key tune.sampler"),
        ("optuna", "pruner", "median", "optuna.pruner = 'median'"),
        ("calibrate", "trials", 0, "calibrate.trials = 0"),
        ("calibrate", "easy_target", True, "calibrate.easy_target = True: expected float"),
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


@pytest.mark.parametrize(
    ("old", "new", "needle"),
    [
        ('depths = "1,2"', 'depths = "2,1"', "ladder.depths = '2,1': depths must be strictly increasing"),
        ('weights = "advance=0:10', 'weights = "bogus, advance=0:10', "tune.weights = 'bogus"),
        ('weights = "advance=0:10', 'weights = "advance=0:100', "leaves the declared range [-30, 30]"),
        ('easy_knobs = "max_depth=1,', 'easy_knobs = "max_depth=0:2,', "calibrate.easy_knobs"),
        ('hard_knobs = "max_depth=2:3', 'hard_knobs = "tt_log2=10:12, max_depth=2:3', "can only be fixed"),
        ('hard_knobs = "max_depth=2:3', 'hard_knobs = "max_depth=3:2', "is above high"),
    ],
)
def test_bad_list_values_are_config_errors(tmp_path: Path, old: str, new: str, needle: str) -> None:
    text = TINY.read_text()
    assert old in text
    with pytest.raises(ConfigError) as caught:
        load_job_config(str(_config(tmp_path, text.replace(old, new, 1))), JobOptions())
    assert needle in str(caught.value)


@pytest.mark.parametrize(
    ("old", "new", "needle"),
    [
        ("step_pairs = 2", "step_pairs = 3", "tune.step_pairs = 3: must be a multiple of job.batch_size / 2"),
        ("hard_target = 900.0", "hard_target = 400.0", "targets must increase"),
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
    bad = _config(tmp_path, TINY.read_text().replace("hard_target = 900.0", "hard_target = 100.0"))
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


def _check_finished_run(folder: Path, uri: str, hard_trials: int = 2) -> CalibrationResult:
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
    return _read_results(folder)


def _read_results(folder: Path) -> CalibrationResult:
    """Every result file of a run, read strictly: each is exactly what its record writes."""
    from pipeline.job.report import LevelTable
    from pipeline.ladder.reference import Ladder
    from pipeline.tuning.results import TuneResult

    files = {"calibrate/result.json": CalibrationResult, "tune/result.json": TuneResult,
             "report/levels.json": LevelTable}
    for name, record in files.items():
        data = json.loads((folder / name).read_text())
        assert record.from_json(data).to_json() == data, name  # type: ignore[attr-defined]
    ladder = json.loads((folder / "ladder.json").read_text())
    assert Ladder.from_json(ladder, "ladder.json").to_json() == ladder
    return CalibrationResult.from_json(json.loads((folder / "calibrate" / "result.json").read_text()))


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
    assert set(result.levels) == {"easy", "medium", "hard"}
    from pipeline.ladder.reference import load_ladder

    d1 = load_ladder(folder / "ladder.json").anchor("d1").elo
    for level, rec in result.levels.items():
        # confirmation: one round of 2 fresh pairs against the target's bracket, and against d1
        # (the pin) when it is within 600 Elo of the target
        conf = rec.confirmation
        assert conf is not None and conf.pin == "d1" and conf.rounds == 1
        assert (conf.opponents[0] == "d1") == (abs(d1 - rec.target) < 600)
        assert conf.games == 4 * len(conf.opponents) + 8 == rec.measured.games  # + the joint games
        assert conf.joint_stages == ("calibrate/joint/easy-medium", "calibrate/joint/medium-hard")
        assert conf.alone is not None and conf.alone.games == conf.games - 8 and not conf.alone.joint_stages
        assert rec.rating == conf.rating != conf.alone.rating
        # the half-width bound (1 Elo) is never met, so every level tries a second candidate when it
        # has one: easy and medium a proposal (random_move_prob is a range), hard its other trial
        # unless the two trials are clones (same Elo and nodes: the sampler may draw depth 2 twice)
        hard_trials = {(t.rating.elo, t.nodes_per_move) for t in result.trials["hard"]}
        second = level != "hard" or len(hard_trials) == 2
        assert len(rec.candidates) == (2 if second else 1) and not rec.measured.hit
    easy = result.levels["easy"].candidates
    assert easy[1].knobs["random_move_prob"] != easy[0].knobs["random_move_prob"]
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
    text = text.replace('hard_knobs = "max_depth=2:3,', 'hard_knobs = "max_depth=2,')  # nothing to search
    config = _config(tmp_path, text)
    code = main(["run", str(config), "--output", str(out), "--tracking-uri", uri, "--no-progress"])
    assert code == 0, capsys.readouterr().out
    folder = next(out.iterdir())
    result = _check_finished_run(folder, uri, hard_trials=1)
    assert result.chain_from == "medium"
    assert "Chained calibration (chain_from = medium)" in (folder / "report" / "levels.md").read_text()
    levels = result.levels
    medium = levels["medium"].confirmation
    assert medium is not None and medium.neighbour is None and medium.pin == "d1"
    assert set(medium.opponents) <= {"random", "d1r50", "d1", "d2"}  # the ladder's anchors
    assert medium.chain_half_width == medium.rating.half_width
    medium_player = f"medium-t{levels['medium'].candidate.slot:04d}"
    for level in ("easy", "hard"):
        rec = levels[level]
        conf = rec.confirmation
        # rated against the confirmed medium alone, held at its confirmed Elo
        assert conf is not None and conf.opponents == (medium_player,) == (conf.pin,)
        assert conf.neighbour == NeighbourRef("medium", medium_player, medium.rating.elo)
        assert conf.games == 4 and rec.rating == conf.rating  # one round of 2 pairs
        assert conf.chain_half_width == pytest.approx(math.hypot(conf.rating.half_width,
                                                                 medium.rating.half_width))
        assert "chained: rated head to head against medium" in rec.description
        # trials: 3 x pairs pairs against medium only
        assert all(t.anchors == (medium_player,) and t.games == 12 for t in result.trials[level])
    assert len(result.trials["easy"]) == 2 and len(result.trials["hard"]) == 1  # hard: all knobs fixed
    for level, rec in levels.items():
        # validation: the chosen candidate measured again on fresh games; those numbers are reported
        conf = rec.confirmation
        assert conf is not None and conf.validated and conf.selection is not None
        assert all(st.startswith(f"calibrate/{level}/validate-") for st in conf.stages)
        assert all(st.startswith(f"calibrate/{level}/confirm-") for st in conf.selection.stages)
        assert "validated by" in rec.description
    assert all(t.anchors != (medium_player,) for t in result.trials["medium"])
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
    from pipeline.games.storage import read_games
    from pipeline.tuning.results import read_tune

    tune = read_tune(folder / "tune" / "result.json")
    assert tune is not None
    finished = [t for t in tune.trials if t.state == "COMPLETE"]
    for trial in finished:  # each counted trial's games: exactly its pairs, once each
        games = read_games(folder.parent, f"{folder.name}/tune/trial-{trial.slot:04d}")
        ids = games.column("game_id").to_pylist()
        assert len(ids) == len(set(ids)) >= 2 * (trial.pairs or 0)
    assert len({t.slot for t in finished}) == len(finished)

    runs = _mlflow_runs(uri)
    tune_parents = [r for r in runs if r.info.run_name == f"{folder.name}-tune"]
    assert len(tune_parents) == 1  # the resumed study reuses its parent run
    from engine.profile import load_profile

    load_profile(folder / "profiles" / "english.json", "english")
    assert set(_read_results(folder).levels) == {"easy", "medium", "hard"}


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


def test_a_key_added_later_changes_the_hash_only_when_set(tmp_path: Path) -> None:
    text = TINY.read_text().replace("confirm_joint_pairs = 2", "confirm_joint_pairs = 0")
    without = text.replace("confirm_joint_pairs = 0", "")
    hashes = {load_job_config(str(_config(tmp_path, t)), JobOptions()).config_hash()
              for t in (text, without)}
    assert len(hashes) == 1  # at its default it stays out of the hash: old run folders still resume
    assert load_job_config(str(TINY), JobOptions()).config_hash() not in hashes


def test_seed_scheme_defaults_to_two_and_one_keeps_recorded_hashes(tmp_path: Path) -> None:
    text = TINY.read_text()
    assert "seed_scheme" not in text
    with_key = {n: text.replace('variant = "english"', f'variant = "english"\nseed_scheme = {n}', 1)
                for n in (1, 2)}
    default = load_job_config(str(_config(tmp_path, text)), JobOptions())
    one, two = (load_job_config(str(_config(tmp_path, with_key[n])), JobOptions()) for n in (1, 2))
    assert default.section("job").seed_scheme == 2 and one.section("job").seed_scheme == 1
    assert default.config_hash() == two.config_hash() != one.config_hash()
    assert "seed_scheme" not in one.to_dict(hashed_only=True)["job"]  # the legacy value: old ids hold
    assert one.to_dict()["job"]["seed_scheme"] == 1  # yet the manifest records it
    bad = text.replace('variant = "english"', 'variant = "english"\nseed_scheme = 3', 1)
    with pytest.raises(ConfigError, match=r"job.seed_scheme = 3: must be one of 1, 2"):
        load_job_config(str(_config(tmp_path, bad)), JobOptions())


def _calibrate_with(tmp_path: Path, *lines: str) -> Any:
    """The tiny config with ``lines`` added at the top of its [calibrate] section, loaded."""
    text = TINY.read_text().replace("[calibrate]", "\n".join(["[calibrate]", *lines]), 1)
    return load_job_config(str(_config(tmp_path, text)), JobOptions())


def test_confirm_futility_defaults_on_and_zero_keeps_recorded_hashes(tmp_path: Path) -> None:
    assert "confirm_futility" not in TINY.read_text()
    default = _calibrate_with(tmp_path)
    off, on = (_calibrate_with(tmp_path, f"confirm_futility = {v}") for v in ("0", "2.0"))
    assert default.section("calibrate").confirm_futility == 2.0
    assert off.section("calibrate").confirm_futility == 0
    assert default.config_hash() == on.config_hash() != off.config_hash()
    assert "confirm_futility" not in off.to_dict(hashed_only=True)["calibrate"]
    with pytest.raises(ConfigError, match=r"calibrate.confirm_futility = -1"):
        _calibrate_with(tmp_path, "confirm_futility = -1")


def test_confirm_bootstrap_unit_defaults_to_openings_and_pair_keeps_recorded_hashes(tmp_path: Path) -> None:
    from pipeline.ratings import BOOTSTRAP_UNITS

    assert "confirm_bootstrap_unit" not in TINY.read_text()
    default = _calibrate_with(tmp_path)
    by_opening, by_pair = (_calibrate_with(tmp_path, f'confirm_bootstrap_unit = "{v}"')
                           for v in BOOTSTRAP_UNITS)
    assert default.section("calibrate").confirm_bootstrap_unit == "opening"
    assert default.config_hash() == by_opening.config_hash() != by_pair.config_hash()
    assert "confirm_bootstrap_unit" not in by_pair.to_dict(hashed_only=True)["calibrate"]
    with pytest.raises(ConfigError, match=r"confirm_bootstrap_unit = 'game': must be one of opening, pair"):
        _calibrate_with(tmp_path, 'confirm_bootstrap_unit = "game"')


def test_validate_half_width_is_out_of_recorded_hashes_and_checked(tmp_path: Path) -> None:
    default = _calibrate_with(tmp_path)
    zero, set_ = (_calibrate_with(tmp_path, f"validate_half_width = {v}") for v in ("0", "35"))
    assert default.config_hash() == zero.config_hash() != set_.config_hash()
    assert set_.section("calibrate").validate_half_width == 35.0
    with pytest.raises(ConfigError, match=r"validate_half_width = 0.5: must be 0 or in \[1, 1000000\]"):
        _calibrate_with(tmp_path, "validate_half_width = 0.5")


def test_confirm_replay_stop_defaults_on_and_false_keeps_recorded_hashes(tmp_path: Path) -> None:
    default = _calibrate_with(tmp_path)
    off, on = (_calibrate_with(tmp_path, f"confirm_replay_stop = {v}") for v in ("false", "true"))
    assert default.section("calibrate").confirm_replay_stop
    assert not off.section("calibrate").confirm_replay_stop
    assert default.config_hash() == on.config_hash() != off.config_hash()
    assert "confirm_replay_stop" not in off.to_dict(hashed_only=True)["calibrate"]


def test_confirm_skip_clones_defaults_on_and_false_keeps_recorded_hashes(tmp_path: Path) -> None:
    default = _calibrate_with(tmp_path)
    off = _calibrate_with(tmp_path, "confirm_skip_clones = false")
    assert default.section("calibrate").confirm_skip_clones
    assert not off.section("calibrate").confirm_skip_clones
    assert default.config_hash() != off.config_hash()
    assert "confirm_skip_clones" not in off.to_dict(hashed_only=True)["calibrate"]
