"""Game records as servers write them, replayed move by move with their results checked.

The files in ``pdn_samples/`` follow the published formats, written out by hand-made rules
rather than by :mod:`engine.pdn`:
- PDN 3.0 (pdn.fmjd.org): GameType numbers 20/21/25/26, captures as the full path ``15x24x31``;
- lidraughts' export (``modules/game/src/main/PdnDump.scala`` in RoepStoep/lidraughts): its
  tags, ``2-0``/``1-1``/``0-2`` results, captures shortened to start x end
  (``shortenMoves``), algebraic squares on 8x8 when asked, a FEN tag for every russian and
  brazilian game, moves numbered from the FEN's move number, ``{[%clock ...]}`` comments;
- the russian tradition of ``:`` between the squares of a capture (``c3:e5:g7``);
- one token per jump (``23x32 32x21``), as some programs write a multi-jump.
"""

from __future__ import annotations

import random
from dataclasses import replace
from itertools import pairwise
from pathlib import Path

import pytest

from engine.board import Board, Termination
from engine.cli import main
from engine.errors import PdnError
from engine.move import Move
from engine.pdn import (
    RESULT_WINNERS,
    format_game,
    game_from_board,
    parse_pdn,
    read_pdn,
    replay_report,
)
from engine.variants import VARIANTS, Color, Variant, get_variant

SAMPLES = Path(__file__).parent / "pdn_samples"
SAMPLE_FILES = sorted(SAMPLES.glob("*.pdn"))


def test_every_server_style_has_a_sample() -> None:
    names = {path.name for path in SAMPLE_FILES}
    assert {"lidraughts-international.pdn", "lidraughts-russian.pdn", "russian-colon-paths.pdn",
            "pdn3-brazilian.pdn", "pdn3-english.pdn", "pdn3-suicide.pdn",
            "split-jumps-international.pdn"} <= names
    variants = {game.variant().name for path in SAMPLE_FILES for game in read_pdn(path)}
    assert variants == {v.name for v in VARIANTS}


@pytest.mark.parametrize("path", SAMPLE_FILES, ids=lambda p: p.name)
def test_sample_files_replay_with_results_checked(path: Path) -> None:
    for number, game in enumerate(read_pdn(path), start=1):
        report = replay_report(game, number)
        assert report.ok, report.error
        assert report.plies == len(game.replay().move_stack) > 20
        board = game.replay()
        outcome = board.outcome()
        if outcome is not None:  # a finished position: the recorded result must be the rules' one
            assert RESULT_WINNERS[game.result] == outcome.winner


@pytest.mark.parametrize("path", SAMPLE_FILES, ids=lambda p: p.name)
def test_cli_replays_sample_files(path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["pdn", str(path)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert len(out) == len(read_pdn(path)) and all(line.endswith(": ok") for line in out)


def test_lidraughts_conventions() -> None:
    first, second, _ = read_pdn(SAMPLES / "lidraughts-international.pdn")
    assert first.result == "2-0" and RESULT_WINNERS["2-0"] == Color.WHITE
    assert RESULT_WINNERS["0-2"] == Color.BLACK and RESULT_WINNERS["1-1"] is None
    assert any("x" in move and move.count("x") == 1 for move in first.moves)
    assert second.tags["FEN"].endswith(":H0:F21")
    board = second.replay()
    assert board.start_move_number == 21 and board.move_number == 21 + 30 // 2
    assert format_game(second).split("\n\n")[1].startswith("21... ")


def test_split_jumps_are_one_move() -> None:
    (split,) = read_pdn(SAMPLES / "split-jumps-international.pdn")
    lidraughts = read_pdn(SAMPLES / "lidraughts-international.pdn")[0]
    assert len(split.moves) > len(lidraughts.moves)
    assert split.replay().move_stack == lidraughts.replay().move_stack


def test_russian_colon_paths_match_lidraughts_short_form() -> None:
    (colon,) = read_pdn(SAMPLES / "russian-colon-paths.pdn")
    short = read_pdn(SAMPLES / "lidraughts-russian.pdn")[0]
    assert colon.replay().move_stack == short.replay().move_stack


def _altered(path: Path, tmp_path: Path, old: str, new: str) -> Path:
    text = path.read_text()
    assert old in text
    out = tmp_path / path.name
    out.write_text(text.replace(old, new, 1))
    return out


def test_altered_file_fails_with_one_line_naming_game_and_move(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # game 2's first move 21... is replaced by a man move that does not exist
    path = SAMPLES / "lidraughts-international.pdn"
    second = read_pdn(path)[1]
    first_move = second.moves[0]
    bad = _altered(path, tmp_path, f"21... {first_move}", "21... 1-7")
    assert main(["pdn", str(bad)]) == 2
    captured = capsys.readouterr()
    err = captured.err.strip()
    assert "\n" not in err and "game 2 (anna - piet)" in err and "'1-7'" in err and "move 21..." in err
    assert second.tags["FEN"].split(":H")[0] in err  # the position the move was tried in
    assert captured.out.splitlines()[0].endswith(": ok") and captured.out.splitlines()[1].endswith("FAILED")


def test_wrong_result_of_a_finished_game_fails(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = _altered(SAMPLES / "pdn3-brazilian.pdn", tmp_path, '[Result "1-0"]', '[Result "0-1"]')
    text = bad.read_text().rstrip()
    assert text.endswith("1-0")
    bad.write_text(text[:-3] + "0-1\n")
    assert main(["pdn", str(bad)]) == 2
    assert "contradicts" in capsys.readouterr().err


def test_ambiguous_short_capture_lists_candidates() -> None:
    (game,) = parse_pdn('[GameType "21"]\n[FEN "B:W18,19,26,27:B15"]\n1. 15x31 *')
    with pytest.raises(PdnError) as info:
        game.replay()
    message = str(info.value)
    assert "ambiguous" in message and "15x22x31" in message and "15x24x31" in message
    assert "'B:W18,19,26,27:B15'" in message
    (split,) = parse_pdn('[GameType "21"]\n[FEN "B:W18,19,26,27:B15"]\n1. 15x24 24x31 *')
    assert split.replay().move_stack[0].path == (15, 24, 31)


@pytest.mark.parametrize(
    ("tag", "name"),
    [("Suicide checkers", "suicide"), ("giveaway", "suicide"), ("Giveaway Checkers", "suicide"),
     ("anti-checkers", "suicide"), ("Russian draughts", "russian"), ("International", "international"),
     ("american_checkers", "english")],
)
def test_variant_tag_spellings(tag: str, name: str) -> None:
    (game,) = parse_pdn(f'[GameType "21"]\n[Variant "{tag}"]\n*')
    assert game.variant().name == name


@pytest.mark.parametrize(("gametype", "name"), [("20", "international"), ("21", "english"),
                                                ("25", "russian"), ("26", "brazilian"),
                                                ("20,W,10,10,N2,0", "international")])
def test_gametype_numbers(gametype: str, name: str) -> None:
    (game,) = parse_pdn(f'[GameType "{gametype}"]\n*')
    assert game.variant().name == name


def _server_tokens(board: Board, move: Move, style: str, algebraic: bool) -> list[str]:
    """A move as the servers write it: start x end only, or one token per jump."""
    names = board.move_to_text(move, algebraic).split("x")
    if not move.captures or style == "full":
        return [board.move_to_text(move, algebraic)]
    if style == "short":
        return [f"{names[0]}x{names[-1]}"]
    return [f"{a}x{b}" for a, b in pairwise(names)]


@pytest.mark.parametrize("variant", VARIANTS, ids=lambda v: v.name)
def test_own_games_exported_and_read_back_in_both_notations(variant: Variant) -> None:
    rng = random.Random(7)
    board = Board(variant, "W:W31-50:B1-20:H0:F1" if variant.board_size == 10 else None, ply_cap=160)
    while board.outcome() is None:
        board.push(rng.choice(board.legal_moves))
    outcome = board.outcome()
    assert outcome is not None
    for algebraic in (False, True) if variant.algebraic_notation else (False,):
        game = game_from_board(board, algebraic=algebraic, counters=True)
        (again,) = parse_pdn(format_game(game))
        assert again.variant() is variant and again.result == outcome.result
        replayed = again.replay()
        assert replayed.move_stack == board.move_stack
        assert replayed.outcome() == outcome
        for style in ("short", "split"):
            walker = again.start_board()
            tokens: list[str] = []
            for move in board.move_stack:
                tokens.extend(_server_tokens(walker, move, style, algebraic))
                walker.push(move)
            again.moves = tokens
            try:
                assert again.replay().move_stack == board.move_stack
            except PdnError as err:  # a short form may be ambiguous; it must say so
                assert "ambiguous" in str(err)


def test_lidraughts_results_in_our_vocabulary() -> None:
    assert {get_variant(v.name).name for v in VARIANTS} == {v.name for v in VARIANTS}
    for token, winner in (("2-0", Color.WHITE), ("1-1", None), ("0-2", Color.BLACK)):
        (game,) = parse_pdn(f'[GameType "20"]\n[Result "{token}"]\n1. 32-28 {token}')
        assert game.result == token and RESULT_WINNERS[game.result] == winner
        assert replay_report(game, 1).ok


def test_long_tokens_are_quoted_cut_with_their_length() -> None:
    junk = "@" * 10_000
    with pytest.raises(PdnError) as info:
        parse_pdn(f"1. 32-28 {junk} *")
    message = str(info.value)
    assert repr("@" * 120) in message and "(10000 characters)" in message and len(message) < 300
    (game,) = parse_pdn('[GameType "20"]\n1. 32-28 ' + "1" * 5000 + "-2 *")
    with pytest.raises(PdnError) as info:
        game.replay()
    assert "(5002 characters)" in str(info.value) and len(str(info.value)) < 1000  # three quotes at most


@pytest.mark.parametrize("name", ["lidraughts-international.pdn", "lidraughts-russian.pdn"])
def test_recorded_endgame_draws_end_by_the_counts(name: str) -> None:
    # the last game of each file is a lidraughts draw that ends exactly when the small-endgame
    # count runs out (international: 5 moves each after the capture; russian: 15 moves)
    game = read_pdn(SAMPLES / name)[-1]
    assert game.result == "1-1"
    board = game.replay()
    outcome = board.outcome()
    assert outcome is not None and outcome.termination == Termination.ENDGAME_MOVE_LIMIT
    without = replace(board.variant, endgame_draws=())
    assert game.replay(without).outcome() is None  # an engine without the counts plays on


def test_the_brazilian_option_round_trips_by_its_variant_tag() -> None:
    board = Board("brazilian-fmjd-endgame", "W:WK31,K32:BK2")
    board.push(board.legal_moves[0])
    (again,) = parse_pdn(format_game(game_from_board(board)))
    assert again.tags["GameType"] == "26" and again.variant() is board.variant
