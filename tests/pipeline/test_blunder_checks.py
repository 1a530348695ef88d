"""A blunder rate split into shares over several tasks equals the rate of one task."""

from __future__ import annotations

import concurrent.futures as cf
from pathlib import Path

import pytest

from pipeline.calibration import blunder_checks
from pipeline.calibration.blunder_checks import check_tasks, player_games, submit_blunder_check
from pipeline.games.executor import CALL_PAIRING, InProcessExecutor
from pipeline.games.openings import load_deck
from pipeline.games.pairings import Pairing
from pipeline.games.schedule import TaskTimeline
from pipeline.games.stage import StageContext
from pipeline.games.storage_fs import store_path
from pipeline.ratings.blunders import LossPart, blunder_losses, blunder_rate, blunder_stats

STAGE = "calibrate/checks"


@pytest.fixture(scope="module")
def games(tmp_path_factory: pytest.TempPathFactory) -> object:
    folder = tmp_path_factory.mktemp("checks")
    ctx = StageContext(InProcessExecutor(), store_path(folder), "run", "english", 5, 2, 60,
                       tuple(load_deck("english")))
    return ctx.play("calibrate/validation", [Pairing("random", "easy", 4), Pairing("easy", "medium", 3)])


def test_shares_joined_equal_one_rate(games: object) -> None:
    import pyarrow as pa

    assert isinstance(games, pa.Table)
    whole = blunder_rate("english", games, "easy", max_positions=90, seed=3)
    assert whole.moves == 90 and whole.positions_seen > 90  # the sample binds
    for parts in (1, 2, 3, 7):
        shares = [blunder_losses("english", games, "easy", max_positions=90, seed=3, part=i, parts=parts)
                  for i in range(parts)]
        assert sorted(len(s.losses) for s in shares)[-1] - sorted(len(s.losses) for s in shares)[0] <= 1
        assert blunder_stats("easy", shares, whole.threshold) == whole
    # a share's order matters: the joined losses are the sample's, share by share
    shares = [blunder_losses("english", games, "easy", max_positions=90, seed=3, part=i, parts=2)
              for i in (0, 1)]
    assert shares[0].losses + shares[1].losses == blunder_losses("english", games, "easy", max_positions=90,
                                                                 seed=3).losses


def test_bad_shares_are_refused(games: object) -> None:
    import pyarrow as pa

    assert isinstance(games, pa.Table)
    with pytest.raises(ValueError, match="blunder share 2 of 2"):
        blunder_losses("english", games, "easy", part=2, parts=2)
    with pytest.raises(ValueError, match="saw different games"):
        blunder_stats("easy", [LossPart((0,), 10), LossPart((1,), 11)], 1.0)


def test_a_check_in_tasks_on_the_player_games_equals_the_rate(games: object, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    import pyarrow as pa

    assert isinstance(games, pa.Table)
    mine = player_games(games, "medium")
    assert 0 < mine.num_rows < games.num_rows  # the games of Random against Easy are left out
    monkeypatch.setattr(blunder_checks, "DECISIONS_PER_TASK", 40)
    parts = check_tasks(mine, "medium", 1_000)
    assert parts >= 3
    timeline = TaskTimeline()
    ctx = StageContext(InProcessExecutor(), store_path(tmp_path), "run", "english", 5, 2, 60,
                       tuple(load_deck("english")), timeline=timeline)
    with cf.ThreadPoolExecutor(max_workers=4) as pool:
        stats = submit_blunder_check(ctx, pool, STAGE, games, "medium", 1_000, 9)()
    assert stats == blunder_rate("english", games, "medium", max_positions=1_000, seed=9)
    tasks = timeline.tasks[STAGE]
    assert len(tasks) == parts and {t.pairing for t, _ in tasks} == {f"{CALL_PAIRING}:measure_blunders_part"}
    assert check_tasks(mine, "medium", 100) == 2  # the sample caps the decisions
