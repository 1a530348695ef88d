"""Every result type round-trips through JSON text, and a record with a missing, unknown or mistyped
key fails with one line naming it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pipeline.calibration.levelcheck_results import LevelCheckSettings
from pipeline.calibration.results import CalibrationResult, WinScores, read_calibration
from pipeline.games.stage import write_result
from pipeline.job.export import TrackingRecord
from pipeline.job.report import LevelTable, level_rows
from pipeline.jsonrecord import RecordError
from pipeline.ladder.reference import Ladder, LadderError
from pipeline.tuning.results import TuneResult
from pipeline.tuning.texel import TexelSeed

from . import samples


def _records() -> dict[str, Any]:
    """One record of every type, the nested ones included."""
    chained = samples.chained_calibration()
    easy = chained.levels["easy"]
    conf = easy.confirmation
    assert conf is not None and conf.selection is not None and conf.alone is not None
    tune = samples.tune()
    assert tune.best is not None and tune.sprt is not None and tune.texel is not None
    check = samples.levelcheck()
    match = check.adjacent[0]
    plain = samples.calibration(confirmed=False)
    rows = level_rows(chained)
    return {
        "rating": samples.rating(), "anchor": samples.ladder().anchors[1],
        "win scores": samples.trial().opponent_wins, "no wins": WinScores.of([]),
        "trial": samples.trial(), "proposal": easy.candidate, "neighbour": conf.neighbour,
        "confirmation": conf, "selection": conf.selection, "level": easy,
        "unconfirmed level": plain.levels["hard"], "calibration": samples.calibration(),
        "chained calibration": chained, "unconfirmed calibration": plain,
        "tune trial": tune.trials[1], "tune best": tune.best, "sprt": tune.sprt, "texel seed": tune.texel,
        "texel fit": tune.texel.fit, "skipped texel": TexelSeed(None, 0, "no ladder games"),
        "tune result": tune,
        "untuned": TuneResult("english", "s", {}, {}, False, "no trial finished", (), None, None, None),
        "settings": check.settings, "davidson": match.measured.davidson, "match rating": match.measured,
        "claim": match.claimed.a, "claimed gap": match.claimed, "difference test": match.difference_test,
        "match": match, "unclaimed match": check.adjacent[1], "level stats": check.levels["easy"],
        "blunders": check.levels["easy"].blunders, "level check": check,
        "level row": rows[0], "proposal row": rows[0] if rows[0].trial is None else rows[1],
        "level table": LevelTable("english", tuple(rows), True, ("n",), None),
        "tracking record": TrackingRecord("mlflow-run-1", "draughts-english"),
        "untracked": TrackingRecord(None, None),
    }


RECORDS = _records()


def _text_round_trip(record: Any) -> Any:
    return type(record).from_json(json.loads(json.dumps(record.to_json(), allow_nan=False)))


@pytest.mark.parametrize("name", sorted(RECORDS))
def test_every_record_round_trips_through_json_text(name: str) -> None:
    record = RECORDS[name]
    assert _text_round_trip(record) == record


@pytest.mark.parametrize("name", sorted(RECORDS))
def test_a_missing_or_unknown_key_fails_naming_it(name: str) -> None:
    record = RECORDS[name]
    data = record.to_json()
    for key in data:
        broken = {k: v for k, v in data.items() if k != key}
        with pytest.raises(RecordError) as missing:
            type(record).from_json(broken)
        assert f"missing key {key!r}" in str(missing.value) and "\n" not in str(missing.value)
    with pytest.raises(RecordError) as unknown:
        type(record).from_json({**data, "bogus": 1})
    assert "unknown key 'bogus'" in str(unknown.value) and "\n" not in str(unknown.value)


def test_a_nested_error_names_the_path_and_the_key() -> None:
    data = RECORDS["chained calibration"].to_json()
    del data["levels"]["easy"]["confirm"]["selection"]["rating"]["elo"]
    with pytest.raises(RecordError) as caught:
        CalibrationResult.from_json(data, "run")
    assert str(caught.value) == "run: levels.easy.confirm.selection.rating: missing key 'elo'"
    data = RECORDS["calibration"].to_json()
    data["levels"]["hard"]["candidate"]["rating"]["games"] = 40.5
    with pytest.raises(RecordError, match=r"result: levels\.hard\.candidate\.rating\.games: expected an int"):
        CalibrationResult.from_json(data)
    data = RECORDS["calibration"].to_json()
    data["trials"]["medium"][1]["knobs"]["max_depth"] = "2"
    with pytest.raises(RecordError, match=r"trials\.medium\[1\]\.knobs\.max_depth: expected a number"):
        CalibrationResult.from_json(data)
    data = RECORDS["calibration"].to_json()
    del data["levels"]["medium"]
    with pytest.raises(RecordError, match=r"levels: missing key 'medium'"):
        CalibrationResult.from_json(data)


@pytest.mark.parametrize(("key", "value", "needle"), [
    ("pairs", True, "settings: pairs: expected an integer, got True"),
    ("baseline", 3, "settings: baseline: expected a string, got 3"),
    ("in_process", "yes", "settings: in_process: expected true or false, got 'yes'"),
])
def test_values_keep_their_json_types(key: str, value: object, needle: str) -> None:
    data = {**LevelCheckSettings("p.json", "out").to_json(), key: value}
    with pytest.raises(RecordError) as caught:
        LevelCheckSettings.from_json(data)
    assert needle in str(caught.value)


def test_non_finite_numbers_and_other_versions_are_refused() -> None:
    rating = {**samples.rating().to_json(), "elo": float("nan")}
    with pytest.raises(RecordError, match=r"rating: elo: expected a finite number, got nan"):
        type(samples.rating()).from_json(rating)
    check = {**RECORDS["level check"].to_json(), "version": 1}
    with pytest.raises(RecordError, match=r"levelcheck\.json: version: expected 2, got 1"):
        type(RECORDS["level check"]).from_json(check)
    proposal = {**RECORDS["proposal"].to_json(), "proposed": False}
    with pytest.raises(RecordError, match="proposed: expected True"):
        type(RECORDS["proposal"]).from_json(proposal)
    with pytest.raises(RecordError, match="rating: expected a JSON object, got list"):
        type(samples.rating()).from_json([1, 2])
    trial = {**RECORDS["trial"].to_json(), "anchors": ["d1", 2]}
    with pytest.raises(RecordError, match=r"^trial: anchors\[1\]: expected a string, got 2$"):
        type(RECORDS["trial"]).from_json(trial)
    conf = {**RECORDS["confirmation"].to_json()}
    conf["rating"] = {**conf["rating"], "ci_low": None}
    with pytest.raises(RecordError, match=r"^confirmation: rating\.ci_low: expected a finite number"):
        type(RECORDS["confirmation"]).from_json(conf)
    gap = {**RECORDS["claimed gap"].to_json(), "ci": [1.0]}
    with pytest.raises(RecordError, match=r"claimed: ci: expected a list of 2, got \[1\.0\]"):
        type(RECORDS["claimed gap"]).from_json(gap)


def test_a_result_file_names_itself_in_errors(tmp_path: Path) -> None:
    path = tmp_path / "calibrate" / "result.json"
    assert read_calibration(path) is None
    write_result(path, RECORDS["calibration"].to_json())
    assert read_calibration(path) == RECORDS["calibration"]
    data = json.loads(path.read_text())
    data["levels"]["easy"]["extra"] = 1
    write_result(path, data)
    with pytest.raises(RecordError) as caught:
        read_calibration(path)
    assert str(caught.value).startswith(f"{path}: levels.easy: unknown key 'extra'; expected candidate, ")


def test_the_ladder_round_trips() -> None:
    ladder = samples.ladder()
    assert Ladder.from_json(json.loads(json.dumps(ladder.to_json())), "ladder.json") == ladder


#: A stored ``ladder.json`` as the ladder stage writes it (anchors flat: name, spec, rating numbers).
STORED_LADDER: dict[str, Any] = {
    "schema_version": 1, "variant": "english", "ladder_hash": "h", "engine_version": "0.1.0",
    "anchor": "random", "games": 80,
    "anchors": [
        {"name": "random", "spec": "random", "elo": 0.0, "ci_low": 0.0, "ci_high": 0.0, "games": 40,
         "score": 0.0125, "prior_driven": False},
        {"name": "d1", "spec": "inline:d1:{}", "elo": 610.5, "ci_low": 540.0, "ci_high": 690.0, "games": 80,
         "score": 0.5, "prior_driven": False},
        {"name": "d2", "spec": "inline:d2:{}", "elo": 905.0, "ci_low": 820.0, "ci_high": 1001.0, "games": 40,
         "score": 0.75, "prior_driven": True},
    ],
    "results": [{"first": "random", "second": "d1", "wins": 0, "draws": 1, "losses": 39},
                {"first": "d1", "second": "d2", "wins": 10, "draws": 20, "losses": 10}],
    "draw_nu": 0.8, "first_move_advantage": 25.0, "notes": ["a note"],
}


def test_a_stored_ladder_reads_as_written_and_writes_back_the_same() -> None:
    ladder = Ladder.from_json(STORED_LADDER, "ladder.json")
    d2 = ladder.anchor("d2")
    assert d2.spec == "inline:d2:{}" and d2.rating.player == "d2" and d2.rating.prior_driven
    assert (d2.elo, d2.rating.ci_low, d2.rating.ci_high, d2.rating.games) == (905.0, 820.0, 1001.0, 40)
    assert ladder.results[0] == ("random", "d1", 0, 1, 39) and ladder.n_games == 80
    assert ladder.to_json() == STORED_LADDER


@pytest.mark.parametrize(("change", "needle"), [
    ({"schema_version": 2}, "ladder.json: ladder schema 2, expected 1"),
    ({"bogus": 1}, "ladder.json: unknown key 'bogus'"),
    ({"games": 81}, "ladder.json: games: 81, but the results hold 80 games"),
    ({"anchor": "d1"}, "ladder.json: anchor: expected 'random', got 'd1'"),
    ({"draw_nu": "0.8"}, "ladder.json: draw_nu: expected a finite number, got '0.8'"),
])
def test_a_bad_ladder_file_is_one_line_naming_the_key(change: dict[str, Any], needle: str) -> None:
    with pytest.raises(LadderError) as caught:
        Ladder.from_json({**STORED_LADDER, **change}, "ladder.json")
    assert str(caught.value).startswith(needle) and "\n" not in str(caught.value)


def test_a_bad_anchor_or_result_names_its_place() -> None:
    data = json.loads(json.dumps(STORED_LADDER))
    del data["anchors"][1]["ci_high"]
    with pytest.raises(LadderError, match=r"^ladder\.json: anchors\[1\]: missing key 'ci_high'$"):
        Ladder.from_json(data, "ladder.json")
    data = json.loads(json.dumps(STORED_LADDER))
    data["results"][1]["wins"] = 10.5
    needle = r"^ladder\.json: results\[1\]\.wins: expected an integer, got 10\.5$"
    with pytest.raises(LadderError, match=needle):
        Ladder.from_json(data, "ladder.json")
