"""Pair grouping, pentanomial / trinomial statistics and their CI coverage."""

from __future__ import annotations

import math

import numpy as np
import pytest
from numpy.polynomial.hermite_e import hermegauss

from pipeline.ratings import (
    GameResults,
    RatingsError,
    davidson_expected_score,
    match_stats,
    pair_scores,
    pentanomial_counts,
    pentanomial_stats,
    score_to_elo,
    simulate_pairs,
    trinomial_counts,
    trinomial_stats,
)


def _match() -> GameResults:
    # pair 3: a won both; pair 1: a won as first, lost as second; pair 2: draw + loss (vs c)
    return GameResults.from_arrays(
        first=["a", "b", "a", "b", "c", "a"],
        second=["b", "a", "b", "a", "a", "c"],
        result=[1.0, 0.0, 1.0, 1.0, 0.5, 0.0],
        pair_id=[3, 3, 1, 1, 2, 2],
    )


def test_pair_scores_grouped_and_ordered_by_pair_id() -> None:
    ps = pair_scores(_match(), "a")
    assert ps.pair_ids.tolist() == [1, 2, 3]
    assert ps.scores.tolist() == [1.0, 0.5, 2.0]
    assert ps.opponents.tolist() == ["b", "c", "b"]
    assert ps.wilcoxon_steps() == [(1, 1.0), (2, 0.5), (3, 2.0)]
    only_b = pair_scores(_match(), "a", "b")
    assert only_b.pair_ids.tolist() == [1, 3]
    assert pair_scores(_match(), "b").scores.tolist() == [1.0, 0.0]  # b's side of the same pairs


def test_counts() -> None:
    g = _match()
    assert pentanomial_counts(pair_scores(g, "a")).tolist() == [0, 1, 1, 0, 1]
    assert trinomial_counts(g, "a").tolist() == [2, 1, 3]  # losses, draws, wins
    assert trinomial_counts(g, "a", "b").tolist() == [1, 0, 3]
    with pytest.raises(RatingsError, match="pair scores must be in"):
        pentanomial_counts(np.array([0.25]))


def test_match_stats_means_agree_and_known_values() -> None:
    st = match_stats(_match(), "a")
    assert st.pentanomial_counts == (0, 1, 1, 0, 1)
    assert st.trinomial_counts == (2, 1, 3)
    # per-game score 3.5 / 6 either way
    assert st.pentanomial.score == pytest.approx(3.5 / 6) == st.trinomial.score
    assert st.pentanomial.n == 3 and st.trinomial.n == 6
    # pair values 0.25, 0.5, 1.0 (per game scale): variance about the mean 7/12
    mu = 7 / 12
    var = ((0.25 - mu) ** 2 + (0.5 - mu) ** 2 + (1.0 - mu) ** 2) / 3
    assert st.pentanomial.variance == pytest.approx(var)
    assert st.pentanomial.stderr == pytest.approx(math.sqrt(var / 3))
    assert st.pentanomial.elo == pytest.approx(score_to_elo(mu))


def test_stats_formulas() -> None:
    s = pentanomial_stats([10, 20, 40, 20, 10])
    assert s.score == 0.5 and s.elo == 0.0 and s.los == pytest.approx(0.5)
    assert s.variance == pytest.approx(0.075)
    z = 1.959963984540054
    assert s.elo_ci_high == pytest.approx(score_to_elo(0.5 + z * math.sqrt(0.075 / 100)))
    assert s.elo_ci_low == pytest.approx(-s.elo_ci_high)
    t = trinomial_stats([10, 30, 60])
    assert t.score == 0.75 and t.variance == pytest.approx(0.1 * 0.75**2 + 0.3 * 0.25**2 + 0.6 * 0.25**2)
    assert t.los > 0.999


def test_perfect_match_gives_explicit_infinity() -> None:
    s = pentanomial_stats([0, 0, 0, 0, 12])
    assert s.elo == math.inf and s.elo_ci_high == math.inf
    assert s.los == 1.0


@pytest.mark.parametrize(
    ("games", "message"),
    [
        (GameResults.from_arrays(["a", "b"], ["b", "a"], [1.0, 0.0]), "no pair_id column"),
        (
            GameResults.from_arrays(["a", "b", "a"], ["b", "a", "b"], [1, 0, 1], [5, 5, 5]),
            "pair 5 has 3 games",
        ),
        (
            GameResults.from_arrays(["a", "b", "a"], ["b", "a", "b"], [1, 0, 1], [5, 5, 6]),
            "pair 6 has only one",
        ),
        (
            GameResults.from_arrays(["a", "a"], ["b", "b"], [1, 0], ["x", "x"]),
            "pair 'x': 'a' moved first in 2",
        ),
        (GameResults.from_arrays(["a", "c"], ["b", "a"], [1, 0], [1, 1]), r"pair 1: 'a' met two different"),
        (GameResults.from_arrays(["c", "b"], ["b", "c"], [1, 0], [1, 1]), "'a' has no games"),
    ],
)
def test_malformed_pairs_raise(games: GameResults, message: str) -> None:
    with pytest.raises(RatingsError, match=message):
        pair_scores(games, "a")


def test_drop_incomplete() -> None:
    g = GameResults.from_arrays(["a", "b", "a"], ["b", "a", "b"], [1.0, 0.5, 1.0], [5, 5, 6])
    ps = pair_scores(g, "a", drop_incomplete=True)
    assert ps.pair_ids.tolist() == [5] and ps.scores.tolist() == [1.5]
    st = match_stats(g, "a", drop_incomplete=True)
    assert st.trinomial_counts == (0, 1, 1)  # only games of complete pairs


def test_wilcoxon_steps_need_integer_ids() -> None:
    g = GameResults.from_arrays(["a", "b"], ["b", "a"], [1.0, 0.5], ["p", "p"])
    with pytest.raises(RatingsError, match="integer opening ids"):
        pair_scores(g, "a").wilcoxon_steps()


def test_bad_counts_and_level_raise() -> None:
    with pytest.raises(RatingsError, match="5 non-negative counts"):
        pentanomial_stats([1, 2, 3])
    with pytest.raises(RatingsError, match="no results"):
        pentanomial_stats([0, 0, 0, 0, 0])
    with pytest.raises(RatingsError, match="3 non-negative counts"):
        trinomial_stats([1, -2, 3])
    with pytest.raises(RatingsError, match="level"):
        trinomial_stats([1, 2, 3], level=0.0)


# --- coverage -----------------------------------------------------------------------------

_NODES, _WEIGHTS = hermegauss(100)
_WEIGHTS = _WEIGHTS / _WEIGHTS.sum()


def _true_logistic_elo(diff: float, nu: float, adv: float, opening_sd: float) -> float:
    """Exact expected score of A over a colour-swapped pair (opening bias integrated out by
    Gauss-Hermite quadrature), as logistic Elo."""
    b = _NODES * opening_sd
    a_first = _WEIGHTS @ davidson_expected_score(diff + adv + b, nu)
    b_first = _WEIGHTS @ davidson_expected_score(-diff + adv + b, nu)
    return score_to_elo(0.5 * (float(a_first) + 1.0 - float(b_first)))


def _coverage(opening_sd: float, n_matches: int, seed: int) -> tuple[float, float, float, float]:
    """(pentanomial coverage, trinomial coverage, mean widths) over simulated 100-pair matches."""
    diff, nu, adv, n_pairs = 50.0, 1.0, 30.0, 100
    truth = _true_logistic_elo(diff, nu, adv, opening_sd)
    rng = np.random.default_rng(seed)
    g = simulate_pairs(
        {"A": diff, "B": 0.0}, n_matches * n_pairs, nu=nu, advantage=adv, rng=rng, opening_sd=opening_sd
    )
    pts = np.where(g.first == "A", g.result, 1.0 - g.result).reshape(n_matches, n_pairs, 2)
    penta = np.stack([(pts.sum(axis=2) == k / 2).sum(axis=1) for k in range(5)], axis=1)
    tri = np.stack([(pts == k / 2).sum(axis=(1, 2)) for k in range(3)], axis=1)
    # the vectorised counting above must agree with the library's own grouping
    for m in range(3):
        sel = g.select((g.pair_id // n_pairs) == m)  # type: ignore[operator]
        st = match_stats(sel, "A", "B")
        assert st.pentanomial_counts == tuple(penta[m]) and st.trinomial_counts == tuple(tri[m])
    hit_p = hit_t = 0
    width_p = width_t = 0.0
    for m in range(n_matches):
        p, t = pentanomial_stats(penta[m]), trinomial_stats(tri[m])
        hit_p += p.elo_ci_low <= truth <= p.elo_ci_high
        hit_t += t.elo_ci_low <= truth <= t.elo_ci_high
        width_p += p.elo_ci_high - p.elo_ci_low
        width_t += t.elo_ci_high - t.elo_ci_low
    return hit_p / n_matches, hit_t / n_matches, width_p / n_matches, width_t / n_matches


def test_pentanomial_ci_coverage_with_opening_bias() -> None:
    # Strong opening bias anti-correlates the two games of a pair: the pentanomial CI keeps its
    # nominal 95 % coverage, the trinomial one is needlessly wide (over-covers).
    cov_p, cov_t, width_p, width_t = _coverage(opening_sd=400.0, n_matches=2000, seed=11)
    assert 0.925 <= cov_p <= 0.97, cov_p  # SD of the estimate ~0.005
    assert cov_t >= 0.975, cov_t
    assert width_p < 0.85 * width_t


def test_pentanomial_ci_coverage_without_opening_bias() -> None:
    cov_p, cov_t, width_p, width_t = _coverage(opening_sd=0.0, n_matches=1000, seed=12)
    assert 0.92 <= cov_p <= 0.975 and 0.92 <= cov_t <= 0.975, (cov_p, cov_t)
    assert width_p == pytest.approx(width_t, rel=0.05)
