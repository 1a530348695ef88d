"""Self-play benchmark: search speed of self-play against engine bench, lockstep random games, Ray.

Every figure is measured in this run on this machine (shared and noisy), and every speed is
also given as a ratio against a reference measured in the same run:

- per level (shipped english easy, medium, hard; the english-baseline levels; one brazilian and
  one international level), self-play of the level against itself through ``play_batch`` (the
  compiled game runner): games per CPU-second and search nodes per CPU-second, the ratio of the
  latter to this run's ``engine bench`` nodes per CPU-second, and the speed-up over
  ``play_batch_per_move`` (the per-move path through Board and Player.choose_move) on the same
  games. CPU time (``time.process_time``) on both sides of every ratio: on a shared machine wall
  time mostly measures the other processes;
- lockstep random games/s with the numpy batch generator (one core);
- the same engine games on Ray with 1 worker vs 2 workers (scaling ratio);
- Ray with 1 worker vs the in-process loop on the same games (overhead).

Usage: python experiments/benchmarks/selfplay.py [--games 20] [--skip-ray] [--json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from typing import Any

from engine.batch.playout import random_games
from engine.bench import run_bench
from engine.profile import profile_dir
from engine.variants import get_variant
from pipeline.games.executor import InProcessExecutor, RayExecutor, RayOptions
from pipeline.games.match import BatchSpec, make_batch_spec, play_batch, play_batch_per_move
from pipeline.games.openings import load_deck
from pipeline.games.selfplay import opening_schedule


def plan(level_a: str, level_b: str, games: int, batch_size: int, seed: int,
         variant: str = "english") -> list[BatchSpec]:
    """Batches of self-play between two levels over the variant's deck."""
    deck = load_deck(variant)
    schedule = opening_schedule(deck, seed, games // 2)
    specs = []
    for batch_id, first in enumerate(range(0, games, batch_size)):
        pairs = schedule[first // 2 : (first + batch_size) // 2]
        specs.append(make_batch_spec(
            run_id="bench", batch_id=batch_id, variant=variant, player_a=level_a, player_b=level_b,
            run_seed=seed, first_game_id=first, openings=[(o.id, o.fen) for o in pairs], ply_cap=300,
            first_pair=first // 2,
        ))
    return specs


BASELINE = str(profile_dir() / "english-baseline.json")
#: (label, variant, player spec, share of --games): the levels measured
LEVELS = (
    ("english easy", "english", "easy", 1.0),
    ("english medium", "english", "medium", 1.0),
    ("english hard", "english", "hard", 1.0),
    ("baseline easy", "english", f"{BASELINE}:easy", 1.0),
    ("baseline medium", "english", f"{BASELINE}:medium", 1.0),
    ("baseline hard", "english", f"{BASELINE}:hard", 0.1),  # 200k nodes a move: few games
    ("brazilian medium", "brazilian", "medium", 1.0),
    ("international medium", "international", "medium", 0.5),
)


def cpu_run(fn: Any, specs: list[BatchSpec]) -> tuple[int, int, int, float]:
    """(games, plies, search nodes, CPU seconds of this process) of playing ``specs`` with ``fn``."""
    started = time.process_time()
    games = plies = nodes = 0
    for spec in specs:
        table = fn(spec)
        games += table.num_rows
        plies += sum(table.column("plies").to_pylist())
        nodes += sum(table.column("white_nodes").to_pylist()) + sum(table.column("black_nodes").to_pylist())
    return games, plies, nodes, time.process_time() - started


def search_speed(games: int, seed: int, bench_nps: float) -> dict[str, dict[str, float]]:
    """Per level: games/s, nodes per CPU-second, ratio to bench nodes/s, speed-up over per-move."""
    out = {}
    for label, variant, spec, share in LEVELS:
        n = max(2, 2 * round(games * share / 2))
        specs = plan(spec, spec, n, n, seed, variant)
        cpu_run(play_batch, plan(spec, spec, 2, 2, seed + 1, variant))  # load the kernels, build the runner
        played, plies, nodes, cpu = cpu_run(play_batch, specs)
        _, _, old_nodes, old_cpu = cpu_run(play_batch_per_move, specs)
        if old_nodes != nodes:
            raise RuntimeError(f"{label}: the per-move path searched {old_nodes} nodes, the runner {nodes}")
        nps = nodes / cpu
        out[label] = {"games": played, "games_per_s": played / cpu, "nodes_per_ply": nodes / max(1, plies),
                      "nodes_per_cpu_s": nps, "vs_bench": nps / bench_nps, "vs_per_move": old_cpu / cpu,
                      "per_move_games_per_s": played / old_cpu}
    return out


def play_all(executor: Any, specs: list[BatchSpec]) -> tuple[int, float]:
    """(games played, wall seconds) for running every batch on ``executor``."""
    started = time.perf_counter()
    games = sum(table.num_rows for _, table in executor.run(specs))
    return games, time.perf_counter() - started


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


def random_runner_rate(n_games: int, seed: int) -> float:
    """Random v random english games per CPU-second through play_batch (moves, rows and all)."""
    cpu_run(play_batch, plan("random", "random", 2, 2, seed + 1))
    played, _, _, cpu = cpu_run(play_batch, plan("random", "random", n_games, n_games, seed))
    return played / cpu


def texel_rates(n_positions: int) -> dict[str, float]:
    """Texel feature extraction on random english positions: numpy batch v the kernel per position."""
    import numpy as np

    from engine.batch.features import extract_features
    from engine.batch.playout import random_positions
    from engine.features import N_FEATURES
    from engine.kernel.evaluate import features_into
    from engine.kernel.tables import kernel_tables

    variant = get_variant("english")
    batch = random_positions(variant, n_positions, 1)
    tab = kernel_tables(variant).packed
    out = np.zeros(N_FEATURES)
    features_into(np.uint64(batch.white[0]), np.uint64(batch.black[0]), np.uint64(batch.kings[0]), tab, out)
    extract_features(variant, batch)  # warm up both
    started = time.process_time()
    extract_features(variant, batch)
    batch_cpu = time.process_time() - started
    started = time.process_time()
    for w, b, k in zip(batch.white.tolist(), batch.black.tolist(), batch.kings.tolist(), strict=True):
        features_into(np.uint64(w), np.uint64(b), np.uint64(k), tab, out)
    scalar_cpu = time.process_time() - started
    return {"positions": float(len(batch)), "batch_positions_per_s": len(batch) / batch_cpu,
            "scalar_positions_per_s": len(batch) / scalar_cpu}


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
    parser.add_argument("--games", type=int, default=20, help="games per level measurement (even)")
    parser.add_argument("--ray-games", type=int, default=200, help="medium games for the Ray figures")
    parser.add_argument("--random-games", type=int, default=65536)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--skip-ray", action="store_true")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    run_bench(1)  # load the kernels outside the timing
    started = time.process_time()
    bench = run_bench()
    bench_cpu_nps = bench.nodes / (time.process_time() - started)
    report: dict[str, Any] = {
        "bench_nodes_per_s": bench.nps,
        "bench_nodes_per_cpu_s": bench_cpu_nps,
        "levels": search_speed(args.games, args.seed, bench_cpu_nps),
        "random_games_per_s": random_rate(args.random_games, args.repeats),
        "random_runner_games_per_s": random_runner_rate(args.games * 20, args.seed),
        "texel": texel_rates(20_000),
    }
    if not args.skip_ray:
        report["ray"] = ray_figures(args.ray_games, args.seed)
    if args.json:
        print(json.dumps(report, indent=2))
        return
    print(f"lockstep random english games/s (one core, {args.random_games} at once, no moves kept): "
          f"{report['random_games_per_s']:,.0f}")
    print(f"random v random through play_batch (compiled runner, move text and rows): "
          f"{report['random_runner_games_per_s']:,.0f} games per CPU-second")
    tx = report["texel"]
    print(f"texel features of {tx['positions']:,.0f} positions: numpy batch "
          f"{tx['batch_positions_per_s']:,.0f}/s, scalar kernel one call each "
          f"{tx['scalar_positions_per_s']:,.0f}/s")
    print(f"engine bench (this run): {report['bench_nodes_per_s']:,.0f} nodes/s wall clock, "
          f"{report['bench_nodes_per_cpu_s']:,.0f} nodes per CPU-second (the reference of 'v bench')")
    print(f"{'self-play, level v itself':<26}{'games':>6}{'games/s':>9}{'nodes/ply':>11}{'nodes/CPU-s':>13}"
          f"{'v bench':>9}{'v per-move':>11}")
    for label, row in report["levels"].items():
        print(f"{label:<26}{row['games']:>6.0f}{row['games_per_s']:>9.2f}{row['nodes_per_ply']:>11,.0f}"
              f"{row['nodes_per_cpu_s']:>13,.0f}{row['vs_bench']:>8.2f}x{row['vs_per_move']:>10.2f}x")
    if "ray" in report:
        ray = report["ray"]
        print(f"same games: in-process {ray['in_process_s']:.1f} s, Ray 1 worker {ray['ray_1_s']:.1f} s, "
              f"Ray 2 workers {ray['ray_2_s']:.1f} s")
        print(f"Ray scaling 2 vs 1 workers: {ray['ray_scaling_2_vs_1']:.2f}x;  "
              f"Ray overhead vs in-process: {100 * ray['ray_overhead']:+.1f} %")


if __name__ == "__main__":
    main()
