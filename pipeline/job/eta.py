"""The whole job's time left: planned games, costed by what their player pairs measured.

At the start of each stage the job plans every game still to come (:class:`PlannedGames`: stage
group, player pairing, games, nominal CPU seconds per game from :mod:`pipeline.games.sizing`);
stages whose players are not chosen yet are planned with stand-ins (the validation with the
curves' points, Easy's trials with the product's Easy), and a study's trials and the SPRT at
their maximum, so the estimate is an upper bound until they end. As tasks finish
(:class:`~pipeline.games.schedule.TaskTimeline`) each pairing's measured CPU seconds over its
nominal ones correct its remaining games; a pairing not measured yet takes its stage's ratio,
else the job's, and the estimate says it is a guess while nothing of the job has been measured.
Seconds of CPU become wall seconds through the slots the job has kept busy so far.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from pipeline.games.schedule import TaskTimeline, TaskTiming, stage_group
from pipeline.games.sizing import pair_game_seconds, pair_key


@dataclass(frozen=True)
class PlannedGames:
    """Games still to come between two players in a stage group."""

    group: str
    pairing: str  # pair_key of the two specs
    games: int
    seconds_per_game: float  # nominal CPU seconds

    @property
    def nominal(self) -> float:
        return self.games * self.seconds_per_game


def planned(stage: str, variant: str, player_a: str, player_b: str, games: int, ply_cap: int) -> PlannedGames:
    """The plan of ``games`` between two player specs in stage folder ``stage``."""
    return PlannedGames(stage_group(stage), pair_key(player_a, player_b), games,
                        pair_game_seconds(variant, player_a, player_b, ply_cap))


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
class JobClock:
    """The job's plan and the tasks that have finished (see the module docstring)."""

    timeline: TaskTimeline
    slots: int
    plan: dict[str, list[PlannedGames]] = field(default_factory=dict)  # by stage group
    started: float | None = None  # wall time of the first task (from the timeline)

    def replan(self, work: Iterable[PlannedGames], groups: Sequence[str] | None = None) -> None:
        """Replace the plan of ``groups`` (default: those in ``work``) with ``work``."""
        items = list(work)
        for g in groups if groups is not None else {w.group for w in items}:
            self.plan[g] = []
        for w in items:
            self.plan.setdefault(w.group, []).append(w)

    def finish(self, prefix: str) -> None:
        """A stage ended: nothing more is to come in the groups under ``prefix``."""
        for g in list(self.plan):
            if g == prefix or g.startswith(prefix + "/"):
                self.plan[g] = []

    def estimate(self, now: float) -> Eta:
        """The time left at wall time ``now`` (seconds since the epoch)."""
        tasks = {g: [t for t, _ in rows] for g, rows in self.timeline.tasks.items()}
        every = [t for rows in tasks.values() for t in rows]
        overall = _ratio(every)
        cpu = 0.0
        for group, plans in self.plan.items():
            done = tasks.get(group, [])
            by_key: dict[str, list[TaskTiming]] = {}
            for t in done:
                by_key.setdefault(t.pairing, []).append(t)
            planned_keys = {p.pairing for p in plans}
            unmatched = sum(t.estimated for t in done if t.pairing not in planned_keys)
            open_plans = [p for p in plans if p.pairing not in by_key]
            open_total = sum(p.nominal for p in open_plans)
            group_ratio = _ratio(done) or overall or 1.0
            for p in plans:
                if p.pairing in by_key:
                    left = max(0.0, p.nominal - sum(t.estimated for t in by_key[p.pairing]))
                    ratio = _ratio(by_key[p.pairing]) or group_ratio
                else:
                    share = p.nominal / open_total if open_total > 0 else 0.0
                    left = max(0.0, p.nominal - unmatched * share)
                    ratio = group_ratio
                cpu += left * ratio
        busy = sum(t.seconds for t in every)
        first = min((t.started for t in every), default=None)
        span = now - first if first is not None else 0.0
        parallel = self.slots * min(1.0, max(0.1, busy / (self.slots * span))) if span > 1.0 else self.slots
        return Eta(cpu / parallel, guess=overall is None)


def _ratio(tasks: Sequence[TaskTiming]) -> float | None:
    """Measured over nominal CPU seconds of finished tasks (None without any)."""
    nominal = sum(t.estimated for t in tasks)
    return None if not tasks or nominal <= 0 else sum(t.seconds for t in tasks) / nominal
