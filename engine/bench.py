"""Bench: fixed positions searched to fixed depths; node counts are the SIGNATURES.

As in Stockfish, a signature changes only when search behaviour changes (move ordering,
pruning, evaluation, rules), never with the machine's speed, so it goes into a profile's
provenance and into commit messages. Each variant has its own signature, the node count of
its own positions (:func:`bench_signature`): a profile carries its variant's, so a change to
one variant's rules or evaluation invalidates exactly that variant's profiles. The total over
every position is the signature of the whole engine (``python -m engine bench``). Every
position gets a fresh searcher with default weights, a fixed transposition table size,
quiescence on, no weakening and a node budget that never binds, and is searched twice: with
late-move reductions off and on (the ``reductions`` knob). Then a short game is played from it,
:data:`BENCH_GAME_PLIES` plies two plies shallower, each side searching with its own table kept
across its moves (the ``tt_keep`` knob), so a change to any of these searches changes the
signature.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from engine.errors import DraughtsError
from engine.features import default_weights, weight_vector
from engine.params import PARAM_INDEX
from engine.variants import Variant, get_variant

if TYPE_CHECKING:
    from engine.board import Board
    from engine.search import Searcher

BENCH_TT_LOG2 = 16
BENCH_NODE_BUDGET = int(PARAM_INDEX["node_budget"].high)  # high enough never to bind here
MAX_BENCH_DEPTH = int(PARAM_INDEX["max_depth"].high)
#: plies of each position's game with the table kept, searched this much shallower than the position
BENCH_GAME_PLIES = 4
BENCH_GAME_SHALLOWER = 2


@dataclass(frozen=True)
class BenchPosition:
    """One bench entry: a variant, a FEN and the depth it is searched to."""

    variant: str
    fen: str
    depth: int
    note: str


BENCH_POSITIONS: tuple[BenchPosition, ...] = (
    BenchPosition("english", "B:W21,22,23,24,25,26,27,28,29,30,31,32:B1,2,3,4,5,6,7,8,9,10,11,12", 13,
                  "start"),
    BenchPosition("english", "B:W13,19,20,21,25,26,27,28,29,30,31,32:B1,2,3,5,6,7,8,9,10,11,12,18", 13,
                  "Old Fourteenth: 11-15 23-19 8-11 22-17 4-8 17-13 15-18 24-20"),
    BenchPosition("english", "B:W18,21,22,23,24,26,27,28,30,31,32:B1,2,3,5,6,7,8,9,10,11,12", 13,
                  "Single Corner: 11-15 22-18 15x22 25x18 8-11 29-25 4-8 25-22"),
    BenchPosition("english", "B:W19,21,23,24,25,26,27,29,30,31,32:B1,2,3,4,6,7,8,12,13,14,16", 12,
                  "Double Corner: 9-13 22-18 10-14 18x9 5x14 24-19 11-16 28-24"),
    BenchPosition("english", "W:WK19,K24,27,30:BK1,5,6,K12", 14, "kings endgame, White to move"),
    BenchPosition("suicide", "B:W17,20,22,23,24,25,26,29,30,31,32:B1,2,3,4,5,6,7,8,11,13,16", 15,
                  "opening after 8 plies"),
    BenchPosition("brazilian", "W:W18,21,22,25,28,29,30,31,32:B1,2,3,4,5,8,9,10,12", 12,
                  "after an exchange-rich opening"),
    BenchPosition("russian", "B:W17,21,22,23,24,27,28,29,30,31,32:B1,2,3,4,5,8,10,11,12,13,14", 12,
                  "opening after 10 plies"),
    BenchPosition("international",
                  "W:W25,31,32,33,35,36,37,40,41,42,43,44,45,46,47,48,49,50:"
                  "B1,2,3,4,5,6,7,8,9,10,12,13,14,16,17,18,21,24", 10,
                  "10x10 opening after 12 plies"),
)


@dataclass(frozen=True)
class BenchRow:
    """The search of one bench position."""

    variant: str
    fen: str
    depth: int
    nodes: int
    seconds: float
    score: int
    best: str | None  # PDN text of the best move
    reductions: bool  # searched with late-move reductions
    kept: bool = False  # a ply of the position's game, the side's table kept across its moves


@dataclass(frozen=True)
class BenchResult:
    """All rows plus the totals; ``nodes`` is the whole engine's signature."""

    rows: tuple[BenchRow, ...]
    nodes: int
    seconds: float

    @property
    def signature(self) -> int:
        """The total node count over every row (the engine's signature)."""
        return self.nodes

    @property
    def signatures(self) -> dict[str, int]:
        """Each benched variant's signature (its rows' node count), in bench order."""
        out: dict[str, int] = {}
        for row in self.rows:
            out[row.variant] = out.get(row.variant, 0) + row.nodes
        return out

    @property
    def nps(self) -> float:
        return self.nodes / self.seconds if self.seconds > 0 else 0.0


def _bench_one(entry: BenchPosition, depth: int, reductions: bool) -> BenchRow:
    from engine.board import Board
    from engine.search import Searcher

    board = Board(entry.variant, entry.fen)
    weights = weight_vector(default_weights(board.variant))
    searcher = Searcher(board.variant, weights, depth, BENCH_NODE_BUDGET, True, BENCH_TT_LOG2, reductions)
    return _row(board, searcher, depth, reductions, kept=False)


def _bench_game(entry: BenchPosition, depth: int) -> list[BenchRow]:
    """The position's game: each ply searched by its side's searcher, whose table keeps its own
    earlier searches of the game, the best move played."""
    from engine.board import Board
    from engine.search import Searcher

    board = Board(entry.variant, entry.fen)
    weights = weight_vector(default_weights(board.variant))
    sides = [Searcher(board.variant, weights, depth, BENCH_NODE_BUDGET, True, BENCH_TT_LOG2, tt_keep=True)
             for _ in range(2)]
    rows: list[BenchRow] = []
    for ply in range(BENCH_GAME_PLIES):
        if board.outcome() is not None:
            break
        row = _row(board, sides[ply % 2], depth, False, kept=True)
        rows.append(row)
        board.push_text(row.best or "")
    return rows


def _row(board: Board, searcher: Searcher, depth: int, reductions: bool, *, kept: bool) -> BenchRow:
    from engine.player import find_move

    variant = board.variant
    result = searcher.search(board.position)
    move = None if result.best is None else find_move(board, result.best, variant.distinct_capture_orders)
    return BenchRow(variant.name, board.fen(), depth, result.nodes, result.seconds, result.score,
                    None if move is None else move.pdn, reductions, kept)


def bench_positions(variant: Variant | str) -> tuple[BenchPosition, ...]:
    """The bench positions of one variant (name or alias); every variant has some."""
    chosen = get_variant(variant)
    return tuple(entry for entry in BENCH_POSITIONS if entry.variant == chosen.name)


def run_bench(depth: int | None = None, variants: Iterable[Variant | str] | None = None) -> BenchResult:
    """Search the bench positions (of ``variants`` only, if given) and total the nodes.

    Each position is searched to ``depth`` if given, else to its own depth.
    """
    if depth is not None and (isinstance(depth, bool) or not 1 <= depth <= MAX_BENCH_DEPTH):
        raise DraughtsError(f"bench depth must be 1..{MAX_BENCH_DEPTH}, got {depth!r}")
    entries = BENCH_POSITIONS
    if variants is not None:
        chosen = list(variants)
        names = {get_variant(v).name for v in chosen}
        entries = tuple(entry for entry in BENCH_POSITIONS if entry.variant in names)
        if not entries:
            raise DraughtsError(f"bench: no variant chosen, got {chosen!r}")
    _bench_one(entries[0], 1, False)  # warm-up: load or compile the kernel outside the timing
    rows: list[BenchRow] = []
    for entry in entries:
        own = entry.depth if depth is None else depth
        rows.extend(_bench_one(entry, own, reductions) for reductions in (False, True))
        rows.extend(_bench_game(entry, max(1, own - BENCH_GAME_SHALLOWER)))
    seconds = sum(row.seconds for row in rows)
    return BenchResult(tuple(rows), sum(row.nodes for row in rows), seconds)


def bench_signature(variant: Variant | str) -> int:
    """The signature of one variant: the node count of its own bench positions at their depths.

    What a profile of that variant records in ``provenance.bench_signature``.
    """
    return run_bench(variants=[variant]).signature
