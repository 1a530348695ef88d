"""A blunder rate computed in shares of its games over several tasks equals the rate of one task, and
the decision counts the game runner records are the ones a replay finds."""

from __future__ import annotations

import concurrent.futures as cf
import itertools
from pathlib import Path

import pyarrow as pa
import pytest

from pipeline.calibration import blunder_checks
from pipeline.calibration.blunder_checks import player_decisions, player_games, shares, submit_blunder_check
from pipeline.games.executor import CALL_PAIRING, InProcessExecutor
from pipeline.games.openings import load_deck
from pipeline.games.pairings import Pairing
from pipeline.games.schedule import TaskTimeline
from pipeline.games.stage import StageContext
from pipeline.games.storage_fs import store_path
from pipeline.ratings.blunders import (
    blunder_rate,
    blunder_stats,
    sample_decisions,
    sample_indices,
    score_chosen,
)

STAGE = "calibrate/checks"


def _ctx(folder: Path, timeline: TaskTimeline | None = None) -> StageContext:
    return StageContext(InProcessExecutor(), store_path(folder), "run", "english", 5, 2, 60,
                        tuple(load_deck("english")), timeline=timeline)


@pytest.fixture(scope="module")
def games(tmp_path_factory: pytest.TempPathFactory) -> pa.Table:
    return _ctx(tmp_path_factory.mktemp("checks")).play(
        "calibrate/validation", [Pairing("random", "easy", 4), Pairing("easy", "medium", 3)])


def _replayed(table: pa.Table, player: str) -> int:
    """``player``'s decisions in ``table``, counted by replaying its games."""
    return sample_decisions("english", table, player).positions_seen


def test_recorded_decisions_are_what_a_replay_counts(games: pa.Table) -> None:
    for player in ("random", "easy", "medium"):
        mine = player_games(games, player)
        per_game = player_decisions(mine, player)
        assert per_game == [_replayed(mine.slice(i, 1), player) for i in range(mine.num_rows)]
        assert sum(per_game) > 0


def test_shares_of_the_games_scored_apart_join_into_one_rate(games: pa.Table) -> None:
    mine = player_games(games, "easy")
    whole = blunder_rate("english", games, "easy", max_positions=90, seed=3)
    total = sum(player_decisions(mine, "easy"))
    assert whole.moves == 90
    assert whole.positions_seen == total == _replayed(games, "easy") > 90  # the sample binds
    chosen = sample_indices(total, 90, 3)
    for parts in (1, 2, 3, 5):
        cuts = [mine.num_rows * i // parts for i in range(parts + 1)]
        pieces = [mine.slice(a, b - a) for a, b in itertools.pairwise(cuts)]
        starts = list(itertools.accumulate((sum(player_decisions(p, "easy")) for p in pieces), initial=0))
        assert starts[-1] == total
        numbered = [[i - first for i in chosen if first <= i < end]
                    for first, end in itertools.pairwise(starts)]
        counts = [end - first for first, end in itertools.pairwise(starts)]
        losses = [loss for piece, numbers, count in zip(pieces, numbered, counts, strict=True)
                  for loss in score_chosen("english", piece, "easy", numbers, total=count)]
        assert blunder_stats("easy", losses, total, whole.threshold) == whole
    assert shares(0) == shares(1) == shares(5_000) == 1 and shares(5_001) == 2 and shares(20_000) == 4


def test_a_check_in_tasks_equals_the_rate(games: pa.Table, tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    mine = player_games(games, "medium")
    assert 0 < mine.num_rows < games.num_rows  # the games of Random against Easy are left out
    monkeypatch.setattr(blunder_checks, "DECISIONS_PER_TASK", 40)
    timeline = TaskTimeline()
    ctx = _ctx(tmp_path, timeline)
    with cf.ThreadPoolExecutor(max_workers=2) as pool:
        stats = submit_blunder_check(ctx, pool, STAGE, games, "medium", 100, 9)()
    assert stats == blunder_rate("english", games, "medium", max_positions=100, seed=9) and stats.moves == 100
    tasks = sorted(t.pairing for t, _ in timeline.tasks[STAGE])
    parts = shares(100)  # 3: the sample, not the decisions, sizes the shares
    assert 1 <= tasks.count(f"{CALL_PAIRING}:score_task") == len(tasks) <= parts  # one replay a share


def test_bad_decision_numbers_are_refused(games: pa.Table) -> None:
    with pytest.raises(ValueError, match="ascending and distinct"):
        score_chosen("english", games, "easy", [3, 1])
    with pytest.raises(ValueError, match="decision 100000 of player 'easy': its games have only"):
        score_chosen("english", games, "easy", [100_000])
    total = sum(player_decisions(player_games(games, "easy"), "easy"))
    with pytest.raises(ValueError, match=f"finds {total} decisions, their records say {total + 1}"):
        score_chosen("english", games, "easy", [0], total=total + 1)
    old = games.set_column(games.schema.get_field_index("white_decisions"), "white_decisions",
                           pa.nulls(games.num_rows, pa.int32()))
    with pytest.raises(ValueError, match="has no decision count"):
        player_decisions(old, "easy")
    with pytest.raises(ValueError, match="max_positions must be positive"):
        sample_decisions("english", games, "easy", max_positions=0)
