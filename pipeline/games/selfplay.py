"""The self-play stage: plan deterministic batches from a run config, run them, write Parquet.

The plan is a pure function of the config: batch ``n`` holds games ``n*batch_size ...``, each
pair of games plays one opening (the deck shuffled per cycle by the run seed), and each game's
seeds derive from (run seed, pair number, colour), whatever batch holds it. The driver writes
every batch as soon as it arrives; with ``resume`` it skips batches whose file matches its checksum
record and plays the damaged ones again (the summary names them). A run folder holds one run:
``run.json`` records its config hash and a rerun with a different config is refused.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

import engine
from engine.variants import get_variant
from pipeline.config.run_config import RunConfig
from pipeline.games.executor import Executor
from pipeline.games.match import BatchSpec, make_batch_spec
from pipeline.games.openings import Opening, load_deck
from pipeline.games.players import make_player
from pipeline.games.records import GAMES_SCHEMA_VERSION
from pipeline.games.storage import (
    check_batches,
    read_json,
    remove_stale_temp_files,
    run_dir,
    write_batch,
    write_json,
)
from pipeline.games.storage_fs import StorePath, store_path

_OPENING_STREAM = 0x6F70656E  # spawn-key tag of the opening shuffle ("open")


class RunFolderError(ValueError):
    """The output folder holds another run, or a run that resume was not asked to continue."""


def opening_schedule(deck: list[Opening], run_seed: int, n_pairs: int) -> list[Opening]:
    """Opening of each pair: the deck in a seeded random order, reshuffled every full cycle."""
    if not deck:
        raise ValueError("empty opening deck")
    order: list[Opening] = []
    cycle = 0
    while len(order) < n_pairs:
        rng = np.random.default_rng(np.random.SeedSequence(run_seed, spawn_key=(_OPENING_STREAM, cycle)))
        order.extend(deck[i] for i in rng.permutation(len(deck)))
        cycle += 1
    return order[:n_pairs]


def plan_batches(config: RunConfig) -> list[BatchSpec]:
    """Every batch of the run, in batch-id order."""
    run, sp = config.run, config.selfplay

    variant = get_variant(sp.variant).name
    deck = load_deck(variant, include_lost=sp.include_lost_openings, part=sp.deck_part)
    schedule = opening_schedule(deck, run.seed, sp.games // 2)
    specs = []
    for batch_id, first in enumerate(range(0, sp.games, sp.batch_size)):
        pairs = schedule[first // 2 : (first + min(sp.batch_size, sp.games - first)) // 2]
        specs.append(
            make_batch_spec(
                run_id=config.run_id, batch_id=batch_id, variant=variant,
                player_a=sp.player_a, player_b=sp.player_b, run_seed=run.seed,
                first_game_id=first, openings=[(o.id, o.fen) for o in pairs], ply_cap=sp.ply_cap,
                first_pair=first // 2,
            )
        )
    return specs


@dataclass
class SelfplaySummary:
    """What a run did: counts from side A's view, speed and where the data is."""

    run_id: str
    output: StorePath
    games_total: int
    games_played: int = 0
    batches_skipped: int = 0
    games_resumed: int = 0
    wins_a: int = 0
    draws: int = 0
    losses_a: int = 0
    seconds: float = 0.0
    executor: str = ""
    terminations: dict[str, int] = field(default_factory=dict)
    damaged: list[str] = field(default_factory=list)  # batch files found damaged and played again

    @property
    def games_per_second(self) -> float:
        return self.games_played / self.seconds if self.seconds > 0 else 0.0


def manifest(config: RunConfig) -> dict[str, Any]:

    return {
        "run_id": config.run_id,
        "config_hash": config.config_hash(),
        "config": config.to_dict(),
        "games_schema_version": GAMES_SCHEMA_VERSION,
        "engine_version": engine.__version__,
    }


def check_run_folder(config: RunConfig, resume: bool) -> None:
    """Refuse a folder holding another config's run, or this run's results without ``resume``."""

    folder = run_dir(config.run.output_root, config.run_id)
    try:
        existing = read_json(folder / "run.json")
    except FileNotFoundError:
        existing = None
    if existing is not None:
        if existing.get("config_hash") != config.config_hash():
            raise RunFolderError(
                f"{folder} holds run {existing.get('run_id')!r} made from another config "
                f"(hash {str(existing.get('config_hash'))[:12]}); choose another output or run id"
            )
        if not resume:
            raise RunFolderError(f"{folder} already has results of this run; pass --resume to continue it")


def check_can_run(config: RunConfig, resume: bool) -> list[BatchSpec]:
    """Everything that can fail on bad input, before any worker starts: plan, players, folder."""
    preflight(config)  # bad players fail before any planning
    specs = plan_batches(config)
    check_run_folder(config, resume)
    return specs


def _prepare_run_folder(config: RunConfig, output_root: StorePath) -> None:
    """Create the run folder, drop a killed driver's temp files, (re)write run.json."""
    folder = run_dir(output_root, config.run_id)
    folder.mkdir(parents=True, exist_ok=True)
    remove_stale_temp_files(output_root, config.run_id)
    write_json(folder / "run.json", manifest(config))


def preflight(config: RunConfig) -> None:
    """Build both players once in the driver, so a bad spec or profile fails here, not in a task."""
    sp = config.selfplay
    for spec in (sp.player_a, sp.player_b):
        make_player(spec, sp.variant, seed=0)


def run_selfplay(
    config: RunConfig,
    executor: Executor,
    *,
    resume: bool = False,
    on_start: Callable[[SelfplaySummary], None] | None = None,
    on_batch: Callable[[BatchSpec, SelfplaySummary], None] | None = None,
) -> SelfplaySummary:
    """Play every unfinished batch of the run and write each one as it arrives."""
    output_root = store_path(config.run.output_root)
    specs = check_can_run(config, resume)
    _prepare_run_folder(config, output_root)
    variant = specs[0].variant
    expected = {s.batch_id: s.n_games for s in specs}
    check = check_batches(output_root, config.run_id, variant, expected_rows=expected) if resume else None
    done = set(check.finished) if check is not None else set()
    todo = [s for s in specs if s.batch_id not in done]
    summary = SelfplaySummary(
        run_id=config.run_id, output=run_dir(output_root, config.run_id),
        games_total=sum(expected.values()), batches_skipped=len(done), executor=executor.description,
        games_resumed=sum(expected[b] for b in done),
        damaged=[] if check is None else [d.describe(output_root / config.run_id) for d in check.damaged],
    )
    if on_start is not None:
        on_start(summary)
    started = time.perf_counter()
    for spec, table in executor.run(todo):
        write_batch(table, output_root, config.run_id, variant, spec.batch_id, spec=spec)
        results = table.column("result_a").to_pylist()
        summary.games_played += table.num_rows
        summary.wins_a += sum(r == 1.0 for r in results)
        summary.draws += sum(r == 0.5 for r in results)
        summary.losses_a += sum(r == 0.0 for r in results)
        for reason in table.column("termination").to_pylist():
            summary.terminations[reason] = summary.terminations.get(reason, 0) + 1
        summary.seconds = time.perf_counter() - started
        if on_batch is not None:
            on_batch(spec, summary)
    summary.seconds = time.perf_counter() - started
    return summary
