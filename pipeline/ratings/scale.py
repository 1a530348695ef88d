"""The score-based Elo scale: pooled Bradley-Terry with half-point draws, one fixed point, and a
bootstrap over openings.

Scale. A gap of ``D`` Elo means the stronger side's expected score per game is
``1 / (1 + 10 ** (-D / 400))`` with a draw counted as half a point (the scale of Ordo and of
fishtest's logistic Elo). The fit maximises

    sum over games  s * log p + (1 - s) * log(1 - p),   p = 1 / (1 + 10 ** (-(r_a - r_b) / 400)),

with ``s`` in {0, 0.5, 1} the score of side A; only the points and games of each pairing enter,
so the estimate reproduces every pairing's pooled score as closely as the one-number-per-player
model allows. There is no colour (first-move) term: the pipeline plays every opening twice with
the colours swapped, so the colour advantage cancels within each pair; fitting games that are
not colour-balanced gives ratings that absorb the imbalance (:func:`scale_from_games` notes it).

Fixed point. The ``anchor`` player is held at ``anchor_elo`` in the fit and in every bootstrap
refit, so every other rating, and every CI, is relative to it.

Regularisation. A player who never dropped a point (or a group that never lost to another)
has no finite maximum-likelihood rating. A weak Gaussian prior on the gap along each edge of the
game graph, ``-(r_i - r_j)^2 / (2 prior_sd^2)`` for every two players who met (default
``prior_sd`` = 1000 Elo), keeps the estimate finite. It does not depend on which player is the
anchor, acts only where games were played (so it cannot hide a disconnected graph), and shrinks a
well-measured gap by a fraction of the order of ``SE^2 / prior_sd^2`` (1400 games among five
players, gaps measured to +-20 Elo: 0.1 %, under 0.4 Elo). Players whose rating rests on it are
listed in ``flags``: perfect scores cut them off from the anchor, or the prior supplies more than
:data:`PRIOR_SHARE_FLAG` of the information on their rating, or they were absent from some
bootstrap resamples (their refit there is the prior's).

CIs. Deterministic players replay an opening's games, so games are not independent and a
per-game or per-pair interval is too narrow. The bootstrap resamples the distinct opening ids
with replacement (all games of a drawn opening - every pairing, both colours - come together),
refits each resample (draws from one stream seeded by ``seed``), and keeps the matrix of refitted Elos
(resamples x players) so a caller gets a CI for any function of the ratings. Intervals are
percentile intervals at ``level``, widened when needed to hold the point estimate.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import scipy.sparse
import scipy.sparse.csgraph
import scipy.special
from numpy.typing import NDArray

from engine.errors import quote
from pipeline.ratings.errors import RatingsError
from pipeline.ratings.fit import Estimate
from pipeline.ratings.jsonio import (
    check_keys,
    float_list,
    floats_from_json,
    get_float,
    get_int,
    get_list,
    get_str,
    matrix_from_json,
    matrix_to_json,
    readonly,
)
from pipeline.ratings.logistic import NATS_PER_ELO, elo_to_score, score_to_elo

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]

#: The Elo of the anchor unless told otherwise (e.g. the product's Medium of the variant).
DEFAULT_ANCHOR_ELO = 1500.0
#: Standard deviation (Elo) of the weak prior on the gap along each edge of the game graph.
DEFAULT_PRIOR_SD = 1000.0
#: A rating is flagged when the prior supplies more than this share of its information.
PRIOR_SHARE_FLAG = 0.05
#: Fewest bootstrap resamples accepted (percentile CIs need a few dozen to mean anything).
MIN_BOOTSTRAP = 20
#: The CI method every interval of this module uses, as reports name it.
CI_METHOD = "bootstrap over openings"
SCALE_FIT_SCHEMA = "draughts.scale_fit"
SCALE_FIT_VERSION = 1

_NEWTON_TOL = 1e-9  # largest Newton step (natural-log-odds units) accepted as converged
_NEWTON_MAX = 200
_CHUNK = 256  # bootstrap resamples refitted together (bounds the stacked Hessians' memory)
_MAX_NAMES = 20


# ---- input checks ------------------------------------------------------------------------------


def _column(values: Any, what: str) -> NDArray[Any]:
    if isinstance(values, pa.ChunkedArray | pa.Array):
        if values.null_count:
            raise RatingsError(f"{what}[{values.to_pylist().index(None)}] is missing (null)")
        is_text = pa.types.is_string(values.type) or pa.types.is_large_string(values.type)
        values = values.to_numpy(zero_copy_only=False)
        if is_text:
            values = values.astype(np.str_)
    arr = np.asarray(values)
    if arr.ndim != 1:
        raise RatingsError(f"{what} must be a 1-D column, got shape {arr.shape}")
    return arr


def _check_names(values: Any, what: str) -> NDArray[np.str_]:
    arr = _column(values, what)
    if arr.dtype.kind != "U":
        for i, v in enumerate(arr.tolist()):
            if not isinstance(v, str):
                raise RatingsError(f"{what}[{i}] must be a player name (str), got {quote(v)}")
        arr = arr.astype(np.str_)
    empty = np.flatnonzero(np.char.str_len(arr) == 0) if arr.size else np.zeros(0, dtype=np.int64)
    if empty.size:
        raise RatingsError(f"{what}[{int(empty[0])}] is an empty player name")
    return arr


def _check_scores(values: Any, what: str) -> FloatArray:
    arr = _column(values, what)
    if arr.dtype.kind not in "fiu":
        for i, v in enumerate(arr.tolist()):
            if isinstance(v, bool) or not isinstance(v, int | float):
                raise RatingsError(f"{what}[{i}] must be a score in {{0, 0.5, 1}}, got {quote(v)}")
    out = arr.astype(np.float64)
    bad = np.flatnonzero(~np.isin(out, (0.0, 0.5, 1.0)))
    if bad.size:
        raise RatingsError(f"{what}[{int(bad[0])}] must be a score in {{0, 0.5, 1}}, got {out[bad[0]]!r}")
    return out


def _check_openings(values: Any, what: str) -> NDArray[Any]:
    arr = _column(values, what)
    if arr.dtype.kind in "iuU":
        return arr
    for i, v in enumerate(arr.tolist()):
        if isinstance(v, bool) or not isinstance(v, int | str):
            raise RatingsError(f"{what}[{i}] must be an opening id (str or int), got {quote(v)}")
    return arr.astype(np.str_)


def _check_common(bootstrap: int, level: float) -> None:
    if isinstance(bootstrap, bool) or not isinstance(bootstrap, int) or bootstrap < MIN_BOOTSTRAP:
        raise RatingsError(f"bootstrap must be an integer >= {MIN_BOOTSTRAP} resamples, got {bootstrap!r}")
    if not 0.0 < level < 1.0:
        raise RatingsError(f"level must lie strictly between 0 and 1, got {level!r}")


def _names_list(names: Sequence[str]) -> str:
    shown = list(names[:_MAX_NAMES])
    more = f" and {len(names) - len(shown)} more" if len(names) > len(shown) else ""
    return f"{shown}{more}"


def _require_columns(table: pa.Table, names: Sequence[str]) -> None:
    missing = [c for c in names if c not in table.column_names]
    if missing:
        raise RatingsError(f"game table lacks column(s) {missing}; it has {table.column_names}")


# ---- bootstrap over openings -------------------------------------------------------------------


def opening_resamples(n_openings: int, n_resamples: int, seed: int) -> Iterator[IntArray]:
    """Chunks of (resamples x openings) multiplicities: each row draws ``n_openings`` openings with
    replacement, drawn in row order from one stream seeded by ``seed``."""
    rng = np.random.default_rng(seed)
    done = 0
    while done < n_resamples:
        rows = min(_CHUNK, n_resamples - done)
        picks = rng.integers(0, n_openings, (rows, n_openings)) + n_openings * np.arange(rows)[:, None]
        done += rows
        yield np.bincount(picks.ravel(), minlength=rows * n_openings).reshape(rows, n_openings)


def _percentile_ci(samples: FloatArray, point: FloatArray, level: float) -> tuple[FloatArray, FloatArray]:
    """Percentile interval per column of ``samples``, widened to hold ``point``."""
    lo, hi = np.quantile(samples, [0.5 - 0.5 * level, 0.5 + 0.5 * level], axis=0)
    return np.minimum(lo, point), np.maximum(hi, point)


# ---- the model ---------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class _Model:
    """Log-posterior of the free ratings (natural log-odds units, anchor at 0) for stacked data.

    ``incidence`` (edges x free players) maps ratings to each edge's gap ``r_i - r_j``;
    ``prior`` is the edge-graph Laplacian over ``prior_sd^2``."""

    incidence: FloatArray
    prior: FloatArray

    def objective(self, theta: FloatArray, pts: FloatArray, n: FloatArray) -> FloatArray:
        x = theta @ self.incidence.T
        nll = (pts * np.logaddexp(0.0, -x) + (n - pts) * np.logaddexp(0.0, x)).sum(axis=1)
        return np.asarray(nll + 0.5 * np.einsum("bi,ij,bj->b", theta, self.prior, theta), dtype=np.float64)

    def newton_step(self, theta: FloatArray, pts: FloatArray, n: FloatArray) -> tuple[FloatArray, FloatArray]:
        """(step, Hessian): theta - step is the Newton point of each row."""
        x = theta @ self.incidence.T
        p = scipy.special.expit(x)
        grad = -(pts - n * p) @ self.incidence + theta @ self.prior
        w = n * p * (1.0 - p)
        hess = np.transpose(w[:, :, None] * self.incidence[None], (0, 2, 1)) @ self.incidence + self.prior
        step = np.linalg.solve(hess, grad[:, :, None])[:, :, 0]
        return np.asarray(step, dtype=np.float64), np.asarray(hess, dtype=np.float64)

    def solve(self, pts: FloatArray, n: FloatArray, start: FloatArray) -> FloatArray:
        """Damped Newton to the unique optimum of every row; the objective is strictly convex (the
        prior is positive definite on a connected graph). Rows far from their optimum backtrack
        (Armijo); near it (Newton decrement below 0.01) they take full steps, which converge
        quadratically and are not thrown off by the objective's rounding."""
        theta = np.array(start, dtype=np.float64)
        for _ in range(_NEWTON_MAX):
            step, hess = self.newton_step(theta, pts, n)
            if np.max(np.abs(step), initial=0.0) < _NEWTON_TOL:
                return theta
            decrement = np.einsum("bi,bij,bj->b", step, hess, step)
            t = np.ones(len(theta))
            far = decrement > 0.01
            if far.any():
                f0 = self.objective(theta[far], pts[far], n[far])
                for _ in range(60):
                    trial = theta[far] - t[far, None] * step[far]
                    bad = self.objective(trial, pts[far], n[far]) > f0 - 1e-4 * t[far] * decrement[far]
                    if not bad.any():
                        break
                    t[far] = np.where(bad, 0.5 * t[far], t[far])
            theta = theta - t[:, None] * step
        raise RuntimeError(f"scale fit did not converge in {_NEWTON_MAX} Newton steps")


def _model(n_players: int, a_idx: int, ei: IntArray, ej: IntArray,
           prior_sd: float) -> tuple[_Model, IntArray]:
    col = np.full(n_players, -1, dtype=np.int64)
    col[np.arange(n_players) != a_idx] = np.arange(n_players - 1)
    inc = np.zeros((len(ei), n_players - 1))
    rows = np.arange(len(ei))
    for idx, sign in ((ei, 1.0), (ej, -1.0)):
        free = col[idx] >= 0
        inc[rows[free], col[idx][free]] += sign
    sd = prior_sd * NATS_PER_ELO
    return _Model(inc, inc.T @ inc / sd**2), col


# ---- the fit -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class PlayerFlag:
    """A player whose rating should be read with care, and why."""

    player: str
    reason: str


@dataclass(frozen=True, eq=False)
class ScaleFit:
    """Result of :func:`fit_scale`. Per-player arrays follow ``players`` (sorted by name);
    ``samples`` (bootstrap resamples x players, Elo) is ``None`` when read from JSON without it."""

    players: tuple[str, ...]
    elo: FloatArray
    ci_low: FloatArray
    ci_high: FloatArray
    games: IntArray
    points: FloatArray
    samples: FloatArray | None
    anchor: str
    anchor_elo: float
    level: float
    n_bootstrap: int
    seed: int
    prior_sd: float
    n_games: int
    openings: int
    flags: tuple[PlayerFlag, ...]
    notes: tuple[str, ...]

    def index(self, player: str) -> int:
        try:
            return self.players.index(player)
        except ValueError:
            raise RatingsError(f"no rating for player {quote(player)}; players are "
                               f"{_names_list(self.players)}") from None

    @property
    def flagged(self) -> tuple[str, ...]:
        """Players with at least one flag, sorted."""
        return tuple(sorted({f.player for f in self.flags}))

    def rating(self, player: str) -> Estimate:
        """The player's Elo with its percentile CI (zero width for the anchor)."""
        i = self.index(player)
        return Estimate(float(self.elo[i]), float(self.ci_low[i]), float(self.ci_high[i]))

    def require_samples(self) -> FloatArray:
        """The bootstrap matrix (resamples x players), or a one-line error when it was not read."""
        if self.samples is None:
            raise RatingsError("this scale fit was read without its bootstrap samples: CIs of functions of "
                               "the ratings need them (write it with to_json(samples=True))")
        return self.samples

    def estimate(self, fn: Callable[[FloatArray], FloatArray]) -> Estimate:
        """Any function of the ratings with a CI: ``fn`` maps an (k x players) matrix of Elos, one
        row per rating set, to k values; the point is ``fn`` of the fit, the CI the percentiles of
        ``fn`` over the bootstrap samples (widened to hold the point)."""
        samples = self.require_samples()
        point = np.asarray(fn(self.elo[None, :]), dtype=np.float64).reshape(-1)
        values = np.asarray(fn(samples), dtype=np.float64).reshape(-1)
        if point.shape != (1,) or values.shape != (len(samples),):
            raise RatingsError(f"estimate: fn must map k rows of Elos to k values, got {point.shape} "
                               f"and {values.shape} for 1 and {len(samples)} rows")
        lo, hi = _percentile_ci(values[:, None], point, self.level)
        return Estimate(float(point[0]), float(lo[0]), float(hi[0]))

    def difference(self, a: str, b: str) -> Estimate:
        """Elo(a) - Elo(b) with a CI from the joint bootstrap samples (their correlation included)."""
        i, j = self.index(a), self.index(b)
        return self.estimate(lambda e: e[:, i] - e[:, j])

    def expected_score(self, a: str, b: str) -> Estimate:
        """Predicted score per game of ``a`` against ``b``, ``1 / (1 + 10^(-(r_a - r_b)/400))``, with CI."""
        i, j = self.index(a), self.index(b)
        return self.estimate(lambda e: elo_to_score(e[:, i] - e[:, j]))

    def to_json(self, *, samples: bool = True) -> dict[str, Any]:
        """A JSON-ready dict; ``samples=False`` leaves the bootstrap matrix out (null)."""
        players = [
            {"player": p, "elo": float(self.elo[i]), "ci": [float(self.ci_low[i]), float(self.ci_high[i])],
             "games": int(self.games[i]), "points": float(self.points[i])}
            for i, p in enumerate(self.players)
        ]
        return {
            "schema": SCALE_FIT_SCHEMA, "schema_version": SCALE_FIT_VERSION, "ci_method": CI_METHOD,
            "anchor": self.anchor, "anchor_elo": self.anchor_elo, "level": self.level,
            "bootstrap": self.n_bootstrap, "seed": self.seed, "prior_sd": self.prior_sd,
            "games": self.n_games, "openings": self.openings, "players": players,
            "flags": [{"player": f.player, "reason": f.reason} for f in self.flags],
            "notes": list(self.notes),
            "samples": matrix_to_json(self.samples) if samples and self.samples is not None else None,
        }

    @classmethod
    def from_json(cls, data: Any, source: str = "scale fit") -> ScaleFit:
        """Read what :meth:`to_json` wrote; unknown, missing or ill-typed keys are a one-line error."""
        keys = ("schema", "schema_version", "ci_method", "anchor", "anchor_elo", "level", "bootstrap", "seed",
                "prior_sd", "games", "openings", "players", "flags", "notes", "samples")
        obj = check_keys(data, keys, source)
        if obj["schema"] != SCALE_FIT_SCHEMA or obj["schema_version"] != SCALE_FIT_VERSION:
            raise RatingsError(f"{source}: not a {SCALE_FIT_SCHEMA} version {SCALE_FIT_VERSION} file "
                               f"(schema {quote(obj['schema'])}, version {quote(obj['schema_version'])})")
        if obj["ci_method"] != CI_METHOD:
            raise RatingsError(f"{source}.ci_method must be {CI_METHOD!r}, got {quote(obj['ci_method'])}")
        rows = get_list(obj, "players", source)
        names: list[str] = []
        elo, lo, hi, games, points = [], [], [], [], []
        for k, row in enumerate(rows):
            where = f"{source}.players[{k}]"
            r = check_keys(row, ("player", "elo", "ci", "games", "points"), where)
            names.append(get_str(r, "player", where))
            elo.append(get_float(r, "elo", where))
            ci = floats_from_json({"ci": r["ci"]}, "ci", where, 2)
            lo.append(float(ci[0]))
            hi.append(float(ci[1]))
            games.append(get_int(r, "games", where))
            points.append(get_float(r, "points", where))
        if len(set(names)) != len(names) or names != sorted(names):
            raise RatingsError(f"{source}.players must name each player once, sorted by name")
        anchor = get_str(obj, "anchor", source)
        anchor_elo = get_float(obj, "anchor_elo", source)
        if anchor not in names or elo[names.index(anchor)] != anchor_elo:
            raise RatingsError(f"{source}: the anchor {quote(anchor)} must be a player rated at anchor_elo")
        flags = []
        for k, f in enumerate(get_list(obj, "flags", source)):
            where = f"{source}.flags[{k}]"
            fl = check_keys(f, ("player", "reason"), where)
            player = get_str(fl, "player", where)
            if player not in names:
                raise RatingsError(f"{where}.player {quote(player)} is not a rated player")
            flags.append(PlayerFlag(player, get_str(fl, "reason", where)))
        notes = get_list(obj, "notes", source)
        if not all(isinstance(n, str) for n in notes):
            raise RatingsError(f"{source}.notes must be a list of strings")
        samples = None if obj["samples"] is None else matrix_from_json(obj["samples"], f"{source}.samples",
                                                                       columns=len(names))
        level = get_float(obj, "level", source)
        if not 0.0 < level < 1.0:
            raise RatingsError(f"{source}.level must lie strictly between 0 and 1, got {level!r}")
        n_boot = get_int(obj, "bootstrap", source, minimum=MIN_BOOTSTRAP)
        if samples is not None and len(samples) != n_boot:
            raise RatingsError(f"{source}.samples has {len(samples)} rows, expected bootstrap = {n_boot}")
        seed = obj["seed"]
        if isinstance(seed, bool) or not isinstance(seed, int):
            raise RatingsError(f"{source}.seed must be an integer, got {quote(seed)}")
        return cls(
            players=tuple(names), elo=readonly(np.array(elo)), ci_low=readonly(np.array(lo)),
            ci_high=readonly(np.array(hi)), games=readonly(np.array(games, dtype=np.int64)),
            points=readonly(np.array(points)), samples=None if samples is None else readonly(samples),
            anchor=anchor, anchor_elo=anchor_elo, level=level, n_bootstrap=n_boot, seed=seed,
            prior_sd=get_float(obj, "prior_sd", source), n_games=get_int(obj, "games", source, minimum=1),
            openings=get_int(obj, "openings", source, minimum=1), flags=tuple(flags),
            notes=tuple(str(n) for n in notes),
        )


def fit_scale(
    players_a: Sequence[str] | NDArray[Any],
    players_b: Sequence[str] | NDArray[Any],
    score_a: Sequence[float] | NDArray[Any],
    openings: Sequence[str | int] | NDArray[Any],
    *,
    anchor: str,
    anchor_elo: float = DEFAULT_ANCHOR_ELO,
    bootstrap: int = 1000,
    seed: int,
    level: float = 0.95,
    prior_sd: float = DEFAULT_PRIOR_SD,
) -> ScaleFit:
    """Fit the score-based Elo scale (see the module docstring) to one row per game: side A's
    name, side B's name, A's score (0, 0.5, 1) and the game's opening id (the bootstrap unit).

    ``anchor`` is held at ``anchor_elo`` in the fit and in each of the ``bootstrap`` refits, drawn
    from ``seed``. Raises :class:`RatingsError` (one line) for bad rows, an anchor that played no
    game, or players with no chain of games to the anchor (named). Dense linear algebra: meant for
    up to a few hundred players.
    """
    _check_common(bootstrap, level)
    if not math.isfinite(anchor_elo):
        raise RatingsError(f"anchor_elo must be finite, got {anchor_elo!r}")
    if not (math.isfinite(prior_sd) and prior_sd > 0):
        raise RatingsError(f"prior_sd must be a positive finite Elo value, got {prior_sd!r}")
    pa_ = _check_names(players_a, "players_a")
    pb_ = _check_names(players_b, "players_b")
    score = _check_scores(score_a, "score_a")
    opening = _check_openings(openings, "openings")
    lengths = {"players_a": len(pa_), "players_b": len(pb_), "score_a": len(score), "openings": len(opening)}
    if len(set(lengths.values())) != 1:
        raise RatingsError(f"columns must have equal lengths, got {lengths}")
    if len(pa_) == 0:
        raise RatingsError("cannot fit the Elo scale: no games")
    same = np.flatnonzero(pa_ == pb_)
    if same.size:
        raise RatingsError(f"game {int(same[0])}: player {quote(str(pa_[same[0]]))} cannot play "
                           "against itself")

    names = np.unique(np.concatenate([pa_, pb_]))
    n_players = len(names)
    if anchor not in names:
        raise RatingsError(f"anchor {quote(anchor)} played no games; players are "
                           f"{_names_list(names.tolist())}")
    a_idx = int(np.searchsorted(names, anchor))
    ia, ib = np.searchsorted(names, pa_), np.searchsorted(names, pb_)
    _check_connected(names, ia, ib, a_idx, anchor)

    # Aggregate to (opening x edge) points of the edge's lower-index player and game counts.
    lo, hi = np.minimum(ia, ib), np.maximum(ia, ib)
    pts_lo = np.where(ia == lo, score, 1.0 - score)
    edge_keys, edge_of = np.unique(lo * n_players + hi, return_inverse=True)
    ei, ej = (edge_keys // n_players).astype(np.int64), (edge_keys % n_players).astype(np.int64)
    open_ids, open_of = np.unique(opening, return_inverse=True)
    n_open, n_edges = len(open_ids), len(edge_keys)
    cell = open_of * n_edges + edge_of
    by_pts = np.bincount(cell, weights=pts_lo, minlength=n_open * n_edges).reshape(n_open, n_edges)
    by_n = np.bincount(cell, minlength=n_open * n_edges).reshape(n_open, n_edges).astype(np.float64)
    pts_all, n_all = by_pts.sum(axis=0), by_n.sum(axis=0)

    model, col = _model(n_players, a_idx, ei, ej, prior_sd)
    theta = model.solve(pts_all[None], n_all[None], np.zeros((1, n_players - 1)))[0]

    samples = np.empty((bootstrap, n_players - 1))
    absent = np.zeros(n_players, dtype=np.int64)
    done = 0
    for weights in opening_resamples(n_open, bootstrap, seed):
        w = weights.astype(np.float64)
        pts_b, n_b = w @ by_pts, w @ by_n
        samples[done : done + len(w)] = model.solve(pts_b, n_b, np.repeat(theta[None], len(w), axis=0))
        per_player = np.zeros((len(w), n_players))
        np.add.at(per_player.T, ei, n_b.T)
        np.add.at(per_player.T, ej, n_b.T)
        absent += (per_player == 0).sum(axis=0)
        done += len(w)

    def to_elo(v: FloatArray) -> FloatArray:
        out = np.full((*v.shape[:-1], n_players), anchor_elo)
        out[..., col >= 0] = anchor_elo + v[..., col[col >= 0]] / NATS_PER_ELO
        return out

    elo, elo_samples = to_elo(theta), to_elo(samples)
    ci_lo, ci_hi = _percentile_ci(elo_samples, elo, level)

    games_per = np.bincount(ia, minlength=n_players) + np.bincount(ib, minlength=n_players)
    points = np.bincount(ia, weights=score, minlength=n_players) + np.bincount(
        ib, weights=1.0 - score, minlength=n_players)
    _, hess = model.newton_step(theta[None], pts_all[None], n_all[None])
    prior_share = np.diag(np.linalg.inv(hess[0]) @ model.prior)
    cut_off, groups = _perfect_score_groups(ei, ej, pts_all, n_all, n_players, a_idx)
    flags, notes = _flags(names, col, cut_off, groups, prior_share, absent, bootstrap, prior_sd)
    return ScaleFit(
        players=tuple(str(n) for n in names), elo=readonly(elo), ci_low=readonly(ci_lo),
        ci_high=readonly(ci_hi), games=readonly(games_per.astype(np.int64)), points=readonly(points),
        samples=readonly(elo_samples), anchor=anchor, anchor_elo=float(anchor_elo), level=float(level),
        n_bootstrap=bootstrap, seed=int(seed), prior_sd=float(prior_sd), n_games=len(score), openings=n_open,
        flags=flags, notes=notes,
    )


def _check_connected(names: NDArray[np.str_], ia: NDArray[Any], ib: NDArray[Any], a_idx: int,
                     anchor: str) -> None:
    n = len(names)
    adj = scipy.sparse.coo_matrix((np.ones(len(ia)), (ia, ib)), shape=(n, n))
    _, labels = scipy.sparse.csgraph.connected_components(adj, directed=False)
    cut = np.flatnonzero(labels != labels[a_idx])
    if cut.size:
        raise RatingsError(
            f"the game graph is disconnected: {cut.size} player(s) have no chain of games to the anchor "
            f"{quote(anchor)}: {_names_list(names[cut].tolist())}")


def _perfect_score_groups(ei: IntArray, ej: IntArray, pts: FloatArray, n: FloatArray, n_players: int,
                          a_idx: int) -> tuple[NDArray[np.bool_], list[list[int]]]:
    """Strongly connected components of 'took points from': the plain MLE is finite only when this
    graph is strongly connected; players outside the anchor's component rest on the prior."""
    i_took, j_took = pts > 0, (n - pts) > 0
    src = np.concatenate([ei[i_took], ej[j_took]])
    dst = np.concatenate([ej[i_took], ei[j_took]])
    adj = scipy.sparse.coo_matrix((np.ones(len(src)), (src, dst)), shape=(n_players, n_players))
    n_comp, labels = scipy.sparse.csgraph.connected_components(adj, directed=True, connection="strong")
    return labels != labels[a_idx], [np.flatnonzero(labels == c).tolist() for c in range(n_comp)]


def measured_groups(table: pa.Table) -> tuple[frozenset[str], ...]:
    """The groups of players whose rating gaps the games measure (GAMES_SCHEMA ``white_player``,
    ``black_player``, ``result_white``): the strongly connected components of 'took points from'.
    A gap between two groups rests on the fit's prior (one side never dropped a point)."""
    _require_columns(table, ["white_player", "black_player", "result_white"])
    white = _check_names(table.column("white_player"), "white_player")
    black = _check_names(table.column("black_player"), "black_player")
    result = _check_scores(table.column("result_white"), "result_white")
    names, idx = np.unique(np.concatenate([white, black]), return_inverse=True)
    wi, bi = idx[: len(white)], idx[len(white):]
    src = np.concatenate([wi[result > 0], bi[result < 1]])
    dst = np.concatenate([bi[result > 0], wi[result < 1]])
    adj = scipy.sparse.coo_matrix((np.ones(len(src)), (src, dst)), shape=(len(names), len(names)))
    n_comp, labels = scipy.sparse.csgraph.connected_components(adj, directed=True, connection="strong")
    groups = [frozenset(str(names[i]) for i in np.flatnonzero(labels == c)) for c in range(n_comp)]
    return tuple(sorted(groups, key=lambda g: sorted(g)))


def _flags(names: NDArray[np.str_], col: IntArray, cut_off: NDArray[np.bool_], groups: list[list[int]],
           prior_share: FloatArray, absent: IntArray, n_boot: int,
           prior_sd: float) -> tuple[tuple[PlayerFlag, ...], tuple[str, ...]]:
    flags: list[PlayerFlag] = []
    for i, name in enumerate(names.tolist()):
        if cut_off[i]:
            flags.append(PlayerFlag(name, "perfect scores separate it from the anchor: its rating rests on "
                                          "the regularising prior (read it as a bound)"))
        elif col[i] >= 0 and prior_share[col[i]] > PRIOR_SHARE_FLAG:
            flags.append(PlayerFlag(name, f"the prior supplies {prior_share[col[i]]:.0%} of the information "
                                          "on its rating (too few games)"))
        if absent[i]:
            flags.append(PlayerFlag(name, f"absent from {int(absent[i])} of {n_boot} bootstrap resamples "
                                          "(its refit there is the prior's): its CI is unreliable"))
    notes: list[str] = []
    if len(groups) > 1:
        shown = [names[g].tolist() for g in sorted(groups, key=min)]
        notes.append(f"perfect scores split the players into {len(groups)} groups {shown}: the gaps between "
                     f"groups are set by the prior (prior_sd={prior_sd:g} Elo)")
    return tuple(flags), tuple(notes)


def scale_from_games(
    table: pa.Table,
    anchor: str,
    *,
    anchor_elo: float = DEFAULT_ANCHOR_ELO,
    bootstrap: int = 1000,
    seed: int,
    level: float = 0.95,
    prior_sd: float = DEFAULT_PRIOR_SD,
) -> ScaleFit:
    """:func:`fit_scale` on a games table (GAMES_SCHEMA columns ``white_player``, ``black_player``,
    ``result_white`` - White's points after any variant outcome inversion - and ``opening_id``).
    Pairings whose players did not have White equally often are noted (the model has no colour term)."""
    _require_columns(table, ["white_player", "black_player", "result_white", "opening_id"])
    white = _check_names(table.column("white_player"), "white_player")
    black = _check_names(table.column("black_player"), "black_player")
    fit = fit_scale(white, black, table.column("result_white"), table.column("opening_id"), anchor=anchor,
                    anchor_elo=anchor_elo, bootstrap=bootstrap, seed=seed, level=level, prior_sd=prior_sd)
    unbalanced = _colour_imbalance(white, black)
    if not unbalanced:
        return fit
    note = (f"{len(unbalanced)} pairing(s) did not give both players White equally often, e.g. "
            f"{unbalanced[0]}: the scale has no colour term, so their ratings absorb the colour advantage")
    return dataclasses.replace(fit, notes=(*fit.notes, note))


def _colour_imbalance(white: NDArray[np.str_], black: NDArray[np.str_]) -> list[str]:
    names, codes = np.unique(np.concatenate([white, black]), return_inverse=True)
    w, b = codes[: len(white)], codes[len(white):]
    lo, hi = np.minimum(w, b), np.maximum(w, b)
    keys, of = np.unique(lo * len(names) + hi, return_inverse=True)
    excess = np.bincount(of, weights=np.where(w == lo, 1.0, -1.0), minlength=len(keys))
    return [f"{names[k // len(names)]} vs {names[k % len(names)]} ({int(c):+d} White games for "
            f"{names[k // len(names)]})" for k, c in zip(keys.tolist(), excess.tolist(), strict=True) if c]


# ---- replays -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class PairingGames:
    """Games of one pairing (players sorted by name) and how many of them were distinct."""

    players: tuple[str, str]
    games: int
    distinct: int


@dataclass(frozen=True)
class DistinctGames:
    """Distinct games per pairing: games with the same opening, colours and move list count once
    (deterministic players replay an opening's game every time it is dealt to them)."""

    pairings: tuple[PairingGames, ...]

    @property
    def games(self) -> int:
        return sum(p.games for p in self.pairings)

    @property
    def distinct(self) -> int:
        return sum(p.distinct for p in self.pairings)


def distinct_games(table: pa.Table) -> DistinctGames:
    """Count distinct games per pairing from GAMES_SCHEMA columns ``white_player``, ``black_player``,
    ``opening_id`` and ``moves``."""
    _require_columns(table, ["white_player", "black_player", "opening_id", "moves"])
    cols = [table.column(c).to_pylist() for c in ("white_player", "black_player", "opening_id", "moves")]
    seen: dict[tuple[str, str], set[tuple[Any, ...]]] = {}
    total: dict[tuple[str, str], int] = {}
    for w, b, o, m in zip(*cols, strict=True):
        key = (w, b) if w <= b else (b, w)
        seen.setdefault(key, set()).add((w, b, o, m))
        total[key] = total.get(key, 0) + 1
    return DistinctGames(tuple(PairingGames(k, total[k], len(seen[k])) for k in sorted(total)))


# ---- one match ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class MatchScore:
    """Score per game of side A against side B and its score-based Elo, with CIs from a bootstrap
    over openings. The Elo ends are the score CI's ends mapped through :func:`score_to_elo`
    (monotone); a score of 0 or 1 maps to -inf / +inf."""

    a: str
    b: str
    games: int
    points: float
    openings: int
    distinct_games: int | None  # None when the table has no move lists
    score: Estimate
    elo: Estimate
    level: float
    n_bootstrap: int
    seed: int
    ci_method: str = CI_METHOD


def score_ci(score_a: Sequence[float] | NDArray[Any], openings: Sequence[str | int] | NDArray[Any], *,
             bootstrap: int = 1000, seed: int, level: float = 0.95) -> tuple[Estimate, int]:
    """(A's mean score with a bootstrap-over-openings percentile CI, number of distinct openings).

    A perfect score (every game won, or every game lost) gives every resample the same score, so
    the bootstrap's CI has no width and no prediction below 1 could lie inside it. Its CI is
    then the exact (Clopper-Pearson) interval over openings: with all of n openings won, the
    chance that an opening is won whole is at least ((1 - level) / 2) ** (1 / n) at this level,
    and the score is at least that chance."""
    _check_common(bootstrap, level)
    score = _check_scores(score_a, "score_a")
    opening = _check_openings(openings, "openings")
    if len(score) != len(opening):
        raise RatingsError(f"score_a and openings must have equal lengths, got {len(score)} and "
                           f"{len(opening)}")
    if len(score) == 0:
        raise RatingsError("cannot score a match without games")
    _, open_of = np.unique(opening, return_inverse=True)
    n_open = int(open_of.max()) + 1
    pts = np.bincount(open_of, weights=score, minlength=n_open)
    n = np.bincount(open_of, minlength=n_open).astype(np.float64)
    values = np.concatenate([(w @ pts) / (w @ n) for w in opening_resamples(n_open, bootstrap, seed)])
    point = np.array([score.mean()])
    if point[0] in (0.0, 1.0):
        bound = float(((1.0 - level) / 2.0) ** (1.0 / n_open))
        low, high = (bound, 1.0) if point[0] == 1.0 else (0.0, 1.0 - bound)
        return Estimate(float(point[0]), low, high), n_open
    lo, hi = _percentile_ci(values[:, None], point, level)
    return Estimate(float(point[0]), float(lo[0]), float(hi[0])), n_open


def match_score(table: pa.Table, a: str, b: str, *, bootstrap: int = 1000, seed: int,
                level: float = 0.95) -> MatchScore:
    """Score and Elo of ``a`` against ``b`` from a games table's A/B view (GAMES_SCHEMA columns
    ``player_a``, ``player_b``, ``result_a``, ``opening_id``; ``moves``, ``white_player`` and
    ``black_player`` for the distinct-game count). Games with the sides the other way round count
    from ``a``'s side; ``a == b`` (a self-match) scores side A."""
    _require_columns(table, ["player_a", "player_b", "result_a", "opening_id"])
    side_a = _check_names(table.column("player_a"), "player_a")
    side_b = _check_names(table.column("player_b"), "player_b")
    result = _check_scores(table.column("result_a"), "result_a")
    forward = (side_a == a) & (side_b == b)
    backward = (side_a == b) & (side_b == a) & ~forward
    rows = forward | backward
    if not rows.any():
        raise RatingsError(f"no games between {quote(a)} and {quote(b)} in the table")
    score_a = np.where(forward, result, 1.0 - result)[rows]
    openings = _check_openings(table.column("opening_id"), "opening_id")[rows]
    est, n_open = score_ci(score_a, openings, bootstrap=bootstrap, seed=seed, level=level)
    mask = pa.array(rows)
    replays = distinct_games(table.filter(mask)) if "moves" in table.column_names else None
    return MatchScore(
        a=a, b=b, games=int(rows.sum()), points=float(score_a.sum()), openings=n_open,
        distinct_games=None if replays is None else replays.distinct,
        score=est, elo=Estimate(*(score_to_elo(v) for v in (est.value, est.ci_low, est.ci_high))),
        level=level, n_bootstrap=bootstrap, seed=seed,
    )


def match_score_json(m: MatchScore) -> dict[str, Any]:
    """The report fields of a match's score-based Elo (JSON has no infinity: +-inf is null)."""
    elo = float_list(np.array([m.elo.value, m.elo.ci_low, m.elo.ci_high]))
    return {"score": m.score.value, "score_ci": [m.score.ci_low, m.score.ci_high], "elo": elo[0],
            "elo_ci": elo[1:], "ci_method": m.ci_method, "openings": m.openings,
            "distinct_games": m.distinct_games, "bootstrap": m.n_bootstrap}
