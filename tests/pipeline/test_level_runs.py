"""Level runs: every level result under the same tags and plain metric names, the levels table."""

from __future__ import annotations

from dataclasses import replace

import pytest

from pipeline.job.level_runs import (
    LevelResult,
    calibration_results,
    job_metrics,
    ladder_results,
    levels_table,
)

from . import samples
from .calibration_sample import sample_outcome

PLAYERS = [  # the pooled fit's players: the chosen levels, the product's, and candidates
    {"player": "easy-t003", "elo": 1010.4, "ci": [985.0, 1037.0], "games": 400, "points": 1.0},
    {"player": "easy-t004", "elo": 940.0, "ci": [900.0, 980.0], "games": 40, "points": 1.0},
    {"player": "hard-25000", "elo": 1700.2, "ci": [1670.0, 1730.0], "games": 80, "points": 1.0},
    {"player": "hard-200000", "elo": 1880.0, "ci": [1855.0, 1907.0], "games": 400, "points": 1.0},
    {"player": "medium-d4-n35", "elo": 1440.0, "ci": [1415.0, 1467.0], "games": 400, "points": 1.0},
    {"player": "product-easy", "elo": 1020.0, "ci": [990.0, 1050.0], "games": 240, "points": 1.0},
    {"player": "product-medium", "elo": 1500.0, "ci": [1500.0, 1500.0], "games": 480, "points": 1.0},
    {"player": "product-hard", "elo": 1810.0, "ci": [1790.0, 1830.0], "games": 240, "points": 1.0},
]


def _results() -> list[LevelResult]:
    return calibration_results(replace(sample_outcome(), scale={"players": PLAYERS}))


def test_every_level_result_is_a_run_with_the_same_names() -> None:
    results = _results()
    kinds = [(r.kind, r.level) for r in results]
    assert kinds == [("calibrated", "easy"), ("calibrated", "medium"), ("calibrated", "hard"),
                     ("product", "easy"), ("product", "medium"), ("product", "hard"),
                     ("candidate", "easy-t004"), ("candidate", "hard-25000")]  # not the chosen players
    assert len({r.name for r in results}) == len(results)  # a run name is unique under its stage
    common = {"elo", "elo_ci_low", "elo_ci_high", "games"}
    assert all(common <= set(r.metrics) for r in results)
    hard = results[2]
    assert hard.run_tags() == {"kind": "calibrated", "level": "hard", "player": "hard-200000",
                               "elo_scale": "product-medium=1500"}
    assert hard.metrics["target_elo"] == 1810.0 + 50.0  # the Hard claim's margin over the product's Hard
    assert results[1].metrics["target_elo"] == (1010.0 + 1880.0) / 2  # Medium: halfway
    assert results[0].metrics["target_elo"] == 1020.0  # Easy: the product's Easy
    assert "expected_score_next" not in hard.metrics and results[0].metrics["expected_score_next"] == 0.08
    assert hard.params["search.node_budget"] == 200_000
    product_easy = results[3]
    assert product_easy.name == "product-easy" and product_easy.metrics["games"] == 240.0
    assert product_easy.metrics["blunder_rate"] == 0.2
    assert product_easy.metrics["expected_score_next"] == pytest.approx(1 / (1 + 10 ** (480 / 400)))
    easy_candidate = results[6]
    assert easy_candidate.tags["path"] == "easy" and easy_candidate.metrics["blunder_rate"] == 0.12
    assert easy_candidate.params == {"noise_sigma": 300.0, "random_move_prob": 0.4}
    with pytest.raises(ValueError, match="kind 'trial'"):
        LevelResult("x", "trial", "x", "x", {})


def test_levels_table_and_job_metrics() -> None:
    table = levels_table(_results())
    assert table["kind"] == ["calibrated"] * 3 + ["product"] * 3
    assert table["level"] == ["easy", "medium", "hard"] * 2
    assert table["elo"][:3] == [1010.0, 1440.0, 1880.0] and table["target_elo"][3:] == [None] * 3
    assert table["expected_score_next"][3] == 0.059  # rounded to 3 decimals, as logged
    assert len({len(v) for v in table.values()}) == 1
    metrics = job_metrics(sample_outcome())
    assert metrics["elo_hard"] == 1880.0 and metrics["elo_easy_ci_low"] == 985.0 and len(metrics) == 9


def test_ladder_anchors_are_level_runs_on_their_own_scale() -> None:
    results = ladder_results(samples.ladder())
    assert [(r.name, r.kind, r.level) for r in results] == [
        ("random", "anchor", "random"), ("d1", "anchor", "d1"), ("d2", "anchor", "d2")]
    assert results[2].metrics == {"elo": 900.0, "elo_ci_low": 780.0, "elo_ci_high": 1020.0, "games": 80.0,
                                  "score": 0.8}
    assert {r.tags["elo_scale"] for r in results} == {"random=0"}
    assert levels_table(results)["level"] == []  # the levels table holds the calibrated and product levels
