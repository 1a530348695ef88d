"""The PNG plots: real files with a PNG header and pixels, and clear errors on bad input."""

from __future__ import annotations

from pathlib import Path

import matplotlib
import matplotlib.pyplot as plt
import pytest

from pipeline.tracking.plots import (
    LadderRow,
    LevelBar,
    elo_ladder_plot,
    level_ladder_plot,
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


def test_history_plot_marks_the_chosen_trial(tmp_path: Path) -> None:
    values = [3.0, None, 1.0, 2.0]
    plain = optimisation_history_plot(values, tmp_path / "plain.png").read_bytes()
    marked = optimisation_history_plot(values, tmp_path / "marked.png", chosen=2).read_bytes()
    assert marked != plain and _is_png(tmp_path / "marked.png")
    with pytest.raises(ValueError, match="chosen trial index 1 has no finite value"):
        optimisation_history_plot(values, tmp_path / "bad.png", chosen=1)


def test_level_ladder_plot(tmp_path: Path) -> None:
    levels = [LevelBar("easy", 1010.0, 985.0, 1037.0, product=(1020.0, 990.0, 1050.0), target=1020.0),
              LevelBar("medium", 1440.0, 1415.0, 1467.0, product=(1500.0, 1500.0, 1500.0), target=1445.0),
              LevelBar("hard", 1880.0, 1855.0, 1907.0)]
    out = level_ladder_plot(levels, tmp_path / "levels.png")
    assert _is_png(out) and plt.get_fignums() == []
    untargeted = level_ladder_plot([LevelBar(lv.level, lv.elo, lv.ci_low, lv.ci_high, lv.product)
                                    for lv in levels], tmp_path / "bare.png")
    assert untargeted.read_bytes() != out.read_bytes()  # the targets are drawn
    with pytest.raises(ValueError, match=r"hard\.target = nan"):
        level_ladder_plot([LevelBar("hard", 1.0, 0.0, 2.0, target=float("nan"))], tmp_path / "bad.png")
    with pytest.raises(ValueError, match="at least one level"):
        level_ladder_plot([], tmp_path / "bad.png")


def test_score_distribution_plot(tmp_path: Path) -> None:
    scores = {"easy": [0, 0.5, 0.5, 1, 0], "medium": [1, 1, 0.5, 1.5, 2, 1], "hard": [2, 1.5, 2, 1]}
    assert _is_png(score_distribution_plot(scores, tmp_path / "scores.png"))
    with pytest.raises(ValueError, match=r"pair score 0\.7"):
        score_distribution_plot({"easy": [0.7]}, tmp_path / "bad.png")
