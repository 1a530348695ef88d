"""Random games in lockstep: many games advance one ply per round, all vectorised.

Used for smoke statistics, opening/position sampling and differential tests. Every random
choice comes from one ``np.random.Generator`` seeded by ``seed``, so a run is reproducible.

Game end, checked in this order before each ply for every game still running:
1. the side to move has no pieces / no legal move: it loses (wins if the variant's outcome
   is inverted);
2. threefold repetition (same pieces, same side to move, third time): draw;
3. a small-endgame count (``variant.endgame_draws``, see :mod:`engine.endgame`) ran out: draw;
4. ``variant.quiet_ply_limit`` plies in a row without a capture or a man move: draw;
5. ``max_plies`` plies played: adjudicated draw, recorded as its own termination.

Repetition is exact and cheap: only positions since the last capture or man move can
repeat, and within that window the men do not change, so the (white, black) bitboards
identify a position; each game keeps them in a ring buffer as long as the quiet-ply limit.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum

import numpy as np
import numpy.typing as npt

from engine.batch.movegen import MoveBatch, sample_moves, successors
from engine.batch.positions import PositionBatch
from engine.endgame import main_road_mask
from engine.errors import DraughtsError
from engine.position import Position, initial_position
from engine.variants import EndgameMaterial, Variant

I64 = npt.NDArray[np.int64]
I8 = npt.NDArray[np.int8]


class Termination(IntEnum):
    """Why a game ended (names match :class:`engine.board.Termination`; values are int8 codes)."""

    ONGOING = 0  # never returned for a finished run
    NO_PIECES = 1  # side to move has no pieces left
    NO_MOVES = 2  # side to move has pieces but no legal move
    THREEFOLD_REPETITION = 3  # threefold repetition (draw)
    QUIET_PLY_LIMIT = 4  # quiet-ply limit reached (draw)
    PLY_CAP = 5  # hard ply cap of the run (adjudicated draw)
    ENDGAME_MOVE_LIMIT = 6  # a small-endgame draw count ran out (draw)


@dataclass
class RandomGamesResult:
    """Per game: result from White's view (+1 win, 0 draw, -1 loss), why it ended, its length."""

    result: I8
    termination: I8
    plies: I64
    final: PositionBatch  # the position on the board when the game ended

    def __len__(self) -> int:
        return len(self.result)


def _endgame_next(variant: Variant, pos: PositionBatch, rule: I64, left: I64,
                  changed: npt.NDArray[np.bool_], road: bool) -> tuple[I64, I64]:
    """One slot of the small-endgame counts after moves to ``pos`` (the rules of
    :func:`engine.endgame.next_count`).

    ``rule``/``left``: the slot's counts before (rule -1: none); ``changed``: the move captured or
    crowned; ``road``: the main-road slot.
    """
    n = len(pos)
    new_rule = np.full(n, -1, dtype=np.int64)
    plies = np.zeros(n, dtype=np.int64)
    restart = np.zeros(n, dtype=np.bool_)
    draws = [(index, draw) for index, draw in enumerate(variant.endgame_draws)
             if draw.lone_king_on_main_road == road]
    if not draws:
        return new_rule, plies
    main_road = np.uint64(main_road_mask(variant))
    material = [np.bitwise_count(side & k).astype(np.int64)
                for side in (pos.white, pos.black) for k in (pos.kings, ~pos.kings)]
    pieces = material[0] + material[1] + material[2] + material[3]
    for index, draw in draws:
        if draw.material is EndgameMaterial.BOTH_KINGS:
            fits = (material[0] > 0) & (material[2] > 0) & np.isin(pieces, list(draw.pieces)) & (new_rule < 0)
            new_rule[fits] = index
            plies[fits] = draw.plies(False)
            restart[fits] = draw.restart_on_material_change
            continue
        for weak in (0, 1):
            lone = (material[2 * weak] == 1) & (material[2 * weak + 1] == 0)
            strong = np.zeros(n, dtype=np.bool_)
            for kings, men in draw.strong:
                strong |= (material[2 - 2 * weak] == kings) & (material[3 - 2 * weak] == men)
            fits = lone & strong & (new_rule < 0)
            if draw.lone_king_on_main_road:
                fits &= ((pos.white if weak == 0 else pos.black) & pos.kings & main_road) != 0
            new_rule[fits] = index
            strong_to_move = pos.side != weak
            plies[fits] = np.where(strong_to_move[fits], draw.plies(True), draw.plies(False))
            restart[fits] = draw.restart_on_material_change
    fresh = (rule < 0) | (changed & restart)
    new_left = np.where(fresh, plies, np.minimum(left - 1, plies))
    return new_rule, np.where(new_rule < 0, 0, new_left)


def _start_batch(variant: Variant, n_games: int, start: Position | PositionBatch | None) -> PositionBatch:
    if start is None:
        return PositionBatch.repeat(initial_position(variant), n_games)
    if isinstance(start, Position):
        return PositionBatch.repeat(start, n_games)
    if len(start) == n_games:
        return start.take(np.arange(n_games))
    if len(start) == 1:
        return start.take(np.zeros(n_games, dtype=np.int64))
    raise DraughtsError(f"start batch has {len(start)} positions for {n_games} games")


class _Lockstep:
    """State of many games played in lockstep (only running games are kept compact)."""

    def __init__(self, variant: Variant, start: PositionBatch, seed: int | np.random.Generator,
                 track_repetition: bool) -> None:
        n = len(start)
        self.variant = variant
        self.rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
        self.pos = start
        self.ids = np.arange(n, dtype=np.int64)  # game id of each running row
        self.quiet = np.zeros(n, dtype=np.int64)
        none, zero = np.full(n, -1, dtype=np.int64), np.zeros(n, dtype=np.int64)
        unchanged = np.zeros(n, dtype=np.bool_)
        self.eg_rule, self.eg_left = _endgame_next(variant, start, none, zero, unchanged, False)
        self.road_rule, self.road_left = _endgame_next(variant, start, none, zero, unchanged, True)
        self.ply = 0
        self.result = np.zeros(n, dtype=np.int8)
        self.termination = np.zeros(n, dtype=np.int8)
        self.plies = np.zeros(n, dtype=np.int64)
        self.final = start.take(np.arange(n))
        self.track = track_repetition
        self.hist_len = variant.quiet_ply_limit + 2
        shape = (self.hist_len, n) if track_repetition else (0, 0)
        self.hist_w = np.zeros(shape, dtype=np.uint64)
        self.hist_b = np.zeros(shape, dtype=np.uint64)

    def running(self) -> int:
        return len(self.ids)

    def _finish(self, rows: I64, term: Termination, result: I8 | int) -> None:
        gid = self.ids[rows]
        self.termination[gid] = int(term)
        self.result[gid] = result
        self.plies[gid] = self.ply
        self.final.white[gid] = self.pos.white[rows]
        self.final.black[gid] = self.pos.black[rows]
        self.final.kings[gid] = self.pos.kings[rows]
        self.final.side[gid] = self.pos.side[rows]

    def _repeated(self) -> npt.NDArray[np.bool_]:
        """Rows whose current position occurred twice before (since the last reset)."""
        out = np.zeros(len(self.ids), dtype=np.bool_)
        if not self.track:
            return out
        cand = np.flatnonzero(self.quiet >= 4)
        if len(cand) == 0:
            return out
        cand = cand[np.argsort(-self.quiet[cand], kind="stable")]  # longest windows first
        gid = self.ids[cand]
        w, b = self.pos.white[cand], self.pos.black[cand]
        q = self.quiet[cand]
        seen = np.zeros(len(cand), dtype=np.int64)
        for back in range(2, int(q[0]) + 1, 2):
            live = int(np.searchsorted(-q, -back, side="right"))  # rows with q >= back
            col = (self.ply - back) % self.hist_len
            hit = np.flatnonzero(self.hist_w[col, gid[:live]] == w[:live])
            if len(hit):
                seen[hit] += self.hist_b[col, gid[hit]] == b[hit]
        out[cand] = seen >= 2
        return out

    def record(self) -> None:
        """Store the current positions in the repetition ring buffer.

        Only positions with a king on the board: a repetition window longer than one ply
        (a reversible move) needs a king, and kings only disappear by capture, so every
        position a later one can be compared with has one.
        """
        if not self.track:
            return
        rows = np.flatnonzero(self.pos.kings)
        if len(rows) == 0:
            return
        col = self.ply % self.hist_len
        gid = self.ids[rows]
        w, b = self.pos.white[rows], self.pos.black[rows]
        self.hist_w[col, gid] = w
        self.hist_b[col, gid] = b

    def step(self, max_plies: int) -> MoveBatch | None:
        """End finished games, then play one random move in every other; returns the moves."""
        v = self.variant
        self.record()
        u = self.rng.random(len(self.ids))
        counts, moves = sample_moves(v, self.pos, u)
        side = self.pos.side
        own = np.where(side == 0, self.pos.white, self.pos.black)
        stuck = counts == 0
        # the side to move lost (or won, when the outcome is inverted)
        res = np.where(side == 0, -1, 1).astype(np.int8)
        if v.outcome_inverted:
            res = -res
        for term, mask in (
            (Termination.NO_PIECES, stuck & (own == 0)),
            (Termination.NO_MOVES, stuck & (own != 0)),
        ):
            rows = np.flatnonzero(mask)
            if len(rows):
                self._finish(rows, term, res[rows])
        done = stuck.copy()
        for term, mask in (
            (Termination.THREEFOLD_REPETITION, self._repeated()),
            (Termination.ENDGAME_MOVE_LIMIT, ((self.eg_rule >= 0) & (self.eg_left <= 0))
             | ((self.road_rule >= 0) & (self.road_left <= 0))),
            (Termination.QUIET_PLY_LIMIT, self.quiet >= v.quiet_ply_limit),
            (Termination.PLY_CAP, np.full(len(self.ids), self.ply >= max_plies)),
        ):
            rows = np.flatnonzero(mask & ~done)
            if len(rows):
                self._finish(rows, term, 0)
                done[rows] = True
        keep = np.flatnonzero(~done)
        if len(keep) == 0:
            self.ids = keep
            return None
        # moves exist for every row that is not stuck, in row order
        chosen = moves.take(np.flatnonzero(~done[~stuck]))
        before = self.pos.take(keep)
        reversible = (chosen.captured == 0) & ((chosen.from_bb & before.kings) != 0)
        self.pos = successors(before, chosen)
        self.quiet = np.where(reversible, self.quiet[keep] + 1, 0)
        changed = (chosen.captured != 0) | chosen.promotes.astype(np.bool_)
        self.eg_rule, self.eg_left = _endgame_next(v, self.pos, self.eg_rule[keep], self.eg_left[keep],
                                                   changed, False)
        self.road_rule, self.road_left = _endgame_next(v, self.pos, self.road_rule[keep],
                                                       self.road_left[keep], changed, True)
        self.ids = self.ids[keep]
        self.ply += 1
        return chosen


def random_games(
    variant: Variant,
    n_games: int,
    seed: int | np.random.Generator,
    max_plies: int = 500,
    start: Position | PositionBatch | None = None,
    track_repetition: bool = True,
) -> RandomGamesResult:
    """Play ``n_games`` uniformly random games at once (see the module docstring for endings).

    ``start``: one position for every game, or one per game (default: the initial position).
    """
    if n_games < 0 or max_plies < 0:
        raise DraughtsError(f"need n_games >= 0 and max_plies >= 0, got {n_games!r}, {max_plies!r}")
    state = _Lockstep(variant, _start_batch(variant, n_games, start), seed, track_repetition)
    while state.running():
        state.step(max_plies)
    return RandomGamesResult(state.result, state.termination, state.plies, state.final)


def random_positions(
    variant: Variant,
    n: int,
    seed: int | np.random.Generator,
    per_game: int = 8,
    max_plies: int = 400,
) -> PositionBatch:
    """``n`` positions reachable by random play, for differential tests.

    Plays about ``n / per_game`` random games and samples plies uniformly along each game
    (start to final position, so early, middle and late game, capture positions, kings and
    finished games all appear). Deterministic for a given ``seed``.
    """
    if n < 0 or per_game < 1:
        raise DraughtsError(f"need n >= 0 and per_game >= 1, got {n!r}, {per_game!r}")
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    n_games = max(1, -(-n // per_game))
    state = _Lockstep(variant, _start_batch(variant, n_games, None), rng, track_repetition=True)
    recorded: list[tuple[I64, PositionBatch]] = []
    while state.running():
        recorded.append((state.ids.copy(), state.pos))
        state.step(max_plies)
    lengths = state.plies  # positions of game g: plies 0..lengths[g]
    game = rng.integers(0, n_games, size=n)
    ply = (rng.random(n) * (lengths[game] + 1)).astype(np.int64)
    out = PositionBatch(
        white=np.zeros(n, dtype=np.uint64),
        black=np.zeros(n, dtype=np.uint64),
        kings=np.zeros(n, dtype=np.uint64),
        side=np.zeros(n, dtype=np.int8),
    )
    for p, (ids, pos) in enumerate(recorded):
        want = np.flatnonzero(ply == p)
        if len(want) == 0:
            continue
        rows = np.searchsorted(ids, game[want])  # ids stay sorted: games only drop out
        out.white[want] = pos.white[rows]
        out.black[want] = pos.black[rows]
        out.kings[want] = pos.kings[rows]
        out.side[want] = pos.side[rows]
    return out
