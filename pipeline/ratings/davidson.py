"""The Davidson (1970) draw model: Bradley-Terry with ties.

With strengths pi_i = 10 ** (elo_i / 400) and a draw parameter nu >= 0,
    P(i beats j) = pi_i / (pi_i + pi_j + nu * sqrt(pi_i * pi_j)),
    P(draw)      = nu * sqrt(pi_i * pi_j) / (same denominator).
Dividing through by sqrt(pi_i * pi_j) shows everything depends on x = (elo_i - elo_j) in
natural units only: P(win) = e^(x/2) / Z, P(loss) = e^(-x/2) / Z, P(draw) = nu / Z with
Z = e^(x/2) + e^(-x/2) + nu. nu = 0 is plain logistic Elo; nu / (2 + nu) is the draw rate of
equal players. Note that with nu > 0 the expected score at a given Elo gap is *flatter* than the
logistic curve, so Davidson Elo gaps are larger than logistic-Elo gaps for the same score.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from pipeline.ratings.errors import RatingsError
from pipeline.ratings.logistic import NATS_PER_ELO

FloatArray = NDArray[np.float64]


def _probs_nat(x: FloatArray, log_nu: float) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
    """(p_win, p_draw, p_loss, log Z) for natural-unit gaps ``x``; overflow-free."""
    half = 0.5 * x
    m = np.maximum(np.abs(half), log_nu)
    ew, el, ed = np.exp(half - m), np.exp(-half - m), np.exp(log_nu - m)
    z = ew + el + ed
    return ew / z, ed / z, el / z, m + np.log(z)


def davidson_probabilities(
    elo_diff: float | FloatArray, nu: float
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """(P(win), P(draw), P(loss)) for a player ``elo_diff`` Elo above the opponent.

    ``elo_diff`` already includes any first-move advantage. Element-wise over arrays.
    """
    if not (np.isfinite(nu) and nu >= 0.0):
        raise RatingsError(f"Davidson draw parameter nu must be finite and >= 0, got {nu!r}")
    x = np.asarray(elo_diff, dtype=np.float64) * NATS_PER_ELO
    if np.isnan(x).any():
        raise RatingsError(f"Elo difference is NaN: {elo_diff!r}")
    with np.errstate(divide="ignore"):
        log_nu = float(np.log(nu))
    pw, pd, pl, _ = _probs_nat(x, log_nu)
    return pw, pd, pl


def davidson_expected_score(elo_diff: float | FloatArray, nu: float) -> FloatArray:
    """Expected score P(win) + P(draw) / 2 under the Davidson model."""
    pw, pd, _ = davidson_probabilities(elo_diff, nu)
    return pw + 0.5 * pd


def loglik_terms(
    x: FloatArray,
    log_nu: float,
    wins: FloatArray,
    draws: FloatArray,
    losses: FloatArray,
) -> tuple[float, FloatArray, float, FloatArray, FloatArray, float]:
    """Log-likelihood of aggregated W/D/L counts at gaps ``x`` (natural units) and its derivatives.

    Returns (loglik, d/dx per row, d/dlog_nu, d2/dx2 per row, d2/dx dlog_nu per row,
    d2/dlog_nu2). The curvature does not depend on the counts beyond their totals, so the
    observed and expected Fisher information coincide for this model.
    """
    pw, pd, pl, log_z = _probs_nat(x, log_nu)
    n = wins + draws + losses
    ll = float(np.sum((wins - losses) * 0.5 * x + draws * log_nu - n * log_z))
    g_x = 0.5 * (wins - losses) - 0.5 * n * (pw - pl)
    g_nu = float(np.sum(draws - n * pd))
    h_xx = -n * 0.25 * ((pw + pl) - (pw - pl) ** 2)
    h_xnu = n * 0.5 * (pw - pl) * pd
    h_nunu = float(-np.sum(n * pd * (1.0 - pd)))
    return ll, g_x, g_nu, h_xx, h_xnu, h_nunu
