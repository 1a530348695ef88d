"""``python -m pipeline levelcheck``: the profile's levels against the product's, predictions judged."""

from __future__ import annotations

import json
from dataclasses import fields
from pathlib import Path

import pytest

from engine.profile import (
    SCHEMA_VERSION,
    LevelMeasures,
    LevelProfile,
    LevelProvenance,
    Profile,
    Provenance,
    dump_profile,
    load_profile,
)
from engine.variants import get_variant
from pipeline.calibration.levelcheck import LevelCheckError, LevelCheckSettings, matches, run_levelcheck
from pipeline.cli.common import EXIT_USAGE
from pipeline.cli.main import build_parser, main
from pipeline.ratings.logistic import elo_to_score

# small, fast levels: easy half random at depth 1, medium depth 1, hard depth 2
KNOBS = {
    "easy": {"max_depth": 1, "random_move_prob": 0.5},
    "medium": {"max_depth": 1},
    "hard": {"max_depth": 2},
}
ELO = {"easy": 1000.0, "medium": 1300.0, "hard": 1600.0}


def write_profile(path: Path, variant: str = "english", measured: bool = True) -> Path:
    """A 3-level profile with tiny searches and made-up claims (or none)."""
    rules = get_variant(variant)
    levels = {
        name: LevelProfile.from_knobs(rules, name, knobs={"node_budget": 2000, "tt_log2": 10, **knobs})
        for name, knobs in KNOBS.items()
    }
    prov = {}
    for name in KNOBS:
        measures = LevelMeasures(10.0, 1.0, 0.1, None, {"easy": 0.3, "medium": 0.2, "hard": 0.1})
        prov[name] = (
            LevelProvenance(ELO[name], (ELO[name] - 40, ELO[name] + 40), "", None, measures)
            if measured
            else LevelProvenance()
        )
    path.write_text(
        dump_profile(Profile(SCHEMA_VERSION, rules, levels, Provenance(levels=prov))), encoding="utf-8"
    )
    load_profile(path)  # the engine's strict loader accepts it
    return path


def test_matches_predict_from_the_profiles_claims(tmp_path: Path) -> None:
    profile = load_profile(write_profile(tmp_path / "p.json"))
    found = {(m.a, m.b): m.predicted for m in matches(profile)}
    assert found[("profile-easy", "product-easy")] == 0.3 and found[("profile-hard", "product-hard")] == 0.1
    assert found[("profile-medium", "profile-easy")] == pytest.approx(float(elo_to_score(300.0)))
    assert len(found) == 5
    bare = load_profile(write_profile(tmp_path / "q.json", measured=False))
    assert all(m.predicted is None for m in matches(bare))


def test_settings_and_cli_defaults_agree() -> None:
    args = build_parser().parse_args(["levelcheck", "p.json", "--output", "d"])
    parsed = LevelCheckSettings(**{f.name: getattr(args, f.name) for f in fields(LevelCheckSettings)})
    assert parsed == LevelCheckSettings("p.json", "d") and parsed.deck_part == "odd"
    with pytest.raises(LevelCheckError, match="--batch-size must be even"):
        LevelCheckSettings("p.json", "d", batch_size=3).check()
    with pytest.raises(LevelCheckError, match=r"--seed must be <= 9223372036854775807 .*, got 9\d{18}$"):
        LevelCheckSettings("p.json", "d", seed=2**63).check()


def test_bad_input_is_one_line_and_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "check"
    assert (
        main(["levelcheck", str(tmp_path / "missing.json"), "--output", str(out), "--in-process"])
        == EXIT_USAGE
    )
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1 and "missing.json" in err
    profile = write_profile(tmp_path / "p.json")
    assert (
        main(["levelcheck", str(profile), "--output", str(out), "--openings", "1", "--in-process"])
        == EXIT_USAGE
    )
    assert "--openings must be >= 2" in capsys.readouterr().err
    assert not list(out.rglob("*.parquet"))  # nothing was played


@pytest.mark.slow  # the product's Hard searches 200,000 nodes a move
def test_levelcheck_judges_predictions_and_resumes(tmp_path: Path) -> None:
    profile = write_profile(tmp_path / "p.json")
    out = tmp_path / "check"
    settings = LevelCheckSettings(
        str(profile), str(out), openings=2, batch_size=2, ply_cap=40, bootstrap=50, in_process=True
    )
    result = run_levelcheck(settings)
    assert result["games"] == 5 * 2 * 2 and result["judged"] == 5
    assert 0 <= result["reproduced"] <= 5
    for row in result["matches"]:
        low, high = row["score_ci"]
        assert low <= row["score"] <= high and row["reproduced"] == (low <= row["predicted_score"] <= high)
    assert set(result["levels"]) == {"easy", "medium", "hard"}
    assert result["levels"]["medium"]["claimed_elo"] == 1300.0
    saved = {p: p.stat().st_mtime_ns for p in out.rglob("batch-*.parquet")}
    again = run_levelcheck(settings)  # the same check: read back, nothing replayed
    assert {p: p.stat().st_mtime_ns for p in out.rglob("batch-*.parquet")} == saved
    assert again["matches"] == result["matches"]
    assert json.loads((out / "levelcheck.json").read_text())["games"] == 20
    assert "| profile-medium - profile-easy |" in (out / "levelcheck.md").read_text()
    with pytest.raises(LevelCheckError, match="holds a level check of other settings"):
        run_levelcheck(LevelCheckSettings(str(profile), str(out), openings=3, batch_size=2, in_process=True))


def test_a_level_cut_off_by_perfect_scores_is_reported_not_judged(tmp_path: Path) -> None:
    """Medium beating Easy in every game (and product-easy met only by Easy) leaves Easy's Elo to
    the fit's prior: the check says so instead of judging the claim against it."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    from engine.profile import load_profile as load
    from pipeline.calibration.levelcheck import _judge, markdown

    profile_path = write_profile(tmp_path / "p.json")
    out = tmp_path / "check"
    settings = LevelCheckSettings(
        str(profile_path), str(out), openings=2, batch_size=2, ply_cap=40, bootstrap=50, in_process=True
    )
    run_levelcheck(settings)
    games = pa.concat_tables(pq.read_table(p) for p in sorted(out.rglob("batch-*.parquet")))
    pair = pc.and_(pc.is_in(games["white_player"], pa.array(["profile-medium", "profile-easy"])),
                   pc.is_in(games["black_player"], pa.array(["profile-medium", "profile-easy"])))
    medium_white = pc.equal(games["white_player"], "profile-medium")
    forced = pc.if_else(pair, pc.if_else(medium_white, 1.0, 0.0), games["result_white"])
    games = games.set_column(games.schema.get_field_index("result_white"), "result_white",
                             forced.cast(games.schema.field("result_white").type))
    result = _judge(settings, load(profile_path), list(matches(load(profile_path))), games)
    easy = result["levels"]["easy"]
    assert easy["elo_measured"] is False and easy["claim_inside_ci"] is None
    assert result["levels"]["medium"]["elo_measured"] is True
    assert "| easy |" in markdown(result) and "not measured (perfect scores" in markdown(result)
