"""How busy a study keeps its slots: a discrete-event model of trials in flight (no games played).

The model is the scheduler of `pipeline.tuning.inflight` as the tuning uses it: trial n starts
only once trials 0..n-W have ended (W = `parallel_trials`) and fewer than W are running; a trial
plays `steps` steps one after another, each `tasks` tasks submitted together, and after its first
step it stops (pruned) with probability `prune` unless it is among the first W (the pruner then
has no finished trial to compare with). Task durations are lognormal around 1 (one task's mean is
the time unit) with log-sd `sigma`; slots take queued tasks in submission order. `filler`: task
units of work that needs no trial (the product's own games), submitted only into idle slots, as
`Executor.run(idle_only=True)` does. It prints the share of slot time with a task over the
study's span, averaged over `repeats` seeds.

    python experiments/2026-12-06-trial-occupancy/simulate.py --slots 16 --window 16 --tasks 1
"""

from __future__ import annotations

import argparse
import heapq
import random
from collections import deque
from dataclasses import dataclass


@dataclass(frozen=True)
class Shape:
    """A study as the model sees it (the arguments of ``main``)."""

    trials: int
    window: int
    slots: int
    tasks: int
    steps: int = 2
    prune: float = 0.6
    sigma: float = 0.4
    filler: float = 0.0


def busy_share(shape: Shape, seed: int) -> float:
    """The share of slot time with a task, first task start to last task end, of one run."""
    rng = random.Random(seed)
    pruned = [n >= shape.window and rng.random() < shape.prune for n in range(shape.trials)]
    ended = [False] * shape.trials
    queue: deque[tuple[int, int]] = deque()  # (trial, step) of a task waiting for a slot
    left: dict[tuple[int, int], int] = {}
    running: list[tuple[float, int, int]] = []  # (end time, trial, step); trial -1: filler
    state = {"next": 0, "open": 0, "filler": shape.filler}
    busy, now = 0.0, 0.0

    def submit(trial: int, step: int) -> None:
        left[(trial, step)] = shape.tasks
        queue.extend([(trial, step)] * shape.tasks)

    def start_trials() -> None:
        while (state["next"] < shape.trials and state["open"] < shape.window
               and all(ended[: max(0, int(state["next"]) - shape.window + 1)])):
            submit(int(state["next"]), 0)
            state["next"] += 1
            state["open"] += 1

    def start_tasks() -> None:
        nonlocal busy
        while len(running) < shape.slots and (queue or state["filler"] > 0):
            if queue:
                trial, step = queue.popleft()
                duration = rng.lognormvariate(0.0, shape.sigma)
            else:  # an idle slot and nothing queued: a filler task
                trial, step = -1, 0
                duration = min(state["filler"], rng.lognormvariate(0.0, shape.sigma))
                state["filler"] -= duration
            heapq.heappush(running, (now + duration, trial, step))
            busy += duration

    start_trials()
    start_tasks()
    while running:
        now, trial, step = heapq.heappop(running)
        if trial >= 0:
            left[(trial, step)] -= 1
            if left[(trial, step)] == 0:
                if step + 1 < shape.steps and not (pruned[trial] and step == 0):
                    submit(trial, step + 1)
                else:
                    ended[trial] = True
                    state["open"] -= 1
                    start_trials()
        start_tasks()
    return busy / (shape.slots * now)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=48)
    parser.add_argument("--window", type=int, default=16, help="W, parallel_trials")
    parser.add_argument("--slots", type=int, default=16)
    parser.add_argument("--tasks", type=int, default=1, help="tasks a step")
    parser.add_argument("--steps", type=int, default=2, help="steps a trial")
    parser.add_argument("--prune", type=float, default=0.6, help="share of trials after the first W pruned")
    parser.add_argument("--sigma", type=float, default=0.4, help="log-sd of a task's duration")
    parser.add_argument("--filler", type=float, default=0.0, help="task units of idle-slot work")
    parser.add_argument("--repeats", type=int, default=50)
    args = parser.parse_args()
    shape = Shape(args.trials, args.window, args.slots, args.tasks, args.steps, args.prune, args.sigma,
                  args.filler)
    shares = [busy_share(shape, seed) for seed in range(args.repeats)]
    print(f"{shape}: busy {sum(shares) / len(shares):.3f} (min {min(shares):.3f}, max {max(shares):.3f})")


if __name__ == "__main__":
    main()
