"""A fixed-size match (no early stop) between a candidate profile level with a knob changed and a
reference player spec, one colour-swapped pair per opening of a slice of a deck file.

    PYTHONPATH=. python experiments/2026-12-06-late-move-reductions/match_deck.py \
        --profile experiments/archive/2026-12-03-brazilian-calibration/brazilian-candidate.json \
        --node-budget 200000 --change reductions=true --b engine/profiles/brazilian-start.json:hard \
        --deck experiments/2026-12-06-late-move-reductions/brazilian-engine-test.json \
        --first 1200 --pairs 300 --output test2.json
"""

from __future__ import annotations

import argparse
import json
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pyarrow as pa

from engine.profile import load_profile
from pipeline.games.match import make_batch_spec, play_batch
from pipeline.ratings.scale import match_score, match_score_json

BATCH_PAIRS = 10


def main() -> int:
    import sprt  # this folder's SPRT script: the same candidate construction

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--profile", type=Path, required=True)
    parser.add_argument("--level", default="hard")
    parser.add_argument("--node-budget", type=int, required=True)
    parser.add_argument("--change", action="append", required=True,
                        help="KNOB=JSON value of the candidate (repeatable)")
    parser.add_argument("--b", required=True, help="the reference player spec (FILE.json:LEVEL)")
    parser.add_argument("--deck", type=Path, required=True)
    parser.add_argument("--first", type=int, required=True, help="index of the first opening used")
    parser.add_argument("--pairs", type=int, required=True)
    sprt.add_run_arguments(parser)
    args = parser.parse_args()

    variant = load_profile(args.profile).variant.name
    openings = sprt.deck_openings(args.deck)[args.first : args.first + args.pairs]
    if len(openings) < args.pairs:
        raise SystemExit(f"{args.deck}: only {len(openings)} openings from index {args.first}")
    cand = sprt._player(args.profile, args.level, args.node_budget, sprt._change(args.change), "candidate")
    started = time.time()
    specs = [make_batch_spec(run_id="match", batch_id=b // BATCH_PAIRS, variant=variant, player_a=cand,
                             player_b=args.b, run_seed=args.seed, first_game_id=2 * b,
                             openings=openings[b : b + BATCH_PAIRS], ply_cap=args.ply_cap, first_pair=b)
             for b in range(0, args.pairs, BATCH_PAIRS)]
    with ProcessPoolExecutor(args.workers) as pool:
        tables = list(pool.map(play_batch, specs))
    games = pa.concat_tables(tables)
    b_name = games.column("player_b")[0].as_py()
    score = match_score(games, "candidate", b_name, bootstrap=2000, seed=args.seed)
    depth = sprt.median_max_depth(games, ("candidate", b_name))
    summary = {
        "variant": variant, "profile": str(args.profile), "level": args.level,
        "node_budget": args.node_budget, "change": sprt._change(args.change), "b": args.b,
        "deck": str(args.deck), "first": args.first, "pairs": args.pairs, "match": match_score_json(score),
        "median_max_depth_per_game": depth, "wall_seconds": round(time.time() - started, 1),
        "workers": args.workers,
    }
    args.output.write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    shown = ("match", "median_max_depth_per_game", "wall_seconds")
    print(json.dumps({k: summary[k] for k in shown}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
