"""A level's blunder rate as several tasks side by side: the validation's checks.

One blunder rate over a level's validation games replays them, then scores up to 20,000 sampled
decisions: tens of CPU-seconds, replaying about as costly as scoring. Run as one task, the four
rates of the checks leave all but four slots of a cluster idle at the end of the calibration.
So each rate is one round of tasks over consecutive shares of the level's games:

1. the driver reads how many decisions the level made in each game from the game records
   (``white_decisions``, ``black_decisions``: plies with two or more legal moves, counted by
   the game runner as it played), draws the sample over all of them, numbered in game order,
   exactly as one task would (:func:`~pipeline.ratings.blunders.sample_indices`);
2. each task replays its share once, scores the sampled decisions that fall in it and checks
   that its replay counts the decisions the records say
   (:func:`~pipeline.ratings.blunders.score_chosen`).

The losses join in share order into the rate one task gives, whatever the split. The shares
hold about :data:`DECISIONS_PER_TASK` sampled decisions each.
"""

from __future__ import annotations

import bisect
import concurrent.futures as cf
import itertools
from collections.abc import Callable, Sequence

import pyarrow as pa
import pyarrow.compute as pc

from engine.variants import get_variant
from pipeline.games.stage import StageContext
from pipeline.ratings.blunders import (
    BlunderStats,
    blunder_stats,
    default_threshold,
    sample_indices,
    score_chosen,
)

#: sampled decisions one share of a rate holds at most, by the moves its games hold (0.3 to 3.6 ms
#: a decision to score, measured, and about as much again to replay)
DECISIONS_PER_TASK = 5_000
_COLUMNS = ["game_id", "variant", "opening_fen", "moves", "white_player", "black_player", "white_decisions",
            "black_decisions"]


def player_games(table: pa.Table, player: str) -> pa.Table:
    """The rows of ``table`` that ``player`` played, in their order, with the columns a blunder
    rate reads (what the tasks are sent)."""
    games = table.select(_COLUMNS)
    mask = pc.or_(pc.equal(games.column("white_player"), player),
                  pc.equal(games.column("black_player"), player))
    return games.filter(mask)


def shares(decisions: int) -> int:
    """How many shares split ``decisions`` sampled decisions: at most :data:`DECISIONS_PER_TASK` each."""
    return max(1, -(-decisions // DECISIONS_PER_TASK))


def player_decisions(games: pa.Table, player: str) -> list[int]:
    """``player``'s decisions in each game of ``games``, from the records' decision counts."""
    columns = [games.column(name).to_pylist()
               for name in ("game_id", "white_player", "black_player", "white_decisions", "black_decisions")]
    out = []
    for game_id, white, black, white_count, black_count in zip(*columns, strict=True):
        if (white == player and white_count is None) or (black == player and black_count is None):
            raise ValueError(f"blunder rate of player {player!r}: game {game_id} has no decision count "
                             "(recorded before games schema version 3)")
        out.append((white_count if white == player else 0) + (black_count if black == player else 0))
    return out


def score_task(variant: str, games: pa.Table, player: str, chosen: tuple[int, ...],
               total: int) -> tuple[int, ...]:
    """Task body: the losses of ``player``'s decisions number ``chosen`` in ``games``, which the
    records say hold ``total`` of its decisions."""
    return score_chosen(variant, games, player, chosen, total=total)


def blunder_check(ctx: StageContext, stage: str, table: pa.Table, player: str, sample: int,
                  seed: int) -> BlunderStats:
    """``player``'s blunder rate over ``table`` (at most ``sample`` decisions drawn with ``seed``)
    in one round of tasks recorded under ``stage`` (see the module docstring)."""
    games = player_games(table, player)
    per_game = player_decisions(games, player)
    parts = min(max(1, games.num_rows), shares(min(sample, sum(per_game))))
    cuts = [games.num_rows * i // parts for i in range(parts + 1)]
    pieces = [games.slice(a, b - a) for a, b in itertools.pairwise(cuts)]
    counts = [sum(per_game[a:b]) for a, b in itertools.pairwise(cuts)]
    starts = list(itertools.accumulate(counts, initial=0))
    chosen = sample_indices(starts[-1], sample, seed)
    local = _by_share(chosen, starts)
    with cf.ThreadPoolExecutor(max_workers=parts, thread_name_prefix="blunder-share") as pool:
        scored = [pool.submit(ctx.compute, stage, score_task, ctx.variant, piece, player, mine, count)
                  for piece, mine, count in zip(pieces, local, counts, strict=True) if mine]
        losses = [loss for future in scored for loss in future.result()]
    return blunder_stats(player, losses, starts[-1], default_threshold(get_variant(ctx.variant)))


def _by_share(chosen: Sequence[int], starts: Sequence[int]) -> list[tuple[int, ...]]:
    """The ascending decision numbers ``chosen`` split by share (``starts``: each share's first
    number, then the total), renumbered from each share's start."""
    out = []
    for first, end in itertools.pairwise(starts):
        lo, hi = bisect.bisect_left(chosen, first), bisect.bisect_left(chosen, end)
        out.append(tuple(i - first for i in chosen[lo:hi]))
    return out


def submit_blunder_check(ctx: StageContext, pool: cf.ThreadPoolExecutor, stage: str, table: pa.Table,
                         player: str, sample: int, seed: int) -> Callable[[], BlunderStats]:
    """Start :func:`blunder_check` on a thread of ``pool``; the returned function waits for it."""
    future = pool.submit(blunder_check, ctx, stage, table, player, sample, seed)
    return future.result
