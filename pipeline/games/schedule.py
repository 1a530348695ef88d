"""How busy a stage kept the cluster: the task timeline, summarised per stage.

Every task an executor finishes is recorded as a :class:`TaskTiming` (its node, when its body
started and ended on the worker's clock, its batches and games) under the stage that asked for
it. :func:`summarise` turns one stage's timeline into a :class:`StageSchedule`:

- ``busy_share``: the share of the stage's CPU-slot time that had a task, sum of task durations
  over (slots x the stage's span, first task start to last task end);
- ``mean_in_flight`` (sum of durations over the span) and ``max_in_flight`` (most tasks whose
  intervals overlap), the task durations (mean, 10th, 50th and 90th percentile) and the share of
  tasks shorter than :data:`SMALL_TASK_SECONDS`;
- the driver's CPU-seconds per task (its process CPU time over the stage, every thread, divided
  by the tasks), and from it ``driver_slot_limit``: mean task seconds over driver CPU-seconds per
  task, the number of slots one driver core can keep fed before it saturates.

Trial stages fold into one (``tune/trial-0003`` -> ``tune/trials``) so a study reads as one stage.
Beside the stages, ``schedule.json`` keeps where the job left slots idle and which stages ran
then (:mod:`pipeline.games.schedule_idle`), and the kernel compilations of the driver that ran last, by
node and kernel (the executor's ``compiles_by_node``): a node whose count of some kernel is above 1
compiled it twice, which the numba cache folder and the per-node warm-up are there to prevent.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from pipeline.games.schedule_idle import IdleStretch, idle_stretches
from pipeline.games.storage import Root, read_json, write_json
from pipeline.games.storage_fs import store_path
from pipeline.jsonrecord import Fields, RecordError

SMALL_TASK_SECONDS = 5.0  # a task below this spends a visible share on scheduling and transfer
_TRIAL = re.compile(r"/trial-\d+$")


@dataclass(frozen=True)
class TaskTiming:
    """One finished task: where, when (seconds since the epoch, the worker's clock), how much."""

    node: str
    started: float
    ended: float
    batches: int
    games: int
    estimated: float = 0.0  # the task's nominal CPU seconds (pipeline.games.sizing)
    pairing: str = ""  # pipeline.games.sizing.pair_key of its first batch's players
    nodes: tuple[float, float] = (0.0, 0.0)  # pipeline.games.sizing.pair_nodes of those players
    #: seconds of the task spent on work other than its games (``Executor.run_then``'s computation)
    other_seconds: float = 0.0

    @property
    def seconds(self) -> float:
        return max(0.0, self.ended - self.started)


#: the schedule row of every task of the job, from the first task's start to the last one's end
ALL_STAGES = "all"


def stage_group(stage: str) -> str:
    """The stage a timeline is summarised under: trial folders fold into ``<study>/trials``."""
    return _TRIAL.sub("/trials", stage)


@dataclass
class TaskTimeline:
    """The tasks of a run, by stage group, each with the driver's process CPU time when it
    arrived; safe to add to from several driver threads."""

    tasks: dict[str, list[tuple[TaskTiming, float]]] = field(default_factory=dict)
    #: every task with the stage folder it was played for (a trial's own, not folded)
    by_stage: list[tuple[str, TaskTiming]] = field(default_factory=list)
    #: nominal CPU seconds of the batches read back on a resume, by stage group and pairing key
    resumed: dict[str, dict[str, float]] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def add(self, stage: str, timing: TaskTiming) -> None:
        with self._lock:
            self.tasks.setdefault(stage_group(stage), []).append((timing, time.process_time()))
            self.by_stage.append((stage, timing))

    def rows(self) -> list[tuple[str, TaskTiming]]:
        """Every task so far with its stage folder, in arrival order."""
        with self._lock:
            return list(self.by_stage)

    def add_resumed(self, stage: str, pairing: str, nominal: float) -> None:
        """A batch of ``stage`` found finished on disk: no task, but its games are not to come."""
        with self._lock:
            group = self.resumed.setdefault(stage_group(stage), {})
            group[pairing] = group.get(pairing, 0.0) + nominal

    def schedules(self, slots: int) -> list[StageSchedule]:
        """Every stage group's schedule, then every job stage's (``tune``, ``calibrate``, ...)
        over all its groups, when it has more than one, then the whole job's (:data:`ALL_STAGES`)
        when it has more than one job stage."""
        with self._lock:
            groups = {k: list(v) for k, v in self.tasks.items()}
        out = [_summarise_arrivals(name, rows, slots) for name, rows in sorted(groups.items())]
        by_job: dict[str, list[tuple[TaskTiming, float]]] = {}
        for name, rows in groups.items():
            by_job.setdefault(name.split("/")[0], []).extend(rows)
        for name, rows in sorted(by_job.items()):
            if name not in groups and sum(1 for g in groups if g.split("/")[0] == name) > 1:
                out.append(_summarise_arrivals(name, rows, slots))
        if len(by_job) > 1:  # job stages overlap (work played ahead), so the whole job is its own row
            out.append(_summarise_arrivals(ALL_STAGES, [r for rows in by_job.values() for r in rows], slots))
        return out

    def idle(self, slots: int) -> list[IdleStretch]:
        """Where this driver's tasks left ``slots`` idle, with the stage groups running then."""
        with self._lock:
            rows = [(name, t.started, t.ended) for name, tasks in self.tasks.items() for t, _ in tasks]
        return idle_stretches(rows, slots)


def _summarise_arrivals(stage: str, rows: Sequence[tuple[TaskTiming, float]], slots: int) -> StageSchedule:
    """:func:`summarise` with the driver's CPU between the first and the last arrival, spread over
    the tasks after the first (unknown for a single task)."""
    cpu = [c for _, c in rows]
    driver = (max(cpu) - min(cpu)) * len(rows) / (len(rows) - 1) if len(rows) > 1 else None
    return summarise(stage, [t for t, _ in rows], slots, driver)


@dataclass(frozen=True)
class StageSchedule:
    """How one stage used the cluster (see the module docstring)."""

    stage: str
    tasks: int
    slots: int
    span_seconds: float
    busy_share: float
    mean_in_flight: float
    max_in_flight: int
    task_seconds_mean: float
    task_seconds_p10: float
    task_seconds_p50: float
    task_seconds_p90: float
    small_task_share: float
    driver_cpu_seconds: float | None
    driver_cpu_per_task: float | None
    driver_slot_limit: float | None
    nodes: int

    def to_json(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}

    @classmethod
    def from_json(cls, data: Any, where: str) -> StageSchedule:
        names = tuple(cls.__dataclass_fields__)
        f = Fields(data, where, names)
        ints = {"tasks", "slots", "max_in_flight", "nodes"}
        optional = {"driver_cpu_seconds", "driver_cpu_per_task", "driver_slot_limit"}
        values: dict[str, Any] = {}
        for name in names:
            if name == "stage":
                values[name] = f.text(name)
            elif name in ints:
                values[name] = f.integer(name)
            elif name in optional:
                values[name] = f.opt_number(name)
            else:
                values[name] = f.number(name)
        return cls(**values)


def max_overlap(timings: Sequence[TaskTiming]) -> int:
    """The most tasks running at one instant (an end at t comes before a start at t)."""
    events = sorted([(t.started, 1) for t in timings] + [(t.ended, -1) for t in timings],
                    key=lambda e: (e[0], e[1]))
    running = best = 0
    for _, step in events:
        running += step
        best = max(best, running)
    return best


def summarise(stage: str, timings: Sequence[TaskTiming], slots: int,
              driver_cpu_seconds: float | None = None) -> StageSchedule:
    """The schedule of one stage's tasks on ``slots`` CPU slots (``slots`` >= 1, tasks >= 1)."""
    if not timings:
        raise ValueError(f"stage {stage!r}: no task to summarise")
    if slots < 1:
        raise ValueError(f"stage {stage!r}: {slots} CPU slots")
    seconds = np.array([t.seconds for t in timings])
    span = max(t.ended for t in timings) - min(t.started for t in timings)
    busy = float(seconds.sum())
    per_task = None if driver_cpu_seconds is None else driver_cpu_seconds / len(timings)
    limit = None if not per_task else float(seconds.mean()) / per_task
    p10, p50, p90 = (float(x) for x in np.percentile(seconds, [10, 50, 90]))
    return StageSchedule(
        stage=stage, tasks=len(timings), slots=slots, span_seconds=float(span),
        busy_share=busy / (slots * span) if span > 0 else 0.0,
        mean_in_flight=busy / span if span > 0 else 0.0, max_in_flight=max_overlap(timings),
        task_seconds_mean=float(seconds.mean()), task_seconds_p10=p10, task_seconds_p50=p50,
        task_seconds_p90=p90, small_task_share=float(np.mean(seconds < SMALL_TASK_SECONDS)),
        driver_cpu_seconds=driver_cpu_seconds, driver_cpu_per_task=per_task, driver_slot_limit=limit,
        nodes=len({t.node for t in timings}),
    )


SCHEDULE_FILE = "schedule.json"
#: kernel compilations by node, then by kernel and signature
Compiles = dict[str, dict[str, int]]


def write_schedules(path: Root, schedules: Sequence[StageSchedule],
                    compiles: Mapping[str, Mapping[str, int]] | None = None,
                    idle: Sequence[IdleStretch] | None = None) -> None:
    """Write the run's schedules, keeping a stored stage this driver played no task of (a resumed
    run reads finished stages back), this driver's kernel compilations and idle stretches
    (``None``: keep the stored ones)."""
    stored = _read(path)
    kept = {s.stage: s for s in stored.stages}
    kept.update({s.stage: s for s in schedules})
    counts = stored.compiles if compiles is None else {n: dict(c) for n, c in compiles.items()}
    stretches = stored.idle if idle is None else list(idle)
    write_json(path, {"schema": 3, "stages": [kept[k].to_json() for k in sorted(kept)],
                      "idle": [s.to_json() for s in stretches],
                      "compiles": {n: dict(sorted(c.items())) for n, c in sorted(counts.items())}})


def read_schedules(path: Root) -> list[StageSchedule]:
    """The stored schedules ([] when the run has none yet)."""
    return _read(path).stages


def read_compiles(path: Root) -> Compiles:
    """The stored kernel compilations by node ({} when none were recorded)."""
    return _read(path).compiles


def read_idle(path: Root) -> list[IdleStretch]:
    """The stored idle stretches of the driver that ran last ([] when none were recorded)."""
    return _read(path).idle


def most_compiles(compiles: Mapping[str, Mapping[str, int]]) -> int:
    """The most times one node compiled one kernel (0 when nothing was compiled)."""
    return max((n for counts in compiles.values() for n in counts.values()), default=0)


@dataclass(frozen=True)
class _Stored:
    stages: list[StageSchedule]
    compiles: Compiles
    idle: list[IdleStretch]


def _read(path: Root) -> _Stored:
    p = store_path(path)
    if not p.is_file():
        return _Stored([], {}, [])
    data = read_json(p)
    where = str(p)
    schema = data.get("schema") if isinstance(data, dict) else None
    if schema == 1:  # written before compiles were counted
        f = Fields(data, where, ("schema", "stages"))
        return _Stored(list(f.records("stages", StageSchedule.from_json)), {}, [])
    if schema == 2:  # written before idle stretches were kept
        f = Fields(data, where, ("schema", "stages", "compiles"))
        return _Stored(list(f.records("stages", StageSchedule.from_json)),
                       f.table("compiles", _kernel_counts), [])
    f = Fields(data, where, ("schema", "stages", "idle", "compiles"))
    f.constant("schema", 3)
    return _Stored(list(f.records("stages", StageSchedule.from_json)), f.table("compiles", _kernel_counts),
                   list(f.records("idle", IdleStretch.from_json)))


def _kernel_counts(data: object, where: str) -> dict[str, int]:
    if not isinstance(data, dict):
        raise RecordError(f"{where}: expected a JSON object of kernel compile counts")
    counts: dict[str, int] = {}
    for kernel, n in data.items():
        if type(n) is not int or n < 1:
            raise RecordError(f"{where}.{kernel}: expected a count of at least 1, got {n!r}")
        counts[kernel] = n
    return counts
