"""Every result type round-trips through JSON text, and a record with a missing, unknown or mistyped
key fails with one line naming it."""

from __future__ import annotations

import json
from typing import Any

import pytest

from pipeline.calibration.claims import Claim
from pipeline.calibration.outcome import CalibrationOutcome
from pipeline.job.export import TrackingRecord
from pipeline.jsonrecord import RecordError
from pipeline.ladder.reference import Ladder, LadderError
from pipeline.tuning.results import TuneResult
from pipeline.tuning.texel import TexelSeed

from . import samples
from .calibration_sample import sample_outcome


def _records() -> dict[str, Any]:
    """One record of every type, the nested ones included."""
    tune = samples.tune()
    assert tune.best is not None and tune.sprt is not None and tune.texel is not None
    outcome = sample_outcome()
    return {
        "rating": samples.rating(),
        "anchor": samples.ladder().anchors[1],
        "tune trial": tune.trials[1],
        "tune best": tune.best,
        "sprt": tune.sprt,
        "texel seed": tune.texel,
        "texel fit": tune.texel.fit,
        "skipped texel": TexelSeed(None, 0, "no ladder games"),
        "tune result": tune,
        "untuned": TuneResult("english", "s", {}, {}, False, "no trial finished", (), None, None, None),
        "calibration": outcome,
        "level": outcome.levels["medium"],
        "hard level": outcome.levels["hard"],
        "easy trial": outcome.easy_trials[0],
        "claim": outcome.claims[0],
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
    data = RECORDS["calibration"].to_json()
    del data["levels"]["easy"]["ci"]
    with pytest.raises(RecordError) as caught:
        CalibrationOutcome.from_json(data, "run")
    assert str(caught.value).startswith("run: levels.easy: missing key 'ci'")
    data = RECORDS["calibration"].to_json()
    data["levels"]["hard"]["games"] = 40.5
    with pytest.raises(RecordError, match=r"result: levels\.hard\.games: expected an int"):
        CalibrationOutcome.from_json(data)
    data = RECORDS["calibration"].to_json()
    data["easy_trials"][1]["params"]["noise_sigma"] = "2"
    with pytest.raises(RecordError, match=r"easy_trials\[1\]\.params\.noise_sigma: expected a number"):
        CalibrationOutcome.from_json(data)
    data = RECORDS["calibration"].to_json()
    del data["levels"]["medium"]
    with pytest.raises(RecordError, match=r"levels: missing key 'medium'"):
        CalibrationOutcome.from_json(data)
    data = RECORDS["calibration"].to_json()
    data["product_elo"]["hard"] = [1810.0, None, 1830.0]
    with pytest.raises(RecordError, match=r"product_elo\.hard: expected \[elo, low, high\]"):
        CalibrationOutcome.from_json(data)


def test_non_finite_numbers_are_refused() -> None:
    rating = {**samples.rating().to_json(), "elo": float("nan")}
    with pytest.raises(RecordError, match=r"rating: elo: expected a finite number, got nan"):
        type(samples.rating()).from_json(rating)
    with pytest.raises(RecordError, match="rating: expected a JSON object, got list"):
        type(samples.rating()).from_json([1, 2])
    claim = {**RECORDS["claim"].to_json(), "ci": [1.0]}
    with pytest.raises(RecordError, match=r"claim: ci: expected a list of 2, got \[1\.0\]"):
        Claim.from_json(claim)


def test_the_ladder_round_trips() -> None:
    ladder = samples.ladder()
    assert Ladder.from_json(json.loads(json.dumps(ladder.to_json())), "ladder.json") == ladder


#: A stored ``ladder.json`` as the ladder stage writes it (anchors flat: name, spec, rating numbers).
STORED_LADDER: dict[str, Any] = {
    "schema_version": 1,
    "variant": "english",
    "ladder_hash": "h",
    "engine_version": "0.1.0",
    "anchor": "random",
    "games": 80,
    "anchors": [
        {
            "name": "random",
            "spec": "random",
            "elo": 0.0,
            "ci_low": 0.0,
            "ci_high": 0.0,
            "games": 40,
            "score": 0.0125,
            "prior_driven": False,
        },
        {
            "name": "d1",
            "spec": "inline:d1:{}",
            "elo": 610.5,
            "ci_low": 540.0,
            "ci_high": 690.0,
            "games": 80,
            "score": 0.5,
            "prior_driven": False,
        },
        {
            "name": "d2",
            "spec": "inline:d2:{}",
            "elo": 905.0,
            "ci_low": 820.0,
            "ci_high": 1001.0,
            "games": 40,
            "score": 0.75,
            "prior_driven": True,
        },
    ],
    "results": [
        {"first": "random", "second": "d1", "wins": 0, "draws": 1, "losses": 39},
        {"first": "d1", "second": "d2", "wins": 10, "draws": 20, "losses": 10},
    ],
    "draw_nu": 0.8,
    "first_move_advantage": 25.0,
    "notes": ["a note"],
}


def test_a_stored_ladder_reads_as_written_and_writes_back_the_same() -> None:
    ladder = Ladder.from_json(STORED_LADDER, "ladder.json")
    d2 = ladder.anchor("d2")
    assert d2.spec == "inline:d2:{}" and d2.rating.player == "d2" and d2.rating.prior_driven
    assert (d2.elo, d2.rating.ci_low, d2.rating.ci_high, d2.rating.games) == (905.0, 820.0, 1001.0, 40)
    assert ladder.results[0] == ("random", "d1", 0, 1, 39) and ladder.n_games == 80
    assert ladder.to_json() == STORED_LADDER


@pytest.mark.parametrize(
    ("change", "needle"),
    [
        ({"schema_version": 2}, "ladder.json: ladder schema 2, expected 1"),
        ({"bogus": 1}, "ladder.json: unknown key 'bogus'"),
        ({"games": 81}, "ladder.json: games: 81, but the results hold 80 games"),
        ({"anchor": "d1"}, "ladder.json: anchor: expected 'random', got 'd1'"),
        ({"draw_nu": "0.8"}, "ladder.json: draw_nu: expected a finite number, got '0.8'"),
    ],
)
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
