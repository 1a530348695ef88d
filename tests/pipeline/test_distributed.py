"""Ray fan-out on a private local Ray: same games as in-process, a SIGKILLed worker (slow)."""

from __future__ import annotations

import dataclasses
import functools
import os
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from pipeline.config.run_config import RunConfig
from pipeline.games.executor import InProcessExecutor, RayExecutor, RayOptions
from pipeline.games.records import TIMING_COLUMNS
from pipeline.games.selfplay import run_selfplay
from pipeline.games.storage import read_games

from .ray_helpers import pid_reporting_batch

pytestmark = pytest.mark.slow

LOCAL = RayOptions(num_cpus=2, node_ip_address="127.0.0.2", max_in_flight=3)


@pytest.fixture(scope="module")
def ray_session() -> Iterator[RayExecutor]:
    """One private local Ray for the module (starting Ray costs seconds here)."""
    executor = RayExecutor(LOCAL)
    yield executor
    executor.close()


def test_ray_run_equals_in_process_run(
    ray_session: RayExecutor, smoke_config: RunConfig, tmp_path: Path
) -> None:
    executor = RayExecutor(LOCAL)  # joins the module's session instead of starting another
    summary = run_selfplay(smoke_config, executor)
    assert summary.games_played == 40 and executor.batches_by_node == {"127.0.0.2": 4}
    local = smoke_config.replace("run", output_root=str(tmp_path / "local"))
    run_selfplay(local, InProcessExecutor())
    a = read_games(smoke_config.run.output_root, smoke_config.run_id)
    b = read_games(local.run.output_root, local.run_id)
    keep = [c for c in a.column_names if c not in TIMING_COLUMNS]
    assert a.num_rows == 40 and a.select(keep).equals(b.select(keep))


def test_split_batches_are_joined_into_the_same_files(
    ray_session: RayExecutor, smoke_config: RunConfig, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pipeline.games import sizing

    monkeypatch.setattr(sizing, "MIN_TASK_GAMES", 2)  # with a tiny target: every pair its own task
    split = smoke_config.replace("run", output_root=str(tmp_path / "split"))
    summary = run_selfplay(split, RayExecutor(dataclasses.replace(LOCAL, task_seconds=1e-6)))
    assert summary.games_played == 40
    local = smoke_config.replace("run", output_root=str(tmp_path / "local"))
    run_selfplay(local, InProcessExecutor())
    a = read_games(split.run.output_root, split.run_id)
    b = read_games(local.run.output_root, local.run_id)
    keep = [c for c in a.column_names if c not in TIMING_COLUMNS]
    assert a.num_rows == 40 and a.select(keep).equals(b.select(keep))


def test_sigkilled_worker_is_retried_without_loss_or_duplicates(
    ray_session: RayExecutor, smoke_config: RunConfig, tmp_path: Path
) -> None:
    pid_dir = tmp_path / "pids"
    pid_dir.mkdir()
    config = smoke_config.replace("selfplay", games=80)
    killed: list[int] = []

    def kill_one_worker() -> None:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            files = sorted(pid_dir.iterdir())
            if files:
                pid = int(files[0].name.split("-")[1])
                assert pid != os.getpid()  # a worker, never the driver
                os.kill(pid, signal.SIGKILL)
                killed.append(pid)
                return
            time.sleep(0.01)

    killer = threading.Thread(target=kill_one_worker)
    killer.start()
    executor = RayExecutor(LOCAL, batch_fn=functools.partial(pid_reporting_batch, str(pid_dir), 1.0))
    summary = run_selfplay(config, executor)
    killer.join()
    assert killed, "no worker was killed"
    games = read_games(config.run.output_root, config.run_id)
    ids = games.column("game_id").to_pylist()
    assert games.num_rows == 80 and sorted(ids) == list(range(80))
    assert summary.games_played == 80
    starts: dict[str, set[str]] = {}
    for f in pid_dir.iterdir():
        batch, pid = f.name.split("-")
        starts.setdefault(batch, set()).add(pid)
    assert any(len(pids) > 1 for pids in starts.values()), "the killed batch was not retried"


def test_sigkilled_worker_during_tuning_changes_nothing(ray_session: RayExecutor, tmp_path: Path) -> None:
    """Kill a Ray worker mid-study: same trials, same scores, same SPRT decision and Elo."""
    from pipeline.config.job_sections import TuneSection, read_weight_ranges
    from pipeline.games.openings import load_deck
    from pipeline.games.stage import StageContext
    from pipeline.tracking.mlflow_log import NullTracker
    from pipeline.tuning.studies import open_study
    from pipeline.tuning.weights import run_tune

    weights = read_weight_ranges({"advance": [0, 10], "back_rank": 4, "center_king": [-50, 50]})
    section = TuneSection(weights=weights, pairs=2, step_pairs=1,
                          max_depth=1, node_budget=500, sprt_step_pairs=1, sprt_max_pairs=3,
                          sprt_min_pairs=1)
    deck = tuple(load_deck("english"))

    def tune(folder: Path, executor: object) -> dict[str, object]:
        ctx = StageContext(executor, folder, "run", "english", 11, 2, 80, deck)  # type: ignore[arg-type]
        study = open_study("t-tune", str(folder / "journal.log"), run_seed=11, direction="maximize",
                           sampler="random")
        return run_tune(ctx, section, study, 2, seed_profile=None, tracker=NullTracker())

    calm = tune(tmp_path / "calm", InProcessExecutor())
    pid_dir = tmp_path / "pids"
    pid_dir.mkdir()
    killed: list[int] = []

    def kill_one_worker() -> None:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not killed:
            files = sorted(pid_dir.iterdir())
            if files:
                pid = int(files[0].name.split("-")[1])
                assert pid != os.getpid()
                os.kill(pid, signal.SIGKILL)
                killed.append(pid)
            time.sleep(0.01)

    killer = threading.Thread(target=kill_one_worker)
    killer.start()
    executor = RayExecutor(LOCAL, batch_fn=functools.partial(pid_reporting_batch, str(pid_dir), 0.5))
    stormy = tune(tmp_path / "stormy", executor)
    killer.join()
    assert killed, "no worker was killed"
    assert stormy == calm
