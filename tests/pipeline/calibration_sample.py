"""A calibration outcome with made-up numbers (no games), for export and report tests."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from engine.profile import LEVEL_NAMES
from pipeline.calibration.claims import easy_claim, hard_claim, medium_claim
from pipeline.calibration.outcome import CalibrationOutcome, EasyTrial, LevelOutcome
from pipeline.calibration.paths import easy_player, hard_player, medium_player
from pipeline.games.stage import write_result

WEIGHTS: dict[str, float] = {}


def sample_outcome(variant: str = "english") -> CalibrationOutcome:
    from engine.features import default_weights
    from engine.variants import get_variant

    weights = default_weights(get_variant(variant))
    players = {
        "easy": easy_player(variant, weights, {"noise_sigma": 120.0, "random_move_prob": 0.2}, "easy-t003"),
        "medium": medium_player(variant, weights, 35.0),
        "hard": hard_player(variant, weights, 200_000),
    }
    elos = {"easy": 1010.0, "medium": 1440.0, "hard": 1880.0}
    levels = {}
    for i, name in enumerate(LEVEL_NAMES):
        p = players[name]
        elo = elos[name]
        levels[name] = LevelOutcome(
            level=name,
            player=p.name,
            profile=p.level.to_json(),
            elo=elo,
            ci=(elo - 25.0, elo + 27.0),
            validation_elo=elo + 5,
            validation_ci=(elo - 30, elo + 40),
            expected_score_next=None if name == "hard" else 0.08 + 0.01 * i,
            expected_score_product={"easy": 0.5, "medium": 0.2, "hard": 0.1},
            nodes_per_move=100.0 * (10**i),
            median_depth=2.0 + 3 * i,
            blunder_rate=0.1 / (i + 1),
            blunder_ci=(0.01, 0.2),
            games=400,
            tactics=(100 + 20 * i, 150),
            measured_scores={f'product-{name}': (0.5, 0.45, 0.55)},
        )
    trials = (
        EasyTrial(
            3, "easy-t003", {"noise_sigma": 120.0, "random_move_prob": 0.2}, -12.0, 0.48, 0.09, 40, True
        ),
        EasyTrial(
            4, "easy-t004", {"noise_sigma": 300.0, "random_move_prob": 0.4}, -90.0, 0.37, 0.12, 40, False
        ),
    )
    return CalibrationOutcome(
        variant=variant,
        product_file="engine/profiles/english-baseline.json",
        anchor="product-medium",
        anchor_elo=1500.0,
        levels=levels,
        claims=(
            hard_claim(70.0, 45.0, 95.0),
            easy_claim(-12.0, -40.0, 16.0),
            medium_claim(-5.0, -40.0, 30.0),
        ),
        easy_trials=trials,
        easy_choice=3,
        product_elo={
            "easy": (1020.0, 990.0, 1050.0),
            "medium": (1500.0, 1500.0, 1500.0),
            "hard": (1810.0, 1790.0, 1830.0),
        },
        product_easy_blunder_rate=0.2,
        easy_blunder_halved=True,
        medium_target=1445.0,
        medium_note="noise curve inverted at 1445",
        curves={
            "hard": {
                "axis": "log2(node_budget)",
                "points": [
                    {"x": 14.6, "player": "hard-25000", "elo": 1700.0, "ci": [1670.0, 1730.0]},
                    {"x": math.log2(200_000), "player": "hard-200000", "elo": 1880.0, "ci": [1855.0, 1907.0],
                     "nodes_per_move": 163590.0, "ms_per_move": 51.53},
                ],
            },
            "medium": {
                "axis": "-noise_sigma",
                "points": [
                    {"x": -80.0, "player": "medium-d4-n80", "elo": 1300.0, "ci": [1270.0, 1330.0]},
                    {"x": 0.0, "player": "medium-d4-n0", "elo": 1520.0, "ci": [1500.0, 1540.0]},
                ],
            },
        },
        openings={"curve": 100, "validation": 200, "unused": 0},
        curve_openings=("001", "002"),
        validation_openings=("003",),
        games=12000,
        scale={"anchor": "product-medium"},
    )


def fake_run(root: Path, run_id: str = "r1", variant: str = "english") -> Path:
    """A run folder holding what the calibrate stage and the job write (no games needed)."""
    folder = root / run_id
    write_result(folder / "calibrate" / "result.json", sample_outcome(variant).to_json())
    write_result(folder / "run.json", {"run_id": run_id, "config_hash": "c0ffee"})
    write_result(folder / "tracking.json", {"run_id": "mlflow-run-1", "experiment": f"draughts-{variant}"})
    return folder


def result_json(folder: Path) -> Any:
    import json

    return json.loads((folder / "calibrate" / "result.json").read_text())
