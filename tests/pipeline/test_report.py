"""The run report from the run folder alone: level table (markdown + JSON) and PNG plots."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pipeline.cli.main import main
from pipeline.games.stage import write_result
from pipeline.job.report import ReportError, write_report

from . import samples
from .calibration_sample import fake_run


def fake_results(folder: Path) -> None:
    fake_run(folder.parent, folder.name)
    write_result(folder / "tune" / "result.json", samples.tune("rejected").to_json())


def test_report_writes_table_and_plots(tmp_path: Path) -> None:
    folder = tmp_path / "run1"
    fake_results(folder)
    report = write_report(folder)
    names = {p.name for p in report.files}
    wanted = {"levels.png", "curves.png", "easy_trials.png", "tune_history.png", "levels.md", "levels.json"}
    assert wanted <= names
    for path in report.files:
        assert path.is_file() and path.size() > 0
    md = (report.folder / "levels.md").read_text()
    row = ("| hard | hard-200000 | 1880 | [1855, 1907] | 1885 [1850, 1920] | - | 0.50 / 0.20 / 0.10 | "
           "10000 | 8 |")
    assert row in md
    assert "| hard - product-hard >= +50, CI above 0 | +70 | [+45, +95] | yes | yes |" in md
    assert "| 3 | -12 | 0.090 | yes | yes |" in md and "| 4 | -90 | 0.120 | no |  |" in md
    assert "Weight tuning: rejected" in md and "product-medium held at 1500" in md
    assert "| 200,000 | 1880 | [1855, 1907] | +70 | 163,590 | 51.5 |" in md  # Hard's budget curve, its cost
    assert "| 24,834 | 1700 | [1670, 1730] | -110 | - | - |" in md  # a result without the cost
    data = json.loads((report.folder / "levels.json").read_text())
    assert set(data["levels"]) == {"easy", "medium", "hard"} and len(data["claims"]) == 3


def test_report_needs_a_calibration(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "empty").mkdir()
    with pytest.raises(ReportError, match=r"no calibrate/result\.json"):
        write_report(tmp_path / "empty")
    fake_results(tmp_path / "out" / "run1")
    assert main(["report", "run1", "--output", str(tmp_path / "out")]) == 0
    assert "| medium |" in capsys.readouterr().out
    assert main(["report", "missing", "--output", str(tmp_path / "out")]) == 2
    assert capsys.readouterr().err.startswith("error: no run 'missing'")


def test_report_of_a_run_folder_given_by_its_absolute_path(tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "elsewhere" / "run1"
    fake_results(folder)
    assert main(["report", str(folder)]) == 0  # not below the default output root "runs"
    assert "| medium |" in capsys.readouterr().out
