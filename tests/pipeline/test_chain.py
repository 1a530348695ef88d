"""Chained calibration: the order levels are calibrated in, and the head-to-head rating."""

from __future__ import annotations

import math

import numpy as np
import pyarrow as pa
import pytest

from pipeline.chain import Neighbour, chain_half_width, chain_order, rate_against
from pipeline.levelcheck import davidson_gap


@pytest.mark.parametrize(
    ("start", "order"),
    [
        ("easy", [("easy", None), ("medium", "easy"), ("hard", "medium")]),
        ("medium", [("medium", None), ("easy", "medium"), ("hard", "medium")]),
        ("hard", [("hard", None), ("medium", "hard"), ("easy", "medium")]),
    ],
)
def test_chain_order_goes_outward_from_the_ladder_level(start: str,
                                                        order: list[tuple[str, str | None]]) -> None:
    assert chain_order(start) == order


def test_chain_order_names_a_bad_level() -> None:
    with pytest.raises(ValueError, match="'expert'"):
        chain_order("expert")


def _match(results_a: list[tuple[float, float]], a: str = "cand", b: str = "ref") -> pa.Table:
    """Colour-swapped pairs: A is White in the first game of each pair, Black in the second."""
    rows: dict[str, list[object]] = {k: [] for k in ("white_player", "black_player", "result_white",
                                                     "variant", "run_id", "pair_id")}
    for k, (first, second) in enumerate(results_a):
        for white, black, result_white in ((a, b, first), (b, a, 1.0 - second)):
            rows["white_player"].append(white)
            rows["black_player"].append(black)
            rows["result_white"].append(result_white)
            rows["variant"].append("english")
            rows["run_id"].append("r")
            rows["pair_id"].append(k)
    return pa.table(rows)


def _pairs(seed: int, n: int, win: float, draw: float) -> list[tuple[float, float]]:
    rng = np.random.default_rng(seed)
    values = rng.choice([1.0, 0.5, 0.0], size=(n, 2), p=[win, draw, 1.0 - win - draw])
    return [(float(x), float(y)) for x, y in values]


def test_rate_against_is_the_neighbour_plus_the_level_checks_davidson_gap() -> None:
    """The claim a chain makes is what the independent check measures: the same estimator."""
    table = _match(_pairs(3, 120, win=0.6, draw=0.25))
    neighbour = Neighbour("easy", "ref", "inline:ref:{}", elo=1800.0, chain_half_width=40.0)
    rating = rate_against(table, "cand", neighbour, bootstrap=100, seed=1)
    rows = [{"result_a": r if w == "cand" else 1.0 - r, "pair_id": p}
            for w, r, p in zip(table["white_player"].to_pylist(), table["result_white"].to_pylist(),
                               table["pair_id"].to_pylist(), strict=True)]
    check = davidson_gap(rows)
    assert rating.elo - 1800.0 == pytest.approx(check["elo"], abs=1e-6)
    assert rating.elo > 1800.0 + 100  # 60 % wins, 15 % losses: clearly stronger
    assert rating.ci_low < rating.elo < rating.ci_high and rating.games == 240


def test_rate_against_reads_a_weaker_level_below_its_neighbour() -> None:
    table = _match(_pairs(4, 80, win=0.1, draw=0.3))
    neighbour = Neighbour("medium", "ref", "inline:ref:{}", elo=2200.0, chain_half_width=40.0)
    rating = rate_against(table, "cand", neighbour)
    assert rating.ci_high < 2200.0 and rating.score < 0.5


def test_chain_half_width_adds_along_the_chain_in_quadrature() -> None:
    neighbour = Neighbour("medium", "ref", "inline:ref:{}", elo=2200.0, chain_half_width=30.0)
    assert chain_half_width(40.0, None) == 40.0
    assert chain_half_width(40.0, neighbour) == pytest.approx(50.0)
    assert math.isclose(chain_half_width(0.0, neighbour), 30.0)
