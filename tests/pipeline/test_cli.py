"""The command line: exit codes, one-line errors, match report, and a killed driver resumed."""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from engine.profile import shipped_profile, shipped_profile_path
from pipeline.cli.main import COMMANDS, main
from pipeline.games.storage import read_games
from pipeline.ratings.logistic import score_to_elo

from .conftest import REPO, SMOKE

MATCH = ["match", "--a", "random"]


def _run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        ([], "required: VERB"),
        (["dance"], "invalid choice: 'dance'"),
        (["selfplay", "nope.toml"], "nope.toml: cannot read config"),
        (["match", "--variant", "english", "--a", "random"], "required: --b, --games"),
        ([*MATCH, "--variant", "chess", "--b", "random", "--games", "4"], "unknown variant"),
        ([*MATCH, "--variant", "english", "--b", "x y", "--games", "4"], "invalid player spec"),
        ([*MATCH, "--variant", "english", "--b", "random", "--games", "3"], "games = 3"),
        ([*MATCH, "--variant", "english", "--b", "random", "--games", "x"], "invalid int"),
        ([*MATCH, "--variant", "english", "--b", "missing.json:hard", "--games", "2"], "missing.json"),
        (["selfplay", str(SMOKE), "--address", "127.0.0.2:1"], "cannot reach the Ray cluster at"),
    ],
)
def test_bad_input_exits_2_with_one_line(
    args: list[str], needle: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = _run(args, capsys)
    assert code == 2 and out == ""
    assert err.startswith("error: ") and err.count("\n") == 1 and needle in err, err


def test_keys_lists_config_keys_knobs_and_features(capsys: pytest.CaptureFixture[str]) -> None:
    """``--help`` points at ``keys``, which prints every key, knob and feature with its type and range."""
    with pytest.raises(SystemExit) as done:
        main(["--help"])
    assert done.value.code == 0 and "python -m pipeline keys" in capsys.readouterr().out
    assert main(["keys"]) == 0
    out = capsys.readouterr().out
    for text in ("| ladder.depths |", "| tune.weights |", "| calibrate.hard_budgets |",
                 "| `max_depth` | search | int | 8 |", "| `advance` | -30 to 30 |"):
        assert text in out, text


def test_unknown_level_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _run([*MATCH, "--variant", "english", "--b", "impossible", "--games", "2"], capsys)
    assert code == 2 and "player spec 'impossible'" in err


def test_bad_config_file_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text(SMOKE.read_text().replace("games = 40", "games = -2"))
    code, _, err = _run(["selfplay", str(bad)], capsys)
    assert code == 2 and "bad.toml: selfplay.games = -2" in err


def test_verbs_are_registered() -> None:
    assert {"selfplay", "match"} <= set(COMMANDS)


def test_match_json_report(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["match", "--variant", "english", "--a", "random", "--b", "random", "--games", "12", "--seed", "3"]
    code, out, _ = _run([*args, "--json"], capsys)
    assert code == 0
    report = json.loads(out)
    assert report["wins"] + report["draws"] + report["losses"] == 12
    assert sum(report["pairs"].values()) == 6
    assert 0.0 <= report["score"] <= 1.0
    # score-based Elo: the score's Elo, its CI the score CI's ends mapped (bootstrap over the 6 openings)
    assert report["ci_method"] == "bootstrap over openings" and report["openings"] == 6
    assert report["bootstrap"] == 1000 and report["distinct_games"] == 12  # random players never replay
    assert report["elo"] == pytest.approx(score_to_elo(report["score"]))
    assert report["elo_ci"] == pytest.approx([score_to_elo(v) for v in report["score_ci"]])
    low, high = report["elo_ci"]
    assert low <= report["elo"] <= high
    wins = report["wins"] + report["draws"] / 2
    assert report["score"] == pytest.approx(wins / 12)
    code, text, _ = _run(args, capsys)
    assert code == 0 and "W/D/L" in text and "Elo" in text
    assert "(95 %, bootstrap over 6 openings; 12 distinct games)" in text
    again = json.loads(_run([*args, "--json"], capsys)[1])
    assert report["nodes"] == 0 and report["cpu_seconds"] > 0  # random players search nothing
    assert again.pop("cpu_seconds") > 0 and report.pop("cpu_seconds") > 0
    assert again == report  # same seed, same match (CPU time aside)
    searched = json.loads(_run(["match", "--variant", "english", "--a", "easy", "--b", "random", "--games",
                                "2", "--ply-cap", "20", "--json"], capsys)[1])
    assert searched["nodes"] > 0
    shipped = shipped_profile("english")
    assert searched["players"]["a"] == {
        "spec": "easy", "profile_file": str(shipped_profile_path("english")),
        "profile_file_hash": shipped.profile_hash(), "profile_hash": shipped.level("easy").profile_hash()}
    assert searched["players"]["b"]["profile_file"] is None
    assert "  A: random (no profile file" in text
    easy_text = _run(["match", "--variant", "english", "--a", "easy", "--b", "random", "--games", "2",
                      "--ply-cap", "20"], capsys)[1]
    path = shipped_profile_path("english")
    assert f"  A: easy = profile {path} (hash {shipped.profile_hash()})" in easy_text


@pytest.mark.slow  # the search kernel compiles on a fresh clone (about a minute)
def test_match_elo_is_null_when_infinite(capsys: pytest.CaptureFixture[str]) -> None:
    # the hard level beats random in both games of one pair: +inf Elo is written as null
    pytest.importorskip("engine.player")
    code, out, _ = _run([*MATCH[:1], "--a", "hard", "--b", "random", "--variant", "english", "--games", "2",
                         "--json"], capsys)
    report = json.loads(out)
    assert code == 0 and report["score"] == 1.0 and report["elo"] is None and report["pairs"]["2"] == 1
    # one opening, won whole: the exact interval's low end is 0.025, about -636 Elo; no high end
    assert report["elo_ci"][1] is None and report["openings"] == 1
    assert report["elo_ci"][0] == pytest.approx(-400 * math.log10(1 / 0.025 - 1))


def test_selfplay_in_process_summary(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = ["selfplay", str(SMOKE), "--output", str(tmp_path), "--in-process", "--no-progress"]
    code, out, _ = _run(base, capsys)
    assert code == 0 and "40 games in the dataset" in out and "games/s" in out
    code, _, err = _run(base, capsys)
    assert code == 2 and "--resume" in err
    code, out, _ = _run([*base, "--resume"], capsys)
    assert code == 0 and "played 0 now, 4 batches resumed" in out


@pytest.mark.slow
def test_killed_driver_resumes_without_loss_or_duplicates(tmp_path: Path) -> None:
    """SIGKILL the driver after some batches are written, rerun with --resume: exact count."""
    config = tmp_path / "long.toml"
    config.write_text(SMOKE.read_text().replace("games = 40", "games = 600"))
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "pipeline", "selfplay", str(config), "--output", str(out), "--in-process",
           "--no-progress"]
    proc = subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and proc.poll() is None:
            if len(list(out.glob("*/games/variant=english/batch-*.parquet"))) >= 2:
                break
            time.sleep(0.005)
        assert proc.poll() is None, "the run finished before it could be interrupted"
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(timeout=30)
    written = list(out.glob("*/games/variant=english/batch-*.parquet"))
    assert 2 <= len(written) < 60
    done = subprocess.run([*cmd, "--resume"], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert f"{len(written)} batches resumed" in done.stdout or "batches resumed" in done.stdout
    run_id = next(out.iterdir()).name
    games = read_games(out, run_id)
    ids = games.column("game_id").to_pylist()
    assert games.num_rows == 600 and sorted(ids) == list(range(600))
    assert not list(out.rglob("*.tmp"))


def test_module_entry_point_has_no_traceback(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "pipeline", "selfplay", str(tmp_path / "missing.toml")],
                          cwd=REPO, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.strip().count("\n") == 0


def test_every_verb_has_working_help() -> None:
    """argparse formats help text with %, so a stray '%' in a help string crashes --help."""
    from pipeline.cli.main import build_parser

    parser = build_parser()
    assert "selfplay" in parser.format_help()
    assert "%%" not in parser.format_help()
    for action in parser._subparsers._group_actions:  # type: ignore[union-attr]
        for sub in action.choices.values():
            text = sub.format_help()
            assert text and "%%" not in text, sub.prog  # a description is printed as written
