"""Whole games at search speed: the Python face of :mod:`engine.kernel.games`.

A :class:`GameRunner` holds the buffers of a set of players (one transposition table each)
and plays a set of games in one compiled call; nothing per ply is a Python object.
Move text and the final FEN are built once, from the finished game's move log. The moves are
those ``engine.player.Player.choose_move`` picks move by move (one compiled decision serves
both), so a game depends only on its start, its players and their seeds.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from engine.board import Termination
from engine.features import N_FEATURES
from engine.fen import format_fen
from engine.geometry import geometry
from engine.kernel.decide import O_SIZE
from engine.kernel.games import (
    END_ENDGAME_LIMIT,
    END_ERROR,
    END_NO_MOVES,
    END_NO_PIECES,
    END_PLY_CAP,
    END_QUIET_LIMIT,
    END_THREEFOLD,
    G_BLACK,
    G_DECISIONS,
    G_DEPTH,
    G_END,
    G_KINGS,
    G_MOVES_BY,
    G_NODES,
    G_PLIES,
    G_SIDE,
    G_SIZE,
    G_WHITE,
    G_WINNER,
    P_BUDGET,
    P_PARTIAL,
    P_QUIESCENCE,
    P_REDUCTIONS,
    P_SIZE,
    P_TT_KEEP,
    P_TT_MASK,
    play_games,
)
from engine.kernel.movegen import MV_CAP, MV_PATH, MV_PLEN, MV_SIZE, MV_TO, new_scratch
from engine.kernel.search import C_SIZE, MAX_PLY
from engine.kernel.tables import kernel_tables
from engine.notation import square_name
from engine.position import Position
from engine.profile import LevelProfile
from engine.search import SEARCH_MOVE_CAPACITY, Weakening, knob_array
from engine.variants import Color, Variant

_TERMINATIONS = {
    END_NO_PIECES: Termination.NO_PIECES,
    END_NO_MOVES: Termination.NO_MOVES,
    END_THREEFOLD: Termination.THREEFOLD_REPETITION,
    END_ENDGAME_LIMIT: Termination.ENDGAME_MOVE_LIMIT,
    END_QUIET_LIMIT: Termination.QUIET_PLY_LIMIT,
    END_PLY_CAP: Termination.PLY_CAP,
}


@dataclass(frozen=True)
class GamePlayer:
    """One player as the runner takes it: search limits, evaluation weights and weakening."""

    max_depth: int
    node_budget: int
    quiescence: bool
    tt_log2: int
    weights: tuple[float, ...]
    weakening: Weakening
    reductions: bool = False
    partial_iterations: bool = False
    tt_keep: bool = False

    @classmethod
    def from_level(cls, level: LevelProfile) -> GamePlayer:
        """The player of a profile level (as ``engine.player.Player`` plays it)."""
        return cls(level.max_depth, level.node_budget, level.quiescence, level.tt_log2,
                   tuple(float(w) for w in level.weight_array()),
                   Weakening(level.random_move_prob, level.noise_sigma, level.top_k, level.temperature),
                   level.reductions, level.partial_iterations, level.tt_keep)

    @classmethod
    def uniform_random(cls) -> GamePlayer:
        """A uniformly random legal move every ply (never searches)."""
        return cls(1, 1, False, 4, (0.0,) * N_FEATURES, Weakening(random_move_prob=1.0))


@dataclass(frozen=True, eq=False)
class GameResult:
    """A finished game: its moves (generator fields, one row per ply) and outcome."""

    variant: Variant
    start: Position
    log: npt.NDArray[np.int64] = field(repr=False)  # [plies, MV_SIZE]
    termination: Termination
    winner: Color | None
    final: Position
    nodes: tuple[int, int]  # search nodes by colour (White, Black)
    max_depth: tuple[int, int]
    moves_by: tuple[int, int]  # plies played by colour
    decisions: tuple[int, int]  # plies by colour with two or more legal moves
    cpu_seconds: float

    @property
    def plies(self) -> int:
        return int(self.log.shape[0])

    def move_texts(self, algebraic: bool = False) -> list[str]:
        """PDN text of every move with its full path (as ``Board.move_to_text`` writes it)."""
        geo = geometry(self.variant)
        names = [square_name(self.variant, int(geo.square_of_bit[b]) + 1, algebraic)
                 if geo.square_of_bit[b] >= 0 else "" for b in range(len(geo.square_of_bit))]
        texts = []
        for row in self.log.tolist():
            length = row[MV_PLEN]
            path = (row[0], row[MV_TO]) if length == 2 else row[MV_PATH : MV_PATH + length]
            texts.append(("x" if row[MV_CAP] else "-").join(names[b] for b in path))
        return texts

    def final_fen(self, algebraic: bool = False) -> str:
        return format_fen(self.variant, self.final, algebraic)


class GameRunner:
    """Plays games between ``players`` (by index) of one variant; reuse it for many games."""

    def __init__(self, variant: Variant, players: Sequence[GamePlayer]) -> None:
        if not players:
            raise ValueError("a game runner needs at least one player")
        self.variant = variant
        self.players = tuple(players)
        count = len(self.players)
        self._tab = kernel_tables(variant).packed.copy()
        self._knobs = np.stack([knob_array(p.max_depth, p.weakening) for p in self.players])
        self._settings = np.zeros((count, P_SIZE), dtype=np.int64)
        for i, p in enumerate(self.players):
            self._settings[i, P_BUDGET] = p.node_budget
            self._settings[i, P_QUIESCENCE] = int(p.quiescence)
            self._settings[i, P_TT_MASK] = (1 << p.tt_log2) - 1
            self._settings[i, P_REDUCTIONS] = int(p.reductions)
            self._settings[i, P_PARTIAL] = int(p.partial_iterations)
            self._settings[i, P_TT_KEEP] = int(p.tt_keep)
        self._weights = np.array([p.weights for p in self.players], dtype=np.float64)
        # one table per colour (play_game), sized for the largest player
        self._tts = np.zeros((2, 1 << max(p.tt_log2 for p in self.players), 4), dtype=np.int64)
        self._moves = np.zeros((MAX_PLY, MV_SIZE, SEARCH_MOVE_CAPACITY), dtype=np.int64)
        self._frames = new_scratch()
        self._ctx = np.zeros(C_SIZE, dtype=np.int64)
        self._root_scores = np.zeros(SEARCH_MOVE_CAPACITY, dtype=np.int64)
        self._result = np.zeros(5, dtype=np.int64)
        self._out = np.zeros(O_SIZE, dtype=np.int64)

    def play_all(self, starts: Sequence[Position], white: Sequence[int], black: Sequence[int],
                 white_seeds: Sequence[int], black_seeds: Sequence[int], ply_cap: int) -> list[GameResult]:
        """Play game ``g`` from ``starts[g]`` between players ``white[g]`` and ``black[g]``, every
        game in one compiled call. A game's ``cpu_seconds`` is its share of the call's CPU time, by
        search nodes (evenly when nothing was searched)."""
        count = len(starts)
        if not len(white) == len(black) == len(white_seeds) == len(black_seeds) == count:
            raise ValueError("play_all needs one start, two players and two seeds per game")
        for index in (*white, *black):
            if not 0 <= index < len(self.players):
                raise ValueError(f"no player {index} (have {len(self.players)})")
        if ply_cap < 0:
            raise ValueError(f"ply_cap must be >= 0, got {ply_cap}")
        board = np.array([[p.white, p.black, p.kings, int(p.side_to_move)] for p in starts],
                         dtype=np.int64).reshape(count, 4)
        seeds = np.array([white_seeds, black_seeds], dtype=np.int64).T.copy()
        players = np.array([white, black], dtype=np.int64).T.copy()
        logs = np.zeros((count, ply_cap, MV_SIZE), dtype=np.int64)
        summaries = np.zeros((count, G_SIZE), dtype=np.int64)
        started = time.thread_time()
        play_games(board, int(ply_cap), seeds, players, self._knobs, self._settings, self._weights,
                   self._tts, self._tab, self._moves, self._frames, self._ctx, self._root_scores,
                   self._result, self._out, logs, summaries)
        cpu = time.thread_time() - started
        nodes = summaries[:, G_NODES] + summaries[:, G_NODES + 1]
        total = int(nodes.sum())
        shares = nodes / total if total > 0 else np.full(count, 1.0 / max(1, count))
        return [self._result_of(starts[g], summaries[g], logs[g], cpu * float(shares[g]))
                for g in range(count)]

    def play(self, start: Position, white: int, black: int, white_seed: int, black_seed: int,
             ply_cap: int) -> GameResult:
        """Play one game from ``start``: player ``white`` (seed ``white_seed``) against ``black``."""
        return self.play_all([start], [white], [black], [white_seed], [black_seed], ply_cap)[0]

    def _result_of(self, start: Position, summary: npt.NDArray[np.int64], log: npt.NDArray[np.int64],
                   cpu: float) -> GameResult:
        s = [int(x) for x in summary]
        if s[G_END] == END_ERROR:
            raise RuntimeError("move buffer overflow in the game runner")
        final = Position(s[G_WHITE], s[G_BLACK], s[G_KINGS], Color(s[G_SIDE]))
        return GameResult(
            variant=self.variant, start=start, log=log[: s[G_PLIES]].copy(),
            termination=_TERMINATIONS[s[G_END]],
            winner=None if s[G_WINNER] < 0 else Color(s[G_WINNER]),
            final=final, nodes=(s[G_NODES], s[G_NODES + 1]), max_depth=(s[G_DEPTH], s[G_DEPTH + 1]),
            moves_by=(s[G_MOVES_BY], s[G_MOVES_BY + 1]), decisions=(s[G_DECISIONS], s[G_DECISIONS + 1]),
            cpu_seconds=cpu,
        )
