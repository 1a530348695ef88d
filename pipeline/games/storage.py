"""Parquet storage of self-play results: one file per batch, written atomically.

Layout (hive-partitioned by variant, so ``pyarrow.dataset`` adds the partition key)::

    <output_root>/<run_id>/run.json
    <output_root>/<run_id>/games/variant=<v>/batch-000012.parquet
    <output_root>/<run_id>/positions/variant=<v>/batch-000012.parquet

A batch is written to a temp file in the same folder (``.batch-000012.parquet.<pid>.tmp``: a
leading dot, which ``pyarrow.dataset`` ignores and the ``batch-*.parquet`` glob never matches),
fsynced, then renamed over its final name with ``os.replace``. A file under a final name is
therefore always complete; a retried or resumed batch replaces its own file, never adds one.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq

from pipeline.games.records import GAMES_SCHEMA, POSITIONS_SCHEMA

BATCH_DIGITS = 6
BATCH_GLOB = "batch-*.parquet"
_BATCH_RE = re.compile(r"^batch-(\d+)\.parquet$")
DATASETS = {"games": GAMES_SCHEMA, "positions": POSITIONS_SCHEMA}


def run_dir(output_root: str | Path, run_id: str) -> Path:
    return Path(output_root) / run_id


def partition_dir(output_root: str | Path, run_id: str, variant: str, dataset: str = "games") -> Path:
    if dataset not in DATASETS:
        raise ValueError(f"unknown dataset {dataset!r}; known: {', '.join(DATASETS)}")
    return run_dir(output_root, run_id) / dataset / f"variant={variant}"


def batch_path(
    output_root: str | Path, run_id: str, variant: str, batch_id: int, dataset: str = "games"
) -> Path:
    """The one file that holds batch ``batch_id`` (zero-padded, so names sort by batch)."""
    if batch_id < 0:
        raise ValueError(f"batch id must be >= 0, got {batch_id}")
    return partition_dir(output_root, run_id, variant, dataset) / f"batch-{batch_id:0{BATCH_DIGITS}d}.parquet"


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def atomic_write_bytes(path: Path, write: Any) -> None:
    """Write via ``write(tmp_path)`` to a hidden temp file beside ``path``, fsync, rename over it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        write(tmp)
        fd = os.open(tmp, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    _fsync_dir(path.parent)


def write_table(table: pa.Table, path: Path, schema: pa.Schema) -> Path:
    """Atomically write ``table`` (which must have ``schema``) as one Parquet file."""
    if not table.schema.equals(schema, check_metadata=False):
        raise ValueError(f"table does not have the expected schema for {path.name}: {table.schema}")
    table = table.replace_schema_metadata(schema.metadata)
    atomic_write_bytes(path, lambda tmp: pq.write_table(table, tmp, compression="zstd"))
    return path


def write_batch(
    table: pa.Table, output_root: str | Path, run_id: str, variant: str, batch_id: int, dataset: str = "games"
) -> Path:
    """Atomically write one finished batch to its deterministic file (replacing any older copy)."""
    path = batch_path(output_root, run_id, variant, batch_id, dataset)
    return write_table(table, path, DATASETS[dataset])


def write_json(path: Path, data: Any) -> None:
    """Atomically write a small JSON document (the run manifest)."""
    text = json.dumps(data, indent=2, sort_keys=True) + "\n"
    atomic_write_bytes(path, lambda tmp: Path(tmp).write_text(text, encoding="utf-8"))


def finished_batches(
    output_root: str | Path,
    run_id: str,
    variant: str,
    dataset: str = "games",
    expected_rows: dict[int, int] | None = None,
) -> set[int]:
    """Ids of batches whose file exists (and, if ``expected_rows`` is given, has that many rows).

    Temp files never count. A final-named file with the wrong row count is not finished (it is
    rewritten on resume); a file whose footer cannot be read raises, since os.replace should make
    that impossible and it must not be silently dropped. So does a file of another schema version:
    its games were seeded differently, so a run recorded under it cannot be resumed.
    """
    folder = partition_dir(output_root, run_id, variant, dataset)
    if not folder.is_dir():
        return set()
    done = set()
    for path in folder.glob(BATCH_GLOB):
        match = _BATCH_RE.match(path.name)
        if not match:
            continue
        batch_id = int(match.group(1))
        _check_version(path, DATASETS[dataset])
        if expected_rows is not None:
            if batch_id not in expected_rows:
                continue
            if pq.read_metadata(path).num_rows != expected_rows[batch_id]:
                continue
        done.add(batch_id)
    return done


def _check_version(path: Path, schema: pa.Schema) -> None:
    """Raise ValueError unless the batch file was written under ``schema``'s version."""
    want = schema.metadata[b"schema_version"]
    found = (pq.read_schema(path).metadata or {}).get(b"schema_version")
    if found != want:
        shown = "none" if found is None else found.decode(errors="replace")
        raise ValueError(f"{path} was written under schema version {shown}, this version writes "
                         f"{want.decode()}: a run recorded under another version cannot be resumed; "
                         f"start it in a new output folder")


def remove_stale_temp_files(output_root: str | Path, run_id: str) -> list[Path]:
    """Delete temp files left by a killed driver (they are never data). Returns what was removed."""
    removed = []
    root = run_dir(output_root, run_id)
    if root.is_dir():
        for path in root.rglob(".*.tmp"):
            path.unlink(missing_ok=True)
            removed.append(path)
    return removed


def open_dataset(output_root: str | Path, run_id: str, dataset: str = "games") -> ds.Dataset:
    """The run's dataset with hive partitioning on ``variant`` and the documented schema."""
    folder = run_dir(output_root, run_id) / dataset
    if not folder.is_dir():
        raise FileNotFoundError(f"no {dataset} dataset at {folder}")
    files = sorted(str(p) for p in folder.glob(f"variant=*/{BATCH_GLOB}") if _BATCH_RE.match(p.name))
    return ds.dataset(
        files,
        schema=DATASETS[dataset],
        format="parquet",
        partitioning=ds.partitioning(pa.schema([("variant", pa.string())]), flavor="hive"),
        partition_base_dir=str(folder),
    )


def read_games(output_root: str | Path, run_id: str, columns: Iterable[str] | None = None) -> pa.Table:
    """Every game of the run, sorted by game id."""
    table = open_dataset(output_root, run_id, "games").to_table(
        columns=list(columns) if columns is not None else None
    )
    if "game_id" in table.column_names:
        table = table.sort_by("game_id")
    return table
