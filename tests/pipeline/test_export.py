"""Profile export: written atomically, reloaded by the engine's strict loader, bench-checked."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pipeline.cli.main import main
from pipeline.games.stage import write_result
from pipeline.job.export import ExportError, current_bench_signature, export_run, verify_profile

from .calibration_sample import fake_run, sample_outcome


def test_export_writes_a_profile_the_engine_loads(tmp_path: Path) -> None:
    from engine.profile import load_profile

    folder = fake_run(tmp_path)
    outcome = sample_outcome()
    result = export_run(folder, tmp_path / "profiles", bench_signature=12345, description="test")
    assert result.path == tmp_path / "profiles" / "english.json"
    profile = load_profile(result.path, "english")
    assert profile.level("hard").node_budget == 200_000 and profile.level("hard").noise_sigma == 0.0
    assert profile.level("easy").random_move_prob == pytest.approx(0.2)
    assert profile.level("medium").max_depth == 4 and profile.level("medium").noise_sigma == 35.0
    p = profile.provenance
    assert (p.bench_signature, p.source_config_hash, p.tracking_run_id, p.experiment) == (
        12345, "c0ffee", "mlflow-run-1", "draughts-english")
    assert p.levels["medium"].elo == 1440.0 and p.levels["medium"].elo_ci == (1415.0, 1467.0)
    assert "score-based" in p.description and p.description.endswith("test")
    measures = p.levels["hard"].measures
    assert measures is not None and measures.median_depth == 8.0 and measures.expected_score_next is None
    assert measures.expected_score_product == outcome.levels["hard"].expected_score_product
    hard = p.levels["hard"].description
    assert "hard - product-hard >= +50" in hard and "holds" in hard
    assert result.levels["easy"] == (1010.0, 985.0, 1037.0)
    assert not list((tmp_path / "profiles").glob(".*tmp"))
    default = export_run(folder, bench_signature=1)
    assert default.path == folder / "profiles" / "english.json"


def test_export_keeps_the_precision_the_measurement_has(tmp_path: Path) -> None:
    folder = fake_run(tmp_path)
    data = json.loads((folder / "calibrate" / "result.json").read_text())
    data["levels"]["easy"]["elo"] = 1010.123456
    data["levels"]["easy"]["expected_score_next"] = 0.0912345678
    write_result(folder / "calibrate" / "result.json", data)
    text = export_run(folder, tmp_path / "p", bench_signature=1).path.read_text()
    assert "1010.1," in text and "0.0912," in text and "1010.12" not in text


def test_a_damaged_calibration_result_is_one_line(tmp_path: Path) -> None:
    folder = fake_run(tmp_path)
    data = json.loads((folder / "calibrate" / "result.json").read_text())
    del data["claims"]
    write_result(folder / "calibrate" / "result.json", data)
    with pytest.raises(ExportError, match="calibration result: missing key 'claims'"):
        export_run(folder, tmp_path / "p", bench_signature=1)


def test_a_profile_from_another_search_is_rejected(tmp_path: Path) -> None:
    folder = fake_run(tmp_path)
    current = current_bench_signature("english")
    result = export_run(folder, tmp_path / "profiles", bench_signature=current)
    assert verify_profile(result.path, "english", current).provenance.bench_signature == current
    data = json.loads(result.path.read_text())
    data["provenance"]["bench_signature"] = current + 1
    result.path.write_text(json.dumps(data))
    with pytest.raises(ExportError, match="bench signature"):
        verify_profile(result.path, "english", current)


def test_export_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fake_run(tmp_path / "out")
    code = main(["export", "r1", "--output", str(tmp_path / "out"), "--profiles-dir", str(tmp_path / "p")])
    out = capsys.readouterr().out
    assert code == 0 and "reloaded by the engine" in out and (tmp_path / "p" / "english.json").is_file()

    (tmp_path / "out" / "r2").mkdir()
    (tmp_path / "out" / "r2" / "run.json").write_text("{}")
    code = main(["export", "r2", "--output", str(tmp_path / "out"), "--profiles-dir", str(tmp_path / "p")])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("error: no calibration result") and err.count("\n") == 1
    assert main(["export", "nope", "--output", str(tmp_path / "out")]) == 2
