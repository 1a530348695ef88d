"""Strength curves: recovery of a known monotone Elo-over-knob function from simulated games, the
inversion and its CI, clamping, pooling of non-monotone points, errors and JSON."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import scipy.stats

from pipeline.ratings import RatingsError
from pipeline.ratings.curve import StrengthCurve, curve_from_samples, fit_curve
from pipeline.ratings.scale import scale_from_games
from pipeline.ratings.simulate_scale import simulate_scale_games

XS = np.arange(4.0, 12.0)  # e.g. log2 of a node budget
POINTS = [f"h{int(x)}" for x in XS]


def _true(x: float | np.ndarray) -> float | np.ndarray:
    """A smooth increasing Elo curve: 1140 at x = 4, 1500 near 6.56, 2260 at x = 11."""
    return 1000.0 + 1400.0 / (1.0 + np.exp(-(np.asarray(x) - 7.5) / 1.6))


X_AT_1500 = 7.5 - 1.6 * math.log(1.8)  # _true(X_AT_1500) == 1500


@pytest.fixture(scope="module")
def curve() -> StrengthCurve:
    """Points along the knob play their two nearest neighbours on each side and the anchor Medium."""
    elos = {p: float(_true(x)) for p, x in zip(POINTS, XS, strict=True)} | {"medium": 1500.0}
    pairings = [(POINTS[i], POINTS[j]) for i in range(len(POINTS)) for j in (i + 1, i + 2) if j < len(POINTS)]
    pairings += [(p, "medium") for p in POINTS]
    table = simulate_scale_games(elos, pairings, 150, rng=np.random.default_rng(4), colour_bias_sd=0.5,
                                 draw_share=0.3, replays=2)
    fit = scale_from_games(table, "medium", anchor_elo=1500.0, bootstrap=400, seed=2)
    return fit_curve(XS, fit, POINTS, increasing=True)


def test_curve_recovers_a_known_monotone_function(curve: StrengthCurve) -> None:
    worst = 0.0
    for x in np.linspace(4.0, 11.0, 29):
        est = curve.at(float(x))
        true = float(_true(x))
        worst = max(worst, abs(est.value - true))
        assert est.ci_low <= est.value <= est.ci_high
        assert abs(est.value - true) < 3 * max(est.ci_high - est.ci_low, 1.0) / 2, (x, est, true)
    assert worst < 40.0  # measured: 26 Elo at worst (the whole curve sits about 20 Elo high here)
    assert np.all(np.diff(curve.fitted) >= 0) and curve.notes == ()


def test_inversion_recovers_the_knob_value_with_a_ci(curve: StrengthCurve) -> None:
    knob = curve.invert(1500.0)
    assert not knob.clamped and knob.clamped_share == 0.0
    assert knob.ci_low <= X_AT_1500 <= knob.ci_high
    assert abs(knob.value - X_AT_1500) < 0.3
    assert curve.at(knob.value).value == pytest.approx(1500.0, abs=1e-6)  # inverse of at()
    for target in (1200.0, 1800.0, 2100.0):
        assert curve.at(curve.invert(target).value).value == pytest.approx(target, abs=1e-6)


def test_targets_outside_the_curve_are_clamped_with_a_flag(curve: StrengthCurve) -> None:
    high = curve.invert(3000.0)
    assert high.clamped and high.value == 11.0 and high.clamped_share == 1.0
    low = curve.invert(500.0)
    assert low.clamped and low.value == 4.0 and low.ci_low == low.ci_high == 4.0
    near_top = curve.invert(curve.elo_range[1] - 1.0)  # inside the point curve, outside some samples
    assert not near_top.clamped and 0.0 < near_top.clamped_share < 1.0
    with pytest.raises(RatingsError, match="outside the curve's measured range"):
        curve.at(12.5)


def _gaussian_curve(rng: np.random.Generator, increasing: bool, n_boot: int = 200) -> StrengthCurve:
    xs = np.linspace(0.0, 0.5, 6)  # e.g. a noise level: more noise, less Elo
    sd = np.full(len(xs), 25.0)
    true = 2000.0 - 1600.0 * xs if not increasing else 400.0 + 1600.0 * xs
    measured = true + rng.normal(0.0, sd)
    samples = measured + rng.normal(0.0, 1.0, (n_boot, len(xs))) * sd
    return curve_from_samples(xs, measured, samples, increasing=increasing)


def test_decreasing_curve_inverts_and_clamps_at_the_right_ends() -> None:
    c = _gaussian_curve(np.random.default_rng(0), increasing=False)
    knob = c.invert(1600.0)  # true knob value 0.25
    assert not knob.clamped and abs(knob.value - 0.25) < 0.05 and knob.ci_low <= 0.25 <= knob.ci_high
    assert c.invert(5000.0).value == 0.0 and c.invert(5000.0).clamped  # stronger than any point: x = 0
    assert c.invert(-5000.0).value == 0.5 and c.invert(-5000.0).clamped


def test_inversion_ci_covers_about_95_percent() -> None:
    """100 curves from Gaussian bootstrap samples: the knob CI at a target covers the true knob value
    about 95 % of the time (measured 96 of 100)."""
    hits = sum(
        (k := _gaussian_curve(np.random.default_rng(100 + rep), increasing=True).invert(800.0)).ci_low
        <= 0.25 <= k.ci_high
        for rep in range(100))
    low, high = scipy.stats.binom.interval(0.998, 100, 0.95)
    assert low <= hits <= high
    assert hits == 96


def test_non_monotone_points_are_pooled_and_said() -> None:
    xs, elo = [1.0, 2.0, 3.0, 4.0], [1000.0, 1200.0, 1150.0, 1400.0]
    samples = np.array(elo) + np.random.default_rng(1).normal(0.0, 20.0, (50, 4))
    c = curve_from_samples(xs, elo, samples, increasing=True, names=["a", "b", "c", "d"])
    assert np.all(np.diff(c.fitted) >= 0) and c.fitted[1] == c.fitted[2]
    assert c.notes and "['b', 'c']" in c.notes[0]
    assert np.all(np.diff(c.sample_fitted, axis=1) >= 0)


def test_json_round_trip_and_strict_keys(curve: StrengthCurve) -> None:
    data = json.loads(json.dumps(curve.to_json()))
    back = StrengthCurve.from_json(data)
    assert back.names == curve.names and np.array_equal(back.sample_fitted, curve.sample_fitted)
    assert back.invert(1500.0) == curve.invert(1500.0) and back.at(6.0) == curve.at(6.0)
    with pytest.raises(RatingsError, match=r"unknown key\(s\) \['x'\]"):
        StrengthCurve.from_json({**data, "x": 1})
    with pytest.raises(RatingsError, match="not monotone"):
        StrengthCurve.from_json({**data, "fitted": list(reversed(data["fitted"]))})


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (([1.0, 1.0], [10.0, 20.0], np.zeros((5, 2))), "appears more than once"),
        (([1.0], [10.0], np.zeros((5, 1))), "at least 2 knob values"),
        (([1.0, 2.0], [10.0, 20.0], np.zeros((5, 3))), "samples must be"),
        (([1.0, math.nan], [10.0, 20.0], np.zeros((5, 2))), "must be finite"),
    ],
)
def test_bad_curve_input_is_one_line_error(args: tuple[object, object, object], needle: str) -> None:
    with pytest.raises(RatingsError, match=needle):
        curve_from_samples(*args, increasing=True)  # type: ignore[arg-type]


def test_fit_curve_names_unknown_points(curve: StrengthCurve) -> None:
    del curve
    table = simulate_scale_games({"a": 0.0, "b": 100.0}, [("a", "b")], 5, rng=np.random.default_rng(0))
    fit = scale_from_games(table, "a", bootstrap=20, seed=0)
    with pytest.raises(RatingsError, match="no rating for player 'c'"):
        fit_curve([1.0, 2.0], fit, ["a", "c"], increasing=True)
