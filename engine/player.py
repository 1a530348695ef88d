"""Player: picks a move for a board at one difficulty level (search plus weakening).

Pure and deterministic: no I/O, and the decision is the compiled one of
:mod:`engine.kernel.decide` (shared with the batch game runner), whose random draws come from
a counter-based stream keyed by (seed, ply count, position). Replaying a game with the same
seed gives the same moves, and one Player can serve many games. The search itself is
deterministic too (node budget, no clock; its transposition table is generation-tagged, so
earlier searches do not leak into later ones).

With ``tt_keep`` a search also uses what the player's searches at its earlier turns of the same
game stored, as in the batch game runner: each side has its own searcher and table. A move must
still depend only on the game so far and the seed, so the Player keeps a scope per side: the game
(its set-up and moves) up to the last position it decided for that side. Asked at that side's
next turn of that game, it searches on in the scope; asked the same position again, it gives the
same answer; asked anything else (a new game, a move taken back, a game it joins late), it opens
a new scope and first decides that side's earlier positions of the game again, so the table
holds what it would have held.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from engine.errors import DraughtsError
from engine.features import N_FEATURES
from engine.move import Move
from engine.position import Position
from engine.profile import LevelProfile
from engine.variants import Color, Variant

if TYPE_CHECKING:
    from engine.board import Board
    from engine.kernel.movegen import RawMove
    from engine.search import Decision, Searcher, Weakening

MoveKey = tuple[int, int, int, tuple[int, ...]]


@dataclass(frozen=True)
class ChosenMove:
    """The move a Player chose and what it cost; ``score`` is None when nothing was searched."""

    move: Move
    score: int | None
    depth: int
    nodes: int
    seconds: float
    random: bool  # True when the random-move knob fired
    pv: tuple[Move, ...]


def _continues(scope: _Scope, start: str, moves: tuple[Move, ...]) -> bool:
    """Whether the game ``moves`` from ``start`` goes on from the scope's, to a later turn of the
    same side."""
    done = len(scope.moves)
    return (scope.start == start and len(moves) > done and (len(moves) - done) % 2 == 0
            and moves[:done] == scope.moves)


def _raw_key(raw: RawMove, with_path: bool) -> MoveKey:
    return (int(raw.from_bit), int(raw.to_bit), int(raw.captured), tuple(raw.path) if with_path else ())


def _move_key(move: Move, path_bits: tuple[int, ...], with_path: bool) -> MoveKey:
    return (move.from_bit, move.to_bit, move.captured, path_bits if with_path else ())


def game_history(board: Board) -> list[Position]:
    """The game's positions since the last capture or man move, oldest first (not the current)."""
    earlier = board.copy()
    positions: list[Position] = []
    for _ in range(min(board.quiet_plies, board.ply)):
        earlier.pop()
        positions.append(earlier.position)
    positions.reverse()
    return positions


@dataclass(frozen=True)
class _Scope:
    """What a side's ``tt_keep`` searcher's table holds: that side's decisions in one game (set up
    from ``start``) up to the position after ``moves``, where it chose ``chosen``."""

    start: str
    moves: tuple[Move, ...]
    chosen: ChosenMove


class Player:
    """Plays one :class:`~engine.profile.LevelProfile`; reusable across moves and games."""

    def __init__(self, level: LevelProfile, seed: int = 0) -> None:
        if not isinstance(level, LevelProfile):
            raise DraughtsError(f"Player needs a LevelProfile, got {level!r}")
        if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
            raise DraughtsError(f"seed must be a non-negative integer, got {seed!r}")
        self.level = level
        self.seed = seed
        self._searchers: dict[Color, Searcher] = {}
        self._scopes: dict[Color, _Scope] = {}

    @property
    def profile_hash(self) -> str:
        return self.level.profile_hash()

    def searcher(self, side: Color = Color.WHITE) -> Searcher:
        """The level's searcher, built on first use (compiles/loads the kernel). With ``tt_keep``
        each side has its own (its table holds that side's searches only); else ``side`` is moot."""
        key = side if self.level.tt_keep else Color.WHITE
        if key not in self._searchers:
            from engine.search import Searcher

            lv = self.level
            self._searchers[key] = Searcher(lv.variant, lv.weight_array(), lv.max_depth, lv.node_budget,
                                            lv.quiescence, lv.tt_log2, lv.reductions,
                                            lv.partial_iterations, lv.tt_keep)
        return self._searchers[key]

    @property
    def weakening(self) -> Weakening:
        """The level's weakening knobs, as the decision kernel takes them."""
        from engine.search import Weakening

        lv = self.level
        return Weakening(lv.random_move_prob, lv.noise_sigma, lv.top_k, lv.temperature)

    def choose_move(self, board: Board) -> ChosenMove:
        """The move this level plays in ``board`` (DraughtsError if there is none)."""
        started = time.perf_counter()
        if board.variant != self.level.variant:
            raise DraughtsError(
                f"a {self.level.variant.name} level cannot play a {board.variant.name} board {board.fen()!r}"
            )
        if not self.level.tt_keep:
            return self._choose(board, started)
        side = board.turn
        start, moves = board.start_fen(counters=True), tuple(board.move_stack)
        scope = self._scopes.get(side)
        if scope is not None and (scope.start, scope.moves) == (start, moves):
            return scope.chosen  # the same position again: the same answer
        done = len(scope.moves) if scope is not None and _continues(scope, start, moves) else None
        if done is None:
            self.searcher(side).new_game()
        self._replay(board, len(moves) % 2 if done is None else done + 2)
        chosen = self._choose(board, started)
        self._scopes[side] = _Scope(start, moves, chosen)
        return chosen

    def _decide(self, board: Board) -> Decision:
        return self.searcher(board.turn).decide(board.position, game_history(board), board.quiet_plies,
                                                board.ply, self.seed, self.weakening, board.endgame_count)

    def _choose(self, board: Board, started: float) -> ChosenMove:
        decision = self._decide(board)
        if decision.move is None:
            raise DraughtsError(f"no legal move in position {board.fen()!r}")
        pv = self._to_moves(board, decision.pv, board.variant.distinct_capture_orders)
        return ChosenMove(pv[0], decision.score, decision.depth, decision.nodes,
                          time.perf_counter() - started, decision.random, pv)

    def _replay(self, board: Board, first: int) -> None:
        """Decide again at plies ``first``, ``first + 2``, ... before ``board``'s position (this
        side's earlier turns not yet in the scope), so the table holds what they stored."""
        moves = board.move_stack
        if first >= len(moves):
            return
        walker = board.copy()
        for _ in range(len(moves) - first):
            walker.pop()
        for ply in range(first, len(moves)):
            if (ply - first) % 2 == 0:
                self._decide(walker)  # only what it stores in the table matters
            walker.push(moves[ply])

    def _to_moves(self, board: Board, line: Sequence[RawMove], with_path: bool) -> tuple[Move, ...]:
        """Map the search's raw moves to the Board's legal Moves, walking a copy of the board."""
        walker = board.copy()
        out: list[Move] = []
        for raw in line:
            found = find_move(walker, raw, with_path)
            if found is None:
                if not out:
                    raise RuntimeError(f"search move {raw!r} is not legal in {board.fen()!r}")
                break
            out.append(found)
            walker.push(found)
        return tuple(out)


class RandomMover:
    """A uniformly random legal move each ply, from the same counter-based stream as a Player's."""

    def __init__(self, variant: Variant, seed: int = 0) -> None:
        if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
            raise DraughtsError(f"seed must be a non-negative integer, got {seed!r}")
        self.variant = variant
        self.seed = seed
        self._searcher: Searcher | None = None

    def choose_move(self, board: Board) -> ChosenMove:
        """A random legal move of ``board`` (DraughtsError if there is none)."""
        from engine.search import Searcher, Weakening

        started = time.perf_counter()
        if self._searcher is None:
            self._searcher = Searcher(self.variant, np.zeros(N_FEATURES), 1, 1, False, 4)
        decision = self._searcher.decide(board.position, (), board.quiet_plies, board.ply, self.seed,
                                         Weakening(random_move_prob=1.0))
        if decision.move is None:
            raise DraughtsError(f"no legal move in position {board.fen()!r}")
        move = find_move(board, decision.move, board.variant.distinct_capture_orders)
        if move is None:
            raise RuntimeError(f"random move {decision.move!r} is not legal in {board.fen()!r}")
        return ChosenMove(move, None, 0, 0, time.perf_counter() - started, decision.random, (move,))


def find_move(board: Board, raw: RawMove, with_path: bool) -> Move | None:
    """The legal Move of ``board`` matching a raw move (from, to, captured; path if distinct)."""
    from engine.geometry import geometry

    geo = geometry(board.variant)
    want = _raw_key(raw, with_path)
    for move in board.legal_moves:
        bits = tuple(int(geo.bit(square - 1)) for square in move.path) if with_path else ()
        if _move_key(move, bits, with_path) == want:
            return move
    return None
