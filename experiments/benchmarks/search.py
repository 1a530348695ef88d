"""Search benchmark: nodes/s with evaluation, Hard's depth inside its budget, time to first move.

Speeds are reported as medians over repeats of fixed searches (process CPU
time, one core); the shared machine is noisy, so every figure is measured in
the same run and printed with its spread. Usage:

    python experiments/benchmarks/search.py [--budget 200000] [--repeats 5] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from engine.features import default_weights, weight_vector
from engine.fen import parse_fen
from engine.position import Position
from engine.search import Searcher
from engine.variants import get_variant

ROOT = Path(__file__).resolve().parents[2]
DECK = ROOT / "pipeline" / "data" / "openings" / "english.json"
SHARED_DECK = ROOT.parent / "shared" / "data" / "openings" / "english-3move.json"


def ballot_positions(limit: int) -> list[Position]:
    """English 3-move ballot positions (the project's deck, else the shared one)."""
    variant = get_variant("english")
    fens: list[str] = []
    if DECK.exists():
        data = json.loads(DECK.read_text())
        fens = [entry["fen"] for entry in data["openings"]]
    elif SHARED_DECK.exists():
        fens = list(json.loads(SHARED_DECK.read_text())["standard"].values())
    if not fens:
        raise SystemExit("no english ballot deck found")
    return [parse_fen(variant, fen) for fen in fens[:limit]]


def nodes_per_second(positions: list[Position], budget: int, repeats: int) -> dict[str, float]:
    """Median nodes/s of full-strength searches (default weights, quiescence on)."""
    variant = get_variant("english")
    searcher = Searcher(variant, weight_vector(default_weights(variant)), 64, budget, True, 18)
    searcher.search(positions[0])  # compile / warm up outside the timing
    rates = []
    for _ in range(repeats):
        nodes = 0
        started = time.process_time()
        for p in positions:
            nodes += searcher.search(p).nodes
        rates.append(nodes / (time.process_time() - started))
    return {"median": statistics.median(rates), "min": min(rates), "max": max(rates)}


def hard_depths(positions: list[Position], budget: int) -> list[int]:
    """Completed iterative-deepening depth of a Hard search on each position."""
    variant = get_variant("english")
    searcher = Searcher(variant, weight_vector(default_weights(variant)), 64, budget, True, 18)
    return [searcher.search(p).depth for p in positions]


FIRST_MOVE = (
    "import time; t=time.perf_counter(); "
    "from engine.variants import get_variant; from engine.position import initial_position; "
    "from engine.features import default_weights, weight_vector; from engine.search import Searcher; "
    "v=get_variant('english'); "
    "r=Searcher(v, weight_vector(default_weights(v)), 64, 200000, True, 18).search(initial_position(v)); "
    "print(time.perf_counter()-t)"
)


def first_move_seconds(cache_dir: str) -> float:
    """Wall time from interpreter start to the first Hard move, in a fresh process."""
    env = dict(os.environ, NUMBA_CACHE_DIR=cache_dir)
    started = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", FIRST_MOVE], env=env, capture_output=True, text=True,
                         check=True, cwd=ROOT)
    total = time.perf_counter() - started
    float(out.stdout.strip())  # the in-process figure; the wall figure includes start-up
    return total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", type=int, default=200_000)
    parser.add_argument("--positions", type=int, default=40, help="ballot positions for nodes/s")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    positions = ballot_positions(1000)
    nps = nodes_per_second(positions[: args.positions], args.budget, args.repeats)
    depths = hard_depths(positions, args.budget)
    cache = tempfile.mkdtemp(prefix="numba-bench-")
    try:
        cold = first_move_seconds(cache)
        warm = statistics.median(first_move_seconds(cache) for _ in range(3))
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    report = {
        "nodes_per_second": nps,
        "hard_budget": args.budget,
        "ballot_positions": len(depths),
        "hard_depth_median": float(np.median(depths)),
        "hard_depth_min": int(min(depths)),
        "hard_depth_max": int(max(depths)),
        "first_move_cold_cache_s": cold,
        "first_move_warm_cache_s": warm,
    }
    if args.json:
        print(json.dumps(report, indent=2))
        return
    print(f"search nodes/s (english ballots, budget {args.budget}, median of {args.repeats}): "
          f"{nps['median'] / 1e6:.2f} M  (min {nps['min'] / 1e6:.2f}, max {nps['max'] / 1e6:.2f})")
    print(f"Hard depth in {args.budget} nodes over {len(depths)} ballot positions: "
          f"median {report['hard_depth_median']:.1f}, min {min(depths)}, max {max(depths)}")
    print(f"first move in a fresh process: cold numba cache {cold:.2f} s, warm {warm:.2f} s")


if __name__ == "__main__":
    main()
