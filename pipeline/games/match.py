"""The pure match runner: a batch spec in, an Arrow table of finished games out.

No Ray and no I/O here, so the same function runs in a Ray task, in-process in tests and in
``python -m pipeline match``. Everything random derives from the seeds in the spec, and a game's
seeds derive from the game itself (stage, pairing, pair number, colour), never from the batch
it runs in: a game gives the same row whatever batch or batch size holds it (ids and timing
aside).

Games come in colour-swapped pairs: pair k of a batch plays its opening twice, side A takes
White in the first game (``game_in_pair == 0``) and Black in the second.

``play_batch`` plays the batch's games in one compiled call (:class:`engine.games.GameRunner`);
``play_batch_per_move`` is the same games move by move through ``Player.choose_move`` and a
``Board``, kept as the reference the runner is tested and benchmarked against.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np
import pyarrow as pa

import engine
from engine.board import Board, Outcome
from engine.fen import parse_fen
from engine.games import GameRunner
from engine.variants import Color, get_variant
from pipeline.games.players import Player, ResolvedPlayer, make_player, resolve_player
from pipeline.games.records import GAMES_SCHEMA_VERSION, games_table, winner_score

_SEED_MASK = (1 << 63) - 1  # seeds are stored as int64
_GAME_TAG = 0x67616D65  # "game": spawn-key tag of per-game seeds


@dataclass(frozen=True)
class GameSeeds:
    """Seeds of one game: its root and one per side (A, B)."""

    game: int
    a: int
    b: int


def game_seeds(run_seed: int, pairing: int, pair: int, game_in_pair: int,
               salt: int | None = None) -> GameSeeds:
    """Seeds of the game ``game_in_pair`` of pair ``pair`` of pairing ``pairing`` (SeedSequence spawn key).

    ``salt`` (``pipeline.games.pairings.stage_salt``, a hash of the stage) puts the stage into the
    key, so stages never share seeds; None leaves it out. Batch ids and sizes play no part.
    """
    key = (_GAME_TAG, pairing, pair, game_in_pair) if salt is None else (_GAME_TAG, salt, pairing, pair,
                                                                         game_in_pair)
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
    pairing: int = 0,
    first_pair: int = 0,
    seed_salt: int | None = None,
) -> BatchSpec:
    """A batch of ``2 * len(openings)`` games, pairs ``first_pair ..`` of pairing ``pairing``, with
    their seeds filled in (see ``game_seeds``)."""
    if first_game_id % 2:
        raise ValueError(f"first_game_id must be even (whole pairs), got {first_game_id}")
    seeds = tuple(game_seeds(run_seed, pairing, first_pair + i // 2, i % 2, seed_salt)
                  for i in range(2 * len(openings)))
    return BatchSpec(
        run_id=run_id, batch_id=batch_id, variant=variant, player_a=player_a, player_b=player_b,
        run_seed=run_seed, first_game_id=first_game_id, openings=tuple(openings), seeds=seeds,
        ply_cap=ply_cap,
    )


def part_of(spec: BatchSpec, start: int, stop: int) -> BatchSpec:
    """Pairs ``start .. stop - 1`` of a batch as a batch of their own (same ids and seeds)."""
    if not 0 <= start < stop <= len(spec.openings):
        raise ValueError(f"pairs {start}..{stop} are not a part of a batch of {len(spec.openings)} pairs")
    return dataclasses.replace(spec, first_game_id=spec.first_game_id + 2 * start,
                               openings=spec.openings[start:stop], seeds=spec.seeds[2 * start : 2 * stop])


def play_batch(spec: BatchSpec) -> pa.Table:
    """Play every game of ``spec`` in one compiled call; one row per game, in game-id order."""
    variant = get_variant(spec.variant)
    a, b = resolve_player(spec.player_a, spec.variant), resolve_player(spec.player_b, spec.variant)
    games = [_Game(spec, index) for index in range(spec.n_games)]
    whites = [0 if game.a_color == Color.WHITE else 1 for game in games]
    results = _runner(spec.variant, spec.player_a, spec.player_b, threading.get_ident()).play_all(
        [parse_fen(variant, game.fen) for game in games], whites, [1 - w for w in whites],
        [game.side_seed[Color.WHITE] for game in games], [game.side_seed[Color.BLACK] for game in games],
        spec.ply_cap)
    rows = []
    for game, white, result in zip(games, whites, results, strict=True):
        texts = result.move_texts(variant.algebraic_notation)
        first = result.start.side_to_move == variant.first_player
        plies = [(first == (ply % 2 == 0), text) for ply, text in enumerate(texts)]
        final = result.final
        nodes = {Color.WHITE: result.nodes[0], Color.BLACK: result.nodes[1]}
        rows.append(game.row(
            white_player=(a, b)[white], black_player=(a, b)[1 - white],
            outcome=Outcome(result.winner, result.termination), plies=result.plies,
            movetext=format_movetext(plies), final_fen=result.final_fen(variant.algebraic_notation),
            pieces={Color.WHITE: _count(final.white), Color.BLACK: _count(final.black)},
            moves_by={Color.WHITE: result.moves_by[0], Color.BLACK: result.moves_by[1]},
            decisions={Color.WHITE: result.decisions[0], Color.BLACK: result.decisions[1]},
            nodes=nodes, depth={Color.WHITE: result.max_depth[0], Color.BLACK: result.max_depth[1]},
            seconds=_split_seconds(result.cpu_seconds, nodes),
        ))
    return games_table(rows)


@lru_cache(maxsize=8)
def _runner(variant: str, spec_a: str, spec_b: str, thread: int) -> GameRunner:
    """The game runner of A (player 0) and B (player 1); reused by the tasks of one process. A runner
    holds its search buffers, so each thread (the driver plays trials side by side) has its own."""
    players = [resolve_player(spec_a, variant).game_player, resolve_player(spec_b, variant).game_player]
    return GameRunner(get_variant(variant), players)


def _split_seconds(total: float, nodes: dict[Color, int]) -> dict[Color, float]:
    """A game's CPU seconds shared between the colours by search nodes (evenly if neither searched)."""
    spent = nodes[Color.WHITE] + nodes[Color.BLACK]
    white = total / 2 if spent == 0 else total * nodes[Color.WHITE] / spent
    return {Color.WHITE: white, Color.BLACK: total - white}


def play_batch_per_move(spec: BatchSpec) -> pa.Table:
    """The same games as ``play_batch``, move by move through Board and ``Player.choose_move``."""
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


class _Game:
    """Game ``index`` of a batch: its opening, colours and seeds, and its record."""

    def __init__(self, spec: BatchSpec, index: int) -> None:
        self.spec = spec
        self.index = index
        self.opening_id, self.fen = spec.openings[index // 2]
        self.seeds = spec.seeds[index]
        self.game_in_pair = index % 2
        self.a_color = Color.WHITE if self.game_in_pair == 0 else Color.BLACK
        self.side_seed = {self.a_color: self.seeds.a, self.a_color.opponent: self.seeds.b}

    def row(self, *, white_player: ResolvedPlayer, black_player: ResolvedPlayer, outcome: Outcome,
            plies: int, movetext: str, final_fen: str, pieces: dict[Color, int], moves_by: dict[Color, int],
            decisions: dict[Color, int], nodes: dict[Color, int], depth: dict[Color, int],
            seconds: dict[Color, float]) -> dict[str, Any]:
        """The game's GAMES_SCHEMA row."""
        spec, a_color = self.spec, self.a_color
        winner = outcome.winner
        result_white = 0.5 if winner is None else float(winner == Color.WHITE)
        result = {Color.WHITE: result_white, Color.BLACK: 1.0 - result_white}
        by_colour = {Color.WHITE: white_player, Color.BLACK: black_player}
        game_id = spec.first_game_id + self.index
        return {
            "schema_version": GAMES_SCHEMA_VERSION,
            "run_id": spec.run_id,
            "batch_id": spec.batch_id,
            "game_id": game_id,
            "pair_id": game_id // 2,
            "game_in_pair": self.game_in_pair,
            "variant": spec.variant,
            "opening_id": self.opening_id,
            "opening_fen": self.fen,
            "player_a": by_colour[a_color].player_id,
            "player_b": by_colour[a_color.opponent].player_id,
            "a_color": a_color.name.lower(),
            "white_player": white_player.player_id,
            "black_player": black_player.player_id,
            "white_profile_hash": white_player.profile_hash,
            "black_profile_hash": black_player.profile_hash,
            "run_seed": spec.run_seed,
            "game_seed": self.seeds.game,
            "white_seed": self.side_seed[Color.WHITE],
            "black_seed": self.side_seed[Color.BLACK],
            "result_pdn": outcome.result,
            "winner": None if winner is None else winner.name.lower(),
            "result_white": result[Color.WHITE],
            "result_black": result[Color.BLACK],
            "result_a": result[a_color],
            "termination": outcome.termination.value,
            "plies": plies,
            "moves": movetext,
            "final_fen": final_fen,
            "white_pieces": pieces[Color.WHITE],
            "black_pieces": pieces[Color.BLACK],
            "winner_score": 0 if winner is None else winner_score(pieces[winner], moves_by[winner]),
            "white_nodes": nodes[Color.WHITE],
            "black_nodes": nodes[Color.BLACK],
            "white_max_depth": depth[Color.WHITE],
            "black_max_depth": depth[Color.BLACK],
            "white_decisions": decisions[Color.WHITE],
            "black_decisions": decisions[Color.BLACK],
            "white_seconds": seconds[Color.WHITE],
            "black_seconds": seconds[Color.BLACK],
            "engine_version": engine.__version__,
        }


def play_game(spec: BatchSpec, index: int) -> dict[str, Any]:
    """Play game ``index`` of the batch move by move and return its record (a GAMES_SCHEMA row)."""
    game = _Game(spec, index)
    resolved = {game.a_color: resolve_player(spec.player_a, spec.variant),
                game.a_color.opponent: resolve_player(spec.player_b, spec.variant)}
    players: dict[Color, Player] = {c: make_player(resolved[c].spec, spec.variant, game.side_seed[c])
                                    for c in (Color.WHITE, Color.BLACK)}
    board = Board(spec.variant, fen=game.fen, ply_cap=spec.ply_cap)
    nodes = {Color.WHITE: 0, Color.BLACK: 0}
    depth = {Color.WHITE: 0, Color.BLACK: 0}
    seconds = {Color.WHITE: 0.0, Color.BLACK: 0.0}
    plies_by = {Color.WHITE: 0, Color.BLACK: 0}
    decisions = {Color.WHITE: 0, Color.BLACK: 0}
    texts: list[tuple[bool, str]] = []
    first_player, algebraic = board.variant.first_player, board.variant.algebraic_notation
    outcome = board.outcome()
    while outcome is None:
        side = board.turn
        decisions[side] += len(board.legal_moves) >= 2
        started = time.perf_counter()
        chosen = players[side].choose_move(board)
        seconds[side] += time.perf_counter() - started
        nodes[side] += chosen.nodes
        depth[side] = max(depth[side], chosen.depth)
        plies_by[side] += 1
        texts.append((side == first_player, board.move_to_text(chosen.move, algebraic)))
        board.push(chosen.move)
        outcome = board.outcome()
    pieces = {c: _count(board.position.pieces(c)) for c in (Color.WHITE, Color.BLACK)}
    return game.row(white_player=resolved[Color.WHITE], black_player=resolved[Color.BLACK], outcome=outcome,
                    plies=board.ply, movetext=format_movetext(texts), final_fen=board.fen(algebraic),
                    pieces=pieces, moves_by=plies_by, decisions=decisions, nodes=nodes, depth=depth,
                    seconds=seconds)
