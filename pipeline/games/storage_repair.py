"""Play damaged batch files of a run folder again, from the specs their checksum records keep.

A resume calls :func:`replay_damaged` before any stage runs: every recorded batch file of every
stage (finished stages included, whose games no later step reads again) is checked against its
record (:func:`pipeline.games.storage.damaged_batches`), and each damaged one is played again and
rewritten in place. Seeds come from the spec, so the games are the ones first played (timing
columns aside), and the stage results computed from them stay valid.
"""

from __future__ import annotations

from collections.abc import Callable

from pipeline.games.executor import Executor
from pipeline.games.storage import DATASETS, Damaged, Root, damaged_batches, write_batch_file
from pipeline.games.storage_fs import store_path


def replay_damaged(run_folder: Root, executor: Executor,
                   log: Callable[[str], None] | None = None) -> list[Damaged]:
    """Find and replay the damaged batch files of ``run_folder``; returns them (empty: all sound).

    ValueError when a damaged file cannot be replayed (its record keeps no batch spec)."""
    root = store_path(run_folder)
    damaged = damaged_batches(root)
    if not damaged:
        return []
    lost = [d for d in damaged if d.spec is None]
    if lost:
        raise ValueError(f"{lost[0].describe(root)} in {root} is damaged, and its checksum record keeps no "
                         "batch spec to play it again: delete it and its record, and the stage's result "
                         "file, then resume")
    if log is not None:
        log(f"resume: {len(damaged)} damaged batch file(s) in {root}, playing them again: "
            + ", ".join(d.describe(root) for d in damaged))
    by_key = {(d.spec.run_id, d.spec.batch_id): d for d in damaged if d.spec is not None}
    for spec, table in executor.run([d.spec for d in damaged if d.spec is not None]):
        entry = by_key[(spec.run_id, spec.batch_id)]
        if entry.rows is not None and table.num_rows != entry.rows:
            raise ValueError(f"{entry.describe(root)}: replayed {table.num_rows} games, {entry.rows} were "
                             "written: the engine or the plan changed since; start the run in a new folder")
        write_batch_file(table, entry.path, DATASETS[entry.dataset], spec, entry.dataset)
    return damaged
