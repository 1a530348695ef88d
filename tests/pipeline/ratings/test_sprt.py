"""GSPRT on game pairs: formulas, decisions and simulated error rates."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.optimize

from pipeline.ratings import (
    DEFAULT_MIN_PAIRS,
    RatingsError,
    SprtDecision,
    elo_to_score,
    sprt,
    sprt_bounds,
    sprt_decision,
    sprt_llr,
    sprt_llr_batch,
)
from pipeline.ratings.sprt import _constrained_mle

PAIR_VALUES = np.linspace(0.0, 1.0, 5)  # per-game score of a pair


def test_bounds() -> None:
    lo, hi = sprt_bounds(0.05, 0.05)
    assert lo == pytest.approx(math.log(0.05 / 0.95)) and hi == pytest.approx(math.log(0.95 / 0.05))
    with pytest.raises(RatingsError, match="alpha"):
        sprt_bounds(0.0, 0.05)
    with pytest.raises(RatingsError, match="alpha"):
        sprt_bounds(0.6, 0.5)


def test_llr_formula_by_hand() -> None:
    counts = [10, 20, 40, 20, 10]  # mean 0.5, per-pair variance 0.075, 100 pairs
    s0, s1 = 0.5, 1 / (1 + 10 ** (-10 / 400))
    expected = 100 * (s1 - s0) * (2 * 0.5 - s0 - s1) / (2 * 0.075)
    assert sprt_llr(counts, 0.0, 10.0) == pytest.approx(expected)
    assert expected < 0  # an even match favours H0: elo = 0


def test_llr_sign_and_growth() -> None:
    good = np.array([5, 20, 50, 30, 10])
    assert sprt_llr(good, 0, 5) > 0
    assert sprt_llr(good[::-1], 0, 5) < 0
    assert sprt_llr(4 * good, 0, 5) == pytest.approx(4 * sprt_llr(good, 0, 5), rel=1e-3)
    assert sprt_llr([0, 0, 0, 0, 0], 0, 5) == 0.0


def test_exact_gsprt_close_to_approximation_for_small_bounds() -> None:
    counts = np.array([300, 1200, 3000, 1300, 320])
    approx = sprt_llr(counts, 0.0, 5.0)
    exact = sprt_llr(counts, 0.0, 5.0, method="exact")
    assert exact == pytest.approx(approx, rel=0.01)
    # trinomial counts work the same way
    assert sprt_llr([100, 500, 130], -2, 3, method="exact") == pytest.approx(
        sprt_llr([100, 500, 130], -2, 3), rel=0.01
    )


def test_constrained_mle_has_requested_mean_and_is_a_distribution() -> None:
    p_hat = np.array([0.05, 0.2, 0.45, 0.2, 0.1])
    for s in (0.3, 0.5, 0.52, 0.8):
        p = _constrained_mle(p_hat, PAIR_VALUES, s)
        assert p.sum() == pytest.approx(1.0) and np.all(p > 0)
        assert p @ PAIR_VALUES == pytest.approx(s, abs=1e-9)


def test_batch_matches_scalar() -> None:
    rng = np.random.default_rng(0)
    counts = rng.integers(0, 50, size=(4, 3, 5))
    batch = sprt_llr_batch(counts, -1.0, 4.0)
    assert batch.shape == (4, 3)
    for idx in np.ndindex(4, 3):
        assert batch[idx] == pytest.approx(sprt_llr(counts[idx], -1.0, 4.0))


def test_decisions() -> None:
    strong = [0, 10, 300, 700, 200]
    weak = strong[::-1]
    assert sprt_decision(strong, 0, 5) is SprtDecision.ACCEPT_H1
    assert sprt_decision(weak, 0, 5) is SprtDecision.ACCEPT_H0
    assert sprt_decision([1, 4, 10, 4, 1], 0, 5) is SprtDecision.CONTINUE
    r = sprt(strong, 0, 5, alpha=0.05, beta=0.1)
    assert r.llr > r.upper and r.n == 1210 and r.decision is SprtDecision.ACCEPT_H1
    assert r.lower == pytest.approx(math.log(0.1 / 0.95))


def test_no_decision_before_min_pairs() -> None:
    tiny = [0, 0, 0, 0, 5]  # five won pairs: huge LLR on an unusable variance estimate
    assert sprt_llr(tiny, 0, 5) > 10 * sprt_bounds()[1]
    assert sprt_decision(tiny, 0, 5) is SprtDecision.CONTINUE
    assert sprt_decision(tiny, 0, 5, min_pairs=5) is SprtDecision.ACCEPT_H1
    with pytest.raises(RatingsError, match="min_pairs"):
        sprt_decision(tiny, 0, 5, min_pairs=0)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (([1, 2, 3, 4], 0, 5), "pentanomial"),
        (([1, 2, -3, 4, 5], 0, 5), "non-negative"),
        (([1, 2, 3, 4, 5], 5, 0), "elo0 < elo1"),
        (([1, 2, 3, 4, 5], 0, math.nan), "elo0 < elo1"),
    ],
)
def test_bad_input_raises(args: tuple, message: str) -> None:
    with pytest.raises(RatingsError, match=message):
        sprt_llr(*args)
    with pytest.raises(RatingsError, match="method"):
        sprt_llr([1, 2, 3, 4, 5], 0, 5, method="magic")  # type: ignore[arg-type]


# --- simulated error rates ------------------------------------------------------------------


def _pdf_with_score(base: list[float], score: float) -> np.ndarray:
    """Exponentially tilt a pentanomial shape so its per-game mean score is exactly ``score``."""
    b = np.asarray(base)

    def excess(t: float) -> float:
        w = b * np.exp(t * PAIR_VALUES)
        return float(w @ PAIR_VALUES / w.sum() - score)

    t = scipy.optimize.brentq(excess, -50.0, 50.0)
    w = b * np.exp(t * PAIR_VALUES)
    return w / w.sum()


def _simulate_sprts(
    pdf: np.ndarray,
    elo0: float,
    elo1: float,
    n_runs: int,
    seed: int,
    min_pairs: int = DEFAULT_MIN_PAIRS,
    alpha: float = 0.05,
    beta: float = 0.05,
    chunk: int = 256,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Run ``n_runs`` independent SPRTs pair by pair, vectorised over runs and chunks of pairs.

    Returns (decision per run: +1 H1, -1 H0; pairs used; final counts)."""
    rng = np.random.default_rng(seed)
    lower, upper = sprt_bounds(alpha, beta)
    cum = np.zeros((n_runs, 5))
    decision = np.zeros(n_runs, dtype=int)
    length = np.zeros(n_runs, dtype=int)
    final = np.zeros((n_runs, 5))
    active = np.arange(n_runs)
    done = 0
    while active.size:
        outcome = rng.choice(5, size=(active.size, chunk), p=pdf)
        steps = np.zeros((active.size, chunk, 5))
        np.put_along_axis(steps, outcome[..., None], 1.0, axis=2)
        counts = cum[active][:, None, :] + np.cumsum(steps, axis=1)
        llr = sprt_llr_batch(counts, elo0, elo1)
        n_seen = done + np.arange(1, chunk + 1)
        crossed = ((llr >= upper) | (llr <= lower)) & (n_seen >= min_pairs)
        stopped = crossed.any(axis=1)
        at = crossed.argmax(axis=1)[stopped]
        runs = active[stopped]
        decision[runs] = np.where(llr[stopped, at] >= upper, 1, -1)
        length[runs] = n_seen[at]
        final[runs] = counts[stopped, at]
        cum[active] = counts[:, -1]
        active = active[~stopped]
        done += chunk
    return decision, length, final


BASE_SHAPE = [0.05, 0.2, 0.5, 0.2, 0.05]  # moderately drawish pairs, per-pair variance 0.05


@pytest.mark.parametrize(("true_elo", "wanted", "nominal"), [(0.0, 1, 0.05), (10.0, -1, 0.05)])
def test_simulated_error_rates_match_alpha_and_beta(true_elo: float, wanted: int, nominal: float) -> None:
    """True elo = elo0: P(accept H1) ~ alpha. True elo = elo1: P(accept H0) ~ beta."""
    n_runs = 2000
    pdf = _pdf_with_score(BASE_SHAPE, elo_to_score(true_elo))
    decision, length, final = _simulate_sprts(pdf, 0.0, 10.0, n_runs, seed=int(true_elo) + 1)
    rate = float(np.mean(decision == wanted))
    sd = math.sqrt(nominal * (1 - nominal) / n_runs)  # ~0.0049
    assert abs(rate - nominal) < 4 * sd, rate
    assert np.all(length >= DEFAULT_MIN_PAIRS)
    # the scalar API reaches the same verdict on the final counts of a few runs
    for i in range(10):
        expected = SprtDecision.ACCEPT_H1 if decision[i] == 1 else SprtDecision.ACCEPT_H0
        assert sprt_decision(final[i], 0.0, 10.0) is expected


def test_deciding_from_the_first_pair_breaks_the_error_rate() -> None:
    """Why min_pairs exists: the estimated variance is useless on a handful of pairs."""
    pdf = _pdf_with_score(BASE_SHAPE, elo_to_score(0.0))
    decision, _, _ = _simulate_sprts(pdf, 0.0, 10.0, 1000, seed=3, min_pairs=1)
    assert np.mean(decision == 1) > 0.15


@pytest.mark.slow
@pytest.mark.parametrize("shape", [BASE_SHAPE, [0.1, 0.1, 0.6, 0.1, 0.1]])
@pytest.mark.parametrize(("elo0", "elo1"), [(0.0, 10.0), (-3.0, 3.0)])
def test_simulated_error_rates_many_runs(shape: list[float], elo0: float, elo1: float) -> None:
    n_runs = 6000
    sd = math.sqrt(0.05 * 0.95 / n_runs)  # ~0.0028
    for truth, wanted in ((elo0, 1), (elo1, -1)):
        pdf = _pdf_with_score(shape, elo_to_score(truth))
        decision, _, _ = _simulate_sprts(pdf, elo0, elo1, n_runs, seed=int(10 * truth) + 100)
        rate = float(np.mean(decision == wanted))
        assert abs(rate - 0.05) < 4 * sd, (truth, rate)
