"""Move generation speed: batch (numpy) and kernel (numba) perft against pydraughts.

Measures, in one run on one core:
* perft nodes/s of the batch generator and of the compiled kernel, bulk (last ply counted,
  not played) and full (every leaf played), from the variant's start position;
* pydraughts' perft nodes/s (``legal_moves``/``push``/``pop``) at a small depth, and the
  speed-up of each engine generator over it;
* optionally lockstep random games per second (``--games``).

Every timing is the median of ``--repeats`` runs after a warm-up (numba compilation and
first-touch allocations happen outside the timed region). Wall time and process CPU time are
both reported: on a shared machine CPU time is the fairer single-core figure.

    python experiments/benchmarks/movegen.py                 # english, d10
    python experiments/benchmarks/movegen.py --variant brazilian --depth 9 --json -
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

from engine.batch.perft import perft as batch_perft
from engine.batch.playout import random_games
from engine.kernel.perft import perft as kernel_perft
from engine.position import initial_position
from engine.variants import Variant, get_variant

# pydraughts' names for our variants (suicide has no pydraughts counterpart)
PYDRAUGHTS_VARIANT = {
    "english": "english",
    "brazilian": "brazilian",
    "russian": "russian",
    "international": "standard",
}


@dataclass
class Timing:
    """One measured configuration (times are medians over the repeats)."""

    generator: str
    mode: str  # "bulk" or "full"
    depth: int
    nodes: int
    wall_s: float
    cpu_s: float
    repeats: int

    @property
    def nodes_per_s(self) -> float:
        return self.nodes / self.wall_s if self.wall_s > 0 else float("inf")

    @property
    def nodes_per_cpu_s(self) -> float:
        return self.nodes / self.cpu_s if self.cpu_s > 0 else float("inf")


def _measure(generator: str, mode: str, depth: int, repeats: int, run: Callable[[], int]) -> Timing:
    walls, cpus, counts = [], [], set()
    for _ in range(repeats):
        w, c = time.perf_counter(), time.process_time()
        counts.add(run())
        walls.append(time.perf_counter() - w)
        cpus.append(time.process_time() - c)
    if len(counts) != 1:
        raise RuntimeError(f"{generator} {mode} perft gave different counts: {sorted(counts)}")
    return Timing(generator, mode, depth, counts.pop(), statistics.median(walls), statistics.median(cpus),
                  repeats)


def _pydraughts_perft(board: Any, depth: int, bulk: bool) -> int:
    moves = board.legal_moves()
    if depth == 1 and bulk:
        return len(moves)
    if depth == 0:
        return 1
    total = 0
    for move in moves:
        board.push(move)
        total += _pydraughts_perft(board, depth - 1, bulk)
        board.pop()
    return total


def bench_engine(variant: Variant, depth: int, full_depth: int, repeats: int) -> list[Timing]:
    """Batch and kernel perft, bulk at ``depth`` and full at ``full_depth``."""
    start = initial_position(variant)
    kernel_perft(variant, start, 3, bulk=True)  # numba compile (cached on disk afterwards)
    kernel_perft(variant, start, 3, bulk=False)
    batch_perft(variant, start, min(depth, 6))  # first-touch allocations
    out = []
    for name, fn in (("batch", batch_perft), ("kernel", kernel_perft)):
        out.append(_measure(name, "bulk", depth, repeats, lambda fn=fn: fn(variant, start, depth, bulk=True)))
        out.append(_measure(name, "full", full_depth, repeats,
                            lambda fn=fn: fn(variant, start, full_depth, bulk=False)))
    return out


def bench_pydraughts(variant: Variant, depth: int, repeats: int) -> list[Timing]:
    """pydraughts perft at a small depth (it runs ~10^3 nodes/s)."""
    name = PYDRAUGHTS_VARIANT.get(variant.name)
    if name is None:
        return []
    from draughts import Board

    board = Board(variant=name)
    _pydraughts_perft(board, 2, bulk=True)  # warm-up
    return [
        _measure("pydraughts", "bulk", depth, repeats, lambda: _pydraughts_perft(board, depth, bulk=True)),
        _measure("pydraughts", "full", depth, repeats, lambda: _pydraughts_perft(board, depth, bulk=False)),
    ]


def bench_games(variant: Variant, n_games: int, repeats: int) -> dict[str, float]:
    """Lockstep random games per second (``max_plies`` 1000)."""
    random_games(variant, min(n_games, 1024), seed=0, max_plies=1000)  # warm-up
    walls, cpus, plies = [], [], 0
    for rep in range(repeats):
        w, c = time.perf_counter(), time.process_time()
        res = random_games(variant, n_games, seed=rep, max_plies=1000)
        walls.append(time.perf_counter() - w)
        cpus.append(time.process_time() - c)
        plies = int(res.plies.sum())
    wall, cpu = statistics.median(walls), statistics.median(cpus)
    return {
        "games": n_games,
        "wall_s": wall,
        "cpu_s": cpu,
        "games_per_s": n_games / wall,
        "games_per_cpu_s": n_games / cpu,
        "mean_plies": plies / n_games,
    }


def _table(timings: list[Timing]) -> str:
    head = f"{'generator':<11} {'mode':<5} {'depth':>5} {'nodes':>13} {'wall s':>8} {'nodes/s':>12} " \
           f"{'cpu s':>8} {'nodes/cpu-s':>12}"
    lines = [head, "-" * len(head)]
    for t in timings:
        lines.append(
            f"{t.generator:<11} {t.mode:<5} {t.depth:>5} {t.nodes:>13,} {t.wall_s:>8.3f} "
            f"{t.nodes_per_s:>12,.0f} {t.cpu_s:>8.3f} {t.nodes_per_cpu_s:>12,.0f}"
        )
    return "\n".join(lines)


def _ratios(timings: list[Timing]) -> dict[str, float]:
    by = {(t.generator, t.mode): t for t in timings}
    out = {}
    for gen in ("kernel", "batch"):
        for mode in ("bulk", "full"):
            ref = by.get(("pydraughts", mode))
            mine = by.get((gen, mode))
            if ref and mine:
                out[f"{gen}/pydraughts {mode}"] = mine.nodes_per_cpu_s / ref.nodes_per_cpu_s
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variant", default="english")
    parser.add_argument("--depth", type=int, default=10, help="bulk perft depth (default 10)")
    parser.add_argument("--full-depth", type=int, default=None, help="full perft depth (default: --depth)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--pyd-depth", type=int, default=4, help="pydraughts perft depth (default 4)")
    parser.add_argument("--pyd-repeats", type=int, default=1)
    parser.add_argument("--no-pydraughts", action="store_true")
    parser.add_argument("--games", type=int, default=65536, help="random games to time (0: skip)")
    parser.add_argument("--json", metavar="PATH", help="also write the results as JSON ('-': stdout)")
    args = parser.parse_args(argv)

    variant = get_variant(args.variant)
    full_depth = args.depth if args.full_depth is None else args.full_depth
    timings = bench_engine(variant, args.depth, full_depth, args.repeats)
    if not args.no_pydraughts:
        timings += bench_pydraughts(variant, args.pyd_depth, args.pyd_repeats)
    by = {(t.generator, t.mode, t.depth): t.nodes for t in timings}
    for mode, d in (("bulk", args.depth), ("full", full_depth)):
        if by[("batch", mode, d)] != by[("kernel", mode, d)]:
            raise RuntimeError(f"batch and kernel disagree on {mode} perft({d})")
    games = bench_games(variant, args.games, args.repeats) if args.games > 0 else None
    ratios = _ratios(timings)

    print(f"variant {variant.name}; median of {args.repeats} runs; python {platform.python_version()}, "
          f"{os.cpu_count()} cpus, load average {os.getloadavg()[0]:.2f}")
    print(_table(timings))
    for key, value in ratios.items():
        print(f"{key:<26} {value:>10,.0f}x  (nodes per cpu-second)")
    if games:
        print(f"random games: {games['games']:,} games, {games['mean_plies']:.1f} plies on average: "
              f"{games['games_per_s']:,.0f} games/s wall, {games['games_per_cpu_s']:,.0f} games/cpu-s")
    if args.json:
        payload = {
            "variant": variant.name,
            "load_average": os.getloadavg()[0],
            "timings": [asdict(t) | {"nodes_per_s": t.nodes_per_s, "nodes_per_cpu_s": t.nodes_per_cpu_s}
                        for t in timings],
            "ratios": ratios,
            "games": games,
        }
        text = json.dumps(payload, indent=2)
        if args.json == "-":
            print(text)
        else:
            with open(args.json, "w", encoding="utf-8") as fh:
                fh.write(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
