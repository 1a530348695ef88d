"""Run folders on an S3-compatible store (moto in server mode on 127.0.0.1, started per test).

Self-play and the main job write a run to ``s3://`` through pyarrow's filesystem layer, resume it
(a damaged batch file found by its checksum record and played again) and read it back.
"""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.fs as pafs
import pytest

from pipeline.cli.main import main
from pipeline.config.run_config import RunConfig, load_config
from pipeline.games.executor import InProcessExecutor
from pipeline.games.match import play_batch
from pipeline.games.records import TIMING_COLUMNS
from pipeline.games.selfplay import run_selfplay
from pipeline.games.storage import batch_path, read_games
from pipeline.games.storage_fs import store_path

from .conftest import REPO, SMOKE
from .s3_server import S3Server, s3_server  # noqa: F401 - the fixture

TINY = REPO / "configs" / "runs" / "tiny.toml"


def _objects(server: S3Server, prefix: str) -> list[str]:
    fs = pafs.S3FileSystem(endpoint_override=server.endpoint, scheme="http")
    selector = pafs.FileSelector(f"{server.bucket}/{prefix}", recursive=True, allow_not_found=True)
    infos = fs.get_file_info(selector)
    return sorted(i.path[len(server.bucket) + 1:] for i in infos if i.type == pafs.FileType.File)


def test_store_paths_on_s3(s3_server: S3Server) -> None:  # noqa: F811
    root = store_path(s3_server.uri("runs"))
    assert not root.is_local and str(root) == f"s3://{s3_server.bucket}/runs"  # options never printed
    file = root / "a" / "b.json"
    assert not file.exists()
    with pytest.raises(FileNotFoundError):
        file.read_text()
    file.write_text('{"x": 1}')
    file.write_text('{"x": 2}')  # replaced whole, never a temp object beside it
    assert json.loads(file.read_text()) == {"x": 2} and file.is_file() and (root / "a").is_dir()
    assert _objects(s3_server, "runs") == ["runs/a/b.json"]
    assert [p.relative_to(root) for p in root.glob("*/*.json")] == ["a/b.json"]
    with file.local_copy() as local:
        assert local.name == "b.json" and json.loads(local.read_text()) == {"x": 2}
    with pytest.raises(TypeError, match="not a local disk"):
        Path(file)  # local-only code never takes a remote path by accident
    file.unlink()
    assert not file.exists()


def test_selfplay_writes_resumes_and_reads_a_run_on_s3(s3_server: S3Server, smoke_config: RunConfig,  # noqa: F811
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    uri = s3_server.uri("runs")
    config = smoke_config.replace("run", output_root=uri)
    summary = run_selfplay(config, InProcessExecutor())
    assert summary.games_played == 40 and str(summary.output).startswith("s3://")
    names = _objects(s3_server, f"runs/{config.run_id}")
    assert f"runs/{config.run_id}/run.json" in names
    assert sum(n.endswith(".parquet") for n in names) == 4 and sum("/_batch-" in n for n in names) == 4
    assert not [n for n in names if n.endswith(".tmp")]
    # a batch file truncated on the store: the resume finds it by its checksum and plays it again
    victim = batch_path(uri, config.run_id, "english", 1)
    victim.write_bytes(victim.read_bytes()[:200])
    played: list[int] = []

    def counting(spec):  # type: ignore[no-untyped-def]
        played.append(spec.batch_id)
        return play_batch(spec)

    again = run_selfplay(config, InProcessExecutor(counting), resume=True)
    assert played == [1] and again.batches_skipped == 3
    assert len(again.damaged) == 1
    assert again.damaged[0].startswith("games/variant=english/batch-000001.parquet (200 bytes, ")
    games = read_games(uri, config.run_id)
    assert sorted(games.column("game_id").to_pylist()) == list(range(40))
    local = run_selfplay(smoke_config, InProcessExecutor())
    assert local.games_played == 40
    keep = [c for c in games.column_names if c not in TIMING_COLUMNS]
    here = read_games(smoke_config.run.output_root, smoke_config.run_id)
    assert games.select(keep).equals(here.select(keep))
    # the verb: resumed from the same URI, nothing to play, every game read back from the store
    assert main(["selfplay", str(SMOKE), "--output", uri, "--in-process", "--resume", "--no-progress"]) == 0
    printed = capsys.readouterr().out
    assert "40 games in the dataset" in printed and "played 0 now, 4 batches resumed" in printed
    assert f"output s3://{s3_server.bucket}/runs/{config.run_id}" in printed


def test_an_object_store_output_needs_a_study_storage(s3_server: S3Server, tmp_path: Path,  # noqa: F811
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    uri = s3_server.uri("runs")
    assert main(["run", str(TINY), "--output", uri, "--tracking-uri", f"sqlite:///{tmp_path}/m.db",
                 "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "[optuna].storage is unset" in err and "not on a local disk" in err and err.count("\n") == 1


@pytest.mark.slow
def test_main_job_writes_resumes_and_reads_a_run_on_s3(cheap_product: Path, s3_server: S3Server,  # noqa: F811
                                                      tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    uri = s3_server.uri("runs")
    args = [str(TINY), "--output", uri, "--tracking-uri", f"sqlite:///{tmp_path}/mlflow.db",
            "--storage", f"sqlite:///{tmp_path}/optuna.db", "--no-progress"]
    assert main(["ladder", *args]) == 0  # the first stage alone: a run left half done
    run_id = load_config(TINY).run_id
    assert f"runs/{run_id}/ladder.json" in _objects(s3_server, "runs")
    assert main(["run", *args]) == 2  # a run folder with results needs --resume
    assert "--resume" in capsys.readouterr().err
    assert main(["run", *args, "--resume"]) == 0
    out = capsys.readouterr().out
    assert "| easy |" in out and f"export: s3://{s3_server.bucket}/runs/{run_id}/profiles/english.json" in out
    names = _objects(s3_server, f"runs/{run_id}")
    for name in ("calibrate/result.json", "tune/result.json", "report/levels.md", "report/levels.png",
                 "profiles/english.json", "tracking/mlflow-log.jsonl", "tracking.json"):
        assert f"runs/{run_id}/{name}" in names, name
    # a finished stage's batch file damaged on the store: the next resume says which and replays it
    ladder = sorted(n for n in names if n.startswith(f"runs/{run_id}/ladder/") and n.endswith(".parquet"))
    victim = store_path(s3_server.uri(ladder[0]))
    before = victim.read_bytes()
    victim.write_bytes(before[: len(before) // 3])
    assert main(["run", *args, "--resume"]) == 0
    err = capsys.readouterr().err
    assert "damaged batch file(s)" in err and ladder[0].split(f"{run_id}/")[1] in err
    assert len(victim.read_bytes()) > len(before) // 3
    # the report verb reads the run straight from the store
    assert main(["report", run_id, "--output", uri]) == 0
    assert "| easy |" in capsys.readouterr().out
    log = store_path(s3_server.uri(f"runs/{run_id}/tracking/mlflow-log.jsonl"))
    events = [json.loads(line) for line in log.read_text().splitlines()]
    assert {e["op"] for e in events} >= {"start_run", "end_run", "artifact"}
