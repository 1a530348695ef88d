"""Where a run left CPU slots idle: stretches of the task timeline, with the stages running then.

A stage's busy share says how much slot time it lost, not when, and stage rows overlap (work
played ahead runs beside the stage before it). :func:`idle_stretches` cuts the job's span into
windows, marks those whose slots were busy less than :data:`BUSY_BELOW` of the time, joins
neighbouring marked windows into stretches, and names the stage groups that had tasks in flight
in each, most slot time first. A stretch with one stage in it is that stage's own tail; one with
none is the driver working alone (a fit, a choice, a write).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pipeline.jsonrecord import Fields

#: a window counts as idle when its slots were busy less than this share of its time
BUSY_BELOW = 0.9
#: windows per job span (at least :data:`MIN_WINDOW_SECONDS` each)
WINDOWS = 200
MIN_WINDOW_SECONDS = 2.0
#: stretches kept, the largest idle slot time first
KEEP = 12


@dataclass(frozen=True)
class IdleStretch:
    """A stretch of the job with idle slots: from and to (seconds after the first task started),
    the idle slot-seconds in it, the mean tasks in flight, and the stage groups running."""

    start: float
    end: float
    idle_slot_seconds: float
    mean_in_flight: float
    stages: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {"start": self.start, "end": self.end, "idle_slot_seconds": self.idle_slot_seconds,
                "mean_in_flight": self.mean_in_flight, "stages": list(self.stages)}

    @classmethod
    def from_json(cls, data: Any, where: str) -> IdleStretch:
        f = Fields(data, where, ("start", "end", "idle_slot_seconds", "mean_in_flight", "stages"))
        return cls(f.number("start"), f.number("end"), f.number("idle_slot_seconds"),
                   f.number("mean_in_flight"), f.texts("stages"))


def _overlap(a0: float, a1: float, b0: float, b1: float) -> float:
    return max(0.0, min(a1, b1) - max(a0, b0))


def idle_stretches(tasks: Sequence[tuple[str, float, float]], slots: int, *, windows: int = WINDOWS,
                   keep: int = KEEP) -> list[IdleStretch]:
    """The largest stretches of idle slots among ``tasks`` (stage group, started, ended), in time
    order; at most ``keep`` of them."""
    if not tasks or slots < 1:
        return []
    t0 = min(t[1] for t in tasks)
    span = max(t[2] for t in tasks) - t0
    if span <= 0:
        return []
    width = max(MIN_WINDOW_SECONDS, span / windows)
    n = int(span // width) + 1
    busy = [0.0] * n
    by_stage: list[dict[str, float]] = [{} for _ in range(n)]
    for stage, started, ended in tasks:
        a, b = started - t0, ended - t0
        for i in range(int(a // width), min(n, int(b // width) + 1)):
            part = _overlap(a, b, i * width, (i + 1) * width)
            if part > 0:
                busy[i] += part
                by_stage[i][stage] = by_stage[i].get(stage, 0.0) + part
    lengths = [max(0.0, min(width, span - i * width)) for i in range(n)]
    idle = [lengths[i] > 0 and busy[i] < BUSY_BELOW * slots * lengths[i] for i in range(n)]
    stretches: list[IdleStretch] = []
    for is_idle, run in itertools.groupby(range(n), key=lambda k: idle[k]):
        ks = list(run)
        if not is_idle:
            continue
        seconds, used = sum(lengths[k] for k in ks), sum(busy[k] for k in ks)
        stages: dict[str, float] = {}
        for k in ks:
            for stage, part in by_stage[k].items():
                stages[stage] = stages.get(stage, 0.0) + part
        names = tuple(sorted(stages, key=lambda name: (-stages[name], name)))
        start = ks[0] * width
        stretches.append(IdleStretch(start, start + seconds, slots * seconds - used, used / seconds, names))
    largest = sorted(stretches, key=lambda s: -s.idle_slot_seconds)[:keep]
    return sorted(largest, key=lambda s: s.start)
