"""Blunder rate of a player from its games: moves that lose material a shallow search sees.

An independent yardstick for calibrated levels (``python -m pipeline levelcheck``): it uses
neither the level's own weights nor its search, only a fixed MATERIAL-ONLY search. Each game
of a games table (``pipeline.games.records.GAMES_SCHEMA``) is replayed from its opening FEN; at every
position where the player is to move with at least two legal moves, every legal move is scored
by ``engine.search.Searcher`` with exact root scores: the move itself plus ``depth - 1`` plies,
capture quiescence on, weights = the variant's default ``man`` and ``king`` weights (signs
kept: in suicide they are negative, so "losing material" there means keeping pieces; running
out of moves scores as the variant's win or loss). A move is a blunder when its score is at
least ``threshold`` (default: one man, ``|man|``) below the best move's score.

The search gets no game history (the score is material, not the draw rules), so repetitions
only count when they happen inside the search itself.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa

from engine.board import Board
from engine.errors import DraughtsError
from engine.features import FEATURES, default_weights, weight_vector
from engine.move import Move
from engine.position import Position
from engine.search import Searcher
from engine.variants import Color, Variant, get_variant
from pipeline.jsonrecord import Fields
from pipeline.ratings import Z95

WILSON_Z = Z95  # two-sided 95 %
_NODE_BUDGET = 20_000_000  # never binds at the depths used here; the depth is the limit
_TT_LOG2 = 16
_MOVE_NUMBER = re.compile(r"^\d+\.+$")
_RESULT_TOKENS = frozenset({"1-0", "0-1", "1/2-1/2", "*"})
_COLUMNS = ["game_id", "variant", "opening_fen", "moves", "white_player", "black_player"]

MoveKey = tuple[int, int, int]  # (from bit, to bit, captured bitboard): equal keys, equal result


@dataclass(frozen=True)
class BlunderStats:
    """Blunders among the scored moves of one player, with a 95 % Wilson interval.

    ``rate`` is None when no move was scored (then the interval is the uninformative [0, 1]).
    ``positions_seen`` counts every eligible position before ``max_positions`` sampling.
    """

    player: str
    moves: int
    blunders: int
    rate: float | None
    ci_low: float
    ci_high: float
    depth: int
    threshold: float
    positions_seen: int

    def to_json(self) -> dict[str, Any]:
        return {"player": self.player, "moves": self.moves, "blunders": self.blunders, "rate": self.rate,
                "ci_low": self.ci_low, "ci_high": self.ci_high, "depth": self.depth,
                "threshold": self.threshold, "positions_seen": self.positions_seen}

    @classmethod
    def from_json(cls, data: object, where: str = "blunders") -> BlunderStats:
        f = Fields(data, where, ("player", "moves", "blunders", "rate", "ci_low", "ci_high", "depth",
                                 "threshold", "positions_seen"))
        return cls(f.text("player"), f.integer("moves"), f.integer("blunders"), f.opt_number("rate"),
                   f.number("ci_low"), f.number("ci_high"), f.integer("depth"), f.number("threshold"),
                   f.integer("positions_seen"))


def wilson_interval(successes: int, n: int, z: float = WILSON_Z) -> tuple[float, float]:
    """Wilson score interval of a binomial proportion; [0, 1] when ``n`` is 0."""
    if n <= 0:
        return 0.0, 1.0
    p = successes / n
    denom = 1.0 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


def material_weights(variant: Variant) -> np.ndarray:
    """The variant's default ``man`` and ``king`` weights (signs kept); every other weight 0."""
    defaults = default_weights(variant)
    return weight_vector({f.name: defaults[f.name] if f.name in ("man", "king") else 0.0 for f in FEATURES})


def default_threshold(variant: Variant) -> float:
    """One man: ``|man|`` of the variant's default weights."""
    return abs(default_weights(variant)["man"])


def move_key(move: Move) -> MoveKey:
    """What decides a move's result: start, end and the pieces taken (capture orders merge)."""
    return (move.from_bit, move.to_bit, move.captured)


class MaterialScorer:
    """Exact per-move scores of a material-only search of ``depth`` plies (the move included)."""

    def __init__(self, variant: Variant, depth: int = 4) -> None:
        if isinstance(depth, bool) or not isinstance(depth, int) or depth < 1:
            raise ValueError(f"blunder depth must be a positive integer, got {depth!r}")
        self.variant = variant
        self.depth = depth
        self._searcher = Searcher(variant, material_weights(variant), depth, _NODE_BUDGET, True, _TT_LOG2)

    def scores(self, position: Position) -> dict[MoveKey, int]:
        """Score of every legal move, from the mover's side (higher is better for the mover)."""
        result = self._searcher.search(position, exact_root=True)
        if result.root_scores is None:
            return {}
        return {(int(m.from_bit), int(m.to_bit), int(m.captured)): int(s)
                for m, s in zip(result.root_moves, result.root_scores, strict=True)}

    def loss(self, position: Position, move: Move) -> int:
        """How much worse ``move`` scores than the best move (0 for a best move)."""
        scores = self.scores(position)
        key = move_key(move)
        if key not in scores:
            raise ValueError(f"move {move.pdn!r} is not among the searched moves of {position!r}")
        return max(scores.values()) - scores[key]


@dataclass(frozen=True)
class Decision:
    """One position where the player chose among several moves, and the move it played."""

    game_id: int
    ply: int
    position: Position
    played: MoveKey


def move_texts(movetext: str) -> list[str]:
    """The move tokens of PDN movetext as ``pipeline.games.match`` writes it (numbers dropped)."""
    return [t for t in movetext.split() if not _MOVE_NUMBER.fullmatch(t) and t not in _RESULT_TOKENS]


def _player_decisions(variant: Variant, row: dict[str, object], player: str) -> Iterator[Decision]:
    """Replay one game row and yield the player's positions with two or more legal moves."""
    sides = {c for c, key in ((Color.WHITE, "white_player"), (Color.BLACK, "black_player"))
             if row[key] == player}
    game_id = int(row["game_id"])  # type: ignore[call-overload]
    where = f"player {player!r}, game {game_id}"
    if row["variant"] != variant.name:
        raise ValueError(f"blunder rate of {where}: the game is {row['variant']!r}, not {variant.name!r}")
    try:
        board = Board(variant, fen=str(row["opening_fen"]))
    except DraughtsError as err:
        raise ValueError(f"blunder rate of {where}: bad opening FEN: {err}") from None
    for ply, text in enumerate(move_texts(str(row["moves"])), start=1):
        legal = board.legal_moves
        try:
            move = board.parse_move(text)
        except DraughtsError as err:
            raise ValueError(f"blunder rate of {where}: move {ply} {text!r} cannot be replayed "
                             f"from {board.fen()!r}: {err}") from None
        if board.turn in sides and len(legal) >= 2:
            yield Decision(game_id, ply, board.position, move_key(move))
        board.push(move)


def sample_indices(total: int, max_positions: int | None, seed: int) -> list[int]:
    """Which of ``total`` decisions (numbered in game order) a blunder rate scores: all, or a
    deterministic sample of ``max_positions`` drawn with ``seed``, in order."""
    if max_positions is None or total <= max_positions:
        return list(range(total))
    rng = np.random.default_rng(seed)
    return [int(i) for i in np.sort(rng.choice(total, size=max_positions, replace=False))]


def _sample(decisions: list[Decision], max_positions: int | None, seed: int) -> list[Decision]:
    """All decisions, or a deterministic sample of ``max_positions`` of them (in game order)."""
    return [decisions[i] for i in sample_indices(len(decisions), max_positions, seed)]


def score_chosen(variant: Variant | str, table: pa.Table, player: str, chosen: Sequence[int],
                 depth: int = 4, *, total: int | None = None) -> tuple[int, ...]:
    """The material losses of ``player``'s decisions number ``chosen`` (ascending, numbered in
    game order over the games of ``table``), in that order. Over consecutive shares of a table's
    games, with the sample's numbers shifted to each share, they join into what
    :func:`blunder_rate` scores. ``total``: how many decisions the games hold by their records;
    the whole replay is then checked against it (ValueError when they differ)."""
    rules = get_variant(variant)
    wanted = list(chosen)
    if wanted != sorted(set(wanted)):
        raise ValueError(f"blunder decisions of player {player!r} must be ascending and distinct")
    picked: list[Decision] = []
    number = 0
    for row in table.select(_COLUMNS).to_pylist():
        if total is None and len(picked) == len(wanted):
            break
        if player in (row["white_player"], row["black_player"]):
            for decision in _player_decisions(rules, row, player):
                if len(picked) < len(wanted) and number == wanted[len(picked)]:
                    picked.append(decision)
                number += 1
    if total is not None and number != total:
        raise ValueError(f"blunder rate of player {player!r}: replaying its games finds {number} decisions, "
                         f"their records say {total}")
    if len(picked) < len(wanted):
        raise ValueError(f"blunder decision {wanted[len(picked)]} of player {player!r}: its games have "
                         f"only {number} decisions")
    return score_decisions(rules, picked, player, depth)


def blunder_rate(
    variant: Variant | str,
    table: pa.Table,
    player: str,
    *,
    depth: int = 4,
    threshold: float | None = None,
    max_positions: int | None = None,
    seed: int = 0,
) -> BlunderStats:
    """Blunder rate of ``player`` over the games of ``table`` it played (see the module docstring).

    Games without ``player`` are skipped. A row that cannot be replayed raises ValueError naming
    the player and the game id.
    """
    rules = get_variant(variant)
    limit = _threshold(rules, threshold)
    sample = sample_decisions(rules, table, player, max_positions=max_positions, seed=seed)
    losses = score_decisions(rules, sample.decisions, player, depth)
    return blunder_stats(player, losses, sample.positions_seen, limit, depth)


@dataclass(frozen=True)
class DecisionSample:
    """The decisions of one player a blunder rate scores (in game order), and how many eligible
    decisions its games held before sampling."""

    decisions: tuple[Decision, ...]
    positions_seen: int


def sample_decisions(variant: Variant | str, table: pa.Table, player: str, *,
                     max_positions: int | None = None, seed: int = 0) -> DecisionSample:
    """Replay ``player``'s games in ``table`` and draw the decisions :func:`blunder_rate` scores.
    Scoring them in consecutive shares (:func:`score_decisions`, one task each) and joining the
    losses in order gives the same rate as scoring them at once."""
    rules = get_variant(variant)
    if max_positions is not None and max_positions < 1:
        raise ValueError(f"max_positions must be positive, got {max_positions!r}")
    decisions: list[Decision] = []
    for row in table.select(_COLUMNS).to_pylist():
        if player in (row["white_player"], row["black_player"]):
            decisions.extend(_player_decisions(rules, row, player))
    return DecisionSample(tuple(_sample(decisions, max_positions, seed)), len(decisions))


def score_decisions(variant: Variant | str, decisions: Sequence[Decision], player: str,
                    depth: int = 4) -> tuple[int, ...]:
    """How much worse than the best move each decision's move scores (material search of
    ``depth`` plies), in the order given."""
    return tuple(_losses(MaterialScorer(get_variant(variant), depth), decisions, player))


def blunder_stats(player: str, losses: Sequence[int], positions_seen: int, threshold: float,
                  depth: int = 4) -> BlunderStats:
    """The blunder rate of the scored ``losses`` of ``player``'s sampled decisions."""
    return _stats(player, losses, threshold, depth, positions_seen)


def _threshold(rules: Variant, threshold: float | None) -> float:
    limit = default_threshold(rules) if threshold is None else float(threshold)
    if not limit > 0:
        raise ValueError(f"blunder threshold must be positive, got {threshold!r}")
    return limit


def _losses(scorer: MaterialScorer, decisions: Sequence[Decision], player: str) -> list[int]:
    out = []
    for d in decisions:
        scores = scorer.scores(d.position)
        if d.played not in scores:  # the replay and the search disagree on the legal moves
            raise ValueError(f"blunder rate of player {player!r}, game {d.game_id}: move {d.ply} "
                             "is not among the searched moves")
        out.append(max(scores.values()) - scores[d.played])
    return out


def _stats(player: str, losses: Sequence[int], threshold: float, depth: int, seen: int) -> BlunderStats:
    n = len(losses)
    blunders = sum(loss >= threshold for loss in losses)
    low, high = wilson_interval(blunders, n)
    return BlunderStats(
        player=player, moves=n, blunders=blunders, rate=blunders / n if n else None, ci_low=low,
        ci_high=high, depth=depth, threshold=threshold, positions_seen=seen,
    )
