"""Several trials of one study in flight at once, so a cluster's CPUs stay busy.

The driver thread asks every trial, in slot order, through a :class:`TrialWindow` (trial n drawn
and pruned from the trials 0..n-W only), and hands it to a worker thread that plays its games
(its batches join the one executor queue beside the other trials') and tells the study. Finished
trials are reported back on the driver thread in the order they end. Which trials finish first
changes only that order, never a trial's parameters, games or pruning: the same study comes out
with 1 or W trials in flight.

A trial whose games fail is left RUNNING in the study, like one of a killed driver: the trials
still running finish (their games are kept), then the first error is raised, and the next open of
the study retries it (:func:`pipeline.tuning.studies.recover_interrupted`).
"""

from __future__ import annotations

import concurrent.futures as cf
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from pipeline.tuning.studies import ParamSpec, TrialWindow, remaining_trials

T = TypeVar("T")


def run_trials(
    study: Any,
    target: int,
    space: Sequence[ParamSpec],
    window: TrialWindow,
    play: Callable[[Any, dict[str, Any]], T],
    done: Callable[[T], None],
    *,
    in_flight: int | None = None,
) -> None:
    """Run trials until ``target`` are COMPLETE: ``play(trial, params)`` on a worker thread (it
    must tell the study), ``done(result)`` on this thread. ``in_flight``: trials at once (default
    and maximum: the window's W)."""
    limit = window.size if in_flight is None else in_flight
    if not 1 <= limit <= window.size:
        raise ValueError(f"trials in flight {limit}: must be between 1 and the window's {window.size}")
    running: set[cf.Future[T]] = set()
    failure: BaseException | None = None
    with cf.ThreadPoolExecutor(max_workers=limit, thread_name_prefix=f"trial-{study.study_name}") as pool:
        while True:
            while (failure is None and len(running) < limit
                   and remaining_trials(study, target) - len(running) > 0 and window.ready(study)):
                trial, params = window.ask(study, space)
                running.add(pool.submit(play, trial, params))
            if not running:
                break
            finished, _ = cf.wait(running, return_when=cf.FIRST_COMPLETED)
            for future in finished:
                running.discard(future)
                error = future.exception()
                if error is not None:
                    failure = failure or error
                else:
                    done(future.result())
    if failure is not None:
        raise failure
