"""A level's blunder rate as several tasks side by side: the validation's checks.

One blunder rate over a level's validation games scores up to 20,000 decisions, tens of
CPU-seconds; run as one task, the four rates of the checks leave all but four slots of a cluster
idle at the end of the calibration. Each rate is split instead into shares of about
:data:`DECISIONS_PER_TASK` decisions (:func:`pipeline.ratings.blunders.blunder_losses`: every task
replays the same games, draws the same sample and scores its own consecutive share), and the
shares are joined in order, so the result is the one a single task gives, whatever the split.
"""

from __future__ import annotations

import concurrent.futures as cf
from collections.abc import Callable

import pyarrow as pa
import pyarrow.compute as pc

from engine.variants import get_variant
from pipeline.games.stage import StageContext
from pipeline.ratings.blunders import BlunderStats, LossPart, blunder_losses, blunder_stats, default_threshold

#: decisions one check task scores at most (0.6 to 3.6 ms each measured: 3 to 18 CPU-seconds)
DECISIONS_PER_TASK = 5_000
_COLUMNS = ["game_id", "variant", "opening_fen", "moves", "white_player", "black_player", "plies"]


def player_games(table: pa.Table, player: str) -> pa.Table:
    """The rows of ``table`` that ``player`` played, in their order, with the columns a blunder
    rate reads (what a check task is sent)."""
    games = table.select(_COLUMNS)
    mask = pc.or_(pc.equal(games.column("white_player"), player),
                  pc.equal(games.column("black_player"), player))
    return games.filter(mask)


def check_tasks(games: pa.Table, player: str, sample: int) -> int:
    """How many tasks score ``player``'s rate over ``games``: its moves (an upper bound of its
    decisions: forced moves are skipped), at most ``sample``, over :data:`DECISIONS_PER_TASK`."""
    moves = 0
    columns = (games.column(name).to_pylist() for name in ("white_player", "black_player", "plies"))
    for white, black, plies in zip(*columns, strict=True):
        moves += (plies + 1) // 2 if white == player else 0
        moves += plies // 2 if black == player else 0
    return max(1, min(moves, sample) // DECISIONS_PER_TASK)


def measure_blunders_part(variant: str, games: pa.Table, player: str, sample: int, seed: int, part: int,
                          parts: int) -> LossPart:
    """Share ``part`` of ``parts`` of ``player``'s blunder rate over ``games`` (at most ``sample``
    decisions drawn with ``seed``); module-level: a task body of ``StageContext.compute``."""
    return blunder_losses(variant, games, player, max_positions=sample, seed=seed, part=part, parts=parts)


def submit_blunder_check(ctx: StageContext, pool: cf.ThreadPoolExecutor, stage: str, table: pa.Table,
                         player: str, sample: int, seed: int) -> Callable[[], BlunderStats]:
    """Start ``player``'s blunder rate over ``table`` as tasks in ``pool`` (each a thread waiting on
    its task); the returned function waits for them and joins the shares."""
    games = player_games(table, player)
    parts = check_tasks(games, player, sample)
    futures = [pool.submit(ctx.compute, stage, measure_blunders_part, ctx.variant, games, player, sample,
                           seed, i, parts) for i in range(parts)]
    threshold = default_threshold(get_variant(ctx.variant))

    def joined() -> BlunderStats:
        return blunder_stats(player, [f.result() for f in futures], threshold)

    return joined

