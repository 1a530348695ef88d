"""A small stage and the computation on its games as one task (``StageContext.play_then``)."""

from __future__ import annotations

import hashlib
from pathlib import Path

from pipeline.calibration.method import games_blunders, measure_blunders
from pipeline.games.executor import CALL_PAIRING, InProcessExecutor
from pipeline.games.openings import load_deck
from pipeline.games.pairings import Pairing, stage_run_id
from pipeline.games.schedule import TaskTimeline
from pipeline.games.sizing import pair_key
from pipeline.games.stage import StageContext
from pipeline.games.storage import batch_path
from pipeline.games.storage_fs import store_path

STAGE = "calibrate/easy/trial-003"
PAIRINGS = [Pairing("random", "easy", 3)]


def games_digest(table: object, salt: str) -> str:
    """What a computation saw: every game's id, result and moves, in the order given."""
    import pyarrow as pa

    assert isinstance(table, pa.Table)
    rows = table.select(["game_id", "result_white", "moves"]).to_pylist()
    return salt + hashlib.sha256(repr(rows).encode()).hexdigest()


def _ctx(folder: Path, timeline: TaskTimeline) -> StageContext:
    deck = tuple(load_deck("english"))
    return StageContext(InProcessExecutor(), store_path(folder), "run", "english", 11, 2, 80, deck,
                        timeline=timeline)


def test_a_fresh_stage_and_its_computation_are_one_task(tmp_path: Path) -> None:
    timeline = TaskTimeline()
    ctx = _ctx(tmp_path, timeline)
    table, digest = ctx.play_then(STAGE, PAIRINGS, games_digest, "d:")
    assert table.num_rows == 6 and digest == games_digest(table, "d:")  # the games it returns
    ((timing, _),) = timeline.tasks["calibrate/easy/trials"]
    assert timing.games == 6 and timing.batches == 3 and timing.estimated > 0
    assert timing.pairing == pair_key("random", "easy") and 0 <= timing.other_seconds <= timing.seconds


def test_on_a_resume_the_computation_sees_the_same_games(tmp_path: Path) -> None:
    fresh, digest = _ctx(tmp_path / "a", TaskTimeline()).play_then(STAGE, PAIRINGS, games_digest, "d:")
    folder = tmp_path / "b"
    _ctx(folder, TaskTimeline()).play(STAGE, PAIRINGS)
    lost = batch_path(store_path(folder), stage_run_id("run", STAGE), "english", 1)
    lost.unlink()  # as if the driver died before this batch was written
    timeline = TaskTimeline()
    table, again = _ctx(folder, timeline).play_then(STAGE, PAIRINGS, games_digest, "d:")
    assert games_digest(table, "d:") == games_digest(fresh, "d:") and again == digest
    pairings = sorted(t.pairing for t, _ in timeline.tasks["calibrate/easy/trials"])
    assert pairings == sorted([pair_key("random", "easy"), f"{CALL_PAIRING}:games_digest"])


def test_an_easy_trials_blunder_rate_is_the_same_in_its_games_task(tmp_path: Path) -> None:
    ctx = _ctx(tmp_path, TaskTimeline())
    table, stats = ctx.play_then(STAGE, PAIRINGS, games_blunders, "english", "easy", 5)
    assert stats.moves > 0 and stats == measure_blunders("english", table, "easy", 5)
