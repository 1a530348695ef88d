"""CLI verbs bestmove / play / bench: JSON fields, piped games, one-line errors with exit 2."""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from engine.board import Board, Outcome, Termination
from engine.cli import main
from engine.cli_engine import TerminalGame, draw_board, game_score
from engine.player import Player
from engine.profile import load_profile, shipped_profile, shipped_profile_path
from engine.variants import Color

REPO = Path(__file__).resolve().parents[2]
OTHER = REPO / "engine" / "profiles" / "english-otherproduct.json"


def run(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "engine", *args], input=stdin, capture_output=True,
                          text=True, timeout=600, check=False, cwd=REPO)


# -- bestmove -------------------------------------------------------------------------------------
def test_bestmove_json_subprocess() -> None:
    done = run("bestmove", "--variant", "english", "--level", "medium", "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    for key in ("move", "score", "depth", "nodes", "seconds", "pv", "level", "random", "profile_hash"):
        assert key in report
    assert report["move"] in {m.pdn for m in Board("english").legal_moves}
    assert report["depth"] == 4 and report["nodes"] > 0 and report["level"] == "medium"
    assert report["pv"][0] == report["move"] and report["random"] is False
    assert report["profile_hash"] == shipped_profile("english").levels["medium"].profile_hash()
    assert report["profile_file"] == str(shipped_profile_path("english"))
    assert report["profile_file_hash"] == shipped_profile("english").profile_hash()


def test_bestmove_text_profile_and_seed(capsys: pytest.CaptureFixture[str]) -> None:
    fen = "B:W13,19,20,21,25,26,27,28,29,30,31,32:B1,2,3,5,6,7,8,9,10,11,12,18"
    args = ["bestmove", "--variant", "english", "--fen", fen, "--level", "hard", "--profile", str(OTHER)]
    assert main([*args, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["depth"] <= 2 and report["nodes"] <= 4000
    assert main(args) == 0
    first, second = capsys.readouterr().out.splitlines()
    assert first.startswith(f"bestmove {report['move']} ")
    other = load_profile(OTHER)
    assert second == f"profile {OTHER} (hash {other.profile_hash()}), level hard"
    assert report["profile_file"] == str(OTHER) and report["profile_file_hash"] == other.profile_hash()
    easy = ["bestmove", "--variant", "english", "--level", "easy", "--json", "--seed"]
    picks = []
    for seed in ("1", "1", "2", "3", "4", "5"):
        assert main([*easy, seed]) == 0
        picks.append(json.loads(capsys.readouterr().out)["move"])
    assert picks[0] == picks[1]


# -- play -----------------------------------------------------------------------------------------
def test_play_piped_subprocess() -> None:
    done = run("play", "--variant", "english", "--level", "easy", "--seed", "3",
               stdin="11-15\nnonsense\n99-98\nhint\nundo\n9-14\nresign\n")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "Legal moves: 9-13, 9-14, 10-14, 10-15, 11-15, 11-16, 12-16" in out
    assert out.count("Computer plays") == 2
    assert "Not a legal move" in out and "Hint: " in out and "Took back" in out
    assert "You resign" in out and "Score: 0" in out
    assert re.search(r"\b1 +2 +3 +4$", out, re.MULTILINE)  # the numbered legend
    path = shipped_profile_path("english")
    assert out.startswith(f"profile {path} (hash {shipped_profile('english').profile_hash()}), level easy\n")


def test_play_as_white_and_end_of_input() -> None:
    done = run("play", "--variant", "brazilian", "--level", "medium", "--color", "white",
               stdin="undo\nquit\n")
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("Computer plays") == 0  # brazilian: White moves first
    assert "Nothing to undo" in done.stdout and "Game abandoned" in done.stdout
    done = run("play", "--variant", "english", "--level", "medium", "--color", "white", stdin="")
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("Computer plays") == 1 and "End of input" in done.stdout


class FirstMoveInput(io.StringIO):
    """Plays the human side by always answering with the first legal move of the board."""

    def __init__(self, board: Board) -> None:
        super().__init__()
        self.board = board

    def readline(self, size: int | None = -1) -> str:
        return self.board.legal_moves[0].pdn + "\n"


def test_play_a_whole_game_in_process() -> None:
    board = Board("english")
    level = shipped_profile("english").levels["medium"]
    out = io.StringIO()
    game = TerminalGame(board, Player(level, seed=1), Player(level, seed=1), Color.BLACK, "medium",
                        FirstMoveInput(board), out)
    assert game.run() == 0
    assert board.outcome() is not None
    assert "Game over: " in out.getvalue() and "Score: " in out.getvalue()


def test_game_score_is_the_products() -> None:
    board = Board("english", "B:W30:B1,2,3")
    board.push_text("1-5")
    win = Outcome(Color.BLACK, Termination.NO_PIECES)
    assert game_score(board, Color.BLACK, win) == 3 * 100 + 10 * 59
    assert game_score(board, Color.WHITE, win) == 0
    assert game_score(board, Color.BLACK, Outcome(None, Termination.THREEFOLD_REPETITION)) == 0


def test_draw_board_marks_pieces_and_numbers() -> None:
    text = draw_board(Board("english", "B:WK30,21:BK1,12"))
    lines = text.splitlines()
    assert len(lines) == 8
    assert " B" in lines[0] and lines[0].rstrip().endswith("4")
    assert " W" in lines[7] and " w" in lines[5]
    assert "32" in lines[7] and "50" in draw_board(Board("international"))


# -- bench ----------------------------------------------------------------------------------------
def test_bench_json_repeats_subprocess() -> None:
    reports = []
    for _ in range(2):
        done = run("bench", "--json", "--depth", "5")
        assert done.returncode == 0, done.stderr
        reports.append(json.loads(done.stdout))
    first, second = reports
    for key in ("nodes", "seconds", "nps", "signature", "signatures", "positions"):
        assert key in first
    assert first["nodes"] == second["nodes"] == first["signature"] > 0
    assert first["signatures"] == second["signatures"]
    assert sorted(first["signatures"]) == sorted({row["variant"] for row in first["positions"]})
    assert sum(first["signatures"].values()) == first["signature"]
    assert [row["nodes"] for row in first["positions"]] == [row["nodes"] for row in second["positions"]]


def test_bench_text(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "--depth", "3"]) == 0
    out = capsys.readouterr().out
    assert "Nodes searched" in out and "bench signature" in out
    assert re.search(r"^Signature russian +: \d+$", out, re.MULTILINE)


def test_bench_one_variant(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "--depth", "3", "--variant", "checkers", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["signatures"] == {"english": report["signature"]}
    assert {row["variant"] for row in report["positions"]} == {"english"}


# -- errors ---------------------------------------------------------------------------------------
@pytest.fixture
def bad_profile(tmp_path: Path) -> Path:
    path = tmp_path / "bad.json"
    doc = json.loads(OTHER.read_text())
    doc["levels"]["hard"]["search"]["node_budget"] = 10**12
    path.write_text(json.dumps(doc))
    return path


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["bestmove", "--variant", "english", "--level", "expert"], "expert"),
        (["bestmove", "--variant", "english", "--level", "hard", "--profile", "BAD"],
         "levels.hard.search.node_budget"),
        (["bestmove", "--variant", "english", "--level", "hard", "--profile", "/nonexistent/p.json"],
         "/nonexistent/p.json"),
        (["bestmove", "--variant", "brazilian", "--level", "hard", "--profile", str(OTHER)], "brazilian"),
        (["bestmove", "--variant", "english", "--level", "easy", "--fen", "B:W33:B1"], "B:W33:B1"),
        (["bestmove", "--variant", "english", "--level", "easy", "--fen", "garbage"], "garbage"),
        (["bestmove", "--variant", "english", "--level", "easy", "--fen", "W:W32:BK28,K27,23"],
         "no legal move"),
        (["bestmove", "--variant", "english", "--level", "easy", "--seed", "-4"], "-4"),
        (["bestmove", "--variant", "english", "--level", "easy", "--seed", "x"], "'x'"),
        (["bestmove", "--variant", "nope", "--level", "easy"], "nope"),
        (["bestmove", "--variant", "english"], "--level"),
        (["play", "--variant", "english", "--level", "easy", "--color", "red"], "red"),
        (["play", "--variant", "english", "--level", "hard", "--profile", "BAD"], "node_budget"),
        (["bench", "--depth", "0"], "0"),
        (["bench", "--depth", "ten"], "ten"),
        (["bench", "--variant", "frisian"], "frisian"),
    ],
)
def test_bad_input_exit_2(args: list[str], needle: str, bad_profile: Path,
                          capsys: pytest.CaptureFixture[str]) -> None:
    args = [str(bad_profile) if a == "BAD" else a for a in args]
    assert main(args) == 2
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and needle in lines[0]
    assert "Traceback" not in captured.err


def test_bad_profile_exit_2_subprocess(bad_profile: Path) -> None:
    done = run("bestmove", "--variant", "english", "--level", "hard", "--profile", str(bad_profile))
    assert done.returncode == 2
    assert "Traceback" not in done.stderr and str(bad_profile) in done.stderr
    assert "levels.hard.search.node_budget" in done.stderr and "1000000000000" in done.stderr
