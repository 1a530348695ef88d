"""Measured CPU seconds of sampled tasks of every stage of a cluster config, played in this process.

For each stage of ``plan.stage_tasks`` (the tasks the job would submit), the smallest planned task
and three more drawn with seed 0 are played part by part with ``play_batch``, timed with
``time.process_time`` (one thread: the task's CPU seconds), after a two-ply warm-up of every
pairing so no kernel compile is timed. An Easy trial's blunder rate (a task of its own) is timed
on the trial's games. Prints a markdown table and writes ``measured.json`` beside this script.
"""

from __future__ import annotations

import dataclasses
import json
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow as pa

from pipeline.calibration.method import measure_blunders
from pipeline.calibration.product import product_levels
from pipeline.config.job_sections import job
from pipeline.config.run_config import load_config
from pipeline.games.match import part_of, play_batch
from pipeline.games.sizing import Task, task_seconds

sys.path.insert(0, str(Path(__file__).parent))
from plan import stage_plans

SAMPLED = 3


def play(task: Task) -> tuple[float, pa.Table]:
    for part in task:  # warm-up: two plies of the part's first pair
        play_batch(dataclasses.replace(part_of(part.spec, part.start, part.start + 1), ply_cap=2))
    started = time.process_time()
    tables = [play_batch(part.sub_spec()) for part in task]
    return time.process_time() - started, pa.concat_tables(tables)


def main(path: str) -> None:
    config = load_config(path)
    variant = job(config).variant
    rows = []
    for stage, tasks in stage_plans(Path(path)).items():
        nominal = [task_seconds(t) for t in tasks]
        smallest = int(np.argmin(nominal))
        others = [i for i in range(len(tasks)) if i != smallest]
        rng = np.random.default_rng(0)
        drawn = rng.choice(others, size=min(SAMPLED, len(others)), replace=False)
        chosen = [smallest, *(int(i) for i in drawn)]
        for i in chosen:
            cpu, table = play(tasks[i])
            rows.append({"stage": stage, "task": i, "nominal": nominal[i], "cpu": cpu,
                         "games": table.num_rows})
            print(f"{stage} task {i}: nominal {nominal[i]:.1f} s, {cpu:.1f} CPU-s, {table.num_rows} games",
                  flush=True)
            if stage.startswith("calibrate/easy/trials"):
                easy = product_levels(variant).player("easy")
                measure_blunders(variant, table.slice(0, 2), easy, 0)  # warm-up
                started = time.process_time()
                measure_blunders(variant, table, easy, 0)
                cpu = time.process_time() - started
                rows.append({"stage": "calibrate/easy/trials (blunder rate)", "task": i, "nominal": None,
                             "cpu": cpu, "games": table.num_rows})
                print(f"  its blunder rate: {cpu:.1f} CPU-s", flush=True)
    (Path(__file__).parent / "measured.json").write_text(json.dumps(rows, indent=1) + "\n")
    print("\n| stage | task | nominal s | measured CPU-s | ratio |\n| --- | ---: | ---: | ---: | ---: |")
    for r in rows:
        nom = "-" if r["nominal"] is None else f"{r['nominal']:.1f}"
        ratio = "-" if r["nominal"] is None else f"{r['cpu'] / r['nominal']:.2f}"
        print(f"| {r['stage']} | {r['task']} | {nom} | {r['cpu']:.1f} | {ratio} |")
    print(f"\nsmallest measured task: {min(r['cpu'] for r in rows):.1f} CPU-s")


if __name__ == "__main__":
    main(sys.argv[1])
