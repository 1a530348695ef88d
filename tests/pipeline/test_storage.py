"""Atomic Parquet batches, resume bookkeeping and reading the dataset back."""

from __future__ import annotations

import os
from pathlib import Path

import pyarrow as pa
import pyarrow.dataset as ds
import pytest

from pipeline.games.match import make_batch_spec, play_batch
from pipeline.games.openings import load_deck
from pipeline.games.records import GAMES_SCHEMA
from pipeline.games.storage import (
    batch_path,
    finished_batches,
    open_dataset,
    read_games,
    remove_stale_temp_files,
    write_batch,
)


@pytest.fixture(scope="module")
def batches() -> list[pa.Table]:
    deck = load_deck("english")
    out = []
    for b in range(3):
        spec = make_batch_spec(run_id="run", batch_id=b, variant="english", player_a="random",
                               player_b="random", run_seed=0, first_game_id=4 * b,
                               openings=[(o.id, o.fen) for o in deck[2 * b: 2 * b + 2]], ply_cap=60)
        out.append(play_batch(spec))
    return out


def test_paths_are_deterministic_and_zero_padded(tmp_path: Path) -> None:
    path = batch_path(tmp_path, "run", "english", 12)
    assert path == tmp_path / "run" / "games" / "variant=english" / "batch-000012.parquet"
    with pytest.raises(ValueError):
        batch_path(tmp_path, "run", "english", -1)
    with pytest.raises(ValueError, match="unknown dataset"):
        batch_path(tmp_path, "run", "english", 1, dataset="moves")


def test_write_read_roundtrip(tmp_path: Path, batches: list[pa.Table]) -> None:
    for b, table in enumerate(batches):
        write_batch(table, tmp_path, "run", "english", b)
    assert finished_batches(tmp_path, "run", "english") == {0, 1, 2}
    games = read_games(tmp_path, "run")
    assert games.num_rows == 12 and games.column("game_id").to_pylist() == list(range(12))
    assert games.schema.equals(GAMES_SCHEMA, check_metadata=False)
    assert open_dataset(tmp_path, "run").schema.equals(GAMES_SCHEMA, check_metadata=False)
    # a retried batch replaces its own file: still 12 games, no duplicates
    write_batch(batches[1], tmp_path, "run", "english", 1)
    assert read_games(tmp_path, "run").num_rows == 12
    assert not [p for p in (tmp_path / "run").rglob("*") if p.name.endswith(".tmp")]


def test_partial_temp_files_are_never_data(tmp_path: Path, batches: list[pa.Table]) -> None:
    write_batch(batches[0], tmp_path, "run", "english", 0)
    final = batch_path(tmp_path, "run", "english", 1)
    torn = final.with_name(f".{final.name}.{os.getpid()}.tmp")
    torn.write_bytes(b"PAR1 half a file")  # what a killed driver leaves behind
    assert finished_batches(tmp_path, "run", "english") == {0}
    assert read_games(tmp_path, "run").num_rows == 4
    # a reader who points pyarrow.dataset at the folder directly does not see it either
    plain = ds.dataset(tmp_path / "run" / "games", format="parquet", partitioning="hive")
    assert plain.to_table().num_rows == 4
    assert remove_stale_temp_files(tmp_path, "run") == [torn] and not torn.exists()


def test_failed_write_leaves_nothing(tmp_path: Path, batches: list[pa.Table]) -> None:
    with pytest.raises(ValueError, match="expected schema"):
        write_batch(batches[0].drop_columns(["moves"]), tmp_path, "run", "english", 0)
    folder = tmp_path / "run" / "games" / "variant=english"
    assert not folder.exists() or not list(folder.iterdir())


def test_finished_batches_checks_row_counts(tmp_path: Path, batches: list[pa.Table]) -> None:
    write_batch(batches[0], tmp_path, "run", "english", 0)
    write_batch(batches[1].slice(0, 2), tmp_path, "run", "english", 1)  # short: not finished
    assert finished_batches(tmp_path, "run", "english", expected_rows={0: 4, 1: 4, 2: 4}) == {0}
    assert finished_batches(tmp_path, "missing", "english") == set()


def test_positions_dataset_roundtrip(tmp_path: Path) -> None:
    from pipeline.games.records import POSITIONS_SCHEMA, POSITIONS_SCHEMA_VERSION, positions_table

    rows = [
        {"schema_version": POSITIONS_SCHEMA_VERSION, "run_id": "run", "game_id": g, "variant": "english",
         "ply": 10 + g, "fen": "B:W21,22:B1,2", "side_to_move": "black", "features": [1.0, 0.5, -2.0],
         "result_white": 1.0, "result_side_to_move": 0.0}
        for g in range(3)
    ]
    table = positions_table(rows)
    write_batch(table, tmp_path, "run", "english", 0, dataset="positions")
    back = open_dataset(tmp_path, "run", "positions").to_table()
    assert back.schema.equals(POSITIONS_SCHEMA, check_metadata=False)
    assert back.column("features").to_pylist() == [[1.0, 0.5, -2.0]] * 3
    with pytest.raises(ValueError, match="does not fit the schema"):
        positions_table([{**rows[0], "extra": 1}])


def test_a_batch_of_another_schema_version_refuses_to_resume(tmp_path: Path, batches: list[pa.Table]) -> None:
    import pyarrow.parquet as pq

    write_batch(batches[0], tmp_path, "run", "english", 0)
    assert finished_batches(tmp_path, "run", "english") == {0}
    old = batches[1].replace_schema_metadata({**GAMES_SCHEMA.metadata, b"schema_version": b"1"})
    path = batch_path(tmp_path, "run", "english", 1)
    pq.write_table(old, path)
    with pytest.raises(ValueError, match=r"batch-000001.parquet was written under schema version 1.*"
                                         r"cannot be resumed"):
        finished_batches(tmp_path, "run", "english")
