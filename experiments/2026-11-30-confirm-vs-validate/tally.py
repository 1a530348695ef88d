"""Confirmation against validation over every validated calibration run (session 7).

For each validated level: the validated Elo minus the confirmed Elo that chose the candidate, in
standard errors of the difference (each half-width / 1.96). For Medium, which is rated on the
ladder against the pin and one bracketing anchor, also the estimate from the games against each
opponent alone, to see whether the floating anchor pulls the estimate with sample size.

Reads only stored games and results (no game is played):
    python experiments/2026-11-30-confirm-vs-validate/tally.py runs
"""

from __future__ import annotations

import json
import math
import statistics
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
from pipeline.calibration.levels import rate_on_ladder

from pipeline.games.storage import read_games
from pipeline.ladder.reference import load_ladder

LEVELS = ("medium", "easy", "hard")


def _by_opponent(run: Path, confirm: dict, stages: list[str], name: str) -> str:
    """Medium's Elo from all its games, then from the games against each opponent alone."""
    ladder = load_ladder(run / "ladder.json")
    table = pa.concat_tables([read_games(run, stage) for stage in stages])
    opponents = confirm["opponents"]
    parts = [f"all {rate_on_ladder(ladder, table, name, confirm['pin']).elo:+.0f}"]
    for opp in opponents:
        mask = pc.or_(pc.equal(table["white_player"], opp), pc.equal(table["black_player"], opp))
        parts.append(f"via {opp} {rate_on_ladder(ladder, table.filter(mask), name, confirm['pin']).elo:+.0f}")
    return " ".join(parts)


def main(root: str) -> None:
    zs: dict[str, list[float]] = {lv: [] for lv in LEVELS}
    offsets: dict[str, list[tuple[float, float]]] = {lv: [] for lv in LEVELS}
    print("| run | level | confirmed | validated | validated - confirmed | z |")
    print("| --- | --- | --- | --- | --- | --- |")
    paths: list[str] = []
    for result in sorted(Path(root).glob("*chain-validated*/calibrate/result.json")):
        run = result.parent.parent
        levels = json.loads(result.read_text())["levels"]
        for level in LEVELS:
            confirm = levels[level].get("confirm", {})
            if not confirm.get("validated"):
                continue
            chosen = confirm["selection"]
            diff = confirm["elo"] - chosen["elo"]
            z = diff / (math.hypot(confirm["half_width"], chosen["half_width"]) / 1.96)
            zs[level].append(z)
            target = levels[level]["target"]
            offsets[level].append((chosen["elo"] - target, confirm["elo"] - target))
            print(f"| {run.name} | {level} | {chosen['elo']:+.0f} ± {chosen['half_width']:.0f} | "
                  f"{confirm['elo']:+.0f} ± {confirm['half_width']:.0f} | {diff:+.0f} | {z:+.2f} |")
            if level == "medium":
                name = f"medium-t{int(levels[level]['slot']):04d}"
                paths.append(f"| {run.name} | {_by_opponent(run, confirm, chosen['stages'], name)} | "
                             f"{_by_opponent(run, confirm, confirm['stages'], name)} |")
    every = [z for level in LEVELS for z in zs[level]]
    print(f"\n{len(every)} levels: RMS z {math.sqrt(statistics.fmean(z * z for z in every)):.2f}, "
          f"mean z {statistics.fmean(every):+.2f}")
    for level in LEVELS:
        conf, val = zip(*offsets[level], strict=True)
        print(f"- {level} ({len(zs[level])}): mean z {statistics.fmean(zs[level]):+.2f} "
              f"(sd {statistics.stdev(zs[level]):.2f}, {sum(z > 0 for z in zs[level])} positive); "
              f"confirmed - target {statistics.fmean(conf):+.1f}, "
              f"validated - target {statistics.fmean(val):+.1f}")
    print("\n| run | Medium's confirmation games | Medium's validation games |")
    print("| --- | --- | --- |")
    print("\n".join(paths))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "runs")
