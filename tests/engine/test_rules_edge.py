"""Every rule of RULES.md on a hand-built position, through FEN + Board.legal_moves.

Squares (8x8, CONVENTIONS.md): row r from the top holds squares 4r+1..4r+4; even rows use
the odd columns. White moves up (towards 1-4), Black down (towards 29-32). Each position's
expected move set was worked out on paper; the comments give the reasoning.

A tiny, slow, independent reference generator at the bottom of this file is a second
oracle: it is compared with the kernel on the same positions and on random ones, and its
``turkish=False`` mode shows that the Turkish-strike position really tells the rules apart.
"""

from __future__ import annotations

import random
from collections.abc import Iterable

import pytest

from engine.board import Board, Outcome, Termination
from engine.fen import parse_fen
from engine.geometry import geometry
from engine.move import Move
from engine.position import Position
from engine.variants import VARIANTS, CapturePromotion, Color, Variant, get_variant

ENGLISH = get_variant("english")
SUICIDE = get_variant("suicide")
BRAZILIAN = get_variant("brazilian")
RUSSIAN = get_variant("russian")
INTERNATIONAL = get_variant("international")

MoveKey = tuple[tuple[int, ...], tuple[int, ...], bool]


def moves(variant: Variant, fen: str) -> list[Move]:
    return Board(variant, fen).legal_moves


def pdns(variant: Variant, fen: str) -> list[str]:
    """Sorted PDN texts (a list, so duplicates would show)."""
    return sorted(m.pdn for m in moves(variant, fen))


def keys(found: Iterable[Move]) -> list[MoveKey]:
    return sorted((m.path, m.captures, m.promotes) for m in found)


# -- compulsory capture, completion --------------------------------------------------------------
def test_capture_is_compulsory_english() -> None:
    # Black man 14 jumps white 18 to 23; the quiet moves of black man 1 become illegal.
    assert pdns(ENGLISH, "B:W18:B14,1") == ["14x23"]
    assert pdns(ENGLISH, "B:W26:B14,1") == ["1-5", "1-6", "14-17", "14-18"]


def test_capture_is_compulsory_brazilian() -> None:
    # White man 22 takes 18 landing on 15; white man 29's quiet move 29-25 is illegal.
    assert pdns(BRAZILIAN, "W:W22,29:B18") == ["22x15"]


def test_multi_jump_must_be_completed() -> None:
    # 1 jumps 6 -> 10, then must go on over 15 -> 19; stopping on 10 is not a move.
    board = Board(ENGLISH, "B:W6,15:B1")
    assert keys(board.legal_moves) == [((1, 10, 19), (6, 15), False)]
    assert board.parse_move("1x19").path == (1, 10, 19)
    with pytest.raises(ValueError, match="'1x10'"):
        board.parse_move("1x10")


# -- crowning during a capture ---------------------------------------------------------------------
# White man 11 takes 7 landing on 2 (far row). A king on 2 could take 6 (landing 9; a flying
# king also 13).
CROWN_FEN = "W:W11:B6,7"


def test_english_crowning_ends_the_move() -> None:
    assert keys(moves(ENGLISH, CROWN_FEN)) == [((11, 2), (7,), True)]
    assert keys(moves(SUICIDE, CROWN_FEN)) == [((11, 2), (7,), True)]


def test_brazilian_man_passes_far_row_as_man() -> None:
    # Continues as a MAN (backward capture 2x9 over 6), not crowned since it ends on 9.
    assert keys(moves(BRAZILIAN, CROWN_FEN)) == [((11, 2, 9), (6, 7), False)]


def test_russian_man_crowned_mid_capture_continues_as_king() -> None:
    # Crowned on 2, then takes 6 as a flying king and may land on 9 or 13.
    assert keys(moves(RUSSIAN, CROWN_FEN)) == [((11, 2, 9), (6, 7), True), ((11, 2, 13), (6, 7), True)]


def test_brazilian_man_ending_on_far_row_is_crowned() -> None:
    # 11x2 and nothing more to take: crowned.
    assert keys(moves(BRAZILIAN, "W:W11:B7")) == [((11, 2), (7,), True)]


def test_international_man_passes_far_row_as_man() -> None:
    # 10x10: white man 13 (row 2 col 5) takes 8 (row 1 col 4) landing on 2 (row 0 col 3),
    # then goes on backward over 7 (row 1 col 2) to 11 (row 2 col 1): it stays a man.
    assert keys(moves(INTERNATIONAL, "W:W13:B7,8")) == [((13, 2, 11), (7, 8), False)]


def test_quiet_move_to_far_row_promotes() -> None:
    assert keys(moves(ENGLISH, "W:W5:B28")) == [((5, 1), (), True)]
    assert keys(moves(ENGLISH, "B:W5:B28")) == [((28, 32), (), True)]


# -- men capture backward? ---------------------------------------------------------------------------
# White man 15 with a black man 19 diagonally BEHIND it (down-right), landing 24 empty.
def test_english_men_do_not_capture_backward() -> None:
    assert pdns(ENGLISH, "W:W15:B19") == ["15-10", "15-11"]


@pytest.mark.parametrize("variant", [BRAZILIAN, RUSSIAN], ids=lambda v: v.name)
def test_international_rule_men_capture_backward(variant: Variant) -> None:
    assert pdns(variant, "W:W15:B19") == ["15x24"]


def test_international_men_capture_backward() -> None:
    # 10x10: white man 28 (row 5 col 4), black man 33 (row 6 col 5) behind it, landing 39.
    assert pdns(INTERNATIONAL, "W:W28:B33") == ["28x39"]


def test_english_kings_capture_backward() -> None:
    assert pdns(ENGLISH, "W:WK15:B19") == ["15x24"]


# -- short kings vs flying kings --------------------------------------------------------------------
def test_english_king_moves_one_square() -> None:
    assert pdns(ENGLISH, "W:WK18:B1") == ["18-14", "18-15", "18-22", "18-23"]


@pytest.mark.parametrize("variant", [BRAZILIAN, RUSSIAN], ids=lambda v: v.name)
def test_flying_king_moves_any_distance(variant: Variant) -> None:
    # 18 = d4: up-left 14 9 5, up-right 15 11 8 4, down-left 22 25 29, down-right 23 27 32.
    expected = [5, 9, 14, 4, 8, 11, 15, 22, 25, 29, 23, 27, 32]
    assert pdns(variant, "W:WK18:B1") == sorted(f"18-{s}" for s in expected)


def test_english_king_cannot_capture_at_distance() -> None:
    # King 29 (a1) and black man 15 on the long diagonal, 25/22/18 empty between them.
    assert pdns(ENGLISH, "W:WK29:B15") == ["29-25"]


@pytest.mark.parametrize("variant", [BRAZILIAN, RUSSIAN], ids=lambda v: v.name)
def test_flying_king_captures_at_distance_free_landing(variant: Variant) -> None:
    # Nothing follows the capture, so any empty square beyond 15 is a landing: 11, 8, 4.
    assert pdns(variant, "W:WK29:B15") == ["29x11", "29x4", "29x8"]


@pytest.mark.parametrize("variant", [BRAZILIAN, RUSSIAN], ids=lambda v: v.name)
def test_flying_king_must_land_where_capture_continues(variant: Variant) -> None:
    # After taking 15 only landing 11 lets the king go on (over 16 to 20); 8 and 4 are illegal,
    # even in russian where the choice of capture is otherwise free.
    assert keys(moves(variant, "W:WK29:B15,16")) == [((29, 11, 20), (15, 16), False)]


def test_international_flying_king() -> None:
    # 10x10 king 46 (bottom-left corner) on the long diagonal 46 41 37 32 28 23 19 14 10 5;
    # black man 28 -> landings 23 19 14 10 5.
    assert pdns(INTERNATIONAL, "W:WK46:B28") == ["46x10", "46x14", "46x19", "46x23", "46x5"]


# -- majority rule vs free choice ---------------------------------------------------------------------
# White man 22 can take 17 (landing 13, one piece, a KING) or 18 then 11 (22x15x8, two men).
MAJORITY_FEN = "W:W22:BK17,18,11"


def test_majority_capture_brazilian_counts_pieces_not_kings() -> None:
    assert keys(moves(BRAZILIAN, MAJORITY_FEN)) == [((22, 15, 8), (11, 18), False)]


@pytest.mark.parametrize("variant", [RUSSIAN, ENGLISH], ids=lambda v: v.name)
def test_free_choice_of_capture(variant: Variant) -> None:
    assert keys(moves(variant, MAJORITY_FEN)) == [((22, 13), (17,), False), ((22, 15, 8), (11, 18), False)]


def test_majority_capture_international() -> None:
    # 10x10: white man 32 (row 6 col 3) can take 27 -> 21 (one piece), or 28 -> 23 then 18 -> 12 (two).
    assert keys(moves(INTERNATIONAL, "W:W32:B27,28,18")) == [((32, 23, 12), (18, 28), False)]


# -- Turkish strike -------------------------------------------------------------------------------
# King 31; black men 22, 9, 7 around a loop and 18 right behind 22. Route 31x13 (over 22)
# x2 (over 9) then over 7 landing 11/16/20. From 11 the diagonal back down-left runs 15, 18,
# 22: with immediate removal the king would take 18 and land on 22/25/29, but 22 is captured
# and still on the board, so it blocks: the move ends with three pieces taken. The other
# route 31x17 (over 22) x3 (over 7) takes two.
TURKISH_FEN = "W:WK31:B7,18,9,22"


def test_turkish_strike_russian() -> None:
    assert pdns(RUSSIAN, TURKISH_FEN) == ["31x13x2x11", "31x13x2x16", "31x13x2x20", "31x17x3"]


def test_turkish_strike_brazilian_majority() -> None:
    assert pdns(BRAZILIAN, TURKISH_FEN) == ["31x13x2x11", "31x13x2x16", "31x13x2x20"]


def test_turkish_strike_differs_from_immediate_removal() -> None:
    position = parse_fen(RUSSIAN, TURKISH_FEN)
    turkish = reference_moves(RUSSIAN, position)
    immediate = reference_moves(RUSSIAN, position, turkish=False)
    assert turkish != immediate
    assert max(len(m[1]) for m in immediate) == 4  # would take 18 as well
    assert keys(moves(RUSSIAN, TURKISH_FEN)) == sorted(turkish)


def test_captured_piece_blocks_the_way_back() -> None:
    # King 18 between black 15 (up-right) and 25 (down-left). Taking one, it may not run back
    # over the captured (still present) piece to take the other: four single captures.
    assert pdns(BRAZILIAN, "W:WK18:B15,25") == ["18x11", "18x29", "18x4", "18x8"]


# -- what counts as one move -------------------------------------------------------------------
# Black men 22 and 23 (in front of 26) and 14 and 15 (two rows up) surround square 18. A piece
# on 26 can go round it either way: 26x17x10x19x26 or 26x19x10x17x26, same start, end and
# captured set.
RING = (14, 15, 22, 23)


@pytest.mark.parametrize("variant", [ENGLISH, SUICIDE], ids=lambda v: v.name)
def test_english_capture_orders_are_distinct_moves(variant: Variant) -> None:
    board = Board(variant, "W:WK26:B14,15,22,23")
    assert keys(board.legal_moves) == [
        ((26, 17, 10, 19, 26), RING, False),
        ((26, 19, 10, 17, 26), RING, False),
    ]
    with pytest.raises(ValueError, match="ambiguous") as info:
        board.parse_move("26x26")
    assert "26x17x10x19x26" in str(info.value) and "26x19x10x17x26" in str(info.value)


@pytest.mark.parametrize("variant", [BRAZILIAN, RUSSIAN], ids=lambda v: v.name)
def test_fmjd_capture_orders_merge(variant: Variant) -> None:
    # A man (it captures backward) goes round the same ring: one move.
    board = Board(variant, "W:W26:B14,15,22,23")
    (move,) = board.legal_moves
    assert (move.start, move.end, move.captures, move.promotes) == (26, 26, RING, False)
    assert board.parse_move("26x26") == move
    # Either written route names the one move, whichever the generator stored.
    assert board.parse_move("26x17x10x19x26") == move
    assert board.parse_move("26x19x10x17x26") == move
    with pytest.raises(ValueError, match="illegal"):
        board.parse_move("26x17x10x26")


def test_different_captured_sets_stay_distinct_moves() -> None:
    # Black man 2 can go 2x9x18 (over 6, 14) or 2x11x18 (over 7, 15): two moves, and english
    # men cannot go on backward from 18.
    board = Board(ENGLISH, "B:W6,7,14,15:B2")
    assert pdns(ENGLISH, "B:W6,7,14,15:B2") == ["2x11x18", "2x9x18"]
    with pytest.raises(ValueError, match="ambiguous"):
        board.parse_move("2x18")
    # Men that capture backward must go on round the ring back to 2: both orders are one move.
    for variant in (RUSSIAN, BRAZILIAN):
        (move,) = moves(variant, "B:W6,7,14,15:B2")
        assert (move.start, move.end, move.captures) == (2, 2, (6, 7, 14, 15))


# -- outcomes ------------------------------------------------------------------------------------
def test_no_pieces_loses_and_suicide_wins() -> None:
    assert Board(ENGLISH, "B:W18:B").outcome() == Outcome(Color.WHITE, Termination.NO_PIECES)
    assert Board(SUICIDE, "B:W18:B").outcome() == Outcome(Color.BLACK, Termination.NO_PIECES)
    assert Board(BRAZILIAN, "W:W:B5").outcome() == Outcome(Color.BLACK, Termination.NO_PIECES)


def test_no_moves_loses_and_suicide_wins() -> None:
    # Black man 25 is stuck: 29 and 30 are occupied and there is nothing beyond them.
    assert pdns(ENGLISH, "B:W29,30:B25") == []
    assert Board(ENGLISH, "B:W29,30:B25").outcome() == Outcome(Color.WHITE, Termination.NO_MOVES)
    assert Board(SUICIDE, "B:W29,30:B25").outcome() == Outcome(Color.BLACK, Termination.NO_MOVES)


def test_suicide_moves_like_english() -> None:
    for fen in ("B:W18:B14,1", CROWN_FEN, MAJORITY_FEN, "W:WK29:B15", "W:W15:B19"):
        assert keys(moves(SUICIDE, fen)) == keys(moves(ENGLISH, fen))


def test_threefold_repetition() -> None:
    board = Board(ENGLISH, "W:WK32:BK1")
    cycle = ["32-27", "1-6", "27-32", "6-1"]
    for text in cycle:
        board.push_text(text)
        assert board.outcome() is None
    for text in cycle[:-1]:
        board.push_text(text)
        assert board.outcome() is None
    board.push_text(cycle[-1])  # the start position (White to move) for the third time
    assert board.repetitions() == 3
    assert board.outcome() == Outcome(None, Termination.THREEFOLD_REPETITION)
    board.pop()
    assert board.outcome() is None


def _quiet_walk(board: Board, plies: int) -> None:
    """Play ``plies`` king moves that never allow a capture or repeat a position three times."""
    for _ in range(plies):
        best: tuple[int, Move] | None = None
        for move in board.legal_moves:
            assert not move.is_capture
            board.push(move)
            reply_captures = any(m.is_capture for m in board.legal_moves)
            seen = board.repetitions()
            board.pop()
            if not reply_captures and seen < 3 and (best is None or seen < best[0]):
                best = (seen, move)
        assert best is not None, "walk got stuck"
        board.push(best[1])


# Two kings each, far apart, so that shuffling never has to capture.
QUIET_FENS = {"english": "W:WK29,K30:BK3,K4", "suicide": "W:WK29,K30:BK3,K4",
              "brazilian": "W:WK29,K30:BK3,K4", "russian": "W:WK29,K30:BK3,K4",
              "international": "W:WK46,K47:BK4,K5"}


@pytest.mark.parametrize("variant", VARIANTS, ids=lambda v: v.name)
def test_quiet_ply_limit(variant: Variant) -> None:
    expected = {"english": 80, "suicide": 80, "brazilian": 50, "russian": 30, "international": 50}
    assert variant.quiet_ply_limit == expected[variant.name]
    board = Board(variant, QUIET_FENS[variant.name])
    _quiet_walk(board, variant.quiet_ply_limit - 1)
    assert board.quiet_plies == variant.quiet_ply_limit - 1
    assert board.outcome() is None
    _quiet_walk(board, 1)
    assert board.outcome() == Outcome(None, Termination.QUIET_PLY_LIMIT)


def test_man_move_and_capture_reset_quiet_count() -> None:
    board = Board(ENGLISH, "W:WK29,22:BK4,10")
    board.push_text("29-25")
    board.push_text("4-8")
    assert board.quiet_plies == 2
    board.push_text("22-18")  # a man move resets the count
    assert board.quiet_plies == 0
    board.push_text("8-12")
    assert board.quiet_plies == 1
    board.push_text("25-21")
    board.push_text("12-16")
    assert board.quiet_plies == 3
    board.push_text("18-14")
    board.push_text("10x17")  # a capture resets the count
    assert board.quiet_plies == 0
    board.pop()
    board.pop()
    assert board.quiet_plies == 3
    board.pop()
    board.pop()
    assert board.quiet_plies == 1


def test_ply_cap_is_its_own_termination() -> None:
    board = Board(ENGLISH, ply_cap=4)
    for _ in range(3):
        board.push(board.legal_moves[0])
        assert board.outcome() is None
    board.push(board.legal_moves[0])
    assert board.outcome() == Outcome(None, Termination.PLY_CAP)


def test_rules_draw_wins_over_ply_cap() -> None:
    board = Board(ENGLISH, "W:WK32:BK1", ply_cap=8)
    for text in ["32-27", "1-6", "27-32", "6-1"] * 2:
        board.push_text(text)
    assert board.outcome() == Outcome(None, Termination.THREEFOLD_REPETITION)


def test_outcome_reads_variant_fields() -> None:
    # A custom variant: english moves with inverted outcome and a tiny quiet limit.
    from dataclasses import replace

    custom = replace(ENGLISH, name="custom", outcome_inverted=True, quiet_ply_limit=2)
    board = Board(custom, "W:WK32:BK1")
    board.push_text("32-27")
    board.push_text("1-6")
    assert board.outcome() == Outcome(None, Termination.QUIET_PLY_LIMIT)
    assert Board(custom, "B:W29,30:B25").outcome() == Outcome(Color.BLACK, Termination.NO_MOVES)


# -- tiny reference generator (independent, slow) --------------------------------------------
_DIRECTIONS = ((-1, -1), (-1, 1), (1, -1), (1, 1))
_Square = tuple[int, int]


def reference_moves(variant: Variant, position: Position, turkish: bool = True) -> list[MoveKey]:
    """Legal moves as (path, captures, promotes), written from RULES.md on (row, col) squares.

    ``turkish=False`` removes captured pieces at once (a rule NOT used by any variant here).
    Moves with equal (start, end, captured set) are merged unless distinct orders count.
    """
    n = variant.board_size
    geo = geometry(variant)
    board: dict[_Square, tuple[Color, bool]] = {}
    for index in range(geo.squares):
        bit = 1 << geo.bit(index)
        rc = (int(geo.row_of_square[index]), int(geo.col_of_square[index]))
        if position.occupied & bit:
            color = Color.WHITE if position.white & bit else Color.BLACK
            board[rc] = (color, bool(position.kings & bit))
    side = position.side_to_move
    far_row = 0 if side == Color.WHITE else n - 1
    forward = -1 if side == Color.WHITE else 1
    flying = variant.flying_kings

    def number(rc: _Square) -> int:
        return rc[0] * (n // 2) + rc[1] // 2 + 1

    def on_board(r: int, c: int) -> bool:
        return 0 <= r < n and 0 <= c < n

    found: list[MoveKey] = []

    def search(start: _Square, at: _Square, king: bool, was_king: bool, taken: frozenset[_Square],
               path: list[_Square], gone: frozenset[_Square], record: bool) -> bool:
        """Extend a capture from ``at``; records finished sequences; True if any jump exists."""

        def blocked(rc: _Square) -> bool:
            return rc in board and rc != start and rc not in gone

        any_jump = False
        for dr, dc in _DIRECTIONS:
            if not king and not variant.men_capture_backward and dr != forward:
                continue
            r, c = at[0] + dr, at[1] + dc
            while king and flying and on_board(r, c) and not blocked((r, c)):
                r, c = r + dr, c + dc
            victim = (r, c)
            if not on_board(r, c) or not blocked(victim) or board[victim][0] == side or victim in taken:
                continue
            landings = []
            r, c = r + dr, c + dc
            while on_board(r, c) and not blocked((r, c)):
                landings.append((r, c))
                if not (king and flying):
                    break
                r, c = r + dr, c + dc
            options = []
            for land in landings:
                now_king, stop = king, False
                if not king and land[0] == far_row:
                    if variant.promotion_during_capture == CapturePromotion.STOP:
                        stop = True
                    elif variant.promotion_during_capture == CapturePromotion.CONTINUE_AS_KING:
                        now_king = True
                new_gone = gone if turkish else gone | {victim}
                options.append((land, now_king, stop, taken | {victim}, new_gone))
            if king and flying:
                going_on = [o for o in options if search(start, o[0], o[1], was_king, o[3], [], o[4], False)]
                options = going_on or options
            for land, now_king, stop, new_taken, new_gone in options:
                any_jump = True
                if not record:
                    return True
                longer = [*path, land]
                if stop or not search(start, land, now_king, was_king, new_taken, longer, new_gone, True):
                    promotes = not was_king and (now_king or land[0] == far_row)
                    found.append((tuple(number(p) for p in [*path, land]),
                                  tuple(sorted(number(v) for v in new_taken)), promotes))
        return any_jump

    for rc, (color, king) in sorted(board.items()):
        if color == side:
            search(rc, rc, king, king, frozenset(), [rc], frozenset(), True)
    if found:
        if variant.majority_capture:
            most = max(len(m[1]) for m in found)
            found = [m for m in found if len(m[1]) == most]
        if not variant.distinct_capture_orders:
            merged: dict[tuple[int, int, tuple[int, ...]], MoveKey] = {}
            for m in found:
                merged.setdefault((m[0][0], m[0][-1], m[1]), m)
            found = list(merged.values())
        return found
    quiet: list[MoveKey] = []
    for rc, (color, king) in sorted(board.items()):
        if color != side:
            continue
        for dr, dc in _DIRECTIONS:
            if not king and dr != forward:
                continue
            r, c = rc[0] + dr, rc[1] + dc
            while on_board(r, c) and (r, c) not in board:
                quiet.append(((number(rc), number((r, c))), (), not king and r == far_row))
                if not (king and flying):
                    break
                r, c = r + dr, c + dc
    return quiet


def _comparable(variant: Variant, found: Iterable[MoveKey]) -> list[tuple[object, ...]]:
    """Merged variants may pick any route as the representative path: compare ends + captures."""
    if variant.distinct_capture_orders:
        return sorted(found)
    return sorted((m[0][0], m[0][-1], m[1], m[2]) for m in found)


EDGE_FENS = [
    "B:W18:B14,1", "W:W22,29:B18", "B:W6,15:B1", CROWN_FEN, "W:W11:B7", "W:W5:B28", "W:W15:B19",
    "W:WK15:B19", "W:WK18:B1", "W:WK29:B15", "W:WK29:B15,16", MAJORITY_FEN, TURKISH_FEN,
    "W:WK18:B15,25", "W:WK26:B14,15,22,23", "W:W26:B14,15,22,23", "B:W6,7,14,15:B2", "B:W29,30:B25",
]


@pytest.mark.parametrize("variant", [v for v in VARIANTS if v.board_size == 8], ids=lambda v: v.name)
def test_reference_agrees_on_edge_positions(variant: Variant) -> None:
    for fen in EDGE_FENS:
        position = parse_fen(variant, fen)
        assert _comparable(variant, keys(moves(variant, fen))) == _comparable(
            variant, reference_moves(variant, position)
        ), fen


@pytest.mark.parametrize("variant", VARIANTS, ids=lambda v: v.name)
def test_reference_agrees_on_random_positions(variant: Variant) -> None:
    rng = random.Random(20240 + variant.pdn_gametype)
    for _game in range(20):
        board = Board(variant)
        for _ply in range(150):
            legal = board.legal_moves
            assert _comparable(variant, keys(legal)) == _comparable(
                variant, reference_moves(variant, board.position)
            ), board.fen()
            if not legal:
                break
            board.push(rng.choice(legal))
