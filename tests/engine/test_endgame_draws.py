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
from engine.batch.playout import _endgame_next
from engine.batch.positions import PositionBatch
from engine.board import Board, Outcome, Termination
from engine.endgame import NO_RULE, EndgameCount, main_road_mask, matching_rule, next_count, start_count
from engine.features import default_weights, weight_vector
from engine.geometry import geometry
from engine.kernel.endgame import endgame_expired, endgame_next
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


# -- russian, FMJD-64 rules art. 7.2: every count from when the balance of forces arose -----------
# squares: 1-4 = b8 d8 f8 h8 (top row), 29-32 = a1 c1 e1 g1; the main road a1-h8 is
# 29, 25, 22, 18, 15, 11, 8, 4
def _lone_king_on_road(board: Board, move: Move) -> bool:
    return bool(main_road_mask(RUSSIAN) >> geometry(RUSSIAN).bit(move.end - 1) & 1)


def _off_road(board: Board, move: Move) -> bool:
    """White's men stay home; the lone (black) king keeps off the main road."""
    return _keep_men_home(board, move) if board.turn == Color.WHITE else not _lone_king_on_road(board, move)


def _on_road(board: Board, move: Move) -> bool:
    """White's men stay home; the lone (black) king stays on the main road."""
    return _keep_men_home(board, move) if board.turn == Color.WHITE else _lone_king_on_road(board, move)


def _road_until(ply: int, back_at: int | None = None) -> MoveFilter:
    """The lone king stays on the main road before ``ply``, then off it (on again from ``back_at``)."""
    def allow(board: Board, move: Move) -> bool:
        if board.turn == Color.WHITE:
            return True
        on = board.ply < ply or (back_at is not None and board.ply >= back_at)
        return _lone_king_on_road(board, move) == on
    return allow


def _men_when_quiet(board: Board, move: Move) -> bool:
    """Kings move, except that a side with men moves one once 20 plies passed without a man move
    (so the quiet-ply limit, 15 moves of kings only, never comes first)."""
    own_men = board.position.men(board.turn)
    is_man = bool(own_men >> move.from_bit & 1)
    return is_man if board.quiet_plies >= 20 and own_men else not is_man


# 7.2.4: three kings (or more) against a lone king: the stronger side's 15th move
@pytest.mark.parametrize(("fen", "plies"), [("W:WK30,K31,K32:BK1", 29), ("B:WK30,K31,K32:BK1", 30),
                                            ("W:WK30,K31,K32,K21:BK1", 29)])
def test_russian_three_kings_fifteen_moves(fen: str, plies: int) -> None:
    assert plies_to_draw(Board(RUSSIAN, fen), _off_road) == plies


def test_russian_four_kings_have_no_main_road_count() -> None:
    # 7.2.7 names three pieces; with four kings only the 15 moves of 7.2.4 count
    board = Board(RUSSIAN, "W:WK30,K31,K32,K21:BK4")
    assert board.endgame_count.road_rule == NO_RULE
    assert plies_to_draw(board, _on_road) == 29


# 7.2.7: three kings, two kings and a man, or a king and two men against a lone king on the main road
@pytest.mark.parametrize(("fen", "plies"), [("W:WK30,K31,K32:BK4", 9), ("B:WK30,K31,K32:BK29", 10),
                                            ("W:WK30,K31,21:BK4", 9), ("W:WK30,21,24:BK4", 9)])
def test_russian_lone_king_on_the_main_road_five_moves(fen: str, plies: int) -> None:
    board = Board(RUSSIAN, fen)
    assert board.endgame_count.road_left == plies
    assert plies_to_draw(board, _on_road) == plies


def test_russian_leaving_the_main_road_ends_its_count() -> None:
    # the lone king leaves the road on its third move: the 15 moves from when the material
    # arose (7.2.4) still run, the 5 on the road no longer do
    board = Board(RUSSIAN, "W:WK30,K31,K32:BK4")
    allow = _road_until(5)
    shuffle(board, 5, allow)
    assert board.endgame_count == EndgameCount(1, 24, 4, 4)
    shuffle(board, 1, allow)
    assert board.endgame_count == EndgameCount(1, 23)
    assert plies_to_draw(board, allow) == 23


def test_russian_main_road_count_starts_afresh_when_the_king_returns() -> None:
    board = Board(RUSSIAN, "W:WK30,K31,K32:BK4")
    # off the road with the move on ply 5, back on it with the move on ply 7: 9 more plies from there
    assert plies_to_draw(board, _road_until(5, back_at=7)) == 8 + 9
    assert board.endgame_count == EndgameCount(1, 29 - 17, 4, 0)


# 7.2.8: two kings, a king and a man, or a king against a lone king: the stronger side's 5th move
@pytest.mark.parametrize(("fen", "plies"), [("W:WK30,K31:BK1", 9), ("B:WK30,K31:BK1", 10),
                                            ("W:WK30,21:BK1", 9), ("W:WK30:BK1", 10)])
def test_russian_two_pieces_against_a_king_five_moves(fen: str, plies: int) -> None:
    assert plies_to_draw(Board(RUSSIAN, fen), _keep_men_home) == plies


def test_russian_crowning_restarts_the_count() -> None:
    # a king and a man against a king: the man crowns (a7-b8), two kings now: 5 moves afresh
    board = Board(RUSSIAN, "W:WK30,5:BK20")
    assert board.endgame_count == EndgameCount(0, 9)
    board.push_text("5-1")
    assert board.endgame_count == EndgameCount(0, 10)
    assert plies_to_draw(board) == 10


def test_russian_capture_restarts_the_count() -> None:
    # 4 kings v 1: a capture changes the material, so the 15 moves count afresh from it
    board = Board(RUSSIAN, "W:WK30,K31,K32,K21:BK1")
    shuffle(board, 10, _off_road)
    offer_and_take(board)
    assert _material(board) == (3, 1) and board.turn == Color.WHITE
    assert board.endgame_count.rule == 1 and board.endgame_count.left == 29
    on_road = main_road_mask(RUSSIAN) & board.position.black
    assert board.endgame_count.road_left == (9 if on_road else 0)


# 7.2.6: both sides have kings and no capture or crowning: 30 moves (4, 5 pieces), 60 (6, 7 pieces)
@pytest.mark.parametrize(("fen", "plies"), [("W:WK30,28:BK1,5", 60), ("B:WK30,28:BK1,5", 60),
                                            ("W:WK30,28,K32:BK1,5", 60), ("W:WK30,28,K31:BK1,5,K3", 120)])
def test_russian_both_sides_with_kings(fen: str, plies: int) -> None:
    # men move now and then: that resets the quiet-ply count, not this one
    board = Board(RUSSIAN, fen)
    assert board.endgame_count.left == plies
    assert plies_to_draw(board, _men_when_quiet, limit=130) == plies
    replay, men_moves = Board(RUSSIAN, fen), 0
    for move in board.move_stack:
        men_moves += not replay.position.kings >> move.from_bit & 1
        replay.push(move)
    assert men_moves > 0


def test_russian_both_kings_count_restarts_on_a_crowning_or_a_capture() -> None:
    board = Board(RUSSIAN, "W:WK30,5:BK20,12")  # a king and a man each
    board.push_text("5-1")  # crowns: two kings and the man against a king and a man
    assert board.endgame_count == EndgameCount(2, 60)
    board = Board(RUSSIAN, "W:WK30,K31,K32:BK1,14")  # three kings against a king and a man
    assert board.endgame_count == EndgameCount(2, 60)
    board.push(next(m for m in board.legal_moves if m.is_capture))  # takes the man: 7.2.4 afresh
    assert board.endgame_count == EndgameCount(1, 30)


def test_russian_lone_king_against_men_only_has_no_count() -> None:
    assert Board(RUSSIAN, "W:W21,22,23:BK1").endgame_count == EndgameCount(NO_RULE, 0)
    assert Board(RUSSIAN, "W:W21,22,23,24:BK1,5").endgame_count.rule == NO_RULE  # kings on one side only


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


def test_search_sees_the_russian_five_move_count_run_out() -> None:
    # 7.2.8, two kings against a king: the same win in 3 plies, drawn with 2 plies left
    position = Board(RUSSIAN, "W:WK8,K32:BK29").position
    searcher = _searcher(RUSSIAN, 5)
    assert searcher.search(position, endgame=EndgameCount(0, 3)).score == MATE - 3
    assert searcher.search(position, endgame=EndgameCount(0, 2)).score == 0
    assert searcher.search(position).score == MATE - 3


def test_search_sees_a_capture_restart_the_russian_count() -> None:
    # White gives a king up and takes the lone king that took it: the capture starts 7.2.8
    # afresh (two kings v one becomes a king v one), so 2 plies left do not stop the win
    position = Board(RUSSIAN, "W:WK25,K28:BK1").position
    searcher = _searcher(RUSSIAN, 5)
    result = searcher.search(position, endgame=EndgameCount(0, 2))
    assert result.score == MATE - 3 and len(result.pv) == 3
    assert result.pv[1].captured  # Black's reply is the forced capture


@pytest.mark.parametrize(("fen", "count"), [
    ("W:WK30,K31,K32:BK4", EndgameCount(1, 29, 4, 1)),  # 7.2.7 on the main road: the road slot
    ("W:WK30,K31,K32:BK1", EndgameCount(1, 1)),  # 7.2.4
    ("W:WK29,K32:BK4,5", EndgameCount(2, 1)),  # 7.2.6 (White has no capture or crowning here)
])
def test_search_sees_every_russian_count_run_out(fen: str, count: EndgameCount) -> None:
    # one ply left: every move of White's ends the game drawn, whatever the material says
    board = Board(RUSSIAN, fen)
    assert not any(m.is_capture or m.promotes for m in board.legal_moves)
    searcher = _searcher(RUSSIAN, 4)
    assert searcher.search(board.position, endgame=count).score == 0
    assert searcher.search(board.position, endgame=replace(count, left=40, road_rule=NO_RULE)).score > 100


def _random_position(variant: Variant, rng: random.Random) -> Position:
    geo = geometry(variant)
    crown_rows = geo.promotion_mask(Color.WHITE) | geo.promotion_mask(Color.BLACK)
    squares = rng.sample(range(variant.squares), rng.randint(2, 8))
    white = black = kings = 0
    for index, square in enumerate(squares):
        bit = 1 << geo.bit(square)
        if index % 2 == 0 or (index > 3 and rng.random() < 0.3):
            white |= bit
        else:
            black |= bit
        if rng.random() < 0.6 or bit & crown_rows:
            kings |= bit
    return Position(white, black, kings, Color(rng.randint(0, 1)))


def _random_count(variant: Variant, rng: random.Random) -> EndgameCount:
    def slot() -> tuple[int, int]:
        rule = rng.randint(-1, len(variant.endgame_draws) - 1)
        return (NO_RULE, 0) if rule == NO_RULE else (rule, rng.randint(0, 130))
    return EndgameCount(*slot(), *slot())


@pytest.mark.parametrize("variant", [INTERNATIONAL, RUSSIAN, BRAZILIAN_FMJD_ENDGAME], ids=lambda v: v.name)
def test_kernel_and_batch_count_transitions_equal_the_board_rules(variant: Variant) -> None:
    rng = random.Random(5)
    tab = kernel_tables(variant).packed
    cases = [(_random_position(variant, rng), _random_count(variant, rng), rng.random() < 0.5)
             for _ in range(3000)]
    for after, before, changed in cases:
        expected = next_count(variant, before, after, changed)
        w, b, k = np.uint64(after.white), np.uint64(after.black), np.uint64(after.kings)
        side = int(after.side_to_move)
        got = (*endgame_next(before.rule, before.left, w, b, k, side, changed, False, tab),
               *endgame_next(before.road_rule, before.road_left, w, b, k, side, changed, True, tab))
        assert (expected.rule, expected.left, expected.road_rule, expected.road_left) == got, after
        assert start_count(variant, after).rule == matching_rule(variant, after)[0]
    batch = PositionBatch.from_positions([after for after, _, _ in cases])
    changed_all = np.array([changed for _, _, changed in cases])
    for road in (False, True):
        rules = np.array([(c.road_rule if road else c.rule) for _, c, _ in cases], dtype=np.int64)
        lefts = np.array([(c.road_left if road else c.left) for _, c, _ in cases], dtype=np.int64)
        new_rule, new_left = _endgame_next(variant, batch, rules, lefts, changed_all, road)
        want = [next_count(variant, c, after, changed) for after, c, changed in cases]
        assert new_rule.tolist() == [(c.road_rule if road else c.rule) for c in want]
        assert new_left.tolist() == [(c.road_left if road else c.left) for c in want]


def _played(variant: Variant, fen: str, allow: MoveFilter | None, before: int = 0) -> Board:
    """A game from ``fen`` to its draw by a count (after ``before`` plies, a sacrifice taken)."""
    board = Board(variant, fen)
    if before:
        shuffle(board, before, allow)
        offer_and_take(board)
    plies_to_draw(board, allow, limit=130)
    return board


@pytest.mark.parametrize(("variant", "fen", "allow", "before"), [
    (RUSSIAN, "W:WK30,28:BK1,5", _men_when_quiet, 0),  # 7.2.6, 4 pieces
    (RUSSIAN, "W:WK30,28,K31:BK1,5,K3", _men_when_quiet, 0),  # 7.2.6, 6 pieces
    (RUSSIAN, "W:WK30,K31,K32:BK4", _road_until(5, back_at=7), 0),  # 7.2.7 off and on the road
    (RUSSIAN, "W:WK30,5:BK20", None, 0),  # 7.2.8 with a crowning
    (RUSSIAN, "W:WK30,K31,K32,K21:BK1", _off_road, 10),  # 7.2.4 with a capture
    (INTERNATIONAL, "W:WK46,K47,K48:BK3", None, 24),  # art. 6.3 handed over to 6.4
], ids=["7.2.6-4", "7.2.6-6", "7.2.7", "7.2.8", "7.2.4", "fmjd-6.3-6.4"])
def test_batch_and_kernel_counts_follow_a_board_game_to_its_draw(
    variant: Variant, fen: str, allow: MoveFilter | None, before: int
) -> None:
    # the generators' count transitions, fed the moves of a game the board ended by a count,
    # run out on the same ply
    board = _played(variant, fen, allow, before)
    tab = kernel_tables(variant).packed
    replay = Board(variant, fen)
    count = replay.endgame_count
    for move in board.move_stack:
        changed = move.is_capture or move.promotes
        replay.push(move)
        after = replay.position
        w, b, k = np.uint64(after.white), np.uint64(after.black), np.uint64(after.kings)
        side = int(after.side_to_move)
        kernel = (*endgame_next(count.rule, count.left, w, b, k, side, changed, False, tab),
                  *endgame_next(count.road_rule, count.road_left, w, b, k, side, changed, True, tab))
        one = PositionBatch.from_positions([after])
        flag = np.array([changed])
        before_slots = ((count.rule, count.left, False), (count.road_rule, count.road_left, True))
        slots = [_endgame_next(variant, one, np.array([rule]), np.array([left]), flag, road)
                 for rule, left, road in before_slots]
        batch = tuple(int(x[0]) for slot in slots for x in slot)
        count = replay.endgame_count
        assert kernel == batch == (count.rule, count.left, count.road_rule, count.road_left)
        assert endgame_expired(*kernel) == count.expired == (replay.outcome() == DRAWN)
    assert count.expired


@pytest.mark.parametrize(("variant", "fen"),
                         [(INTERNATIONAL, "W:WK46,K47:BK3"), (RUSSIAN, "W:WK30,K31,K32:BK4"),
                          (RUSSIAN, "W:WK29,28,K32:BK4,5,K1"), (RUSSIAN, "W:WK30,K31,21:BK4")],
                         ids=["international", "russian-road", "russian-both-kings", "russian-road-man"])
def test_perft_ignores_the_counts(variant: Variant, fen: str) -> None:
    # perft counts move paths; no draw rule prunes it
    plain = replace(variant, endgame_draws=())
    position = Board(variant, fen).position
    assert kernel_perft(variant, position, 5) == kernel_perft(plain, position, 5)
    assert batch_perft(variant, position, 4) == batch_perft(plain, position, 4)
