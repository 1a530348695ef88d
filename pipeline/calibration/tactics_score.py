"""How many positions of a tactical test set a difficulty level solves.

A level solves a position when the move its :class:`engine.player.Player` chooses (its own
weights, search and weakening knobs, seeded) on a Board set up from the position's FEN is one
of the position's winning moves (:mod:`pipeline.calibration.tactics_set`). The share comes
with a 95 % Wilson interval. ``python -m pipeline.calibration.tactics_score VARIANT`` prints
it for the three levels of a profile (the shipped one unless ``--profile``).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass

from engine.board import Board
from engine.errors import DraughtsError
from engine.player import Player
from engine.profile import LEVEL_NAMES, LevelProfile, load_profile, shipped_profile, shipped_profile_path
from engine.variants import get_variant
from pipeline.calibration.tactics_set import TacticalPosition, TacticsError, load_tactics, move_key
from pipeline.ratings.blunders import wilson_interval


@dataclass(frozen=True)
class TacticsScore:
    """Positions solved out of ``total``; ``rate`` None (interval [0, 1]) when there are none."""

    solved: int
    total: int
    rate: float | None
    ci_low: float
    ci_high: float


def solved(level: LevelProfile, positions: Sequence[TacticalPosition], seed: int = 0) -> tuple[bool, ...]:
    """For each position, whether ``level`` (seeded with ``seed``) plays a winning move there."""
    player = Player(level, seed)
    out: list[bool] = []
    for position in positions:
        if position.variant != level.variant.name:
            raise TacticsError(f"tactics position {position.id} is {position.variant}, "
                               f"the level {level.level!r} plays {level.variant.name}")
        board = Board(level.variant, position.fen)
        winning = {move_key(board.parse_move(text)) for text in position.winning}
        out.append(move_key(player.choose_move(board).move) in winning)
    return tuple(out)


def score(hits: Sequence[bool]) -> TacticsScore:
    """The share of True in ``hits`` with its 95 % Wilson interval."""
    total, count = len(hits), sum(hits)
    low, high = wilson_interval(count, total)
    return TacticsScore(count, total, count / total if total else None, low, high)


def solve_rate(level: LevelProfile, positions: Sequence[TacticalPosition], seed: int = 0) -> TacticsScore:
    """The share of ``positions`` that ``level`` solves (module docstring)."""
    return score(solved(level, positions, seed))


def _describe(result: TacticsScore) -> str:
    if result.rate is None:
        return "no positions"
    return (f"{result.solved}/{result.total} = {result.rate:.1%} "
            f"(95% CI {result.ci_low:.1%}..{result.ci_high:.1%})")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pipeline.calibration.tactics_score",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("variant")
    parser.add_argument("--profile", help="profile file (default: the variant's shipped profile)")
    parser.add_argument("--tactics", help="tactics set file (default: the variant's shipped set)")
    parser.add_argument("--seed", type=int, default=0, help="the levels' seed")
    parser.add_argument("--min-depth", type=int, default=1,
                        help="score only the positions with found_at_depth >= this")
    parser.add_argument("--max-depth", type=int, default=64,
                        help="score only the positions with found_at_depth <= this")
    args = parser.parse_args(argv)
    try:
        variant = get_variant(args.variant)
        profile = shipped_profile(variant) if args.profile is None else load_profile(args.profile, variant)
        source = shipped_profile_path(variant) if args.profile is None else args.profile
        tactics = load_tactics(variant, args.tactics)
        positions = [p for p in tactics.positions if args.min_depth <= p.found_at_depth <= args.max_depth]
        span = f"found_at_depth {args.min_depth}..{args.max_depth}"
        print(f"{variant.name}: {len(positions)} positions ({span}), "
              f"profile {source}")
        for name in LEVEL_NAMES:
            started = time.perf_counter()
            result = solve_rate(profile.level(name), positions, args.seed)
            print(f"  {name:<6} {_describe(result)}  [{time.perf_counter() - started:.1f} s]")
    except (DraughtsError, ValueError, OSError) as err:
        print(f"error: {' '.join(str(err).split())}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
