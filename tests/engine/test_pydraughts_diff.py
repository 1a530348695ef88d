"""Differential test: our legal moves vs pydraughts (a test-only dependency) on random positions.

Positions come from seeded random play through our Board. Each is sent to pydraughts as a FEN
(algebraic for brazilian/russian, because pydraughts numbers those boards from the other
side; numeric squares agree for english and international) and both move lists are compared
as (path, captured set, resulting position), the resulting position also read back from
pydraughts' FEN. Suicide moves exactly as english, so it is checked against pydraughts'
english rules.

Counting differences that are NOT disagreements about the rules:
- english: both list every capture order separately, so the lists must match exactly;
- brazilian/russian/international: pydraughts does not merge capture orders with the same
  start, end and captured set (we do, FMJD convention) and may pick other intermediate landing
  squares, so those are compared as sets of (start, end, captured set, result).
"""

from __future__ import annotations

import random
from collections.abc import Iterator

import pytest

draughts = pytest.importorskip("draughts")
convert = pytest.importorskip("draughts.convert")

from engine.board import Board  # noqa: E402
from engine.fen import parse_fen  # noqa: E402
from engine.notation import parse_square  # noqa: E402
from engine.position import Position, apply_move  # noqa: E402
from engine.variants import Variant, get_variant  # noqa: E402

PYDRAUGHTS_NAME = {
    "english": "english",
    "suicide": "english",
    "brazilian": "brazilian",
    "russian": "russian",
    "international": "standard",
}

Entry = tuple[tuple[int, ...], tuple[int, ...], Position]


def _our_moves(board: Board) -> list[Entry]:
    out = []
    for move in board.legal_moves:
        after = apply_move(board.position, move.from_bit, move.to_bit, move.captured, move.promotes)
        out.append((move.path, move.captures, after))
    return out


def _their_square(variant: Variant, number: int) -> int:
    """Our square number for pydraughts' numeric square (its own numbering on 8x8 FMJD boards)."""
    if variant.algebraic_notation:
        name = convert._numeric_to_algebraic_square(str(number), variant.squares_per_row)
        return parse_square(variant, name)
    return number


def _their_moves(board: Board) -> list[Entry]:
    variant = board.variant
    fen = board.fen(algebraic=variant.algebraic_notation)
    theirs = draughts.Board(variant=PYDRAUGHTS_NAME[variant.name], fen=fen)
    out = []
    for move in theirs.legal_moves():
        path = tuple(_their_square(variant, s) for s in move.steps_move)
        captures = tuple(sorted(_their_square(variant, s) for s in (move.captures or [])))
        theirs.push(move)
        after = parse_fen(variant, theirs.fen)
        theirs.pop()
        out.append((path, captures, after))
    return out


def _comparable(variant: Variant, entries: list[Entry]) -> object:
    if variant.distinct_capture_orders:
        return sorted(entries, key=lambda e: (e[0], e[1]))
    return {(e[0][0], e[0][-1], e[1], e[2]) for e in entries}


def _positions(variant: Variant, seed: int, count: int) -> Iterator[Board]:
    """``count`` boards sampled (one in four) from seeded random games capped at 200 plies."""
    rng = random.Random(seed)
    produced = 0
    while True:
        board = Board(variant, ply_cap=200)
        while board.outcome() is None:
            if rng.random() < 0.25:
                yield board.copy()
                produced += 1
                if produced >= count:
                    return
            board.push(rng.choice(board.legal_moves))


def _check(variant_name: str, seed: int, count: int) -> None:
    variant = get_variant(variant_name)
    checked = 0
    for board in _positions(variant, seed, count):
        ours = _our_moves(board)
        theirs = _their_moves(board)
        if not variant.distinct_capture_orders:
            ends = [(p[0], p[-1], c) for p, c, _ in ours]
            assert len(ends) == len(set(ends)), f"unmerged duplicate moves in {board.fen()}"
        assert _comparable(variant, ours) == _comparable(variant, theirs), board.fen()
        checked += 1
    assert checked == count


@pytest.mark.parametrize("variant", ["english", "suicide", "brazilian", "russian", "international"])
def test_matches_pydraughts(variant: str) -> None:
    _check(variant, seed=1, count=80)


@pytest.mark.slow
@pytest.mark.parametrize("variant", ["english", "brazilian", "russian", "international"])
def test_matches_pydraughts_many(variant: str) -> None:
    _check(variant, seed=12345, count=3000)


@pytest.mark.parametrize(
    ("variant", "fen"),
    [
        ("russian", "W:WK31:B7,18,9,22"),  # Turkish strike
        ("brazilian", "W:WK31:B7,18,9,22"),
        ("russian", "W:W11:B6,7"),  # crowned mid-capture, continues as king
        ("brazilian", "W:W11:B6,7"),  # passes the far row as a man
        ("english", "W:W11:B6,7"),  # crowning ends the move
        ("english", "W:WK26:B14,15,22,23"),  # two capture orders
        ("brazilian", "W:WK29:B15,16"),  # landing restriction
        ("international", "W:W32:B27,28,18"),  # majority
        ("international", "W:W13:B7,8"),
    ],
)
def test_edge_positions_match_pydraughts(variant: str, fen: str) -> None:
    board = Board(variant, fen)
    rules = board.variant
    assert _comparable(rules, _our_moves(board)) == _comparable(rules, _their_moves(board))


# -- PDN interoperability ----------------------------------------------------------------------
@pytest.mark.parametrize("variant", ["english", "brazilian", "russian", "international"])
def test_pdn_we_write_reads_in_pydraughts(variant: str) -> None:
    from engine.pdn import format_game, game_from_board

    pdn_module = pytest.importorskip("draughts.PDN")
    rng = random.Random(5)
    board = Board(variant, ply_cap=60)
    while board.outcome() is None:
        board.push(rng.choice(board.legal_moves))
    algebraic = board.variant.algebraic_notation  # pydraughts numbers 8x8 FMJD boards differently
    game = game_from_board(board, tags={"Event": "interop"}, algebraic=algebraic)
    (theirs,) = pdn_module.PDNReader(pdn_text=format_game(game)).games
    assert theirs.moves == game.moves
    assert theirs.game_ending == game.result
    assert theirs.variant == PYDRAUGHTS_NAME[variant]


@pytest.mark.parametrize("variant", ["english", "brazilian", "russian", "international"])
def test_pdn_pydraughts_writes_reads_here(variant: str, tmp_path: object) -> None:
    from pathlib import Path

    from engine.pdn import read_pdn

    pdn_module = pytest.importorskip("draughts.PDN")
    rng = random.Random(6)
    theirs = draughts.Board(variant=PYDRAUGHTS_NAME[variant])
    for _ in range(40):
        legal = theirs.legal_moves()
        if not legal:
            break
        theirs.push(rng.choice(legal))
    path = Path(str(tmp_path)) / "theirs.pdn"
    pdn_module.PDNWriter(str(path), board=theirs, game_ending="*")
    (game,) = read_pdn(path)
    board = game.replay()
    assert board.variant is get_variant(variant)
    assert board.ply == len(theirs.move_stack)
    assert board.position == parse_fen(board.variant, theirs.fen)
