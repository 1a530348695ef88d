"""Lockstep random games: reproducible, and every ending agrees with Board's adjudication."""

from __future__ import annotations

import numpy as np
import pytest

from engine.batch.playout import Termination, _Lockstep, random_games, random_positions
from engine.batch.positions import PositionBatch
from engine.board import Board
from engine.board import Termination as BoardTermination
from engine.errors import DraughtsError
from engine.position import initial_position
from engine.variants import VARIANTS, Color, get_variant

_BOARD_TERM = {
    BoardTermination.NO_PIECES: Termination.NO_PIECES,
    BoardTermination.NO_MOVES: Termination.NO_MOVES,
    BoardTermination.THREEFOLD_REPETITION: Termination.THREEFOLD_REPETITION,
    BoardTermination.QUIET_PLY_LIMIT: Termination.QUIET_PLY_LIMIT,
    BoardTermination.PLY_CAP: Termination.PLY_CAP,
    BoardTermination.ENDGAME_MOVE_LIMIT: Termination.ENDGAME_MOVE_LIMIT,
}


def test_reproducible_and_seed_dependent() -> None:
    variant = get_variant("english")
    a = random_games(variant, 300, seed=1, max_plies=200)
    b = random_games(variant, 300, seed=1, max_plies=200)
    c = random_games(variant, 300, seed=2, max_plies=200)
    for field in ("result", "termination", "plies"):
        assert np.array_equal(getattr(a, field), getattr(b, field))
    assert a.final.to_positions() == b.final.to_positions()
    assert not np.array_equal(a.plies, c.plies)


@pytest.mark.parametrize("name", [v.name for v in VARIANTS])
def test_results_are_consistent(name: str) -> None:
    variant = get_variant(name)
    res = random_games(variant, 500, seed=3, max_plies=150)
    assert len(res) == 500 and np.all(res.termination > 0)
    decisive = (res.termination == Termination.NO_PIECES) | (res.termination == Termination.NO_MOVES)
    assert np.all((res.result != 0) == decisive)
    assert np.all(res.plies <= 150)
    assert np.all(res.plies[res.termination == Termination.PLY_CAP] == 150)
    # the side to move in the final position is the one that ran out of pieces or moves
    stuck_white = res.final.side[decisive] == int(Color.WHITE)
    white_won = res.result[decisive] == 1
    assert np.all(white_won == (stuck_white == variant.outcome_inverted))
    no_pieces = res.termination == Termination.NO_PIECES
    own = np.where(res.final.side == 0, res.final.white, res.final.black)
    assert np.all((own[no_pieces]) == 0) and np.all(own[res.termination == Termination.NO_MOVES] != 0)


_DECISIVE = {Termination.NO_PIECES}
_DRAWS = {Termination.THREEFOLD_REPETITION, Termination.QUIET_PLY_LIMIT}


@pytest.mark.parametrize(("name", "games", "max_plies", "fen", "expect"), [
    ("english", 150, 300, None, _DECISIVE | {Termination.NO_MOVES, Termination.THREEFOLD_REPETITION}),
    ("suicide", 60, 300, None, _DECISIVE | {Termination.NO_MOVES}),
    ("brazilian", 80, 250, None, _DECISIVE | {Termination.NO_MOVES}),
    ("international", 30, 120, None, _DECISIVE | {Termination.PLY_CAP}),
    # king endgames: repetitions and quiet-ply draws
    ("english", 60, 300, "W:WK29,K30,K31:BK2,K3,K4", _DECISIVE | _DRAWS),
    # russian two kings each: the first capture leaves two kings v one, 5 moves (FMJD-64 art. 7.2.8)
    ("russian", 60, 300, "W:WK29,K30:BK4,K3", _DECISIVE | {Termination.ENDGAME_MOVE_LIMIT}),
    # small-endgame counts (FMJD art. 6.3, 6.4; russian three kings v one, on and off the main road)
    ("international", 80, 300, "W:WK46,K47,K48:BK3", {Termination.ENDGAME_MOVE_LIMIT}),
    ("international", 80, 300, "W:WK46,K47,36,16:BK3,K4", {Termination.ENDGAME_MOVE_LIMIT}),
    ("russian", 80, 300, "W:WK30,K31,K32:BK1", {Termination.ENDGAME_MOVE_LIMIT}),
    ("russian", 80, 300, "W:WK30,K31,K32:BK4", {Termination.ENDGAME_MOVE_LIMIT}),
    # russian (FMJD-64 art. 7.2): 7.2.8 two kings v one; 7.2.7 with a man, on the main road;
    # 7.2.6 both sides with kings, in 4 and 6 pieces (men moving reset only the quiet-ply count)
    ("russian", 80, 300, "W:WK30,K31:BK1", {Termination.ENDGAME_MOVE_LIMIT}),
    ("russian", 80, 300, "W:WK30,K31,21:BK4", {Termination.ENDGAME_MOVE_LIMIT}),
    ("russian", 120, 300, "W:WK30,28:BK1,5", {Termination.ENDGAME_MOVE_LIMIT}),
    ("russian", 120, 300, "W:WK30,28,K31:BK1,5,K3", {Termination.ENDGAME_MOVE_LIMIT}),
    ("brazilian-fmjd-endgame", 80, 300, "W:WK31,K32,K30:BK2", {Termination.ENDGAME_MOVE_LIMIT}),
])
def test_endings_agree_with_board(
    name: str, games: int, max_plies: int, fen: str | None, expect: set[Termination]
) -> None:
    """Replay every game on a Board: same moves legal, same ending, same ply."""
    variant = get_variant(name)
    start = initial_position(variant) if fen is None else Board(variant, fen).position
    state = _Lockstep(variant, PositionBatch.repeat(start, games), 17, True)
    played: list[list[tuple[int, int, int, bool]]] = [[] for _ in range(games)]
    while state.running():
        chosen = state.step(max_plies)
        if chosen is None:
            break
        # the games still running after the step are the ones that moved, in move order
        for gid, f, t, c, p in zip(state.ids.tolist(), chosen.from_bit.tolist(), chosen.to_bit.tolist(),
                                   chosen.captured.tolist(), chosen.promotes.tolist(), strict=True):
            played[gid].append((f, t, c, p))
    seen_terms = set()
    for gid in range(games):
        board = Board(variant, fen, ply_cap=max_plies)
        for f, t, c, p in played[gid]:
            assert board.outcome() is None
            move = next(m for m in board.legal_moves
                        if (m.from_bit, m.to_bit, m.captured, m.promotes) == (f, t, c, p))
            board.push(move)
        outcome = board.outcome()
        assert outcome is not None
        term = _BOARD_TERM[outcome.termination]
        seen_terms.add(term)
        assert int(state.termination[gid]) == term
        expected = 0 if outcome.winner is None else (1 if outcome.winner == Color.WHITE else -1)
        assert int(state.result[gid]) == expected
        assert int(state.plies[gid]) == board.ply
        assert state.final.position(gid) == board.position
    assert expect <= seen_terms, seen_terms  # the sample covers these endings


def test_repetition_is_detected() -> None:
    # Two lone kings far apart shuffle until a position comes back a third time.
    variant = get_variant("english")
    board = Board(variant, "W:WK29:BK4")
    res = random_games(variant, 200, seed=5, max_plies=500, start=board.position)
    assert np.all(res.termination != Termination.PLY_CAP)
    assert np.any(res.termination == Termination.THREEFOLD_REPETITION)
    off = random_games(variant, 200, seed=5, max_plies=500, start=board.position, track_repetition=False)
    assert not np.any(off.termination == Termination.THREEFOLD_REPETITION)
    quiet = off.termination == Termination.QUIET_PLY_LIMIT
    assert np.any(quiet) and np.all(off.plies[quiet] == variant.quiet_ply_limit)
    assert np.all(quiet | (off.termination == Termination.NO_PIECES))


def test_start_per_game_and_errors() -> None:
    variant = get_variant("english")
    starts = random_positions(variant, 20, seed=1)
    res = random_games(variant, 20, seed=1, max_plies=0, start=starts)
    assert np.all(res.plies == 0)
    assert res.final.to_positions() == starts.to_positions()
    with pytest.raises(DraughtsError):
        random_games(variant, 3, seed=1, start=starts)
    with pytest.raises(DraughtsError):
        random_games(variant, -1, seed=1)


def test_random_positions_mix() -> None:
    variant = get_variant("brazilian")
    a = random_positions(variant, 3000, seed=8)
    b = random_positions(variant, 3000, seed=8)
    assert a.to_positions() == b.to_positions()
    pieces = np.bitwise_count(a.white | a.black)
    assert pieces.max() == 24 and pieces.min() < 8  # start and late endgame both present
    assert np.mean(a.kings != 0) > 0.1
    assert 0.3 < np.mean(a.side) < 0.7
    assert len(set(a.to_positions())) > 1500
