"""Python face of the search kernel: a reusable ``Searcher`` and its ``SearchResult``.

A searcher's table is scoped: each search ignores what earlier searches stored unless
``tt_keep`` is on, and then it uses what the searches since the last :meth:`Searcher.new_game`
stored (the game's earlier moves), never anything from before it.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from engine.endgame import EndgameCount, start_count
from engine.features import N_FEATURES
from engine.kernel.decide import (
    K_MAX_DEPTH,
    K_NOISE_SIGMA,
    K_RANDOM_MOVE_PROB,
    K_SIZE,
    K_TEMPERATURE,
    K_TOP_K,
    KIND_RANDOM,
    KIND_SEARCHED,
    O_DEPTH,
    O_INDEX,
    O_KIND,
    O_NODES,
    O_PV_LEN,
    O_SCORE,
    O_SIZE,
    decide,
)
from engine.kernel.movegen import MV_SIZE, RawMove, _raw_move, legal_moves, new_scratch
from engine.kernel.search import (
    C_BUDGET,
    C_GAME_GEN,
    C_GEN,
    C_HASHES,
    C_HIST_BASE,
    C_PARTIAL_ROOT,
    C_PV,
    C_QUIESCENCE,
    C_REDUCTIONS,
    C_SIZE,
    C_TT_KEEP,
    C_TT_MASK,
    MAX_GAME_HISTORY,
    MAX_PLY,
    move_key,
    position_hash,
    search_root,
)
from engine.kernel.tables import kernel_tables
from engine.position import Position, apply_move
from engine.variants import Variant

SEARCH_MOVE_CAPACITY = 512  # moves per ply the search can hold (overflow is an error)


@dataclass(frozen=True)
class SearchResult:
    """What one search found, from the side to move's point of view."""

    best: RawMove | None  # None when the side to move has no legal move
    score: int
    depth: int  # last fully completed iteration
    nodes: int
    seconds: float
    pv: tuple[RawMove, ...]
    root_moves: tuple[RawMove, ...]  # every legal root move, generator order
    root_scores: tuple[int, ...] | None  # exact per-move scores when asked for (exact_root)


@dataclass(frozen=True)
class Weakening:
    """A level's weakening knobs (see :mod:`engine.kernel.decide` for the order they apply in)."""

    random_move_prob: float = 0.0
    noise_sigma: float = 0.0
    top_k: int = 0
    temperature: float = 0.0


def knob_array(max_depth: int, weakening: Weakening) -> npt.NDArray[np.float64]:
    """The decision kernel's knob array of a level."""
    knobs = np.zeros(K_SIZE, dtype=np.float64)
    knobs[K_MAX_DEPTH] = max_depth
    knobs[K_RANDOM_MOVE_PROB] = weakening.random_move_prob
    knobs[K_NOISE_SIGMA] = weakening.noise_sigma
    knobs[K_TOP_K] = weakening.top_k
    knobs[K_TEMPERATURE] = weakening.temperature
    return knobs


@dataclass(frozen=True)
class Decision:
    """A level's move choice: ``move`` None when there is no legal move; ``score`` None unless searched."""

    move: RawMove | None
    score: int | None
    depth: int
    nodes: int
    random: bool  # the random-move knob fired
    pv: tuple[RawMove, ...]  # from the chosen move; just the move unless it was the search's best


class Searcher:
    """Owns the search buffers and transposition table; reuse it across moves."""

    def __init__(self, variant: Variant, weights: npt.NDArray[np.float64], max_depth: int,
                 node_budget: int, quiescence: bool, tt_log2: int, reductions: bool = False,
                 partial_iterations: bool = False, tt_keep: bool = False) -> None:
        if weights.shape != (N_FEATURES,):
            raise ValueError(f"expected {N_FEATURES} weights, got shape {weights.shape}")
        if not 1 <= max_depth <= MAX_PLY // 2:
            raise ValueError(f"max_depth must be 1..{MAX_PLY // 2}, got {max_depth}")
        if node_budget < 1:
            raise ValueError(f"node_budget must be positive, got {node_budget}")
        if not 4 <= tt_log2 <= 26:
            raise ValueError(f"tt_log2 must be 4..26, got {tt_log2}")
        self.variant = variant
        self.max_depth = int(max_depth)
        self._tab = kernel_tables(variant).packed.copy()  # the kernel signature wants writable
        self._weights = np.ascontiguousarray(weights, dtype=np.float64).copy()
        self._moves = np.zeros((MAX_PLY, MV_SIZE, SEARCH_MOVE_CAPACITY), dtype=np.int64)
        self._frames = new_scratch()
        self._tt = np.zeros((1 << tt_log2, 4), dtype=np.int64)
        self._ctx = np.zeros(C_SIZE, dtype=np.int64)
        self._ctx[C_BUDGET] = int(node_budget)
        self._ctx[C_QUIESCENCE] = 1 if quiescence else 0
        self._ctx[C_REDUCTIONS] = 1 if reductions else 0
        self._ctx[C_PARTIAL_ROOT] = 1 if partial_iterations else 0
        self._ctx[C_TT_MASK] = (1 << tt_log2) - 1
        self._ctx[C_TT_KEEP] = 1 if tt_keep else 0
        self.new_game()
        self._root_scores = np.zeros(SEARCH_MOVE_CAPACITY, dtype=np.int64)
        self._result = np.zeros(5, dtype=np.int64)
        self._out = np.zeros(O_SIZE, dtype=np.int64)

    def new_game(self) -> None:
        """Start a new scope: with ``tt_keep`` the next searches use nothing stored before now."""
        self._ctx[C_GAME_GEN] = self._ctx[C_GEN] + 1

    def _load_history(self, history: Sequence[Position]) -> None:
        recent = list(history)[-MAX_GAME_HISTORY:]
        for i, earlier in enumerate(recent):
            self._ctx[C_HASHES + i] = self.position_key(earlier)
        self._ctx[C_HIST_BASE] = len(recent)

    def decide(self, position: Position, history: Sequence[Position], quiet_plies: int, ply: int,
               seed: int, weakening: Weakening, endgame: EndgameCount | None = None) -> Decision:
        """The move a level with these knobs plays (the batch game runner's decision, one move).

        ``endgame``: the game's small-endgame draw count (default: a fresh one, as in :meth:`search`).
        """
        count = start_count(self.variant, position) if endgame is None else endgame
        self._load_history(history)
        n = decide(np.uint64(position.white), np.uint64(position.black), np.uint64(position.kings),
                   int(position.side_to_move), int(quiet_plies), int(count.rule), int(count.left),
                   int(count.road_rule), int(count.road_left), int(ply), int(seed),
                   knob_array(self.max_depth, weakening), self._tab, self._weights, self._moves,
                   self._frames, self._tt, self._ctx, self._root_scores, self._result, self._out)
        if n < 0:
            raise RuntimeError("search move buffer overflow")
        out = [int(x) for x in self._out]
        if out[O_INDEX] < 0:
            return Decision(None, None, 0, 0, False, ())
        move = _raw_move(self._moves[0, :, out[O_INDEX]])
        kind = out[O_KIND]
        pv: tuple[RawMove, ...] = (move,)
        if kind == KIND_SEARCHED and out[O_PV_LEN] > 0:
            pv = self._replay_pv(position, [int(k) for k in self._ctx[C_PV : C_PV + out[O_PV_LEN]]]) or pv
        return Decision(move, out[O_SCORE] if kind == KIND_SEARCHED else None,
                        out[O_DEPTH], out[O_NODES], kind == KIND_RANDOM, pv)

    def position_key(self, position: Position) -> int:
        """The Zobrist hash the search uses for repetition checks."""
        return int(position_hash(np.uint64(position.white), np.uint64(position.black),
                                 np.uint64(position.kings), int(position.side_to_move), self._tab))

    def search(self, position: Position, history: Sequence[Position] = (), quiet_plies: int = 0,
               exact_root: bool = False, endgame: EndgameCount | None = None) -> SearchResult:
        """Search ``position``.

        ``history`` holds the game's earlier positions since the last capture or
        man move (oldest first), so repetitions with the game count as draws;
        ``quiet_plies`` is the current run of plies without capture or man move;
        ``endgame`` the game's small-endgame draw count (default: a fresh one, as if the
        game were set up here).
        """
        count = start_count(self.variant, position) if endgame is None else endgame
        started = time.perf_counter()
        self._load_history(history)
        self._ctx[C_GEN] = (self._ctx[C_GEN] + 1) % (1 << 40)
        n = search_root(np.uint64(position.white), np.uint64(position.black),
                        np.uint64(position.kings), int(position.side_to_move), int(quiet_plies), 0,
                        int(count.rule), int(count.left), int(count.road_rule), int(count.road_left),
                        self.max_depth, bool(exact_root), self._tab,
                        self._weights, self._moves, self._frames, self._tt, self._ctx,
                        self._root_scores, self._result)
        if n < 0:
            raise RuntimeError("search move buffer overflow")
        root = tuple(_raw_move(self._moves[0, :, i]) for i in range(n))
        best_index, score, depth, nodes, pv_len = (int(x) for x in self._result)
        best = root[best_index] if best_index >= 0 else None
        pv = self._replay_pv(position, [int(k) for k in self._ctx[C_PV : C_PV + pv_len]])
        return SearchResult(
            best=best,
            score=score,
            depth=depth,
            nodes=nodes,
            seconds=time.perf_counter() - started,
            pv=pv,
            root_moves=root,
            root_scores=tuple(int(s) for s in self._root_scores[:n]) if exact_root and n else None,
        )

    def _replay_pv(self, position: Position, keys: list[int]) -> tuple[RawMove, ...]:
        """Turn the kernel's move keys back into moves by replaying them."""
        line: list[RawMove] = []
        current = position
        for key in keys:
            match = [m for m in legal_moves(self.variant, current)
                     if move_key(m.from_bit, m.to_bit, m.captured) == key]
            if not match:
                break
            move = match[0]
            line.append(move)
            current = apply_move(current, move.from_bit, move.to_bit, move.captured, move.promotes)
        return tuple(line)
