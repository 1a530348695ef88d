"""A blunder rate computed in shares of its games over several tasks equals the rate of one task."""

from __future__ import annotations

import concurrent.futures as cf
import itertools
from pathlib import Path

import pyarrow as pa
import pytest

from pipeline.calibration import blunder_checks
from pipeline.calibration.blunder_checks import player_games, player_moves, shares, submit_blunder_check
from pipeline.games.executor import CALL_PAIRING, InProcessExecutor
from pipeline.games.openings import load_deck
from pipeline.games.pairings import Pairing
from pipeline.games.schedule import TaskTimeline
from pipeline.games.stage import StageContext
from pipeline.games.storage_fs import store_path
from pipeline.ratings.blunders import (
    blunder_rate,
    blunder_stats,
    decision_count,
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


def test_shares_of_the_games_scored_apart_join_into_one_rate(games: pa.Table) -> None:
    mine = player_games(games, "easy")
    whole = blunder_rate("english", games, "easy", max_positions=90, seed=3)
    total = decision_count("english", mine, "easy")
    assert whole.moves == 90 and whole.positions_seen == total == sample_decisions(
        "english", games, "easy").positions_seen > 90  # the sample binds
    assert player_moves(mine, "easy") >= total
    chosen = sample_indices(total, 90, 3)
    for parts in (1, 2, 3, 5):
        cuts = [mine.num_rows * i // parts for i in range(parts + 1)]
        pieces = [mine.slice(a, b - a) for a, b in itertools.pairwise(cuts)]
        starts = list(itertools.accumulate((decision_count("english", p, "easy") for p in pieces), initial=0))
        assert starts[-1] == total
        numbered = [[i - first for i in chosen if first <= i < end]
                    for first, end in itertools.pairwise(starts)]
        losses = [loss for piece, numbers in zip(pieces, numbered, strict=True)
                  for loss in score_chosen("english", piece, "easy", numbers)]
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
    assert tasks.count(f"{CALL_PAIRING}:count_task") == parts
    assert 1 <= tasks.count(f"{CALL_PAIRING}:score_task") <= parts


def test_bad_decision_numbers_are_refused(games: pa.Table) -> None:
    with pytest.raises(ValueError, match="ascending and distinct"):
        score_chosen("english", games, "easy", [3, 1])
    with pytest.raises(ValueError, match="decision 100000 of player 'easy': its games have only"):
        score_chosen("english", games, "easy", [100_000])
    with pytest.raises(ValueError, match="max_positions must be positive"):
        sample_decisions("english", games, "easy", max_positions=0)
