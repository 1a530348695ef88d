"""The whole job's time left: planned games, costed by what their player pairs measured.

At the start of each stage the job plans every game still to come (:class:`PlannedGames`: stage
group, player pairing, games, nominal CPU seconds per game from :mod:`pipeline.games.sizing`, and
how many tasks the group can keep in flight); stages whose players are not chosen yet are planned
with stand-ins (the validation with curve points in the same pairings the method plays, Easy's
trials with the product's Easy), and a study's trials and the SPRT at their maximum, so the
estimate leans high until they end. When a stage group starts playing, its plan is replaced by the
pairings it actually plays (:meth:`JobClock.replan` from the stage's ``on_play`` hook); the
validation's plan is refined before that from a fit of the curve games so far
(:meth:`JobClock.refine`), since the chain it plays depends on the curves' Elo. The
driver's own work between tasks (the export) is planned too (:func:`driver_work`), as wall seconds
on no slot, and so is work without games that runs as equal tasks side by side (the blunder rates
of the calibration's checks, :func:`side_by_side`): its CPU-seconds over as many slots as it has
tasks, at most all of them. Batches read back on a resume
(``TaskTimeline.resumed``) are games no longer to come.

As tasks finish (:class:`~pipeline.games.schedule.TaskTimeline`) each pairing's measured seconds
over its nominal ones correct its remaining games; a pairing not measured yet takes the ratio of
the job's finished tasks of like shape (both players' expected nodes a move within a factor
:data:`LIKE_COST` of its own), else the nominal model's with the search speed the driver's bench
measured at the job's start, and the estimate says it is a guess while nothing has been
measured. Task
seconds become wall seconds per stage: a stage that fans out (curves, validation) keeps every
slot busy; one of limited width (trials in flight, the SPRT's steps) by the share of its slots it
has kept busy once it has run, else by the slots its width can fill (a stage of one trial in
flight does not predict the occupancy of one that fans out, nor the other way round).
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from pipeline.games.schedule import TaskTimeline, TaskTiming, stage_group
from pipeline.games.sizing import pair_game_seconds, pair_key, pair_nodes, pair_search_seconds

#: an unmeasured pairing takes the ratio of finished tasks whose players' expected nodes a move
#: are within this factor of its own players', the weaker with the weaker, the stronger with the
#: stronger
LIKE_COST = 4.0
#: wall seconds between two recomputations of a refined plan (:meth:`JobClock.refine`)
REFINE_SECONDS = 20.0


@dataclass(frozen=True)
class PlannedGames:
    """Games still to come between two players in a stage group."""

    group: str
    pairing: str  # pair_key of the two specs
    games: int
    seconds_per_game: float  # nominal CPU seconds
    width: int = 0  # most tasks the group keeps in flight (0: as many as there are slots)
    #: work without games: the driver's own (games 1, seconds_per_game its wall seconds), or with a
    #: ``width``, that many equal tasks side by side (seconds_per_game the CPU seconds of each)
    driver: bool = False
    nodes: tuple[float, float] = (0.0, 0.0)  # the players' expected nodes a move (sizing.pair_nodes)
    search_seconds: float = 0.0  # the searches' part of seconds_per_game

    @property
    def nominal(self) -> float:
        return self.games * self.seconds_per_game


def driver_work(stage: str, seconds: float) -> PlannedGames:
    """The driver's own work in stage folder ``stage``: ``seconds`` of wall time, no task."""
    return PlannedGames(stage_group(stage), "driver", 1, seconds, driver=True)


def side_by_side(stage: str, cpu_seconds: float, tasks: int) -> PlannedGames:
    """Work without games in stage folder ``stage``: ``tasks`` equal tasks of ``cpu_seconds`` in
    all, in flight at once (the calibration's blunder rates); it takes the wall time of its
    CPU-seconds over as many slots as it has tasks."""
    count = max(1, tasks)
    return PlannedGames(stage_group(stage), "side-by-side", count, cpu_seconds / count, width=count,
                        driver=True)


def planned(stage: str, variant: str, player_a: str, player_b: str, games: int, ply_cap: int,
            width: int = 0) -> PlannedGames:
    """The plan of ``games`` between two player specs in stage folder ``stage``."""
    return PlannedGames(stage_group(stage), pair_key(player_a, player_b), games,
                        pair_game_seconds(variant, player_a, player_b, ply_cap), width,
                        nodes=pair_nodes(variant, player_a, player_b),
                        search_seconds=pair_search_seconds(variant, player_a, player_b, ply_cap))


@dataclass(frozen=True)
class Eta:
    """Seconds left for the whole job, and whether it rests on measured speeds."""

    seconds: float
    guess: bool

    def text(self) -> str:
        left = round(self.seconds)
        hours, rest = divmod(left, 3600)
        shown = f"{hours}h{rest // 60:02d}m" if hours else f"{rest // 60}m{rest % 60:02d}s"
        return f"job ETA {'~' if self.guess else ''}{shown}{' (guess)' if self.guess else ''}"


@dataclass
class Refiner:
    """A plan of some stage groups recomputed from the games so far (:meth:`JobClock.refine`)."""

    groups: tuple[str, ...]
    plan: Callable[[], list[PlannedGames] | None]
    every: float
    last: float = -math.inf


@dataclass
class JobClock:
    """The job's plan and the tasks that have finished (see the module docstring)."""

    timeline: TaskTimeline
    slots: int
    speed: float = 1.0  # nominal over measured search speed (the driver's bench), before any task
    plan: dict[str, list[PlannedGames]] = field(default_factory=dict)  # by stage group
    started: float | None = None  # wall time of the first task (from the timeline)
    refiner: Refiner | None = None
    _refining: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def refine(self, groups: Sequence[str], plan: Callable[[], list[PlannedGames] | None],
               every: float = REFINE_SECONDS) -> None:
        """Re-plan ``groups`` with ``plan()`` (None: keep the plan) at most every ``every`` wall
        seconds, as estimates are asked for, until :meth:`stop_refining`."""
        self.refiner = Refiner(tuple(groups), plan, every)

    def stop_refining(self) -> None:
        self.refiner = None

    def _refine(self, now: float) -> None:
        r = self.refiner
        if r is None or now - r.last < r.every or not self._refining.acquire(blocking=False):
            return
        try:
            r.last = now
            work = r.plan()
            if work is not None and self.refiner is r:
                self.replan(work, r.groups)
        finally:
            self._refining.release()

    def replan(self, work: Iterable[PlannedGames], groups: Sequence[str] | None = None) -> None:
        """Replace the plan of ``groups`` (default: those in ``work``) with ``work``."""
        items = list(work)
        for g in groups if groups is not None else {w.group for w in items}:
            self.plan[g] = []
        for w in items:
            self.plan.setdefault(w.group, []).append(w)

    def planned_group(self, stage: str) -> bool:
        """Whether ``stage`` is a stage group with games planned (its own ETA can be costed)."""
        return stage == stage_group(stage) and bool(self.plan.get(stage))

    def finish(self, prefix: str) -> None:
        """A stage ended: nothing more is to come in the groups under ``prefix``."""
        for g in list(self.plan):
            if g == prefix or g.startswith(prefix + "/"):
                self.plan[g] = []

    def estimate(self, now: float, group: str | None = None) -> Eta:
        """The time left at wall time ``now`` (seconds since the epoch): the job's, or one stage
        group's."""
        self._refine(now)
        tasks = {g: [t for t, _ in rows] for g, rows in self.timeline.tasks.items()}
        every = [t for rows in tasks.values() for t in rows]
        cpu_by_stage: dict[str, float] = {}
        plans_by_stage: dict[str, list[PlannedGames]] = {}
        wall = 0.0
        for name, every_plan in self.plan.items():
            if every_plan and group in (None, name):
                wall += sum(p.nominal / min(p.width or 1, self.slots) for p in every_plan if p.driver)
                plans = [p for p in every_plan if not p.driver]
                if not plans:
                    continue
                stage = _stage_of(name)
                left = _group_seconds(plans, tasks.get(name, []), every, self.speed,
                                      self.timeline.resumed.get(name, {}))
                cpu_by_stage[stage] = cpu_by_stage.get(stage, 0.0) + left
                plans_by_stage.setdefault(stage, []).extend(plans)
        for stage, cpu in cpu_by_stage.items():
            done = [t for g, rows in tasks.items() if _stage_of(g) == stage for t in rows]
            wall += cpu / (self.slots * self._occupancy(done, _width(plans_by_stage[stage]), now))
        return Eta(wall, guess=not any(tasks.values()))

    def _occupancy(self, done: Sequence[TaskTiming], width: int, now: float) -> float:
        """The share of the slots a stage keeps busy. A stage with work queued for every slot
        (``width`` 0) keeps them busy; a measured share would count only finished tasks, and
        its first finished tasks can be small ones beside long ones still running. A stage of
        limited width: what it measured once it has run for a while, else what its width allows."""
        if width == 0:
            return 1.0
        first = min((t.started for t in done), default=None)
        span = now - first if first is not None else 0.0
        if span > 1.0:
            return min(1.0, max(0.1, sum(t.seconds for t in done) / (self.slots * span)))
        return min(1.0, width / self.slots)


def _stage_of(group: str) -> str:
    return group.split("/", 1)[0]


def _width(plans: Sequence[PlannedGames]) -> int:
    """Most tasks a stage's groups keep in flight side by side (0: no limit but the slots)."""
    widths = {p.group: p.width for p in plans}
    return 0 if 0 in widths.values() else sum(widths.values())


def _group_seconds(plans: Sequence[PlannedGames], done: Sequence[TaskTiming],
                   job_done: Sequence[TaskTiming], speed: float, resumed: Mapping[str, float]) -> float:
    """Task seconds left of one group's plan: a measured pairing corrected by its own ratio, an
    unmeasured one by :func:`_prior_ratio`; ``resumed``: the nominal seconds by pairing of the
    batches read back on a resume (no longer to come)."""
    by_key: dict[str, list[TaskTiming]] = {}
    for t in done:
        by_key.setdefault(t.pairing, []).append(t)
    planned_keys = {p.pairing for p in plans}
    unmatched = sum(t.estimated for t in done if t.pairing not in planned_keys)
    unmatched += sum(v for k, v in resumed.items() if k not in planned_keys)
    open_total = sum(p.nominal for p in plans if p.pairing not in by_key)
    cpu = 0.0
    for p in plans:
        read_back = resumed.get(p.pairing, 0.0)
        if p.pairing in by_key:
            left = max(0.0, p.nominal - read_back - sum(t.estimated for t in by_key[p.pairing]))
            ratio = _ratio(by_key[p.pairing]) or 1.0
        else:
            share = p.nominal / open_total if open_total > 0 else 0.0
            left = max(0.0, p.nominal - read_back - unmatched * share)
            ratio = _prior_ratio(p, job_done, speed)
        cpu += left * ratio
    return cpu


def _prior_ratio(plan: PlannedGames, done: Sequence[TaskTiming], speed: float) -> float:
    """The ratio of an unmeasured pairing: that of the job's finished tasks of like shape (each
    player's expected nodes a move within :data:`LIKE_COST` of the pairing's, the weaker with the
    weaker), else the nominal model with its searches at the measured ``speed``. The model's error
    depends on the pairing: shallow games run at another speed than deep ones, and a lopsided
    game ends sooner than an even one, so a ratio is carried only between pairings alike in both
    players."""
    like = [t for t in done if t.estimated > 0 and _alike(t.nodes, plan.nodes)]
    measured = _ratio(like)
    if measured is not None:
        return measured
    if plan.seconds_per_game <= 0:
        return 1.0
    search = min(plan.search_seconds, plan.seconds_per_game)
    return (search * speed + plan.seconds_per_game - search) / plan.seconds_per_game


def _alike(a: tuple[float, float], b: tuple[float, float]) -> bool:
    return all(1.0 / LIKE_COST <= max(x, 1.0) / max(y, 1.0) <= LIKE_COST for x, y in zip(a, b, strict=True))


def _ratio(tasks: Sequence[TaskTiming]) -> float | None:
    """Measured over nominal CPU seconds of finished tasks' games (None without any)."""
    nominal = sum(t.estimated for t in tasks)
    return None if not tasks or nominal <= 0 else sum(t.seconds - t.other_seconds for t in tasks) / nominal
