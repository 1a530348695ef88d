"""Ratings and match statistics: pure functions over game tables (no Ray / MLflow / Optuna).

- :mod:`.games`: ``GameResults`` (first mover, second mover, score) and colour-table conversion.
- :mod:`.rating`: ``Rating``, one player's Elo, CI and record (the type every stage passes on).
- :mod:`.fit`: anchored Davidson/Bradley-Terry Elo by maximum likelihood with CIs.
- :mod:`.pairs`: pentanomial (game-pair) and trinomial score statistics.
- :mod:`.sprt`: GSPRT on pairs.
- :mod:`.logistic`, :mod:`.davidson`: score <-> Elo conversions and the draw model.
- :mod:`.simulate`: synthetic game tables from known ratings.
"""

from pipeline.ratings.davidson import davidson_expected_score, davidson_probabilities
from pipeline.ratings.errors import RatingsError
from pipeline.ratings.fit import Estimate, RatingTable, fit_elo
from pipeline.ratings.games import BOOTSTRAP_UNITS, GameResults, bootstrap_clusters, games_from_color_table
from pipeline.ratings.logistic import NATS_PER_ELO, elo_to_score, score_to_elo
from pipeline.ratings.pairs import (
    Z95,
    MatchStats,
    PairScores,
    ScoreStats,
    match_stats,
    pair_scores,
    pentanomial_counts,
    pentanomial_stats,
    trinomial_counts,
    trinomial_stats,
)
from pipeline.ratings.rating import Rating
from pipeline.ratings.simulate import sample_results, simulate_pairs
from pipeline.ratings.sprt import (
    DEFAULT_MIN_PAIRS,
    SprtDecision,
    SprtResult,
    sprt,
    sprt_bounds,
    sprt_decision,
    sprt_llr,
    sprt_llr_batch,
)

__all__ = [
    "BOOTSTRAP_UNITS",
    "DEFAULT_MIN_PAIRS",
    "NATS_PER_ELO",
    "Z95",
    "Estimate",
    "GameResults",
    "MatchStats",
    "PairScores",
    "Rating",
    "RatingTable",
    "RatingsError",
    "ScoreStats",
    "SprtDecision",
    "SprtResult",
    "bootstrap_clusters",
    "davidson_expected_score",
    "davidson_probabilities",
    "elo_to_score",
    "fit_elo",
    "games_from_color_table",
    "match_stats",
    "pair_scores",
    "pentanomial_counts",
    "pentanomial_stats",
    "sample_results",
    "score_to_elo",
    "simulate_pairs",
    "sprt",
    "sprt_bounds",
    "sprt_decision",
    "sprt_llr",
    "sprt_llr_batch",
    "trinomial_counts",
    "trinomial_stats",
]
