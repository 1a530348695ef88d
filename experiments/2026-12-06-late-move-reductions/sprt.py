"""SPRT of a search change at equal nodes per move: one profile level with the change against the
same level without it, one colour-swapped pair per opening of a deck, until the test decides.

    PYTHONPATH=. python experiments/2026-12-06-late-move-reductions/sprt.py \
        --profile experiments/archive/2026-12-03-brazilian-calibration/brazilian-candidate.json \
        --deck experiments/2026-12-06-late-move-reductions/brazilian-engine-test.json \
        --node-budget 50000 --change reductions=true --output out.json

Both players are noiseless, so a pair per opening is the unit (a second pair on the same opening
would replay the first). The test is checked after every chunk of pairs, on whole chunks in
opening order, so its verdict does not depend on how many processes played them.
"""

from __future__ import annotations

import argparse
import json
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from engine.profile import load_profile
from pipeline.games.match import make_batch_spec, play_batch
from pipeline.ratings.pairs import pentanomial_counts
from pipeline.ratings.scale import match_score, match_score_json
from pipeline.ratings.sprt import sprt

BATCH_PAIRS = 10


def _player(profile: Path, level: str, node_budget: int, change: dict[str, Any], name: str) -> str:
    doc = load_profile(profile).levels[level].to_json()
    doc["search"]["node_budget"] = node_budget
    for key, value in change.items():
        group = "search" if key in doc["search"] else "weakening"
        doc[group][key] = value
    return f"inline:{name}:{json.dumps(doc, sort_keys=True)}"


def deck_openings(path: Path) -> list[tuple[str, str]]:
    """(id, FEN) of every opening of a deck file not flagged lost, in file order."""
    deck = json.loads(path.read_text(encoding="utf-8"))
    return [(o["id"], o["fen"]) for o in deck["openings"] if not o.get("lost", False)]


def median_max_depth(games: pa.Table, names: tuple[str, ...]) -> dict[str, float]:
    """Per player, the median over its games of the deepest iteration it completed."""
    depth = {}
    for name in names:
        cols = []
        for colour in ("white", "black"):
            mask = np.asarray(games.column(f"{colour}_player").to_pylist()) == name
            cols.append(np.asarray(games.column(f"{colour}_max_depth").to_pylist())[mask])
        depth[name] = float(np.median(np.concatenate(cols)))
    return depth


def add_run_arguments(parser: argparse.ArgumentParser) -> None:
    """The options every script of this folder takes: ply cap, seed, worker processes, output."""
    parser.add_argument("--ply-cap", type=int, default=200)
    parser.add_argument("--seed", type=int, default=20261206)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--output", type=Path, required=True)


def _change(texts: list[str] | None) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for text in texts or []:
        key, _, value = text.partition("=")
        out[key] = json.loads(value)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--profile", type=Path, required=True)
    parser.add_argument("--level", default="hard")
    parser.add_argument("--deck", type=Path, required=True)
    parser.add_argument("--node-budget", type=int, required=True)
    parser.add_argument("--change", action="append", required=True,
                        help="KNOB=JSON value of the candidate (repeatable)")
    parser.add_argument("--base", action="append", default=None,
                        help="KNOB=JSON value of the baseline (repeatable; default: as in the profile)")
    parser.add_argument("--elo0", type=float, default=0.0)
    parser.add_argument("--elo1", type=float, default=25.0)
    parser.add_argument("--max-pairs", type=int, default=1200)
    parser.add_argument("--chunk", type=int, default=40)
    parser.add_argument("--first", type=int, default=0, help="skip the deck's first FIRST openings")
    add_run_arguments(parser)
    args = parser.parse_args()

    variant = load_profile(args.profile).variant.name
    openings = deck_openings(args.deck)[args.first :]
    if len(openings) < args.max_pairs:
        raise SystemExit(f"{args.deck}: {len(openings)} openings after the first {args.first}, fewer than "
                         f"--max-pairs {args.max_pairs}")
    change = _change(args.change)
    base = _change(args.base)
    cand = _player(args.profile, args.level, args.node_budget, change, "candidate")
    baseline = _player(args.profile, args.level, args.node_budget, base, "baseline")

    tables: list[pa.Table] = []
    trail: list[dict[str, Any]] = []
    started = time.time()
    result = None
    with ProcessPoolExecutor(args.workers) as pool:
        for first in range(0, args.max_pairs, args.chunk):
            specs = [make_batch_spec(run_id="sprt", batch_id=b // BATCH_PAIRS, variant=variant,
                                     player_a=cand, player_b=baseline, run_seed=args.seed,
                                     first_game_id=2 * b, openings=openings[b : b + BATCH_PAIRS],
                                     ply_cap=args.ply_cap, first_pair=b)
                     for b in range(first, min(first + args.chunk, args.max_pairs), BATCH_PAIRS)]
            tables.extend(pool.map(play_batch, specs))
            games = pa.concat_tables(tables)
            result_a = np.asarray(games.column("result_a").to_pylist(), dtype=np.float64)
            pair_scores = result_a.reshape(-1, 2).sum(axis=1)
            counts = pentanomial_counts(pair_scores)
            result = sprt(counts, args.elo0, args.elo1)
            trail.append({"pairs": int(counts.sum()), "counts": counts.tolist(), "llr": round(result.llr, 3)})
            print(f"{counts.sum():5d} pairs  counts {counts.tolist()}  LLR {result.llr:+.2f} "
                  f"[{result.lower:.2f}, {result.upper:.2f}]  {result.decision.value}  "
                  f"{time.time() - started:.0f} s", flush=True)
            if result.decision.value != "continue":
                break
    assert result is not None
    games = pa.concat_tables(tables)
    score = match_score(games, "candidate", "baseline", bootstrap=2000, seed=args.seed)
    depth = median_max_depth(games, ("candidate", "baseline"))
    summary = {
        "variant": variant, "profile": str(args.profile), "level": args.level,
        "node_budget": args.node_budget,
        "change": change, "base": base, "deck": str(args.deck), "first": args.first,
        "elo0": args.elo0, "elo1": args.elo1,
        "decision": result.decision.value, "llr": result.llr, "bounds": [result.lower, result.upper],
        "pairs": int(result.n), "match": match_score_json(score), "median_max_depth_per_game": depth,
        "wall_seconds": round(time.time() - started, 1), "workers": args.workers, "trail": trail,
    }
    args.output.write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    print(json.dumps({k: summary[k] for k in ("decision", "pairs", "match", "median_max_depth_per_game")},
                     indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
