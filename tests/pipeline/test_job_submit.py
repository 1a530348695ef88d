"""docs/cluster.md's recipe, as a user runs it: the main job through `ray job submit` (slow).

A Ray head on 127.0.0.2 with its dashboard (which serves job submission), PostgreSQL for the
study and a real `mlflow server` for tracking, all on loopback. The job uploads the project as
its working dir and runs the tiny config (without its in-process switch) with the recipe's
options. It must finish with everything in the durable places the options name: the run folder
(an absolute path), the study in PostgreSQL, the runs on the MLflow server, kernels in the numba
cache folder of the recipe's env_vars, which starts empty: with three trials in flight on two
nodes, each node compiles every kernel at most once (the run's own count, ``schedule.json``).
The same submission without a tracking URI is refused before any game with the one-line error
naming the key. Every process started is stopped.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from pipeline.games.schedule import SCHEDULE_FILE, most_compiles, read_compiles

from .conftest import REPO
from .mlflow_server import MlflowServer
from .pg_server import throwaway_postgres
from .ray_helpers import LoopbackCluster

pytestmark = pytest.mark.slow

EXCLUDES = ["runs/", "mlruns/", "mlartifacts/", "mlflow.db", "**/__pycache__/", "experiments/", ".git/"]


def _config(folder: Path) -> Path:
    """configs/runs/tiny.toml without ``[ray] in_process`` (a Ray job plays on its cluster), with
    its three trials in flight together."""
    text = (REPO / "configs" / "runs" / "tiny.toml").read_text()
    text = re.sub(r"\[ray\]\s*\nin_process = true\s*\n?", "", text)
    assert "in_process" not in text
    text = text.replace("[optuna]\n", "[optuna]\nparallel_trials = 3\n")
    assert "parallel_trials = 3" in text
    path = folder / "cluster-tiny.toml"
    path.write_text(text)
    return path


def _submit(cluster: LoopbackCluster, env: dict[str, str], cache: Path, args: list[str],
            timeout: float) -> subprocess.CompletedProcess[str]:
    runtime = {"working_dir": str(REPO), "excludes": EXCLUDES, "env_vars": {"NUMBA_CACHE_DIR": str(cache)}}
    ray_cli = shutil.which("ray", path=str(Path(sys.executable).parent)) or "ray"
    cmd = [ray_cli, "job", "submit", "--address", cluster.dashboard_url,
           "--runtime-env-json", json.dumps(runtime), "--", "python", "-m", "pipeline", *args]
    return subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=timeout)


def test_main_job_as_a_ray_job_with_postgresql_and_an_mlflow_server(tmp_path: Path) -> None:
    cluster = LoopbackCluster()
    root = Path(tempfile.mkdtemp(prefix="pg", dir="/tmp"))  # the server runs as user postgres
    server = MlflowServer(tmp_path / "mlflow")
    try:
        with throwaway_postgres(root) as storage:
            server.start()
            env = {**cluster.env, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
            cluster.env = env  # `ray start` from this interpreter's folder: the job's `python` is ours
            cluster.start_head(cpus=2, dashboard=True)
            cluster.start_node(cpus=2)
            config, out, cache = _config(tmp_path), tmp_path / "runs", tmp_path / "numba-cache"

            refused = _submit(cluster, env, cache, ["run", str(config), "--no-progress", "--output", str(out),
                                                    "--storage", storage], timeout=300)
            assert refused.returncode != 0
            assert "[mlflow].tracking_uri (or MLFLOW_TRACKING_URI) is" in refused.stdout + refused.stderr
            assert not out.exists()  # refused before any game

            done = _submit(cluster, env, cache, ["run", str(config), "--no-progress", "--output", str(out),
                                                 "--storage", storage, "--tracking-uri", server.uri],
                           timeout=1500)
            assert done.returncode == 0, (done.stdout + done.stderr)[-4000:]
            assert "succeeded" in (done.stdout + done.stderr).lower()

            (run,) = list(out.iterdir())
            assert (run / "calibrate" / "result.json").is_file()
            assert (run / "profiles" / "english.json").is_file()
            assert not (run / "optuna").exists()  # the study went to PostgreSQL, not a journal file

            import mlflow
            import optuna

            study = optuna.load_study(study_name=f"{run.name}-tune", storage=storage)
            assert len([t for t in study.trials if t.state.name == "COMPLETE"]) == 3
            client = mlflow.MlflowClient(tracking_uri=server.uri)
            experiment = client.get_experiment_by_name("draughts-english")
            assert experiment is not None
            runs = client.search_runs([experiment.experiment_id])
            assert runs and all(r.data.tags.get("output_folder") == str(run) for r in runs)
            assert any(cache.rglob("*.nbi"))  # the tasks compiled into the recipe's cache folder
            compiles = read_compiles(run / SCHEDULE_FILE)
            assert compiles, "an empty cache folder, yet no node compiled a kernel"
            assert set(compiles) <= {"127.0.0.2", "127.0.0.3"}, compiles.keys()
            assert most_compiles(compiles) == 1, {
                node: {k: n for k, n in counts.items() if n > 1} for node, counts in compiles.items()}
    finally:
        cluster.stop()
        server.stop()
        shutil.rmtree(root, ignore_errors=True)
    assert not cluster.pids()
    assert not server.pids()
