"""A candidate level's rating on the ladder (one pooled fit) and its profile.

Shared by the level studies, the head-to-head chain and the confirmation rounds.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pyarrow as pa

from engine.profile import Knob, LevelProfile
from engine.variants import get_variant
from pipeline.ladder.reference import ANCHOR, Ladder
from pipeline.ratings import GameResults, Rating, bootstrap_clusters, fit_elo, games_from_color_table


def rate_many(ladder: Ladder, table: pa.Table, names: Sequence[str], pin: str = ANCHOR, *,
              bootstrap: int = 0, seed: int = 0, unit: str = "opening") -> dict[str, Rating]:
    """Fit ladder games + ``table``'s games together and read the ratings of ``names``.

    ``pin`` (a ladder anchor) is held at its ladder Elo, so the CIs are relative to it. With
    ``bootstrap`` > 0 the CIs resample whole clusters of ``table``'s games (``unit``, see
    :data:`pipeline.ratings.BOOTSTRAP_UNITS`) and single ladder games (whose openings the stored
    counts do not keep) instead of using the Hessian.
    """
    ladder_games = ladder.game_results()
    trial = games_from_color_table(table, pair_id=None)
    clusters = None
    if bootstrap:
        ladder_ids = np.char.add("ladder/", np.arange(len(ladder_games)).astype(np.str_))
        clusters = np.concatenate([ladder_ids, bootstrap_clusters(table, unit)])
    games = GameResults.from_arrays(
        np.concatenate([ladder_games.first, trial.first]),
        np.concatenate([ladder_games.second, trial.second]),
        np.concatenate([ladder_games.result, trial.result]))
    fit = fit_elo(games, pin, ladder.anchor(pin).elo, ci_method="bootstrap" if bootstrap else "hessian",
                  n_bootstrap=max(bootstrap, 20), seed=seed, clusters=clusters)
    return {name: fit[name] for name in names}


def rate_on_ladder(ladder: Ladder, table: pa.Table, name: str, pin: str = ANCHOR, *, bootstrap: int = 0,
                   seed: int = 0, unit: str = "opening") -> Rating:
    """:func:`rate_many` for one player."""
    return rate_many(ladder, table, [name], pin, bootstrap=bootstrap, seed=seed, unit=unit)[name]


def level_profile(variant: str, name: str, weights: Mapping[str, float],
                  knobs: Mapping[str, Knob]) -> LevelProfile:
    """The level profile of ``knobs`` and ``weights`` for ``variant``."""
    return LevelProfile.from_knobs(get_variant(variant), name, dict(weights), dict(knobs))
