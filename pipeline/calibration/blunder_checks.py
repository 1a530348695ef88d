"""A level's blunder rate as several tasks side by side: the validation's checks.

One blunder rate over a level's validation games scores up to 20,000 decisions, tens of
CPU-seconds; run as one task, the four rates of the checks leave all but four slots of a cluster
idle at the end of the calibration. So each rate is two rounds of tasks: one task replays the
level's games and draws the decisions to score (:func:`pipeline.ratings.blunders.sample_decisions`),
then tasks of at most :data:`DECISIONS_PER_TASK` of them score consecutive shares side by side,
and the driver joins their losses in order: the same rate as one task scoring all of them,
whatever the split. (Each scoring task replaying the games itself would double the rate's CPU
time: replaying costs about as much as scoring.)
"""

from __future__ import annotations

import concurrent.futures as cf
import itertools
from collections.abc import Callable

import pyarrow as pa
import pyarrow.compute as pc

from engine.variants import get_variant
from pipeline.games.stage import StageContext
from pipeline.ratings.blunders import (
    BlunderStats,
    Decision,
    DecisionSample,
    blunder_stats,
    default_threshold,
    sample_decisions,
    score_decisions,
)

#: decisions one scoring task holds at most (0.3 to 3.6 ms each measured: 2 to 18 CPU-seconds)
DECISIONS_PER_TASK = 5_000
_COLUMNS = ["game_id", "variant", "opening_fen", "moves", "white_player", "black_player"]


def player_games(table: pa.Table, player: str) -> pa.Table:
    """The rows of ``table`` that ``player`` played, in their order, with the columns a blunder
    rate reads (what the sampling task is sent)."""
    games = table.select(_COLUMNS)
    mask = pc.or_(pc.equal(games.column("white_player"), player),
                  pc.equal(games.column("black_player"), player))
    return games.filter(mask)


def shares(decisions: int) -> int:
    """How many scoring tasks share ``decisions`` decisions: at most :data:`DECISIONS_PER_TASK` each."""
    return max(1, -(-decisions // DECISIONS_PER_TASK))


def sample_task(variant: str, games: pa.Table, player: str, sample: int, seed: int) -> DecisionSample:
    """Task body: ``player``'s decisions to score in ``games`` (at most ``sample``, drawn with ``seed``)."""
    return sample_decisions(variant, games, player, max_positions=sample, seed=seed)


def score_task(variant: str, decisions: tuple[Decision, ...], player: str) -> tuple[int, ...]:
    """Task body: the material losses of ``decisions``, in order."""
    return score_decisions(variant, decisions, player)


def blunder_check(ctx: StageContext, stage: str, table: pa.Table, player: str, sample: int,
                  seed: int) -> BlunderStats:
    """``player``'s blunder rate over ``table`` (at most ``sample`` decisions drawn with ``seed``)
    as tasks recorded under ``stage``: one that samples, then the scoring shares side by side."""
    drawn = ctx.compute(stage, sample_task, ctx.variant, player_games(table, player), player, sample, seed)
    n, parts = len(drawn.decisions), shares(len(drawn.decisions))
    cuts = [n * i // parts for i in range(parts + 1)]
    with cf.ThreadPoolExecutor(max_workers=parts, thread_name_prefix="blunder-share") as pool:
        scored = [pool.submit(ctx.compute, stage, score_task, ctx.variant, drawn.decisions[a:b], player)
                  for a, b in itertools.pairwise(cuts)]
        losses = [loss for future in scored for loss in future.result()]
    return blunder_stats(player, losses, drawn.positions_seen, default_threshold(get_variant(ctx.variant)))


def submit_blunder_check(ctx: StageContext, pool: cf.ThreadPoolExecutor, stage: str, table: pa.Table,
                         player: str, sample: int, seed: int) -> Callable[[], BlunderStats]:
    """Start :func:`blunder_check` on a thread of ``pool``; the returned function waits for it."""
    future = pool.submit(blunder_check, ctx, stage, table, player, sample, seed)
    return future.result
