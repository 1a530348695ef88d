"""The run report from the run folder alone: level table (markdown + JSON) and PNG plots."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from pipeline.cli.main import main
from pipeline.games.stage import write_result
from pipeline.job.report import LevelTable, ReportError, write_report
from pipeline.ladder.reference import save_ladder

from . import samples


def fake_results(folder: Path) -> None:
    write_result(folder / "run.json", {"run_id": folder.name})
    save_ladder(samples.ladder(), folder / "ladder.json")
    write_result(folder / "tune" / "result.json", samples.tune("rejected").to_json())
    rated = (("easy", 420.0, 400.0), ("medium", 690.0, 700.0), ("hard", 990.0, 1200.0))
    levels = {level: samples.level_result(level, elo, target, confirmed=False)
              for level, elo, target in rated}
    calibration = dataclasses.replace(samples.calibration(confirmed=False), levels=levels,
                                      notes=("hard: missed",))
    write_result(folder / "calibrate" / "result.json", calibration.to_json())


def test_report_writes_table_and_plots(tmp_path: Path) -> None:
    folder = tmp_path / "run1"
    fake_results(folder)
    report = write_report(folder)
    names = {p.name for p in report.files}
    expected = {"ladder.png", "tune_history.png", "calibrate_easy_history.png", "levels.md", "levels.json"}
    assert expected <= names
    for path in report.files:
        assert path.is_file() and path.stat().st_size > 0
    md = (report.folder / "levels.md").read_text()
    assert "| easy | +400 | +420 | [+320, +520] | 100 | yes |" in md
    assert "| hard | +1200 | +990 | [+890, +1090] | 100 | NO |" in md and "hard: missed" in md
    assert "Weight tuning: rejected" in md
    data = json.loads((report.folder / "levels.json").read_text())
    table = LevelTable.from_json(data)
    assert table.to_json() == data and [r.level for r in table.levels] == ["easy", "medium", "hard"]
    assert table.tune_decision == "rejected" and table.notes == ("hard: missed",)
    assert table.levels[0].trial_rating == table.levels[0].rating and not table.levels[0].confirmed


def test_report_needs_a_ladder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "empty").mkdir()
    with pytest.raises(ReportError, match=r"no ladder\.json"):
        write_report(tmp_path / "empty")
    fake_results(tmp_path / "out" / "run1")
    assert main(["report", "run1", "--output", str(tmp_path / "out")]) == 0
    assert "| medium |" in capsys.readouterr().out
    assert main(["report", "missing", "--output", str(tmp_path / "out")]) == 2
    assert capsys.readouterr().err.startswith("error: no run 'missing'")
