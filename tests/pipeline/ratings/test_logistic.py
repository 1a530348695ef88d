"""Elo <-> score conversions and the Davidson draw model."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from pipeline.ratings import (
    RatingsError,
    davidson_expected_score,
    davidson_probabilities,
    elo_to_score,
    score_to_elo,
)


def test_known_values() -> None:
    assert elo_to_score(0.0) == 0.5
    assert elo_to_score(400.0) == pytest.approx(10.0 / 11.0)
    assert elo_to_score(-400.0) == pytest.approx(1.0 / 11.0)
    assert score_to_elo(10.0 / 11.0) == pytest.approx(400.0)
    assert score_to_elo(0.75) == pytest.approx(400.0 * math.log10(3.0))


def test_extremes_are_explicit_infinities_not_nan() -> None:
    assert score_to_elo(1.0) == math.inf
    assert score_to_elo(0.0) == -math.inf
    assert elo_to_score(1e6) == 1.0


@pytest.mark.parametrize("bad", [-0.01, 1.01, math.nan])
def test_score_outside_unit_interval_raises(bad: float) -> None:
    with pytest.raises(RatingsError, match="score must lie in"):
        score_to_elo(bad)


def test_arrays_round_trip_elementwise() -> None:
    elos = np.array([-800.0, -35.5, 0.0, 12.0, 900.0])
    back = score_to_elo(elo_to_score(elos))
    assert isinstance(back, np.ndarray)
    np.testing.assert_allclose(back, elos, atol=1e-9)


@given(st.floats(min_value=-2000, max_value=2000))
def test_round_trip(elo: float) -> None:
    assert score_to_elo(elo_to_score(elo)) == pytest.approx(elo, abs=1e-6)


@given(st.floats(min_value=-1500, max_value=1500), st.floats(min_value=0.0, max_value=20.0))
def test_davidson_probabilities_are_a_distribution(diff: float, nu: float) -> None:
    pw, pd, pl = (float(v) for v in davidson_probabilities(diff, nu))
    assert pw + pd + pl == pytest.approx(1.0)
    assert min(pw, pd, pl) >= 0.0
    # symmetric: swapping sides swaps win and loss
    pw2, pd2, pl2 = (float(v) for v in davidson_probabilities(-diff, nu))
    assert (pw2, pd2, pl2) == pytest.approx((pl, pd, pw))


def test_davidson_reduces_to_logistic_without_draws_and_is_flatter_with_them() -> None:
    diffs = np.array([-300.0, 0.0, 100.0, 500.0])
    np.testing.assert_allclose(davidson_expected_score(diffs, 0.0), elo_to_score(diffs))
    with_draws = davidson_expected_score(diffs, 1.0)
    assert np.all(np.abs(with_draws - 0.5) <= np.abs(elo_to_score(diffs) - 0.5) + 1e-12)
    _, pd, _ = davidson_probabilities(0.0, 1.0)
    assert float(pd) == pytest.approx(1.0 / 3.0)  # nu / (2 + nu) for equal players


@pytest.mark.parametrize("nu", [-0.1, math.inf, math.nan])
def test_bad_draw_parameter_raises(nu: float) -> None:
    with pytest.raises(RatingsError, match="nu"):
        davidson_probabilities(0.0, nu)
