"""Verbs ``selfplay`` and ``match``: play games from the command line and report them.

Each handler imports the game stages when it runs (they pull in the engine's compiled kernels,
pyarrow and scipy), so ``--help`` and a bad argument answer at once.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

import numpy as np

from pipeline.cli.common import EXIT_FAILURE, EXIT_OK, command

# ---- selfplay ---------------------------------------------------------------------------------


def _selfplay_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("config", help="run config (TOML), e.g. configs/runs/smoke.toml")
    p.add_argument("--output", help="output root: a folder or a pyarrow filesystem URI such as "
                                    "s3://BUCKET/runs (overrides [run].output_root)")
    p.add_argument("--resume", action="store_true",
                   help="skip batches already written (checked against their checksums; damaged ones are "
                        "played again)")
    p.add_argument("--address", help="Ray cluster address (overrides [ray].address and RAY_ADDRESS)")
    p.add_argument("--in-process", action="store_true", help="play in this process, without Ray")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")


@command("selfplay", "play the [selfplay] games of a run config and write them to Parquet", _selfplay_args)
def _selfplay(args: argparse.Namespace) -> int:
    from tqdm import tqdm  # heavy, see docstring

    from pipeline.config.placement import check_cluster_locations, placement
    from pipeline.config.run_config import load_config
    from pipeline.games.executor import RayOptions, make_executor
    from pipeline.games.selfplay import SelfplaySummary, check_can_run, run_selfplay
    from pipeline.games.storage import read_games

    config = load_config(args.config)
    config.selfplay  # noqa: B018 - fail early (exit 2) when the section is missing
    if args.output:
        config = config.replace("run", output_root=args.output)
    if args.address:
        config = config.replace("ray", address=args.address)
    ray_cfg = config.ray
    where = placement(config, in_process_flag=args.in_process, address_flag=args.address)
    check_cluster_locations(config, tracking=False, studies=False)
    options = RayOptions(
        address=where.address, num_cpus=ray_cfg.num_cpus, node_ip_address=ray_cfg.node_ip_address,
        max_in_flight=config.selfplay.max_in_flight,
    )
    check_can_run(config, args.resume)  # bad input fails here, before Ray starts
    executor = make_executor(in_process=where.in_process, options=options)
    bar: Any = None
    try:

        def start(summary: SelfplaySummary) -> None:
            nonlocal bar
            bar = tqdm(total=summary.games_total, initial=summary.games_resumed, unit="game", file=sys.stderr,
                       disable=args.no_progress, dynamic_ncols=True, desc=summary.run_id)

        def progress(spec: Any, summary: SelfplaySummary) -> None:
            bar.update(spec.n_games)

        summary = run_selfplay(config, executor, resume=args.resume, on_start=start, on_batch=progress)
    finally:
        if bar is not None:
            bar.close()
        executor.close()
    by_node = ", ".join(f"{node}: {n}" for node, n in sorted(executor.batches_by_node.items()))
    if summary.damaged:
        print(f"played again {len(summary.damaged)} damaged batch file(s): {', '.join(summary.damaged)}",
              file=sys.stderr)
    games = read_games(config.run.output_root, config.run_id, columns=["game_id", "result_a"])
    results = games.column("result_a").to_pylist()
    wins, draws = sum(r == 1.0 for r in results), sum(r == 0.5 for r in results)
    print(
        f"run {summary.run_id}: {games.num_rows} games in the dataset "
        f"(A {config.selfplay.player_a} vs B {config.selfplay.player_b}: "
        f"W/D/L {wins}/{draws}/{len(results) - wins - draws} from A's side); "
        f"played {summary.games_played} now, {summary.batches_skipped} batches resumed, "
        f"{summary.games_per_second:.1f} games/s on {summary.executor}; output {summary.output}"
        + (f"; batches per node: {by_node}" if by_node else "")
    )
    return EXIT_OK if games.num_rows == summary.games_total else EXIT_FAILURE


# ---- match ------------------------------------------------------------------------------------


def _match_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--variant", required=True, help="variant name")
    p.add_argument("--a", required=True, metavar="SPEC", help="player A: random, LEVEL or FILE.json:LEVEL")
    p.add_argument("--b", required=True, metavar="SPEC", help="player B")
    p.add_argument("--games", required=True, type=int, help="number of games (even: colour-swapped pairs)")
    p.add_argument("--seed", type=int, default=0, help="master seed (default 0)")
    p.add_argument("--ply-cap", type=int, default=400, help="adjudicated draw after this many plies")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    p.add_argument("--ray", action="store_true", help="fan out on Ray (RAY_ADDRESS or a private local Ray)")


#: Bootstrap resamples (over openings) behind the match's Elo CI; seeded by the match's --seed.
MATCH_BOOTSTRAP = 1000


@command("match", "play a paired match between two players and report its score-based Elo with a 95% CI "
                  "(bootstrap over openings)", _match_args)
def _match(args: argparse.Namespace) -> int:
    # heavy, see docstring
    import pyarrow as pa

    from pipeline.config.run_config import parse_config
    from pipeline.games.executor import RayOptions, make_executor
    from pipeline.games.players import player_source
    from pipeline.games.selfplay import plan_batches, preflight
    from pipeline.ratings import pentanomial_counts, pentanomial_stats
    from pipeline.ratings.scale import match_score, match_score_json

    config = parse_config(
        {
            "run": {"name": "match", "seed": args.seed},
            "selfplay": {
                "variant": args.variant, "player_a": args.a, "player_b": args.b, "games": args.games,
                "ply_cap": args.ply_cap, "batch_size": min(20, args.games) if args.games > 0 else 2,
            },
        },
        source="command line",
    )
    preflight(config)  # bad players fail before any planning
    variant = config.selfplay.variant
    sources = {side: player_source(spec, variant) for side, spec in (("a", args.a), ("b", args.b))}
    specs = plan_batches(config)
    executor = make_executor(in_process=not args.ray, options=RayOptions())
    tables: list[pa.Table] = []
    try:
        for _, table in executor.run(specs):
            tables.append(table.select(["pair_id", "result_a", "white_nodes", "black_nodes", "white_seconds",
                                        "black_seconds", "opening_id", "player_a", "player_b", "white_player",
                                        "black_player", "moves"]))
    finally:
        executor.close()
    games = pa.concat_tables(tables)
    rows = games.select(["pair_id", "result_a", "white_nodes", "black_nodes", "white_seconds",
                         "black_seconds"]).to_pylist()
    # score-based Elo of side A, CI from a bootstrap over openings (replays of an opening come together)
    scored = match_score(games, games.column("player_a")[0].as_py(), games.column("player_b")[0].as_py(),
                         bootstrap=MATCH_BOOTSTRAP, seed=args.seed)
    pairs: dict[int, float] = {}
    for row in rows:
        pairs[row["pair_id"]] = pairs.get(row["pair_id"], 0.0) + row["result_a"]
    counts = [int(c) for c in pentanomial_counts(np.array([pairs[k] for k in sorted(pairs)], dtype=float))]
    stats = pentanomial_stats(counts, level=0.95)
    wins = sum(r["result_a"] == 1.0 for r in rows)
    draws = sum(r["result_a"] == 0.5 for r in rows)
    report = {
        "variant": config.selfplay.variant, "a": args.a, "b": args.b, "games": len(rows), "seed": args.seed,
        "wins": wins, "draws": draws, "losses": len(rows) - wins - draws,
        **match_score_json(scored),
        "los": stats.los,
        "pairs": dict(zip(["0", "0.5", "1", "1.5", "2"], counts, strict=True)),
        # search nodes of both sides (as engine bench counts them) and the games' CPU seconds
        "nodes": sum(r["white_nodes"] + r["black_nodes"] for r in rows),
        "cpu_seconds": sum(r["white_seconds"] + r["black_seconds"] for r in rows),
        "players": {side: source.to_json() for side, source in sources.items()},
    }
    if args.json:
        print(json.dumps(report, allow_nan=False))
    else:
        print(
            f"{args.a} vs {args.b} ({report['variant']}, {len(rows)} games, seed {args.seed}): "
            f"W/D/L {wins}/{draws}/{report['losses']} for A, score {scored.score.value:.3f}, "
            f"Elo {scored.elo.value:+.0f} [{scored.elo.ci_low:+.0f}, {scored.elo.ci_high:+.0f}] "
            f"(95 %, bootstrap over {scored.openings} openings; {scored.distinct_games} distinct games), "
            f"LOS {stats.los:.1%}, pairs 0/0.5/1/1.5/2: {'/'.join(str(c) for c in counts)}"
        )
        for side, source in sources.items():
            print(f"  {side.upper()}: {source.describe()}")
    return EXIT_OK
