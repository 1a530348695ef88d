"""Self-play benchmark: games/s per core by level, lockstep random games/s, Ray scaling and overhead.

Every figure is measured in this run on this machine (shared and noisy), and the
Ray figures are ratios against references measured in the same run:

- games/s per core for easy, medium and hard self-play (in-process, one core);
- lockstep random games/s with the numpy batch generator (one core);
- the same engine games on Ray with 1 worker vs 2 workers (scaling ratio);
- Ray with 1 worker vs the in-process loop on the same games (overhead).

Usage: python experiments/benchmarks/selfplay.py [--games 40] [--random-games 65536] [--json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from typing import Any

from engine.batch.playout import random_games
from engine.variants import get_variant
from pipeline.games.executor import InProcessExecutor, RayExecutor, RayOptions
from pipeline.games.match import BatchSpec, make_batch_spec
from pipeline.games.openings import load_deck
from pipeline.games.selfplay import opening_schedule


def plan(level_a: str, level_b: str, games: int, batch_size: int, seed: int) -> list[BatchSpec]:
    """Batches of english self-play between two shipped levels over the ballot deck."""
    deck = load_deck("english")
    schedule = opening_schedule(deck, seed, games // 2)
    specs = []
    for batch_id, first in enumerate(range(0, games, batch_size)):
        pairs = schedule[first // 2 : (first + batch_size) // 2]
        specs.append(make_batch_spec(
            run_id="bench", batch_id=batch_id, variant="english", player_a=level_a, player_b=level_b,
            run_seed=seed, first_game_id=first, openings=[(o.id, o.fen) for o in pairs], ply_cap=300,
        ))
    return specs


def play_all(executor: Any, specs: list[BatchSpec]) -> tuple[int, float]:
    """(games played, wall seconds) for running every batch on ``executor``."""
    started = time.perf_counter()
    games = sum(table.num_rows for _, table in executor.run(specs))
    return games, time.perf_counter() - started


def level_rates(games: int, seed: int) -> dict[str, float]:
    """In-process games/s (one core) of each level playing itself."""
    executor = InProcessExecutor()
    play_all(executor, plan("easy", "easy", 2, 2, seed))  # compile / load the kernels first
    out = {}
    for level in ("easy", "medium", "hard"):
        n = games if level != "hard" else max(2, games // 10)
        played, seconds = play_all(executor, plan(level, level, n, 2, seed))
        out[level] = played / seconds
    return out


def random_rate(n_games: int, repeats: int) -> float:
    """Median lockstep random english games/s (numpy batch generator, one process)."""
    variant = get_variant("english")
    random_games(variant, 256, seed=0)  # warm up
    rates = []
    for r in range(repeats):
        started = time.process_time()
        random_games(variant, n_games, seed=r + 1)
        rates.append(n_games / (time.process_time() - started))
    return statistics.median(rates)


def ray_figures(games: int, seed: int) -> dict[str, float]:
    """Ray scaling (2 vs 1 worker) and overhead (1 worker vs in-process) on the same medium games.

    Each Ray worker loads the numba kernels on its first task (seconds), so both workers
    are warmed up with a round of small batches before the timed run.
    """
    specs = plan("medium", "medium", games, 10, seed)
    warm = plan("easy", "easy", 8, 2, seed + 1)
    in_process = InProcessExecutor()
    play_all(in_process, warm)
    _, local_s = play_all(in_process, specs)
    out: dict[str, float] = {"in_process_s": local_s}
    for workers in (1, 2):
        executor = RayExecutor(RayOptions(num_cpus=workers, node_ip_address="127.0.0.1"))
        try:
            play_all(executor, warm)  # start the workers and load the kernels outside the timing
            _, seconds = play_all(executor, specs)
        finally:
            executor.close()
        out[f"ray_{workers}_s"] = seconds
    out["ray_scaling_2_vs_1"] = out["ray_1_s"] / out["ray_2_s"]
    out["ray_overhead"] = out["ray_1_s"] / out["in_process_s"] - 1.0
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=40, help="games per level measurement (even)")
    parser.add_argument("--ray-games", type=int, default=200, help="medium games for the Ray figures")
    parser.add_argument("--random-games", type=int, default=65536)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--skip-ray", action="store_true")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    report: dict[str, Any] = {
        "random_games_per_s": random_rate(args.random_games, args.repeats),
        "level_games_per_s_per_core": level_rates(args.games, args.seed),
    }
    if not args.skip_ray:
        report["ray"] = ray_figures(args.ray_games, args.seed)
    if args.json:
        print(json.dumps(report, indent=2))
        return
    print(f"lockstep random english games/s (one core, {args.random_games} at once): "
          f"{report['random_games_per_s']:,.0f}")
    for level, rate in report["level_games_per_s_per_core"].items():
        print(f"self-play {level:>6} vs {level:<6}: {rate:8.2f} games/s per core")
    if "ray" in report:
        ray = report["ray"]
        print(f"same games: in-process {ray['in_process_s']:.1f} s, Ray 1 worker {ray['ray_1_s']:.1f} s, "
              f"Ray 2 workers {ray['ray_2_s']:.1f} s")
        print(f"Ray scaling 2 vs 1 workers: {ray['ray_scaling_2_vs_1']:.2f}x;  "
              f"Ray overhead vs in-process: {100 * ray['ray_overhead']:+.1f} %")


if __name__ == "__main__":
    main()
