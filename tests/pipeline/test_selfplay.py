"""The self-play stage in-process: planning, determinism, resume, run-folder safety."""

from __future__ import annotations

from pathlib import Path

import pyarrow.dataset as ds
import pytest

from pipeline.config.run_config import RunConfig
from pipeline.games.executor import InProcessExecutor
from pipeline.games.match import play_batch
from pipeline.games.records import GAMES_SCHEMA, TIMING_COLUMNS
from pipeline.games.selfplay import RunFolderError, opening_schedule, plan_batches, run_selfplay
from pipeline.games.storage import batch_path, read_games


def test_plan_covers_every_game_once(smoke_config: RunConfig) -> None:
    specs = plan_batches(smoke_config)
    assert [s.batch_id for s in specs] == [0, 1, 2, 3]
    assert sum(s.n_games for s in specs) == 40
    assert [s.first_game_id for s in specs] == [0, 10, 20, 30]
    odd = smoke_config.replace("selfplay", games=44)
    assert [s.n_games for s in plan_batches(odd)] == [10, 10, 10, 10, 4]


def test_opening_schedule_uses_the_whole_deck_before_repeating() -> None:
    from pipeline.games.openings import load_deck

    deck = load_deck("english")
    order = opening_schedule(deck, 7, 2 * len(deck))
    assert {o.id for o in order[: len(deck)]} == {o.id for o in deck}
    assert order[: len(deck)] != order[len(deck):]
    assert opening_schedule(deck, 7, 10) == order[:10]


def test_smoke_run_writes_the_documented_dataset(smoke_config: RunConfig) -> None:
    summary = run_selfplay(smoke_config, InProcessExecutor())
    assert summary.games_played == 40 and summary.wins_a + summary.draws + summary.losses_a == 40
    root = Path(smoke_config.run.output_root) / smoke_config.run_id
    assert (root / "run.json").is_file()
    dataset = ds.dataset(root / "games", format="parquet", partitioning="hive")
    table = dataset.to_table()
    assert table.num_rows == 40
    assert set(table.column("game_id").to_pylist()) == set(range(40))
    for field in GAMES_SCHEMA:
        assert table.schema.field(field.name).type == field.type


def test_same_config_same_games(smoke_config: RunConfig, tmp_path: Path) -> None:
    run_selfplay(smoke_config, InProcessExecutor())
    again = smoke_config.replace("run", output_root=str(tmp_path / "again"))
    run_selfplay(again, InProcessExecutor())
    a = read_games(smoke_config.run.output_root, smoke_config.run_id)
    b = read_games(again.run.output_root, again.run_id)
    keep = [c for c in a.column_names if c not in TIMING_COLUMNS]
    assert a.select(keep).equals(b.select(keep))


def test_resume_skips_finished_and_redoes_short_batches(smoke_config: RunConfig) -> None:
    played: list[int] = []

    def counting(spec):  # type: ignore[no-untyped-def]
        played.append(spec.batch_id)
        return play_batch(spec)

    run_selfplay(smoke_config, InProcessExecutor(counting))
    out, run_id = smoke_config.run.output_root, smoke_config.run_id
    batch_path(out, run_id, "english", 2).unlink()
    with pytest.raises(RunFolderError, match="--resume"):
        run_selfplay(smoke_config, InProcessExecutor(counting))
    played.clear()
    summary = run_selfplay(smoke_config, InProcessExecutor(counting), resume=True)
    assert played == [2] and summary.batches_skipped == 3
    games = read_games(out, run_id)
    assert games.num_rows == 40 and len(set(games.column("game_id").to_pylist())) == 40


def test_a_folder_of_another_config_is_refused(smoke_config: RunConfig) -> None:
    run_selfplay(smoke_config, InProcessExecutor())
    other = smoke_config.replace("run", id=smoke_config.run_id, seed=99)
    with pytest.raises(RunFolderError, match="another config"):
        run_selfplay(other, InProcessExecutor(), resume=True)
