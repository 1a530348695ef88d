"""The report's scheduler table: how busy each stage kept the CPU slots, from ``schedule.json``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pipeline.games.schedule import (
    SCHEDULE_FILE,
    SMALL_TASK_SECONDS,
    StageSchedule,
    most_compiles,
    read_compiles,
    read_schedules,
)
from pipeline.games.storage_fs import StorePath
from pipeline.job.cells import optional


def schedule_markdown(schedules: Sequence[StageSchedule]) -> str:
    """One row per stage: slots, tasks, busy share, tasks in flight, task seconds, the driver."""
    rows = [
        "| stage | slots | tasks | busy | in flight (mean / max) | task s (p10 / p50 / p90) "
        f"| tasks < {SMALL_TASK_SECONDS:g} s | driver CPU s / task | slots one driver core feeds |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for s in schedules:
        rows.append(
            f"| {s.stage} | {s.slots} | {s.tasks} | {s.busy_share:.0%} | {s.mean_in_flight:.1f} / "
            f"{s.max_in_flight} | {s.task_seconds_p10:.1f} / {s.task_seconds_p50:.1f} / "
            f"{s.task_seconds_p90:.1f} | {s.small_task_share:.0%} | {optional(s.driver_cpu_per_task, '.3f')} "
            f"| {optional(s.driver_slot_limit, '.0f')} |")
    return "\n".join(rows) + "\n"


def compiles_markdown(compiles: Mapping[str, Mapping[str, int]]) -> str:
    """One row per node: kernels it compiled, compilations, the most of one kernel."""
    if not compiles:
        return "No kernel was compiled: every process loaded numba's cache.\n"
    rows = ["| node | kernels compiled | compilations | most of one kernel |", "| --- | ---: | ---: | ---: |"]
    for node, counts in sorted(compiles.items()):
        rows.append(f"| {node} | {len(counts)} | {sum(counts.values())} | {most_compiles({node: counts})} |")
    verdict = ("Every node compiled each kernel at most once." if most_compiles(compiles) <= 1
               else "**A node compiled a kernel more than once.**")
    return "\n".join(rows) + f"\n\n{verdict}\n"


def write_schedule_report(run: StorePath, out: StorePath) -> StorePath | None:
    """``<report>/schedule.md`` from the run's ``schedule.json`` (None when the run has none)."""
    schedules = read_schedules(run / SCHEDULE_FILE)
    if not schedules:
        return None
    path = out / "schedule.md"
    path.write_text(
        "# How busy the stages kept the cluster\n\n"
        "busy: share of the stage's CPU-slot time with a task (first task start to last task end); "
        "driver: the driver process's CPU time per task, and the slots one driver core could keep "
        "fed at that cost (mean task seconds / driver CPU seconds per task).\n\n"
        + schedule_markdown(schedules)
        + "\n## Kernel compilations by node\n\nKernels the tasks' workers (and the driver, under its "
        "node) compiled instead of loading them from numba's cache, as counted by the driver that ran "
        "last.\n\n" + compiles_markdown(read_compiles(run / SCHEDULE_FILE)),
        encoding="utf-8",
    )
    return path
