"""The PNG plots: real files with a PNG header and pixels, and clear errors on bad input."""

from __future__ import annotations

from pathlib import Path

import matplotlib
import matplotlib.pyplot as plt
import pytest

from pipeline.tracking.plots import (
    LadderRow,
    elo_ladder_plot,
    optimisation_history_plot,
    score_distribution_plot,
)

PNG = b"\x89PNG\r\n\x1a\n"


def _is_png(path: Path) -> bool:
    data = path.read_bytes()
    return data.startswith(PNG) and len(data) > 2000


def test_backend_is_agg_and_figures_are_closed(tmp_path: Path) -> None:
    assert matplotlib.get_backend().lower() == "agg"
    optimisation_history_plot([1.0, 2.0], tmp_path / "h.png")
    assert plt.get_fignums() == []


def test_elo_ladder_plot(tmp_path: Path) -> None:
    rows = [
        LadderRow("easy", -400.0, -460.0, -340.0, target=-380.0),
        LadderRow("medium", -120.0, -170.0, -70.0, target=-100.0),
        LadderRow("hard", 0.0, 0.0, 0.0),
        LadderRow("product", 35.0, -10.0, 80.0),
    ]
    out = elo_ladder_plot(rows, tmp_path / "sub" / "ladder.png")
    assert out == tmp_path / "sub" / "ladder.png" and _is_png(out)
    assert _is_png(elo_ladder_plot([LadderRow("odd CI", 10.0, 20.0, 30.0)], tmp_path / "odd.png"))
    with pytest.raises(ValueError, match=r"x\.ci_high = inf"):
        elo_ladder_plot([LadderRow("x", 10.0, 0.0, float("inf"))], tmp_path / "bad.png")
    with pytest.raises(ValueError, match="at least one row"):
        elo_ladder_plot([], tmp_path / "bad.png")


def test_optimisation_history_plot(tmp_path: Path) -> None:
    out = optimisation_history_plot([3.0, None, 1.0, float("nan"), 0.5, 2.0], tmp_path / "h.png",
                                    direction="minimize")
    assert _is_png(out)
    with pytest.raises(ValueError, match="finite"):
        optimisation_history_plot([None], tmp_path / "bad.png")


def test_score_distribution_plot(tmp_path: Path) -> None:
    scores = {"easy": [0, 0.5, 0.5, 1, 0], "medium": [1, 1, 0.5, 1.5, 2, 1], "hard": [2, 1.5, 2, 1]}
    assert _is_png(score_distribution_plot(scores, tmp_path / "scores.png"))
    with pytest.raises(ValueError, match=r"pair score 0\.7"):
        score_distribution_plot({"easy": [0.7]}, tmp_path / "bad.png")
