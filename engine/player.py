"""Player: picks a move for a board at one difficulty level (search plus weakening).

Pure and deterministic: no I/O, and every random choice comes from a generator seeded by
(seed, ply count, position) through ``numpy.random.SeedSequence``, so replaying a game with
the same seed gives the same moves, and one Player can serve many games. The search itself
is deterministic too (node budget, no clock; its transposition table is generation-tagged,
so earlier searches do not leak into later ones).

Weakening, in order: with probability ``random_move_prob`` a uniformly random legal move
(no search); otherwise search, and when any of ``noise_sigma``, ``top_k``, ``temperature``
is set, take exact root scores, add N(0, sigma) noise, keep the ``top_k`` best, and choose by
softmax(score / temperature) (or the best, ties to the first in generator order).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from engine.errors import DraughtsError
from engine.move import Move
from engine.position import Position
from engine.profile import LevelProfile

if TYPE_CHECKING:
    from engine.board import Board
    from engine.kernel.movegen import RawMove
    from engine.search import Searcher

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


def pick_weakened(
    scores: Sequence[int], noise_sigma: float, top_k: int, temperature: float, rng: np.random.Generator
) -> int:
    """Index of the move chosen from exact root ``scores`` by noise, top-k and softmax."""
    values: npt.NDArray[np.float64] = np.asarray(scores, dtype=np.float64)
    if noise_sigma > 0:
        values = values + rng.normal(0.0, noise_sigma, size=values.shape[0])
    keep = np.arange(values.shape[0])
    if 0 < top_k < values.shape[0]:
        keep = np.sort(np.argsort(-values, kind="stable")[:top_k])
    kept = values[keep]
    if temperature > 0:
        logits = (kept - kept.max()) / temperature
        weights = np.exp(logits)
        return int(keep[int(rng.choice(keep.shape[0], p=weights / weights.sum()))])
    return int(keep[int(np.argmax(kept))])


class Player:
    """Plays one :class:`~engine.profile.LevelProfile`; reusable across moves and games."""

    def __init__(self, level: LevelProfile, seed: int = 0) -> None:
        if not isinstance(level, LevelProfile):
            raise DraughtsError(f"Player needs a LevelProfile, got {level!r}")
        if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
            raise DraughtsError(f"seed must be a non-negative integer, got {seed!r}")
        self.level = level
        self.seed = seed
        self._searcher: Searcher | None = None

    @property
    def profile_hash(self) -> str:
        return self.level.profile_hash()

    def rng_for(self, board: Board) -> np.random.Generator:
        """The generator of this move: a function of the seed, the ply count and the position."""
        position = board.position
        entropy = [self.seed, board.ply, position.white, position.black, position.kings,
                   int(position.side_to_move)]
        return np.random.default_rng(np.random.SeedSequence(entropy))

    def searcher(self) -> Searcher:
        """The level's searcher, built on first use (compiles/loads the kernel)."""
        if self._searcher is None:
            from engine.search import Searcher

            lv = self.level
            self._searcher = Searcher(lv.variant, lv.weight_array(), lv.max_depth, lv.node_budget,
                                      lv.quiescence, lv.tt_log2)
        return self._searcher

    def choose_move(self, board: Board) -> ChosenMove:
        """The move this level plays in ``board`` (DraughtsError if there is none)."""
        started = time.perf_counter()
        if board.variant != self.level.variant:
            raise DraughtsError(
                f"a {self.level.variant.name} level cannot play a {board.variant.name} board {board.fen()!r}"
            )
        moves = board.legal_moves
        if not moves:
            raise DraughtsError(f"no legal move in position {board.fen()!r}")
        if len(moves) == 1:
            return ChosenMove(moves[0], None, 0, 0, time.perf_counter() - started, False, (moves[0],))
        lv = self.level
        rng = self.rng_for(board)
        if lv.random_move_prob > 0 and rng.random() < lv.random_move_prob:
            move = moves[int(rng.integers(len(moves)))]
            return ChosenMove(move, None, 0, 0, time.perf_counter() - started, True, (move,))
        weaken = lv.noise_sigma > 0 or lv.top_k > 0 or lv.temperature > 0
        result = self.searcher().search(board.position, game_history(board), board.quiet_plies,
                                        exact_root=weaken, endgame=board.endgame_count)
        if result.best is None:
            raise RuntimeError(f"search found no move in {board.fen()!r} although moves exist")
        chosen, score = result.best, result.score
        if weaken and result.root_scores is not None:
            index = pick_weakened(result.root_scores, lv.noise_sigma, lv.top_k, lv.temperature, rng)
            chosen, score = result.root_moves[index], result.root_scores[index]
        with_path = board.variant.distinct_capture_orders
        if chosen != result.best:
            pv_raw: tuple[RawMove, ...] = (chosen,)
        else:
            pv_raw = result.pv or (chosen,)
        pv = self._to_moves(board, pv_raw, with_path)
        return ChosenMove(pv[0], int(score), result.depth, result.nodes,
                          time.perf_counter() - started, False, pv)

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
