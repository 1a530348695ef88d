"""Play these pairings: the reusable match service of the ladder, tuning and calibration stages.

A :class:`Pairing` is "A against B for pairs ``start .. start + pairs - 1``". The plan is a pure
function of its inputs: pairing ``i``'s pair ``k`` lives in batch ``i * BATCH_STRIDE + k // bp``
(``bp`` = pairs per batch), so batch ids and game ids are unique within a stage and do not move
when a pairing is extended step by step (tuning steps, SPRT chunks). Pair ``k`` plays the
``k``-th opening of the pairing's stream (``opening_schedule`` seeded from the run seed and the
stream), both colours; two pairings with the same stream play the same openings in the same
order, which is what paired comparisons across trials want (and the Wilcoxon pruner's steps).

Player seeds derive from the game: (run seed, pairing index, pair number, colour), never from
batch ids or sizes (``pipeline.games.match.game_seeds``). With ``stage_seeds`` (the main job's
stages, the reference ladder and levelcheck all pass it) a hash of the stage name joins the
seeds, making stages independent by construction; without it the seeds are the game's alone.

Each stage has its own folder ``<output_root>/<run_id>/<stage>/games/variant=<v>/batch-*.parquet``
(``storage`` with ``run_id/stage`` as the run), written atomically batch by batch; a resumed
stage skips complete batch files, so nothing is played or counted twice.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from pipeline.games.executor import Executor, TaskFn
from pipeline.games.match import BatchSpec, make_batch_spec
from pipeline.games.openings import Opening
from pipeline.games.records import GAMES_SCHEMA
from pipeline.games.selfplay import opening_schedule
from pipeline.games.storage import (
    Root,
    batch_path,
    finished_batches,
    read_batch_file,
    remove_stale_temp_files,
    write_batch,
)

#: batch ids reserved per pairing: pairing i uses i * BATCH_STRIDE ... (at most this many batches)
BATCH_STRIDE = 100_000
_STREAM_TAG = 0x70616972  # "pair": spawn-key tag of the per-pairing opening streams


@dataclass(frozen=True)
class Pairing:
    """A against B: ``pairs`` colour-swapped pairs from pair ``start`` of opening stream ``stream``.

    ``stream`` None means the pairing's index in the list.
    """

    a_spec: str
    b_spec: str
    pairs: int
    start: int = 0
    stream: int | None = None

    def __post_init__(self) -> None:
        if self.pairs < 1 or self.start < 0:
            raise ValueError(f"a pairing needs pairs >= 1 and start >= 0, got {self.pairs}, {self.start}")


@dataclass(frozen=True)
class Progress:
    """Where a stage stands: games done (resumed ones included) of the total, speed, ETA."""

    stage: str
    games_done: int
    games_total: int
    games_per_second: float
    eta_seconds: float | None


ProgressFn = Callable[[Progress], None]


def stage_run_id(run_id: str, stage: str) -> str:
    """The storage 'run id' of a stage: its folder below the output root."""
    return f"{run_id}/{stage}"


def stage_seed(run_seed: int, stream: int) -> int:
    """The opening-shuffle seed of ``stream``: a pure function of the run seed."""
    seq = np.random.SeedSequence(run_seed, spawn_key=(_STREAM_TAG, stream))
    return int(seq.generate_state(1, dtype=np.uint64)[0] & ((1 << 63) - 1))


def stage_salt(stage: str) -> int:
    """The stage's part of its games' seeds (``stage_seeds``): a 63-bit hash of ``stage``."""
    return int.from_bytes(hashlib.sha256(stage.encode("utf-8")).digest()[:8], "big") >> 1


def plan_pairings(
    run_id: str,
    stage: str,
    variant: str,
    pairings: Sequence[Pairing],
    run_seed: int,
    batch_size: int,
    ply_cap: int,
    deck: Sequence[Opening],
    *,
    stage_seeds: bool = False,
) -> list[BatchSpec]:
    """Every batch of ``pairings``, in pairing then pair order; ``stage_seeds``: the stage name
    joins the player seeds (see the module docstring)."""
    if batch_size < 2 or batch_size % 2:
        raise ValueError(f"batch_size must be a positive even number, got {batch_size}")
    salt = stage_salt(stage) if stage_seeds else None
    bp = batch_size // 2
    specs: list[BatchSpec] = []
    for index, pairing in enumerate(pairings):
        if pairing.start % bp:
            raise ValueError(f"pairing {index} starts at pair {pairing.start}, "
                             f"not a multiple of {bp} pairs per batch")
        end = pairing.start + pairing.pairs
        if (end - 1) // bp >= BATCH_STRIDE:
            raise ValueError(f"pairing {index}: {end} pairs need more than {BATCH_STRIDE} batches")
        stream = index if pairing.stream is None else pairing.stream
        schedule = opening_schedule(list(deck), stage_seed(run_seed, stream), end)
        for first in range(pairing.start, end, bp):
            last = min(first + bp, end)
            batch_id = index * BATCH_STRIDE + first // bp
            specs.append(make_batch_spec(
                run_id=stage_run_id(run_id, stage), batch_id=batch_id, variant=variant,
                player_a=pairing.a_spec, player_b=pairing.b_spec, run_seed=run_seed,
                first_game_id=batch_id * batch_size,
                openings=[(o.id, o.fen) for o in schedule[first:last]], ply_cap=ply_cap,
                pairing=index, first_pair=first, seed_salt=salt,
            ))
    return specs


def pair_index(game_id: int, batch_size: int) -> tuple[int, int]:
    """(pairing index, pair number within the pairing) of a game of a planned stage."""
    batch_id, offset = divmod(game_id, batch_size)
    pairing, batch_in_pairing = divmod(batch_id, BATCH_STRIDE)
    return pairing, batch_in_pairing * (batch_size // 2) + offset // 2


#: plays a stage's batches still to play (told whether they are its whole plan): ``(spec, games)``
#: of each batch, as :meth:`~pipeline.games.executor.Executor.run` yields them
RunFn = Callable[[Sequence[BatchSpec], bool], Iterable[tuple[BatchSpec, pa.Table]]]


def play_pairings(
    executor: Executor,
    output_root: Root,
    run_id: str,
    stage: str,
    variant: str,
    pairings: Sequence[Pairing],
    run_seed: int,
    batch_size: int,
    ply_cap: int,
    deck: Sequence[Opening],
    progress: ProgressFn | None = None,
    *,
    stage_seeds: bool = False,
    on_task: TaskFn | None = None,
    on_resumed: Callable[[Sequence[BatchSpec]], None] | None = None,
    on_batch: Callable[[pa.Table], None] | None = None,
    leave: Collection[int] = (),
    run: RunFn | None = None,
) -> pa.Table:
    """Play every unfinished batch of the plan, write each atomically, return all its games.

    Batch files from an earlier (killed) driver that match their checksum records are kept and
    read back, not replayed (``on_resumed`` is told which); damaged ones are played again.
    ``on_batch`` is given each played batch's games once written. Rows come back sorted by game id.
    ``leave``: indices of pairings whose batches another caller plays (the plan keeps their place,
    so every other batch keeps its id and seeds); their games are neither played nor returned.
    ``run``: plays the batches still to play instead of ``executor.run(todo, on_task)``, told
    whether they are the whole plan (nothing was read back).
    """
    specs = plan_pairings(run_id, stage, variant, pairings, run_seed, batch_size, ply_cap, deck,
                          stage_seeds=stage_seeds)
    if leave:
        specs = [s for s in specs if s.batch_id // BATCH_STRIDE not in leave]
    storage_id = stage_run_id(run_id, stage)
    remove_stale_temp_files(output_root, storage_id)
    expected = {s.batch_id: s.n_games for s in specs}
    done = finished_batches(output_root, storage_id, variant, expected_rows=expected)
    todo = [s for s in specs if s.batch_id not in done]
    total = sum(expected.values())
    resumed = sum(expected[b] for b in done)
    if on_resumed is not None and done:
        on_resumed([s for s in specs if s.batch_id in done])
    played = 0
    started = time.perf_counter()
    if progress is not None and not todo:
        progress(Progress(stage, resumed, total, 0.0, 0.0))
    batches = executor.run(todo, on_task) if run is None else run(todo, not done)
    for spec, table in batches:
        write_batch(table, output_root, storage_id, variant, spec.batch_id, spec=spec)
        if on_batch is not None:
            on_batch(table)
        played += table.num_rows
        if progress is not None:
            elapsed = time.perf_counter() - started
            rate = played / elapsed if elapsed > 0 else 0.0
            left = total - resumed - played
            progress(Progress(stage, resumed + played, total, rate, left / rate if rate > 0 else None))
    return read_stage_batches(output_root, run_id, stage, variant, [s.batch_id for s in specs])


def read_stage_batches(
    output_root: Root, run_id: str, stage: str, variant: str, batch_ids: Sequence[int]
) -> pa.Table:
    """The games of the given batch files of a stage, sorted by game id."""
    storage_id = stage_run_id(run_id, stage)
    tables = [read_batch_file(batch_path(output_root, storage_id, variant, b), GAMES_SCHEMA)
              for b in batch_ids]
    if not tables:
        return GAMES_SCHEMA.empty_table()
    return pa.concat_tables(tables).sort_by("game_id")
