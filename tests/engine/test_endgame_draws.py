"""Small-endgame draw counts (docs/rules.md), on positions built for each clause of the rule texts.

FMJD, Official rules for international draughts (Annex 1), article 6: three kings, two kings
and a man, or a king and two men against a lone king: drawn after 16 more moves each, a capture
within them not restarting the count; two kings, a king and a man, or a king against a lone
king: 5 more moves each. Russian rules: three kings (or more) against a lone king: drawn when
the stronger side's 15th move, counted from when that material arose, does not take the lone
king; 5 moves when the lone king stands on the main road (a1-h8).

Moves are chosen by :func:`shuffle`: the first legal move (in a fixed pseudo-random order) that
keeps the material, leaves the opponent no capture and repeats no position, so only the count
can end the game.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import replace

import numpy as np
import pytest

from engine.batch.perft import perft as batch_perft
from engine.board import Board, Outcome, Termination
from engine.endgame import NO_RULE, EndgameCount, main_road_mask, matching_rule, next_count, start_count
from engine.features import default_weights, weight_vector
from engine.geometry import geometry
from engine.kernel.endgame import endgame_next
from engine.kernel.perft import perft as kernel_perft
from engine.kernel.search import MATE
from engine.kernel.tables import kernel_tables
from engine.move import Move
from engine.position import Position
from engine.search import Searcher
from engine.variants import BRAZILIAN_FMJD_ENDGAME, Color, Variant, get_variant

INTERNATIONAL = get_variant("international")
RUSSIAN = get_variant("russian")
BRAZILIAN = get_variant("brazilian")
DRAWN = Outcome(None, Termination.ENDGAME_MOVE_LIMIT)

MoveFilter = Callable[[Board, Move], bool]


def _material(board: Board) -> tuple[int, int]:
    return board.position.white.bit_count(), board.position.black.bit_count()


def _safe(board: Board) -> bool:
    """The side that just moved repeated nothing and left the side to move no capture."""
    return board.repetitions() == 1 and not any(m.is_capture for m in board.legal_moves)


def _safe_moves(board: Board, allow: MoveFilter | None) -> list[Move]:
    moves = [m for m in board.legal_moves if not m.is_capture and (allow is None or allow(board, m))]
    random.Random(board.ply).shuffle(moves)
    return moves


def shuffle(board: Board, plies: int, allow: MoveFilter | None = None) -> None:
    """Play ``plies`` quiet, safe, non-repeating moves that leave the opponent a safe reply too."""
    for _ in range(plies):
        assert board.outcome() is None, board.fen()
        for move in _safe_moves(board, allow):
            board.push(move)
            if _safe(board) and any(_reply_is_safe(board, reply) for reply in _safe_moves(board, allow)):
                break
            board.pop()
        else:
            raise AssertionError(f"no safe move in {board.fen()}")


def _reply_is_safe(board: Board, reply: Move) -> bool:
    board.push(reply)
    safe = _safe(board)
    board.pop()
    return safe


def offer_and_take(board: Board) -> None:
    """The side to move puts a king en prise; the opponent must take it and cannot be taken back.

    If no such offer exists now, both sides shuffle a move first.
    """
    for _ in range(10):
        for move in board.legal_moves:
            board.push(move)
            takes = [m for m in board.legal_moves if m.is_capture]
            if len(takes) == 1 and len(takes[0].captures) == 1:
                board.push(takes[0])
                if not any(m.is_capture for m in board.legal_moves):
                    return
                board.pop()
            board.pop()
        shuffle(board, 2)
    raise AssertionError(f"no sacrifice in {board.fen()}")


def plies_to_draw(board: Board, allow: MoveFilter | None = None, limit: int = 80) -> int:
    """Plies played (by :func:`shuffle`) until the game ends; it must end by an endgame count."""
    start = board.ply
    while board.outcome() is None:
        assert board.ply - start < limit
        shuffle(board, 1, allow)
    assert board.outcome() == DRAWN
    return board.ply - start


# -- FMJD article 6: 16 moves each ---------------------------------------------------------------
@pytest.mark.parametrize(
    "fen",
    ["W:WK46,K47,K48:BK3",  # three kings against a king
     "W:WK46,K47,36:BK3",  # two kings and a man (on the edge, where it cannot be taken)
     "B:WK46,26,36:BK3",  # a king and two men (the lone king to move)
     "W:WK3:BK46,K47,K48"],  # colours swapped
)
def test_fmjd_sixteen_moves_each(fen: str) -> None:
    board = Board(INTERNATIONAL, fen)
    assert board.endgame_count.left == 32
    assert plies_to_draw(board, _keep_men_home) == 32


def _keep_men_home(board: Board, move: Move) -> bool:
    """Men do not move (so a man move cannot crown and change the count's material)."""
    return bool(board.position.kings >> move.from_bit & 1)


def test_fmjd_crowning_within_sixteen_moves_keeps_the_count() -> None:
    # a king and two men: the man on 6 crowns on ply 1; the material (2 kings + man) still fits
    board = Board(INTERNATIONAL, "W:WK50,6,36:BK25")
    board.push_text("6-1")
    assert board.endgame_count.left == 31
    assert plies_to_draw(board, _keep_men_home) == 31


# -- FMJD article 6: 5 moves each ------------------------------------------------------------------
@pytest.mark.parametrize("fen", ["W:WK46,K47:BK3", "W:WK46,36:BK3", "W:WK46:BK3", "B:WK46:BK3"])
def test_fmjd_five_moves_each(fen: str) -> None:
    board = Board(INTERNATIONAL, fen)
    assert plies_to_draw(board, _keep_men_home) == 10


# -- FMJD article 6: a capture hands a 16-move count over to the 5-move count ---------------------
@pytest.mark.parametrize("before", [4, 24])
def test_fmjd_capture_hands_sixteen_over_to_five(before: int) -> None:
    # 3 kings v 1: after `before` plies White offers a king and Black takes it: 2 kings v 1 now,
    # drawn after 5 moves each, or when the 16-move count runs out if that comes sooner.
    board = Board(INTERNATIONAL, "W:WK46,K47,K48:BK3")
    shuffle(board, before)
    offer_and_take(board)
    assert _material(board) == (2, 1)
    left = board.endgame_count.left
    assert left == min(32 - board.ply, 10)
    assert left == 10 if before == 4 else left < 10  # the 16-move deadline comes first
    assert plies_to_draw(board) == left


def test_fmjd_counts_start_afresh_from_a_fen() -> None:
    board = Board(INTERNATIONAL, "W:WK46,K47,K48:BK3")
    shuffle(board, 20)
    resumed = Board(INTERNATIONAL, board.fen(counters=True))
    assert board.endgame_count.left == 12 and resumed.endgame_count.left == 32


def test_no_count_with_more_material_or_two_defenders() -> None:
    for fen in ("W:WK46,K47,K48,K49:BK3", "W:WK46,K47:BK3,K4", "W:WK46,K47,33,34:BK3"):
        assert Board(INTERNATIONAL, fen).endgame_count.rule == NO_RULE


# -- russian: 15 moves of the stronger side, 5 on the main road -----------------------------------
def _off_road(board: Board, move: Move) -> bool:
    """The lone (black) king keeps off the main road."""
    geo = geometry(RUSSIAN)
    on_road = main_road_mask(RUSSIAN) >> geo.bit(move.end - 1) & 1
    return board.turn == Color.WHITE or not on_road


def _on_road(board: Board, move: Move) -> bool:
    geo = geometry(RUSSIAN)
    return board.turn == Color.WHITE or bool(main_road_mask(RUSSIAN) >> geo.bit(move.end - 1) & 1)


@pytest.mark.parametrize(("fen", "plies"), [("W:WK30,K31,K32:BK1", 29), ("B:WK30,K31,K32:BK1", 30),
                                            ("W:WK30,K31,K32,K21:BK1", 29)])
def test_russian_three_kings_fifteen_moves(fen: str, plies: int) -> None:
    # drawn when the stronger side's 15th move does not take the lone king
    assert plies_to_draw(Board(RUSSIAN, fen), _off_road) == plies


@pytest.mark.parametrize(("fen", "plies"), [("W:WK30,K31,K32:BK4", 9), ("B:WK30,K31,K32:BK29", 10)])
def test_russian_lone_king_on_the_main_road_five_moves(fen: str, plies: int) -> None:
    assert plies_to_draw(Board(RUSSIAN, fen), _on_road) == plies


def test_russian_capture_restarts_the_count() -> None:
    # 4 kings v 1: a capture changes the material, so the 15 moves count afresh from it
    board = Board(RUSSIAN, "W:WK30,K31,K32,K21:BK1")
    shuffle(board, 10, _off_road)
    offer_and_take(board)
    assert _material(board) == (3, 1) and board.turn == Color.WHITE
    if board.endgame_count.rule == 0:  # the lone king took on the main road: 5 moves
        assert board.endgame_count.left == 9
    else:
        assert board.endgame_count.left == 29


def test_russian_three_kings_against_king_and_man_has_no_count() -> None:
    assert Board(RUSSIAN, "W:WK30,K31,K32:BK1,5").endgame_count.rule == NO_RULE
    assert Board(RUSSIAN, "W:WK30,K31:BK1").endgame_count.rule == NO_RULE


# -- brazilian: the product's rules by default, the FMJD counts as an option ---------------------
def test_brazilian_counts_only_as_an_option() -> None:
    assert BRAZILIAN.endgame_draws == ()
    board = Board(BRAZILIAN, "W:WK31,K32:BK2")
    shuffle(board, 12)
    assert board.outcome() is None
    option = get_variant("brazilian-fmjd-endgame")
    assert option is BRAZILIAN_FMJD_ENDGAME and option.quiet_ply_limit == BRAZILIAN.quiet_ply_limit
    assert plies_to_draw(Board(option, "W:WK31,K32:BK2")) == 10


@pytest.mark.parametrize("name", ["english", "suicide"])
def test_english_and_suicide_have_no_counts(name: str) -> None:
    assert get_variant(name).endgame_draws == ()


def test_pop_restores_the_count() -> None:
    board = Board(INTERNATIONAL, "W:WK46,K47,K48:BK3")
    shuffle(board, 3)
    count = board.endgame_count
    board.push(next(m for m in board.legal_moves if not m.is_capture))
    board.pop()
    assert board.endgame_count == count


# -- the search sees a count run out, and the kernel's transition is the board's --------------------
def _searcher(variant: Variant, depth: int) -> Searcher:
    return Searcher(variant, weight_vector(default_weights(variant)), depth, 10**7, True, 16)


def test_search_sees_the_five_move_count_run_out() -> None:
    # White wins in 3 plies (a quiet move, Black's reply, the capture of the lone king):
    # with 3 plies left on the count it still wins; with 2 the draw comes first.
    position = Board(INTERNATIONAL, "W:WK19,K8:BK5").position
    searcher = _searcher(INTERNATIONAL, 5)
    assert searcher.search(position, endgame=EndgameCount(NO_RULE, 0)).score == MATE - 3
    assert searcher.search(position, endgame=EndgameCount(0, 3)).score == MATE - 3
    assert searcher.search(position, endgame=EndgameCount(0, 2)).score == 0
    assert searcher.search(position).score == MATE - 3  # a fresh count: 10 plies left


@pytest.mark.parametrize("variant", [INTERNATIONAL, RUSSIAN, BRAZILIAN_FMJD_ENDGAME], ids=lambda v: v.name)
def test_kernel_count_transition_equals_the_board_rules(variant: Variant) -> None:
    rng = random.Random(5)
    geo = geometry(variant)
    tab = kernel_tables(variant).packed
    crown_rows = geo.promotion_mask(Color.WHITE) | geo.promotion_mask(Color.BLACK)
    for _ in range(3000):
        squares = rng.sample(range(variant.squares), rng.randint(2, 6))
        white = black = kings = 0
        for index, square in enumerate(squares):
            bit = 1 << geo.bit(square)
            if index % 2 == 0:
                white |= bit
            else:
                black |= bit
            if rng.random() < 0.7 or bit & crown_rows:
                kings |= bit
        side = Color(rng.randint(0, 1))
        after = Position(white, black, kings, side)
        before = EndgameCount(rng.randint(-1, len(variant.endgame_draws) - 1), rng.randint(0, 40))
        if before.rule == NO_RULE:
            before = EndgameCount(NO_RULE, 0)
        changed = rng.random() < 0.5
        expected = next_count(variant, before, after, changed)
        got = endgame_next(before.rule, before.left, np.uint64(white), np.uint64(black), np.uint64(kings),
                           int(side), changed, tab)
        assert (expected.rule, expected.left) == tuple(got), Board(variant).fen()
        assert start_count(variant, after).rule == matching_rule(variant, after)[0]


@pytest.mark.parametrize(("variant", "fen"),
                         [(INTERNATIONAL, "W:WK46,K47:BK3"), (RUSSIAN, "W:WK30,K31,K32:BK4")],
                         ids=["international", "russian"])
def test_perft_ignores_the_counts(variant: Variant, fen: str) -> None:
    # perft counts move paths; no draw rule prunes it
    plain = replace(variant, endgame_draws=())
    position = Board(variant, fen).position
    assert kernel_perft(variant, position, 5) == kernel_perft(plain, position, 5)
    assert batch_perft(variant, position, 4) == batch_perft(plain, position, 4)
