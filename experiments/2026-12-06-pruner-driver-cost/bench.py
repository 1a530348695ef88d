"""The driver's cost of one reported pair of a tuning trial: Optuna's report and the window's pruner.

    PYTHONPATH=. python experiments/2026-12-06-pruner-driver-cost/bench.py

A journal-storage study with 16 COMPLETE trials of 1,800 per-pair values each (a cluster-shaped
study's first window), then one running trial of slot 32 that reports 200 pairs, each followed
by ``TrialWindow.should_prune`` (what ``report_pairs`` does for every pair a trial plays). It
prints the driver's CPU milliseconds a pair, with the pruner and without it, and the cost of
building the pruner's view of the window once.
"""

from __future__ import annotations

import os
import random
import tempfile
import time

import optuna
from optuna.storages import JournalStorage
from optuna.storages.journal import JournalFileBackend

from pipeline.tuning.studies import TrialWindow, report_step, wilcoxon_pruner

PAIRS = 200


def main() -> None:
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    folder = tempfile.mkdtemp()
    storage = JournalStorage(JournalFileBackend(os.path.join(folder, "journal.log")))
    study = optuna.create_study(study_name="s", storage=storage, direction="maximize",
                                pruner=wilcoxon_pruner(0.1, 900))
    rng = random.Random(1)
    x: optuna.distributions.BaseDistribution = optuna.distributions.FloatDistribution(0, 1)
    space = {"x": x}
    for slot in range(16):
        trial = study.ask(space)
        trial.set_user_attr("slot", slot)
        for step in range(1800):
            trial.report(rng.choice([0.0, 0.5, 1.0, 1.5, 2.0]), step)
        study.tell(trial, 0.5)
    window = TrialWindow(16, 1)
    trial = study.ask(space)
    trial.set_user_attr("slot", 32)
    start = time.process_time()
    for step in range(PAIRS):
        report_step(trial, step, rng.choice([0.0, 1.0, 2.0]), window)
    with_pruner = (time.process_time() - start) / PAIRS
    start = time.process_time()
    for step in range(PAIRS, 2 * PAIRS):
        trial.report(1.0, step)
    report_only = (time.process_time() - start) / PAIRS
    start = time.process_time()
    for _ in range(10):
        window._view(study, 32)
    view = (time.process_time() - start) / 10
    print(f"report and prune: {with_pruner * 1000:.2f} ms a pair; report only: {report_only * 1000:.2f} ms; "
          f"building the window's view once: {view * 1000:.2f} ms")


if __name__ == "__main__":
    main()
