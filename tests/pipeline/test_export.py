"""Profile export: written atomically, reloaded by the engine's strict loader, bench-checked."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from engine.profile import Knob
from pipeline.cli.main import main
from pipeline.games.stage import write_result
from pipeline.job.export import ExportError, current_bench_signature, export_run, verify_profile

from . import samples


def fake_run(root: Path, run_id: str = "r1") -> Path:
    """A run folder holding what the calibrate stage and the job write (no games needed)."""
    folder = root / run_id
    levels = {}
    for n, (name, depth, elo) in enumerate((("easy", 1, 300.0), ("medium", 2, 700.0), ("hard", 4, 1100.0))):
        knobs: dict[str, Knob] = {"max_depth": depth, "random_move_prob": 0.1 * (2 - n)}
        levels[name] = samples.level_result(name, elo, elo, knobs=knobs, ci=(elo - 80, elo + 90))
    calibration = dataclasses.replace(samples.calibration(), levels=levels)
    write_result(folder / "calibrate" / "result.json", calibration.to_json())
    write_result(folder / "run.json", {"run_id": run_id, "config_hash": "c0ffee"})
    write_result(folder / "tracking.json", {"run_id": "mlflow-run-1", "experiment": "draughts-english"})
    return folder


def test_export_writes_a_profile_the_engine_loads(tmp_path: Path) -> None:
    from engine.profile import load_profile

    folder = fake_run(tmp_path)
    result = export_run(folder, tmp_path / "profiles", bench_signature=12345, description="test")
    assert result.path == tmp_path / "profiles" / "english.json"
    profile = load_profile(result.path, "english")
    assert profile.level("hard").max_depth == 4
    assert profile.level("easy").random_move_prob == pytest.approx(0.2)
    p = profile.provenance
    assert (p.bench_signature, p.source_config_hash, p.tracking_run_id, p.experiment) == (
        12345, "c0ffee", "mlflow-run-1", "draughts-english")
    assert p.levels["medium"].elo == 700.0 and p.levels["medium"].elo_ci == (620.0, 790.0)
    assert result.levels["easy"] == (300.0, 220.0, 390.0)
    assert not list((tmp_path / "profiles").glob(".*tmp"))
    default = export_run(folder, bench_signature=1)
    assert default.path == folder / "profiles" / "english.json"


def test_a_chained_levels_neighbour_is_exported_as_rated_against(tmp_path: Path) -> None:
    from engine.profile import load_profile
    from pipeline.calibration.results import NeighbourRef, read_calibration

    folder = fake_run(tmp_path)
    path = folder / "calibrate" / "result.json"
    result = read_calibration(path)
    assert result is not None
    levels = dict(result.levels)
    for name in ("easy", "hard"):
        conf = levels[name].confirmation
        assert conf is not None
        chained = dataclasses.replace(conf, neighbour=NeighbourRef("medium", "medium-t0001", 700.0))
        levels[name] = dataclasses.replace(levels[name], confirmation=chained)
    write_result(path, dataclasses.replace(result, levels=levels, chain_from="medium").to_json())
    exported = export_run(folder, tmp_path / "profiles", bench_signature=1)
    levels = load_profile(exported.path, "english").provenance.levels
    against = {n: lp.rated_against for n, lp in levels.items()}
    assert against == {"easy": "medium", "medium": None, "hard": "medium"}
    unchained = export_run(fake_run(tmp_path, "r2"), tmp_path / "plain", bench_signature=1)
    assert "rated_against" not in unchained.path.read_text()


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
    write_result(tmp_path / "out" / "r2" / "calibrate" / "result.json", {"variant": "english"})
    code = main(["export", "r2", "--output", str(tmp_path / "out"), "--profiles-dir", str(tmp_path / "p")])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1
    assert err.startswith("error: cannot read calibration result: ") and "missing key 'ladder_hash'" in err
    assert main(["export", "nope", "--output", str(tmp_path / "out")]) == 2


def test_a_bad_tracking_record_is_refused_naming_the_key(tmp_path: Path) -> None:
    folder = fake_run(tmp_path)
    write_result(folder / "tracking.json", {"run_id": 7, "experiment": None})
    needle = r"cannot read tracking record: .*tracking\.json: run_id: expected a string, got 7"
    with pytest.raises(ExportError, match=needle):
        export_run(folder, tmp_path / "profiles", bench_signature=1)
