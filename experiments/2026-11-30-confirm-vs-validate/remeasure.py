"""Measure a shipped Medium again, many times, at the validation's size (session 7).

Question: is Medium's lean (validated above the confirmation that chose it) a property of the
measurement at small sample sizes, or of the choice? Replays the validation's design (the same
opponents, pairs per opponent, deck half, ply cap and ladder) ``--repeats`` times on fresh
opening streams and seeds, rates each repeat on the ladder as the run did, and pools them.
If small measurements of a fixed player average above a big one, the estimator leans; if they
average where the big fresh pool does, the recorded validation-minus-confirmation gap came from
the choice (or chance).

    python experiments/2026-11-30-confirm-vs-validate/remeasure.py RUN_FOLDER PROFILE.json \
        --repeats 10 --output runs/checks/remeasure-<variant>
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
from pathlib import Path

import pyarrow as pa
from pipeline.calibration.levels import rate_on_ladder

from pipeline.calibration.levelcheck import ProgressLines, level_spec
from pipeline.games.executor import RayOptions, make_executor
from pipeline.games.openings import load_deck
from pipeline.games.pairings import Pairing, play_pairings
from pipeline.ladder.reference import load_ladder

#: Opening streams of the repeats: apart from the run's own (confirmation and validation).
STREAM_BASE = 50_000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run", type=Path, help="a finished validated run folder")
    parser.add_argument("profile", type=Path, help="the profile the run exported")
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--seed", type=int, default=94001)
    parser.add_argument("--output", type=Path, required=True)
    args = parser.parse_args()

    config = json.loads((args.run / "run.json").read_text())["config"]
    job = config["job"]
    confirm = json.loads((args.run / "calibrate" / "result.json").read_text())["levels"]["medium"]["confirm"]
    ladder = load_ladder(config["ladder"]["path"])
    deck = load_deck(job["variant"], part=job.get("deck_part", "all"))
    spec = level_spec(args.profile.resolve(), "medium")
    opponents = [(name, ladder.anchor(name).spec) for name in confirm["opponents"]]
    pairs = confirm["pairs_per_opponent"]
    executor = make_executor(in_process=False, options=RayOptions(num_cpus=2))

    tables: list[pa.Table] = []
    elos: list[float] = []
    for k in range(args.repeats):
        pairings = [Pairing(spec, opp, pairs, stream=STREAM_BASE + 10 * k + j)
                    for j, (_, opp) in enumerate(opponents)]
        table = play_pairings(executor, args.output, "remeasure", f"medium/repeat-{k:02d}", job["variant"],
                              pairings, args.seed, job.get("batch_size", 10), job["ply_cap"], deck,
                              ProgressLines())
        tables.append(table)
        elos.append(rate_on_ladder(ladder, table, spec, confirm["pin"]).elo)
        print(f"repeat {k}: {len(table)} games, Elo {elos[-1]:+.0f}", flush=True)

    pooled = rate_on_ladder(ladder, pa.concat_tables(tables), spec, confirm["pin"])
    chosen = confirm["selection"]
    mean, sd = statistics.fmean(elos), statistics.stdev(elos)
    print(f"\n{args.run.name}: Medium, {args.repeats} repeats of {pairs} pairs per opponent "
          f"against {' and '.join(n for n, _ in opponents)}")
    sem = sd / math.sqrt(len(elos))
    print(f"- repeats: mean {mean:+.1f}, sd {sd:.1f} (standard error of the mean {sem:.1f})")
    print(f"- all repeats pooled: {pooled.elo:+.1f} [{pooled.ci_low:+.1f}, {pooled.ci_high:+.1f}] "
          "(Hessian CI)")
    print(f"- the run's confirmation: {chosen['elo']:+.1f} ± {chosen['half_width']:.1f}; "
          f"its validation: {confirm['elo']:+.1f} ± {confirm['half_width']:.1f}")


if __name__ == "__main__":
    main()
