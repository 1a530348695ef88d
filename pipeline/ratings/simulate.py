"""Synthetic game tables drawn from known ratings (for tests and for sizing experiments).

Games come in colour-swapped pairs, like the real pipeline plays them. An optional per-pair
``opening_sd`` (Elo) biases each ballot opening towards the first mover in *both* of its games,
which makes the two results of a pair negatively correlated from a player's point of view -
the situation in which pentanomial statistics beat trinomial ones.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping

import numpy as np

from pipeline.ratings.davidson import davidson_probabilities
from pipeline.ratings.errors import RatingsError
from pipeline.ratings.games import GameResults


def simulate_pairs(
    elos: Mapping[str, float],
    pairs_per_pairing: int,
    *,
    nu: float,
    advantage: float,
    rng: np.random.Generator,
    opening_sd: float = 0.0,
) -> GameResults:
    """Round robin: every two players meet ``pairs_per_pairing`` times, each time twice with the
    first move swapped; results follow the Davidson model with first-move ``advantage`` (Elo).
    Pair ids are 0, 1, 2, ... in play order."""
    names = list(elos)
    if len(names) < 2 or pairs_per_pairing < 1:
        raise RatingsError(
            f"need >= 2 players and >= 1 pair per pairing, got {names!r}, {pairs_per_pairing!r}"
        )
    a_list, b_list = [], []
    for a, b in itertools.combinations(names, 2):
        a_list += [a] * pairs_per_pairing
        b_list += [b] * pairs_per_pairing
    a_arr, b_arr = np.array(a_list), np.array(b_list)
    n_pairs = len(a_arr)
    bias = rng.normal(0.0, opening_sd, n_pairs) if opening_sd > 0 else np.zeros(n_pairs)
    elo_a = np.array([elos[p] for p in a_list])
    elo_b = np.array([elos[p] for p in b_list])
    # game 0 of each pair: a moves first; game 1: b moves first; same opening bias.
    first = np.stack([a_arr, b_arr], axis=1).ravel()
    second = np.stack([b_arr, a_arr], axis=1).ravel()
    diff = np.stack([elo_a - elo_b, elo_b - elo_a], axis=1).ravel() + advantage + np.repeat(bias, 2)
    result = sample_results(diff, nu, rng)
    return GameResults(first, second, result, np.repeat(np.arange(n_pairs), 2))


def sample_results(elo_diff: np.ndarray, nu: float, rng: np.random.Generator) -> np.ndarray:
    """One Davidson game result (1 / 0.5 / 0 for the first side) per entry of ``elo_diff``."""
    pw, pd, _ = davidson_probabilities(elo_diff, nu)
    u = rng.random(np.shape(elo_diff))
    return np.where(u < pw, 1.0, np.where(u < pw + pd, 0.5, 0.0))
