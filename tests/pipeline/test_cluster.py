"""A real two-node Ray cluster on loopback addresses, driven through RAY_ADDRESS (slow)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from engine.profile import LevelProfile
from engine.variants import get_variant
from pipeline.games.storage import read_games

from .conftest import REPO
from .ray_helpers import LoopbackCluster, _cmdline

pytestmark = pytest.mark.slow


def _pipeline(args: list[str], env: dict[str, str], timeout: float) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pipeline", *args], cwd=REPO, env=env, capture_output=True,
                          text=True, timeout=timeout)


def test_two_node_loopback_cluster(tmp_path: Path) -> None:
    cluster = LoopbackCluster()
    try:
        cluster.start()
        config = tmp_path / "cluster.toml"
        # tasks are sized by declared work: a 100k-node searcher against random gives 80 games
        # four tasks (about 60 estimated CPU-seconds, tasks of at least 14), so both nodes get some
        level = LevelProfile.from_knobs(get_variant("english"), "budget", None,
                                        {"max_depth": 64, "node_budget": 100_000})
        spec = "inline:budget:" + json.dumps(level.to_json(), separators=(",", ":"))
        config.write_text(
            '[run]\nname = "cluster"\nseed = 5\n'
            f"[selfplay]\nvariant = \"english\"\nplayer_a = '{spec}'\nplayer_b = \"random\"\n"
            "games = 80\nbatch_size = 10\nmax_in_flight = 4\n"
        )
        env = {**cluster.env, "RAY_ADDRESS": cluster.address}
        out = tmp_path / "out"
        done = _pipeline(["selfplay", str(config), "--output", str(out), "--no-progress"], env, 300)
        assert done.returncode == 0, done.stderr[-3000:]
        assert "80 games in the dataset" in done.stdout
        placement = done.stdout.split("batches per node:")[1]
        assert "127.0.0.2:" in placement and "127.0.0.3:" in placement, done.stdout  # both nodes worked
        run_dirs = list((tmp_path / "out").iterdir())
        games = read_games(tmp_path / "out", run_dirs[0].name)
        assert sorted(games.column("game_id").to_pylist()) == list(range(80))
        left = cluster.pids()
        assert any("ray.util.client.server" in _cmdline(pid) for pid in left)  # the finder sees daemons
    finally:
        cluster.stop()
    assert not cluster.pids()
