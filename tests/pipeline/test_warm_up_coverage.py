"""A node's warm-up task compiles every kernel the main job's tasks use (slow: one cold compile).

Workers of one node that meet an uncompiled kernel at the same time each compile it, so a kernel
the warm-up leaves out can compile once per worker. A fresh process with an empty numba cache
runs a node's warm-up (``_warm_node``) in two steps, the games' alone and then the job's
``warm_fns`` (which must compile something: else the check below could not fail), then the work
tasks do on that node: whole batches of other players (noise, random moves, deeper search) and a
blunder rate (the one function the job sends through ``Executor.call``). Nothing may compile
after the warm-up.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import REPO

pytestmark = pytest.mark.slow

SCRIPT = """
import dataclasses, json, sys
from engine.compiles import compiles_since, kernel_compiles
from pipeline.calibration.method import measure_blunders, warm_blunder_rate
from pipeline.calibration.product import product_levels
from pipeline.games.executor import _warm_node
from pipeline.games.match import part_of, play_batch
from pipeline.games.openings import load_deck
from pipeline.games.pairings import Pairing, plan_pairings

variant = "english"
product = product_levels(variant)
deck = load_deck(variant)

def first_spec(a, b):
    return plan_pairings("r", "s", variant, [Pairing(a, b, 2)], 1, 4, 120, deck, stage_seeds=True)[0]

warm = first_spec(product.spec("hard"), product.spec("medium"))
tiny = dataclasses.replace(part_of(warm, 0, 1), ply_cap=2)
_warm_node(play_batch, (), tiny)
games_only = kernel_compiles()
_warm_node(play_batch, (warm_blunder_rate,), tiny)
after_warm_up = kernel_compiles()
table = play_batch(first_spec(product.spec("easy"), product.spec("medium")))
measure_blunders(variant, table, product.player("easy"), 0)
print(json.dumps({"games_only": len(games_only), "warm_fns": compiles_since(games_only),
                  "later": compiles_since(after_warm_up)}))
"""


def test_the_warm_up_leaves_nothing_to_compile_for_later_tasks(tmp_path: Path) -> None:
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "numba-cache")}
    done = subprocess.run([sys.executable, "-c", SCRIPT], cwd=REPO, env=env, capture_output=True,
                          text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    measured = json.loads(done.stdout.strip().splitlines()[-1])
    assert measured["games_only"], "the warm-up compiled nothing: the cache folder was not empty"
    assert any("search_root" in k for k in measured["warm_fns"]), measured["warm_fns"]
    assert measured["later"] == {}
