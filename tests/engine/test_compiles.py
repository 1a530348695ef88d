"""Kernel compilations counted per process: a compile into an empty cache counts, a load does not
(slow: the first process compiles the kernels of one Easy move, about a minute on 2 cores)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

_ONE_MOVE = """
import json
from engine.board import Board
from engine.compiles import kernel_compiles
from engine.player import Player
from engine.profile import load_level
Player(load_level("english", "easy"), seed=1).choose_move(Board("english"))
print(json.dumps(kernel_compiles()))
"""


def _one_move(cache: Path) -> dict[str, int]:
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache), "PYTHONPATH": str(REPO)}
    done = subprocess.run([sys.executable, "-c", _ONE_MOVE], env=env, capture_output=True, text=True,
                          timeout=600, check=True)
    counts: dict[str, int] = json.loads(done.stdout.splitlines()[-1])
    return counts


@pytest.mark.slow
def test_a_fresh_cache_compiles_once_and_a_warm_one_loads(tmp_path: Path) -> None:
    cache = tmp_path / "numba-cache"
    first = _one_move(cache)
    assert any("engine.kernel.search.search_root(" in k for k in first), sorted(first)[:5]
    assert set(first.values()) == {1}  # each kernel and signature compiled once
    assert _one_move(cache) == {}  # the second process loads every kernel from the cache


def test_compiles_since_counts_only_what_is_new(monkeypatch: pytest.MonkeyPatch) -> None:
    import engine.compiles

    monkeypatch.setattr(engine.compiles, "kernel_compiles", lambda: {"a(int64)": 3, "b(int64)": 1})
    assert engine.compiles.compiles_since({"a(int64)": 1}) == {"a(int64)": 2, "b(int64)": 1}
    assert engine.compiles.compiles_since({"a(int64)": 3, "b(int64)": 1}) == {}
