"""Atomic Parquet batches with checksum records, resume bookkeeping, damaged files replayed, reading back."""

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
    check_batches,
    finished_batches,
    open_dataset,
    read_games,
    remove_stale_temp_files,
    spec_from_json,
    spec_to_json,
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
    assert path.local_path() == tmp_path / "run" / "games" / "variant=english" / "batch-000012.parquet"
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
    final = batch_path(tmp_path, "run", "english", 1).local_path()
    torn = final.with_name(f".{final.name}.{os.getpid() + 1}.tmp")
    torn.write_bytes(b"PAR1 half a file")  # what a killed driver (another process) leaves behind
    in_flight = final.with_name(f".batch-000002.parquet.{os.getpid()}.tmp")
    in_flight.write_bytes(b"PAR1 being written")  # this driver's write on another thread
    assert finished_batches(tmp_path, "run", "english") == {0}
    assert read_games(tmp_path, "run").num_rows == 4
    # a reader who points pyarrow.dataset at the folder directly does not see it either
    plain = ds.dataset(tmp_path / "run" / "games", format="parquet", partitioning="hive")
    assert plain.to_table().num_rows == 4
    assert [p.local_path() for p in remove_stale_temp_files(tmp_path, "run")] == [torn]
    assert not torn.exists() and in_flight.exists()


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
    path = batch_path(tmp_path, "run", "english", 1).local_path()
    pq.write_table(old, path)
    with pytest.raises(ValueError, match=r"batch-000001.parquet was written under schema version 1.*"
                                         r"cannot be resumed"):
        finished_batches(tmp_path, "run", "english")


# ---- checksum records: damaged files are found, named and played again -----------------------


def _specs(n: int) -> list:  # type: ignore[type-arg]
    deck = load_deck("english")
    return [make_batch_spec(run_id="run/stage", batch_id=b, variant="english", player_a="random",
                            player_b="random", run_seed=3, first_game_id=4 * b,
                            openings=[(o.id, o.fen) for o in deck[2 * b: 2 * b + 2]], ply_cap=60)
            for b in range(n)]


def test_every_batch_file_has_a_checksum_record(tmp_path: Path, batches: list[pa.Table]) -> None:
    import hashlib
    import json

    spec = _specs(1)[0]
    path = write_batch(batches[0], tmp_path, "run", "english", 0, spec=spec)
    record = json.loads((path.local_path().parent / "_batch-000000.json").read_text())
    data = path.local_path().read_bytes()
    assert record["rows"] == 4 and record["bytes"] == len(data)
    assert record["sha256"] == hashlib.sha256(data).hexdigest()
    assert spec_from_json(record["spec"]) == spec and spec_from_json(spec_to_json(spec)) == spec
    # readers that point pyarrow.dataset at the folder never see the records
    plain = ds.dataset(tmp_path / "run" / "games", format="parquet", partitioning="hive")
    assert plain.to_table().num_rows == 4


@pytest.mark.parametrize(("damage", "reason"), [
    (lambda p: p.write_bytes(p.read_bytes()[: len(p.read_bytes()) // 2]), "bytes"),
    (lambda p: p.write_bytes(p.read_bytes()[:-9] + b"X" + p.read_bytes()[-8:]), "checksum differs"),
    (lambda p: p.unlink(), "file missing"),
    (lambda p: (p.parent / f"_{p.stem}.json").unlink(), "no checksum record"),
])
def test_damaged_files_are_not_finished_and_say_why(tmp_path: Path, batches: list[pa.Table],
                                                   damage: object, reason: str) -> None:
    for b, table in enumerate(batches):
        write_batch(table, tmp_path, "run", "english", b)
    damage(batch_path(tmp_path, "run", "english", 1).local_path())  # type: ignore[operator]
    check = check_batches(tmp_path, "run", "english", expected_rows={0: 4, 1: 4, 2: 4})
    assert check.finished == {0, 2}
    assert [d.path.name for d in check.damaged] == ["batch-000001.parquet"]
    assert reason in check.damaged[0].reason


def test_a_resume_replays_damaged_files_of_finished_stages(tmp_path: Path) -> None:
    from pipeline.games.executor import InProcessExecutor
    from pipeline.games.records import TIMING_COLUMNS
    from pipeline.games.storage_repair import replay_damaged

    specs = _specs(3)
    for spec in specs:  # a "finished stage": nothing will ask for its batches again
        write_batch(play_batch(spec), tmp_path, "run/stage", "english", spec.batch_id, spec=spec)
    before = read_games(tmp_path, "run/stage")
    assert replay_damaged(tmp_path / "run", InProcessExecutor()) == []
    victim = batch_path(tmp_path, "run/stage", "english", 2).local_path()
    victim.write_bytes(victim.read_bytes()[:100])  # truncated after it was written
    played: list[int] = []

    def counting(spec):  # type: ignore[no-untyped-def]
        played.append(spec.batch_id)
        return play_batch(spec)

    said: list[str] = []
    damaged = replay_damaged(tmp_path / "run", InProcessExecutor(counting), said.append)
    assert played == [2] and [d.path.name for d in damaged] == ["batch-000002.parquet"]
    assert "stage/games/variant=english/batch-000002.parquet" in said[0] and "were written" in said[0]
    after = read_games(tmp_path, "run/stage")
    keep = [c for c in before.column_names if c not in TIMING_COLUMNS]
    assert after.select(keep).equals(before.select(keep))
    assert check_batches(tmp_path, "run/stage", "english").finished == {0, 1, 2}


def test_an_unreadable_record_is_an_error_naming_it(tmp_path: Path, batches: list[pa.Table]) -> None:
    write_batch(batches[0], tmp_path, "run", "english", 0)
    (tmp_path / "run" / "games" / "variant=english" / "_batch-000000.json").write_text("{")
    with pytest.raises(ValueError, match=r"checksum record .*_batch-000000.json is unreadable"):
        finished_batches(tmp_path, "run", "english")


def test_store_paths_of_local_folders(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from pipeline.games.storage_fs import store_path

    monkeypatch.chdir(tmp_path)
    here = store_path("runs")
    assert here.is_local and str(here) == str(tmp_path / "runs") and here == tmp_path / "runs"
    file = here / "a/b.txt"
    file.write_text("x")
    assert file.read_text() == "x" and file.is_file() and here.is_dir() and file.parent.name == "a"
    assert [p.relative_to(here) for p in here.glob("*/*.txt")] == ["a/b.txt"]
    assert not [p for p in (tmp_path / "runs").rglob("*.tmp")]
    with pytest.raises(ValueError, match="not a relative path"):
        here / "../escape"
    with pytest.raises(FileNotFoundError):
        (here / "missing.json").read_text()
    assert store_path(f"file://{tmp_path}/runs") == here
