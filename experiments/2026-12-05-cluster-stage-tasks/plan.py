"""Nominal task sizes of every stage of each cluster config, planned as the job plays them.

Stand-ins where the method chooses players later (the product's Easy for an Easy trial, the
validation's stand-in levels of ``pipeline.job.job_plan``); prints one row per config and stage.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from pipeline.calibration.method import (
    CAL_DIR,
    EASY_SCALES,
    curve_pairings,
    curve_players,
    easy_axis_pairings,
    easy_trial_pairings,
    product_pairings,
    split_openings,
    with_repeats,
)
from pipeline.calibration.paths import PathPlayer, easy_player
from pipeline.calibration.product import product_levels
from pipeline.config.job_sections import calibrate_section, job, tune_section
from pipeline.config.run_config import load_config
from pipeline.games.openings import load_deck
from pipeline.games.pairings import Pairing, plan_pairings
from pipeline.games.sizing import Task, plan_tasks, task_seconds
from pipeline.job.job_plan import validation_stand_ins
from pipeline.tuning.weights import SEED_NAME, seed_weights, tuning_spec


def stage_plans(path: Path) -> dict[str, list[Task]]:
    """The planned tasks of every stage of the config at ``path`` (one trial step, one trial)."""
    config = load_config(path)
    j, tune, cal = job(config), tune_section(config), calibrate_section(config)
    deck = load_deck(j.variant, part=j.deck_part, name=j.deck)
    weights = seed_weights(j.variant, j.seed_profile)

    def tasks(stage: str, pairings: list[Pairing]) -> list[Task]:
        specs = plan_pairings("r", stage, j.variant, pairings, 1, j.batch_size, j.ply_cap, deck,
                              stage_seeds=True)
        return plan_tasks(specs, j.task_seconds)

    out: dict[str, list[Task]] = {}
    if tune is not None:
        cand = tuning_spec(j.variant, "t0000", weights, tune)
        seed = tuning_spec(j.variant, SEED_NAME, weights, tune)
        step = min(tune.step_pairs, tune.pairs)
        out["tune/trials (one step)"] = tasks("tune/trial-0000", [Pairing(cand, seed, step)])
        out["tune/confirm (one step)"] = tasks("tune/confirm", [Pairing(cand, seed, tune.sprt_step_pairs)])
    if cal is None:
        return out
    product = product_levels(j.variant)
    split = split_openings(deck, 1, cal.openings, cal.validation_openings)
    n = len(split.curve)
    curves = curve_players(j.variant, weights, cal)
    plan = with_repeats(j.variant, curve_pairings(product, curves, n))
    ahead = len(product_pairings(product, n))
    out["calibrate/curves (product, ahead)"] = tasks(f"{CAL_DIR}/curves", plan[:ahead])
    out["calibrate/curves (rest)"] = tasks(f"{CAL_DIR}/curves", plan[ahead:])
    easy = PathPlayer(product.player("easy"), product.level("easy"))
    trial_pairs = min(cal.easy_openings, cal.openings)
    out["calibrate/easy/trials (one trial)"] = tasks(
        f"{CAL_DIR}/easy/trial-000", easy_trial_pairings(j.variant, easy, product, trial_pairs))
    mix = {"noise_sigma": 40.0, "random_move_prob": 0.1}  # a stand-in for Optuna's choice
    axis = tuple(easy_player(j.variant, weights, {k: v * s for k, v in mix.items()}, f"e{s}")
                 for s in EASY_SCALES)
    out["calibrate/easy-axis"] = tasks(f"{CAL_DIR}/easy-axis",
                                       with_repeats(j.variant, easy_axis_pairings(product, axis, n)))
    validation = validation_stand_ins(j.variant, weights, cal)
    out["calibrate/validation (stand-ins)"] = tasks(f"{CAL_DIR}/validation",
                                                    with_repeats(j.variant, validation))
    return out


def main(paths: list[str]) -> None:
    print("| config | stage | tasks | nominal s min / p10 / p50 / max |")
    print("| --- | --- | ---: | --- |")
    for p in paths:
        for stage, tasks in stage_plans(Path(p)).items():
            a = np.array([task_seconds(t) for t in tasks])
            print(f"| {Path(p).stem} | {stage} | {len(a)} | {a.min():.1f} / {np.percentile(a, 10):.1f} / "
                  f"{np.median(a):.1f} / {a.max():.1f} |")


if __name__ == "__main__":
    main(sys.argv[1:])
