"""The report's scheduler table: how busy each stage kept the CPU slots, from ``schedule.json``."""

from __future__ import annotations

from collections.abc import Sequence

from pipeline.games.schedule import SCHEDULE_FILE, SMALL_TASK_SECONDS, StageSchedule, read_schedules
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
        + schedule_markdown(schedules),
        encoding="utf-8",
    )
    return path
