"""Run the kernels once with numba's bounds checking on.

numba does not check array indices by default, so an off-by-one in a kernel
corrupts memory silently. This test recompiles the kernels in a fresh process
with NUMBA_BOUNDSCHECK=1 (and no cache) and runs perft on every variant.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

SCRIPT = """
from engine.kernel.perft import perft
from engine.position import initial_position
from engine.variants import VARIANTS
from tests.engine.perft_data import PERFT_START
for v in VARIANTS:
    for bulk in (True, False):
        depth = 5 if v.board_size == 10 else 6
        n = perft(v, initial_position(v), depth, bulk=bulk)
        assert n == PERFT_START[v.name][depth - 1], (v.name, bulk, n)
print("ok")
"""


@pytest.mark.slow
def test_kernels_in_bounds() -> None:
    env = dict(os.environ, NUMBA_BOUNDSCHECK="1", NUMBA_DISABLE_CACHING="1")
    done = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip().endswith("ok")
