"""Re-read the shipped profiles' validations and checks with the opening bootstrap.

Plays no game: reads the stored validation games of each shipped run and the stored games of
its 600-pair check, and rates them twice, resampling pairs (what the runs and checks used) and
resampling openings (``confirm_bootstrap_unit = "opening"``, the default since session 6). The
pair numbers must come out exactly as recorded, which shows the re-read uses the same games,
seeds and estimator.

    python experiments/2026-11-30-opening-bootstrap/reread.py [--runs runs] > table.md
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import Any

import pyarrow as pa
from pipeline.calibration.chain import Neighbour, rate_against
from pipeline.calibration.levels import rate_on_ladder

from pipeline.calibration.levelcheck import (
    ADJACENT,
    _pairing_rows,
    davidson_gap,
    difference_test,
    distinct_games,
)
from pipeline.config.job_sections import LEVELS
from pipeline.games.storage import read_games
from pipeline.ladder.reference import load_ladder

VARIANTS = ("english", "suicide", "brazilian", "russian", "international")
UNITS = ("pair", "opening")


def _run_folder(runs: Path, variant: str) -> Path:
    provenance = json.loads(Path(f"engine/profiles/{variant}.json").read_text())["provenance"]
    (folder,) = runs.glob(f"{variant}-calibration-*-{provenance['source_config_hash'][:12]}")
    return folder


def _distinct(table: pa.Table) -> int:
    rows = table.select(["opening_id", "white_player", "moves"]).to_pylist()
    return len({(r["opening_id"], r["white_player"], r["moves"]) for r in rows})


def reread_validation(folder: Path) -> dict[str, Any]:
    """Each level's validated Elo and CI under both units, and how many of its games differ."""
    run = json.loads((folder / "run.json").read_text())
    calibrate = run["config"]["calibrate"]
    seed = int(run["config"]["run"]["seed"])
    result = json.loads((folder / "calibrate" / "result.json").read_text())
    ladder = load_ladder(folder / "ladder.json")
    out: dict[str, Any] = {}
    for level in LEVELS:
        conf = result["levels"][level]["confirm"]
        table = pa.concat_tables([read_games(folder, stage) for stage in conf["stages"]])
        name = f"{level}-t{int(result['levels'][level]['slot']):04d}"
        n_boot, rounds = int(calibrate.get("confirm_bootstrap", 400)), int(conf["rounds"])
        row: dict[str, Any] = {
            "recorded": (conf["elo"], *conf["ci"]),
            "unit": str(conf.get("ci_method", "pair bootstrap")).split()[0],  # what the run resampled
            "games": table.num_rows,
            "distinct": _distinct(table),
            "against": (conf.get("neighbour") or {}).get("level"),
        }
        for unit in UNITS:
            if conf.get("neighbour"):
                n = conf["neighbour"]
                rating = rate_against(
                    table,
                    name,
                    Neighbour(n["level"], n["name"], "", n["elo"], 0.0),
                    bootstrap=n_boot,
                    seed=seed + rounds,
                    unit=unit,
                )
            else:
                rating = rate_on_ladder(
                    ladder, table, name, conf["pin"], bootstrap=n_boot, seed=seed + rounds, unit=unit
                )
            row[unit] = (rating.elo, rating.ci_low, rating.ci_high)
        row["target"] = result["levels"][level]["target"]
        out[level] = row
    return out


def reread_check(folder: Path, claims: dict[str, Any]) -> list[dict[str, Any]]:
    """Each adjacent gap of the check under both units, with the claimed gap re-read the same way."""
    recorded = json.loads((folder / "levelcheck.json").read_text())
    table = read_games(folder, "levelcheck/adjacent")
    matches = _pairing_rows(table, int(recorded["settings"]["batch_size"]), len(ADJACENT))
    out = []
    for (strong, weak), rows, rec in zip(ADJACENT, matches, recorded["adjacent"], strict=True):
        linked = strong if claims[strong]["against"] == weak else weak  # the level rated against the other
        row: dict[str, Any] = {
            "match": f"{strong} - {weak}",
            "games": len(rows),
            "distinct": distinct_games(rows),
            "recorded": rec["davidson"]["elo"],
            "recorded_ci": rec["davidson"]["ci"],
        }
        for unit in UNITS:
            gap = davidson_gap(rows, unit=unit).rating
            elo, low, high = claims[linked][unit]
            sign = 1.0 if linked == strong else -1.0
            base = claims[weak if linked == strong else strong][unit][0]
            claim = sign * (elo - base)
            claim_ci = (low - base, high - base) if sign > 0 else (base - high, base - low)
            test = difference_test(gap.elo, (gap.ci_low, gap.ci_high), claim, claim_ci)
            row[unit] = {
                "gap": (gap.elo, gap.ci_low, gap.ci_high),
                "claim": (claim, *claim_ci),
                "agrees": test.agrees,
                "z": test.z,
            }
        out.append(row)
    return out


def _fmt(v: tuple[float, float, float]) -> str:
    return f"{v[0]:+.0f} [{v[1]:+.0f}, {v[2]:+.0f}]"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", default="runs", type=Path)
    args = parser.parse_args(argv)
    lines = [
        "## Validated levels",
        "",
        "| variant | level | rated against | games (distinct) | recorded | pair (re-read) | opening | "
        "half-width pair / opening | target inside (pair / opening) |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    checks = [
        "## Checks (600 pairs per match, odd half)",
        "",
        "| variant | match | games (distinct) | recorded gap | gap by pair | gap by opening "
        "| claim by pair | claim by opening | agrees (pair / opening) |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for variant in VARIANTS:
        folder = _run_folder(args.runs, variant)
        levels = reread_validation(folder)
        for level, row in levels.items():
            half = [(row[u][2] - row[u][1]) / 2 for u in UNITS]
            inside = ["yes" if row[u][1] <= row["target"] <= row[u][2] else "no" for u in UNITS]
            same = all(
                math.isclose(a, b, abs_tol=1e-6)
                for a, b in zip(row["recorded"], row[row["unit"]], strict=True)
            )
            lines.append(
                f"| {variant} | {level} | {row['against'] or 'ladder (pin)'} | {row['games']} "
                f"({row['distinct']}) | {_fmt(row['recorded'])} | {_fmt(row['pair'])}"
                f"{'' if same else ' (DIFFERS)'} | {_fmt(row['opening'])} | {half[0]:.0f} / {half[1]:.0f} | "
                f"{' / '.join(inside)} |"
            )
        for m in reread_check(args.runs / "checks" / variant, levels):
            checks.append(
                f"| {variant} | {m['match']} | {m['games']} ({m['distinct']}) | {m['recorded']:+.0f} | "
                f"{_fmt(m['pair']['gap'])} | {_fmt(m['opening']['gap'])} | {_fmt(m['pair']['claim'])} | "
                f"{_fmt(m['opening']['claim'])} | {'yes' if m['pair']['agrees'] else 'no'} / "
                f"{'yes' if m['opening']['agrees'] else 'no'} |"
            )
        print(f"{variant}: done", file=sys.stderr)
    print("\n".join([*lines, "", *checks, ""]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
