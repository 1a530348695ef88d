"""The pure match runner: a batch spec in, an Arrow table of finished games out.

No Ray and no I/O here, so the same function runs in a Ray task, in-process in tests and in
``python -m pipeline match``. Everything random derives from the seeds in the spec, which derive
from (run seed, batch id, game index) through numpy's SeedSequence: a batch replayed anywhere
gives the same games (timing columns aside).

Games come in colour-swapped pairs: pair k of a batch plays its opening twice, side A takes
White in the first game (``game_in_pair == 0``) and Black in the second.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa

import engine
from engine.board import Board
from engine.variants import Color
from pipeline.games.players import Player, make_player
from pipeline.games.records import GAMES_SCHEMA_VERSION, games_table, winner_score

_SEED_MASK = (1 << 63) - 1  # seeds are stored as int64


@dataclass(frozen=True)
class GameSeeds:
    """Seeds of one game: its root and one per side (A, B)."""

    game: int
    a: int
    b: int


def game_seeds(run_seed: int, batch_id: int, game_index: int, salt: int | None = None) -> GameSeeds:
    """Deterministic seeds of game ``game_index`` of batch ``batch_id`` (SeedSequence spawn key).

    ``salt`` (``pipeline.games.pairings.stage_salt``) puts the stage into the spawn key, so two
    stages that both number their batches from 0 get unrelated seeds; None leaves it out.
    """
    key = (batch_id, game_index) if salt is None else (salt, batch_id, game_index)
    seq = np.random.SeedSequence(entropy=run_seed, spawn_key=key)
    game, a, b = (int(x) & _SEED_MASK for x in seq.generate_state(3, dtype=np.uint64))
    return GameSeeds(game=game, a=a, b=b)


@dataclass(frozen=True)
class BatchSpec:
    """Everything a task needs to play one batch: picklable, small, deterministic."""

    run_id: str
    batch_id: int
    variant: str
    player_a: str
    player_b: str
    run_seed: int
    first_game_id: int  # even: batches hold whole pairs
    openings: tuple[tuple[str, str], ...]  # (opening id, FEN) per pair of this batch
    seeds: tuple[GameSeeds, ...]  # one per game
    ply_cap: int

    @property
    def n_games(self) -> int:
        return len(self.seeds)


def make_batch_spec(
    *,
    run_id: str,
    batch_id: int,
    variant: str,
    player_a: str,
    player_b: str,
    run_seed: int,
    first_game_id: int,
    openings: list[tuple[str, str]] | tuple[tuple[str, str], ...],
    ply_cap: int,
    seed_salt: int | None = None,
) -> BatchSpec:
    """A batch of ``2 * len(openings)`` games with its per-game seeds filled in (see ``game_seeds``
    for ``seed_salt``)."""
    if first_game_id % 2:
        raise ValueError(f"first_game_id must be even (whole pairs), got {first_game_id}")
    seeds = tuple(game_seeds(run_seed, batch_id, i, seed_salt) for i in range(2 * len(openings)))
    return BatchSpec(
        run_id=run_id, batch_id=batch_id, variant=variant, player_a=player_a, player_b=player_b,
        run_seed=run_seed, first_game_id=first_game_id, openings=tuple(openings), seeds=seeds,
        ply_cap=ply_cap,
    )


def play_batch(spec: BatchSpec) -> pa.Table:
    """Play every game of ``spec``; one row per game, in game-id order."""
    return games_table(play_game(spec, i) for i in range(spec.n_games))


def _count(bitboard: int) -> int:
    return int(bitboard).bit_count()


def format_movetext(plies: list[tuple[bool, str]]) -> str:
    """PDN move list (``1. 11-15 23-19 2. ...``) from (moved by the first player?, move text) pairs.

    Move numbers count full moves starting with the variant's first player; a game set up with
    the other side to move starts ``1... text``.
    """
    parts: list[str] = []
    number = 1
    for ply, (by_first_player, text) in enumerate(plies):
        if by_first_player:
            parts.append(f"{number}. {text}")
        else:
            parts.append(f"{number}... {text}" if ply == 0 else text)
            number += 1
    return " ".join(parts)


def play_game(spec: BatchSpec, index: int) -> dict[str, Any]:
    """Play game ``index`` of the batch and return its record (a GAMES_SCHEMA row)."""

    opening_id, fen = spec.openings[index // 2]
    seeds = spec.seeds[index]
    game_in_pair = index % 2
    a_color = Color.WHITE if game_in_pair == 0 else Color.BLACK
    player_a = make_player(spec.player_a, spec.variant, seeds.a)
    player_b = make_player(spec.player_b, spec.variant, seeds.b)
    players: dict[Color, Player] = {a_color: player_a, a_color.opponent: player_b}
    side_seed = {a_color: seeds.a, a_color.opponent: seeds.b}

    board = Board(spec.variant, fen=fen, ply_cap=spec.ply_cap)
    nodes = {Color.WHITE: 0, Color.BLACK: 0}
    depth = {Color.WHITE: 0, Color.BLACK: 0}
    seconds = {Color.WHITE: 0.0, Color.BLACK: 0.0}
    plies_by = {Color.WHITE: 0, Color.BLACK: 0}
    texts: list[tuple[bool, str]] = []
    first_player, algebraic = board.variant.first_player, board.variant.algebraic_notation
    outcome = board.outcome()
    while outcome is None:
        side = board.turn
        started = time.perf_counter()
        chosen = players[side].choose_move(board)
        seconds[side] += time.perf_counter() - started
        nodes[side] += chosen.nodes
        depth[side] = max(depth[side], chosen.depth)
        plies_by[side] += 1
        texts.append((side == first_player, board.move_to_text(chosen.move, algebraic)))
        board.push(chosen.move)
        outcome = board.outcome()

    winner = outcome.winner
    result_white = 0.5 if winner is None else float(winner == Color.WHITE)
    result = {Color.WHITE: result_white, Color.BLACK: 1.0 - result_white}
    pieces = {c: _count(board.position.pieces(c)) for c in (Color.WHITE, Color.BLACK)}
    game_id = spec.first_game_id + index
    return {
        "schema_version": GAMES_SCHEMA_VERSION,
        "run_id": spec.run_id,
        "batch_id": spec.batch_id,
        "game_id": game_id,
        "pair_id": game_id // 2,
        "game_in_pair": game_in_pair,
        "variant": spec.variant,
        "opening_id": opening_id,
        "opening_fen": fen,
        "player_a": player_a.player_id,
        "player_b": player_b.player_id,
        "a_color": a_color.name.lower(),
        "white_player": players[Color.WHITE].player_id,
        "black_player": players[Color.BLACK].player_id,
        "white_profile_hash": players[Color.WHITE].profile_hash,
        "black_profile_hash": players[Color.BLACK].profile_hash,
        "run_seed": spec.run_seed,
        "game_seed": seeds.game,
        "white_seed": side_seed[Color.WHITE],
        "black_seed": side_seed[Color.BLACK],
        "result_pdn": outcome.result,
        "winner": None if winner is None else winner.name.lower(),
        "result_white": result[Color.WHITE],
        "result_black": result[Color.BLACK],
        "result_a": result[a_color],
        "termination": outcome.termination.value,
        "plies": board.ply,
        "moves": format_movetext(texts),
        "final_fen": board.fen(algebraic),
        "white_pieces": pieces[Color.WHITE],
        "black_pieces": pieces[Color.BLACK],
        "winner_score": 0 if winner is None else winner_score(pieces[winner], plies_by[winner]),
        "white_nodes": nodes[Color.WHITE],
        "black_nodes": nodes[Color.BLACK],
        "white_max_depth": depth[Color.WHITE],
        "black_max_depth": depth[Color.BLACK],
        "white_seconds": seconds[Color.WHITE],
        "black_seconds": seconds[Color.BLACK],
        "engine_version": engine.__version__,
    }
