"""Ray tasks sized by work: how many games one task plays, from what the players declare.

A batch (one Parquet file, one seed scope) has a fixed game count from the config, but its cost
ranges over orders of magnitude between a random player and a deep search. Tasks are therefore
planned from an estimate of each game's search: consecutive batches are packed into one task
until it holds at least :data:`TARGET_SECONDS` of work and :data:`MIN_TASK_GAMES` games, and a
batch of twice the target or more is split by pairs into parts of at least the target (the
driver joins the parts before it writes the batch's file); a stage's short last task joins the
one before, so no task but a stage's only one holds less than the target. The estimate uses only
the players' declared limits (node budget, depth, random-move rate) and nominal constants, never
a speed measured at run time, so the task plan and the file layout are the same on every
machine; the constants are fitted to measured CPU seconds of real tasks
(experiments/2026-12-05-cluster-stage-tasks), so a nominal second is about a CPU-second of the
machine they were measured on. Games are seeded by their own identity, so how they are grouped
never changes a result.
"""

from __future__ import annotations

import functools
import hashlib
import itertools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from engine.games import GamePlayer
from engine.variants import get_variant
from pipeline.games.match import BatchSpec, part_of
from pipeline.games.players import resolve_player

#: nominal search speed (nodes per CPU-second) by board size, and bookkeeping per ply: fixed
#: constants fitted to measured tasks (module docstring; 8x8 measured 6.35 M nodes and 2.9 us a
#: ply, 10x10 keeps the bench's ratio of the two board sizes), never measured at run time
NOMINAL_NODES_PER_SECOND = {8: 6_000_000.0, 10: 5_000_000.0}
SECONDS_PER_PLY = 3e-6
#: a search to depth d without a binding budget visits about NODES_PER_DEPTH_BASE * 3**d nodes
NODES_PER_DEPTH_BASE = 5.0
#: a search bound by its node budget stops at the last iteration that fits: it visits about this
#: share of the budget (151,842 of 200,000 nodes a move measured on the quickstart's validation)
BUDGET_USE = 0.75
EXPECTED_PLIES = 120  # a typical game's length, capped by the ply cap
#: nominal CPU-seconds a task holds at least (the default of ``[job] task_seconds``): a lopsided
#: pairing's games end early and ran at 0.38 of their estimate, so 14 keeps such a task at 5 s
TARGET_SECONDS = 14.0
#: games a task holds at least: a task of a few dear games varies with their lengths by a factor
#: of two or more (tasks of 2 to 6 such games measured 0.22 to 0.95 of their estimates)
MIN_TASK_GAMES = 8


def nodes_per_move(player: GamePlayer, budget_use: float = 1.0) -> float:
    """Expected search nodes of one decision: the depth bound, or the budget (times
    ``budget_use``) where it binds, less random moves."""
    depth_bound = NODES_PER_DEPTH_BASE * 3.0 ** player.max_depth
    full = depth_bound if depth_bound <= player.node_budget else budget_use * player.node_budget
    return full * (1.0 - player.weakening.random_move_prob)


def expected_nodes(player: GamePlayer) -> float:
    """Nodes one decision is expected to visit: a binding budget used to :data:`BUDGET_USE`."""
    return nodes_per_move(player, BUDGET_USE)


def batch_seconds(spec: BatchSpec) -> float:
    """Estimated CPU seconds of a whole batch (both colours of each of its openings)."""
    return 2 * len(spec.openings) * game_seconds(spec)


@functools.lru_cache(maxsize=4096)
def pair_nodes(variant: str, player_a: str, player_b: str) -> tuple[float, float]:
    """Both players' expected nodes per decision, the smaller first (a pairing's shape)."""
    a = expected_nodes(resolve_player(player_a, variant).game_player)
    b = expected_nodes(resolve_player(player_b, variant).game_player)
    return (min(a, b), max(a, b))


def game_seconds(spec: BatchSpec) -> float:
    """Estimated CPU seconds of one game of ``spec`` (both sides)."""
    return pair_game_seconds(spec.variant, spec.player_a, spec.player_b, spec.ply_cap)


@functools.lru_cache(maxsize=4096)
def pair_game_seconds(variant: str, player_a: str, player_b: str, ply_cap: int) -> float:
    """Estimated CPU seconds of one game between two player specs (both sides)."""
    plies = min(ply_cap, EXPECTED_PLIES)
    return pair_search_seconds(variant, player_a, player_b, ply_cap) + plies * SECONDS_PER_PLY


def pair_search_seconds(variant: str, player_a: str, player_b: str, ply_cap: int) -> float:
    """The searches' part of :func:`pair_game_seconds` (what a faster search speed shortens)."""
    plies = min(ply_cap, EXPECTED_PLIES)
    nodes = plies / 2 * sum(pair_nodes(variant, player_a, player_b))
    return nodes / NOMINAL_NODES_PER_SECOND[get_variant(variant).board_size]


@dataclass(frozen=True)
class Part:
    """Pairs ``start .. stop - 1`` of a batch."""

    spec: BatchSpec
    start: int
    stop: int

    @property
    def whole(self) -> bool:
        return self.start == 0 and self.stop == len(self.spec.openings)

    def sub_spec(self) -> BatchSpec:
        """The part as a batch of its own (same seeds and game ids as in the whole batch)."""
        return part_of(self.spec, self.start, self.stop)


Task = tuple[Part, ...]


def plan_tasks(specs: Iterable[BatchSpec], target: float = TARGET_SECONDS) -> list[Task]:
    """Group batches (in order) into tasks of at least ``target`` nominal seconds and
    :data:`MIN_TASK_GAMES` games; split a batch of twice the target or more into evenly sized
    parts of at least that much, the batches packed so far packing on after them. A stage's last
    task short of either joins the one before, so only a stage's only task can hold less."""
    if not target > 0:
        raise ValueError(f"task target of {target!r} seconds: must be above 0")
    min_pairs = -(-MIN_TASK_GAMES // 2)
    tasks: list[Task] = []
    current: list[Part] = []
    load, games = 0.0, 0
    for spec in specs:
        pairs = len(spec.openings)
        per_pair = 2 * game_seconds(spec)
        count = min(pairs // min_pairs, int(pairs * per_pair // target))
        if count >= 2:
            # parts of sizes within one pair of each other, each of at least the target and the
            # least game count, so no part is a short remainder
            bounds = [pairs * i // count for i in range(count + 1)]
            tasks.extend((Part(spec, a, b),) for a, b in itertools.pairwise(bounds))
            continue
        current.append(Part(spec, 0, pairs))
        load += pairs * per_pair
        games += 2 * pairs
        if load >= target and games >= MIN_TASK_GAMES:
            tasks.append(tuple(current))
            current, load, games = [], 0.0, 0
    if current:
        if tasks:
            tasks[-1] = (*tasks[-1], *current)  # no short last task: it joins the one before
        else:
            tasks.append(tuple(current))
    return tasks


def probe_first(tasks: Sequence[Task]) -> list[Task]:
    """``tasks`` with the first task of every player pairing moved to the front (in their order),
    then the rest, dearest first (ties in their order). Every pairing then has a finished task
    early, so the job's ETA measures each pairing's speed, and a fit of a stage's games so far
    rates every player, long before its last pairings would start; and the stage's last round
    holds its cheapest tasks (longest-first scheduling, which shortens the tail on many slots;
    no gain was measured on the 2-slot quickstart).
    Which task runs when never changes a game."""
    seen: set[tuple[str, str]] = set()
    first: list[Task] = []
    rest: list[Task] = []
    for task in tasks:
        pairings = {(p.spec.player_a, p.spec.player_b) for p in task}
        if pairings - seen:
            first.append(task)
            seen |= pairings
        else:
            rest.append(task)
    rest.sort(key=task_seconds, reverse=True)  # stable: equal estimates keep their order
    return first + rest


def pair_key(player_a: str, player_b: str) -> str:
    """A short name of a player pairing (the specs can be long inline JSON)."""
    return hashlib.sha1(f"{player_a}\n{player_b}".encode()).hexdigest()[:12]


def task_seconds(task: Sequence[Part]) -> float:
    """Estimated CPU seconds of a task."""
    return sum(2 * (p.stop - p.start) * game_seconds(p.spec) for p in task)
