"""The cluster configs are sized for 64 cores: no stage's tasks are short, the tuning fills the slots.

A task under :data:`~pipeline.games.schedule.SMALL_TASK_SECONDS` measured seconds spends a
visible share on scheduling and on the driver; the tuning's steps are the smallest work a cluster
config plays, so each step of a trial and of the SPRT is planned here exactly as the job plays it
(the same pairings, batches and packing) and every task must hold at least
:data:`MIN_NOMINAL_SECONDS` of nominal work: the nominal constants are fitted to measured tasks
(experiments/2026-12-05-cluster-stage-tasks), where tuning tasks ran at 0.98 to 1.03 of the fitted estimate,
so that is a margin of half again over the small task.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.config.job_sections import job, tune_section
from pipeline.config.run_config import load_config
from pipeline.config.tracking_sections import optuna_section
from pipeline.games.openings import load_deck
from pipeline.games.pairings import Pairing, plan_pairings
from pipeline.games.schedule import SMALL_TASK_SECONDS
from pipeline.games.sizing import plan_tasks, task_seconds
from pipeline.tuning.weights import SEED_NAME, seed_weights, tuning_spec

CONFIGS = sorted((Path(__file__).resolve().parents[2] / "configs" / "runs").glob("*-cluster.toml"))
CLUSTER_SLOTS = 64  # what the cluster configs are sized for (their header comment)
MIN_NOMINAL_SECONDS = 1.5 * SMALL_TASK_SECONDS


def _step_tasks(path: Path, pairs: int) -> list[float]:
    """Nominal seconds of each task of one tuning step of ``pairs`` pairs of the config at ``path``."""
    config = load_config(path)
    j, tune = job(config), tune_section(config)
    assert tune is not None
    weights = seed_weights(j.variant, j.seed_profile)
    candidate = tuning_spec(j.variant, "t0000", weights, tune)
    seed = tuning_spec(j.variant, SEED_NAME, weights, tune)
    specs = plan_pairings("r", "tune/trial-0000", j.variant, [Pairing(candidate, seed, pairs)], 1,
                          j.batch_size, j.ply_cap, load_deck(j.variant, part=j.deck_part, name=j.deck),
                          stage_seeds=True)
    return [task_seconds(t) for t in plan_tasks(specs, j.task_seconds)]


def test_there_are_cluster_configs() -> None:
    assert len(CONFIGS) == 5, CONFIGS


@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: p.stem)
def test_no_tuning_task_is_short_and_the_trials_fill_the_cluster(path: Path) -> None:
    config = load_config(path)
    tune = tune_section(config)
    assert tune is not None
    step = _step_tasks(path, min(tune.step_pairs, tune.pairs))
    sprt = _step_tasks(path, tune.sprt_step_pairs)
    assert min(step) >= MIN_NOMINAL_SECONDS, (path.name, step)
    assert min(sprt) >= MIN_NOMINAL_SECONDS, (path.name, sprt)
    in_flight = optuna_section(config).parallel_trials * len(step)
    assert in_flight >= CLUSTER_SLOTS, f"{path.name}: {in_flight} tuning tasks for {CLUSTER_SLOTS} slots"


def test_the_check_can_fail_on_a_two_core_config() -> None:
    """english.toml's 10-pair steps are single short tasks: what this test exists to catch."""
    step = _step_tasks(CONFIGS[0].with_name("english.toml"), 10)
    assert len(step) == 1 and step[0] < SMALL_TASK_SECONDS
