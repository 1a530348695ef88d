"""Trials in flight: the same study whether 1, 4 or 16 trials of a W = 16 window run at once.

The objective is synthetic (no games): a trial "plays" by reporting per-step values computed
from its parameters, after a sleep that makes trials finish in a scrambled order, so a draw or a
pruning decision that looked at whichever results had arrived would differ between runs.
"""

from __future__ import annotations

import random
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from pipeline.tuning.inflight import run_trials
from pipeline.tuning.studies import (
    ParamSpec,
    TrialWindow,
    complete_trials,
    default_storage,
    open_study,
    report_pairs,
    slot_of,
    tell_trial,
    wilcoxon_pruner,
)

SPACE = [ParamSpec("x", "float", -3.0, 3.0), ParamSpec("y", "float", -3.0, 3.0)]
STEPS = 12


def _steps(params: dict[str, Any]) -> list[tuple[int, float]]:
    base = -(params["x"] - 1.0) ** 2 - (params["y"] + 0.5) ** 2
    return [(k, base + 0.3 * ((k * 7919) % 5 - 2)) for k in range(STEPS)]


def _study(tmp_path: Path, folder: str, window: TrialWindow) -> Any:
    """Study "s" (the name seeds the draws) in a storage of its own under ``folder``."""
    return open_study("s", default_storage(tmp_path / folder), run_seed=window.run_seed, direction="maximize",
                      n_startup_trials=window.n_startup_trials,
                      pruner=wilcoxon_pruner(p_threshold=0.2, n_startup_steps=4))


def _run(tmp_path: Path, name: str, window: TrialWindow, in_flight: int, target: int,
         fail_slot: int | None = None) -> Any:
    study = _study(tmp_path, name, window)
    jitter = random.Random(in_flight)
    lock = threading.Lock()

    def play(trial: Any, params: dict[str, Any]) -> int:
        with lock:
            pause = jitter.random() * 0.02
        time.sleep(pause)
        slot = slot_of(trial)
        if slot == fail_slot:
            raise RuntimeError(f"games of slot {slot} failed")
        steps = _steps(params)
        stopped = report_pairs(trial, steps, window)
        played = [v for k, v in steps if stopped is None or k <= stopped]
        tell_trial(study, trial, sum(played) / len(played), pruned_at_step=stopped)
        return slot

    run_trials(study, target, SPACE, window, play, lambda _slot: None, in_flight=in_flight)
    return study


def _by_slot(study: Any) -> dict[int, tuple[Any, ...]]:
    out = {}
    for t in complete_trials(study):
        out[slot_of(t)] = (round(t.params["x"], 12), round(t.params["y"], 12), round(t.value, 12),
                           t.user_attrs.get("pruned_at_step"))
    return out


def test_the_same_study_with_1_4_and_16_trials_in_flight(tmp_path: Path) -> None:
    window = TrialWindow(16, run_seed=5, sampler="tpe", n_startup_trials=4)
    studies = [_by_slot(_run(tmp_path, f"w16-{k}", window, k, target=32)) for k in (1, 4, 16)]
    assert sorted(studies[0]) == list(range(32))
    assert studies[0] == studies[1] == studies[2]
    pruned = [v for v in studies[0].values() if v[3] is not None]
    assert pruned and len(pruned) < 32  # the pruner took part, and decided from the window alone


def test_the_window_changes_the_draws(tmp_path: Path) -> None:
    narrow = _by_slot(_run(tmp_path, "w1", TrialWindow(1, run_seed=5, n_startup_trials=4), 1, target=24))
    wide = _by_slot(_run(tmp_path, "w8", TrialWindow(8, run_seed=5, n_startup_trials=4), 8, target=24))
    # the first draws are random from the same seeds; later ones see different histories
    assert [narrow[s][:2] for s in range(4)] == [wide[s][:2] for s in range(4)]
    assert any(narrow[s][:2] != wide[s][:2] for s in range(8, 24))


def test_a_failed_trial_is_retried_on_resume_into_the_same_study(tmp_path: Path) -> None:
    window = TrialWindow(4, run_seed=9, n_startup_trials=3)
    whole = _by_slot(_run(tmp_path, "whole", window, 4, target=20))
    with pytest.raises(RuntimeError, match="slot 6 failed"):
        _run(tmp_path, "broken", window, 4, target=20, fail_slot=6)
    resumed = _by_slot(_run(tmp_path, "broken", window, 2, target=20))  # opened again: slot 6 retried
    assert resumed == whole


def test_a_draw_refuses_an_unfinished_window(tmp_path: Path) -> None:
    window = TrialWindow(2, run_seed=1, n_startup_trials=2)
    study = _study(tmp_path, "early", window)
    first, _ = window.ask(study, SPACE)
    assert slot_of(window.ask(study, SPACE)[0]) == 1  # slot 1 may run beside slot 0
    assert not window.ready(study)  # slot 2 needs slot 0 finished
    with pytest.raises(ValueError, match="slot 2 needs slots up to 0 finished"):
        window.ask(study, SPACE)
    tell_trial(study, first, 0.0)
    assert window.ready(study)
    assert slot_of(window.ask(study, SPACE)[0]) == 2


def test_in_flight_above_the_window_is_refused(tmp_path: Path) -> None:
    window = TrialWindow(2, run_seed=1)
    with pytest.raises(ValueError, match="trials in flight 3: must be between 1 and the window's 2"):
        run_trials(_study(tmp_path, "x", window), 1, SPACE, window, lambda t, p: None, lambda r: None,
                   in_flight=3)


def test_the_pruners_window_is_built_once_a_trial_and_decides_as_a_fresh_one(tmp_path: Path) -> None:
    """Every reported pair asks the pruner; its view of the window's finished trials is kept for
    the trial's later reports, and never taken for another study's trials of the same name."""
    window = TrialWindow(2, run_seed=3, n_startup_trials=2)
    studies = [_study(tmp_path, f"cache-{k}", window) for k in (0, 1)]
    for k, study in enumerate(studies):
        for n in range(2):
            trial, _ = window.ask(study, SPACE)
            for step in range(STEPS):
                trial.report(float((step * (n + 1) + k) % 3), step)
            tell_trial(study, trial, 1.0)
    for k, study in enumerate(studies):
        trial, _ = window.ask(study, SPACE)  # slot 2: its window holds slot 0
        decisions = []
        for step in range(STEPS):
            trial.report(0.0, step)
            frozen = next(t for t in study.get_trials(deepcopy=False) if t.number == trial.number)
            fresh = bool(study.pruner.prune(window._view(study, 2), frozen))
            decisions.append(window.should_prune(study, trial))
            assert decisions[-1] == fresh
        assert len([key for key in window._views if key[0] == "s" and key[1] == 2]) == k + 1  # one view each
    assert len(window._views) == 2
