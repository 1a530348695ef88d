"""The report's scheduler table: how busy each stage kept the CPU slots, from ``schedule.json``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pipeline.games.schedule import (
    SCHEDULE_FILE,
    SMALL_TASK_SECONDS,
    StageSchedule,
    most_compiles,
    read_compiles,
    read_idle,
    read_schedules,
)
from pipeline.games.schedule_idle import BUSY_BELOW, IdleStretch
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


def idle_markdown(stretches: Sequence[IdleStretch], slots: int) -> str:
    """One row per stretch of idle slots: when, how much, and which stages had tasks in flight."""
    if not stretches:
        return f"No stretch of the job had its slots busy less than {BUSY_BELOW:.0%} of the time.\n"
    rows = [f"| from (s) | to (s) | idle slot-seconds | in flight (mean of {slots}) "
            "| stages with tasks, most first |",
            "| ---: | ---: | ---: | ---: | --- |"]
    for s in stretches:
        stages = ", ".join(s.stages) if s.stages else "none (the driver alone)"
        rows.append(f"| {s.start:.0f} | {s.end:.0f} | {s.idle_slot_seconds:,.0f} | {s.mean_in_flight:.1f} "
                    f"| {stages} |")
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
        + "\n## Where the slots were idle\n\nThe largest stretches of the job (seconds after its first "
        f"task started) whose slots were busy less than {BUSY_BELOW:.0%} of the time, from the tasks of "
        "the driver that ran last, with the stages that had tasks in flight then.\n\n"
        + idle_markdown(read_idle(run / SCHEDULE_FILE), max(s.slots for s in schedules))
        + "\n## Kernel compilations by node\n\nKernels the tasks' workers (and the driver, under its "
        "node) compiled instead of loading them from numba's cache, as counted by the driver that ran "
        "last.\n\n" + compiles_markdown(read_compiles(run / SCHEDULE_FILE)),
        encoding="utf-8",
    )
    return path
