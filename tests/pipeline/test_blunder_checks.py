"""A blunder rate scored in shares over several tasks equals the rate of one task."""

from __future__ import annotations

import concurrent.futures as cf
import itertools
from pathlib import Path

import pyarrow as pa
import pytest

from pipeline.calibration import blunder_checks
from pipeline.calibration.blunder_checks import player_games, shares, submit_blunder_check
from pipeline.games.executor import CALL_PAIRING, InProcessExecutor
from pipeline.games.openings import load_deck
from pipeline.games.pairings import Pairing
from pipeline.games.schedule import TaskTimeline
from pipeline.games.stage import StageContext
from pipeline.games.storage_fs import store_path
from pipeline.ratings.blunders import blunder_rate, blunder_stats, sample_decisions, score_decisions

STAGE = "calibrate/checks"


def _ctx(folder: Path, timeline: TaskTimeline | None = None) -> StageContext:
    return StageContext(InProcessExecutor(), store_path(folder), "run", "english", 5, 2, 60,
                        tuple(load_deck("english")), timeline=timeline)


@pytest.fixture(scope="module")
def games(tmp_path_factory: pytest.TempPathFactory) -> pa.Table:
    return _ctx(tmp_path_factory.mktemp("checks")).play(
        "calibrate/validation", [Pairing("random", "easy", 4), Pairing("easy", "medium", 3)])


def test_shares_scored_apart_and_joined_equal_one_rate(games: pa.Table) -> None:
    whole = blunder_rate("english", games, "easy", max_positions=90, seed=3)
    drawn = sample_decisions("english", games, "easy", max_positions=90, seed=3)
    assert whole.moves == len(drawn.decisions) == 90 and whole.positions_seen == drawn.positions_seen > 90
    for parts in (1, 2, 3, 7):
        cuts = [90 * i // parts for i in range(parts + 1)]
        losses = [loss for a, b in itertools.pairwise(cuts)
                  for loss in score_decisions("english", drawn.decisions[a:b], "easy")]
        assert blunder_stats("easy", losses, drawn.positions_seen, whole.threshold) == whole
    assert shares(0) == shares(1) == shares(5_000) == 1 and shares(5_001) == 2 and shares(20_000) == 4


def test_a_check_in_tasks_equals_the_rate(games: pa.Table, tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    mine = player_games(games, "medium")
    assert 0 < mine.num_rows < games.num_rows  # the games of Random against Easy are left out
    monkeypatch.setattr(blunder_checks, "DECISIONS_PER_TASK", 40)
    timeline = TaskTimeline()
    ctx = _ctx(tmp_path, timeline)
    with cf.ThreadPoolExecutor(max_workers=2) as pool:
        stats = submit_blunder_check(ctx, pool, STAGE, games, "medium", 1_000, 9)()
    assert stats == blunder_rate("english", games, "medium", max_positions=1_000, seed=9)
    tasks = sorted(t.pairing for t, _ in timeline.tasks[STAGE])
    parts = -(-stats.moves // 40)
    assert parts >= 3
    assert tasks == sorted([f"{CALL_PAIRING}:sample_task"] + [f"{CALL_PAIRING}:score_task"] * parts)


def test_bad_sample_sizes_are_refused(games: pa.Table) -> None:
    with pytest.raises(ValueError, match="max_positions must be positive"):
        sample_decisions("english", games, "easy", max_positions=0)
