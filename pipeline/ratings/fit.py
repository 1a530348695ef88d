"""Anchored maximum-likelihood Elo for many players (Davidson draws + first-move advantage).

Model (see :mod:`pipeline.ratings.davidson`): in every game the first mover plays at
``elo_first + adv``; W/D/L follow the Davidson model with draw parameter ``nu``. The parameters
(free Elos, ``adv``, ``log nu``) maximise the log-likelihood plus a weak Gaussian log-prior,
using ``scipy.optimize.minimize(method="trust-exact")`` with the analytic gradient and Hessian
(the objective is strictly concave, so the optimum is unique).

The prior, and why: with perfect scores (a player who never dropped a point, or a group that
never lost to another) the plain MLE runs off to +-inf. We therefore add
  - ``-(elo_i - elo_j)^2 / (2 prior_sd^2)`` for every pair of players who met (default
    prior_sd = 1000 Elo). It is invariant to which player is the anchor, only acts along
    edges of the game graph (so it cannot hide a disconnected graph), and shifts well-measured
    ratings by far less than their standard errors (about the SE^2 / prior_sd^2 fraction of the
    gap to their opponents);
  - ``-adv^2 / (2 prior_sd^2)`` on the first-move advantage (Elo);
  - ``-(log nu)^2 / (2 * 5^2)`` on the draw parameter, which matters only with no draws at all
    (or only draws).
Players whose rating relative to the anchor rests on the prior (perfect scores separate them
from the anchor, or the prior supplies > 5 % of the information on their rating) are flagged
``prior_driven`` and explained in ``notes``; their estimate is finite but should be read as
"at least about this far". A first-move advantage that rests on the prior gets a note too.

Confidence intervals come from the inverse Hessian of the log-posterior at the optimum (the
observed Fisher information; for this model it equals the expected one), or optionally from a
bootstrap that resamples whole clusters of games and refits: the ``clusters`` given (e.g.
every game of one ballot opening, see :func:`pipeline.ratings.games.bootstrap_clusters`), else
whole game pairs (games sharing a ``pair_id``), else single games. All CIs are relative to the
anchor, whose own CI has zero width.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import pyarrow as pa
import scipy.optimize
import scipy.sparse
import scipy.sparse.csgraph
import scipy.stats
from numpy.typing import NDArray

from pipeline.ratings.davidson import loglik_terms
from pipeline.ratings.errors import RatingsError
from pipeline.ratings.games import GameResults
from pipeline.ratings.logistic import NATS_PER_ELO
from pipeline.ratings.rating import Rating

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]

#: Prior standard deviation of log(nu); wide enough to be irrelevant whenever draws occur.
LOG_NU_PRIOR_SD = 5.0
#: A parameter is flagged prior-driven when the prior supplies more than this share of its
#: posterior information (well-measured ratings are near 0.001-0.01).
PRIOR_SHARE_FLAG = 0.05
_MAX_NAMES_IN_ERROR = 20
#: Newton steps after the optimiser, at most, and the largest last step accepted (natural units).
_POLISH_STEPS = 5
_ACCEPT_STEP = 1e-4


@dataclass(frozen=True)
class Estimate:
    """A point estimate with a confidence interval (same units as ``value``)."""

    value: float
    ci_low: float
    ci_high: float


@dataclass(frozen=True, eq=False)
class RatingTable:
    """Result of :func:`fit_elo`. ``ratings`` is sorted strongest first; ``standard_errors``
    (of elo - anchor_elo, 0 for the anchor) and ``covariance`` (Elo^2) follow that same order
    (zero row/column for the anchor)."""

    ratings: tuple[Rating, ...]
    standard_errors: tuple[float, ...]
    anchor: str
    anchor_elo: float
    draw_nu: Estimate  # Davidson draw parameter nu (CI from log nu)
    first_move_advantage: Estimate  # Elo added to the first mover; zero-width CI if it was fixed
    covariance: FloatArray
    ci_method: Literal["hessian", "bootstrap"]
    level: float
    n_games: int
    log_likelihood: float  # at the estimate, without the prior
    notes: tuple[str, ...]

    @property
    def players(self) -> tuple[str, ...]:
        return tuple(r.player for r in self.ratings)

    @property
    def draw_rate_equal(self) -> float:
        """Model draw probability between two equal players without first-move advantage."""
        nu = self.draw_nu.value
        return nu / (2.0 + nu)

    def __getitem__(self, player: str) -> Rating:
        return self.ratings[self._index(player)]

    def _index(self, player: str) -> int:
        for i, r in enumerate(self.ratings):
            if r.player == player:
                return i
        raise KeyError(f"no rating for player {player!r}; players are {list(self.players)}")

    def se(self, player: str) -> float:
        """Standard error of ``player``'s Elo relative to the anchor (0 for the anchor)."""
        return self.standard_errors[self._index(player)]

    def difference(self, a: str, b: str) -> Estimate:
        """Elo(a) - Elo(b) with a normal-approximation CI from the covariance (accounts for the
        correlation of the two estimates, unlike subtracting the per-player CIs)."""
        i, j = self._index(a), self._index(b)
        c = self.covariance
        var = max(float(c[i, i] + c[j, j] - 2.0 * c[i, j]), 0.0)
        z = _z(self.level)
        d = self.ratings[i].elo - self.ratings[j].elo
        return Estimate(d, d - z * math.sqrt(var), d + z * math.sqrt(var))

    def to_arrow(self) -> pa.Table:
        """One row per player (for Parquet / MLflow artifacts)."""
        rows = [{**r.to_json(), "se": se, "points": r.points}
                for r, se in zip(self.ratings, self.standard_errors, strict=True)]
        cols = ["player", "elo", "ci_low", "ci_high", "se", "games", "points", "score", "prior_driven"]
        return pa.table({c: [row[c] for row in rows] for c in cols})


def _z(level: float) -> float:
    return float(scipy.stats.norm.ppf(0.5 + 0.5 * level))


@dataclass(frozen=True, eq=False)
class _Problem:
    """Aggregated data and prior for the optimiser. Parameters p = [free Elos, (adv), log nu],
    all in natural units (Elo * ln10/400) so the Hessian is well scaled."""

    design: FloatArray  # (K, m_x): d x_k / d p[:m_x], x_k = gap of group k incl. advantage
    offset: FloatArray  # (K,): fixed part of x_k (a fixed advantage)
    prior_prec: FloatArray  # (m_x, m_x) Gaussian prior precision (mean 0) on p[:m_x]

    def neg_log_post(self, p: FloatArray, counts: FloatArray) -> tuple[float, FloatArray]:
        m_x = self.design.shape[1]
        x = self.design @ p[:m_x] + self.offset
        ll, g_x, g_nu, *_ = loglik_terms(x, float(p[m_x]), counts[0], counts[1], counts[2])
        th = p[:m_x]
        q = self.prior_prec @ th
        lp = -0.5 * float(th @ q) - 0.5 * (float(p[m_x]) / LOG_NU_PRIOR_SD) ** 2
        grad = np.empty_like(p)
        grad[:m_x] = self.design.T @ g_x - q
        grad[m_x] = g_nu - p[m_x] / LOG_NU_PRIOR_SD**2
        return -(ll + lp), -grad

    def neg_hessian(self, p: FloatArray, counts: FloatArray) -> FloatArray:
        m_x = self.design.shape[1]
        x = self.design @ p[:m_x] + self.offset
        _, _, _, h_xx, h_xnu, h_nunu = loglik_terms(x, float(p[m_x]), counts[0], counts[1], counts[2])
        h = np.empty((m_x + 1, m_x + 1))
        h[:m_x, :m_x] = -(self.design.T @ (h_xx[:, None] * self.design)) + self.prior_prec
        cross = -(self.design.T @ h_xnu)
        h[:m_x, m_x] = cross
        h[m_x, :m_x] = cross
        h[m_x, m_x] = -h_nunu + 1.0 / LOG_NU_PRIOR_SD**2
        return h

    def loglik(self, p: FloatArray, counts: FloatArray) -> float:
        m_x = self.design.shape[1]
        x = self.design @ p[:m_x] + self.offset
        return loglik_terms(x, float(p[m_x]), counts[0], counts[1], counts[2])[0]

    def solve(self, counts: FloatArray, p0: FloatArray) -> FloatArray:
        res = scipy.optimize.minimize(
            self.neg_log_post,
            p0,
            args=(counts,),
            jac=True,
            hess=self.neg_hessian,
            method="trust-exact",
            options={"gtol": 1e-8, "maxiter": 500},
        )
        p = np.asarray(res.x, dtype=np.float64)
        # trust-exact can stop on rounding noise just short of its own gtol when the counts are
        # large (tens of thousands of games), so finish with plain Newton steps (the objective is
        # strictly concave) until the step is negligible: 1e-6 natural units = 0.0002 Elo. A step
        # that rounding keeps just above that is accepted up to 1e-4 (0.02 Elo).
        step = np.full_like(p, np.inf)
        for _ in range(_POLISH_STEPS):
            if not np.all(np.isfinite(p)):
                break
            step = np.asarray(np.linalg.solve(self.neg_hessian(p, counts), self.neg_log_post(p, counts)[1]),
                              dtype=np.float64)
            p = p - step
            if np.max(np.abs(step)) < 1e-6:
                break
        if not (np.all(np.isfinite(p)) and np.max(np.abs(step)) < _ACCEPT_STEP):
            raise RuntimeError(
                f"Elo fit did not converge: {res.message} (Newton step {np.max(np.abs(step)):.3g})"
            )
        return p


def _names_list(names: list[str]) -> str:
    shown = names[:_MAX_NAMES_IN_ERROR]
    more = f" and {len(names) - len(shown)} more" if len(names) > len(shown) else ""
    return f"{shown}{more}"


def _check_args(anchor_elo: float, advantage: float | None, prior_sd: float, level: float) -> None:
    if not math.isfinite(anchor_elo):
        raise RatingsError(f"anchor_elo must be finite, got {anchor_elo!r}")
    if advantage is not None and not math.isfinite(advantage):
        raise RatingsError(f"advantage must be finite or None (fit it), got {advantage!r}")
    if not (math.isfinite(prior_sd) and prior_sd > 0):
        raise RatingsError(f"prior_sd must be a positive finite Elo value, got {prior_sd!r}")
    if not 0.0 < level < 1.0:
        raise RatingsError(f"level must lie strictly between 0 and 1, got {level!r}")


def fit_elo(
    games: GameResults,
    anchor: str,
    anchor_elo: float = 0.0,
    *,
    advantage: float | None = None,
    prior_sd: float = 1000.0,
    level: float = 0.95,
    ci_method: Literal["hessian", "bootstrap"] = "hessian",
    n_bootstrap: int = 200,
    seed: int = 0,
    clusters: NDArray[Any] | None = None,
) -> RatingTable:
    """Fit anchored Davidson/Bradley-Terry Elo ratings to ``games`` by maximum likelihood.

    ``anchor`` is fixed at ``anchor_elo`` exactly. ``advantage=None`` fits the first-move
    advantage; a number fixes it (Elo). ``prior_sd`` is the weak regulariser described in the
    module docstring. ``ci_method="bootstrap"`` resamples game pairs ``n_bootstrap`` times
    (seeded by ``seed``) and reports percentile intervals instead of Hessian (Wald) intervals.
``clusters`` (one key per game) sets the bootstrap's resampling unit instead of the pairs: games
that are not independent of each other (e.g. replays of one opening by two deterministic
players) must share a cluster, or the intervals count the repeats as new evidence.

    Raises :class:`RatingsError` for no games, an anchor that never played, a comparison graph
    with players unreachable from the anchor (named in the message), or a first-move advantage
    that the games cannot identify (e.g. each pairing always had the same player moving first).
    Dense linear algebra throughout: meant for up to a few hundred players.
    """
    _check_args(anchor_elo, advantage, prior_sd, level)
    if ci_method not in ("hessian", "bootstrap"):
        raise RatingsError(f"ci_method must be 'hessian' or 'bootstrap', got {ci_method!r}")
    if ci_method == "bootstrap" and n_bootstrap < 20:
        raise RatingsError(f"n_bootstrap must be at least 20, got {n_bootstrap!r}")
    if len(games) == 0:
        raise RatingsError("cannot fit Elo: the game table is empty")
    if clusters is not None and len(clusters) != len(games):
        raise RatingsError(
            f"clusters must hold one key per game: got {len(clusters)} keys for {len(games)} games")
    names = np.unique(np.concatenate([games.first, games.second]))
    n_players = len(names)
    if anchor not in names:
        raise RatingsError(f"anchor {anchor!r} played no games; players are {_names_list(names.tolist())}")
    a_idx = int(np.searchsorted(names, anchor))
    fi = np.searchsorted(names, games.first).astype(np.int64)
    si = np.searchsorted(names, games.second).astype(np.int64)

    _check_connected(names, fi, si, a_idx, anchor)

    # Aggregate games into (first, second) groups: the likelihood only needs W/D/L per group.
    group_keys, group_of_game = np.unique(fi * n_players + si, return_inverse=True)
    gf, gs = group_keys // n_players, group_keys % n_players
    n_groups = len(group_keys)

    fit_adv = advantage is None
    m_x = n_players - 1 + int(fit_adv)
    col = np.full(n_players, -1, dtype=np.int64)
    col[np.arange(n_players) != a_idx] = np.arange(n_players - 1)
    design = np.zeros((n_groups, m_x))
    rows = np.arange(n_groups)
    mask_f, mask_s = col[gf] >= 0, col[gs] >= 0
    design[rows[mask_f], col[gf][mask_f]] += 1.0
    design[rows[mask_s], col[gs][mask_s]] -= 1.0
    if fit_adv:
        design[:, m_x - 1] = 1.0
        if np.linalg.matrix_rank(design) < m_x:
            raise RatingsError(
                "the first-move advantage cannot be separated from the ratings with these games "
                "(e.g. every pairing was played with the same player moving first); play "
                "colour-swapped pairs or pass a fixed advantage (e.g. advantage=0.0)"
            )
    offset = np.full(n_groups, 0.0 if advantage is None else advantage * NATS_PER_ELO)

    prior_prec = _prior_precision(gf, gs, col, n_players, m_x, fit_adv, prior_sd * NATS_PER_ELO)
    problem = _Problem(design, offset, prior_prec)

    def aggregate(weights: FloatArray) -> FloatArray:
        r = games.result
        return np.stack(
            [
                np.bincount(group_of_game, weights=weights * (r == 1.0), minlength=n_groups),
                np.bincount(group_of_game, weights=weights * (r == 0.5), minlength=n_groups),
                np.bincount(group_of_game, weights=weights * (r == 0.0), minlength=n_groups),
            ]
        )

    counts = aggregate(np.ones(len(games)))
    draw_rate = float(np.clip(np.mean(games.result == 0.5), 0.01, 0.99))
    p0 = np.zeros(m_x + 1)
    p0[m_x] = math.log(2.0 * draw_rate / (1.0 - draw_rate))
    p_hat = problem.solve(counts, p0)

    z = _z(level)
    cov = np.linalg.inv(problem.neg_hessian(p_hat, counts))
    cov = 0.5 * (cov + cov.T)
    # Share of each parameter's posterior information that comes from the prior.
    prior_share = np.diag(cov[:m_x, :m_x] @ prior_prec)
    if ci_method == "hessian":
        se = np.sqrt(np.clip(np.diag(cov), 0.0, None))
        lo, hi = p_hat - z * se, p_hat + z * se
    else:
        samples = _bootstrap(problem, games, aggregate, p_hat, n_bootstrap, seed, clusters)
        cov = np.atleast_2d(np.cov(samples, rowvar=False))
        se = samples.std(axis=0, ddof=1)
        lo, hi = np.quantile(samples, [0.5 - 0.5 * level, 0.5 + 0.5 * level], axis=0)
        # A percentile interval can leave out the estimate itself: by rounding when every resample
        # refits the same value (e.g. a perfect score), or when the resamples are skewed. Widen it to
        # hold the estimate; a rating outside its own interval is not a usable claim.
        lo, hi = np.minimum(lo, p_hat), np.maximum(hi, p_hat)

    games_per = np.bincount(fi, minlength=n_players) + np.bincount(si, minlength=n_players)
    points = np.bincount(fi, weights=games.result, minlength=n_players) + np.bincount(
        si, weights=1.0 - games.result, minlength=n_players
    )
    cut_off, groups = _perfect_score_groups(games, fi, si, n_players, a_idx)
    prior_driven = cut_off | (col >= 0) & (prior_share[col] > PRIOR_SHARE_FLAG)

    def elo_of(v: FloatArray, i: int) -> float:
        return anchor_elo if col[i] < 0 else anchor_elo + float(v[col[i]]) / NATS_PER_ELO

    ratings = [
        Rating(
            player=str(names[i]),
            elo=elo_of(p_hat, i),
            ci_low=elo_of(lo, i),
            ci_high=elo_of(hi, i),
            games=int(games_per[i]),
            score=float(points[i] / games_per[i]),
            prior_driven=bool(prior_driven[i]),
        )
        for i in range(n_players)
    ]
    ses = [0.0 if col[i] < 0 else float(se[col[i]]) / NATS_PER_ELO for i in range(n_players)]
    order = sorted(range(n_players), key=lambda i: (-ratings[i].elo, ratings[i].player))
    full_cov = np.zeros((n_players, n_players))
    free = col >= 0
    full_cov[np.ix_(free, free)] = cov[np.ix_(col[free], col[free])] / NATS_PER_ELO**2
    full_cov = full_cov[np.ix_(order, order)]

    if advantage is None:
        k = m_x - 1
        adv_est = Estimate(*(float(v[k]) / NATS_PER_ELO for v in (p_hat, lo, hi)))
    else:
        adv_est = Estimate(advantage, advantage, advantage)
    nu_est = Estimate(math.exp(p_hat[m_x]), math.exp(lo[m_x]), math.exp(hi[m_x]))

    notes = _notes(games, names, groups, prior_sd)
    if advantage is None and prior_share[m_x - 1] > PRIOR_SHARE_FLAG:
        notes += (
            f"the first-move advantage is largely set by the prior ({prior_share[m_x - 1]:.0%} of its "
            "information): the games barely constrain it (e.g. a player never lost when moving first)",
        )
    return RatingTable(
        ratings=tuple(ratings[i] for i in order),
        standard_errors=tuple(ses[i] for i in order),
        anchor=anchor,
        anchor_elo=anchor_elo,
        draw_nu=nu_est,
        first_move_advantage=adv_est,
        covariance=full_cov,
        ci_method=ci_method,
        level=level,
        n_games=len(games),
        log_likelihood=problem.loglik(p_hat, counts),
        notes=notes,
    )


def _check_connected(names: NDArray[np.str_], fi: IntArray, si: IntArray, a_idx: int, anchor: str) -> None:
    """Raise naming every player with no chain of games to the anchor."""
    n = len(names)
    adj = scipy.sparse.coo_matrix((np.ones(len(fi)), (fi, si)), shape=(n, n))
    _, labels = scipy.sparse.csgraph.connected_components(adj, directed=False)
    cut = np.flatnonzero(labels != labels[a_idx])
    if cut.size:
        raise RatingsError(
            f"the comparison graph is disconnected: {cut.size} player(s) have no chain of games to "
            f"the anchor {anchor!r}: {_names_list(names[cut].tolist())}; rate each group separately "
            f"or add games between the groups"
        )


def _prior_precision(
    gf: IntArray, gs: IntArray, col: IntArray, n_players: int, m_x: int, fit_adv: bool, sd: float
) -> FloatArray:
    """Precision of the Gaussian prior: graph Laplacian of who-met-whom / sd^2 (+ advantage)."""
    lo, hi = np.minimum(gf, gs), np.maximum(gf, gs)
    edges = np.unique(lo * n_players + hi)
    ei, ej = edges // n_players, edges % n_players
    lap = np.zeros((n_players, n_players))
    np.add.at(lap, (ei, ei), 1.0)
    np.add.at(lap, (ej, ej), 1.0)
    np.add.at(lap, (ei, ej), -1.0)
    np.add.at(lap, (ej, ei), -1.0)
    free = col >= 0
    prec = np.zeros((m_x, m_x))
    idx = col[free]
    prec[np.ix_(idx, idx)] = lap[np.ix_(free, free)] / sd**2
    if fit_adv:
        prec[m_x - 1, m_x - 1] = 1.0 / sd**2
    return prec


def _perfect_score_groups(
    games: GameResults, fi: IntArray, si: IntArray, n_players: int, a_idx: int
) -> tuple[NDArray[np.bool_], list[list[int]]]:
    """Strongly connected components of 'i took points from j'. The plain MLE is finite only if
    this graph is strongly connected; players outside the anchor's component are prior-driven."""
    took_f = games.result > 0.0  # first took points from second
    took_s = games.result < 1.0
    src = np.concatenate([fi[took_f], si[took_s]])
    dst = np.concatenate([si[took_f], fi[took_s]])
    adj = scipy.sparse.coo_matrix((np.ones(len(src)), (src, dst)), shape=(n_players, n_players))
    n_comp, labels = scipy.sparse.csgraph.connected_components(adj, directed=True, connection="strong")
    groups = [np.flatnonzero(labels == c).tolist() for c in range(n_comp)]
    return labels != labels[a_idx], groups


def _notes(
    games: GameResults, names: NDArray[np.str_], groups: list[list[int]], prior_sd: float
) -> tuple[str, ...]:
    notes = []
    if len(groups) > 1:
        shown = [names[g].tolist() for g in sorted(groups, key=min)]
        notes.append(
            f"perfect scores split the players into {len(groups)} groups {shown}: the Elo gaps "
            f"between groups are set by the prior (prior_sd={prior_sd:g}) and are lower bounds in "
            f"spirit; their CIs are wide"
        )
    n_draws = int(np.sum(games.result == 0.5))
    if n_draws == 0:
        notes.append("no draws: the draw parameter nu is set by its prior (near zero)")
    elif n_draws == len(games):
        notes.append("every game was drawn: the draw parameter nu is set by its prior (large)")
    return tuple(notes)


def _bootstrap(
    problem: _Problem,
    games: GameResults,
    aggregate: Callable[[FloatArray], FloatArray],
    p_hat: FloatArray,
    n_boot: int,
    seed: int,
    clusters: NDArray[Any] | None = None,
) -> FloatArray:
    """Refit on ``n_boot`` resamples of whole clusters (``clusters``, else pairs, else games)."""
    if clusters is not None:
        _, cluster = np.unique(clusters, return_inverse=True)
    elif games.pair_id is not None:
        _, cluster = np.unique(games.pair_id, return_inverse=True)
    else:
        cluster = np.arange(len(games))
    n_clusters = int(cluster.max()) + 1
    rng = np.random.default_rng(seed)
    out = np.empty((n_boot, len(p_hat)))
    for b in range(n_boot):
        picks = np.bincount(rng.integers(0, n_clusters, n_clusters), minlength=n_clusters)
        out[b] = problem.solve(aggregate(picks[cluster].astype(np.float64)), p_hat)
    return out
