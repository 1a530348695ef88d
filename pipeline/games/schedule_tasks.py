"""Every task of a run, one row each (``schedule-tasks.csv`` beside ``schedule.json``).

The stage rows and idle stretches of ``schedule.json`` say how busy a stage was; these rows say
which task was running when, so a tail or a gap can be read task by task: the stage folder (a
trial's own, not folded), the node, start and end in seconds after the first task's start (the
clock of ``schedule.json``'s idle stretches), its batches and games, its nominal CPU-seconds
(``pipeline.games.sizing``), the seconds spent on work other than games and its pairing key.
Like the idle stretches, they are the tasks of the driver that ran last: a resumed run's rows
start at its resume.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence

from pipeline.games.schedule import TaskTiming
from pipeline.games.storage import Root, atomic_write_bytes

TASKS_FILE = "schedule-tasks.csv"
COLUMNS = ("stage", "node", "start_s", "end_s", "batches", "games", "nominal_s", "other_s", "pairing")


def task_rows_csv(rows: Sequence[tuple[str, TaskTiming]]) -> bytes:
    """The rows in start order as CSV text (a header only when there are none)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(COLUMNS)
    t0 = min((t.started for _, t in rows), default=0.0)
    for stage, t in sorted(rows, key=lambda r: (r[1].started, r[1].ended, r[0])):
        writer.writerow((stage, t.node, f"{t.started - t0:.3f}", f"{t.ended - t0:.3f}", t.batches, t.games,
                         f"{t.estimated:.3f}", f"{t.other_seconds:.3f}", t.pairing))
    return out.getvalue().encode()


def write_task_rows(path: Root, rows: Sequence[tuple[str, TaskTiming]]) -> None:
    """Write :func:`task_rows_csv` to ``path`` atomically."""
    atomic_write_bytes(path, task_rows_csv(rows))
