"""MLflow tracking against real stores: a local sqlite file and a real ``mlflow server`` over http."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import mlflow
import pytest

from pipeline.config.run_config import parse_config
from pipeline.config.tracking_sections import MlflowSection, mlflow_section
from pipeline.games.storage_fs import store_path
from pipeline.tracking.mlflow_log import (
    LOG_NAME,
    MlflowTracker,
    NullTracker,
    TrackingUnavailable,
    check_reachable,
    level_metrics,
    main,
    make_tracker,
    metric_decimals,
    metric_name,
    read_log,
    replay_log,
    resolve_tracking_uri,
    rounded,
)

from .conftest import REPO
from .mlflow_server import MlflowServer, _alive, free_port

HASH = "c0ffee" * 10 + "abcd"
SIG = 123456


def _tracker(tmp: Path, uri: str | None, experiment: str | None = None) -> MlflowTracker:
    tracker = make_tracker(enabled=True, variant="english", run_dir=tmp / "run", uri=uri,
                           config_hash=HASH, bench_signature=SIG, engine_version="0.1.0",
                           experiment=experiment)
    assert isinstance(tracker, MlflowTracker)
    return tracker


def _study(tracker: MlflowTracker, plot: Path, trials: int = 2) -> None:
    """A tiny tuning run: a parent with study params, children with params and level metrics."""
    params = {"n_trials": trials, "sampler": "tpe"}
    with tracker.named_run("study-a", params=params, tags={"purpose": "test"}):
        for number in range(trials):
            with tracker.trial_run(number, {"max_depth": 3 + number, "weight.man": 100.0}):
                tracker.log_metrics({"value": 10.0 * number, **level_metrics(
                    "easy", elo=-200.0 + number, ci=(-250.0, -150.0), nodes_per_move=1000.0)})
            tracker.log_metrics({"best_value": 10.0 * number}, step=number)
        tracker.log_artifact(plot)


def _job(tracker: MlflowTracker, plot: Path) -> None:
    """A job tree: job run > stage run > trial runs (one pruned, one chosen) and level runs, with a
    series, a table and an artifact."""
    with tracker.named_run("job-a", params={"variant": "english"}, tags={"kind": "job"}):
        with tracker.named_run("tune", tags={"kind": "stage"}):
            for number in range(3):
                with tracker.trial_run(number, {"x": number}, {"kind": "trial"}):
                    tracker.log_series("pair_score", [(0, 2.0), (1, 0.5), (2, 1.0)][:number + 1])
                    tracker.log_metrics({"value": 0.1234567 * (number + 1)})
                    if number == 1:
                        tracker.set_tags({"state": "pruned"})
                        tracker.end_as("KILLED")
            tracker.tag_trial(2, {"chosen": "true"})
        with tracker.named_run("calibrate", tags={"kind": "stage"}):
            for level, elo in (("easy", 1234.4), ("hard", 1678.6)):
                with tracker.named_run(level, tags={"kind": "calibrated", "level": level}):
                    tracker.log_metrics({"elo": elo, "elo_ci_low": elo - 40.2, "elo_ci_high": elo + 39.7,
                                         "median_depth": 3.26, "nodes_per_move": 1234.56, "games": 40})
        tracker.log_table({"level": ["easy", "hard"], "elo": [1234.0, 1679.0]}, "levels_table.json")
        tracker.log_artifact(plot)


def _check_job(client: mlflow.MlflowClient, experiment_id: str) -> None:
    """The tree _job logs, as MLflow holds it."""
    runs = client.search_runs([experiment_id])
    by_id = {r.info.run_id: r for r in runs}
    (job,) = [r for r in runs if "mlflow.parentRunId" not in r.data.tags]
    assert job.info.run_name == "job-a" and job.info.status == "FINISHED"
    stages = {r.info.run_name: r for r in runs if r.data.tags.get("mlflow.parentRunId") == job.info.run_id}
    assert set(stages) == {"tune", "calibrate"}
    trials = sorted((r for r in runs if r.data.tags.get("mlflow.parentRunId") == stages["tune"].info.run_id),
                    key=lambda r: int(r.data.tags["trial_number"]))
    assert [t.info.status for t in trials] == ["FINISHED", "KILLED", "FINISHED"]
    assert [t.data.tags.get("chosen") for t in trials] == [None, None, "true"]
    assert [t.data.metrics["value"] for t in trials] == [0.123, 0.247, 0.37]  # 3 decimals
    history = client.get_metric_history(trials[2].info.run_id, "pair_score")
    assert sorted((m.step, m.value) for m in history) == [(0, 2.0), (1, 0.5), (2, 1.0)]
    levels = client.search_runs([experiment_id], filter_string="tags.level = 'hard'")
    (hard,) = levels
    assert by_id[hard.data.tags["mlflow.parentRunId"]].info.run_name == "calibrate"
    assert hard.data.metrics == {"elo": 1679.0, "elo_ci_low": 1638.0, "elo_ci_high": 1718.0,
                                 "median_depth": 3.3, "nodes_per_move": 1235.0, "games": 40.0}
    assert {a.path for a in client.list_artifacts(job.info.run_id)} == {"ladder.png", "levels_table.json"}
    logged = json.loads(job.data.tags["mlflow.loggedArtifacts"])
    assert {"path": "levels_table.json", "type": "table"} in logged
    with tempfile.TemporaryDirectory() as folder:  # (MlflowClient.load_table searches the global URI)
        got = client.download_artifacts(job.info.run_id, "levels_table.json", folder)
        table = json.loads(Path(got).read_text())
    assert table["columns"] == ["level", "elo"] and table["data"] == [["easy", 1234.0], ["hard", 1679.0]]


def _children(client: mlflow.MlflowClient, parent_id: str, experiment_id: str) -> list:
    runs = client.search_runs([experiment_id], filter_string=f"tags.`mlflow.parentRunId` = '{parent_id}'")
    return sorted(runs, key=lambda r: r.data.tags["trial_number"])


def _parents(client: mlflow.MlflowClient, experiment_id: str) -> list:
    return [r for r in client.search_runs([experiment_id]) if "mlflow.parentRunId" not in r.data.tags]


@pytest.fixture(autouse=True)
def _restore_http_env() -> Iterator[None]:
    """The tracker sets MLflow's HTTP retry defaults in os.environ; undo that after each test."""
    keys = ("MLFLOW_HTTP_REQUEST_MAX_RETRIES", "MLFLOW_HTTP_REQUEST_BACKOFF_FACTOR",
            "MLFLOW_HTTP_REQUEST_TIMEOUT", "MLFLOW_SUPPRESS_PRINTING_URL_TO_STDOUT")
    saved = {k: os.environ.get(k) for k in keys}
    yield
    for key, value in saved.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value


# ---- fast: names, null tracker, config, reachability ---------------------------------------


def test_metric_names_line_levels_up() -> None:
    assert metric_name("elo", "easy", "ci_low") == "elo_easy_ci_low"
    assert metric_name("nodes_per_move", "hard") == "nodes_per_move_hard"
    assert level_metrics("medium", elo=1.0, ci=(0.0, 2.0), games=40) == {
        "elo_medium": 1.0, "elo_medium_ci_low": 0.0, "elo_medium_ci_high": 2.0, "games_medium": 40.0}
    with pytest.raises(ValueError, match="Easy"):
        metric_name("elo", "Easy")


def test_metrics_keep_their_documented_precision() -> None:
    assert rounded("elo", 1234.56) == 1235.0 and rounded("elo_easy_ci_low", -12.5) == -12.0
    assert rounded("expected_score_next", 0.123456) == 0.123 and rounded("blunder_rate", 0.0456) == 0.046
    assert rounded("nodes_per_move", 987.6) == 988.0 and rounded("median_depth", 4.25) == 4.2
    assert rounded("games_per_second", 3.14159) == 3.1 and rounded("games", 40) == 40.0
    assert metric_decimals("games_per_second") == 1  # the longest prefix wins over "games"
    with pytest.raises(ValueError, match="'elox' has no documented unit"):
        rounded("elox", 1.0)
    tracker = NullTracker()
    with tracker.named_run("job"):
        with pytest.raises(ValueError, match="'speed' has no documented unit"):
            tracker.log_metrics({"speed": 1.0})
        with pytest.raises(ValueError, match=r"step 0\.5 is not an int"):
            tracker.log_series("pair_score", [(0.5, 1.0)])  # type: ignore[list-item]
        with pytest.raises(ValueError, match="columns of one length"):
            tracker.log_table({"a": [1], "b": [1, 2]}, "t.json")
        with pytest.raises(ValueError, match="run status 'PRUNED'"):
            tracker.end_as("PRUNED")


def test_null_tracker_accepts_everything(tmp_path: Path) -> None:
    tracker = make_tracker(enabled=False, variant="english", run_dir=tmp_path, config_hash=HASH,
                           bench_signature=None)
    assert isinstance(tracker, NullTracker) and not tracker.enabled
    with tracker.named_run("s", {"a": 1}) as parent, tracker.named_run("stage") as stage, \
            tracker.trial_run(0, {"x": 1}) as child:
        tracker.log_metrics({"value": 1.0}, step=0)
        tracker.log_series("pair_score", [(0, 1.5)])
        tracker.set_tags({"t": "1"})
        tracker.end_as("KILLED")
    assert parent.run_id is None and stage.run_id is None and child.run_id is None
    assert tracker.summary() == "tracking: disabled" and not list(tmp_path.iterdir())
    with pytest.raises(RuntimeError, match="named_run"):
        with tracker.trial_run(0):
            pass
    with pytest.raises(RuntimeError, match="no open run"):
        tracker.log_metrics({"value": 1.0})


def test_mlflow_section_defaults_and_validation() -> None:
    base = {"run": {"name": "t"}, "selfplay": {"variant": "english", "player_a": "random",
                                              "player_b": "random", "games": 8}}
    assert mlflow_section(parse_config(base)) == MlflowSection()
    config = parse_config({**base, "mlflow": {"tracking_uri": "http://127.0.0.1:5000", "enabled": False}})
    assert mlflow_section(config).tracking_uri == "http://127.0.0.1:5000"
    assert config.config_hash() == parse_config(base).config_hash()  # where we log changes no result
    with pytest.raises(ValueError, match=r"mlflow\.check_timeout = 0"):
        parse_config({**base, "mlflow": {"check_timeout": 0}})


def test_default_uri_is_sqlite_in_cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    assert resolve_tracking_uri() == f"sqlite:///{tmp_path.resolve() / 'mlflow.db'}"
    monkeypatch.setenv("MLFLOW_TRACKING_URI", "http://127.0.0.1:9")
    assert resolve_tracking_uri() == "http://127.0.0.1:9"
    assert resolve_tracking_uri("sqlite:///x.db") == "sqlite:///x.db"


def test_check_reachable_dead_port_fails_fast_and_names_uri() -> None:
    uri = f"http://127.0.0.1:{free_port()}"
    start = time.monotonic()
    with pytest.raises(TrackingUnavailable) as err:
        check_reachable(uri, timeout=5)
    assert time.monotonic() - start < 5
    message = str(err.value)
    assert uri in message and "unreachable" in message and "\n" not in message
    assert isinstance(err.value, ValueError)
    with pytest.raises(TrackingUnavailable, match="does not exist"):
        check_reachable("sqlite:////nonexistent-dir-xyz/mlflow.db")


# ---- sqlite in a temp cwd ----------------------------------------------------------------------


def test_default_sqlite_tracking_in_tmp_cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    plot = tmp_path / "ladder.png"
    plot.write_bytes(b"\x89PNG fake")
    tracker = _tracker(tmp_path, uri=None)
    _study(tracker, plot)
    assert not tracker.failed and "tracking: " in tracker.summary()
    assert (tmp_path / "mlflow.db").is_file()
    client = mlflow.MlflowClient(tracking_uri=f"sqlite:///{tmp_path / 'mlflow.db'}")
    exp = client.get_experiment_by_name("draughts-english")
    (parent,) = _parents(client, exp.experiment_id)
    children = _children(client, parent.info.run_id, exp.experiment_id)
    assert [c.data.params["max_depth"] for c in children] == ["3", "4"]
    assert children[1].data.metrics["elo_easy"] == -199.0
    assert parent.data.tags["config_hash"] == HASH and parent.data.tags["bench_signature"] == str(SIG)
    artifacts = [a.path for a in client.list_artifacts(parent.info.run_id)]
    assert artifacts == ["ladder.png"]
    assert (tmp_path / "mlartifacts").is_dir()  # artifacts beside the database, not in ./mlruns
    # resuming the study reuses the parent run and adds trials under it
    again = _tracker(tmp_path, uri=None)
    with again.named_run("study-a", params={"n_trials": 2}), again.trial_run(2, {"max_depth": 5}):
        again.log_metrics({"value": 3.0})
    (same,) = _parents(client, exp.experiment_id)
    assert same.info.run_id == parent.info.run_id and same.info.status == "FINISHED"
    assert len(_children(client, parent.info.run_id, exp.experiment_id)) == 3


def test_a_killed_job_resumes_in_its_own_runs(tmp_path: Path) -> None:
    """A driver killed with its job, stage and trial runs open: the next driver reuses the job and
    stage runs, fails the runs left RUNNING, and the local log of both replays as one tree."""
    uri = f"sqlite:///{tmp_path}/mlflow.db"
    driver = f"""
import os
from pipeline.tracking.mlflow_log import make_tracker
tracker = make_tracker(enabled=True, variant="english", run_dir={str(tmp_path / "run")!r}, uri={uri!r},
                       config_hash={HASH!r}, bench_signature={SIG})
with tracker.named_run("job-a"), tracker.named_run("tune"), tracker.trial_run(0, {{"x": 0}}):
    tracker.log_metrics({{"value": 0.5}})
    os._exit(0)  # killed: no run is ended
"""
    subprocess.run([sys.executable, "-c", driver], check=True, cwd=tmp_path, capture_output=True, timeout=120,
                   env={**os.environ, "PYTHONPATH": str(REPO)})
    client = mlflow.MlflowClient(tracking_uri=uri)
    exp = client.get_experiment_by_name("draughts-english").experiment_id
    left = {r.info.run_name: r for r in client.search_runs([exp])}
    assert {r.info.status for r in left.values()} == {"RUNNING"} and len(left) == 3
    job_id, stage_id = left["job-a"].info.run_id, left["tune"].info.run_id

    resumed = _tracker(tmp_path, uri)
    with resumed.named_run("job-a") as job:
        statuses = {r.info.run_name: r.info.status for r in client.search_runs([exp])}
        assert statuses == {"job-a": "RUNNING", "tune": "FAILED", "trial-0000": "FAILED"}
        with resumed.named_run("tune") as stage, resumed.trial_run(1, {"x": 1}):
            resumed.log_metrics({"value": 0.25})
        with resumed.named_run("calibrate"):
            pass
    assert (job.run_id, stage.run_id) == (job_id, stage_id)
    runs = client.search_runs([exp])
    statuses = {r.info.run_name: r.info.status for r in runs}
    assert statuses == {"job-a": "FINISHED", "tune": "FINISHED", "calibrate": "FINISHED",
                        "trial-0000": "FAILED", "trial-0001": "FINISHED"}
    parents = {r.info.run_name: r.data.tags.get("mlflow.parentRunId") for r in runs}
    assert parents["tune"] == parents["calibrate"] == job_id and parents["trial-0001"] == stage_id
    # another folder's job of the same name and config is never attached to
    other = make_tracker(enabled=True, variant="english", run_dir=tmp_path / "other", uri=uri,
                         config_hash=HASH, bench_signature=SIG)
    with other.named_run("job-a") as theirs, other.named_run("tune") as their_stage:
        pass
    assert theirs.run_id != job_id and their_stage.run_id != stage_id

    target = f"sqlite:///{tmp_path / 'replay.db'}"
    replay_log(resumed.log_path, target)
    again = mlflow.MlflowClient(tracking_uri=target)
    rexp = again.get_experiment_by_name("draughts-english").experiment_id
    rruns = again.search_runs([rexp])
    names = ["calibrate", "job-a", "trial-0000", "trial-0001", "tune"]
    assert sorted(r.info.run_name for r in rruns) == names
    ids = {r.info.run_name: r.info.run_id for r in rruns}
    rparents = {r.info.run_name: r.data.tags.get("mlflow.parentRunId") for r in rruns}
    assert rparents == {"job-a": None, "tune": ids["job-a"], "calibrate": ids["job-a"],
                        "trial-0000": ids["tune"], "trial-0001": ids["tune"]}
    assert {r.info.run_name: r.info.status for r in rruns} == statuses


# ---- a real mlflow server ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MlflowServer]:
    srv = MlflowServer(tmp_path_factory.mktemp("mlflow-server"))
    srv.start()
    try:
        yield srv
    finally:
        pids = srv.pids()
        srv.stop()
        assert not [p for p in pids if _alive(p)]


@pytest.mark.slow
def test_run_logs_parent_and_children_to_real_server(server: MlflowServer, tmp_path: Path) -> None:
    assert len(server.pids()) > 2  # uvicorn, job runner and huey consumers are there to be stopped
    plot = tmp_path / "ladder.png"
    plot.write_bytes(b"\x89PNG fake")
    tracker = _tracker(tmp_path, server.uri)
    _study(tracker, plot, trials=3)
    assert not tracker.failed
    client = mlflow.MlflowClient(tracking_uri=server.uri)
    exp = client.get_experiment_by_name("draughts-english")
    (parent,) = _parents(client, exp.experiment_id)
    assert parent.info.status == "FINISHED" and parent.info.run_name == "study-a"
    assert parent.data.params == {"n_trials": "3", "sampler": "tpe"}
    assert {"git_commit", "git_dirty", "config_hash", "bench_signature", "engine_version", "variant",
            "output_folder", "purpose"} <= set(parent.data.tags)
    assert parent.data.tags["engine_version"] == "0.1.0" and parent.data.tags["purpose"] == "test"
    history = client.get_metric_history(parent.info.run_id, "best_value")
    assert [(m.step, m.value) for m in history] == [(0, 0.0), (1, 10.0), (2, 20.0)]
    children = _children(client, parent.info.run_id, exp.experiment_id)
    assert [c.info.run_name for c in children] == ["trial-0000", "trial-0001", "trial-0002"]
    for number, child in enumerate(children):
        assert child.info.status == "FINISHED"
        assert child.data.params == {"max_depth": str(3 + number), "weight.man": "100.0"}
        assert child.data.metrics["value"] == 10.0 * number
        assert child.data.metrics["elo_easy_ci_low"] == -250.0
        assert child.data.tags["config_hash"] == HASH and child.data.tags["trial_number"] == str(number)
    local = tmp_path / "download"
    local.mkdir()
    got = client.download_artifacts(parent.info.run_id, "ladder.png", str(local))
    assert Path(got).read_bytes() == b"\x89PNG fake"  # uploaded over http to the served store


@pytest.mark.slow
def test_lost_server_mid_run_keeps_run_going_and_log_replays(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    plot = tmp_path / "ladder.png"
    plot.write_bytes(b"\x89PNG fake")
    srv = MlflowServer(tmp_path / "server")
    srv.start()
    try:
        tracker = _tracker(tmp_path, srv.uri)
        caplog.set_level(logging.WARNING, logger="pipeline.tracking.mlflow_log")
        with tracker.named_run("study-a", params={"n_trials": 4}):
            for number in range(4):
                if number == 2:
                    srv.stop()  # the tracking server dies in the middle of the run
                with tracker.trial_run(number, {"max_depth": 3 + number}):
                    tracker.log_metrics({"value": float(number), **level_metrics("easy", elo=float(number))})
                tracker.log_metrics({"best_value": float(number)}, step=number)
            tracker.log_artifact(plot)
    finally:
        srv.stop()
    assert tracker.failed
    warnings = [r for r in caplog.records
                if r.name == "pipeline.tracking.mlflow_log" and r.levelno == logging.WARNING]
    assert len(warnings) == 1 and srv.uri in warnings[0].getMessage()
    summary = tracker.summary()
    assert summary.startswith("tracking FAILED") and "replay" in summary and str(tracker.log_path) in summary
    events = read_log(tracker.log_path)
    assert tracker.log_path == tmp_path / "run" / "tracking" / LOG_NAME
    assert sum(e["op"] == "offline" for e in events) == 1
    assert sum(e["op"] == "start_run" for e in events) == 5

    target = f"sqlite:///{tmp_path / 'replay.db'}"
    ids = replay_log(tracker.log_path, target)
    assert len(ids) == 5
    client = mlflow.MlflowClient(tracking_uri=target)
    exp = client.get_experiment_by_name("draughts-english")
    (parent,) = _parents(client, exp.experiment_id)
    assert parent.data.tags["replayed_from_log"] == str(store_path(tracker.log_path))  # the log it read
    assert "replayed_from_run_id" in parent.data.tags  # the original existed before the loss
    history = client.get_metric_history(parent.info.run_id, "best_value")
    assert [(m.step, m.value) for m in history] == [(n, float(n)) for n in range(4)]
    children = _children(client, parent.info.run_id, exp.experiment_id)
    assert [c.data.params["max_depth"] for c in children] == ["3", "4", "5", "6"]
    assert [c.data.metrics["elo_easy"] for c in children] == [0.0, 1.0, 2.0, 3.0]
    assert all(c.info.status == "FINISHED" for c in children)
    assert [a.path for a in client.list_artifacts(parent.info.run_id)] == ["ladder.png"]
    assert json.loads(tracker.log_path.read_text().splitlines()[0])["op"] == "start_run"


def test_read_log_ignores_a_torn_last_line_only(tmp_path: Path) -> None:
    good = json.dumps({"op": "tags", "key": "k", "tags": {}})
    path = tmp_path / LOG_NAME
    path.write_text(f"{good}\n{good[:10]}")
    assert read_log(path) == [json.loads(good)]
    path.write_text(f"{good[:10]}\n{good}\n")
    with pytest.raises(ValueError, match=f"{LOG_NAME}:1: not a JSON event"):
        read_log(path)


def test_replay_cli_reports_an_unreachable_target(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / LOG_NAME
    path.write_text("")
    uri = f"http://127.0.0.1:{free_port()}"
    assert main(["replay", str(path), "--uri", uri]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: MLflow tracking URI") and uri in err


def test_parent_runs_of_another_output_folder_are_refused(tmp_path: Path) -> None:
    from pipeline.tracking.mlflow_log import RunOwnerError, check_run_owner

    uri = f"sqlite:///{tmp_path}/mlflow.db"
    first = make_tracker(enabled=True, variant="english", run_dir=tmp_path / "a" / "run", uri=uri,
                         config_hash=HASH, bench_signature=SIG)
    with first.named_run("run-tune"):
        pass
    a, b = str(tmp_path / "a" / "run"), str(tmp_path / "b" / "run")
    check_run_owner(uri, "draughts-english", ["run-tune", "run-ladder"], HASH, a)  # its own folder
    check_run_owner(uri, "draughts-nothing", ["run-tune"], HASH, b)  # no such experiment yet
    with pytest.raises(RunOwnerError) as caught:
        check_run_owner(uri, "draughts-english", ["run-ladder", "run-tune"], HASH, b)
    assert f"belongs to output folder {a}, not {b}" in str(caught.value)
    assert f"--resume --output {tmp_path / 'a'}" in str(caught.value)
    # a tracker for folder b never attaches to folder a's parent run, even unchecked
    second = make_tracker(enabled=True, variant="english", run_dir=tmp_path / "b" / "run", uri=uri,
                          config_hash=HASH, bench_signature=SIG)
    with second.named_run("run-tune") as ref_b:
        pass
    client = mlflow.MlflowClient(tracking_uri=uri)
    owners = {r.info.run_id: r.data.tags["output_folder"] for r in client.search_runs(
        [client.get_experiment_by_name("draughts-english").experiment_id])}
    assert owners[ref_b.run_id] == b and sorted(owners.values()) == [a, b]


@pytest.mark.slow
def test_job_tree_on_a_real_server_and_replayed(server: MlflowServer, tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    """Job > stages > trials and level runs over http: statuses, series, trial tags, rounded metrics,
    the table; the local log replays the same tree to another store."""
    plot = tmp_path / "ladder.png"
    plot.write_bytes(b"\x89PNG fake")
    tracker = _tracker(tmp_path, server.uri, experiment="job-tree")
    capsys.readouterr()
    _job(tracker, plot)
    assert not tracker.failed
    assert "View run" not in capsys.readouterr().out  # ending 8 runs printed nothing on stdout
    client = mlflow.MlflowClient(tracking_uri=server.uri)
    _check_job(client, client.get_experiment_by_name("job-tree").experiment_id)
    target = f"sqlite:///{tmp_path / 'replay.db'}"
    assert len(replay_log(tracker.log_path, target)) == 8
    again = mlflow.MlflowClient(tracking_uri=target)
    _check_job(again, again.get_experiment_by_name("job-tree").experiment_id)
