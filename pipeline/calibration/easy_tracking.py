"""Easy's finished Optuna trials, logged to MLflow once each, whenever they were played.

Easy's study may be played ahead, while the tuning stage's run is the open MLflow run, so its
trial runs are logged later, inside the calibrate stage's run: every COMPLETE trial not listed in
``calibrate/easy/tracked.json`` gets its trial run, and the list grows after each. A driver
killed between a trial's end and its logging logs it on the resume instead of losing it.
"""

from __future__ import annotations

import math
from typing import Any

from pipeline.calibration.outcome import EasyTrial
from pipeline.games.storage import read_json, write_json
from pipeline.games.storage_fs import StorePath, store_path
from pipeline.jsonrecord import RecordError
from pipeline.tuning.studies import complete_trials

TRACKED_FILE = "tracked.json"
STRENGTH_CONSTRAINT = "strength"  # |Elo gap to the product's Easy| - claims.EASY_TOLERANCE


def easy_trial_record(trial: Any) -> EasyTrial:
    """The :class:`EasyTrial` a finished trial of Easy's study stands for."""
    attrs = trial.user_attrs
    slot = int(attrs["slot"])
    return EasyTrial(slot, f"easy-t{slot:03d}", dict(trial.params), float(attrs["gap"]),
                     float(attrs["score"]), float(trial.value or 0.0), int(attrs["games"]),
                     float(trial.constraints.get(STRENGTH_CONSTRAINT, math.inf)) <= 0)


def tracked_trials(path: StorePath) -> set[int]:
    """The trial numbers ``path`` lists as logged (none when it does not exist)."""
    if not store_path(path).is_file():
        return set()
    data = read_json(path)
    numbers = data.get("trials") if isinstance(data, dict) else None
    if not isinstance(numbers, list) or not all(type(n) is int and n >= 0 for n in numbers):
        raise RecordError(f"{path}: expected {{\"trials\": [trial numbers]}}, got {data!r}")
    return set(numbers)


def track_easy_trials(tracker: Any, study: Any, folder: StorePath, stage: str) -> int:
    """Log a trial run (inside the tracker's open run) for each COMPLETE trial of ``study`` not yet
    listed in ``folder``/``TRACKED_FILE``, in trial order, listing each once logged; how many."""
    path = folder / TRACKED_FILE
    done = tracked_trials(path)
    tags = {"kind": "trial", "stage": stage, "study_name": study.study_name}
    logged = 0
    for trial in sorted(complete_trials(study), key=lambda t: t.number):
        if trial.number in done:
            continue
        outcome = easy_trial_record(trial)
        with tracker.trial_run(trial.number, outcome.params, tags):
            tracker.log_metrics({"value": outcome.blunder_rate, "blunder_rate": outcome.blunder_rate,
                                 "elo_gap": outcome.gap, "score": outcome.score, "games": outcome.games,
                                 "feasible": float(outcome.feasible)})
            tracker.set_tags({"state": "complete", "player": outcome.player})
        done.add(trial.number)
        write_json(path, {"trials": sorted(done)})
        logged += 1
    return logged
