"""Games and CPU time a main-job config plans, and its wall time on N cores.

    python experiments/2026-12-02-cluster-sizing/size.py CONFIG [--cores 64] [--ratio R]

The plan is the job's own ETA plan (``pipeline.job.job_plan``): the tuning at its upper bound
(every trial at all its pairs, the SPRT at its cap), the curves as played, Easy's trials and
axis and the validation with stand-ins, the checks after the validation. Nominal CPU seconds
(``pipeline.games.sizing``) become measured ones through ``--ratio``: measured over nominal
seconds of a finished run's games (this folder's README says which run gave it). A stage that
fans out fills every core; the tuning fills at most its trials in flight times the batches of
a step; the driver's checks run on one core.
"""

from __future__ import annotations

import argparse
import collections

from pipeline.config.job_sections import calibrate_section, job, tune_section
from pipeline.config.run_config import load_config
from pipeline.config.tracking_sections import optuna_section
from pipeline.games.openings import load_deck
from pipeline.job.job_plan import calibrate_plan, tune_plan
from pipeline.tuning.weights import seed_weights


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("config")
    parser.add_argument("--cores", type=int, default=64)
    parser.add_argument("--ratio", type=float, default=1.0, help="measured over nominal CPU seconds")
    args = parser.parse_args()
    config = load_config(args.config)
    j = job(config)
    weights = seed_weights(j.variant, j.seed_profile)
    plan = []
    tune = tune_section(config)
    if tune is not None:
        opt = optuna_section(config)
        deck = tuple(load_deck(j.variant, part=j.deck_part, name=j.deck))
        plan += tune_plan(j.variant, weights, tune, opt.n_trials, j.ply_cap, opt.parallel_trials,
                          j.batch_size, deck, j.task_seconds)
    plan += calibrate_plan(j.variant, weights, calibrate_section(config), j.ply_cap)
    games: dict[str, int] = collections.Counter()
    cpu: dict[str, float] = collections.Counter()
    wall = 0.0
    for p in plan:
        stage = p.group.split("/")[0] if p.group.startswith("tune") else p.group
        if p.driver:  # the driver's own wall seconds, or tasks side by side (their width)
            cpu[stage] += p.nominal
            wall += p.nominal / min(args.cores, p.width or 1)
            continue
        games[stage] += p.games
        seconds = p.nominal * args.ratio
        cpu[stage] += seconds
        wall += seconds / (min(args.cores, p.width) if p.width else args.cores)
    print(f"{args.config}: {sum(games.values()):,} games at most, "
          f"{sum(cpu.values()) / 3600:.1f} CPU-hours at ratio {args.ratio:g}")
    for stage in cpu:
        print(f"  {stage:28s} {games.get(stage, 0):>8,} games {cpu[stage] / 3600:8.2f} CPU-h")
    print(f"  wall on {args.cores} cores, every core busy where a stage fans out: {wall / 60:.0f} min "
          "(an upper bound on the tuning: trials pruned early play fewer games)")


if __name__ == "__main__":
    main()
