"""Game-pair (pentanomial) statistics for a two-sided match.

Each ballot opening is played twice with the first move swapped, and the two results of a
pair are correlated (a lopsided opening tends to win both games for whoever has the good side).
Treating the pair as the unit - its score is one of 0, 0.5, 1, 1.5, 2 - gives an honest
variance; the per-game (trinomial) variance ignores the correlation and, with opening bias,
overstates the error bars. Both are computed so they can be compared.

Counts are always ordered by increasing score: pentanomial [0, 0.5, 1, 1.5, 2] points per pair,
trinomial [losses, draws, wins]. Scores in :class:`ScoreStats` are per game (0..1).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, cast

import numpy as np
import scipy.stats
from numpy.typing import NDArray

from pipeline.ratings.errors import RatingsError
from pipeline.ratings.games import GameResults
from pipeline.ratings.logistic import score_to_elo

#: Two-sided 95 % standard-normal quantile: a 95 % CI's half-width over this is its standard error.
Z95 = 1.959963984540054

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]


@dataclass(frozen=True, eq=False)
class PairScores:
    """``player``'s points in each complete pair, ordered by pair id.

    ``scores`` are in {0, 0.5, 1, 1.5, 2}; ``opponents[i]`` is who ``player`` faced in pair i.
    """

    player: str
    pair_ids: NDArray[Any]
    opponents: NDArray[np.str_]
    scores: FloatArray

    def __len__(self) -> int:
        return len(self.scores)

    def wilcoxon_steps(self) -> list[tuple[int, float]]:
        """(step, value) for Optuna's WilcoxonPruner: ``trial.report(value, step)`` per pair.

        The pruner pairs up values reported at the same step across trials, so the pair ids
        must be integers naming the ballot opening consistently across trials. Values are pair
        scores (higher is better: use a ``maximize`` study)."""
        if self.pair_ids.dtype.kind not in "iu":
            raise RatingsError(
                "WilcoxonPruner steps must be integer opening ids, "
                f"got pair ids like {self.pair_ids[:3].tolist()}"
            )
        return [(int(s), float(v)) for s, v in zip(self.pair_ids, self.scores, strict=True)]


def _player_games(games: GameResults, player: str, opponent: str | None) -> GameResults:
    involved = (games.first == player) | (games.second == player)
    if not involved.any():
        raise RatingsError(f"player {player!r} has no games in the table")
    if opponent is not None:
        involved &= (games.first == opponent) | (games.second == opponent)
        if not involved.any():
            raise RatingsError(f"player {player!r} never played {opponent!r}")
    return games.select(involved)


def pair_scores(
    games: GameResults, player: str, opponent: str | None = None, *, drop_incomplete: bool = False
) -> PairScores:
    """Group ``player``'s games (optionally only against ``opponent``) into pairs by ``pair_id``.

    Every pair must hold exactly two games against the same opponent, with ``player`` moving
    first in exactly one. A pair with a single game (e.g. an interrupted batch) is an error
    unless ``drop_incomplete``; anything else malformed is always an error quoting the pair id.
    """
    if games.pair_id is None:
        raise RatingsError("pair statistics need pair ids: the game table has no pair_id column")
    g = _player_games(games, player, opponent)
    pair_id = cast(NDArray[Any], g.pair_id)  # select() keeps the column checked above
    ids, inverse, sizes = np.unique(pair_id, return_inverse=True, return_counts=True)
    too_many = np.flatnonzero(sizes > 2)
    if too_many.size:
        pid = ids[too_many[0]].item()
        raise RatingsError(f"pair {pid!r} has {sizes[too_many[0]]} games for {player!r}; a pair has 2")
    single = np.flatnonzero(sizes == 1)
    if single.size and not drop_incomplete:
        raise RatingsError(
            f"pair {ids[single[0]].item()!r} has only one game for {player!r} "
            f"({single.size} incomplete pair(s)); pass drop_incomplete=True to ignore them"
        )
    keep = sizes[inverse] == 2
    order = np.argsort(inverse[keep], kind="stable")
    first, second = g.first[keep][order], g.second[keep][order]
    result = g.result[keep][order]
    ids = ids[sizes == 2]
    is_first = first == player
    opp = np.where(is_first, second, first)
    pts = np.where(is_first, result, 1.0 - result)
    if len(ids) == 0:
        raise RatingsError(f"player {player!r} has no complete pairs")
    first_count = is_first.reshape(-1, 2).sum(axis=1)
    bad = np.flatnonzero(first_count != 1)
    if bad.size:
        raise RatingsError(
            f"pair {ids[bad[0]].item()!r}: {player!r} moved first in {first_count[bad[0]]} of its 2 games; "
            f"the first move must be swapped within a pair"
        )
    opp2 = opp.reshape(-1, 2)
    bad = np.flatnonzero(opp2[:, 0] != opp2[:, 1])
    if bad.size:
        raise RatingsError(
            f"pair {ids[bad[0]].item()!r}: {player!r} met two different opponents {opp2[bad[0]].tolist()}"
        )
    return PairScores(player, ids, opp2[:, 0].copy(), pts.reshape(-1, 2).sum(axis=1))


def pentanomial_counts(scores: FloatArray | PairScores) -> IntArray:
    """Counts of pair scores 0, 0.5, 1, 1.5, 2 (in that order)."""
    s = scores.scores if isinstance(scores, PairScores) else np.asarray(scores, dtype=np.float64)
    k = np.rint(2.0 * s)
    if np.any(k != 2.0 * s) or np.any((k < 0) | (k > 4)):
        raise RatingsError(f"pair scores must be in {{0, 0.5, 1, 1.5, 2}}, got {np.unique(s).tolist()}")
    return np.bincount(k.astype(np.int64), minlength=5).astype(np.int64)


def trinomial_counts(games: GameResults, player: str, opponent: str | None = None) -> IntArray:
    """Counts of ``player``'s [losses, draws, wins] (optionally only against ``opponent``)."""
    g = _player_games(games, player, opponent)
    pts = np.where(g.first == player, g.result, 1.0 - g.result)
    return np.bincount(np.rint(2.0 * pts).astype(np.int64), minlength=3).astype(np.int64)


@dataclass(frozen=True)
class ScoreStats:
    """Mean per-game score of one side, its standard error and the logistic-Elo equivalent.

    ``variance`` is the variance of one sampling unit (a pair or a game) on the per-game score
    scale; ``stderr = sqrt(variance / n)``. ``elo`` is +-inf when every unit was won / lost, and
    CI ends clip to score 0 / 1 (i.e. +-inf Elo). With n small and all units equal the variance is
    0 and the CI collapses: read it together with ``n``.
    """

    n: int
    score: float
    variance: float
    stderr: float
    elo: float
    elo_ci_low: float
    elo_ci_high: float
    los: float  # likelihood of superiority: P(true score > 0.5), normal approximation
    level: float


def _check_counts(counts: Any, k: int) -> FloatArray:
    c = np.asarray(counts, dtype=np.float64)
    if c.shape != (k,) or not np.all(np.isfinite(c)) or np.any(c < 0):
        raise RatingsError(f"expected {k} non-negative counts, got {counts!r}")
    if c.sum() <= 0:
        raise RatingsError(f"no results to summarise: counts are {counts!r}")
    return c


def _score_stats(c: FloatArray, level: float) -> ScoreStats:
    if not 0.0 < level < 1.0:
        raise RatingsError(f"level must lie strictly between 0 and 1, got {level!r}")
    values = np.linspace(0.0, 1.0, len(c))
    n = float(c.sum())
    mu = float(c @ values / n)
    var = float(c @ (values - mu) ** 2 / n)
    se = math.sqrt(var / n)
    z = float(scipy.stats.norm.ppf(0.5 + 0.5 * level))
    lo, hi = min(max(mu - z * se, 0.0), 1.0), min(max(mu + z * se, 0.0), 1.0)
    if se > 0:
        los = float(scipy.stats.norm.cdf((mu - 0.5) / se))
    else:
        los = 1.0 if mu > 0.5 else 0.0 if mu < 0.5 else 0.5
    return ScoreStats(
        n=round(n),
        score=mu,
        variance=var,
        stderr=se,
        elo=score_to_elo(mu),
        elo_ci_low=score_to_elo(lo),
        elo_ci_high=score_to_elo(hi),
        los=los,
        level=level,
    )


def pentanomial_stats(counts: Any, level: float = 0.95) -> ScoreStats:
    """Score, Elo and CI from pair counts [0, 0.5, 1, 1.5, 2] using the pair-outcome variance
    (as fishtest does): the unit is the pair, its score is halved to the per-game scale."""
    return _score_stats(_check_counts(counts, 5), level)


def trinomial_stats(counts: Any, level: float = 0.95) -> ScoreStats:
    """Score, Elo and CI from game counts [losses, draws, wins], treating games as independent."""
    return _score_stats(_check_counts(counts, 3), level)


@dataclass(frozen=True)
class MatchStats:
    """Pentanomial and trinomial summaries of one side of a paired match."""

    player: str
    opponent: str | None
    pentanomial_counts: tuple[int, int, int, int, int]
    trinomial_counts: tuple[int, int, int]
    pentanomial: ScoreStats
    trinomial: ScoreStats


def match_stats(
    games: GameResults,
    player: str,
    opponent: str | None = None,
    *,
    level: float = 0.95,
    drop_incomplete: bool = False,
) -> MatchStats:
    """Summarise ``player``'s complete pairs (against ``opponent``, or everyone) both ways.

    The trinomial counts come from the same complete pairs, so the two means agree exactly and
    only the variances differ.
    """
    pairs = pair_scores(games, player, opponent, drop_incomplete=drop_incomplete)
    in_pairs = games.select(np.isin(cast(NDArray[Any], games.pair_id), pairs.pair_ids))
    penta = pentanomial_counts(pairs)
    tri = trinomial_counts(in_pairs, player, opponent)
    return MatchStats(
        player=player,
        opponent=opponent,
        pentanomial_counts=(int(penta[0]), int(penta[1]), int(penta[2]), int(penta[3]), int(penta[4])),
        trinomial_counts=(int(tri[0]), int(tri[1]), int(tri[2])),
        pentanomial=pentanomial_stats(penta, level),
        trinomial=trinomial_stats(tri, level),
    )
