"""Parquet storage of self-play results: one file per batch, written atomically, with a checksum.

Layout (hive-partitioned by variant, so ``pyarrow.dataset`` adds the partition key)::

    <output_root>/<run_id>/run.json
    <output_root>/<run_id>/games/variant=<v>/batch-000012.parquet
    <output_root>/<run_id>/games/variant=<v>/_batch-000012.json
    <output_root>/<run_id>/positions/variant=<v>/batch-000012.parquet

``output_root`` is a local folder or any pyarrow filesystem URI (``s3://bucket/runs``): every
read and write goes through :mod:`pipeline.games.storage_fs`, which replaces a file atomically
(a temp file renamed over it where the store renames, a single whole-object PUT where it does
not). A file under a final name is therefore always complete as written; a retried or resumed
batch replaces its own file, never adds one.

Beside each batch file, its *checksum record* ``_batch-<id>.json`` (a leading underscore, which
``pyarrow.dataset`` ignores like the temp files' leading dot) keeps the row count, byte count and
sha256 of the file as written, and the batch's spec. A batch counts as finished only when its
file matches its record, so a file truncated or altered after it was written is found on resume
(:func:`check_batches`) and played again from the recorded spec (:func:`damaged_batches` scans a
whole run folder, every stage included).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq

from pipeline.games.match import BatchSpec, GameSeeds
from pipeline.games.records import GAMES_SCHEMA, POSITIONS_SCHEMA
from pipeline.games.storage_fs import StorePath, joined, store_path

BATCH_DIGITS = 6
BATCH_GLOB = "batch-*.parquet"
_BATCH_RE = re.compile(r"^batch-(\d+)\.parquet$")
_RECORD_RE = re.compile(r"^_batch-(\d+)\.json$")
DATASETS = {"games": GAMES_SCHEMA, "positions": POSITIONS_SCHEMA}
RECORD_VERSION = 1

Root = str | Path | StorePath


def run_dir(output_root: Root, run_id: str) -> StorePath:
    return joined(output_root, run_id)


def partition_dir(output_root: Root, run_id: str, variant: str, dataset: str = "games") -> StorePath:
    if dataset not in DATASETS:
        raise ValueError(f"unknown dataset {dataset!r}; known: {', '.join(DATASETS)}")
    return run_dir(output_root, run_id) / dataset / f"variant={variant}"


def batch_path(
    output_root: Root, run_id: str, variant: str, batch_id: int, dataset: str = "games"
) -> StorePath:
    """The one file that holds batch ``batch_id`` (zero-padded, so names sort by batch)."""
    if batch_id < 0:
        raise ValueError(f"batch id must be >= 0, got {batch_id}")
    return partition_dir(output_root, run_id, variant, dataset) / f"batch-{batch_id:0{BATCH_DIGITS}d}.parquet"


def record_path(batch: StorePath) -> StorePath:
    """The checksum record of a batch file: ``_batch-<id>.json`` beside it."""
    return batch.with_name(f"_{batch.stem}.json")


def atomic_write_bytes(path: Root, data: bytes) -> None:
    """Replace the file at ``path`` with ``data`` atomically (see the module docstring)."""
    store_path(path).write_bytes(data)


def parquet_bytes(table: pa.Table, schema: pa.Schema, name: str = "batch") -> bytes:
    """``table`` (which must have ``schema``) as the bytes of one zstd Parquet file."""
    if not table.schema.equals(schema, check_metadata=False):
        raise ValueError(f"table does not have the expected schema for {name}: {table.schema}")
    sink = pa.BufferOutputStream()
    pq.write_table(table.replace_schema_metadata(schema.metadata), sink, compression="zstd")
    return bytes(sink.getvalue().to_pybytes())


def write_batch_file(table: pa.Table, path: Root, schema: pa.Schema, spec: BatchSpec | None = None,
                     dataset: str = "games") -> StorePath:
    """Write one batch file's checksum record (rows, bytes, sha256, spec), then the file.

    Record first: a batch file under its final name always has its record, so a driver killed
    between the two writes leaves a record without its file (or beside the older copy it was
    replacing), which the check finds and the batch is played again."""
    target = store_path(path)
    data = parquet_bytes(table, schema, target.name)
    record = {"record_version": RECORD_VERSION, "file": target.name, "dataset": dataset,
              "rows": table.num_rows, "bytes": len(data), "sha256": hashlib.sha256(data).hexdigest(),
              "spec": None if spec is None else spec_to_json(spec)}
    write_json(record_path(target), record)
    target.write_bytes(data)
    return target


def write_batch(
    table: pa.Table, output_root: Root, run_id: str, variant: str, batch_id: int, dataset: str = "games",
    spec: BatchSpec | None = None,
) -> StorePath:
    """Atomically write one finished batch to its deterministic file (replacing any older copy)."""
    path = batch_path(output_root, run_id, variant, batch_id, dataset)
    return write_batch_file(table, path, DATASETS[dataset], spec, dataset)


def write_json(path: Root, data: Any) -> None:
    """Atomically write a small JSON document (the run manifest)."""
    text = json.dumps(data, indent=2, sort_keys=True) + "\n"
    store_path(path).write_text(text)


def read_json(path: Root) -> Any:
    """A JSON document from the run folder (FileNotFoundError when it is missing)."""
    return json.loads(store_path(path).read_text())


# ---- spec records --------------------------------------------------------------------------


def spec_to_json(spec: BatchSpec) -> dict[str, Any]:
    """A batch spec as plain JSON (what the checksum record keeps to replay the batch)."""
    return {"run_id": spec.run_id, "batch_id": spec.batch_id, "variant": spec.variant,
            "player_a": spec.player_a, "player_b": spec.player_b, "run_seed": spec.run_seed,
            "first_game_id": spec.first_game_id, "openings": [list(o) for o in spec.openings],
            "seeds": [[s.game, s.a, s.b] for s in spec.seeds], "ply_cap": spec.ply_cap}


def spec_from_json(data: Mapping[str, Any]) -> BatchSpec:
    """The inverse of :func:`spec_to_json`."""
    return BatchSpec(
        run_id=str(data["run_id"]), batch_id=int(data["batch_id"]), variant=str(data["variant"]),
        player_a=str(data["player_a"]), player_b=str(data["player_b"]), run_seed=int(data["run_seed"]),
        first_game_id=int(data["first_game_id"]),
        openings=tuple((str(o[0]), str(o[1])) for o in data["openings"]),
        seeds=tuple(GameSeeds(int(s[0]), int(s[1]), int(s[2])) for s in data["seeds"]),
        ply_cap=int(data["ply_cap"]))


# ---- checking finished batches ---------------------------------------------------------------


@dataclass(frozen=True)
class Damaged:
    """A batch file that does not match its checksum record (or has none), and why."""

    path: StorePath
    reason: str
    spec: BatchSpec | None = None
    dataset: str = "games"
    rows: int | None = None

    def describe(self, base: StorePath | None = None) -> str:
        shown = self.path.relative_to(base) if base is not None else str(self.path)
        return f"{shown} ({self.reason})"


@dataclass(frozen=True)
class BatchCheck:
    """What a folder of batch files holds: ids of verified batches and the damaged files."""

    finished: frozenset[int]
    damaged: tuple[Damaged, ...]


def _read_record(path: StorePath) -> dict[str, Any]:
    try:
        record = read_json(path)
        if not isinstance(record, dict) or record.get("record_version") != RECORD_VERSION:
            raise ValueError("not a checksum record of this version")
        for key in ("rows", "bytes", "sha256"):
            record[key]
    except (ValueError, KeyError, UnicodeDecodeError) as err:
        raise ValueError(f"checksum record {path} is unreadable ({type(err).__name__}: {err}); it cannot "
                         "vouch for its batch: delete it and its batch file, then resume the run "
                         "(a finished stage needs its result file removed too, to be played again)") from None
    return record


def verify_batch(path: StorePath, schema: pa.Schema) -> tuple[int | None, str | None, dict[str, Any] | None]:
    """(rows, problem, record) of one batch file: problem None when it matches its record.

    A file of another schema version raises ValueError: its games were seeded differently, so a
    run recorded under it cannot be resumed."""
    rec_file = record_path(path)
    if not rec_file.is_file():
        try:
            source = path.open_input_file()
        except FileNotFoundError:
            return None, "file missing", None
        with source:
            try:
                pq.read_schema(source)
            except (pa.ArrowException, OSError):
                return None, "no checksum record, and not a readable Parquet file", None
            _check_version(path, source, schema)
        return None, "no checksum record beside it", None
    record = _read_record(rec_file)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None, "file missing", record
    if len(data) != record["bytes"]:
        return None, f"{len(data)} bytes, {record['bytes']} were written", record
    if hashlib.sha256(data).hexdigest() != record["sha256"]:
        return None, "checksum differs from the one recorded when it was written", record
    _check_version(path, pa.BufferReader(data), schema)
    rows = int(pq.read_metadata(pa.BufferReader(data)).num_rows)
    if rows != record["rows"]:
        return None, f"{rows} rows, {record['rows']} were written", record
    return rows, None, record


def check_batches(
    output_root: Root, run_id: str, variant: str, dataset: str = "games",
    expected_rows: Mapping[int, int] | None = None,
) -> BatchCheck:
    """Verify every batch file of a partition against its checksum record.

    Temp files never count. A verified file with another row count than ``expected_rows`` asks
    for is not finished (the plan changed; it is rewritten). A damaged one is listed with why."""
    folder = partition_dir(output_root, run_id, variant, dataset)
    ids: dict[int, StorePath] = {}
    for file in folder.glob("*"):
        named = _BATCH_RE.match(file.name) or _RECORD_RE.match(file.name)
        if named:
            batch_id = int(named.group(1))
            ids[batch_id] = batch_path(output_root, run_id, variant, batch_id, dataset)
    done: set[int] = set()
    damaged: list[Damaged] = []
    for batch_id, path in sorted(ids.items()):
        if expected_rows is not None and batch_id not in expected_rows:
            continue
        rows, problem, record = verify_batch(path, DATASETS[dataset])
        if problem is not None:
            damaged.append(_damaged(path, problem, record, dataset))
        elif expected_rows is None or rows == expected_rows[batch_id]:
            done.add(batch_id)
    return BatchCheck(frozenset(done), tuple(damaged))


def _damaged(path: StorePath, problem: str, record: Mapping[str, Any] | None, dataset: str) -> Damaged:
    spec = None if record is None or record.get("spec") is None else spec_from_json(record["spec"])
    return Damaged(path, problem, spec, dataset, None if record is None else int(record["rows"]))


def finished_batches(
    output_root: Root, run_id: str, variant: str, dataset: str = "games",
    expected_rows: Mapping[int, int] | None = None,
) -> set[int]:
    """Ids of batches whose file matches its checksum record (see :func:`check_batches`)."""
    return set(check_batches(output_root, run_id, variant, dataset, expected_rows).finished)


def damaged_batches(run_folder: Root) -> list[Damaged]:
    """Every recorded batch file of a run folder, every stage, that does not match its record."""
    root = store_path(run_folder)
    out: list[Damaged] = []
    for rec_file in root.files():
        match = _RECORD_RE.match(rec_file.name)
        if not match or not rec_file.parent.name.startswith("variant="):
            continue
        dataset = rec_file.parent.parent.name
        if dataset not in DATASETS:
            continue
        path = rec_file.with_name(f"batch-{match.group(1)}.parquet")
        _, problem, record = verify_batch(path, DATASETS[dataset])
        if problem is not None:
            out.append(_damaged(path, problem, record, dataset))
    return out


def _check_version(path: StorePath, source: Any, schema: pa.Schema) -> None:
    """Raise ValueError unless the batch file was written under ``schema``'s version."""
    want = schema.metadata[b"schema_version"]
    found = (pq.read_schema(source).metadata or {}).get(b"schema_version")
    if found != want:
        shown = "none" if found is None else found.decode(errors="replace")
        raise ValueError(f"{path} was written under schema version {shown}, this version writes "
                         f"{want.decode()}: a run recorded under another version cannot be resumed; "
                         f"start it in a new output folder")


def remove_stale_temp_files(output_root: Root, run_id: str) -> list[StorePath]:
    """Delete temp files left by a killed driver (they are never data). Returns what was removed.
    Temp files named with this process's id are writes in flight on another of its threads (two
    callers may play one stage folder side by side), so they stay; a leftover of an earlier
    process that had the same id stays too, harmlessly, until its batch is written over it."""
    removed = []
    own = f".{os.getpid()}.tmp"
    for path in run_dir(output_root, run_id).rglob(".*.tmp"):
        if path.name.endswith(own):
            continue
        path.unlink(missing_ok=True)
        removed.append(path)
    return removed


def batch_files(folder: StorePath) -> list[StorePath]:
    """The batch files of a dataset folder (``<dataset>/variant=*/batch-*.parquet``), sorted."""
    return [p for p in folder.glob(f"variant=*/{BATCH_GLOB}") if _BATCH_RE.match(p.name)]


def read_batch_file(path: Root, schema: pa.Schema = GAMES_SCHEMA,
                    columns: Iterable[str] | None = None) -> pa.Table:
    """One batch file as a table of ``schema``."""
    target = store_path(path)
    return pq.read_table(target.path, filesystem=target.fs, schema=schema,
                         columns=list(columns) if columns is not None else None)


def open_dataset(output_root: Root, run_id: str, dataset: str = "games") -> ds.Dataset:
    """The run's dataset with hive partitioning on ``variant`` and the documented schema."""
    folder = run_dir(output_root, run_id) / dataset
    files = batch_files(folder)
    if not files and not folder.is_dir():
        raise FileNotFoundError(f"no {dataset} dataset at {folder}")
    return ds.dataset(
        [p.path for p in files],
        schema=DATASETS[dataset],
        format="parquet",
        filesystem=folder.fs,
        partitioning=ds.partitioning(pa.schema([("variant", pa.string())]), flavor="hive"),
        partition_base_dir=folder.path,
    )


def read_games(output_root: Root, run_id: str, columns: Iterable[str] | None = None) -> pa.Table:
    """Every game of the run, sorted by game id."""
    table = open_dataset(output_root, run_id, "games").to_table(
        columns=list(columns) if columns is not None else None
    )
    if "game_id" in table.column_names:
        table = table.sort_by("game_id")
    return table
