"""Chained calibration: the order levels are calibrated in, and the head-to-head rating."""

from __future__ import annotations

import math

import numpy as np
import pyarrow as pa
import pytest

from pipeline.calibration.chain import Neighbour, chain_half_width, chain_order, rate_against
from pipeline.calibration.levelcheck import davidson_gap


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


def _match(results_a: list[tuple[float, float]], a: str = "cand", b: str = "ref",
           openings: int = 40) -> pa.Table:
    """Colour-swapped pairs: A is White in the first game of each pair, Black in the second; pair k
    plays opening k mod ``openings``."""
    rows: dict[str, list[object]] = {k: [] for k in ("white_player", "black_player", "result_white",
                                                     "variant", "run_id", "pair_id", "opening_id")}
    for k, (first, second) in enumerate(results_a):
        for white, black, result_white in ((a, b, first), (b, a, 1.0 - second)):
            rows["white_player"].append(white)
            rows["black_player"].append(black)
            rows["result_white"].append(result_white)
            rows["variant"].append("english")
            rows["run_id"].append("r")
            rows["pair_id"].append(k)
            rows["opening_id"].append(f"o{k % openings}")
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
    rows = [{"result_a": r if w == "cand" else 1.0 - r, "pair_id": p, "opening_id": o}
            for w, r, p, o in zip(table["white_player"].to_pylist(), table["result_white"].to_pylist(),
                                  table["pair_id"].to_pylist(), table["opening_id"].to_pylist(), strict=True)]
    check = davidson_gap(rows)
    assert rating.elo - 1800.0 == pytest.approx(check.rating.elo, abs=1e-6)
    assert rating.elo > 1800.0 + 100  # 60 % wins, 15 % losses: clearly stronger
    assert rating.ci_low < rating.elo < rating.ci_high and rating.games == 240


def _half(rating: object) -> float:
    return (rating.ci_high - rating.ci_low) / 2.0  # type: ignore[attr-defined]


def test_rate_against_resamples_openings_so_replayed_games_count_once() -> None:
    """Two noiseless levels replay each opening's pair: 40 distinct pairs played 6 times each are
    40 pairs of evidence, not 240. The opening bootstrap sees that; the pair bootstrap does not."""
    distinct = _pairs(5, 40, win=0.45, draw=0.3)
    replayed = _match(distinct * 6)  # pair k plays opening k mod 40: every repeat is the same game
    once = _match(distinct)
    neighbour = Neighbour("medium", "ref", "inline:ref:{}", elo=2000.0, chain_half_width=30.0)
    by_opening = rate_against(replayed, "cand", neighbour, bootstrap=300, seed=2)
    by_pair = rate_against(replayed, "cand", neighbour, bootstrap=300, seed=2, unit="pair")
    alone = rate_against(once, "cand", neighbour, bootstrap=300, seed=2)
    assert by_opening.elo == pytest.approx(alone.elo, abs=1.0)  # same score (the weak prior aside)
    assert _half(by_pair) < 0.6 * _half(by_opening)  # sqrt(6) = 2.4x too narrow, in expectation
    assert _half(by_opening) == pytest.approx(_half(alone), rel=0.25)


def test_rate_against_by_opening_matches_by_pair_when_no_opening_repeats() -> None:
    table = _match(_pairs(6, 120, win=0.45, draw=0.3), openings=120)
    neighbour = Neighbour("medium", "ref", "inline:ref:{}", elo=2000.0, chain_half_width=30.0)
    by_opening = rate_against(table, "cand", neighbour, bootstrap=200, seed=4)
    by_pair = rate_against(table, "cand", neighbour, bootstrap=200, seed=4, unit="pair")
    assert (by_opening.ci_low, by_opening.ci_high) == pytest.approx((by_pair.ci_low, by_pair.ci_high))


def test_rate_against_rejects_an_unknown_bootstrap_unit() -> None:
    from pipeline.ratings import RatingsError

    table = _match(_pairs(7, 20, win=0.4, draw=0.3))
    neighbour = Neighbour("medium", "ref", "inline:ref:{}", elo=2000.0, chain_half_width=30.0)
    with pytest.raises(RatingsError, match="bootstrap unit must be one of opening, pair, got 'game'"):
        rate_against(table, "cand", neighbour, bootstrap=50, unit="game")


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


def test_rate_against_by_pair_resamples_pairs() -> None:
    """unit="pair": games keyed by run id and pair id and resampled by pair, bit for bit the CI of
    a plain bootstrap over pairs."""
    from pipeline.ratings import fit_elo, games_from_color_table

    table = _match(_pairs(8, 60, win=0.5, draw=0.2))
    neighbour = Neighbour("medium", "ref", "inline:ref:{}", elo=2000.0, chain_half_width=30.0)
    now = rate_against(table, "cand", neighbour, bootstrap=100, seed=9, unit="pair")
    games = games_from_color_table(table, pair_id=("run_id", "pair_id"))
    before = fit_elo(games, "ref", 2000.0, advantage=0.0, ci_method="bootstrap", n_bootstrap=100,
                     seed=9)["cand"]
    assert (now.elo, now.ci_low, now.ci_high) == (before.elo, before.ci_low, before.ci_high)
