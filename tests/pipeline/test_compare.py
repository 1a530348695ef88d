"""``compare``: runs and profiles side by side, as text, JSON and one PNG ladder; bad inputs exit 2."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from engine.profile import dump_profile, shipped_profile, shipped_profile_path
from pipeline.cli.main import main
from pipeline.job.compare import comparable, compare
from pipeline.job.export import build_profile
from pipeline.job.scale_note import Scale, read_scale, scale_sentence

from .calibration_sample import fake_run, sample_outcome

ENGLISH = str(shipped_profile_path("english"))
BASELINE = str(Path(ENGLISH).with_name("english-baseline.json"))


def _run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(["compare", *args])
    out, err = capsys.readouterr()
    return code, out, err


def _row(out: str, label: str, level: str) -> list[str]:
    """The cells of ``level``'s row in ``label``'s block (cells split on runs of two or more spaces)."""
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(label))
    for line in lines[start:]:
        cells = [c for c in line.split("  ") if c.strip()]
        cells = [c.strip() for c in cells]
        if line.startswith(label):
            cells = cells[1:]
        if cells and cells[0] == level:
            return cells
    raise AssertionError(f"no row {level!r} under {label!r} in:\n{out}")


def _exported(tmp_path: Path, **changes: Any) -> Path:
    """The profile ``export`` makes of the sample outcome (with ``changes`` to the outcome)."""
    profile = build_profile(replace(sample_outcome(), **changes), bench_signature=1, config_hash="c0ffee",
                            tracking_run_id=None, experiment=None)
    path = tmp_path / f"exported-{len(list(tmp_path.glob('exported-*')))}.json"
    path.write_text(dump_profile(profile))
    return path


def test_text_lists_run_product_and_profile_levels(tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    fake_run(tmp_path / "out", "r1")
    code, out, err = _run(["r1", ENGLISH, BASELINE, "--output", str(tmp_path / "out")], capsys)
    assert code == 0 and err == "", err
    assert _row(out, "r1 (english)", "easy") == [
        "easy", "1010", "[985, 1037]", "0.080", "0.50/0.20/0.10", "100", "2", "0.1000", "400"]
    assert _row(out, "r1 (english)", "medium")[-1] == "target 1445"
    assert _row(out, "r1 (english)", "hard")[:5] == ["hard", "1880", "[1855, 1907]", "-", "0.50/0.20/0.10"]
    assert _row(out, "r1 (english)", "product hard") == ["product hard", "1810", "[1790, 1830]", *["-"] * 6]
    assert _row(out, "r1 (english)", "product medium")[-1] == "fixed point"
    shipped = shipped_profile("english").provenance.levels
    for name in ("easy", "medium", "hard"):
        lp = shipped[name]
        m = lp.measures
        assert lp.elo is not None and lp.elo_ci is not None and m is not None
        cells = _row(out, "english.json (english)", name)
        assert cells[1:3] == [f"{lp.elo:.0f}", f"[{lp.elo_ci[0]:.0f}, {lp.elo_ci[1]:.0f}]"]
        assert cells[5:8] == [f"{m.nodes_per_move:.0f}", f"{m.median_depth:g}", f"{m.blunder_rate:.4f}"]
        assert _row(out, "english-baseline.json (english)", name) == [name, *["-"] * 8]
    scale = "score-based Elo, product-medium (english-baseline.json) held at 1500"
    assert f"- r1 (english): {scale}" in out and f"- english.json (english): {scale}" in out
    assert "- english-baseline.json (english): no Elo recorded" in out
    assert not [line for line in out.splitlines() if line.startswith("warning: ")]  # one scale, one variant


def test_a_profile_rated_on_a_ladder_is_shown_without_measures_and_with_a_warning(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    shipped = shipped_profile("english")
    ladder = {n: replace(lp, measures=None, rated_against="medium" if n != "medium" else None)
              for n, lp in shipped.provenance.levels.items()}
    old = replace(shipped, provenance=replace(shipped.provenance, levels=ladder, description="ladder-rated"))
    path = tmp_path / "ladder.json"
    path.write_text(dump_profile(old), encoding="utf-8")
    fake_run(tmp_path / "out", "r1")
    code, out, _ = _run(["r1", str(path), "--output", str(tmp_path / "out")], capsys)
    assert code == 0
    for name in ("easy", "medium", "hard"):
        cells = _row(out, "ladder.json (english)", name)
        assert cells[3:9] == ["-"] * 6  # no measures in the file: nothing is filled in
        assert (cells[-1] == "CI relative to medium") == (name != "medium")
    assert "- ladder.json (english): fixed point not recorded in the file" in out
    warnings = [line for line in out.splitlines() if line.startswith("warning: ")]
    assert warnings == ["warning: ladder.json (english): the file does not record its scale's fixed point, "
                        "so its Elo cannot be matched to another input's"]


def test_json_holds_the_same_numbers(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = fake_run(tmp_path, "r1")
    code, out, _ = _run([str(folder), BASELINE, "--json"], capsys)
    assert code == 0
    doc = json.loads(out)
    assert doc["schema"] == "draughts.compare" and doc["version"] == 1 and doc["warnings"] == []
    run, baseline = doc["inputs"]
    assert (run["label"], run["kind"], run["variant"]) == ("r1 (english)", "run", "english")
    assert run["scale"] == {"anchor": "product-medium", "product_file": "english-baseline.json",
                            "anchor_elo": 1500.0}
    outcome = sample_outcome()
    rows = {("product " if r["product"] else "") + r["level"]: r for r in run["levels"]}
    assert list(rows) == ["easy", "medium", "hard", "product easy", "product medium", "product hard"]
    for name, lv in outcome.levels.items():
        row = rows[name]
        assert (row["elo"], row["ci"], row["games"]) == (lv.elo, list(lv.ci), lv.games)
        assert row["player"] == lv.player
        assert row["expected_score_next"] == lv.expected_score_next
        assert row["expected_score_product"] == dict(lv.expected_score_product)
        assert (row["nodes_per_move"], row["median_depth"], row["blunder_rate"]) == (
            lv.nodes_per_move, lv.median_depth, lv.blunder_rate)
        assert row["target"] == (outcome.medium_target if name == "medium" else None)
    assert rows["product hard"]["elo"] == 1810.0 and rows["product hard"]["ci"] == [1790.0, 1830.0]
    assert rows["product hard"]["nodes_per_move"] is None and rows["product hard"]["games"] is None
    assert baseline["kind"] == "profile" and baseline["scale"] is None
    assert all(r["elo"] is None and r["ci"] is None and r["nodes_per_move"] is None
               for r in baseline["levels"])


def test_exported_profile_shares_the_run_scale(tmp_path: Path) -> None:
    """Export writes the scale sentence, compare reads it back: the run and its profile line up."""
    folder = fake_run(tmp_path, "r1")
    exported = _exported(tmp_path)
    result = compare([str(folder), str(exported)])
    run, profile = result.inputs
    assert profile.scale == run.scale == Scale("product-medium", "english-baseline.json", 1500.0)
    assert result.warnings == () and comparable(result.inputs)
    easy = profile.levels[0]
    assert (easy.elo, easy.nodes_per_move, easy.blunder_rate) == (1010.0, 100.0, 0.1)
    assert easy.expected_score_next == 0.08
    assert easy.games is None  # a profile records no game count
    moved = _exported(tmp_path, anchor_elo=1000.0)
    apart = compare([str(folder), str(moved)])
    warned = apart.warnings
    assert not comparable(apart.inputs) and len(warned) == 1
    assert "different fixed points" in warned[0] and "held at 1000" in warned[0]


def test_scale_sentence_round_trip() -> None:
    text = "Made by hand. " + scale_sentence("engine/profiles/russian-start.json", -12.5) + " More text."
    assert read_scale(text) == Scale("product-medium", "russian-start.json", -12.5)
    assert read_scale("target +1800; Elo +1817 relative to medium") is None


def test_variants_and_repeated_labels(tmp_path: Path) -> None:
    folder = fake_run(tmp_path, "r1")
    russian = str(shipped_profile_path("russian"))
    result = compare([str(folder), russian, russian])
    assert [i.label for i in result.inputs] == ["r1 (english)", "russian.json (russian)",
                                                "russian.json (russian) #2"]
    assert any("different variants (english, russian)" in w for w in result.warnings)


def test_png_ladder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = fake_run(tmp_path, "r1")
    png = tmp_path / "plots" / "ladder.png"
    code, out, err = _run([str(folder), ENGLISH, "--json", "--png", str(png)], capsys)
    assert code == 0 and json.loads(out)["inputs"][1]["label"] == "english.json (english)"
    assert err.strip() == f"ladder written to {png}"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    code, _, err = _run([BASELINE, "--png", str(tmp_path / "none.png")], capsys)
    assert code == 2 and "no input has an Elo to plot" in err and not (tmp_path / "none.png").exists()


@pytest.mark.parametrize(
    ("make", "needle"),
    [
        (lambda root: str(root / "missing"), "no such run folder or profile file"),
        (lambda root: str(_folder(root / "empty")), "a folder without calibrate/result.json"),
        (lambda root: str(_write(root / "notes.txt", "hello")), "is not a profile file"),
        (lambda root: str(_write(root / "bad.json", '{"schema_version": 1}')), "is not a profile file"),
        (lambda root: str(_write(root / "r9" / "calibrate" / "result.json", "{}").parents[1]),
         "calibrate/result.json is not a calibration result"),
        (lambda root: "r8", "run 'r8' under"),
    ],
)
def test_bad_input_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str], make: Any,
                               needle: str) -> None:
    (tmp_path / "out" / "r8").mkdir(parents=True)
    arg = make(tmp_path)
    code, out, err = _run([ENGLISH, arg, "--output", str(tmp_path / "out")], capsys)
    assert code == 2 and out == ""
    assert err.startswith("error: ") and err.count("\n") == 1 and needle in err and repr(arg) in err, err


def _folder(path: Path) -> Path:
    path.mkdir(parents=True)
    return path


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path
