"""Easy's finished trials reach MLflow once each, also when they were played ahead or before a
driver was killed (``pipeline.calibration.easy_tracking``)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import optuna
import pytest

from pipeline.calibration.easy_tracking import TRACKED_FILE, track_easy_trials, tracked_trials
from pipeline.jsonrecord import RecordError
from pipeline.tuning.studies import tell_trial


class _Recorder:
    """A tracker that keeps what each trial run was given."""

    def __init__(self) -> None:
        self.runs: list[dict[str, Any]] = []

    @contextlib.contextmanager
    def trial_run(self, number: int, params: dict[str, Any], tags: dict[str, str]) -> Iterator[None]:
        self.runs.append({"number": number, "params": params, "tags": tags})
        yield

    def log_metrics(self, metrics: dict[str, float]) -> None:
        self.runs[-1]["metrics"] = metrics

    def set_tags(self, tags: dict[str, str]) -> None:
        self.runs[-1]["set"] = tags


def _finish(study: optuna.Study, slot: int, gap: float, rate: float) -> None:
    trial = study.ask({"noise_sigma": optuna.distributions.FloatDistribution(0, 400)})
    tell_trial(study, trial, rate, user_attrs={"gap": gap, "score": 0.5, "slot": slot, "games": 256},
               constraints={"strength": abs(gap) - 30})


def test_each_finished_trial_is_logged_once_across_calls(tmp_path: Path) -> None:
    study = optuna.create_study(study_name="s-calibrate-easy", direction="minimize")
    _finish(study, 0, -120.0, 0.25)
    _finish(study, 1, 12.0, 0.18)
    running = study.ask()  # not finished: not logged
    tracker = _Recorder()
    assert track_easy_trials(tracker, study, tmp_path, "calibrate") == 2
    assert [r["number"] for r in tracker.runs] == [0, 1]
    first = tracker.runs[1]
    assert first["tags"] == {"kind": "trial", "stage": "calibrate", "study_name": "s-calibrate-easy"}
    assert first["metrics"]["blunder_rate"] == 0.18 and first["metrics"]["feasible"] == 1.0
    assert first["set"] == {"state": "complete", "player": "easy-t001"}
    assert tracker.runs[0]["metrics"]["feasible"] == 0.0
    assert tracked_trials(tmp_path / TRACKED_FILE) == {0, 1}

    tell_trial(study, running, 0.2, user_attrs={"gap": 5.0, "score": 0.5, "slot": 2, "games": 256},
               constraints={"strength": -25.0})
    assert track_easy_trials(tracker, study, tmp_path, "calibrate") == 1  # only the new one
    assert [r["number"] for r in tracker.runs] == [0, 1, 2]
    assert track_easy_trials(_Recorder(), study, tmp_path, "calibrate") == 0


def test_a_damaged_list_of_logged_trials_is_refused(tmp_path: Path) -> None:
    (tmp_path / TRACKED_FILE).write_text('{"trials": [0, "one"]}\n')
    with pytest.raises(RecordError, match=TRACKED_FILE):
        tracked_trials(tmp_path / TRACKED_FILE)
