"""The run report from the run folder alone: level table (markdown + JSON) and PNG plots."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pipeline.cli.main import main
from pipeline.games.stage import write_result
from pipeline.job.report import ReportError, write_report


def _level(number: int, elo: float, target: float) -> dict[str, Any]:
    return {"number": number, "slot": number, "stage": f"calibrate/x/trial-{number:04d}", "elo": elo,
            "ci": [elo - 100, elo + 100], "target": target, "within_ci": abs(elo - target) <= 100,
            "nodes_per_move": 50.0 * (number + 1), "games": 40, "anchors": ["d1", "d2"],
            "knobs": {"max_depth": 2, "random_move_prob": 0.25}, "value": abs(elo - target),
            "opponent_wins": {"wins": 3, "mean": 900.0, "p10": 700.0, "median": 950.0, "p90": 1100.0,
                              "max": 1200.0}}


def fake_results(folder: Path) -> None:
    write_result(folder / "run.json", {"run_id": folder.name})
    write_result(folder / "ladder.json", {"variant": "english", "anchors": [
        {"name": "random", "elo": 0.0, "ci_low": 0.0, "ci_high": 0.0},
        {"name": "d1", "elo": 600.0, "ci_low": 500.0, "ci_high": 700.0},
        {"name": "d2", "elo": 900.0, "ci_low": 780.0, "ci_high": 1020.0}]})
    write_result(folder / "tune" / "result.json", {"decision": "rejected", "accepted": False, "trials": [
        {"number": 0, "value": 0.48}, {"number": 1, "value": None}, {"number": 2, "value": 0.55}]})
    levels = {"easy": _level(0, 420.0, 400.0), "medium": _level(1, 690.0, 700.0),
              "hard": _level(2, 990.0, 1200.0)}
    trials = {name: [rec, {**rec, "number": 5, "value": 300.0}] for name, rec in levels.items()}
    write_result(folder / "calibrate" / "result.json", {"variant": "english", "ordered": True,
                                                        "notes": ["hard: missed"], "levels": levels,
                                                        "trials": trials})


def test_report_writes_table_and_plots(tmp_path: Path) -> None:
    folder = tmp_path / "run1"
    fake_results(folder)
    report = write_report(folder)
    names = {p.name for p in report.files}
    expected = {"ladder.png", "tune_history.png", "calibrate_easy_history.png", "levels.md", "levels.json"}
    assert expected <= names
    for path in report.files:
        assert path.is_file() and path.size() > 0
    md = (report.folder / "levels.md").read_text()
    assert "| easy | +400 | +420 | [+320, +520] | 100 | yes |" in md
    assert "| hard | +1200 | +990 | [+890, +1090] | 100 | NO |" in md and "hard: missed" in md
    assert "Weight tuning: rejected" in md
    rows = json.loads((report.folder / "levels.json").read_text())["levels"]
    assert [r["level"] for r in rows] == ["easy", "medium", "hard"]


def test_report_needs_a_ladder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "empty").mkdir()
    with pytest.raises(ReportError, match=r"no ladder\.json"):
        write_report(tmp_path / "empty")
    fake_results(tmp_path / "out" / "run1")
    assert main(["report", "run1", "--output", str(tmp_path / "out")]) == 0
    assert "| medium |" in capsys.readouterr().out
    assert main(["report", "missing", "--output", str(tmp_path / "out")]) == 2
    assert capsys.readouterr().err.startswith("error: no run 'missing'")
