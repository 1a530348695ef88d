"""Synthetic games on the score-based (logistic) Elo scale, for tests and sizing experiments.

Every pairing plays each opening twice with the colours swapped. Side A's expected score over
such a pair is exactly ``1 / (1 + 10 ** (-D / 400))`` for a gap ``D``, whatever the options, so the
true ratings are the ones the scale fit should recover. The options make openings matter the way
they do for real engines, so that results cluster by opening:

- ``colour_bias_sd``: each opening favours White by ``beta * min(p, 1 - p)`` in expected score
  (``beta ~ N(0, sd)`` clipped to [-1, 1], shared by every pairing), and the colour-swapped game
  gives it back, so the two games of a pair are negatively correlated;
- ``draw_share_sd``: each opening has its own draw share around ``draw_share`` (a draw takes
  ``draw_share * 2 min(q, 1 - q)`` of the probability, q the game's expected score);
- ``replays``: every game is played that many times with the identical result and move list,
  as two noiseless players replay an opening's game.

Opening ids are ``o<k>`` and shared across pairings; ``first_opening`` shifts ``k`` so that a
second call (e.g. held-out games) can use fresh openings.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pyarrow as pa

from pipeline.ratings.errors import RatingsError
from pipeline.ratings.logistic import elo_to_score


def simulate_scale_games(
    elos: Mapping[str, float],
    pairings: Sequence[tuple[str, str]],
    openings: int,
    *,
    rng: np.random.Generator,
    draw_share: float = 0.3,
    draw_share_sd: float = 0.0,
    colour_bias_sd: float = 0.0,
    replays: int = 1,
    first_opening: int = 0,
) -> pa.Table:
    """A games table (columns ``white_player``, ``black_player``, ``player_a``, ``player_b``,
    ``a_color``, ``result_white``, ``result_a``, ``opening_id``, ``pair_id``, ``game_in_pair``,
    ``moves``) in which each of ``pairings`` (A, B) plays ``openings`` openings, see the module."""
    for a, b in pairings:
        if a not in elos or b not in elos or a == b:
            raise RatingsError(f"pairing {(a, b)!r} must name two different players of {sorted(elos)}")
    if not pairings or openings < 1 or replays < 1:
        raise RatingsError(f"need pairings, openings >= 1 and replays >= 1, got {len(pairings)}, "
                           f"{openings!r}, {replays!r}")
    if not 0.0 <= draw_share <= 1.0:
        raise RatingsError(f"draw_share must lie in [0, 1], got {draw_share!r}")
    beta = np.clip(rng.normal(0.0, colour_bias_sd, openings), -1.0, 1.0) if colour_bias_sd > 0 \
        else np.zeros(openings)
    draws = np.clip(rng.normal(draw_share, draw_share_sd, openings), 0.0, 1.0) if draw_share_sd > 0 \
        else np.full(openings, draw_share)

    n_pair = len(pairings)
    # one row per distinct game: pairing x opening x colour (A white first)
    pi = np.repeat(np.arange(n_pair), 2 * openings)
    ok = np.tile(np.repeat(np.arange(openings), 2), n_pair)
    colour = np.tile([0, 1], n_pair * openings)  # 0: A has White
    a_names = np.array([a for a, _ in pairings])[pi]
    b_names = np.array([b for _, b in pairings])[pi]
    gap = np.array([elos[a] - elos[b] for a, b in pairings], dtype=np.float64)[pi]
    p = elo_to_score(gap)
    room = np.minimum(p, 1.0 - p)
    q_a = p + np.where(colour == 0, 1.0, -1.0) * beta[ok] * room  # A's expected score this game
    q_white = np.where(colour == 0, q_a, 1.0 - q_a)
    p_draw = draws[ok] * 2.0 * np.minimum(q_white, 1.0 - q_white)
    u = rng.random(len(q_white))
    white_points = np.where(u < q_white - 0.5 * p_draw, 1.0, np.where(u < q_white + 0.5 * p_draw, 0.5, 0.0))

    rep = np.repeat(np.arange(len(pi)), replays)  # replays share everything of their distinct game
    white = np.where(colour == 0, a_names, b_names)[rep]
    black = np.where(colour == 0, b_names, a_names)[rep]
    res_w = white_points[rep]
    a_white = (colour == 0)[rep]
    distinct_pair = pi * openings + ok  # colour-swapped pair of one pairing and opening
    pair_id = distinct_pair[rep] * replays + np.tile(np.arange(replays), len(pi))
    # pair ids: each replay of a pair is a pair of its own, as self-play deals the opening again
    opening_names = np.char.add("o", (first_opening + np.arange(openings)).astype(np.str_))
    return pa.table({
        "white_player": pa.array(white),
        "black_player": pa.array(black),
        "player_a": pa.array(a_names[rep]),
        "player_b": pa.array(b_names[rep]),
        "a_color": pa.array(np.where(a_white, "white", "black")),
        "result_white": res_w,
        "result_a": np.where(a_white, res_w, 1.0 - res_w),
        "opening_id": pa.array(opening_names[ok[rep]]),
        "pair_id": pair_id.astype(np.int64),
        "game_in_pair": colour[rep].astype(np.int8),
        "moves": pa.array(np.char.add("game", rep.astype(np.str_))),
    })
